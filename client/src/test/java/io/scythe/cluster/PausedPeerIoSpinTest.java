package io.scythe.cluster;

import com.hazelcast.config.Config;
import com.hazelcast.core.Hazelcast;
import com.hazelcast.core.HazelcastInstance;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledIfSystemProperty;

import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.UnaryOperator;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Issue 23 §1, the fence scenario's wedge, in one JVM: a Hazelcast master's split-brain search dials an address whose
 * process is paused (SIGSTOP: the kernel accepts the TCP connection, nobody ever reads or answers): a member in a
 * child JVM ({@link PausedPeerMember}), SIGSTOPped. The measure is the CPU time of the members' {@code
 * IO.thread-out-*} threads: with the old configuration one of them spins (CI 203: 18 s of CPU in 25 s) and every other
 * connection it serves starves.
 * <p>
 * Each scenario counts only the output threads of its own cluster's members (their thread names carry the cluster's
 * name). Running this class beside MemberWatchdogTest (JUnit parallel classes, issue 23 §1) was tried and taken back:
 * at load 50-110 the paused member's child JVM missed its 60 s join bound in 2 of 6 module runs.
 */
class PausedPeerIoSpinTest {
    static final String SECRET = "sixteen-chars-or-more";
    private static final AtomicInteger CLUSTERS = new AtomicInteger();
    private static final long WINDOW_MS = 12_000;

    private final List<HazelcastInstance> started = new ArrayList<>();
    private final List<Process> processes = new ArrayList<>();

    @AfterEach
    void stop() throws IOException, InterruptedException {
        for (final Process p : processes) {
            p.destroyForcibly().waitFor();
        }
        for (final HazelcastInstance hz : started) {
            hz.getLifecycleService().terminate();
        }
    }

    private static int freePort() throws IOException {
        try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            return s.getLocalPort();
        }
    }

    private HazelcastInstance member(final String cluster, final String node, final int port,
                                     final List<String> members, final UnaryOperator<Config> tweak) {
        final ClusterAccess access = new ClusterAccess(cluster, SECRET, node, "127.0.0.1", port,
            members, 0, 1, null, 60_000);
        final HazelcastInstance hz = Hazelcast.newHazelcastInstance(tweak.apply(access.hazelcastConfig()));
        started.add(hz);
        return hz;
    }

    /**
     * Whether a thread is an output I/O thread of one of {@code cluster}'s members in this JVM: Hazelcast names it
     * {@code hz.<instance>.IO.thread-out-<n>}, the instance {@code <cluster>-<node>-<pid>} (ClusterAccess).
     */
    private static boolean isOutputThreadOf(final String cluster, final String threadName) {
        return threadName.startsWith("hz." + cluster + "-") && threadName.contains(".IO.thread-out");
    }

    /** How many Hazelcast output I/O threads of {@code cluster}'s members this JVM has. */
    private static long outputThreads(final String cluster) {
        final ThreadMXBean threads = ManagementFactory.getThreadMXBean();
        return java.util.Arrays.stream(threads.getThreadInfo(threads.getAllThreadIds()))
            .filter(info -> info != null && isOutputThreadOf(cluster, info.getThreadName())).count();
    }

    /** CPU time (ns) of every Hazelcast output I/O thread of {@code cluster}'s members in this JVM. */
    private static long outputCpuNanos(final String cluster) {
        final ThreadMXBean threads = ManagementFactory.getThreadMXBean();
        long sum = 0;
        for (final var info : threads.getThreadInfo(threads.getAllThreadIds())) {
            if (info != null && isOutputThreadOf(cluster, info.getThreadName())) {
                final long cpu = threads.getThreadCpuTime(info.getThreadId());
                sum += Math.max(cpu, 0);
            }
        }
        return sum;
    }

    private static String hottest(final String cluster) {
        final ThreadMXBean threads = ManagementFactory.getThreadMXBean();
        final StringBuilder b = new StringBuilder();
        for (final var info : threads.getThreadInfo(threads.getAllThreadIds(), 12)) {
            if (info != null && isOutputThreadOf(cluster, info.getThreadName())) {
                b.append("\n  ").append(info.getThreadName()).append(' ')
                    .append(threads.getThreadCpuTime(info.getThreadId()) / 1_000_000).append(" ms");
                for (final StackTraceElement e : info.getStackTrace()) {
                    b.append("\n     ").append(e);
                }
            }
        }
        return b.toString();
    }

    private static void signal(final String signal, final long pid) throws IOException, InterruptedException {
        final Process kill = new ProcessBuilder("kill", "-" + signal, Long.toString(pid)).inheritIO().start();
        assertThat(kill.waitFor()).as("kill -%s %d", signal, pid).isZero();
    }

    private static void awaitSize(final HazelcastInstance hz, final int size) throws InterruptedException {
        final long deadline = System.nanoTime() + 60_000_000_000L;
        while (hz.getCluster().getMembers().size() != size) {
            assertThat(System.nanoTime()).as("cluster of %d", size).isLessThan(deadline);
            Thread.sleep(50);
        }
    }

    /**
     * Two seeds (as the TSO and a memory node) and a compute node that joins by them; the compute node then pauses
     * (its address accepts and never answers). Returns the output threads' CPU from the STOP to {@link #WINDOW_MS}
     * after its removal.
     */
    private long pausedComputeNodeOutputCpuMs(final UnaryOperator<Config> tweak) throws Exception {
        return pausedMemberOutputCpuMs(false, tweak);
    }

    /** As {@link #pausedComputeNodeOutputCpuMs}; with {@code seed}, the paused member is a seed (a memory node). */
    private long pausedMemberOutputCpuMs(final boolean seed, final UnaryOperator<Config> tweak) throws Exception {
        final String cluster = "spin" + CLUSTERS.incrementAndGet();
        final int a = freePort();
        final int b = freePort();
        final int c = freePort();
        final List<String> seeds = seed ? List.of("127.0.0.1:" + a, "127.0.0.1:" + b, "127.0.0.1:" + c)
            : List.of("127.0.0.1:" + a, "127.0.0.1:" + b);
        final HazelcastInstance tso = member(cluster, "tso", a, seeds, tweak);
        final HazelcastInstance mn = member(cluster, "mn0", b, seeds, tweak);
        final List<String> command = new ArrayList<>(List.of(
            Path.of(System.getProperty("java.home"), "bin", "java").toString(), "-Xmx256m", "-cp",
            System.getProperty("java.class.path"), PausedPeerMember.class.getName(), cluster, seed ? "mn1" : "cn0",
            Integer.toString(c)));
        command.addAll(seeds);
        final Process cn = new ProcessBuilder(command).redirectErrorStream(true)
            .redirectOutput(ProcessBuilder.Redirect.appendTo(Path.of("target", "paused-peer-" + c + ".log").toFile()))
            .start();
        processes.add(cn);
        awaitSize(tso, 3);
        // Map data on every member, the paused one included (it owns partitions when it stops), and calls through
        // the window from both live members: a dial to the paused address by any path (an invocation, a backup, a
        // migration; not only the search) would show as spin.
        final var tsoMap = tso.<Integer, Integer>getMap("spin");
        final var mnMap = mn.<Integer, Integer>getMap("spin");
        for (int k = 0; k < 500; k++) {
            tsoMap.put(k, k);
        }
        // Counted from the STOP, not from the removal: a dial between the first suspicion and the removal (a
        // non-master re-dialling for its own heartbeats or operations) counts too (review stop57 #4).
        // The filter must see the members' output threads, or the bound below would hold with nothing measured.
        assertThat(outputThreads(cluster)).as("output I/O threads of %s's members in this JVM", cluster).isPositive();
        final long before = outputCpuNanos(cluster);
        signal("STOP", cn.pid());
        awaitSize(tso, 2);
        final long end = System.nanoTime() + WINDOW_MS * 1_000_000;
        for (int k = 0; System.nanoTime() < end; k = (k + 1) % 500) {
            (k % 2 == 0 ? tsoMap : mnMap).put(k, k + 1);
            Thread.sleep(20);
        }
        final long cpuMs = (outputCpuNanos(cluster) - before) / 1_000_000;
        System.out.println(cluster + " hot: " + hottest(cluster));
        assertThat(tso.getCluster().getMembers()).hasSize(2);
        assertThat(mn.getCluster().getMembers()).hasSize(2);
        return cpuMs;
    }

    /**
     * The fix (conf/cluster.xml: previously joined members' addresses are not retained): the master's split-brain
     * search never dials the paused compute node, so no output thread spins. Measured: about 0.2 s of ordinary traffic
     * (map calls through the window; a spinning thread: 2.1-3.8 s).
     */
    @Test
    void shouldNotSpinAnOutputThreadOnAPausedRemovedComputeNode() throws Exception {
        assertThat(pausedComputeNodeOutputCpuMs(UnaryOperator.identity())).isLessThan(1_000);
    }

    /**
     * What the fix removes, Hazelcast's default retention (4 hours): the master dials the paused compute node's
     * address and one of its output threads spins (3.8 s of CPU in 12 s here). Spinning costs a core for the window,
     * so this runs on request only ({@code -Dscythe.test.spin=true}).
     */
    @Test
    @EnabledIfSystemProperty(named = "scythe.test.spin", matches = "true")
    void shouldSpinAnOutputThreadWithHazelcastsDefaultRetention() throws Exception {
        assertThat(pausedComputeNodeOutputCpuMs(c -> c.setProperty(
            "hazelcast.tcp.join.previously.joined.member.address.retention.seconds", "14400")))
            .isGreaterThan(1_000);
    }
    /**
     * Issue 23 §1 residue (b): a paused SEED is still dialled by the split-brain search (every 5 s); {@link
     * MemberWatchdog} closes the connection once the peer has sent nothing for {@link ClusterAccess#HANDSHAKE_TIMEOUT_MS},
     * which ends that dial's spin. Measured (load 37-40): 3.8 s of output-thread CPU in the window without the
     * watchdog ({@link #measureAPausedSeedWithoutTheWatchdog}), 0.23 s with it (1 s timeout; 0.87 s with 2 s).
     */
    @Test
    void shouldCloseAConnectionToAPausedSeedStuckInTheHandshake() throws Exception {
        final List<MemberWatchdog> watchdogs = new ArrayList<>();
        final long cpuMs = pausedMemberOutputCpuMs(true, c -> {
            c.getListenerConfigs().stream().map(l -> l.getImplementation()).filter(MemberWatchdog.class::isInstance)
                .map(MemberWatchdog.class::cast).forEach(watchdogs::add);
            return c;
        });
        System.out.println("paused seed: output CPU ms " + cpuMs);
        assertThat(watchdogs).hasSize(2);
        assertThat(watchdogs.stream().mapToInt(w -> w.handshakesClosed.get()).sum()).as("connections closed")
            .isPositive();
        // Each dial now spins at most ~1.1 s (timeout + the 100 ms check), 2-3 dials in the window: < 3.5 s even where
        // the spin gets a whole core (a quiet machine; without the watchdog it then spins from the first dial to the
        // end of the window, ~10 s). At load the spin gets a fraction of a core, so the bound does not separate the
        // two there: the closes counted above do (review stop58 #8).
        assertThat(cpuMs).isLessThan(5_000);
    }

    /** As {@link #shouldCloseAConnectionToAPausedSeedStuckInTheHandshake}, without {@link MemberWatchdog} (on request). */
    @Test
    @EnabledIfSystemProperty(named = "scythe.test.spin", matches = "true")
    void measureAPausedSeedWithoutTheWatchdog() throws Exception {
        System.out.println("paused seed, no watchdog: output CPU ms " + pausedMemberOutputCpuMs(true, c -> {
            c.getListenerConfigs().clear();
            return c;
        }));
    }
}
