package io.scythe.cluster;

import io.vertx.core.Vertx;
import io.vertx.core.VertxOptions;
import org.junit.jupiter.api.Test;

import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * A node's lease is timed on a thread of its own ({@link LivenessTimer}, {@link ScytheNode#outlived}): an event loop
 * kept busy for longer than the lease does not cost the lease, a pause of the timer (as of the whole process) does.
 */
class LivenessTimerTest {
    @Test
    void shouldLoseTheLeaseOnlyWhenTheClockJumpedPastIt() {
        final AtomicLong nanos = new AtomicLong(1_000_000_000L);
        final List<String> lost = new CopyOnWriteArrayList<>();
        final LivenessTimer timer = LivenessTimer.manual(nanos::get, since -> {
            final String why = ScytheNode.outlived(since, ScytheNode.LEASE_MS);
            if (why != null) {
                lost.add(why);
            }
        });
        for (int i = 0; i < 20; i++) {
            nanos.addAndGet(TimeUnit.MILLISECONDS.toNanos(ScytheNode.LEASE_RENEW_MS));
            timer.tick();
        }
        nanos.addAndGet(TimeUnit.MILLISECONDS.toNanos(ScytheNode.LEASE_MS)); // exactly the lease: still held
        timer.tick();
        assertThat(lost).isEmpty();
        nanos.addAndGet(TimeUnit.MILLISECONDS.toNanos(ScytheNode.LEASE_MS + 1)); // paused past it
        timer.tick();
        final long lease = ScytheNode.LEASE_MS; // 3 s, or the process tests' 8 s (ClusterAccess#maxNoHeartbeatSeconds)
        assertThat(lost).containsExactly("this process did not run for " + (lease + 1) + " ms (longer than the " + lease
            + " ms lease)");
        assertThat(timer.maxGapMs()).isEqualTo(lease + 1);
        assertThatThrownBy(() -> timer.stallFor(10)).isInstanceOf(IllegalStateException.class);
        assertThatThrownBy(() -> LivenessTimer.start("t", 0, since -> { })).hasMessageContaining("positive");
    }

    @Test
    void shouldKeepTheLeaseWhileTheLoopIsBusyAndLoseItWhenTheTimerIsPaused() throws Exception {
        final long leaseMs = 1_500; // 700 ms was within a loaded 2-core machine's descheduling of the timer thread
        final Vertx vertx = Vertx.vertx(new VertxOptions().setEventLoopPoolSize(1)
            .setMaxEventLoopExecuteTime(10).setMaxEventLoopExecuteTimeUnit(TimeUnit.SECONDS));
        final List<String> lost = new CopyOnWriteArrayList<>();
        final CountDownLatch lostOnce = new CountDownLatch(1);
        try (LivenessTimer timer = LivenessTimer.start("lease-test", 20, since -> {
            final String why = ScytheNode.outlived(since, leaseMs);
            if (why != null) {
                lost.add(why);
                lostOnce.countDown();
            }
        })) {
            // The old way, for contrast: a periodic timer on the (only) event loop, with its longest gap.
            final AtomicLong loopMaxGapMs = new AtomicLong();
            final long[] loopLast = {System.nanoTime()};
            vertx.setPeriodic(20, t -> {
                final long now = System.nanoTime();
                loopMaxGapMs.accumulateAndGet(TimeUnit.NANOSECONDS.toMillis(now - loopLast[0]), Math::max);
                loopLast[0] = now;
            });
            final CountDownLatch spun = new CountDownLatch(1);
            vertx.runOnContext(v -> { // a loop kept busy (as shm polling keeps it) for much longer than the lease
                final long until = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(2 * leaseMs + 400);
                while (System.nanoTime() < until) {
                    Thread.onSpinWait();
                }
                spun.countDown();
            });
            assertThat(spun.await(10, TimeUnit.SECONDS)).isTrue();
            final long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
            while (loopMaxGapMs.get() <= leaseMs && System.nanoTime() < deadline) {
                Thread.sleep(10); // the loop's timer runs again and records its gap
            }
            assertThat(loopMaxGapMs.get()).as("the event loop did not run for longer than the lease")
                .isGreaterThan(leaseMs);
            assertThat(lost).as("a busy loop does not cost the lease").isEmpty();

            timer.stallFor(2 * leaseMs); // the timer's thread does not run, as in a SIGSTOP or a GC pause
            assertThat(lostOnce.await(10, TimeUnit.SECONDS)).isTrue();
            assertThat(lost.get(0)).startsWith("this process did not run for ").endsWith("(longer than the 1500 ms lease)");
            assertThat(timer.maxGapMs()).isGreaterThanOrEqualTo(2 * leaseMs);
        } finally {
            vertx.close().await(10, TimeUnit.SECONDS);
        }
    }
}
