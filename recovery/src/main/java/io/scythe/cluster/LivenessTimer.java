package io.scythe.cluster;

import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.LongSupplier;

/**
 * Times whether this process ran, on a daemon thread of its own: it ticks every period and tells how long it has been
 * since the previous tick. A gap much longer than the period means the whole process did not run (SIGSTOP, a
 * stop-the-world GC, a VM descheduled), since nothing else runs on this thread; an event loop kept busy (the shm
 * fabric's polling spins on it while there is work) does not delay it. A node's lease is timed here, never on an
 * event loop: a busy loop must not cost a node its lease, while a real pause still does.
 *
 * <p>The gap is measured with {@link System#nanoTime()} unless a clock is given (tests), and the listener runs on
 * this thread, so it must not block for long (it hands any blocking or loop work on).
 */
final class LivenessTimer implements AutoCloseable {
    /** What each tick tells: the ms since the previous tick (or since the timer started, on the first). */
    @FunctionalInterface
    interface Listener {
        void ran(long sinceMs);
    }

    private final LongSupplier nanos;
    private final Listener listener;
    private final ScheduledExecutorService thread;
    private long lastNs;
    private volatile long maxGapMs;

    private LivenessTimer(final LongSupplier nanos, final Listener listener, final ScheduledExecutorService thread) {
        this.nanos = nanos;
        this.listener = listener;
        this.thread = thread;
        this.lastNs = nanos.getAsLong();
    }

    /**
     * Starts ticking every {@code periodMs} ms on a new daemon thread named {@code name}.
     *
     * @throws IllegalArgumentException when {@code periodMs} is not positive
     */
    static LivenessTimer start(final String name, final long periodMs, final Listener listener) {
        if (periodMs <= 0) {
            throw new IllegalArgumentException("liveness period must be positive, was " + periodMs + " ms");
        }
        final ScheduledExecutorService thread = Executors.newSingleThreadScheduledExecutor(r -> {
            final Thread t = new Thread(r, name);
            t.setDaemon(true);
            return t;
        });
        final LivenessTimer timer = new LivenessTimer(System::nanoTime, listener, thread);
        // Fixed delay: after a pause one tick sees the whole gap (fixed rate would catch up with a burst of short ones).
        thread.scheduleWithFixedDelay(timer::tickSafely, periodMs, periodMs, TimeUnit.MILLISECONDS);
        return timer;
    }

    /** A timer without a thread, ticked by hand with {@link #tick()} against {@code nanos} (tests). */
    static LivenessTimer manual(final LongSupplier nanos, final Listener listener) {
        return new LivenessTimer(nanos, listener, null);
    }

    /** One tick: measures the time since the previous one and tells the listener. */
    void tick() {
        final long now = nanos.getAsLong();
        final long sinceMs = TimeUnit.NANOSECONDS.toMillis(now - lastNs);
        lastNs = now;
        if (sinceMs > maxGapMs) {
            maxGapMs = sinceMs;
        }
        listener.ran(sinceMs);
    }

    private void tickSafely() {
        try {
            tick();
        } catch (final RuntimeException | Error e) {
            // A throwing listener must not end the ticks (a scheduled task that throws is never run again).
            System.err.println(java.time.Instant.now() + " liveness timer " + Thread.currentThread().getName()
                + ": listener failed: " + e);
        }
    }

    /**
     * Gives this timer's thread real-time priority, and the JVM threads that pause it ({@link RealtimePriority}),
     * logging the outcome on {@code log} as {@code what}; a manual timer has no thread and is left alone.
     */
    void raisePriority(final String what, final java.util.function.Consumer<String> log) {
        if (thread != null) {
            thread.execute(() -> RealtimePriority.raiseLeaseThreads(what, RealtimePriority.currentThreadId(), log));
        }
    }

    /** The longest time between two ticks so far, in ms. */
    long maxGapMs() {
        return maxGapMs;
    }

    /**
     * Keeps this timer's thread from ticking for {@code ms} ms, as a process pause would (tests).
     *
     * @throws IllegalStateException on a manual timer, which has no thread
     */
    void stallFor(final long ms) {
        if (thread == null) {
            throw new IllegalStateException("a manual liveness timer has no thread to stall");
        }
        thread.execute(() -> {
            try {
                Thread.sleep(ms);
            } catch (final InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        });
    }

    @Override
    public void close() {
        if (thread != null) {
            thread.shutdownNow();
        }
    }
}
