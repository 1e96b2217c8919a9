#!/usr/bin/env bash
# Allocated bytes (and CPU, noisier) per commit of the simulator's latency-0 SmallBank, a load-independent measure of
# the software cost per transaction (issue 22): the simulator runs in virtual time, so the same code gives the same
# commits however loaded the machine is, and the bytes per commit do not depend on throughput as the real-time
# bench's do. Runs the simulation in this JVM for 20 ms and 80 ms (after one warm-up run) and prints the difference of
# every thread's allocated bytes and CPU time over the difference of commits (per-run setup cancels out).
#   tools/sim-cost-per-commit.sh JAR PROTOCOL [more sim options]
# e.g. tools/sim-cost-per-commit.sh cli/target/scythe.jar scythe; compare two jars by alternating runs.
set -euo pipefail
jar="$(cd "$(dirname "$1")" && pwd)/$(basename "$1")"; protocol="$2"; shift 2
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
cat > "$work/SimCost.java" <<'JAVA'
import java.lang.management.ManagementFactory;
import java.util.*;

public class SimCost {
    static final com.sun.management.ThreadMXBean T =
        (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
    /** Per thread: allocated bytes and CPU ns at its first sample, and since. */
    static final Map<Long, long[]> seen = new HashMap<>();
    static volatile boolean on;

    static synchronized void sample() {
        final long[] ids = T.getAllThreadIds();
        final long[] alloc = T.getThreadAllocatedBytes(ids);
        final long[] cpu = T.getThreadCpuTime(ids);
        for (int i = 0; i < ids.length; i++) {
            if (ids[i] == Thread.currentThread().getId()) {
                continue; // the sampler
            }
            final long[] s = seen.computeIfAbsent(ids[i], k -> new long[] {-1, -1, 0, 0});
            if (s[0] < 0) {
                s[0] = alloc[i];
                s[1] = cpu[i];
            }
            if (alloc[i] >= 0) {
                s[2] = alloc[i] - s[0];
            }
            if (cpu[i] >= 0) {
                s[3] = cpu[i] - s[1];
            }
        }
    }

    /** One run; every thread sampled every 0.2 ms (a thread's last fraction of a millisecond before it ends is lost). */
    static long[] run(final String[] args) throws Exception {
        synchronized (SimCost.class) {
            seen.clear();
        }
        sample();
        on = true;
        final Thread sampler = new Thread(() -> {
            while (on) {
                sample();
                try {
                    Thread.sleep(0, 200_000);
                } catch (InterruptedException e) {
                    return;
                }
            }
        });
        sampler.setDaemon(true);
        sampler.start();
        final java.lang.reflect.Method cl = Class.forName("io.scythe.cli.ScytheCommand").getDeclaredMethod("commandLine");
        final int rc = ((picocli.CommandLine) cl.invoke(null)).execute(args);
        on = false;
        sampler.join();
        sample();
        if (rc != 0) {
            throw new IllegalStateException("sim exited with " + rc + ": " + String.join(" ", args));
        }
        long alloc = 0;
        long cpu = 0;
        synchronized (SimCost.class) {
            for (final long[] v : seen.values()) {
                alloc += v[2];
                cpu += v[3];
            }
        }
        return new long[] {alloc, cpu};
    }

    static String[] with(final String[] base, final String duration, final String out) {
        final List<String> a = new ArrayList<>(Arrays.asList(base));
        a.addAll(List.of("--duration", duration, "--out", out));
        return a.toArray(new String[0]);
    }

    static long committed(final String dir) throws Exception {
        final String s = java.nio.file.Files.readString(java.nio.file.Path.of(dir, "results.json"));
        final java.util.regex.Matcher m = java.util.regex.Pattern.compile("\"committed\"\\s*:\\s*(\\d+)").matcher(s);
        if (!m.find()) {
            throw new IllegalStateException("no committed count in " + dir);
        }
        return Long.parseLong(m.group(1));
    }

    public static void main(final String[] args) throws Exception {
        final String out = args[0];
        final String[] sim = Arrays.copyOfRange(args, 1, args.length);
        run(with(sim, "20ms", out + "/warm"));
        final long[] shorter = run(with(sim, "20ms", out + "/short"));
        final long[] longer = run(with(sim, "80ms", out + "/long"));
        final long c0 = committed(out + "/short");
        final long c1 = committed(out + "/long");
        System.out.printf("commits %d, %d; alloc_bytes_per_commit %.0f; cpu_us_per_commit %.2f%n", c0, c1,
            (double) (longer[0] - shorter[0]) / (c1 - c0), (longer[1] - shorter[1]) / 1000.0 / (c1 - c0));
    }
}
JAVA
nice java -Xmx2g --add-exports java.base/jdk.internal.misc=ALL-UNNAMED --add-opens java.base/java.nio=ALL-UNNAMED \
  --add-opens java.base/sun.nio.ch=ALL-UNNAMED --add-opens java.base/java.lang=ALL-UNNAMED \
  -cp "$jar" "$work/SimCost.java" "$work/out" sim --workload smallbank --profile zero --theta 0.5 --clients 8 --cns 1 \
  --loops 1 --accounts 1000 --protocols "$protocol" "$@" 2>/dev/null | grep '^commits'
