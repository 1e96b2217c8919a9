package io.scythe.cluster;

import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A compute node that boots while a memory node it asks for its tables is gone, and a configuration removes that
 * node meanwhile, takes the placement the node published and serves (CI run 95: an MN starved at load 8 split off the
 * cluster and was failed over while a CN restarted; the CN asked the MN's event-bus address for 120 s and exited). All
 * nodes in this JVM over the local fabric: mn1 publishes its tables and leaves before the CN starts; mn1's address then
 * refuses every ask, and the configuration removing mn1 is written only once the CN asked twice: it lands mid-wait.
 */
class CnBootMemoryNodeRemovedTest {
    @Test
    void shouldTakeThePublishedPlacementOfAMemoryNodeRemovedWhileTheComputeNodeAsksIt(@TempDir final Path dir)
        throws Exception {
        final List<Integer> ports = List.of(LocalCluster.freePort(), LocalCluster.freePort(), LocalCluster.freePort(),
            LocalCluster.freePort());
        final JsonArray members = new JsonArray();
        // the seeds only (TSO, memory nodes): a compute node listed in members is refused (NodeConfig#checkSeedRole)
        ports.subList(0, 3).forEach(p -> members.add("127.0.0.1:" + p));
        final String cluster = "cnboot" + ProcessHandle.current().pid();
        final List<ScytheNode> nodes = new ArrayList<>();
        CompletableFuture<ScytheNode> cn = null;
        try {
            nodes.add(ScytheNode.start(config(cluster, "tso", ports.get(0), members, dir), NodeRole.TSO, () -> { }));
            final ScytheNode mn0 = ScytheNode.start(config(cluster, "mn0", ports.get(1), members, dir), NodeRole.MN,
                () -> { });
            nodes.add(mn0);
            final ScytheNode mn1 = ScytheNode.start(config(cluster, "mn1", ports.get(2), members, dir), NodeRole.MN,
                () -> { });
            try {
                assertThat(MemoryNodeFailover.publishedTables(mn0.hazelcast(), "mn1")).as("mn1 published its tables")
                    .isNotEmpty();
            } finally {
                mn1.close();
            }
            ProcessClusters.eventually("mn1's member left", 30_000,
                () -> mn0.hazelcast().getCluster().getMembers().size() == 2);
            // mn1's address answers with a failure, counting the asks: the removal below is written only once the CN
            // has asked (and been refused) twice, so it lands while the CN waits, never before its boot looked.
            final AtomicInteger asked = new AtomicInteger();
            mn0.vertx().eventBus().consumer(io.scythe.node.TableDirectory.address("mn1"), m -> {
                asked.incrementAndGet();
                m.fail(1, "mn1 is gone");
            }).completion().await(10, TimeUnit.SECONDS);
            final CompletableFuture<ScytheNode> booting = new CompletableFuture<>();
            cn = booting;
            // Its own thread: the CN's start blocks (the common pool may be Hazelcast's, one thread on 2 cores).
            final Thread boot = new Thread(() -> {
                try {
                    booting.complete(ScytheNode.start(config(cluster, "cn0", ports.get(3), members, dir),
                        NodeRole.CN, () -> { }));
                } catch (final Throwable e) {
                    booting.completeExceptionally(e);
                }
            }, "cn0-boot");
            boot.setDaemon(true);
            boot.start();
            ProcessClusters.eventually("the CN asked mn1 twice", 60_000, () -> asked.get() >= 2);
            assertThat(cn).as("the CN cannot be ready while mn1 is neither there nor removed").isNotDone();
            new MemoryNodeFailover(mn0.hazelcast(), List.of("mn0", "mn1"), 1).remove("mn1");
            final ScytheNode ready = cn.get(60, TimeUnit.SECONDS);
            assertThat(ready.role()).isEqualTo(NodeRole.CN);
            assertThat(new MemoryNodeFailover(mn0.hazelcast(), List.of("mn0", "mn1"), 1).current().epoch())
                .as("the configuration without mn1").isEqualTo(1);
            // Issue 23 section 3, on this cluster: another incarnation's claim on cn0's epoch wins (what a merge after
            // a split that handed the epoch out twice delivers): the started CN loses its lease at once, loudly.
            assertThat(ready.leaseLost()).isFalse();
            mn0.hazelcast().<String, Long>getMap(ScytheNode.EPOCHS).put(EpochClaims.epochKey("cn0", ready.epoch()),
                Long.MAX_VALUE);
            ProcessClusters.eventually("cn0 lost its lease to the other claim", 60_000, ready::leaseLost);
        } finally {
            if (cn != null && cn.isDone() && !cn.isCompletedExceptionally()) {
                nodes.add(cn.join());
            } else if (cn != null) { // still booting (the test failed): closed whenever its boot ends
                cn.thenAccept(CnBootMemoryNodeRemovedTest::closeQuietly);
            }
            for (int i = nodes.size() - 1; i >= 0; i--) {
                nodes.get(i).close();
            }
        }
    }

    private static void closeQuietly(final ScytheNode node) {
        try {
            node.close();
        } catch (final Exception e) {
            System.err.println("closing " + node.config().node() + ": " + e);
        }
    }

    private static NodeConfig config(final String cluster, final String node, final int port, final JsonArray members,
        final Path dir) {
        return NodeConfig.of(new JsonObject().put("cluster", cluster).put("secret", "cn-boot-secret-0123456789")
            .put("node", node).put("hazelcastPort", port).put("members", members).put("httpPort", 0)
            .put("memoryNodes", new JsonArray(List.of("mn0", "mn1"))).put("replicas", 1)
            .put("fabric", new JsonObject().put("provider", "local")).put("stateDir", dir.toString())
            .put("readyTimeoutMs", 60_000L).put("workload", new JsonObject().put("name", "counters").put("keys", 8)));
    }
}
