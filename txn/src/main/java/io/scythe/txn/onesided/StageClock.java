package io.scythe.txn.onesided;

import io.scythe.txn.Stage;
import io.scythe.txn.runtime.Timers;
import io.vertx.core.Future;

/** Where an attempt's time went, stage by stage: each mark ends a stage at the time of the mark. */
public final class StageClock {
    private final Timers timers;
    private final long[] stageNanos = new long[Stage.count()];
    private long stageMark;

    public StageClock(final Timers timers) {
        this.timers = timers;
        this.stageMark = timers.nowNs();
    }

    /** Ends {@code stage} now: the time since the previous mark is its. */
    public void mark(final Stage stage) {
        final long now = timers.nowNs();
        stageNanos[stage.index()] += now - stageMark;
        stageMark = now;
    }

    /** {@code future}, marking the end of {@code stage} when it completes. */
    public <T> Future<T> staged(final Stage stage, final Future<T> future) {
        return future.andThen(ar -> mark(stage));
    }

    /** Nanoseconds per stage, by {@link Stage#index()} (the array itself). */
    public long[] nanos() {
        return stageNanos;
    }
}
