package io.scythe.txn.onesided;

import io.scythe.txn.AbortException;
import io.scythe.txn.AbortReason;

/**
 * The abort of an attempt that began in an older memory-node configuration than the one its commit would run in
 * (MN failover, {@link io.scythe.txn.Catalog#reconfigure}): refused before its point of no return, retried. Its own
 * class so the reason is defined only when a configuration changes (runs without failover report what they did).
 */
public final class Reconfigured {
    /** The attempt's configuration is no longer the current one: retried in the new one. */
    public static final AbortReason REASON = AbortReason.define("reconfigured", 850);

    /**
     * The attempt read, locked or inserted in a partition whose primary was just promoted, before the commits in
     * flight at the failover were settled ({@link io.scythe.txn.Catalog#blocked}): retried after the back-off.
     */
    static final AbortReason SETTLING = AbortReason.define("settling", 851);

    private Reconfigured() {
    }

    /** Also Aurogon's, at its replication (issue 20/23 review: its partitions were looked up in {@code began}). */
    public static AbortException abort(final long began, final long now) {
        return new AbortException(REASON, "the memory-node configuration changed from epoch " + began + " to " + now
            + " (a memory node failed over or rejoined) before its point of no return: retried in the new one");
    }

    /** {@code partition}'s primary was promoted and is blocked until the failover's commits in flight are settled. */
    static AbortException settling(final io.scythe.txn.Catalog.Partition partition, final String table,
                                   final long key) {
        return new AbortException(SETTLING, "key " + key + " of " + table + " is on a promoted copy (" + partition.node()
            + ") blocked until the commits in flight at the memory-node failover are settled: retried");
    }
}
