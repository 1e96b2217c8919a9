package io.scythe.cluster;

import io.vertx.core.Vertx;

import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.BooleanSupplier;
import java.util.function.Consumer;
import java.util.function.LongUnaryOperator;

/**
 * Publishes a compute node's clock bound ({@link io.scythe.txn.spi.ClockBound}, issue 18) to the cluster, one
 * publication at a time, each a blocking Hazelcast call on a worker ({@link MemoryNodeFailover#publishClockBound}),
 * and tells the bound once it is durable.
 *
 * <p><b>Under a Hazelcast stall</b> (issue 18, rcc20): a call that never answers (CI 193: an operation on a partition
 * whose owner split off waited with no end) held the one publication slot for good before, so no larger bound was
 * ever published again: every commit above the last one aborted ({@code clock-beyond-bound}, retried without end) on
 * this node, also after Hazelcast answered again. Now a call that has not answered within {@code callMs} is given up
 * (said, at most every 5 s) and the next publication is a fresh call, which a cluster that answers again completes. A
 * call given up that lands later only raises the map's entry ({@code publishClockBound} never lowers it) and the
 * bound ({@code ClockBound#published} never lowers either), so it is harmless, and counted back. At most
 * {@value #MAX_GIVEN_UP} calls given up may still be running (each holds a worker thread); past that none is started
 * until one of them returns, so a stall ties up a few workers, not all.
 */
final class ClockBoundPublisher {
    /** Calls given up that may still run: each holds a worker. */
    static final int MAX_GIVEN_UP = 4;
    private static final long SAY_EVERY_NS = TimeUnit.SECONDS.toNanos(5);

    private final Vertx vertx;
    private final io.scythe.txn.spi.ClockBound bound;
    private final LongUnaryOperator publish;
    private final long callMs;
    private final BooleanSupplier stopped;
    private final Consumer<String> log;
    private final AtomicBoolean publishing = new AtomicBoolean();
    private final AtomicInteger givenUp = new AtomicInteger();
    private final AtomicLong lastSaidNs = new AtomicLong(System.nanoTime() - SAY_EVERY_NS);

    /**
     * @param publish publishes a bound, blocking, and returns the one the cluster holds now
     * @param callMs  how long one call may take before it is given up
     * @param stopped true once this node stops publishing (it lost its lease)
     */
    ClockBoundPublisher(final Vertx vertx, final io.scythe.txn.spi.ClockBound bound, final LongUnaryOperator publish,
                        final long callMs, final BooleanSupplier stopped, final Consumer<String> log) {
        if (callMs <= 0) {
            throw new IllegalArgumentException("callMs=" + callMs + " must be positive");
        }
        this.vertx = vertx;
        this.bound = bound;
        this.publish = publish;
        this.callMs = callMs;
        this.stopped = stopped;
        this.log = log;
    }

    /** Calls given up that have not returned yet. */
    int givenUp() {
        return givenUp.get();
    }

    /** Publishes the next bound unless a publication runs; never blocks (any thread). */
    void publish() {
        if (stopped.getAsBoolean() || !publishing.compareAndSet(false, true)) {
            return;
        }
        if (givenUp.get() >= MAX_GIVEN_UP) {
            publishing.set(false);
            say("clock bound not published: " + MAX_GIVEN_UP + " calls given up still run (Hazelcast stalled); "
                + "commits above " + bound.published() + " wait");
            return;
        }
        final long next = bound.nextBound();
        final AtomicBoolean over = new AtomicBoolean();
        final long timer = vertx.setTimer(callMs, t -> {
            if (over.compareAndSet(false, true)) {
                givenUp.incrementAndGet();
                publishing.set(false);
                say("clock bound " + next + " not published within " + callMs + " ms (a Hazelcast call); given up, "
                    + "tried again (commits above " + bound.published() + " wait)");
            }
        });
        vertx.executeBlocking(() -> publish.applyAsLong(next), false).onComplete(ar -> {
            if (ar.succeeded()) {
                bound.published(ar.result()); // never lowers: a call given up that lands late is harmless
            }
            if (!over.compareAndSet(false, true)) {
                givenUp.decrementAndGet();
                return;
            }
            vertx.cancelTimer(timer);
            publishing.set(false);
            if (ar.failed()) {
                say("clock bound " + next + " not published (commits above " + bound.published() + " wait): "
                    + ar.cause());
            }
        });
    }

    private void say(final String line) {
        final long now = System.nanoTime();
        final long last = lastSaidNs.get();
        if (now - last > SAY_EVERY_NS && lastSaidNs.compareAndSet(last, now)) {
            log.accept(line);
        }
    }
}
