package io.scythe.txn.scythe;

import io.scythe.hotspot.AdaptiveWatermarks;
import io.scythe.hotspot.Watermarks;
import io.scythe.txn.AbortException;
import io.scythe.txn.RetryPolicy;
import io.scythe.txn.TxnRuntime;
import org.agrona.collections.Long2LongHashMap;

import java.util.function.LongSupplier;
import java.util.function.Supplier;

/**
 * Scythe's choice of mode for a retry (§4.2.1 (1)): HOT (TOCC) once an attempt was refused as hot or saw more than
 * the cold watermark queued on an object, and HOT stays HOT. With adaptive watermarks (beyond the paper, its §6 future
 * work) each object's cold watermark follows the aborts on it and the commits after them.
 *
 * <p>Also HOT, beyond the paper's queue rule: an OCC attempt that aborted on an object on which another OCC attempt
 * of this loop aborted less than {@link #HOT_WINDOW_NS} before ({@link #HOT_AFTER_ABORTS} conflict aborts on one
 * object). The paper's heat is the queue length, but OCC holds its locks only from its lock phase to its write-back,
 * so an OCC attempt sees 1 to 3 queued on an object that aborts it again and again: TPC-C's district
 * ({@code d_next_o_id}) at 2 warehouses and 64 clients aborted 470 OCC attempts at heat 1 to 3, every retry OCC
 * again, and none reached the cold watermark. Repeated aborts on one object are the heat OCC can see.
 */
final class HotColdRetry implements RetryPolicy {
    /** Conflict aborts on one object (within {@link #HOT_WINDOW_NS} of each other) that make it hot. */
    static final int HOT_AFTER_ABORTS = 2;
    /**
     * How recent the previous conflict abort on an object must be to count: far longer than an attempt (microseconds
     * to a few milliseconds; 18 ms between two aborts of one transaction seen on a saturated 2-core test machine), so
     * it only forgets objects that stopped being contended.
     */
    static final long HOT_WINDOW_NS = 100_000_000;
    /** Objects whose last conflict abort is remembered; the table is forgotten wholesale when it fills. */
    private static final int TRACKED_OBJECTS = 1 << 16;
    private static final long NONE = Long.MIN_VALUE;

    private final Supplier<Watermarks> watermarks;
    private final LongSupplier nowNs;
    /** Per-object cold watermarks, or {@code null} for the fixed one of {@link TxnRuntime#watermarks()}. */
    private final AdaptiveWatermarks adaptive;
    /** Per object: when an OCC attempt of this loop last aborted on it, and how many did in a row within the window. */
    private final Long2LongHashMap lastAbortNs = new Long2LongHashMap(NONE);
    private final Long2LongHashMap abortsInARow = new Long2LongHashMap(0);
    private long lastHotObject;

    HotColdRetry(final TxnRuntime runtime, final AdaptiveWatermarks adaptive) {
        this(runtime::watermarks, () -> runtime.timers().nowNs(), adaptive);
    }

    HotColdRetry(final Supplier<Watermarks> watermarks, final LongSupplier nowNs, final AdaptiveWatermarks adaptive) {
        this.watermarks = watermarks;
        this.nowNs = nowNs;
        this.adaptive = adaptive;
    }

    @Override
    public boolean nextHint(final boolean hot, final AbortException abort) {
        final int cold;
        if (adaptive != null && abort.object() != 0) {
            adaptive.aborted(abort.object());
            cold = adaptive.cold(abort.object());
        } else {
            cold = watermarks.get().cold();
        }
        final boolean nextHot = hot || abort.reason() == ScytheAborts.HOT_OBJECT || abort.heat() > cold
            || (adaptive != null && cold == 0 && abort.object() != 0)
            || (abort.object() != 0 && abortedAgain(abort.object()));
        if (nextHot) {
            lastHotObject = abort.object();
        }
        return nextHot;
    }

    /** Counts an OCC conflict abort on {@code object}: whether it makes {@link #HOT_AFTER_ABORTS} in a row. */
    private boolean abortedAgain(final long object) {
        final long now = nowNs.getAsLong();
        final long last = lastAbortNs.get(object);
        if (last == NONE && lastAbortNs.size() >= TRACKED_OBJECTS) {
            lastAbortNs.clear();
            abortsInARow.clear();
        }
        final long inARow = last != NONE && now - last < HOT_WINDOW_NS ? abortsInARow.get(object) + 1 : 1;
        lastAbortNs.put(object, now);
        abortsInARow.put(object, inARow);
        return inARow >= HOT_AFTER_ABORTS;
    }

    @Override
    public void committed(final int attempt) {
        if (adaptive != null && attempt > 1 && lastHotObject != 0) {
            adaptive.committed(lastHotObject);
        }
    }
}
