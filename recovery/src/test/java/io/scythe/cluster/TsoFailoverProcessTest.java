package io.scythe.cluster;

import io.vertx.core.json.JsonObject;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The TSO in cluster mode, as processes: a CN's groups fetch from the service's counter and through a TSO proxy; the
 * proxy is killed and transactions go on; the service is killed and restarted, and every timestamp handed out after
 * is larger than every one handed out before. Every process is stopped and the shm files removed, even on failure.
 */
class TsoFailoverProcessTest {
    @TempDir
    static Path dir;
    static LocalCluster cluster;
    static ScytheClient client;

    @BeforeAll
    static void startCluster() throws Exception {
        cluster = ProcessClusters.counters("f", 1, 1, 1, dir);
        client = ProcessClusters.startAndJoin(cluster, 120_000, 10_000);
    }

    @AfterAll
    static void stopCluster() throws Exception {
        ProcessClusters.stop(client, cluster);
    }

    private static JsonObject health(final String node) throws Exception {
        return new JsonObject(ProcessClusters.get(cluster, node, "/health"));
    }

    private static long occurrences(final String text, final String line) {
        return text.lines().filter(l -> l.contains(line)).count();
    }

    /** Waits until the memory node holds no lock (every committed transaction written back and unlocked). */
    private static void awaitNoLockHeld() throws Exception {
        final long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (health("mn0").getLong("locksHeld") != 0 && System.nanoTime() < deadline) {
            Thread.sleep(50);
        }
        assertThat(health("mn0").getLong("locksHeld")).isZero();
    }

    /** Commits {@code n} increments of key {@code key}; returns the largest commit timestamp. */
    private static long commit(final int n, final long key) throws Exception {
        long largest = 0;
        for (int i = 0; i < n; i++) {
            final ScytheClient.Outcome o = client.call("add", key, 1).await(30, TimeUnit.SECONDS);
            assertThat(o).as("increment %d", i).isInstanceOf(ScytheClient.Outcome.Committed.class);
            largest = Math.max(largest, ((ScytheClient.Outcome.Committed) o).reply().commitTs());
        }
        return largest;
    }

    @Test
    void shouldSurviveTheLossOfAProxyAndRestartTheServiceAboveEveryTimestampHandedOut() throws Exception {
        // Groups pick the counter or the proxy at random; a proxy whose first fetch failed (its connection still
        // opening on a loaded machine) sits out SKIP_AFTER_FAILURE groups, so commit until it served or that passed.
        long firstTs = commit(40, 1);
        long keyOneIncrements = 40;
        for (int round = 0; round < 4 && health("proxy1").getLong("tsoServed") == 0; round++) {
            firstTs = Math.max(firstTs, commit(io.scythe.tso.TsoGroup.SKIP_AFTER_FAILURE, 1));
            keyOneIncrements += io.scythe.tso.TsoGroup.SKIP_AFTER_FAILURE;
        }
        assertThat(health("proxy1").getLong("tsoServed")).as("groups fetch through the proxy too").isPositive();
        assertThat(health("cn0").getLong("tsoHighWater")).isGreaterThanOrEqualTo(firstTs);

        final long failoversBefore = health("cn0").getLong("tsoFailovers");
        cluster.signal("proxy1", "KILL");
        assertThat(cluster.node("proxy1").process().waitFor(10, TimeUnit.SECONDS)).isTrue();
        final long afterProxyTs = commit(40, 2);
        assertThat(afterProxyTs).isGreaterThan(firstTs);
        assertThat(health("cn0").getLong("tsoFailovers")).as("a group that chose the dead proxy went elsewhere")
            .isGreaterThan(failoversBefore);

        // Back: the groups try it again after sitting out, on a new connection, and it serves again.
        cluster.restart("proxy1", 120_000);
        final long afterProxyBackTs = commit(3 * io.scythe.tso.TsoGroup.SKIP_AFTER_FAILURE, 4);
        assertThat(afterProxyBackTs).isGreaterThan(afterProxyTs);
        assertThat(health("proxy1").getLong("tsoServed")).as("the restarted proxy serves the CN again").isPositive();

        final long counterBefore = health("tso").getLong("tsoCounter");
        cluster.signal("tso", "KILL");
        assertThat(cluster.node("tso").process().waitFor(10, TimeUnit.SECONDS)).isTrue();
        final long handedOut = health("cn0").getLong("tsoHighWater");
        assertThat(handedOut).isGreaterThanOrEqualTo(afterProxyTs);
        // A CN that starts while the service is down registers, then waits for the service; the restarting service
        // asks it too and must get an answer (0: it handed nothing out yet), or neither would ever start. cn0 is idle
        // (no lock held), so its restart loses nothing that only a recovery could bring back.
        awaitNoLockHeld();
        final String asking = "asking TSO node tso where its counter is";
        final long askedBefore = occurrences(cluster.node("cn0").logText(), asking);
        cluster.signal("cn0", "KILL");
        assertThat(cluster.node("cn0").process().waitFor(10, TimeUnit.SECONDS)).isTrue();
        final java.util.concurrent.CompletableFuture<Void> cnBack = java.util.concurrent.CompletableFuture.runAsync(
            () -> {
                try {
                    cluster.restart("cn0", 120_000);
                } catch (final Exception e) {
                    throw new java.util.concurrent.CompletionException(e);
                }
            });
        final long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(90);
        while (occurrences(cluster.node("cn0").logText(), asking) == askedBefore && System.nanoTime() < deadline) {
            assertThat(cnBack).as("cn0 restarting").isNotDone();
            Thread.sleep(100);
        }
        cluster.restart("tso", 120_000);
        cnBack.get(120, TimeUnit.SECONDS);
        final String started = cluster.node("tso").logText().lines().filter(l -> l.contains("high water asked of"))
            .reduce((first, last) -> last).orElseThrow();
        assertThat(started).as("the restarted service asked the waiting CN too").contains("cn0");
        // The proxy is asked while the registry shows it as a live member. On a saturated machine it can miss its
        // heartbeats, split off and merge back (a new member id, registered again) just as the service reads the
        // registry; it is then skipped as gone, and the service's checkpoint (above all the old counter handed out)
        // covers it. Seen once in CI at load 20.
        if (!cluster.node("proxy1").logText().contains("after merging back into the cluster")) {
            assertThat(started).as("the restarted service asked the live proxy").contains("proxy1");
        }
        final JsonObject tso = health("tso");
        assertThat(tso.getLong("tsoStartedAt")).as("above what the live CN reported and the checkpoint")
            .isGreaterThan(handedOut).isGreaterThan(counterBefore);
        final long afterRestartTs = commit(40, 3);
        assertThat(afterRestartTs).isGreaterThanOrEqualTo(tso.getLong("tsoStartedAt"));
        assertThat(cluster.node("tso").logText()).contains("TSO service started at timestamp");
        // Every increment is in the data, once.
        for (final long key : new long[] {1, 2, 3, 4}) {
            final ScytheClient.Outcome o = client.call("get", key).await(30, TimeUnit.SECONDS);
            assertThat(((ScytheClient.Outcome.Committed) o).reply().result()).as("key %d", key)
                .isEqualTo(key == 4 ? 3 * io.scythe.tso.TsoGroup.SKIP_AFTER_FAILURE : key == 1 ? keyOneIncrements : 40);
        }
    }
}
