/**
 * The {@code --system hazelcast} baseline: SmallBank over Hazelcast's own transactions ({@code TransactionContext},
 * {@code TWO_PHASE}) on embedded members joined by TCP on loopback. {@link io.scythe.bench.hazelcast.HazelcastMembers}
 * starts and stops the members; {@link io.scythe.bench.hazelcast.HazelcastSmallBank} loads the two balance maps,
 * runs closed-loop client threads (Hazelcast's API blocks: never on an event loop) and reports in the same
 * {@code results.json} shape as the Scythe runs, money conservation included.
 */
package io.scythe.bench.hazelcast;
