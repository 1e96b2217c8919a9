package io.scythe.txn.lotus;

/**
 * Which compute node owns the locks of each shard (lotus.md §1.3). Lotus only ever moves lock ownership; a node asked
 * for a key of a shard it does not own answers with an error. {@link LotusCluster} backs it with the routing
 * layer's current map; {@link #even} is the paper's start state.
 */
@FunctionalInterface
public interface ShardOwners {
    /** The index of the compute node that owns {@code shard} (0 to {@link LotusKey#SHARDS} - 1). */
    int ownerOf(int shard);

    /** The owner of a Lotus key's shard. */
    default int ownerOfKey(final long lotusKey) {
        return ownerOf(LotusKey.shard(lotusKey));
    }

    /**
     * The lock key range split evenly across {@code cns} compute nodes: shard {@code s} to node {@code s mod cns}
     * (interleaved rather than in contiguous ranges, so that a table of fewer than 4096 critical values, such as a
     * small simulated SmallBank, still spreads over every node).
     */
    static ShardOwners even(final int cns) {
        if (cns < 1 || cns > LotusKey.SHARDS) {
            throw new IllegalArgumentException("cns=" + cns + ": 1 to " + LotusKey.SHARDS + " compute nodes own shards");
        }
        return shard -> shard % cns;
    }
}
