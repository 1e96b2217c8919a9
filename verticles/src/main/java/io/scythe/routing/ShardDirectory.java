package io.scythe.routing;

import io.vertx.core.Future;

/**
 * Where a cluster's current {@link ShardMap} lives: every compute node checks what is routed to it against
 * {@link #current()}, a router that was refused learns it from there, and {@link #move} makes the next epoch's map.
 * Two implementations: {@link LocalShardDirectory} (the deterministic one: an atomic reference, for the embedded
 * cluster and tests) and {@code io.scythe.cluster.HazelcastShardMap} (cluster mode: one entry of a Hazelcast map, moved
 * by compare-and-set, cached on every member by a listener).
 */
public interface ShardDirectory {
    /** The newest map this directory knows of; never blocks (so an event loop may call it). */
    ShardMap current();

    /**
     * Makes compute node {@code toComputeNode} the owner of {@code shard}: the map one epoch after the current one, or
     * the current one when that node owns the shard already (nothing moves, the epoch stays). Moves from several
     * callers at once each take their own epoch, none is lost.
     */
    Future<ShardMap> move(int shard, int toComputeNode);

    /**
     * What compute node {@code computeNode} answers a transaction routed to it by {@code routingKey} now: {@code null}
     * when it owns the key's shard, else the refusal naming the owner.
     */
    default WrongOwnerException refusal(final int computeNode, final long routingKey) {
        return current().refusal(computeNode, routingKey);
    }
}
