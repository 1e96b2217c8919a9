package io.scythe.txn.onesided;

import io.scythe.txn.Access;
import io.scythe.txn.HistoryRecorder;
import io.scythe.txn.TxnRuntime;

import java.util.ArrayList;
import java.util.List;

/** Tells the loop's {@link HistoryRecorder} (when one is installed) what a committed attempt read and wrote. */
public final class HistoryStep {
    private HistoryStep() {
    }

    /**
     * Reports a commit of {@code id} at {@code commitTs}: every access, and every key it read as absent from the
     * index that it did not then insert ({@link Access#readAbsent}, at the bound its read saw).
     */
    public static void committed(final TxnRuntime runtime, final long id, final long commitTs, final ReadSet reads) {
        committed(runtime, id, commitTs, reads, false);
    }

    /** {@link #committed}, at read committed when {@code readCommitted} ({@link HistoryRecorder#committedReadCommitted}). */
    public static void committed(final TxnRuntime runtime, final long id, final long commitTs, final ReadSet reads,
                                 final boolean readCommitted) {
        final HistoryRecorder recorder = runtime.recorder();
        if (recorder != null) {
            if (readCommitted) {
                recorder.committedReadCommitted(id, commitTs, recorded(reads));
            } else {
                recorder.committed(id, commitTs, recorded(reads));
            }
        }
    }

    /** Reports {@code id} in doubt: given up past its point of no return ({@link HistoryRecorder#inDoubt}). */
    public static void inDoubt(final TxnRuntime runtime, final long id, final ReadSet reads) {
        final HistoryRecorder recorder = runtime.recorder();
        if (recorder != null) {
            recorder.inDoubt(id, recorded(reads));
        }
    }

    private static List<Access> recorded(final ReadSet reads) {
        if (reads.absent().isEmpty()) {
            return reads.accesses();
        }
        final List<Access> all = new ArrayList<>(reads.accesses().size() + reads.absent().size());
        all.addAll(reads.accesses());
        for (final Access a : reads.absent()) {
            if (reads.find(a.table, a.key) == null) {
                all.add(a);
            }
        }
        return all;
    }
}
