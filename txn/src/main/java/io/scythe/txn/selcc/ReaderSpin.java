package io.scythe.txn.selcc;

import java.util.HashMap;
import java.util.Iterator;
import java.util.Map;

/**
 * The reader spin flag (SELCC §5.3.2, writers starved by readers): a reader participant that receives a writer's
 * invalidation of high priority remembers it per line, and its own later global Shared acquisitions of that line wait
 * first for a time proportional to that priority, so the writer gets a window with no sharers. Loop-confined (one
 * participant's), like its cache. A priority below {@code minPriority} (a writer's first try) sets nothing.
 */
final class ReaderSpin {
    private final long unitNs;
    private final int minPriority;
    /** The largest priority a window is scaled by (selcc21b: bounded, as a remembered message's deferral is). */
    private final int maxPriority;
    /** Per line: the virtual time until which a global reader of this participant waits. */
    private final Map<LineCache.Line, Long> until = new HashMap<>();

    ReaderSpin(final long unitNs, final int minPriority, final int maxPriority) {
        if (unitNs < 0) {
            throw new IllegalArgumentException("reader spin unit " + unitNs + " ns must be at least 0");
        }
        if (minPriority < 1) {
            throw new IllegalArgumentException("reader spin minimum priority " + minPriority + " must be at least 1");
        }
        if (maxPriority < minPriority) {
            throw new IllegalArgumentException("reader spin maximum priority " + maxPriority + " must be at least the "
                + "minimum " + minPriority);
        }
        this.unitNs = unitNs;
        this.minPriority = minPriority;
        this.maxPriority = maxPriority;
    }

    /**
     * A writer's invalidation of {@code line} with {@code priority} arrived at {@code nowNs}, this participant's last
     * atomic on the line's word having taken {@code atomicRttNs}. The window is the priority times the larger of the
     * unit and that round trip. The paper asks for "a sufficiently large time window during which no concurrent
     * reader holds the targeted shared latch" and gives no unit; the window has to cover this reader's release FAA
     * and the writer's next CAS, each an atomic on the same hot word, which queue there (18 us a conflicting atomic
     * in the fabric's cost model: 50-60 us round trips with four readers). A fixed 2 us unit gave 4-6 us windows
     * that closed long before the writer's CAS landed, and one writer against four readers got its XLock only as
     * they stopped (selcc21: SelccHotLineFairnessSimTest). The priority it is scaled by is capped at
     * {@code maxPriority} (selcc21b; the cache passes its deferral cap, {@code scythe.selcc.deferCap}, 8): since
     * selcc21 a line's priority ages on every failed attempt, moved on or not, up to 255, and an uncapped window
     * (255 x a 50-100 us round trip: 13-25 ms, extended by each new invalidation) would hold this participant's
     * readers of the line out for longer than most runs. A bound only: BLinkTreeSimTest's selcc-to seed 2 livelock
     * was the tree workload's TO retries, not this window (package doc).
     */
    void writerWaiting(final LineCache.Line line, final int priority, final long nowNs, final long atomicRttNs) {
        if (unitNs == 0 || priority < minPriority) {
            return;
        }
        final long end = nowNs + Math.max(unitNs, atomicRttNs) * Math.min(priority, maxPriority);
        until.merge(line, end, Math::max);
        if (until.size() > 4096) { // bounded: expired flags go
            final Iterator<Long> it = until.values().iterator();
            while (it.hasNext()) {
                if (it.next() <= nowNs) {
                    it.remove();
                }
            }
        }
    }

    /** How long a global Shared acquisition of {@code line} waits at {@code nowNs} first (0: none); clears expired. */
    long delayNs(final LineCache.Line line, final long nowNs) {
        final Long end = until.get(line);
        if (end == null) {
            return 0;
        }
        if (end <= nowNs) {
            until.remove(line);
            return 0;
        }
        return end - nowNs;
    }
}
