package io.scythe.bench.history;

import io.scythe.txn.Access;
import io.scythe.txn.HistoryRecorder;

import java.util.List;

/**
 * The in-memory {@link HistoryRecorder}: builds a {@link History} of the committed transactions as they are reported,
 * for {@link SerializabilityChecker} without a file (the simulator checks every run this way). Records exactly what
 * {@link HistoryWriter} writes ({@link HistoryFormat#flags}), numbered from 1 in the order the reports arrive.
 * Synchronized, so loops may share one; meant for histories that fit in memory.
 */
public final class HistoryCollector implements HistoryRecorder {
    private final History.Builder builder;
    private long sequence;

    /** @param initialVersion the version every key has when the history begins (see {@link HistoryWriter}) */
    public HistoryCollector(final long initialVersion, final String label) {
        this.builder = History.builder(initialVersion, label);
    }

    @Override
    public synchronized void committed(final long txnId, final long commitTs, final List<Access> accesses) {
        builder.txn(txnId, ++sequence, commitTs);
        add(accesses);
    }

    @Override
    public synchronized void committedReadCommitted(final long txnId, final long commitTs,
                                                    final List<Access> accesses) {
        builder.txn(txnId, ++sequence, commitTs).readCommitted();
        add(accesses);
    }

    @Override
    public synchronized void inDoubt(final long txnId, final List<Access> accesses) {
        builder.txn(txnId, ++sequence, 0).inDoubt();
        add(accesses);
    }

    private void add(final List<Access> accesses) {
        for (final Access a : accesses) {
            final int flags = HistoryFormat.flags(a);
            if (flags != 0) { // as HistoryReader builds it from the file
                builder.access(builder.tableId(a.table), flags, a.key,
                    (flags & HistoryFormat.READ) != 0 ? a.readVersion : 0,
                    (flags & HistoryFormat.WRITE) != 0 ? a.installedVersion : 0, 0);
            }
        }
    }

    /** Transactions recorded so far. */
    public synchronized long transactions() {
        return sequence;
    }

    /** The history recorded so far (a copy: recording may go on). */
    public synchronized History history() {
        return builder.build();
    }
}
