import com.hazelcast.config.Config;
import com.hazelcast.config.JoinConfig;
import com.hazelcast.core.Hazelcast;
import com.hazelcast.core.HazelcastInstance;

import java.lang.management.ManagementFactory;
import java.lang.management.ThreadInfo;
import java.lang.management.ThreadMXBean;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.ArrayList;
import java.util.List;

/**
 * Standalone reproduction (Hazelcast 5.6.0 + JDK only) of an output I/O thread spinning on a member connection whose
 * peer accepts TCP and never answers (a SIGSTOPped member: its kernel accepts, nobody reads):
 *
 * <pre>java -cp hazelcast-5.6.0.jar PausedPeerSpin.java [seconds] [nopeer]</pre>
 *
 * ({@code nopeer}: the control run, nothing listens on the third address; its dials are refused at once.)
 *
 * Two embedded members on loopback, TCP-IP join, whose member list also names a ServerSocket of this JVM that accepts
 * connections and never reads or writes them. Hazelcast's defaults otherwise, except the split-brain search's delays
 * (5 s, so the window sees a few searches; the default first run is after 300 s). Prints the CPU time of every
 * {@code IO.thread-out-*} thread over the window (default 12 s) and the hottest one's stack.
 */
public final class PausedPeerSpin {
    public static void main(final String[] args) throws Exception {
        final long windowMs = (args.length > 0 ? Long.parseLong(args[0]) : 12) * 1000;
        final InetAddress loopback = InetAddress.getLoopbackAddress();
        final int silentPort = freePort(); // listened on once the two members formed their cluster
        final List<Socket> held = new ArrayList<>();
        final int a = freePort();
        final int b = freePort();
        final List<String> members = List.of("127.0.0.1:" + a, "127.0.0.1:" + b, "127.0.0.1:" + silentPort);
        final HazelcastInstance first = Hazelcast.newHazelcastInstance(config(a, members));
        final HazelcastInstance second = Hazelcast.newHazelcastInstance(config(b, members));
        while (first.getCluster().getMembers().size() < 2) {
            Thread.sleep(50);
        }
        final boolean control = args.length > 1 && args[1].equals("nopeer");
        final ServerSocket silent = new ServerSocket(control ? 0 : silentPort, 50, loopback);
        final Thread acceptor = new Thread(() -> {
            try {
                while (true) {
                    held.add(silent.accept()); // accepted, never read, never written
                }
            } catch (final Exception e) {
                // closed at the end
            }
        }, "silent-acceptor");
        acceptor.setDaemon(true);
        acceptor.start();
        final long before = outputCpuNanos();
        final long end = System.nanoTime() + windowMs * 1_000_000;
        final var map = first.<Integer, Integer>getMap("m");
        for (int k = 0; System.nanoTime() < end; k = (k + 1) % 500) {
            map.put(k, k); // ordinary traffic between the two live members
            Thread.sleep(20);
        }
        final long cpuMs = (outputCpuNanos() - before) / 1_000_000;
        System.out.println("silent peer accepted " + held.size() + " connections");
        System.out.println("output I/O threads' CPU in " + windowMs + " ms: " + cpuMs + " ms" + hottest());
        first.getLifecycleService().terminate();
        second.getLifecycleService().terminate();
        silent.close();
    }

    private static Config config(final int port, final List<String> members) {
        final Config config = new Config();
        config.setClusterName("paused-peer-spin");
        config.setProperty("hazelcast.phone.home.enabled", "false");
        config.setProperty("hazelcast.wait.seconds.before.join", "0"); // only to form the cluster sooner
        config.setProperty("hazelcast.max.wait.seconds.before.join", "0");
        config.setProperty("hazelcast.merge.first.run.delay.seconds", "5");
        config.setProperty("hazelcast.merge.next.run.delay.seconds", "5");
        config.getNetworkConfig().setPort(port).setPortAutoIncrement(false);
        config.getNetworkConfig().getInterfaces().setEnabled(true).addInterface("127.0.0.1");
        final JoinConfig join = config.getNetworkConfig().getJoin();
        join.getMulticastConfig().setEnabled(false);
        join.getAutoDetectionConfig().setEnabled(false);
        join.getTcpIpConfig().setEnabled(true).setMembers(members);
        return config;
    }

    private static int freePort() throws Exception {
        try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            return s.getLocalPort();
        }
    }

    private static long outputCpuNanos() {
        final ThreadMXBean threads = ManagementFactory.getThreadMXBean();
        long sum = 0;
        for (final ThreadInfo info : threads.getThreadInfo(threads.getAllThreadIds())) {
            if (info != null && info.getThreadName().contains(".IO.thread-out")) {
                sum += Math.max(threads.getThreadCpuTime(info.getThreadId()), 0);
            }
        }
        return sum;
    }

    private static String hottest() {
        final ThreadMXBean threads = ManagementFactory.getThreadMXBean();
        ThreadInfo hot = null;
        long hotCpu = -1;
        for (final ThreadInfo info : threads.getThreadInfo(threads.getAllThreadIds(), 8)) {
            if (info != null && info.getThreadName().contains(".IO.thread-out")) {
                final long cpu = threads.getThreadCpuTime(info.getThreadId());
                if (cpu > hotCpu) {
                    hot = info;
                    hotCpu = cpu;
                }
            }
        }
        final StringBuilder b = new StringBuilder();
        if (hot != null) {
            b.append("\nhottest: ").append(hot.getThreadName()).append(' ').append(hotCpu / 1_000_000).append(" ms");
            for (final StackTraceElement e : hot.getStackTrace()) {
                b.append("\n    at ").append(e);
            }
        }
        return b.toString();
    }
}
