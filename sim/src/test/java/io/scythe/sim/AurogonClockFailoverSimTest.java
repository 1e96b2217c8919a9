package io.scythe.sim;

import io.scythe.bench.history.HistoryCollector;
import io.scythe.bench.history.SerializabilityChecker;
import io.scythe.fabric.ClockDeviation;
import io.scythe.storage.LogDb;
import io.scythe.storage.ObjectLayout;
import io.scythe.txn.TxnRuntime;
import io.scythe.txn.aurogon.AurogonModule;
import io.vertx.core.json.JsonObject;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * 2LClock's root failover (§5.3, Fig. 7, Fig. 13) in the simulator: memory node 0, the reference NIC, dies under
 * Aurogon (transfers between hot accounts on 3 memory nodes with one backup each; host clocks up to 100 us and NIC
 * clocks up to 10 us apart, drifting). Every loop notices (its probes fail, or the configuration removes the node),
 * turns to mn1, serves its old mapping extrapolated through the virtual phase, switches with a correction and smooths
 * it away. Sampled at every finished transaction: two loops of one node and two nodes' loops stay within a bound
 * through the failover (the paper: error up to 3.5 us while smoothing), no loop's clock runs backwards, every loop
 * ends on mn1 (normal, those still taking timestamps); and the run is correct (money conserved, live copies
 * identical, history serializable).
 * Fails when the clock does not fail over (its probes to the dead node fail and its mapping drifts, or a loop's
 * correction is not smoothed: time jumps by the two NICs' offset).
 */
class AurogonClockFailoverSimTest extends SimVertxTest {
    @ParameterizedTest
    @ValueSource(longs = {3, 4})
    void shouldFailOverTheReferenceClockWithABoundedErrorAndStayCorrect(final long seed) throws Exception {
        final HistoryCollector recorded = new HistoryCollector(ObjectLayout.LOADED_VERSION, "transfers");
        final List<LogDb> dbs = new ArrayList<>();
        final long crashAt = 300_000;
        final SimOptions options = new SimOptions().protocol("aurogon").computeNodes(2).loopsPerComputeNode(2)
            .clientsPerComputeNode(8).memoryNodes(3).replicas(1).durationNs(1_500_000).drainNs(2_000_000)
            .maxAttempts(1000).seed(seed).clocks(AurogonClockSimTest.skewed(seed))
            .faults(new Faults().crashMemoryNode(0, crashAt));
        final Simulation[] sim = new Simulation[1];
        final long[] last = new long[4];
        final long[] backwards = new long[1]; // the largest step back of one loop's reading (ns)
        final long[] maxBefore = new long[2];
        final long[] maxAfter = new long[2];
        final Map<String, Long> states = new TreeMap<>();
        sim[0] = new Simulation(options, new AurogonRecoverySimTest.Transfers(dbs)).recorder(recorded)
            .listener(record -> {
                final List<TxnRuntime> loops = new ArrayList<>(sim[0].runtimesOf(0));
                loops.addAll(sim[0].runtimesOf(1));
                final long[] c = new long[4];
                for (int i = 0; i < 4; i++) {
                    try {
                        c[i] = AurogonModule.clockReadingNs(loops.get(i), "aurogon");
                    } catch (final IllegalStateException notYet) {
                        return; // a loop that took no timestamp yet has no clock to compare
                    }
                    final String state = AurogonModule.twoLevelClockState(loops.get(i));
                    states.merge(state.substring(0, state.indexOf(' ')) + (i < 2 ? " cn0" : " cn1"), 1L, Long::sum);
                    backwards[0] = Math.max(backwards[0], last[i] - c[i]);
                    last[i] = Math.max(last[i], c[i]);
                }
                final long[] max = record.finishedNs() < crashAt ? maxBefore : maxAfter;
                max[0] = Math.max(max[0], Math.abs(c[0] - c[1])); // two clocks of one node
                max[1] = Math.max(max[1], Math.abs(c[0] - c[2])); // two nodes
            });
        final SimResult r = sim[0].run(vertx);
        final JsonObject run = r.run().toJson();
        final JsonObject sim0 = run.getJsonObject("sim");
        final ClockDeviation mn0 = options.clocks().nicOf("mn0");
        final ClockDeviation mn1 = options.clocks().nicOf("mn1");
        final List<String> ends = new ArrayList<>();
        for (final int cn : new int[] {0, 1}) {
            for (final TxnRuntime loop : sim[0].runtimesOf(cn)) {
                ends.add(AurogonModule.twoLevelClockState(loop));
            }
        }
        System.out.println("seed " + seed + ": committed " + run.getLong("committed") + ", NIC offsets mn0 "
            + mn0.offsetNs() + " mn1 " + mn1.offsetNs() + " ns; max error one node / two nodes before "
            + maxBefore[0] + " / " + maxBefore[1] + " ns, from the crash on " + maxAfter[0] + " / " + maxAfter[1]
            + " ns; largest step back " + backwards[0] + " ns; samples by phase " + states + "; end " + ends + "; aborts "
            + run.getJsonObject("aborts_by_reason"));
        assertThat(r.invariantsOk()).as(sim0.getJsonArray("violations").encode()).isTrue();
        assertThat(run.getJsonObject("conserved").getBoolean("ok")).isTrue();
        assertThat(run.getLong("replica_differences")).isZero();
        assertThat(sim0.getBoolean("quiescent")).isTrue();
        final SerializabilityChecker.Result history = SerializabilityChecker.check(recorded.history(), 3);
        assertThat(Explorer.historyFails(history, run)).as(Explorer.verdict(history)).isFalse();
        // Every loop went through the phases and ends normal on the new reference.
        // (a loop that stopped taking timestamps stays in the phase it was in: its clock advances when read.)
        assertThat(ends).allMatch(e -> e.endsWith(" mn1 1")).contains("NORMAL mn1 1");
        assertThat(states).containsKeys("VIRTUAL cn0", "SMOOTHING cn0", "VIRTUAL cn1", "SMOOTHING cn1");
        // Served time never runs back (the correction is smoothed, not dropped): 1 ns is the mapping's rounding.
        assertThat(backwards[0]).as("largest step back of a loop's reading, ns").isLessThanOrEqualTo(1);
        // Bounded through the failover: within the switch's share of the two references' offset plus what it was.
        final long bound = Math.max(maxBefore[1], 1_000) + Math.abs(mn1.offsetNs() - mn0.offsetNs());
        assertThat(maxAfter[0]).isLessThanOrEqualTo(bound);
        assertThat(maxAfter[1]).isLessThanOrEqualTo(bound);
    }
}
