/**
 * Routing transactions to compute nodes (Lotus §4.2-4.3, level 1).
 *
 * <ul>
 *   <li>{@link io.scythe.routing.ShardMap}: the deterministic core, an immutable map of shard (routing key mod
 *       shards, 4096 by default) to owning compute node, round-robin at first, one epoch per moved shard.</li>
 *   <li>{@link io.scythe.routing.Router}: a router's cached map and {@link io.scythe.routing.RoutingMode} (by shard,
 *       at random, or Lotus's hybrid: read-only at random, read-write by shard).</li>
 *   <li>{@link io.scythe.routing.OwnershipCheck} and {@link io.scythe.routing.WrongOwnerException}: a node refuses a
 *       transaction routed to it by a shard it does not own, naming the owner and its map's epoch; the router learns
 *       the newer map and sends it again.</li>
 *   <li>{@link io.scythe.routing.ShardDirectory}: where the current map lives and how a shard moves (compare-and-set,
 *       one epoch per move): {@link io.scythe.routing.LocalShardDirectory} in this JVM (the embedded cluster),
 *       {@code io.scythe.cluster.HazelcastShardMap} in a Hazelcast map for cluster mode.</li>
 * </ul>
 *
 * Where the current map lives is the caller's: the embedded cluster and the simulator hold it in memory, cluster mode
 * in a Hazelcast map ({@code io.scythe.cluster.HazelcastShardMap}). Moving a shard here only changes who is asked;
 * Lotus's hand-off (the sender stops serving and drains its locks before the receiver starts) and its policy of
 * when to move which shard are for the Lotus module.
 */
package io.scythe.routing;
