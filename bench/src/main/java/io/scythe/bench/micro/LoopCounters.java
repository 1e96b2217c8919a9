package io.scythe.bench.micro;

import io.scythe.bridge.Bridge;
import io.scythe.bridge.VerbStats;
import io.vertx.core.Context;
import io.vertx.core.Promise;

import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * What the event loops of a run did, read on each loop (so the loop-confined counters are exact) and summed: the
 * verbs, bytes and RRPC calls posted through each loop's {@link Bridge} ({@link VerbStats}) and the CPU time of the
 * loop threads. Take one before and one after a run; the difference is the run's.
 */
public record LoopCounters(VerbStats verbs, long loopCpuNs) {
    private static final ThreadMXBean THREADS = ManagementFactory.getThreadMXBean();

    /** The sum over {@code loops}, each read on its loop. Blocks: never call it on an event loop. */
    public static LoopCounters read(final List<Context> loops) throws Exception {
        final VerbStats verbs = new VerbStats();
        long cpuNs = 0;
        for (final Context loop : loops) {
            final Promise<LoopCounters> read = Promise.promise();
            loop.runOnContext(v -> {
                final Bridge bridge = Bridge.currentOrNull();
                read.complete(new LoopCounters(bridge == null ? new VerbStats() : bridge.stats().copy(),
                    THREADS.isCurrentThreadCpuTimeSupported() ? THREADS.getCurrentThreadCpuTime() : 0));
            });
            final LoopCounters one = read.future().await(30, TimeUnit.SECONDS);
            verbs.add(one.verbs);
            cpuNs += one.loopCpuNs;
        }
        return new LoopCounters(verbs, cpuNs);
    }

    /** What happened from {@code before} to this. */
    public LoopCounters since(final LoopCounters before) {
        return new LoopCounters(verbs.copy().subtract(before.verbs), loopCpuNs - before.loopCpuNs);
    }

    /** CPU time this whole process has used so far (every thread: loops, JIT, GC), or -1 if unknown. */
    public static long processCpuNs() {
        final java.lang.management.OperatingSystemMXBean os = ManagementFactory.getOperatingSystemMXBean();
        if (os instanceof com.sun.management.OperatingSystemMXBean sun) {
            return sun.getProcessCpuTime();
        }
        return -1;
    }
}
