package io.scythe.txn.selcc;

import io.scythe.txn.TxnRuntime;

import java.util.HashMap;
import java.util.Map;

/**
 * One participant's (event loop's) local shared-exclusive latches on the lines it holds globally (SELCC §3.1's local
 * latch, without atomics: loop-confined). The global latch word has one reader bit per participant, so a loop's
 * transaction flows must share its global Shared (a second FAA of the same bit would carry into the next
 * participant's) and never take Exclusive beside one another: this table counts the local holders and says when a
 * global verb is due. A line with a global verb in flight is busy: no-wait callers give up on it (an FAA of the bit
 * posted behind a release still queued would set it twice).
 */
public final class LocalLatches {
    static final TxnRuntime.Key<LocalLatches> KEY = new TxnRuntime.Key<>("selcc-local-latches");

    /** What this participant holds globally on one line. */
    enum Mode { NONE, SHARED, EXCLUSIVE }

    /** One line's local latch. */
    static final class Entry {
        final String node;
        final long latchAddress;
        Mode mode = Mode.NONE;
        /** Local flows holding Shared (mode SHARED), or 1 (EXCLUSIVE). */
        int holders;
        /** A global acquire, upgrade or release of this line is in flight. */
        boolean busy;

        Entry(final String node, final long latchAddress) {
            this.node = node;
            this.latchAddress = latchAddress;
        }

        @Override
        public String toString() {
            return node + "@" + latchAddress + " " + mode + " x" + holders + (busy ? " busy" : "");
        }
    }

    private final int participant;
    private final Map<String, Map<Long, Entry>> byNode = new HashMap<>();

    LocalLatches(final int participant) {
        this.participant = LatchWord.checkParticipant(participant);
    }

    /** This loop's table, made on first use (its participant number from its ids, refused past 58). */
    public static LocalLatches of(final TxnRuntime runtime) {
        return runtime.extension(KEY, r -> new LocalLatches(Participants.of(r)));
    }

    public int participant() {
        return participant;
    }

    /** The entry of the line whose latch word is at {@code latchAddress} on {@code node}, made (NONE) if absent. */
    Entry entry(final String node, final long latchAddress) {
        return byNode.computeIfAbsent(node, n -> new HashMap<>()).computeIfAbsent(latchAddress,
            a -> new Entry(node, a));
    }

    /** Forgets {@code e} once it holds nothing and has nothing in flight. */
    void forgetIfIdle(final Entry e) {
        if (e.mode == Mode.NONE && !e.busy && e.holders == 0) {
            final Map<Long, Entry> lines = byNode.get(e.node);
            if (lines != null && lines.get(e.latchAddress) == e) {
                lines.remove(e.latchAddress);
            }
        }
    }

    /** Lines with an entry (held, or a verb in flight): 0 when the loop holds nothing (end-of-run checks, tests). */
    public int size() {
        int n = 0;
        for (final Map<Long, Entry> lines : byNode.values()) {
            n += lines.size();
        }
        return n;
    }
}
