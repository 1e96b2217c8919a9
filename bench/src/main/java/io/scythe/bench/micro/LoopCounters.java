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
 * loop threads and the bytes they allocated on the heap ({@code com.sun.management.ThreadMXBean}; -1 where the JVM
 * does not count them). Take one before and one after a run; the difference is the run's.
 */
public record LoopCounters(VerbStats verbs, long loopCpuNs, long loopAllocatedBytes) {
    private static final ThreadMXBean THREADS = ManagementFactory.getThreadMXBean();

    /** The sum over {@code loops}, each read on its loop. Blocks: never call it on an event loop. */
    public static LoopCounters read(final List<Context> loops) throws Exception {
        final VerbStats verbs = new VerbStats();
        long cpuNs = 0;
        long allocated = 0;
        for (final Context loop : loops) {
            final Promise<LoopCounters> read = Promise.promise();
            loop.runOnContext(v -> {
                final Bridge bridge = Bridge.currentOrNull();
                read.complete(new LoopCounters(bridge == null ? new VerbStats() : bridge.stats().copy(),
                    THREADS.isCurrentThreadCpuTimeSupported() ? THREADS.getCurrentThreadCpuTime() : 0,
                    currentThreadAllocatedBytes()));
            });
            final LoopCounters one = read.future().await(30, TimeUnit.SECONDS);
            verbs.add(one.verbs);
            cpuNs += one.loopCpuNs;
            allocated = allocated < 0 || one.loopAllocatedBytes < 0 ? -1 : allocated + one.loopAllocatedBytes;
        }
        return new LoopCounters(verbs, cpuNs, allocated);
    }

    /** Heap bytes the calling thread has allocated so far, or -1 if the JVM does not count them. */
    private static long currentThreadAllocatedBytes() {
        if (THREADS instanceof com.sun.management.ThreadMXBean sun && sun.isThreadAllocatedMemorySupported()
            && sun.isThreadAllocatedMemoryEnabled()) {
            return sun.getCurrentThreadAllocatedBytes();
        }
        return -1;
    }

    /** What happened from {@code before} to this. */
    public LoopCounters since(final LoopCounters before) {
        return new LoopCounters(verbs.copy().subtract(before.verbs), loopCpuNs - before.loopCpuNs,
            loopAllocatedBytes < 0 || before.loopAllocatedBytes < 0 ? -1
                : loopAllocatedBytes - before.loopAllocatedBytes);
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
