package io.scythe.txn.scythe;

import io.scythe.hotspot.AdaptiveWatermarks;
import io.scythe.txn.AbortException;
import io.scythe.txn.RetryPolicy;
import io.scythe.txn.TxnRuntime;

/**
 * Scythe's choice of mode for a retry (§4.2.1 (1)): HOT (TOCC) once an attempt was refused as hot or saw more than
 * the cold watermark queued on an object, and HOT stays HOT. With adaptive watermarks (beyond the paper, its §6 future
 * work) each object's cold watermark follows the aborts on it and the commits after them.
 */
final class HotColdRetry implements RetryPolicy {
    private final TxnRuntime runtime;
    /** Per-object cold watermarks, or {@code null} for the fixed one of {@link TxnRuntime#watermarks()}. */
    private final AdaptiveWatermarks adaptive;
    private long lastHotObject;

    HotColdRetry(final TxnRuntime runtime, final AdaptiveWatermarks adaptive) {
        this.runtime = runtime;
        this.adaptive = adaptive;
    }

    @Override
    public boolean nextHint(final boolean hot, final AbortException abort) {
        final int cold;
        if (adaptive != null && abort.object() != 0) {
            adaptive.aborted(abort.object());
            cold = adaptive.cold(abort.object());
        } else {
            cold = runtime.watermarks().cold();
        }
        final boolean nextHot = hot || abort.reason() == ScytheAborts.HOT_OBJECT || abort.heat() > cold
            || (adaptive != null && cold == 0 && abort.object() != 0);
        if (nextHot) {
            lastHotObject = abort.object();
        }
        return nextHot;
    }

    @Override
    public void committed(final int attempt) {
        if (adaptive != null && attempt > 1 && lastHotObject != 0) {
            adaptive.committed(lastHotObject);
        }
    }
}
