package io.scythe.txn;

import java.util.List;

/**
 * Receives every committed transaction of the runtimes it is installed on ({@link TxnRuntime#recorder}), for the
 * serializability checker. Aborted attempts are never reported: they installed nothing. Called on the committing
 * event loop, after the write-back completed: an implementation must not block and must be thread-safe (every loop
 * of a compute node may share one).
 */
@FunctionalInterface
public interface HistoryRecorder {
    /**
     * One committed transaction.
     *
     * @param txnId       the attempt's id (unique in the cluster)
     * @param commitTs    what {@link Txn#commit()} returned (the commit timestamp or version; 0 for a read-only
     *                    Scythe OCC commit)
     * @param versionMade the version its write-back installed on every key it wrote (meaningless when it wrote none)
     * @param accesses    what it touched: each fetched access was read at {@link Access#readVersion}; each dirty one
     *                    was also written with {@code versionMade}, over {@link Access#readVersion} (every real
     *                    protocol writes back under a lock taken while the version was still the one read)
     */
    void committed(long txnId, long commitTs, long versionMade, List<Access> accesses);
}
