package io.scythe.cluster;

import org.junit.jupiter.api.Test;

import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The node JVMs a test's {@link LocalCluster} starts get the Hazelcast settings of the test's own JVM, where it joins
 * as a client: a member whose partition count differs from the others' is refused at join.
 */
class LocalClusterLauncherTest {
    @Test
    void shouldGiveTheNodesThisJvmsPartitionCountAndHeartbeatBoundWhereSet() {
        final String partitions = System.getProperty("hazelcast.partition.count");
        final String heartbeat = System.getProperty(ClusterAccess.MAX_NO_HEARTBEAT_PROPERTY);
        try {
            System.setProperty("hazelcast.partition.count", "17");
            System.setProperty(ClusterAccess.MAX_NO_HEARTBEAT_PROPERTY, "6");
            final List<String> cmd = LocalCluster.Launcher.sameClasspath(List.of("-Xmx64m")).command();
            assertThat(cmd).contains("-Dhazelcast.partition.count=17",
                "-D" + ClusterAccess.MAX_NO_HEARTBEAT_PROPERTY + "=6");
            // The test's own options come after (a later -D wins), before the class path.
            assertThat(cmd.indexOf("-Xmx64m")).isGreaterThan(cmd.indexOf("-Dhazelcast.partition.count=17"))
                .isLessThan(cmd.indexOf("-cp"));

            System.clearProperty("hazelcast.partition.count");
            System.clearProperty(ClusterAccess.MAX_NO_HEARTBEAT_PROPERTY);
            assertThat(LocalCluster.Launcher.sameClasspath(List.of()).command())
                .noneMatch(o -> o.startsWith("-Dhazelcast.partition.count")
                    || o.startsWith("-D" + ClusterAccess.MAX_NO_HEARTBEAT_PROPERTY));
        } finally {
            restore("hazelcast.partition.count", partitions);
            restore(ClusterAccess.MAX_NO_HEARTBEAT_PROPERTY, heartbeat);
        }
    }

    private static void restore(final String property, final String value) {
        if (value == null) {
            System.clearProperty(property);
        } else {
            System.setProperty(property, value);
        }
    }
}
