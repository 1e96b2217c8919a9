import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Random;

/**
 * How late a lease renewer's thread wakes on a loaded machine (issue 23 §3), normal against real-time priority, side by
 * side: a thread that sleeps 50 ms in a loop (a renewer's period) beside two threads that allocate (a node's workload,
 * which makes the collector stop the JVM). Modes: {@code normal}; {@code rt-gc}: the sleeper and the collector's
 * threads at SCHED_RR 1; {@code rt-all}: those and the VM thread (what RealtimePriority does). Needs root for chrt.
 *
 * <pre>
 * cd tools/lease-starve && javac LeaseStarve.java && for m in normal rt-gc rt-all; do
 *   java -Xmx128m -XX:+UseParallelGC -XX:+UnlockDiagnosticVMOptions -XX:GuaranteedSafepointInterval=0 \
 *     -Xlog:safepoint:file=/tmp/sp-$m.log -cp . LeaseStarve $m 45 &amp; done; wait
 * </pre>
 */
public final class LeaseStarve {
    private static volatile Object sink;

    private LeaseStarve() {
    }

    private static long threadId() throws Exception {
        return Long.parseLong(Files.readSymbolicLink(Path.of("/proc/thread-self")).getFileName().toString());
    }

    private static void realtime(final long tid) throws Exception {
        new ProcessBuilder("chrt", "-r", "-p", "1", Long.toString(tid)).inheritIO().start().waitFor();
    }

    public static void main(final String[] args) throws Exception {
        final String mode = args[0];
        final long seconds = Long.parseLong(args[1]);
        for (int w = 0; w < 2; w++) {
            final Thread workload = new Thread(() -> {
                final List<byte[]> kept = new ArrayList<>();
                final Random random = new Random();
                while (true) {
                    kept.add(new byte[random.nextInt(4096)]);
                    if (kept.size() > 5000) {
                        kept.subList(0, 2500).clear();
                    }
                    sink = kept;
                }
            });
            workload.setDaemon(true);
            workload.start();
        }
        Thread.sleep(2000);
        final long[] late = new long[(int) (seconds * 20 + 10)];
        final int[] n = {0};
        final Thread renewer = new Thread(() -> {
            try {
                if (!mode.equals("normal")) {
                    realtime(threadId());
                    try (var tasks = Files.list(Path.of("/proc/self/task"))) {
                        for (final Path task : tasks.toList()) {
                            final String name = Files.readString(task.resolve("comm")).trim();
                            if (name.startsWith("GC Thread#") || mode.equals("rt-all") && name.startsWith("VM Thread")) {
                                realtime(Long.parseLong(task.getFileName().toString()));
                            }
                        }
                    }
                }
                final long end = System.nanoTime() + seconds * 1_000_000_000L;
                while (System.nanoTime() < end && n[0] < late.length) {
                    final long t0 = System.nanoTime();
                    Thread.sleep(50);
                    late[n[0]++] = (System.nanoTime() - t0) / 1_000_000 - 50;
                }
            } catch (final Exception e) {
                throw new IllegalStateException(e);
            }
        });
        renewer.start();
        renewer.join();
        final long[] l = Arrays.copyOf(late, n[0]);
        Arrays.sort(l);
        System.out.println(mode + " renewer: " + l.length + " sleeps of 50 ms, late by median " + l[l.length / 2]
            + " ms, P99 " + l[(int) (l.length * 0.99)] + " ms, max " + l[l.length - 1] + " ms; >200 ms late "
            + Arrays.stream(l).filter(x -> x > 200).count() + ", >700 ms late "
            + Arrays.stream(l).filter(x -> x > 700).count());
    }
}
