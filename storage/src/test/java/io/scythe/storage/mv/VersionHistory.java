package io.scythe.storage.mv;

import org.agrona.DirectBuffer;
import org.agrona.concurrent.UnsafeBuffer;

import java.util.ArrayList;
import java.util.List;
import java.util.NavigableSet;
import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.ConcurrentSkipListSet;
import java.util.concurrent.atomic.AtomicLong;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * What concurrent tests did to a few objects, recorded from any thread, and the invariants checked afterwards: every
 * read returned the newest version committed at or below its timestamp (in the final history: timestamp ordering
 * forbids a commit that would change a read's answer after it), no value was torn, no rolled-back version was ever
 * read, and every committed version a reader at the horizon can still need is still there.
 */
final class VersionHistory {
    static final int VALUE_BYTES = 32;

    private final List<NavigableSet<Long>> committed = new ArrayList<>();
    private final List<NavigableSet<Long>> rolledBack = new ArrayList<>();
    private final Queue<long[]> reads = new ConcurrentLinkedQueue<>();
    private final Queue<String> violations = new ConcurrentLinkedQueue<>();
    final AtomicLong pendingReads = new AtomicLong();
    final AtomicLong refusals = new AtomicLong();
    final AtomicLong latched = new AtomicLong();

    VersionHistory(final int objects) {
        for (int i = 0; i < objects; i++) {
            committed.add(new ConcurrentSkipListSet<>(List.of(0L)));
            rolledBack.add(new ConcurrentSkipListSet<>());
        }
    }

    /** A value that names its object and version: a read can tell a torn or misplaced one. */
    static UnsafeBuffer valueOf(final int object, final long wts) {
        final UnsafeBuffer value = new UnsafeBuffer(new byte[VALUE_BYTES]);
        value.putLong(0, wts);
        value.putLong(8, ~wts);
        value.putLong(16, object);
        value.putLong(24, wts * 31 + object);
        return value;
    }

    void committed(final int object, final long wts) {
        committed.get(object).add(wts);
    }

    void rolledBack(final int object, final long wts) {
        rolledBack.get(object).add(wts);
    }

    /** Records what a read at {@code ts} returned; a pending version in the way or a torn value is judged now. */
    void read(final int object, final long ts, final MvRead read, final DirectBuffer value, final int offset) {
        if (read.status() == MvStatus.PENDING) {
            pendingReads.incrementAndGet();
            if (read.wts() > ts) {
                violations.add("object " + object + " at " + ts + ": pending version " + read.wts() + " above it");
            }
            return;
        }
        if (!read.found()) {
            violations.add("object " + object + " at " + ts + ": " + read);
            return;
        }
        if (read.status() != VALUE_BYTES || value.getLong(offset) != read.wts()
            || value.getLong(offset + 8) != ~read.wts() || value.getLong(offset + 16) != object
            || value.getLong(offset + 24) != read.wts() * 31 + object) {
            violations.add("object " + object + " at " + ts + ": torn or foreign value for version " + read.wts());
            return;
        }
        reads.add(new long[] {object, ts, read.wts()});
    }

    int reads() {
        return reads.size();
    }

    long commits() {
        long n = 0;
        for (final NavigableSet<Long> set : committed) {
            n += set.size() - 1;
        }
        return n;
    }

    long rollbacks() {
        long n = 0;
        for (final NavigableSet<Long> set : rolledBack) {
            n += set.size();
        }
        return n;
    }

    /** The newest committed version of {@code object} at or below {@code ts}. */
    long visible(final int object, final long ts) {
        return committed.get(object).floor(ts);
    }

    /** Every violation found, empty when the history keeps the invariants. */
    List<String> check() {
        final List<String> found = new ArrayList<>(violations);
        for (int object = 0; object < committed.size(); object++) {
            for (final long wts : rolledBack.get(object)) {
                if (committed.get(object).contains(wts)) {
                    found.add("object " + object + ": version " + wts + " both committed and rolled back");
                }
            }
        }
        for (final long[] read : reads) {
            final int object = (int) read[0];
            final long expected = visible(object, read[1]);
            if (read[2] != expected) {
                found.add("object " + object + " read at " + read[1] + " returned " + read[2]
                    + (rolledBack.get(object).contains(read[2]) ? " (rolled back)" : "") + ", newest committed at or below "
                    + "it is " + expected);
            }
        }
        return found;
    }

    /**
     * After a run: the history keeps the invariants, the table is quiescent (no latch held, nothing pending), the run
     * committed and rolled back at least the amounts given, and versions went through the overflow chain.
     */
    void assertKeptBy(final MvTable table, final long minCommits, final long minReads) {
        assertThat(check()).isEmpty();
        assertThat(table.latchesHeld()).isZero();
        assertThat(table.pendingVersions()).isZero();
        assertThat(commits()).isGreaterThan(minCommits);
        assertThat(rollbacks()).isPositive();
        assertThat(reads()).isGreaterThan((int) minReads);
        assertThat(table.evictions()).as("versions moved to the chain").isPositive();
    }

    /**
     * No committed version lost, none rolled back resurrected: every timestamp from {@code horizon} to {@code last}
     * reads, on the memory node, the newest version committed at or below it.
     */
    void assertEveryVersionFrom(final MvTable table, final long[] pointers, final long horizon, final long last) {
        final UnsafeBuffer value = new UnsafeBuffer(new byte[VALUE_BYTES]);
        final MvRead read = new MvRead();
        for (int object = 0; object < pointers.length; object++) {
            for (long ts = horizon; ts <= last; ts++) {
                table.read(pointers[object], ts, false, value, 0, read);
                assertThat(read.found()).as("object %d at %d: %s", object, ts, read).isTrue();
                assertThat(read.wts()).as("object %d at %d", object, ts).isEqualTo(visible(object, ts));
                assertThat(value.getLong(0)).isEqualTo(read.wts());
            }
        }
    }
}
