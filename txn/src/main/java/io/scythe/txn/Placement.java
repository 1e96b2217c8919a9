package io.scythe.txn;

/**
 * Which partition of a table holds a key. Every workload but one runs on {@link #MOD} ({@code key mod partitions});
 * a workload that homes its data on servers (TPC-C by warehouse on co-located servers) gives its own, and loads its
 * tables with the same one.
 */
@FunctionalInterface
public interface Placement {
    /** {@code key mod partitions}, unsigned: the placement of every table unless a workload gives another. */
    Placement MOD = (table, key, partitions) -> (int) Long.remainderUnsigned(key, partitions);

    /** The partition (0 to {@code partitions - 1}) of {@code table} holding {@code key}. */
    int partitionOf(String table, long key, int partitions);
}
