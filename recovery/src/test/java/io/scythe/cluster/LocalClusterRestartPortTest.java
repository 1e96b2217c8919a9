package io.scythe.cluster;

import static org.assertj.core.api.Assertions.assertThat;

import io.vertx.core.json.JsonObject;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A restarted compute node (or TSO proxy) joins Hazelcast on a port its earlier incarnation never had (issue 23 §3: on
 * the reused port the master's partition table named the departed member for minutes, and a soak's map calls failed
 * with {@code TargetNotMemberException}); the TSO and memory nodes, which every node's {@code members} list names,
 * keep theirs. The "nodes" are shells that print the ready line and exit: no JVM, no Hazelcast.
 */
class LocalClusterRestartPortTest {
    @Test
    void shouldGiveARestartedComputeNodeAFreshHazelcastPortAndKeepTheMemberListsOnes(@TempDir final Path dir)
        throws Exception {
        try (LocalCluster cluster = new LocalCluster("restart-port-" + ProcessHandle.current().pid(), "s3cret-for-a-test-only", 1, 1,
            1, new JsonObject().put("name", "smallbank"), new JsonObject().put("provider", "shm"), "scythe", dir,
            new LocalCluster.Launcher(List.of("sh", "-c", "echo pid $$")))) {
            cluster.start(20_000);
            final int cnPort = port(dir, "cn0");
            final int proxyPort = port(dir, "proxy1");
            final int mnPort = port(dir, "mn0");
            final int tsoPort = port(dir, "tso");
            for (final String n : List.of("cn0", "proxy1", "mn0", "tso")) {
                cluster.node(n).process().waitFor();
                cluster.restart(n, 20_000);
            }
            assertThat(port(dir, "cn0")).isNotEqualTo(cnPort);
            assertThat(port(dir, "proxy1")).isNotEqualTo(proxyPort);
            assertThat(port(dir, "mn0")).isEqualTo(mnPort);
            assertThat(port(dir, "tso")).isEqualTo(tsoPort);
            assertThat(new JsonObject(Files.readString(dir.resolve("node-cn0.json"), StandardCharsets.UTF_8))
                .getJsonArray("members")).containsExactly("127.0.0.1:" + tsoPort, "127.0.0.1:" + mnPort);
        }
    }

    /**
     * A closed cluster starts no node again: chaos's fault loop restarted nodes its shutdown hook had just stopped
     * (SIGTERM), leaving processes behind. Fails before: the restart launched the node.
     */
    @Test
    void shouldRefuseToStartANodeOfAClosedCluster(@TempDir final Path dir) throws Exception {
        final LocalCluster cluster = new LocalCluster("closed-" + ProcessHandle.current().pid(), "s3cret-for-a-test-only", 1, 1, 0,
            new JsonObject().put("name", "smallbank"), new JsonObject().put("provider", "shm"), "scythe", dir,
            new LocalCluster.Launcher(List.of("sh", "-c", "echo pid $$")));
        try {
            cluster.start(20_000);
            cluster.node("cn0").process().waitFor();
        } finally {
            cluster.close();
        }
        final Process before = cluster.node("cn0").process();
        org.assertj.core.api.Assertions.assertThatThrownBy(() -> cluster.restart("cn0", 20_000))
            .isInstanceOf(IllegalStateException.class).hasMessageContaining("is closed");
        assertThat(cluster.node("cn0").process()).isSameAs(before);
    }

    private static int port(final Path dir, final String node) throws Exception {
        return new JsonObject(Files.readString(dir.resolve("node-" + node + ".json"), StandardCharsets.UTF_8))
            .getInteger("hazelcastPort");
    }
}
