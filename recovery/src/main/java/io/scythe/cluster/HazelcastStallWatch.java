package io.scythe.cluster;

import com.hazelcast.core.HazelcastInstance;

import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;

/**
 * Logs this node's threads when Hazelcast's cluster executor ({@code hz:cluster}, two threads; it runs the member's
 * heartbeat task every second) has not run a task of ours for {@link #STALL_MS}: issue 23 §1, the fence scenario's
 * wedge. There (ClusterProcessTest run at load 39-42, and CI 195) a live member's heartbeats stopped reaching one
 * other member right after it suspected the paused CN, with no GC pause or safepoint in its GC log across the gap, so
 * it was split off after 8 s; whether its heartbeat task was held up (both cluster-executor threads blocked) or the
 * heartbeats were sent and delayed on their way is what this tells: a dump here names what the executor's threads do.
 *
 * <p>Diagnostic only: changes nothing in Hazelcast. At most {@link #MAX_DUMPS} dumps a process (a starved machine
 * delays everything, this watch's own thread too: then the dump shows no thread blocked, which says as much).
 */
final class HazelcastStallWatch implements AutoCloseable {
    static final long STALL_MS = 3_000;
    static final int MAX_DUMPS = 3;
    private static final String EXECUTOR = "hz:cluster";

    private final String node;
    private final Consumer<String> log;
    private final java.util.concurrent.ScheduledFuture<?> stamp;
    private final Thread watch;
    private volatile long lastRunNs = System.nanoTime();
    private volatile boolean closed;

    /** Starts watching {@code hazelcast}'s cluster executor; null (and a line logged) where its internals are not reachable. */
    static HazelcastStallWatch start(final HazelcastInstance hazelcast, final String node, final Consumer<String> log) {
        final com.hazelcast.spi.impl.executionservice.ExecutionService executors;
        try {
            executors = ((com.hazelcast.instance.impl.HazelcastInstanceProxy) hazelcast).getOriginal().node
                .getNodeEngine().getExecutionService();
        } catch (final RuntimeException e) {
            log.accept("Hazelcast stall watch not started: " + e);
            return null;
        }
        return new HazelcastStallWatch(executors, node, log);
    }

    HazelcastStallWatch(final com.hazelcast.spi.impl.executionservice.ExecutionService executors, final String node,
                        final Consumer<String> log) {
        this.node = node;
        this.log = log;
        this.stamp = executors.scheduleWithRepetition(EXECUTOR, () -> lastRunNs = System.nanoTime(), 0, 500,
            TimeUnit.MILLISECONDS);
        this.watch = new Thread(this::watch, "scythe-hz-stall-watch-" + node);
        watch.setDaemon(true);
        watch.start();
    }

    private void watch() {
        int dumps = 0;
        boolean stalled = false;
        long woke = System.nanoTime();
        while (!closed && dumps < MAX_DUMPS) {
            try {
                Thread.sleep(500);
            } catch (final InterruptedException e) {
                return;
            }
            final long now = System.nanoTime();
            final long lateMs = TimeUnit.NANOSECONDS.toMillis(now - woke) - 500; // this watch's own delay
            woke = now;
            final long gapMs = TimeUnit.NANOSECONDS.toMillis(now - lastRunNs);
            if (processStood(gapMs, lateMs)) {
                // The whole process stood still (SIGSTOP, starvation), this watch too: no thread to blame.
                log.accept("this process did not run for " + lateMs + " ms (stopped or starved): Hazelcast's "
                    + EXECUTOR + " with it");
                lastRunNs = now;
            } else if (gapMs >= STALL_MS && !stalled && !closed) {
                stalled = true;
                dumps++;
                log.accept("WARN Hazelcast's cluster executor (" + EXECUTOR + ": this member's heartbeats) has not run "
                    + "for " + gapMs + " ms; its threads:\n" + ThreadDump.now("of " + node + " with " + EXECUTOR
                    + " stalled " + gapMs + " ms"));
            } else if (stalled && gapMs < 1_000) {
                stalled = false;
                log.accept("Hazelcast's cluster executor runs again");
            }
        }
    }

    /**
     * Whether a gap of {@code gapMs} since the executor last ran our task, seen by this watch {@code lateMs} late, is
     * the whole process standing still (SIGSTOP, a starved machine): this watch slept through most of it too.
     */
    static boolean processStood(final long gapMs, final long lateMs) {
        return gapMs >= STALL_MS && lateMs >= gapMs - 1_000;
    }

    @Override
    public void close() {
        closed = true;
        stamp.cancel(false);
        watch.interrupt();
    }
}
