package io.scythe.cluster;

import io.scythe.config.ConfigFiles;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonObject;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The topology of docker/compose.yaml (1 TSO, 2 MNs, 3 CNs over the tcp fabric) as local processes, and the compose
 * file's node config checked as every container reads it.
 */
class TcpClusterProcessTest {
    @Test
    void shouldRunTheComposeTopologyOverTheTcpFabric(@TempDir final Path dir) throws Exception {
        final LocalCluster cluster = new LocalCluster("tcp" + UUID.randomUUID().toString().substring(0, 8),
            "a test secret of the cluster", 2, 3, new JsonObject().put("name", "counters").put("keys", 64),
            new JsonObject().put("provider", "tcp").put("costModel", new JsonObject().put("profile", "zero")),
            "scythe", dir, LocalCluster.Launcher.sameClasspath(List.of("-Xmx256m", "-XX:+UseSerialGC",
                "-XX:TieredStopAtLevel=1")));
        try {
            try (ScytheClient client = ProcessClusters.startAndJoin(cluster, 180_000, 20_000)) {
                // Keys 0..5 live on both memory nodes (partitioned by key); every CN adds to each.
                final List<String> cns = List.of("cn0", "cn1", "cn2");
                for (final String cn : cns) {
                    for (long k = 0; k < 6; k++) {
                        final ScytheClient.Outcome o = client.callOn(cn, "add", k, k + 1).await(30, TimeUnit.SECONDS);
                        assertThat(o).as(cn + " key " + k).isInstanceOf(ScytheClient.Outcome.Committed.class);
                    }
                }
                final List<Long> values = new ArrayList<>();
                for (long k = 0; k < 6; k++) {
                    final ScytheClient.Outcome o = client.call("get", k).await(30, TimeUnit.SECONDS);
                    values.add(((ScytheClient.Outcome.Committed) o).reply().result());
                }
                assertThat(values).containsExactly(3L, 6L, 9L, 12L, 15L, 18L);
            }
        } finally {
            cluster.close();
            for (final LocalCluster.Node n : cluster.nodes().values()) {
                assertThat(n.process() == null || !n.process().isAlive()).as(n.name()).isTrue();
            }
        }
    }

    @Test
    void shouldAcceptTheComposeFilesNodeConfig() throws Exception {
        final Vertx vertx = Vertx.vertx();
        try {
            final JsonObject json = ConfigFiles.read(vertx, Path.of("../docker/conf/cluster.yaml"))
                .await(30, TimeUnit.SECONDS);
            // What each container's environment adds; the key store is mounted in the container only.
            json.put("node", "cn2").put("host", "172.28.0.23").put("secret", "from SCYTHE_SECRET, 16+ chars");
            assertThat(json.getString("eventBusKeyStore")).isEqualTo("/opt/scythe/conf/eventbus.p12");
            json.remove("eventBusKeyStore");
            final NodeConfig config = NodeConfig.of(json);
            assertThat(config.fabricOptions().provider()).isEqualTo("tcp");
            assertThat(config.fabricOptions().addresses()).containsKeys("tso", "proxy1", "mn0", "mn1", "cn0", "cn1",
                "cn2");
            assertThat(config.tsoProxies()).containsExactly("proxy1");
            assertThat(config.memoryNodes()).containsExactly("mn0", "mn1");
            assertThat(config.stateDir()).as("the TSO's checkpoint, on a volume").isEqualTo("/var/lib/scythe");
            assertThat(config.members()).hasSize(3);
            // smallbank: registered by the scythe command the image runs (cli's ClusterWorkloads).
            assertThat(config.workload().getString("name")).isEqualTo("smallbank");
        } finally {
            vertx.close().await(10, TimeUnit.SECONDS);
        }
    }
}
