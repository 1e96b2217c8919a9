package io.scythe.txn.onesided;

import io.scythe.txn.FixedTimers;

import io.scythe.txn.Stage;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** {@link StageClock#within}: time in flight moves to the inner stage, overlaps counted once, the sum unchanged. */
class StageClockTest {
    private final FixedTimers timers = new FixedTimers();

    @Test
    void shouldMoveOverlappingLocksOutOfExecutionOnce() {
        final StageClock clock = new StageClock(timers);
        timers.now = 10;
        final Promise<Void> first = Promise.promise();
        final Promise<Void> second = Promise.promise();
        clock.within(Stage.LOCK, first.future());
        timers.now = 20;
        clock.within(Stage.LOCK, second.future());
        timers.now = 40;
        first.complete();
        timers.now = 50;
        second.complete(); // in flight 10..50: 40 ns, not 30 + 30
        timers.now = 100;
        clock.within(Stage.LOCK, Future.succeededFuture()); // done already: no time
        clock.mark(Stage.EXECUTE);
        assertThat(clock.nanos()[Stage.LOCK.index()]).isEqualTo(40);
        assertThat(clock.nanos()[Stage.EXECUTE.index()]).isEqualTo(60);
        timers.now = 130;
        clock.mark(Stage.VALIDATE); // nothing in flight since the last mark: all of it validation
        assertThat(clock.nanos()[Stage.VALIDATE.index()]).isEqualTo(30);
        assertThat(clock.nanos()[Stage.LOCK.index()]).isEqualTo(40);
    }

    @Test
    void shouldCountALockStillInFlightUpToTheMark() {
        final StageClock clock = new StageClock(timers);
        final Promise<Void> lock = Promise.promise();
        timers.now = 5;
        clock.within(Stage.LOCK, lock.future());
        timers.now = 25;
        clock.mark(Stage.EXECUTE);
        timers.now = 35;
        lock.complete();
        clock.mark(Stage.LOG);
        assertThat(clock.nanos()[Stage.LOCK.index()]).isEqualTo(30);
        assertThat(clock.nanos()[Stage.EXECUTE.index()]).isEqualTo(5);
        assertThat(clock.nanos()[Stage.LOG.index()]).isZero();
    }

    @Test
    void shouldAccountCallbackStepsAsWithinAccountsFutures() {
        final StageClock clock = new StageClock(timers);
        timers.now = 10;
        clock.enterWithin(Stage.LOCK);
        timers.now = 20;
        final Promise<Void> future = Promise.promise();
        clock.within(Stage.LOCK, future.future()); // a Future step overlapping the callback one
        timers.now = 40;
        clock.leaveWithin();
        timers.now = 50;
        future.complete(); // in flight 10..50 in all: 40 ns
        timers.now = 100;
        clock.mark(Stage.EXECUTE);
        assertThat(clock.nanos()[Stage.LOCK.index()]).isEqualTo(40);
        assertThat(clock.nanos()[Stage.EXECUTE.index()]).isEqualTo(60);
        assertThatThrownBy(() -> clock.enterWithin(Stage.VALIDATE)).isInstanceOf(IllegalStateException.class)
            .hasMessageContaining("already moved to lock");
    }

    @Test
    void shouldRefuseASecondInnerStage() {
        final StageClock clock = new StageClock(timers);
        clock.within(Stage.LOCK, Promise.<Void>promise().future());
        assertThatThrownBy(() -> clock.within(Stage.VALIDATE, Promise.<Void>promise().future()))
            .isInstanceOf(IllegalStateException.class).hasMessageContaining("already moved to lock");
    }
}
