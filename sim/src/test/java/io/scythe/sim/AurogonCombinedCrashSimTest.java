package io.scythe.sim;

import io.scythe.bench.history.HistoryCollector;
import io.scythe.bench.history.SerializabilityChecker;
import io.scythe.storage.ObjectLayout;
import io.vertx.core.json.JsonObject;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * A coordinator and a memory node dying together under Aurogon (issue 20): compute node 0 and memory node 1 crash at
 * the same instant, SmallBank over 100 accounts, 3 memory nodes with 2 backups a partition (§4.5 assumes f+1 copies
 * survive: with one backup the pair may take the only copy of a write whose commit reached a primary, so the simulator
 * refuses it). The dead coordinator's transactions that lost the dead node's backup share are decided by §4.5's rule
 * over the surviving backups ({@code CoordinatorRecovery#lostShare}); money is conserved, every backup equals its
 * primary, the history is serializable, every live client finished.
 */
class AurogonCombinedCrashSimTest extends SimVertxTest {
    /**
     * {@code scythe sim --workload smallbank --accounts 100 --protocols aurogon --replicas 2 --mns 3 --cns 2 --loops 2
     * --clients 8 --duration 2ms --crash-at 200us --crash-cn 0 --crash-mn 0 --seed S --check-history}: memory node 0,
     * whose partition 0 the recovery looked tables up by (a promoted copy serves it under its backup table's id: "no
     * table with id 12 in the catalog" before), and the 2LClock reference too. The sweep is in the package doc.
     */
    @ParameterizedTest
    @ValueSource(longs = {2, 3})
    void shouldRecoverACoordinatorAndAMemoryNodeDyingTogetherWithTwoBackups(final long seed) throws Exception {
        final HistoryCollector recorded = new HistoryCollector(ObjectLayout.LOADED_VERSION, "smallbank aurogon");
        final SimOptions options = new SimOptions().protocol("aurogon").computeNodes(2).loopsPerComputeNode(2)
            .clientsPerComputeNode(8).memoryNodes(3).replicas(2).durationNs(2_000_000).seed(seed)
            .faults(new Faults().crash(0, 200_000).crashMemoryNode(0, 200_000));
        final long[] before = io.scythe.txn.aurogon.AurogonModule.recoveries();
        final SimResult r = new Simulation(options, new io.scythe.bench.workload.SmallBankSpec(100, 0.99,
            "standard")).recorder(recorded).run(vertx);
        final long[] after = io.scythe.txn.aurogon.AurogonModule.recoveries();
        final JsonObject run = r.run().toJson();
        final JsonObject sim = run.getJsonObject("sim");
        System.out.println("seed " + seed + ": committed " + run.getLong("committed") + ", recoveries committed "
            + (after[0] - before[0]) + ", rolled back " + (after[1] - before[1]) + ", on a lost share "
            + (after[2] - before[2]) + ", conserved " + run.getJsonObject("conserved"));
        assertThat(after[2] - before[2]).as("transactions decided with a backup share lost").isPositive();
        assertThat(r.invariantsOk()).as(sim.getJsonArray("violations").encode()).isTrue();
        assertThat(run.getJsonObject("conserved").getBoolean("ok")).isTrue();
        assertThat(run.getLong("replica_differences")).isZero();
        assertThat(sim.getBoolean("quiescent")).as("every live client finished").isTrue();
        final SerializabilityChecker.Result history = SerializabilityChecker.check(recorded.history(), 3);
        assertThat(Explorer.historyFails(history, run)).as(Explorer.verdict(history)).isFalse();
    }

    /**
     * Seed 40071 of {@code scythe sim --explore 100 --seed 40001 --crash-mn 1 --replicas 2 --crashes --protocols
     * aurogon}: {@code scythe sim --workload smallbank --accounts 50 --theta 0.99 --mix scythe --protocols aurogon
     * --cns 2 --loops 2 --clients 3 --mns 3 --tso-group loop --duration 150us --jitter 2us --reclaim-every 10us
     * --replicas 2 --crash-cn 0 --crash-at 35.173us --crash-mn 1 --check-history --seed 40071}. The RRPC queue pair
     * from compute node 1 to the dead memory node 1, shared by both of its loops, failed on the loop polling it; its
     * Rockets failed their calls there, so the other loop's transaction ended, and its client began the next one,
     * under the polling loop's bridge: 2LClock's probe then read the other loop's NodeClocks ("NodeClocks of node cn1
     * belong to the loop of thread ..."), a transaction failed with an error. Rocket#disconnected now fails them on
     * their own loop.
     */
    @Test
    void shouldFailASharedQueuePairsCallsOnEachRocketsOwnLoop() throws Exception {
        final HistoryCollector recorded = new HistoryCollector(ObjectLayout.LOADED_VERSION, "smallbank aurogon");
        final SimOptions options = new SimOptions().protocol("aurogon").computeNodes(2).loopsPerComputeNode(2)
            .clientsPerComputeNode(3).memoryNodes(3).replicas(2).tsoGroupPerComputeNode(false).reclaimEveryNs(10_000)
            .durationNs(150_000).seed(40071).faults(new Faults().jitterNs(2_000).crashMemoryNode(1, 35_173, 20_000)
                .crash(0, 35_173).recover(false, 20_000));
        final SimResult r = new Simulation(options, new io.scythe.bench.workload.SmallBankSpec(50, 0.99, "scythe"))
            .recorder(recorded).run(vertx);
        final JsonObject run = r.run().toJson();
        final JsonObject sim = run.getJsonObject("sim");
        assertThat(sim.getLong("errors")).as(String.valueOf(sim.getValue("first_error"))).isZero();
        assertThat(r.invariantsOk()).as(sim.getJsonArray("violations").encode()).isTrue();
        assertThat(run.getLong("replica_differences")).isZero();
        final SerializabilityChecker.Result history = SerializabilityChecker.check(recorded.history(), 3);
        assertThat(Explorer.historyFails(history, run)).as(Explorer.verdict(history)).isFalse();
    }

    /** With one backup a partition the pair is refused, naming why; any other protocol refuses it too. */
    @Test
    void shouldRefuseACoordinatorAndAMemoryNodeDyingTogetherWithOneBackup() {
        final SimOptions one = new SimOptions().protocol("aurogon").computeNodes(2).memoryNodes(3).replicas(1)
            .durationNs(100_000).faults(new Faults().crash(0, 50_000).crashMemoryNode(1, 50_000));
        assertThatThrownBy(one::validate).hasMessageContaining("--replicas 2").hasMessageContaining("f+1");
        new SimOptions().protocol("aurogon").computeNodes(2).memoryNodes(3).replicas(2).durationNs(100_000)
            .faults(new Faults().crash(0, 50_000).crashMemoryNode(1, 50_000)).validate();
        final SimOptions scythe = new SimOptions().protocol("scythe").computeNodes(2).memoryNodes(3).replicas(2)
            .durationNs(100_000).faults(new Faults().crash(0, 50_000).crashMemoryNode(1, 50_000));
        assertThatThrownBy(scythe::validate).hasMessageContaining("crash");
    }
}
