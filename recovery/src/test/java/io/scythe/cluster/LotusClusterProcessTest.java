package io.scythe.cluster;

import io.vertx.core.json.JsonObject;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Lotus on cluster nodes (1 TSO, 2 MNs, 2 CNs, each its own process, over shm): its record locks live in the compute
 * nodes' lock tables, so a transaction on one CN takes the locks of the keys the other CN owns by a lock RPC over the
 * CNs' peers. Concurrent moves from both CNs end with every counter exactly what the committed moves make it (money
 * conserved, nothing lost), and transactions whose locks are on the other CN commit. Lotus writes backups (one per
 * partition here): each backup is identical to its primary, and once mn1 is killed its partition fails over to the
 * backup on mn0, which holds every committed value, and moves on it commit again ({@link #failOver}).
 */
class LotusClusterProcessTest {
    private static final int KEYS = 64;

    @Test
    void shouldRunLotusOnTwoComputeNodeProcessesWithLockRpcsBetweenThem(@TempDir final Path dir) throws Exception {
        final LocalCluster cluster = new LocalCluster("lotus" + UUID.randomUUID().toString().substring(0, 8),
            "a test secret of the cluster", 2, 2, new JsonObject().put("name", "counters").put("keys", KEYS),
            new JsonObject().put("provider", "shm").put("costModel", new JsonObject().put("profile", "zero")),
            "lotus", dir, LocalCluster.Launcher.sameClasspath(List.of("-Xmx256m", "-XX:+UseSerialGC",
                "-XX:TieredStopAtLevel=1")));
        ScytheClient client = null;
        try {
            client = ProcessClusters.startAndJoin(cluster, 120_000, 20_000);
            assertThat(cluster.node("mn0").logText()).contains("replication: 1 backup(s) per partition (2-way) over 2 "
                + "memory node(s)");
            // One move at a time from cn0: its keys' locks are on cn1 for about half of them.
            final long servedBefore = served(cluster, "cn1");
            final long[] expected = new long[KEYS];
            for (int i = 0; i < 10; i++) {
                final long from = 2L * i;
                final long to = 2L * i + 1;
                assertThat(client.callOn("cn0", "move", from, to, 5).await(30, TimeUnit.SECONDS)).as("move " + i)
                    .isInstanceOf(ScytheClient.Outcome.Committed.class);
                expected[(int) from] -= 5;
                expected[(int) to] += 5;
            }
            assertThat(served(cluster, "cn1")).as("lock RPCs cn1 served for cn0's committed moves")
                .isGreaterThan(servedBefore);

            // Concurrent moves from both CNs over few keys (conflicts, locks taken on both nodes).
            final java.util.Set<String> abortReasons = new java.util.TreeSet<>();
            final int[] committedOn = ProcessClusters.concurrentMoves(client, 7, 200, expected, abortReasons);
            System.out.println("lotus on 2 CN processes: committed " + committedOn[0] + " on cn0, " + committedOn[1]
                + " on cn1 of 100 each; cn0 served " + served(cluster, "cn0") + " peer calls, cn1 " + served(cluster,
                "cn1") + "; aborted: " + abortReasons);
            assertThat(committedOn[0]).as("cn0 commits").isPositive();
            assertThat(committedOn[1]).as("cn1 commits").isPositive();
            final ScytheClient c = client;
            final long sum = ProcessClusters.assertCounters(k -> c.call("get", k), expected, "");
            assertThat(sum).as("money conserved").isZero();
            assertThat(served(cluster, "cn0")).as("cn0 served cn1's lock RPCs").isPositive();
            ProcessClusters.assertCopiesIdentical(cluster, 2, KEYS);
            failOver(cluster, client, expected);
        } finally {
            ProcessClusters.stop(client, cluster);
        }
    }

    /** Peer calls (lock RPCs) compute node {@code cn} served, from its health. */
    private static long served(final LocalCluster cluster, final String cn) throws Exception {
        return new JsonObject(ProcessClusters.get(cluster, cn, "/health")).getJsonObject("peers").getLong("served");
    }

    /**
     * MN failover: mn1 (partition 1: the odd keys) is killed; the CNs apply the configuration without it (its
     * partition's backup on mn0 promoted) and settle it; every committed value is read from the promoted copy, moves
     * into, out of and within it commit on both CNs, the sum is conserved and no CN lock is left held.
     */
    private static void failOver(final LocalCluster cluster, final ScytheClient client, final long[] expected)
        throws Exception {
        cluster.signal("mn1", "KILL");
        final long killed = System.nanoTime();
        for (final String cn : List.of("cn0", "cn1")) {
            ProcessClusters.eventually(cn + " settled the configuration without mn1", 60_000, () -> {
                final String log = cluster.node(cn).logText();
                return log.contains("removed=[mn1] applied") && log.contains("memory-node configuration epoch 1 "
                    + "settled");
            });
        }
        final long settledMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - killed);
        ProcessClusters.eventually("a move within mn1's partition commits on the promoted copy from both CNs", 60_000,
            () -> ProcessClusters.committedOn(client, "cn0", 1, 3) && ProcessClusters.committedOn(client, "cn1", 3, 1));
        System.out.println("lotus MN failover: mn1 killed; configuration without it settled on both CNs after "
            + settledMs + " ms; a commit on its partition from both CNs after "
            + TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - killed) + " ms");
        final long[][] moves = {{1, 2, 4}, {0, 5, 3}, {7, 9, 2}, {4, 6, 1}};
        for (int i = 0; i < moves.length; i++) {
            final long[] m = moves[i];
            final String cn = i % 2 == 0 ? "cn0" : "cn1";
            ScytheClient.Outcome o = null;
            for (int attempt = 0; attempt < 10 && !(o instanceof ScytheClient.Outcome.Committed); attempt++) {
                o = client.callOn(cn, "move", m[0], m[1], m[2]).await(30, TimeUnit.SECONDS);
                assertThat(o).as("move %d -> %d after the failover: never unknown", m[0], m[1])
                    .isInstanceOfAny(ScytheClient.Outcome.Committed.class, ScytheClient.Outcome.Aborted.class);
            }
            assertThat(o).as("move %d -> %d after the failover", m[0], m[1])
                .isInstanceOf(ScytheClient.Outcome.Committed.class);
            expected[(int) m[0]] -= m[2];
            expected[(int) m[1]] += m[2];
        }
        final long sum = ProcessClusters.assertCounters(k -> client.call("get", k), expected, " after the failover");
        assertThat(sum).as("money conserved after the failover").isZero();
        ProcessClusters.eventually("no lock left held on the CNs", 60_000, () -> {
            for (final String cn : List.of("cn0", "cn1")) {
                try {
                    final JsonObject module = new JsonObject(ProcessClusters.get(cluster, cn, "/health"))
                        .getJsonObject("module");
                    if (module == null || module.getLong("locksHeld", 1L) != 0) {
                        return false;
                    }
                } catch (final Exception e) {
                    return false;
                }
            }
            return true;
        });
    }


}
