package io.scythe.cluster;

import io.vertx.core.json.JsonObject;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.util.List;
import java.util.SplittableRandom;
import java.util.UUID;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * MN failover in a cluster of processes (tcp fabric, 3 memory nodes, 2 backups per partition): a memory node is
 * killed (SIGKILL); its Hazelcast member leaves, the compute node writes the configuration without it (epoch 1: the
 * backup of its partition on the next node promoted, its backup copies of the others no longer written), and
 * transactions on its partition commit again on the promoted copy, which holds every committed value; the counters'
 * sum is conserved and no lock is left held. Prints the detection and failover times.
 */
class MemoryNodeFailoverProcessTest {
    private static final int KEYS = 24;
    private static final HttpClient HTTP = HttpClient.newHttpClient();

    @Test
    void shouldPromoteABackupOfAKilledMemoryNodeAndCommitOnItWithEveryCommittedValue(@TempDir final Path dir)
        throws Exception {
        final LocalCluster cluster = new LocalCluster("mnfo" + UUID.randomUUID().toString().substring(0, 8),
            "a test secret of the cluster", 3, 1, new JsonObject().put("name", "counters").put("keys", KEYS),
            new JsonObject().put("provider", "tcp").put("costModel", new JsonObject().put("profile", "zero")),
            "scythe", dir, LocalCluster.Launcher.sameClasspath(List.of("-Xmx256m", "-XX:+UseSerialGC",
                "-XX:TieredStopAtLevel=1")));
        ScytheClient client = null;
        try {
            cluster.configure("cn0", "memoryNodeTimeoutMs", 800);
            cluster.start(180_000);
            client = ScytheClient.join(cluster.clientConfig(), 20_000);
            final SplittableRandom random = new SplittableRandom(11);
            for (int i = 0; i < 30; i++) {
                final long from = random.nextInt(KEYS);
                final long to = (from + 1 + random.nextInt(KEYS - 1)) % KEYS;
                assertThat(client.call("move", from, to, 1 + random.nextInt(9)).await(30, TimeUnit.SECONDS))
                    .as("move %d", i).isInstanceOf(ScytheClient.Outcome.Committed.class);
            }
            final long[] before = new long[KEYS];
            for (int k = 0; k < KEYS; k++) {
                before[k] = valueOn(client, k);
            }
            assertThat(java.util.Arrays.stream(before).sum()).isZero();

            // mn2 (partition 2: keys 2, 5, 8, ...) dies; its backup 1 is on mn0.
            cluster.signal("mn2", "KILL");
            final long killed = System.nanoTime();
            ProcessClusters.eventually("cn0 applied the configuration without mn2", 30_000,
                () -> cluster.node("cn0").logText().contains("memory-node configuration epoch 1: p0=mn0,mn1 "
                    + "p1=mn1,mn0 p2=mn0,mn1 removed=[mn2] applied"));
            final long detectedMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - killed);
            final ScytheClient live = client;
            ProcessClusters.eventually("a move on mn2's partition commits on the promoted copy", 60_000,
                () -> committed(live, "move", 2, 5, 0));
            final long failedOverMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - killed);
            System.out.println("MN failover: mn2 killed; configuration epoch 1 applied on cn0 after " + detectedMs
                + " ms (polled every 50 ms); first commit on its partition after " + failedOverMs + " ms");
            assertThat(cluster.node("cn0").logText()).contains("partitions with a promoted primary: [2]");

            for (int k = 0; k < KEYS; k++) {
                assertThat(valueOn(live, k)).as("key %d's committed value, on the serving copy", k)
                    .isEqualTo(before[k]);
            }
            // Moves within, into and out of the failed-over partition, and elsewhere.
            final long[][] moves = {{2, 5, 4}, {0, 8, 3}, {11, 1, 7}, {3, 4, 2}};
            for (final long[] m : moves) {
                assertThat(live.call("move", m[0], m[1], m[2]).await(30, TimeUnit.SECONDS))
                    .as("move %d -> %d after the failover", m[0], m[1])
                    .isInstanceOf(ScytheClient.Outcome.Committed.class);
                before[(int) m[0]] -= m[2];
                before[(int) m[1]] += m[2];
            }
            long sum = 0;
            for (int k = 0; k < KEYS; k++) {
                final long v = valueOn(live, k);
                assertThat(v).as("key %d after the moves", k).isEqualTo(before[k]);
                sum += v;
            }
            assertThat(sum).as("moves conserve the counters' sum").isZero();
            ProcessClusters.eventually("no lock left held on the serving memory nodes", 30_000,
                () -> locksHeld(cluster) == 0);
        } catch (final AssertionError | RuntimeException e) {
            for (final String node : List.of("cn0", "mn0")) {
                final String log = cluster.node(node).logText();
                System.out.println("---- " + node + "'s log (end):\n" + log.substring(Math.max(0, log.length() - 6_000)));
            }
            throw e;
        } finally {
            ProcessClusters.stop(client, cluster);
        }
    }

    private static boolean committed(final ScytheClient client, final String procedure, final long... args) {
        try {
            return client.call(procedure, args).await(10, TimeUnit.SECONDS)
                instanceof ScytheClient.Outcome.Committed;
        } catch (final Exception e) {
            return false;
        }
    }

    private static long valueOn(final ScytheClient client, final long key) throws Exception {
        final ScytheClient.Outcome o = client.call("get", key).await(30, TimeUnit.SECONDS);
        assertThat(o).as("get %d", key).isInstanceOf(ScytheClient.Outcome.Committed.class);
        return ((ScytheClient.Outcome.Committed) o).reply().result();
    }

    private static long locksHeld(final LocalCluster cluster) {
        long held = 0;
        for (final String mn : List.of("mn0", "mn1")) {
            try {
                final JsonObject h = new JsonObject(HTTP.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:"
                    + cluster.node(mn).httpPort() + "/health")).build(), HttpResponse.BodyHandlers.ofString()).body());
                held += h.getLong("locksHeld", 0L) + h.getLong("ticketsOutstanding", 0L);
            } catch (final Exception e) {
                return -1;
            }
        }
        return held;
    }
}
