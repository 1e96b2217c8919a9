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
     * @param txnId    the attempt's id (unique in the cluster)
     * @param commitTs what {@link Txn#commit()} returned (the commit timestamp or version; of a read-only Scythe OCC
     *                 commit, the timestamp its attempt fetched)
     * @param accesses what it touched, each with what it saw and what it installed:
     *                 <ul>
     *                   <li>read: {@link Access#fetched} (a value at {@link Access#readVersion}), or
     *                       {@link Access#readAbsent} (no live value: absent, deleted, or replaced by its own insert;
     *                       the version read is the newest committed one at or below {@code readVersion});</li>
     *                   <li>written: {@link Access#dirty} or {@link Access#inserted}, installing
     *                       {@link Access#installedVersion} (a delete when {@link Access#deleting}). An object's
     *                       versions strictly increase in install order (ObjectLayout#versionAfter), so they order
     *                       its writes.</li>
     *                 </ul>
     */
    void committed(long txnId, long commitTs, List<Access> accesses);

    /**
     * One committed transaction that ran at read committed ({@link Txn#declareReadCommitted}): read-only, every value
     * it read committed, checked at that level only (its reads' anti-dependencies are not obligatory). Accesses as in
     * {@link #committed}. By default recorded as {@link #committed}: a recorder that does not know the level checks it
     * as serializable (stricter).
     */
    default void committedReadCommitted(final long txnId, final long commitTs, final List<Access> accesses) {
        committed(txnId, commitTs, accesses);
    }

    /**
     * A transaction given up past its point of no return ("outcome unknown"): its redo record may be durable, its
     * write-back may have landed in part, and only the recovery of its node decides it. A checker must know the
     * versions it may have installed (a reader of one read a version somebody made) without counting it as committed.
     * Its accesses are as in {@link #committed}; a write whose version was never computed (the write-back did not
     * begin) has {@link Access#installedVersion} 0. Nothing by default.
     */
    default void inDoubt(final long txnId, final List<Access> accesses) {
    }
}
