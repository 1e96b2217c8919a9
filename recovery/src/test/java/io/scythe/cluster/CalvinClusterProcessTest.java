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
 * RCC's CALVIN on cluster nodes with no fault (issue 18; 1 TSO, 2 MNs, 2 CNs, each its own process, over shm): every
 * CN's sequencer sends its batch of each epoch to the other CN over the CN peers (the one-sided form: WRITEs into the
 * other process's registered inbox, found by one RPC), logs it to its input log on a memory node first, and each CN
 * locks and reads the keys it owns (partition mod CNs) in the one total order. Concurrent moves from both CNs end with
 * every counter exactly what the committed moves make it (money conserved, nothing lost, nothing twice), no lock
 * request is left queued, and both CNs received the other's messages. Fails before: cluster nodes refused rcc-calvin.
 */
class CalvinClusterProcessTest {
    private static final int KEYS = 64;

    @Test
    void shouldRunCalvinOnTwoComputeNodeProcessesInOneTotalOrder(@TempDir final Path dir) throws Exception {
        final LocalCluster cluster = new LocalCluster("calvin" + UUID.randomUUID().toString().substring(0, 8),
            "a test secret of the cluster", 2, 2, new JsonObject().put("name", "counters").put("keys", KEYS),
            new JsonObject().put("provider", "shm").put("costModel", new JsonObject().put("profile", "zero")),
            "rcc-calvin", dir, LocalCluster.Launcher.sameClasspath(List.of("-Xmx256m", "-XX:+UseSerialGC",
                "-XX:TieredStopAtLevel=1")));
        ScytheClient client = null;
        try {
            client = ProcessClusters.startAndJoin(cluster, 180_000, 20_000);
            final long[] expected = new long[KEYS];
            final java.util.Set<String> abortReasons = new java.util.TreeSet<>();
            final int[] committedOn = ProcessClusters.concurrentMoves(client, 11, 200, expected, abortReasons);
            final JsonObject cn0 = module(cluster, "cn0");
            final JsonObject cn1 = module(cluster, "cn1");
            System.out.println("rcc-calvin on 2 CN processes: committed " + committedOn[0] + " on cn0, "
                + committedOn[1] + " on cn1 of 100 each; aborted: " + abortReasons + "; cn0 " + cn0 + ", cn1 " + cn1);
            // CALVIN aborts nothing but a procedure's own (and OLLP's restart, which a move never needs).
            assertThat(committedOn).as("committed on cn0 and cn1").containsExactly(100, 100);
            final ScytheClient c = client;
            final long sum = ProcessClusters.assertCounters(k -> c.callOn(k % 2 == 0 ? "cn0" : "cn1", "get", k),
                expected, "");
            assertThat(sum).as("money conserved").isZero();
            for (final JsonObject m : List.of(cn0, cn1)) {
                assertThat(m.getLong("inboxReceived")).as("one-sided messages from the other CN").isPositive();
                assertThat(m.getLong("inputLogRecords")).as("batches logged before their dispatch").isPositive();
            }
            ProcessClusters.eventually("no lock request left queued on the CNs", 10_000, () -> {
                for (final String cn : List.of("cn0", "cn1")) {
                    try {
                        if (module(cluster, cn).getLong("locksQueued", 1L) != 0) {
                            return false;
                        }
                    } catch (final Exception e) {
                        return false;
                    }
                }
                return true;
            });
            final java.util.concurrent.CompletableFuture<Long> restarted = takeOver(cluster, client, expected);
            rejoin(cluster, client, expected, restarted);
            memoryNodeFailover(cluster, client, expected);
        } finally {
            ProcessClusters.stop(client, cluster);
        }
    }

    /**
     * cn1 (the owner of the odd keys) is SIGKILLed while idle and not restarted: once the host recovered it (the death
     * word, {@code onPeerRecovered}), cn0 reads its input log where the memory nodes say it is, completes its epochs
     * from it and takes its partitions over, so moves from cn0 over both owners' keys commit again, every key exact,
     * no lock request left queued in either of cn0's schedulers. Fails before the death word was wired (cn0 gave up).
     * cn1's next incarnation is launched at once, as a supervisor restarts a killed process (issue 23, suitetime3: its
     * JVM boot and Hazelcast join, 25-55 s, overlap this scenario instead of following it): it cannot enter the order
     * before cn0 took its old incarnation over ({@link #rejoin}), so what is checked here holds either way. Returns
     * that restart (its start time in {@link System#nanoTime()}, once ready).
     */
    private static java.util.concurrent.CompletableFuture<Long> takeOver(final LocalCluster cluster,
        final ScytheClient client, final long[] expected) throws Exception {
        cluster.signal("cn1", "KILL");
        final long killed = System.nanoTime();
        assertThat(cluster.node("cn1").process().waitFor(30, TimeUnit.SECONDS)).as("cn1 killed").isTrue();
        final java.util.concurrent.CompletableFuture<Long> restarted = new java.util.concurrent.CompletableFuture<>();
        final Thread restart = new Thread(() -> {
            final long restarting = System.nanoTime();
            try {
                cluster.restart("cn1", 180_000);
                restarted.complete(restarting);
            } catch (final Throwable e) {
                restarted.completeExceptionally(e);
            }
        }, "restart of cn1");
        restart.setDaemon(true);
        restart.start();
        ProcessClusters.eventually("a move over cn1's keys commits on cn0 after cn1's death", 180_000,
            () -> ProcessClusters.committedOn(client, "cn0", 1, 2));
        System.out.println("rcc-calvin: cn1 killed; a move over its keys committed on cn0 "
            + TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - killed) + " ms after; cn0 " + module(cluster, "cn0"));
        assertThat(cluster.node("cn0").logText()).contains("takes over cn1");
        for (int i = 0; i < 20; i++) {
            final long from = i % 16;
            final long to = (i * 7 + 3) % 16 == from ? (from + 1) % 16 : (i * 7 + 3) % 16;
            assertThat(client.callOn("cn0", "move", from, to, 2).await(30, TimeUnit.SECONDS)).as("move " + i
                + " after cn1's death").isInstanceOf(ScytheClient.Outcome.Committed.class);
            expected[(int) from] -= 2;
            expected[(int) to] += 2;
        }
        final long sum = ProcessClusters.assertCounters(k -> client.callOn("cn0", "get", k), expected,
            " after cn1's death");
        assertThat(sum).as("money conserved after cn1's death").isZero();
        final JsonObject cn0 = module(cluster, "cn0");
        assertThat(cn0.getLong("deadNodes")).as("dead nodes cn0 took over").isEqualTo(1L);
        assertThat(cn0.getLong("deadLogRecords")).as("records cn0 read from cn1's input log, found on the memory "
            + "nodes by its incarnation's name").isPositive();
        assertThat(cn0.getLong("locksQueued")).as("lock requests queued on cn0").isZero();
        assertThat(cn0.getLong("takenOverLocksQueued")).as("lock requests queued in cn1's scheduler on cn0").isZero();
        return restarted;
    }

    /**
     * cn1, killed and taken over by cn0 ({@link #takeOver}), is started again (launched there): its new incarnation
     * waits until the host says its old one is recovered, asks cn0 to let it in ({@code JOIN}: cn0 answers its floor
     * once it took the old one over) and enters the total order one epoch above it, owning no partition (its old keys
     * stay with cn0).
     * Moves begun on the restarted cn1 commit again, over both owners' keys (its reads forwarded by cn0, its writes
     * sent there), as do moves on cn0 interleaved with them; every key exact, no lock left. Fails before: a restarted
     * cn1 was refused at start (its epochs would begin at 0).
     */
    private static void rejoin(final LocalCluster cluster, final ScytheClient client, final long[] expected,
        final java.util.concurrent.CompletableFuture<Long> restarted) throws Exception {
        final long restarting = restarted.get(180, TimeUnit.SECONDS);
        ProcessClusters.eventually("cn1's new incarnation rejoins the total order", 180_000, () -> {
            try {
                return !module(cluster, "cn1").getBoolean("joining", true);
            } catch (final Exception e) {
                return false;
            }
        });
        final JsonObject joined = module(cluster, "cn1");
        System.out.println("rcc-calvin: cn1 restarted and rejoined at epoch " + joined.getLong("joinedAt") + " "
            + TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - restarting) + " ms after its restart began; cn1 "
            + joined);
        assertThat(joined.getLong("joinedAt")).as("the epoch cn1's new incarnation entered the order at").isPositive();
        for (int i = 0; i < 20; i++) {
            final String cn = i % 2 == 0 ? "cn1" : "cn0";
            final long from = (i * 5 + 1) % 16;
            final long to = (i * 3 + 2) % 16 == from ? (from + 1) % 16 : (i * 3 + 2) % 16;
            assertThat(client.callOn(cn, "move", from, to, 3).await(30, TimeUnit.SECONDS)).as("move " + i + " on "
                + cn + " after cn1's rejoin").isInstanceOf(ScytheClient.Outcome.Committed.class);
            expected[(int) from] -= 3;
            expected[(int) to] += 3;
        }
        for (final String cn : List.of("cn0", "cn1")) {
            final long sum = ProcessClusters.assertCounters(k -> client.callOn(cn, "get", k), expected,
                " read on " + cn + " after cn1's rejoin");
            assertThat(sum).as("money conserved after cn1's rejoin").isZero();
        }
        awaitNoLockQueued(cluster, "cn1's rejoin", 10_000);
        assertThat(module(cluster, "cn0").getLong("rejoinedHere")).as("restarted nodes cn0 let in").isEqualTo(1L);
    }

    /**
     * Issue 18: mn1 (the primary of the odd keys; 1 backup each, on the other memory node) is SIGKILLed while 30 moves
     * run on both CNs, after the CN take-over and rejoin above. The configuration without it promotes mn0's copies,
     * which serve at once ({@code CalvinModule#clusterPromotedCopiesServeAtOnce}: no drain to wait for); reads that
     * failed on mn1 are read again where the keys serve, write-backs done again there, input-log records durable on
     * mn0 alone. Every move answered committed is applied, each answered "outcome unknown" (the client's 20 s timeout
     * meeting the failover; any number) whole or not at all, money conserved, moves on mn1's keys commit on both CNs,
     * no lock request left queued, and neither CN gave up (a second CN death would end the run for CALVIN). Fails
     * before: cluster nodes refused CALVIN's failover (and kept no backup for it), so mn1's keys were lost. Chained
     * after the take-over and rejoin on one cluster (a failure there hides this scenario's outcome; issue 23 wants the
     * suite's cluster starts few).
     */
    private static void memoryNodeFailover(final LocalCluster cluster, final ScytheClient client,
                                           final long[] expected) throws Exception {
        final long killed = System.nanoTime();
        final List<long[]> moves = new java.util.ArrayList<>();
        final List<io.vertx.core.Future<ScytheClient.Outcome>> outcomes = RccTimestampFailoverProcessTest.movesKilling(
            client, cluster, 3, 30, i -> i % 2 == 0 ? "cn0" : "cn1", 10, moves, "mn1");
        final List<long[]> inDoubt = new java.util.ArrayList<>();
        final int committed = RccTimestampFailoverProcessTest.tally(moves, outcomes, expected, inDoubt);
        ProcessClusters.eventually("a move over mn1's keys commits on both CNs after mn1's death", 120_000,
            () -> ProcessClusters.committedOn(client, "cn0", 1, 3) && ProcessClusters.committedOn(client, "cn1", 5, 7));
        System.out.println("rcc-calvin: mn1 killed under load; " + committed + " of 30 moves across it committed, "
            + inDoubt.size() + " in doubt; moves on mn1's keys commit on both CNs "
            + TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - killed) + " ms after the kill; cn0 "
            + module(cluster, "cn0") + ", cn1 " + module(cluster, "cn1"));
        for (final String cn : List.of("cn0", "cn1")) {
            assertThat(cluster.node(cn).process().isAlive()).as(cn + " still serves (gave nothing up)").isTrue();
            assertThat(cluster.node(cn).logText()).as(cn + " applied a configuration without mn1")
                .containsPattern("memory-node configuration .* applied; partitions with a promoted primary: \\[1]");
        }
        // No bound on how many are in doubt (the client's 20 s timeout meets the failover more often under load, with
        // nothing wrong): the subset below proves each one applied whole or not at all (Gray code, 2^30 steps at most).
        final long[] values = new long[KEYS];
        long sum = 0;
        for (int k = 0; k < KEYS; k++) {
            final ScytheClient.Outcome o = client.callOn(k % 2 == 0 ? "cn0" : "cn1", "get", k).await(30,
                TimeUnit.SECONDS);
            assertThat(o).as("get %d after mn1's death", k).isInstanceOf(ScytheClient.Outcome.Committed.class);
            values[k] = ((ScytheClient.Outcome.Committed) o).reply().result();
            sum += values[k];
        }
        assertThat(sum).as("money conserved after mn1's death").isZero();
        assertThat(RccTimestampFailoverProcessTest.appliedSubset(expected, inDoubt, values)).as("a subset of the %d "
            + "moves in doubt on top of the %d committed gives every key's value %s (expected from the committed: %s)",
            inDoubt.size(), committed, java.util.Arrays.toString(values), java.util.Arrays.toString(expected))
            .isGreaterThanOrEqualTo(0);
        awaitNoLockQueued(cluster, "mn1's death", 30_000);
    }

    /** What compute node {@code cn}'s health shows of its CALVIN node. */
    private static JsonObject module(final LocalCluster cluster, final String cn) throws Exception {
        final JsonObject module = new JsonObject(ProcessClusters.get(cluster, cn, "/health")).getJsonObject("module");
        assertThat(module).as(cn + "'s health shows its CALVIN node").isNotNull();
        return module;
    }

    /** Waits until neither CN has a lock request queued (cn0 also none taken over from a dead owner). */
    private static void awaitNoLockQueued(final LocalCluster cluster, final String after, final long withinMs)
        throws InterruptedException {
        ProcessClusters.eventually("no lock request left queued after " + after, withinMs, () -> {
            try {
                final JsonObject cn0 = module(cluster, "cn0");
                return cn0.getLong("locksQueued") == 0 && cn0.getLong("takenOverLocksQueued") == 0
                    && module(cluster, "cn1").getLong("locksQueued") == 0;
            } catch (final Exception e) {
                return false;
            }
        });
    }
}
