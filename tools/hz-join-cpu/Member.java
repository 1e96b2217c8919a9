import com.hazelcast.config.*;
import com.hazelcast.core.*;
import java.lang.management.*;
import java.nio.file.*;

/** One Hazelcast member with Scythe's shipped cluster.xml (tools/hz-join-cpu/run.sh): its join time, and its CPU time once the cluster is safe. */
public class Member {
    public static void main(String[] a) throws Exception {
        long t0 = System.nanoTime();
        int port = Integer.parseInt(a[0]);
        int expected = Integer.parseInt(a[1]);
        Config c = new XmlConfigBuilder(Member.class.getResourceAsStream("/io/scythe/cluster/cluster.xml")).build();
        c.setClusterName("st4exp" + a[2]);
        c.getNetworkConfig().setPort(port);
        c.getNetworkConfig().getJoin().getTcpIpConfig().setMembers(java.util.List.of("127.0.0.1:" + a[3]));
        HazelcastInstance hz = Hazelcast.newHazelcastInstance(c);
        long joined = System.nanoTime();
        for (String m : new String[] {"__vertx.haInfo", "__vertx.nodeInfo", "scythe.nodes", "scythe.epochs", "scythe.shards"}) {
            hz.getMap(m).put("k" + port, "v");
        }
        hz.getMultiMap("__vertx.subs").put("s" + port, "v");
        while (hz.getCluster().getMembers().size() < expected || !hz.getPartitionService().isClusterSafe()) {
            Thread.sleep(50);
        }
        long safe = System.nanoTime();
        long cpu = ((com.sun.management.OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean()).getProcessCpuTime();
        System.out.printf("port %d joinMs %d safeMs %d cpuMs %d%n", port, (joined - t0) / 1_000_000, (safe - t0) / 1_000_000, cpu / 1_000_000);
        System.out.flush();
        Path stop = Path.of(a[4]);
        while (!Files.exists(stop)) Thread.sleep(100);
        Runtime.getRuntime().halt(0);
    }
}
