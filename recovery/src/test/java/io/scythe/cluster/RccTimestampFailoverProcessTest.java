package io.scythe.cluster;

import io.vertx.core.Future;
import io.vertx.core.json.JsonObject;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Issue 18 on cluster nodes: RCC's MVCC and SUNDIAL fail a memory node over. Three memory nodes (2 backups each), two
 * compute nodes; mn2 is killed while moves run on both. The configuration without it promotes p2's backup on mn0; each
 * CN drains it with its loops' largest clock, mn0 floors the promoted copy's rts above the largest (RccModule's
 * promotedSettling) and only then do the CNs serve it. Checked: the floor mn0 applied is exactly the largest clock the
 * CNs drained with (for MVCC a positive one: they had run; SUNDIAL's clock only observes its logical timestamps, whose
 * ticks stay 0 in so short a run, and its floor is then 2 ticks, above every such timestamp), every move answered committed is applied, each answered "outcome
 * unknown" (its write-back failed on mn2 before a configuration removed it: its CN gives up, exits and is recovered,
 * then restarted here) whole or not at all, no other (each key's value), the counters' sum is conserved, and moves on
 * the promoted partition commit on both CNs.
 */
class RccTimestampFailoverProcessTest {
    private static final int KEYS = 48;
    /** Issue 18's review W3: how often a commit is refused above its node's published bound (printed). */
    private static final String BEYOND_BOUND = io.scythe.txn.rcc.RccClock.BEYOND_BOUND.label();
    private static final Pattern DRAINED = Pattern.compile("drained memory-node configuration epoch (\\d+) with clock "
        + "(\\d+)");
    private static final Pattern FLOORED = Pattern.compile("settled promoted copies \\[[^]]*] of configuration epoch 1 \\d+ "
        + "ms after their promotion: promotedSettling above clock (\\d+)");
    private static final Pattern DOWN_FLOORED = Pattern.compile("settled promoted copies \\[[^]]*] of configuration "
        + "epoch 1 \\d+ ms after their promotion: promotedSettling above clock (\\d+) .*compute nodes \\[cn1] down, "
        + "their published clock bound (\\d+)");

    @ParameterizedTest
    @org.junit.jupiter.params.provider.MethodSource("mnKilledProtocols")
    void shouldFloorThePromotedCopyAboveEveryComputeNodesClockAndLoseNoCommit(final String protocol,
                                                                          @TempDir final Path dir) throws Exception {
        final LocalCluster cluster = cluster(protocol, dir);
        ScytheClient client = null;
        try {
            client = ProcessClusters.startAndJoin(cluster, 300_000, 30_000);
            final long[] expected = new long[KEYS];
            final java.util.Set<String> reasons = new java.util.TreeSet<>();
            final int[] before = ProcessClusters.concurrentMoves(client, 1, 40, expected, reasons);
            assertThat(before[0] + before[1]).as("moves commit before the failover (aborts: %s)", reasons)
                .isPositive();

            // Moves in flight on both CNs when mn2 (p2: keys 2, 5, 8, ...) is killed.
            final List<long[]> moves = new ArrayList<>();
            final List<Future<ScytheClient.Outcome>> outcomes = movesKilling(client, cluster, 2, 60,
                i -> i % 2 == 0 ? "cn0" : "cn1", 20, moves, "mn2");
            final List<long[]> inDoubt = new ArrayList<>();
            final int committed = tally(moves, outcomes, expected, inDoubt);
            assertThat(inDoubt.size()).as("moves in doubt").isLessThan(8);
            // A CN that gave a commit up exits (its incarnation recovered by the other): started again, both CNs
            // watched at once (when both exited, their restarts overlap).
            final ScytheClient live = client;
            final List<java.util.concurrent.CompletableFuture<Boolean>> back = new ArrayList<>();
            for (final String cn : List.of("cn0", "cn1")) {
                back.add(ProcessClusters.servingOrRestarted(cluster, cn,
                    () -> ProcessClusters.committedOn(live, cn, 0, 1), 300_000));
            }
            final boolean[] restarted = new boolean[2];
            for (int n = 0; n < 2; n++) {
                restarted[n] = back.get(n).get(400, TimeUnit.SECONDS);
            }
            final String settled = "memory-node configuration epoch 1 settled";
            ProcessClusters.eventually("every CN settled epoch 1", 60_000, () -> cluster.node("cn0").logText()
                .contains(settled) && cluster.node("cn1").logText().contains(settled));
            ProcessClusters.eventually("a move on mn2's partition commits on both CNs", 60_000,
                () -> ProcessClusters.committedOn(live, "cn0", 2, 5) && ProcessClusters.committedOn(live, "cn1", 5, 8));

            // The floor: mn0 (p2's backup 1, promoted) floored above exactly the largest clock the CNs drained with.
            long drainedClock = 0;
            for (final String cn : List.of("cn0", "cn1")) {
                final Matcher m = DRAINED.matcher(cluster.node(cn).logText());
                boolean found = false;
                while (m.find()) {
                    if (Long.parseLong(m.group(1)) >= 1) {
                        found = true;
                        drainedClock = Math.max(drainedClock, Long.parseLong(m.group(2)));
                    }
                }
                assertThat(found).as("%s drained epoch 1 with its clock", cn).isTrue();
            }
            final Matcher floored = FLOORED.matcher(cluster.node("mn0").logText());
            assertThat(floored.find()).as("mn0 settled its promoted copy: %s", cluster.node("mn0").logText()).isTrue();
            final long flooredAbove = Long.parseLong(floored.group(1));
            if (protocol.equals("rcc-mvcc")) { // SUNDIAL's clock only observes its logical wts and rts: 0 ticks here
                assertThat(flooredAbove).as("the clock mn0 floored above").isPositive();
            }
            if (!restarted[0] && !restarted[1]) {
                assertThat(flooredAbove).as("the largest the CNs drained with").isEqualTo(drainedClock);
            } else { // a restarted CN's log is its new process's: the dead one's drain may have been larger
                assertThat(flooredAbove).as("at least the largest the CNs' logs show").isGreaterThanOrEqualTo(drainedClock);
            }
            assertThat(cluster.node("mn1").logText()).as("mn1 promoted nothing").doesNotContain("settled promoted");

            assertMovesApplied(live, expected, inDoubt, committed);
            System.out.println(protocol + ": mn2 killed under load, " + committed + " of 60 moves across it committed, "
                + inDoubt.size() + " in doubt, CNs restarted " + java.util.Arrays.toString(restarted) + "; the "
                + "promoted copy floored above clock " + flooredAbove + "; attempts aborted clock-beyond-bound: cn0 "
                + ProcessClusters.aborts(cluster, "cn0", BEYOND_BOUND) + ", cn1 "
                + ProcessClusters.aborts(cluster, "cn1", BEYOND_BOUND));
        } finally {
            ProcessClusters.stop(client, cluster);
        }
    }

    /**
     * Issue 18: a compute node (cn1) killed right before the memory node (mn2), under load, and not restarted. The
     * settling of mn2's promoted partition does not wait for cn1 to come back: mn0 floors above the clock bound cn1
     * published (MVCC: 5 s ahead of its clock; SUNDIAL: its logical commit timestamps' bound) once cn0 recovered cn1's
     * incarnation; a move on that partition then commits on cn0. Every move answered committed is applied, each one in
     * doubt (cn1's in flight, or a write-back failed on mn2) whole or not at all, and no lock is left on mn0 or mn1.
     */
    @ParameterizedTest
    @org.junit.jupiter.params.provider.MethodSource("cnBesideMnProtocols")
    void shouldSettleWithoutWaitingForAComputeNodeKilledBesideTheMemoryNode(final String protocol,
                                                                        @TempDir final Path dir) throws Exception {
        final LocalCluster cluster = cluster(protocol, dir);
        ScytheClient client = null;
        try {
            client = ProcessClusters.startAndJoin(cluster, 300_000, 30_000);
            final long[] expected = new long[KEYS];
            final java.util.Set<String> reasons = new java.util.TreeSet<>();
            final int[] before = ProcessClusters.concurrentMoves(client, 1, 20, expected, reasons);
            assertThat(before[1]).as("moves commit on cn1 before it dies (aborts: %s)", reasons).isPositive();

            // cn1 takes half of the first 14 (in flight as it dies), cn0 the rest.
            final List<long[]> moves = new ArrayList<>();
            final List<Future<ScytheClient.Outcome>> outcomes = movesKilling(client, cluster, 3, 30,
                i -> i < 14 && i % 2 == 1 ? "cn1" : "cn0", 13, moves, "cn1", "mn2");
            final List<long[]> inDoubt = new ArrayList<>();
            // In doubt: cn1's in flight, and under load cn0's too when it gives a commit up (a write-back in doubt on
            // mn2) and exits: any number, checked below.
            final int committed = tally(moves, outcomes, expected, inDoubt);
            final ScytheClient live = client;
            // cn0 exits if it gave a commit up (recovered by nobody live but itself once back): started again.
            ProcessClusters.servingOrRestarted(cluster, "cn0", () -> ProcessClusters.committedOn(live, "cn0", 0, 1),
                300_000).get(400, TimeUnit.SECONDS);
            final long startNs = System.nanoTime();
            ProcessClusters.eventually("cn0 settled epoch 1 with cn1 down", 60_000, () -> cluster.node("cn0")
                .logText().contains("memory-node configuration epoch 1 settled"));
            ProcessClusters.eventually("a move on mn2's partition commits on cn0", 30_000,
                () -> ProcessClusters.committedOn(live, "cn0", 2, 5));
            final long settledMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - startNs);
            final Matcher floored = DOWN_FLOORED.matcher(cluster.node("mn0").logText());
            assertThat(floored.find()).as("mn0 floored above cn1's bound: %s", cluster.node("mn0").logText()).isTrue();
            final long flooredAbove = Long.parseLong(floored.group(1));
            final long cn1Bound = Long.parseLong(floored.group(2));
            assertThat(cn1Bound).as("cn1 published a bound").isPositive();
            assertThat(flooredAbove).as("the clock mn0 floored above").isGreaterThanOrEqualTo(cn1Bound);

            assertMovesApplied(live, expected, inDoubt, committed);
            ProcessClusters.eventually("no lock left on mn0 and mn1", 30_000,
                () -> ProcessClusters.locksHeld(cluster, List.of("mn0", "mn1")) == 0);
            System.out.println(protocol + ": cn1 and mn2 killed under load, " + committed + " of 30 moves committed, "
                + inDoubt.size() + " in doubt; settled " + settledMs + " ms after cn0 served again, floored above clock "
                + flooredAbove + " (cn1's published bound " + cn1Bound + "); attempts aborted clock-beyond-bound on cn0: "
                + ProcessClusters.aborts(cluster, "cn0", BEYOND_BOUND));
        } finally {
            ProcessClusters.stop(client, cluster);
        }
    }

    /**
     * The protocols {@link #shouldSettleWithoutWaitingForAComputeNodeKilledBesideTheMemoryNode} runs: SUNDIAL only in
     * the suite (its logical bound is the path MVCC's clock bound does not take, and the settling and recovery duty
     * they share are the same), more by hand with {@code -Dscythe.test.cnBesideMn=rcc-mvcc,rcc-sundial}. It was
     * disabled for the suite's time (issue 23: each case's own cluster start took about 200 of its 216-250 s on the
     * 2-core box); it now replaces SUNDIAL's case of {@link #mnKilledProtocols}, so the class still starts two clusters.
     */
    static List<String> cnBesideMnProtocols() {
        return List.of(System.getProperty("scythe.test.cnBesideMn", "rcc-sundial").split(","));
    }

    /**
     * The protocols {@link #shouldFloorThePromotedCopyAboveEveryComputeNodesClockAndLoseNoCommit} runs: MVCC only in
     * the suite (SUNDIAL's settling is checked with a compute node down beside the memory node,
     * {@link #cnBesideMnProtocols}; both paths share the drains and the floor), more by hand with
     * {@code -Dscythe.test.mnKilled=rcc-mvcc,rcc-sundial}.
     */
    static List<String> mnKilledProtocols() {
        return List.of(System.getProperty("scythe.test.mnKilled", "rcc-mvcc").split(","));
    }

    /** Three memory nodes (2 backups each), two compute nodes, {@code protocol}, the counters workload. */
    private static LocalCluster cluster(final String protocol, final Path dir) throws Exception {
        return new LocalCluster("rccfo" + UUID.randomUUID().toString().substring(0, 8),
            "a test secret of the cluster", 3, 2, new JsonObject().put("name", "counters").put("keys", KEYS),
            new JsonObject().put("provider", "tcp").put("costModel", new JsonObject().put("profile", "zero")),
            protocol, dir, LocalCluster.Launcher.sameClasspath(List.of("-Xmx256m", "-XX:+UseSerialGC",
                "-XX:TieredStopAtLevel=1")));
    }

    /**
     * Sends {@code count} moves over keys 0-15 (seeded by {@code seed}; each added to {@code moves}), move i to
     * {@code cnOf(i)}, and SIGKILLs {@code killed}, in order, right after move {@code killAt} is sent. Returns their
     * outcomes.
     */
    static List<Future<ScytheClient.Outcome>> movesKilling(final ScytheClient client,
                                                                   final LocalCluster cluster, final long seed,
                                                                   final int count,
                                                                   final java.util.function.IntFunction<String> cnOf,
                                                                   final int killAt, final List<long[]> moves,
                                                                   final String... killed) throws Exception {
        final Random random = new Random(seed);
        final List<Future<ScytheClient.Outcome>> outcomes = new ArrayList<>();
        for (int i = 0; i < count; i++) {
            final long from = random.nextInt(16);
            final long to = (from + 1 + random.nextInt(15)) % 16;
            moves.add(new long[] {from, to, 1 + random.nextInt(9)});
            outcomes.add(client.callOn(cnOf.apply(i), "move", from, to, moves.get(i)[2]));
            if (i == killAt) {
                for (final String node : killed) {
                    cluster.signal(node, "KILL");
                }
            }
        }
        return outcomes;
    }

    /**
     * Waits for every move's outcome: each committed one applied to {@code expected}, each unknown one (a commit past
     * its point of no return whose write-back failed on mn2 before a configuration removed it, its CN giving up and
     * recovered; or one on a CN that died) added to {@code inDoubt}. Returns how many committed.
     */
    static int tally(final List<long[]> moves, final List<Future<ScytheClient.Outcome>> outcomes,
                             final long[] expected, final List<long[]> inDoubt) throws Exception {
        Future.join(outcomes).await(120, TimeUnit.SECONDS);
        int committed = 0;
        for (int i = 0; i < moves.size(); i++) {
            final ScytheClient.Outcome o = outcomes.get(i).result();
            assertThat(o).as("move %d across the failover", i).isInstanceOfAny(
                ScytheClient.Outcome.Committed.class, ScytheClient.Outcome.Aborted.class,
                ScytheClient.Outcome.Unknown.class);
            if (o instanceof ScytheClient.Outcome.Committed) {
                committed++;
                expected[(int) moves.get(i)[0]] -= moves.get(i)[2];
                expected[(int) moves.get(i)[1]] += moves.get(i)[2];
            } else if (o instanceof ScytheClient.Outcome.Unknown) {
                inDoubt.add(moves.get(i));
            }
        }
        return committed;
    }

    /** Every committed move applied; each move in doubt applied whole or not at all (one subset fits all keys). */
    private static void assertMovesApplied(final ScytheClient live, final long[] expected, final List<long[]> inDoubt,
                                           final int committed) throws Exception {
        final long[] values = new long[KEYS];
        long sum = 0;
        for (int k = 0; k < KEYS; k++) {
            final ScytheClient.Outcome o = live.call("get", k).await(30, TimeUnit.SECONDS);
            assertThat(o).as("get %d", k).isInstanceOf(ScytheClient.Outcome.Committed.class);
            values[k] = ((ScytheClient.Outcome.Committed) o).reply().result();
            sum += values[k];
        }
        assertThat(sum).as("moves conserve the counters' sum").isZero();
        assertThat(appliedSubset(expected, inDoubt, values)).as("a subset of the %d moves in doubt on top of the %d "
            + "committed gives every key's value %s (expected from the committed: %s)", inDoubt.size(), committed,
            java.util.Arrays.toString(values), java.util.Arrays.toString(expected)).isGreaterThanOrEqualTo(0);
    }

    /**
     * The bitmask of the moves of {@code inDoubt} whose application on top of {@code expected} gives {@code values}
     * exactly, or -1 when none does.
     */
    static int appliedSubset(final long[] expected, final List<long[]> inDoubt, final long[] values) {
        // Every subset in Gray-code order: one move applied or taken back a step, the keys that differ counted as
        // they change (2^n steps of O(1): a CN killed under load leaves 20 or more moves in doubt).
        final long[] v = expected.clone();
        int differ = 0;
        for (int k = 0; k < v.length; k++) {
            differ += v[k] != values[k] ? 1 : 0;
        }
        int mask = 0;
        for (long step = 1; differ != 0; step++) {
            if (step >= 1L << inDoubt.size()) {
                return -1;
            }
            final int bit = Long.numberOfTrailingZeros(step);
            mask ^= 1 << bit;
            final long sign = (mask & 1 << bit) != 0 ? 1 : -1;
            final long[] m = inDoubt.get(bit);
            for (final int[] kd : new int[][] {{(int) m[0], -1}, {(int) m[1], 1}}) {
                final int k = kd[0];
                final boolean was = v[k] != values[k];
                v[k] += sign * kd[1] * m[2];
                differ += (v[k] != values[k] ? 1 : 0) - (was ? 1 : 0);
            }
        }
        return mask;
    }
}
