package io.scythe.cluster;

import io.scythe.txn.spi.ClockBound;
import io.vertx.core.Vertx;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Issue 18 (rcc20): a clock-bound publication hung in Hazelcast (a stall) no longer stops every later one, so the
 * bound follows the clock again and commits stop aborting {@code clock-beyond-bound} once the cluster answers.
 */
class ClockBoundPublisherTest {
    private final Vertx vertx = Vertx.vertx();
    private final CountDownLatch never = new CountDownLatch(1);

    @AfterEach
    void stop() throws Exception {
        never.countDown();
        vertx.close().await(10, TimeUnit.SECONDS);
    }

    @Test
    void shouldGiveUpAPublicationThatNeverAnswersAndPublishTheNextBound() throws Exception {
        final AtomicLong clock = new AtomicLong(1_000);
        final ClockBound bound = new ClockBound(clock::get, 500);
        final AtomicInteger calls = new AtomicInteger();
        final AtomicLong held = new AtomicLong();
        final List<String> log = new CopyOnWriteArrayList<>();
        final ClockBoundPublisher publisher = new ClockBoundPublisher(vertx, bound, next -> {
            if (calls.incrementAndGet() == 1) {
                hang(); // the first call hangs (a partition whose owner split off)
            }
            return held.accumulateAndGet(next, Math::max);
        }, 2_000, () -> false, log::add); // 2 s: a loaded machine's stall must not give the first call up early
        publisher.publish();
        eventually("the first call started", () -> calls.get() == 1);
        publisher.publish(); // one at a time: nothing new while the first may still answer
        assertThat(calls).hasValue(1);
        assertThat(bound.published()).isZero();

        eventually("the hung call given up", () -> publisher.givenUp() == 1);
        clock.set(10_000);
        publisher.publish();
        eventually("a fresh call published", () -> bound.published() == 10_500);
        assertThat(calls).hasValue(2);
        assertThat(log).anyMatch(l -> l.startsWith("clock bound 1500 not published within 2000 ms (a Hazelcast call); "
            + "given up, tried again"));

        // The hung call lands late, with its older bound: the bound does not go down, and it is counted back.
        never.countDown();
        eventually("counted back", () -> publisher.givenUp() == 0);
        assertThat(bound.published()).isEqualTo(10_500);
    }

    @Test
    void shouldStartNoCallPastTheGivenUpOnesThatStillRun() throws Exception {
        final ClockBound bound = new ClockBound(() -> 0, 1);
        final AtomicInteger calls = new AtomicInteger();
        final List<String> log = new CopyOnWriteArrayList<>();
        final ClockBoundPublisher publisher = new ClockBoundPublisher(vertx, bound, next -> {
            calls.incrementAndGet();
            hang();
            return next;
        }, 50, () -> false, log::add);
        final long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(30); // a bound: loaded machines
        while (System.nanoTime() < until && publisher.givenUp() < ClockBoundPublisher.MAX_GIVEN_UP) {
            publisher.publish();
            Thread.sleep(10);
        }
        for (int i = 0; i < 20; i++) {
            publisher.publish();
            Thread.sleep(10);
        }
        assertThat(calls).hasValue(ClockBoundPublisher.MAX_GIVEN_UP);
        assertThat(publisher.givenUp()).isEqualTo(ClockBoundPublisher.MAX_GIVEN_UP);
    }

    /** Waits until the test ends (a Hazelcast call that never answers). */
    private void hang() {
        try {
            never.await();
        } catch (final InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }

    private static void eventually(final String what, final java.util.function.BooleanSupplier check)
        throws InterruptedException {
        final long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
        while (!check.getAsBoolean()) {
            if (System.nanoTime() > until) {
                throw new AssertionError("not within 20 s: " + what);
            }
            Thread.sleep(10);
        }
    }
}
