package io.scythe.txn.onesided;

import io.scythe.txn.Stage;
import io.scythe.txn.runtime.Timers;
import io.vertx.core.Future;

/** Where an attempt's time went, stage by stage: each mark ends a stage at the time of the mark. */
public final class StageClock {
    private final Timers timers;
    private final long[] stageNanos = new long[Stage.count()];
    private long stageMark;
    /** The stage that {@link #within} accounts time to, inside the stage running (null: none yet). */
    private Stage inner;
    private int innerInFlight;
    private long innerSince;
    /** Time with an inner operation in flight since the last mark (overlapping ones counted once). */
    private long innerNanos;

    public StageClock(final Timers timers) {
        this.timers = timers;
        this.stageMark = timers.nowNs();
    }

    /** Ends {@code stage} now: the time since the previous mark is its. */
    public void mark(final Stage stage) {
        final long now = timers.nowNs();
        final long elapsed = now - stageMark;
        long moved = 0;
        if (inner != null) {
            if (innerInFlight > 0) {
                innerNanos += now - innerSince;
                innerSince = now;
            }
            moved = Math.min(innerNanos, elapsed);
            stageNanos[inner.index()] += moved;
            innerNanos = 0;
        }
        stageNanos[stage.index()] += elapsed - moved;
        stageMark = now;
    }

    /**
     * Accounts the time {@code future} is in flight to {@code stage} instead of the stage running when it is marked
     * (FORD's CAS locks taken during execution are lock time, as the papers break latency down). Overlapping ones
     * count once. Only the attribution changes: {@code future} itself is returned, with a listener that reads the
     * clock.
     *
     * @throws IllegalStateException when another inner stage was accounted in this attempt
     */
    public <T> Future<T> within(final Stage stage, final Future<T> future) {
        if (inner != null && inner != stage) {
            throw new IllegalStateException("time is already moved to " + inner + ", not also to " + stage);
        }
        inner = stage;
        if (future.isComplete()) {
            return future; // took no time; a listener on a completed future might be dispatched as a task of its own
        }
        if (innerInFlight++ == 0) {
            innerSince = timers.nowNs();
        }
        // A relay, not a listener on future itself: the caller's next step would make that two listeners, and
        // Vert.x then allocates a listener list.
        return new Futures.Relay<T>() {
            @Override
            protected void first() {
                leaveWithin();
            }
        }.relaying(future);
    }

    /**
     * {@link #within} for a step that reports to a callback: call before posting it, and {@link #leaveWithin} once
     * when it completes (the same accounting; a step that completes at once counts the no time it took).
     *
     * @throws IllegalStateException when another inner stage was accounted in this attempt
     */
    public void enterWithin(final Stage stage) {
        if (inner != null && inner != stage) {
            throw new IllegalStateException("time is already moved to " + inner + ", not also to " + stage);
        }
        inner = stage;
        if (innerInFlight++ == 0) {
            innerSince = timers.nowNs();
        }
    }

    /** The step {@link #enterWithin} began completed. */
    public void leaveWithin() {
        if (--innerInFlight == 0) {
            innerNanos += timers.nowNs() - innerSince;
        }
    }

    /**
     * {@code future}, marking the end of {@code stage} when it completes: what {@code andThen} does, with one
     * listener and one promise ({@link Futures#relay}) instead of a transformation, two lambdas and a result.
     */
    public <T> Future<T> staged(final Stage stage, final Future<T> future) {
        return new Marking<T>(this, stage).relaying(future);
    }

    /** The relay of {@link #staged}: marks its stage, then passes the outcome on (one object per stage). */
    private static final class Marking<T> extends Futures.Relay<T> {
        private final StageClock clock;
        private final Stage stage;

        Marking(final StageClock clock, final Stage stage) {
            this.clock = clock;
            this.stage = stage;
        }

        @Override
        protected void first() {
            clock.mark(stage);
        }
    }

    /** Nanoseconds per stage, by {@link Stage#index()} (the array itself). */
    public long[] nanos() {
        return stageNanos;
    }
}
