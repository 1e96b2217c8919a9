package io.scythe.sim;

import io.scythe.bridge.Bridge;

import java.util.List;
import java.util.concurrent.AbstractExecutorService;
import java.util.concurrent.Callable;
import java.util.concurrent.Delayed;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;

/**
 * One simulated core (an event loop of a CN, the polling core of an MN): the executor its {@link Bridge} runs on. A
 * task posted now runs once the core is free; a timer at its virtual time. Before each task the loop's bridge becomes
 * the thread's current one ({@link Bridge#switchCurrent}); after it, the core is busy for the CPU time the
 * {@link Cpu} model charges, so software cost and MN-side RPC handling take virtual time, and a busy-polling core
 * re-polls one poll later rather than at once.
 */
public final class SimLoop extends AbstractExecutorService implements ScheduledExecutorService {
    /** CPU time charged for a task; {@code requests} is the RPCs an MN's server handled in it. */
    @FunctionalInterface
    public interface Cpu {
        long chargeNs(SimLoop loop, boolean poll, int work, long requests);
    }

    private final SimScheduler scheduler;
    private final int id;
    private final String name;
    private final Cpu cpu;
    private Bridge bridge;
    private java.util.function.LongSupplier requestCounter = () -> 0;
    private long busyUntilNs;
    private long cpuNs;
    private long cpuMarkNs = Long.MAX_VALUE;
    private long cpuBeforeMarkNs;
    private boolean crashed;

    SimLoop(final SimScheduler scheduler, final int id, final String name, final Cpu cpu) {
        this.scheduler = scheduler;
        this.id = id;
        this.name = name;
        this.cpu = cpu;
    }

    public int id() {
        return id;
    }

    public String name() {
        return name;
    }

    /** The bridge whose duty cycles run here; made current before every task. */
    public void bridge(final Bridge bridge) {
        this.bridge = bridge;
    }

    public Bridge bridge() {
        return bridge;
    }

    /** Counts RPC requests handled by this core (an MN's RPC server), charged per request by the CPU model. */
    public void requestCounter(final java.util.function.LongSupplier counter) {
        this.requestCounter = counter;
    }

    long busyUntilNs() {
        return busyUntilNs;
    }

    /** Counts CPU time from here on apart, in {@link #cpuBeforeMarkNs}: tasks begun before {@code atNs}. */
    void markCpuAt(final long atNs) {
        cpuMarkNs = atNs;
    }

    /**
     * Virtual CPU time of the tasks this core began before {@link #markCpuAt}'s time (all, with no mark), idle polls
     * (a duty cycle that found and served nothing) left out: the time its work took, which a busy-polling core's
     * {@link #cpuNs} hides.
     */
    public long cpuBeforeMarkNs() {
        return cpuBeforeMarkNs;
    }

    /** Virtual CPU time this core has been busy. */
    public long cpuNs() {
        return cpuNs;
    }

    /** The core and everything on it vanish: its pending and future tasks never run. */
    public void crash() {
        crashed = true;
    }

    public boolean crashed() {
        return crashed;
    }

    void run(final Runnable task) {
        final long startNs = scheduler.clock().nanoTime();
        Bridge.switchCurrent(bridge);
        final long pollsBefore = bridge == null ? 0 : bridge.polls();
        final long requestsBefore = requestCounter.getAsLong();
        try {
            task.run();
        } catch (final Throwable t) {
            scheduler.failed(new IllegalStateException("task on simulated loop " + name + " failed", t));
        }
        final boolean poll = bridge != null && bridge.polls() != pollsBefore;
        if (!poll && bridge != null && !crashed) {
            // Work begun outside a duty cycle (a client's next transaction, a deferred flush) may wait on a poller
            // (an RRPC reply ring) that only this loop's polling notices: poll after it, as a busy loop would.
            bridge.wake();
        }
        final long requests = requestCounter.getAsLong() - requestsBefore;
        final long charged = Math.max(1, cpu.chargeNs(this, poll, poll ? bridge.lastWork() : 1, requests));
        cpuNs += charged;
        if (startNs - cpuMarkNs < 0 && !(poll && bridge.lastWork() == 0 && requests == 0)) {
            cpuBeforeMarkNs += charged; // an idle poll (nothing found, nothing served) is not counted
        }
        busyUntilNs = startNs + charged;
    }

    // --------------------------------------------------------------------------------- the executor's interface

    @Override
    public void execute(final Runnable command) {
        if (!crashed) {
            scheduler.post(this, Math.max(scheduler.clock().nanoTime(), busyUntilNs), command);
        }
    }

    @Override
    public ScheduledFuture<?> schedule(final Runnable command, final long delay, final TimeUnit unit) {
        final long at = scheduler.clock().nanoTime() + Math.max(0, unit.toNanos(delay));
        final Scheduled future = new Scheduled(at);
        if (!crashed) {
            scheduler.post(this, Math.max(at, busyUntilNs), () -> {
                future.done = true;
                command.run();
            }).future = future;
        }
        return future;
    }

    @Override
    public <V> ScheduledFuture<V> schedule(final Callable<V> callable, final long delay, final TimeUnit unit) {
        throw new UnsupportedOperationException("simulated loops schedule Runnables only");
    }

    @Override
    public ScheduledFuture<?> scheduleAtFixedRate(final Runnable command, final long initialDelay, final long period,
                                                  final TimeUnit unit) {
        throw new UnsupportedOperationException("simulated loops have no periodic timers");
    }

    @Override
    public ScheduledFuture<?> scheduleWithFixedDelay(final Runnable command, final long initialDelay,
                                                     final long delay, final TimeUnit unit) {
        throw new UnsupportedOperationException("simulated loops have no periodic timers");
    }

    @Override
    public void shutdown() {
        crashed = true;
    }

    @Override
    public List<Runnable> shutdownNow() {
        crashed = true;
        return List.of();
    }

    @Override
    public boolean isShutdown() {
        return crashed;
    }

    @Override
    public boolean isTerminated() {
        return crashed;
    }

    @Override
    public boolean awaitTermination(final long timeout, final TimeUnit unit) {
        return crashed;
    }

    @Override
    public String toString() {
        return "SimLoop{" + name + '}';
    }

    /** A timer of this loop: cancelling it keeps its task from running. */
    final class Scheduled implements ScheduledFuture<Object> {
        private final long atNs;
        private boolean cancelled;
        private boolean done;

        Scheduled(final long atNs) {
            this.atNs = atNs;
        }

        @Override
        public long getDelay(final TimeUnit unit) {
            return unit.convert(atNs - scheduler.clock().nanoTime(), TimeUnit.NANOSECONDS);
        }

        @Override
        public int compareTo(final Delayed o) {
            return Long.compare(getDelay(TimeUnit.NANOSECONDS), o.getDelay(TimeUnit.NANOSECONDS));
        }

        @Override
        public boolean cancel(final boolean mayInterruptIfRunning) {
            if (done) {
                return false;
            }
            cancelled = true;
            return true;
        }

        @Override
        public boolean isCancelled() {
            return cancelled;
        }

        @Override
        public boolean isDone() {
            return done || cancelled;
        }

        @Override
        public Object get() {
            return null;
        }

        @Override
        public Object get(final long timeout, final TimeUnit unit) {
            return null;
        }
    }
}
