package io.scythe.cluster;

import io.vertx.core.json.JsonObject;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.util.List;
import java.util.SplittableRandom;
import java.util.UUID;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A cluster of processes over the tcp fabric with 3 memory nodes runs replicated by default (2 backups per partition,
 * data and redo logs): after transfers every backup is identical to its primary, on another process. Then a memory
 * node is paused (SIGSTOP, shorter than its Hazelcast lease): a transfer that needs it ends within the bound
 * ({@code memoryNodeTimeoutMs}, verbs too: their queue pairs' {@code transportTimeoutMs}) as not committed, never a
 * hang; once
 * it runs again, a compute node that gave up is recovered and restarted, the counters' sum is conserved, no lock is
 * left held, the copies are identical again, and transactions commit. Last, a commit past its point of no return
 * (redo record on every copy) whose write-back finds the node stopped ends "outcome unknown" within the bound, and
 * the record is rolled forward once it runs again: applied exactly once. Last, a memory node is killed and fails over
 * to the backups ({@link #failOver}).
 */
class MemoryNodeReplicationProcessTest {
    // 2 s, not the 800 ms it was: CI 194 (two clusters booting and serving side by side on 2 cores) saw mn2 answer no
    // verb of cn1 within 800 ms during the first 60 moves, before any pause, and cn1 gave a commit up in doubt. The pause
    // below (BOUND_MS + 1.2 s) stays well within the 8 s lease the tests give Hazelcast.
    private static final long BOUND_MS = 2_000;
    private static final int KEYS = 48;
    private static final long FAULT_DELAY_MS = 3_000;
    private static final long FAILOVER_WAIT_MS = 3_000;

    @Test
    void shouldReplicateByDefaultAndEndTransactionsOnAPausedMemoryNodeWithinTheBound(@TempDir final Path dir)
        throws Exception {
        final LocalCluster cluster = new LocalCluster("repl" + UUID.randomUUID().toString().substring(0, 8),
            "a test secret of the cluster", 3, 2, new JsonObject().put("name", "counters").put("keys", KEYS),
            new JsonObject().put("provider", "tcp").put("costModel", new JsonObject().put("profile", "zero")),
            "scythe", dir, LocalCluster.Launcher.sameClasspath(List.of("-Xmx256m", "-XX:+UseSerialGC",
                "-XX:TieredStopAtLevel=1", "-Dscythe.faultPoints=true")));
        ScytheClient client = null;
        try {
            for (final String cn : List.of("cn0", "cn1")) {
                cluster.configure(cn, "memoryNodeTimeoutMs", BOUND_MS);
                // A commit in doubt on mn2 (paused below, never removed: the tests' lease is 8 s) gives up after 3 s,
                // not the 16 s the shipped wait takes here: the scenarios below run no load while mn2 is removed.
                cluster.configure(cn, "memoryNodeFailoverWaitMs", FAILOVER_WAIT_MS);
            }
            // cn0's move from key 8 (mn2) waits FAULT_DELAY_MS after its redo record is durable on every copy.
            cluster.configure("cn0", "faults", new io.vertx.core.json.JsonArray().add(new JsonObject()
                .put("procedure", "move").put("key", 8).put("at", "afterRedo").put("action", "delay")
                .put("ms", FAULT_DELAY_MS)));
            client = ProcessClusters.startAndJoin(cluster, 180_000, 20_000);
            for (final String mn : List.of("mn0", "mn1", "mn2")) {
                assertThat(cluster.node(mn).logText()).contains("replication: 2 backup(s) per partition (3-way) "
                    + "over 3 memory node(s), data and redo logs");
            }
            final SplittableRandom random = new SplittableRandom(7);
            for (int i = 0; i < 60; i++) {
                long from = random.nextInt(KEYS);
                from = from == 8 ? 9 : from; // key 8's fault point is for the in-doubt commit below
                final long to = (from + 1 + random.nextInt(KEYS - 1)) % KEYS;
                final ScytheClient.Outcome o = client.callOn(i % 2 == 0 ? "cn0" : "cn1", "move", from, to,
                    1 + random.nextInt(9)).await(30, TimeUnit.SECONDS);
                assertThat(o).as("move %d", i).isInstanceOf(ScytheClient.Outcome.Committed.class);
            }
            ProcessClusters.assertCopiesIdentical(cluster, 3, KEYS);

            // mn2 (keys 2, 5, 8, ...) stops; keys 2 and 5 were moved above on cn0 and cn1 (addresses cached or not).
            cluster.signal("mn2", "STOP");
            final long start = System.nanoTime();
            final ScytheClient.Outcome paused;
            try {
                paused = client.callOn("cn0", "move", 2, 5, 3).await(30, TimeUnit.SECONDS);
            } finally {
                cluster.signal("mn2", "CONT");
            }
            final long tookMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
            System.out.println("move on the paused memory node ended in " + tookMs + " ms: " + paused);
            assertThat(paused).as("nothing committed on a node that does not answer")
                .isNotInstanceOf(ScytheClient.Outcome.Committed.class);
            assertThat(tookMs).as("ended by the %d ms bound (plus the coordinator's own steps), not never", BOUND_MS)
                .isLessThan(20_000);

            // A CN that gave up (a lock request in doubt) exits; the other recovers its incarnation; it rejoins
            // (restarted beside the checks that need no cn0).
            final ScytheClient live = client;
            final java.util.concurrent.CompletableFuture<Boolean> cn0Back = ProcessClusters.servingOrRestarted(cluster,
                "cn0", () -> committedOn(live, "cn0"), 180_000);
            ProcessClusters.eventually("no lock left held on any memory node", 60_000,
                () -> ProcessClusters.locksHeld(cluster, List.of("mn0", "mn1", "mn2")) == 0);
            long sum = 0;
            for (long k = 0; k < KEYS; k++) {
                sum += valueOn(live, "cn1", k);
            }
            assertThat(sum).as("moves conserve the counters' sum").isZero();
            cn0Back.get(240, TimeUnit.SECONDS);
            ProcessClusters.eventually("cn0 commits again", 60_000, () -> committedOn(live, "cn0"));
            ProcessClusters.assertCopiesIdentical(cluster, 3, KEYS);

            // Past the point of no return: cn0's move 8 -> 11 (both on mn2) has its redo record on every copy, and
            // mn2 stops before the write-back reaches it, for a while past the write-back's BOUND_MS bound but within
            // its lease (Hazelcast's max-no-heartbeat: 8 s in these tests, 3 s shipped) (so mn2 is not failed over: the configuration keeps it). The write-back verb ends by the
            // transport bound; a commit whose failed node is not removed cannot be finished on the other copies, so
            // cn0 gives up and the client hears "outcome unknown" (it may have committed: it did), and cn1 rolls the
            // record forward: applied exactly once. Should Hazelcast take the stop for a failure anyway (a loaded
            // machine) and remove mn2, cn0 finishes the commit on the serving copies and answers committed
            // (CnRecoveryTest covers that path): either way decided, never "nothing committed", and applied once.
            final long before8 = valueOn(live, 8);
            final long before11 = valueOn(live, 11);
            final io.vertx.core.Future<ScytheClient.Outcome> inDoubt = live.callOn("cn0", "move", 8, 11, 5);
            ProcessClusters.eventually("cn0's move reached its fault point after the redo record", 30_000,
                () -> cluster.node("cn0").logText().contains("fault point afterRedo"));
            Thread.sleep(FAULT_DELAY_MS - 300);
            cluster.signal("mn2", "STOP");
            final long stoppedAt = System.nanoTime();
            try {
                Thread.sleep(BOUND_MS + 1_200);
            } finally {
                cluster.signal("mn2", "CONT");
            }
            final ScytheClient.Outcome unknown = inDoubt.await(30, TimeUnit.SECONDS);
            System.out.println("move in doubt ended " + TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - stoppedAt)
                + " ms after mn2 stopped: " + unknown);
            assertThat(unknown).as("decided, then a write-back verb timed out: in doubt (or finished on the copies)")
                .isInstanceOfAny(ScytheClient.Outcome.Unknown.class, ScytheClient.Outcome.Committed.class);
            // cn0 gave up the in-doubt commit: it exits (lease lost) and is restarted beside the checks below (not
            // asked whether it serves: it may answer once more before its lease's loss stops it).
            final boolean gaveUp = unknown instanceof ScytheClient.Outcome.Unknown;
            final java.util.concurrent.CompletableFuture<Boolean> cn0Again = ProcessClusters.servingOrRestarted(
                cluster, "cn0", () -> !gaveUp && committedOn(live, "cn0"), 180_000);
            ProcessClusters.eventually("the in-doubt move rolled forward by recovery", 90_000,
                () -> valueOrNull(live, "cn1", 8) == before8 - 5);
            assertThat(valueOn(live, "cn1", 11)).as("applied once").isEqualTo(before11 + 5);
            ProcessClusters.eventually("no lock left held after the in-doubt commit", 60_000,
                () -> ProcessClusters.locksHeld(cluster, List.of("mn0", "mn1", "mn2")) == 0);
            long total = 0;
            for (long k = 0; k < KEYS; k++) {
                total += valueOn(live, "cn1", k);
            }
            assertThat(total).as("sum conserved after the in-doubt commit").isZero();
            ProcessClusters.assertCopiesIdentical(cluster, 3, KEYS);

            cn0Again.get(240, TimeUnit.SECONDS);
            final long[] values = failOver(cluster, live);
            rejoin(cluster, live, values);
        } finally {
            ProcessClusters.stop(client, cluster);
        }
    }

    /**
     * MN failover: mn2 (partition 2: keys 2, 5, 8, ...) is killed; its member leaves, a CN writes the configuration
     * without it (epoch 1: its partition's backup 1, on mn0, promoted; its backup copies of the others no longer
     * written), and transactions on its partition commit again on the promoted copy, which holds every committed
     * value, and no lock is left held. Prints the detection and failover times. Returns every key's value.
     */
    private static long[] failOver(final LocalCluster cluster, final ScytheClient live) throws Exception {
        // cn0, which gave up the in-doubt commit above, serves again (restarted).
        ProcessClusters.eventually("cn0 commits", 60_000, () -> committedOn(live, "cn0"));
        final long[] before = new long[KEYS];
        for (int k = 0; k < KEYS; k++) {
            before[k] = valueOn(live, k);
        }
        cluster.signal("mn2", "KILL");
        final long killed = System.nanoTime();
        final String applied = "memory-node configuration epoch 1: p0=mn0,mn1 p1=mn1,mn0 p2=mn0,mn1 removed=[mn2] "
            + "applied; partitions with a promoted primary: [2]";
        ProcessClusters.eventually("every CN applied the configuration without mn2", 30_000,
            () -> cluster.node("cn0").logText().contains(applied) && cluster.node("cn1").logText().contains(applied));
        final long detectedMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - killed);
        // The promoted partition serves once the commits in flight at the failover are settled (each CN drained,
        // nobody owed recovery): until then a transaction there aborts ("settling") and is retried.
        final String settled = "memory-node configuration epoch 1 settled";
        ProcessClusters.eventually("every CN settled epoch 1", 30_000,
            () -> cluster.node("cn0").logText().contains(settled) && cluster.node("cn1").logText().contains(settled));
        final long settledMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - killed);
        ProcessClusters.eventually("a move on mn2's partition commits on the promoted copy", 60_000,
            () -> ProcessClusters.committedOn(live, "cn1", 2, 5) && ProcessClusters.committedOn(live, "cn0", 2, 5));
        final long failedOverMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - killed);
        System.out.println("MN failover: mn2 killed; configuration epoch 1 applied on both CNs after " + detectedMs
            + " ms, settled on both after " + settledMs + " ms (polled every 50 ms); a commit on its partition on "
            + "both CNs after " + failedOverMs + " ms");
        for (int k = 0; k < KEYS; k++) {
            assertThat(valueOn(live, k)).as("key %d's committed value, on the serving copy", k).isEqualTo(before[k]);
        }
        // Moves within, into and out of the failed-over partition, and elsewhere, on both CNs.
        final long[][] moves = {{2, 5, 4}, {0, 8, 3}, {11, 1, 7}, {3, 4, 2}};
        for (int i = 0; i < moves.length; i++) {
            final long[] m = moves[i];
            assertThat(live.callOn(i % 2 == 0 ? "cn0" : "cn1", "move", m[0], m[1], m[2]).await(30, TimeUnit.SECONDS))
                .as("move %d -> %d after the failover", m[0], m[1]).isInstanceOf(ScytheClient.Outcome.Committed.class);
            before[(int) m[0]] -= m[2];
            before[(int) m[1]] += m[2];
        }
        // Every key's value after these moves is checked after the rejoin below (on mn2's re-replicated copies).
        ProcessClusters.eventually("no lock left held on the serving memory nodes", 30_000,
            () -> ProcessClusters.locksHeld(cluster, List.of("mn0", "mn1")) == 0);
        return before;
    }

    /**
     * Rejoin (issue 23 section 2): a replacement mn2 process starts (new regions, new rkeys, the initial tables); a CN
     * writes the rejoin epoch, every CN switches mn2's copies to the new tables, the commits of older epochs drain,
     * every key is copied from the serving primaries, then the rejoined epoch. After it every copy equals its primary
     * on another process, and mn0 then mn1 are killed: more than the 2 backups per partition were lost in all, and
     * every partition is served by mn2's re-replicated copies alone, each committed value there, the sum conserved.
     * Prints the time from the replacement's start to rejoined and the keys copied.
     */
    private static void rejoin(final LocalCluster cluster, final ScytheClient live, final long[] values)
        throws Exception {
        final long start = System.nanoTime();
        cluster.restart("mn2", 180_000);
        final long upMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
        ProcessClusters.eventually("mn2 rejoined", 60_000, () -> rejoinedLine(cluster) != null);
        final long rejoinedMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
        System.out.println("MN rejoin: replacement mn2 ready after " + upMs + " ms, rejoined after " + rejoinedMs
            + " ms (polled every 50 ms): " + rejoinedLine(cluster));
        // mn2 logs its full rejoin when it hears the configuration the driving CN published, on its own time: after
        // the CN's line (suitetime6's run at load ~70 read mn2's log first and missed it).
        ProcessClusters.eventually("mn2 logs that it rejoined with full copies", 30_000,
            () -> cluster.node("mn2").logText().contains("rejoined in memory-node configuration epoch"));
        assertThat(cluster.node("mn2").logText()).contains("replaces memory node process pid")
            .contains("rejoined in memory-node configuration epoch");
        final long[][] moves = {{2, 5, 6}, {1, 8, 2}, {11, 0, 9}};
        for (int i = 0; i < moves.length; i++) {
            final long[] m = moves[i];
            assertThat(live.callOn(i % 2 == 0 ? "cn0" : "cn1", "move", m[0], m[1], m[2]).await(30, TimeUnit.SECONDS))
                .as("move %d -> %d after the rejoin", m[0], m[1]).isInstanceOf(ScytheClient.Outcome.Committed.class);
            values[(int) m[0]] -= m[2];
            values[(int) m[1]] += m[2];
        }
        ProcessClusters.assertCopiesIdentical(cluster, 3, KEYS);
        // mn0, then mn1: each failed over and settled on both CNs before the next; mn2's copies are the last.
        for (final String mn : List.of("mn0", "mn1")) {
            cluster.signal(mn, "KILL");
            final long killed = System.nanoTime();
            ProcessClusters.eventually("both CNs settled the configuration without " + mn, 60_000,
                () -> settledWithout(cluster.node("cn0").logText(), mn)
                    && settledWithout(cluster.node("cn1").logText(), mn));
            System.out.println("MN failover after the rejoin: " + mn + " killed, settled on both CNs after "
                + TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - killed) + " ms");
        }
        long sum = 0;
        for (int k = 0; k < KEYS; k++) {
            final long v = valueOn(live, k);
            assertThat(v).as("key %d on mn2's re-replicated copy", k).isEqualTo(values[k]);
            sum += v;
        }
        assertThat(sum).as("sum conserved with only mn2's copies serving").isZero();
        assertThat(live.callOn("cn1", "move", 3, 4, 1).await(30, TimeUnit.SECONDS)).as("a move on mn2 alone")
            .isInstanceOf(ScytheClient.Outcome.Committed.class);
    }

    /** The rejoin's last line on whichever CN drove it, or null. */
    private static String rejoinedLine(final LocalCluster cluster) {
        for (final String cn : List.of("cn0", "cn1")) {
            final String line = cluster.node(cn).logText().lines().filter(l -> l.contains("memory node mn2 rejoined:"))
                .findFirst().orElse(null);
            if (line != null) {
                return line;
            }
        }
        return null;
    }

    /** Whether {@code log} says a configuration removing {@code mn} was applied and then settled. */
    private static boolean settledWithout(final String log, final String mn) {
        final int applied = log.lastIndexOf("removed=[");
        if (applied < 0) {
            return false;
        }
        final String line = log.substring(applied, log.indexOf('\n', applied) < 0 ? log.length()
            : log.indexOf('\n', applied));
        if (!line.contains(mn)) {
            return false;
        }
        final int epochAt = log.lastIndexOf("memory-node configuration epoch ", applied);
        final String epoch = log.substring(epochAt + "memory-node configuration epoch ".length()).split("[ :]")[0];
        return log.indexOf("memory-node configuration epoch " + epoch + " settled", applied) >= 0;
    }

    /** Whether a move of 0 from {@code from} to {@code to} commits on {@code cn} now. */

    /**
     * Key {@code key}'s committed value. A read is asked again when it did not commit: it changes nothing, and the CN
     * it was balanced to may be leaving (cn0 exits once it gave up a request in doubt, which can be after it served
     * again), which ends the read as "unknown" ("its coordinator's member left the cluster"; seen in CI).
     */
    private static long valueOn(final ScytheClient client, final long key) throws Exception {
        return valueOn(client, null, key);
    }

    /**
     * The same, read on compute node {@code cn} ({@code null}: any): cn1 while cn0 is restarted beside the read (the
     * client may balance a read to its new incarnation once it registered, before it is ready).
     */
    private static long valueOn(final ScytheClient client, final String cn, final long key) throws Exception {
        ScytheClient.Outcome o = null;
        for (int attempt = 0; attempt < 10; attempt++) {
            o = (cn == null ? client.call("get", key) : client.callOn(cn, "get", key)).await(30, TimeUnit.SECONDS);
            if (o instanceof ScytheClient.Outcome.Committed) {
                break;
            }
            Thread.sleep(500);
        }
        assertThat(o).as("get %d", key).isInstanceOf(ScytheClient.Outcome.Committed.class);
        return ((ScytheClient.Outcome.Committed) o).reply().result();
    }

    /** Key {@code key}'s value read on {@code cn}, or {@link Long#MIN_VALUE} when the read did not commit now. */
    private static long valueOrNull(final ScytheClient client, final String cn, final long key) {
        try {
            final ScytheClient.Outcome o = client.callOn(cn, "get", key).await(10, TimeUnit.SECONDS);
            return o instanceof ScytheClient.Outcome.Committed c ? c.reply().result() : Long.MIN_VALUE;
        } catch (final Exception e) {
            return Long.MIN_VALUE;
        }
    }

    /** Whether a move of 0 between keys 0 and 1 commits on {@code cn} now. */
    private static boolean committedOn(final ScytheClient client, final String cn) {
        try {
            return client.callOn(cn, "move", 0, 1, 0).await(10, TimeUnit.SECONDS)
                instanceof ScytheClient.Outcome.Committed;
        } catch (final Exception e) {
            return false;
        }
    }
}
