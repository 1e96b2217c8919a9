package io.scythe.sim;

import io.scythe.bench.history.HistoryCollector;
import io.scythe.bench.history.SerializabilityChecker;
import io.scythe.bench.workload.SmallBankSpec;
import io.scythe.storage.ObjectLayout;
import io.vertx.core.json.JsonObject;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/** Motor (FORD's CAS locks, multi-version CVTs) in the simulator, at Lotus's topology scaled down. */
class MotorSimTest extends SimVertxTest {
    private static SimOptions options(final long seed) {
        return new SimOptions().protocol("motor").computeNodes(3).loopsPerComputeNode(2).clientsPerComputeNode(4)
            .memoryNodes(3).replicas(2).durationNs(200_000).seed(seed);
    }

    /**
     * Contended SmallBank (its Balance transactions read-only: they read at T_start from the CVT) on 3 compute nodes and
     * 3 memory nodes with 2 backups: money conserved, no lock left, every backup equal to its primary, and the history
     * serializable.
     */
    @Test
    void shouldCommitSerializablyWithReplicasAndLeaveNoLockHeld() throws Exception {
        for (final long seed : new long[] {1, 2}) {
            final Simulation sim = new Simulation(options(seed).faults(new Faults().jitterNs(1_000)),
                new SmallBankSpec(1000, 0.99, "scythe"));
            final HistoryCollector history = new HistoryCollector(ObjectLayout.LOADED_VERSION, "motor seed " + seed);
            sim.recorder(history);
            final JsonObject run = sim.run(vertx).run().toJson();
            assertThat(run.getJsonObject("sim").getJsonArray("violations")).as("seed " + seed).isEmpty();
            assertThat(run.getJsonObject("conserved").getBoolean("ok")).as("money, seed " + seed).isTrue();
            assertThat(run.getLong("committed")).as("seed " + seed).isGreaterThan(20);
            assertThat(run.getLong("replica_differences")).as("seed " + seed).isZero();
            assertThat(run.getJsonObject("committed_by_type").getLong("Balance")).as("read-only, seed " + seed)
                .isPositive();
            final SerializabilityChecker.Result verdict = SerializabilityChecker.check(history.history(), 10);
            assertThat(verdict.serializable()).as(String.join("\n", verdict.lines())).isTrue();
        }
    }
}
