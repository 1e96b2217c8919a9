package io.scythe.cluster;

import io.vertx.core.Future;
import io.vertx.core.json.JsonObject;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

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
    private static final Pattern DRAINED = Pattern.compile("drained memory-node configuration epoch (\\d+) with clock "
        + "(\\d+)");
    private static final Pattern FLOORED = Pattern.compile("settled promoted copies \\[[^]]*] of configuration epoch 1 \\d+ "
        + "ms after their promotion: promotedSettling above clock (\\d+)");

    @ParameterizedTest
    @ValueSource(strings = {"rcc-mvcc", "rcc-sundial"})
    void shouldFloorThePromotedCopyAboveEveryComputeNodesClockAndLoseNoCommit(final String protocol,
                                                                          @TempDir final Path dir) throws Exception {
        final LocalCluster cluster = new LocalCluster("rccfo" + UUID.randomUUID().toString().substring(0, 8),
            "a test secret of the cluster", 3, 2, new JsonObject().put("name", "counters").put("keys", KEYS),
            new JsonObject().put("provider", "tcp").put("costModel", new JsonObject().put("profile", "zero")),
            protocol, dir, LocalCluster.Launcher.sameClasspath(List.of("-Xmx256m", "-XX:+UseSerialGC",
                "-XX:TieredStopAtLevel=1")));
        ScytheClient client = null;
        try {
            client = ProcessClusters.startAndJoin(cluster, 300_000, 30_000);
            final long[] expected = new long[KEYS];
            final java.util.Set<String> reasons = new java.util.TreeSet<>();
            final int[] before = ProcessClusters.concurrentMoves(client, 1, 40, expected, reasons);
            assertThat(before[0] + before[1]).as("moves commit before the failover (aborts: %s)", reasons)
                .isPositive();

            // Moves in flight on both CNs when mn2 (p2: keys 2, 5, 8, ...) is killed.
            final Random random = new Random(2);
            final List<long[]> moves = new ArrayList<>();
            final List<Future<ScytheClient.Outcome>> outcomes = new ArrayList<>();
            for (int i = 0; i < 60; i++) {
                final long from = random.nextInt(16);
                final long to = (from + 1 + random.nextInt(15)) % 16;
                moves.add(new long[] {from, to, 1 + random.nextInt(9)});
                outcomes.add(client.callOn(i % 2 == 0 ? "cn0" : "cn1", "move", from, to, moves.get(i)[2]));
                if (i == 20) {
                    cluster.signal("mn2", "KILL");
                }
            }
            Future.join(outcomes).await(120, TimeUnit.SECONDS);
            int committed = 0;
            final List<long[]> inDoubt = new ArrayList<>();
            for (int i = 0; i < moves.size(); i++) {
                final ScytheClient.Outcome o = outcomes.get(i).result();
                // Unknown: a commit past its point of no return whose write-back failed on mn2 before a configuration
                // removed it (within memoryNodeFailoverWaitMs); its CN gives up and is recovered: applied or not.
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

            // Every committed move applied; each move in doubt applied whole or not at all (one subset fits all keys).
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
            System.out.println(protocol + ": mn2 killed under load, " + committed + " of 60 moves across it committed, "
                + inDoubt.size() + " in doubt, CNs restarted " + java.util.Arrays.toString(restarted) + "; the "
                + "promoted copy floored above clock " + flooredAbove);
        } finally {
            ProcessClusters.stop(client, cluster);
        }
    }

    /**
     * The bitmask of the moves of {@code inDoubt} whose application on top of {@code expected} gives {@code values}
     * exactly, or -1 when none does.
     */
    private static int appliedSubset(final long[] expected, final List<long[]> inDoubt, final long[] values) {
        for (int mask = 0; mask < 1 << inDoubt.size(); mask++) {
            final long[] v = expected.clone();
            for (int i = 0; i < inDoubt.size(); i++) {
                if ((mask & 1 << i) != 0) {
                    v[(int) inDoubt.get(i)[0]] -= inDoubt.get(i)[2];
                    v[(int) inDoubt.get(i)[1]] += inDoubt.get(i)[2];
                }
            }
            if (java.util.Arrays.equals(v, values)) {
                return mask;
            }
        }
        return -1;
    }
}
