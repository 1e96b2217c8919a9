package io.scythe.cluster;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import java.util.stream.Stream;

/**
 * Real-time scheduling ({@code SCHED_RR}, the lowest real-time priority) for the threads a fabric lease lives on
 * (issue 23 §3): a CN's renewer, an MN's watcher, and the JVM threads that stop every Java thread (the VM thread, which
 * runs safepoints, and the garbage collector's workers). At load 50-70 on this 2-core machine live CNs lost their
 * 750 ms lease: their renewer, a thread of its own that does nothing else, waited for a CPU behind ~35 runnable
 * threads, and the collections that stop it ran 10-70x longer than their CPU time (LocalCluster's GC logs). A thread
 * above every normal one runs as soon as it wakes, as FaRM runs its lease manager at the highest user-space priority
 * (FaRM, NSDI'14 §5.1). These threads use the CPU in bursts (a renewal is one WRITE every period; a collection stops
 * the process anyway), and the kernel keeps 5% of each second for normal threads (sched_rt_runtime_us).
 *
 * <p>Only when the fabric lease is on ({@code leaseRenewMs > 0}; off by default, so no test or CI node runs real-time).
 * The cost: a collection at real-time priority takes the host's CPUs from every normal process for its length (all of
 * them on 2 cores; the kernel's 5% aside). Linux only, and it needs the right (root, or CAP_SYS_NICE): set with
 * {@code chrt} on the thread's id. Where it cannot be set the lease runs at normal priority and the node says so once;
 * nothing else changes.
 */
final class RealtimePriority {
    /** The JVM threads whose pauses stop a renewer: by their names in {@code /proc/self/task/T/comm}. */
    private static final List<String> PAUSING_THREADS = List.of("VM Thread", "GC Thread#");

    private RealtimePriority() {
    }

    /** The calling thread's Linux thread id (from {@code /proc/thread-self}); -1 where there is none. */
    static long currentThreadId() {
        try {
            final Path self = Files.readSymbolicLink(Path.of("/proc/thread-self")); // "PID/task/TID"
            return Long.parseLong(self.getFileName().toString());
        } catch (final IOException | RuntimeException e) {
            return -1;
        }
    }

    /** The thread ids of this JVM's threads that stop every Java thread (the VM thread, the collector's workers). */
    static List<Long> pausingThreadIds() {
        final List<Long> out = new ArrayList<>();
        try (Stream<Path> tasks = Files.list(Path.of("/proc/self/task"))) {
            for (final Path task : (Iterable<Path>) tasks::iterator) {
                final String name;
                try {
                    name = Files.readString(task.resolve("comm")).trim();
                } catch (final IOException e) {
                    continue; // the thread ended meanwhile
                }
                if (PAUSING_THREADS.stream().anyMatch(name::startsWith)) {
                    out.add(Long.parseLong(task.getFileName().toString()));
                }
            }
        } catch (final IOException | RuntimeException e) {
            return List.of();
        }
        return out;
    }

    /**
     * Gives thread {@code tid} of this process real-time priority ({@code chrt -R -r -p 1}). Reset on fork
     * ({@code -R}, SCHED_RESET_ON_FORK): a thread it creates (a Vert.x worker or pool thread started lazily from a
     * lease callback) starts at normal priority, not real-time for the node's life (review stop59). Blocks for the
     * command (a few ms): not on an event loop, nor on the lease thread itself.
     *
     * @return null when it was set, else why not
     */
    static String raise(final long tid) {
        if (tid <= 0) {
            return "no Linux thread id";
        }
        try {
            final Process chrt = new ProcessBuilder("chrt", "-R", "-r", "-p", "1", Long.toString(tid))
                .redirectErrorStream(true).start();
            final String out;
            try (var in = chrt.getInputStream()) {
                out = new String(in.readAllBytes(), java.nio.charset.StandardCharsets.UTF_8).trim();
            }
            if (!chrt.waitFor(10, TimeUnit.SECONDS)) {
                chrt.destroyForcibly();
                return "chrt did not finish in 10 s";
            }
            return chrt.exitValue() == 0 ? null : "chrt exited " + chrt.exitValue() + ": " + out;
        } catch (final IOException e) {
            return "chrt could not run: " + e.getMessage();
        } catch (final InterruptedException e) {
            Thread.currentThread().interrupt();
            return "interrupted";
        }
    }

    /**
     * Raises lease thread {@code leaseTid} ({@code what}) and this JVM's pausing threads, on a short-lived thread of
     * its own, and logs the outcome once on {@code log}.
     */
    static void raiseLeaseThreads(final String what, final long leaseTid, final Consumer<String> log) {
        final Thread raising = new Thread(() -> {
            final String why = raise(leaseTid);
            if (why != null) {
                log.accept("WARN " + what + " runs at normal priority (real-time scheduling not set: " + why + "): "
                    + "on a loaded machine it may starve and lose leases");
                return;
            }
            final List<Long> pausing = pausingThreadIds();
            final List<String> failed = new ArrayList<>();
            for (final long tid : pausing) {
                final String not = raise(tid);
                if (not != null) {
                    failed.add(tid + " (" + not + ")");
                }
            }
            log.accept(what + " runs at real-time priority, with " + (pausing.size() - failed.size()) + " of the "
                + "JVM's " + pausing.size() + " pausing threads (VM thread, collector)"
                + (failed.isEmpty() ? "" : "; not raised: " + failed));
        }, "scythe-rt-priority");
        raising.setDaemon(true);
        raising.start();
    }
}
