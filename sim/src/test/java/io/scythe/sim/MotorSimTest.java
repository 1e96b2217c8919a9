package io.scythe.sim;

import io.scythe.bench.history.HistoryCollector;
import io.scythe.bench.history.SerializabilityChecker;
import io.scythe.bench.workload.OltpSpec;
import io.scythe.bench.workload.SmallBank;
import io.scythe.bench.workload.SmallBankSpec;
import io.scythe.storage.ObjectLayout;
import io.vertx.core.json.JsonObject;
import org.junit.jupiter.api.Test;

import java.util.SplittableRandom;

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
     * serializable. One draw in 8 is a transaction that locks a savings account for update and commits writing nothing
     * ({@link LockOnly}, as TATP's UpdateSubscriberData of a missing facility): its lock is released too (issue 19:
     * before, Motor's commit without writes kept it; this run then left 11 held and failed).
     */
    @Test
    void shouldCommitSerializablyWithReplicasAndLeaveNoLockHeld() throws Exception {
        for (final long seed : new long[] {1}) { // seed 2 dropped for the crash seed below (suite time)
            final Simulation sim = new Simulation(options(seed).faults(new Faults().jitterNs(1_000)),
                new LockOnly(new SmallBankSpec(1000, 0.99, "scythe")));
            final HistoryCollector history = new HistoryCollector(ObjectLayout.LOADED_VERSION, "motor seed " + seed);
            sim.recorder(history);
            final JsonObject run = sim.run(vertx).run().toJson();
            assertThat(run.getJsonObject("sim").getJsonArray("violations")).as("seed " + seed).isEmpty();
            assertThat(run.getJsonObject("conserved").getBoolean("ok")).as("money, seed " + seed).isTrue();
            assertThat(run.getLong("committed")).as("seed " + seed).isGreaterThan(20);
            assertThat(run.getLong("replica_differences")).as("seed " + seed).isZero();
            assertThat(run.getJsonObject("committed_by_type").getLong("Balance")).as("read-only, seed " + seed)
                .isPositive();
            assertThat(run.getJsonObject("committed_by_type").getLong(LockOnly.TYPE)).as("seed " + seed).isPositive();
            assertThat(run.getLong("locks_left_held")).as("seed " + seed).isZero();
            final SerializabilityChecker.Result verdict = SerializabilityChecker.check(history.history(), 10);
            assertThat(verdict.serializable()).as(String.join("\n", verdict.lines())).isTrue();
        }
    }

    /**
     * The crash explorer's SmallBank seed 21 (issue 19): cn0 dies after the redo record of a commit (stage
     * after-redo), which recovery rolls forward into the homes and the CVT cells. Before, recovery wrote the homes
     * only: the end-of-run check reads the CVT's newest cell (Lotus's probe), which missed the recovered version,
     * and the money was not conserved (final 1,011,155 of 1,000,000; seeds 33 and 59 too, 14 of the first 250).
     */
    @Test
    void shouldRollACrashedNodesCommitIntoTheCvt() throws Exception {
        final Explorer.Outcome o = Explorer.check(vertx, Explorer.Workload.SMALLBANK,
            Explorer.crash(Explorer.crashOptions("motor", 21)).validate());
        assertThat(o.failure()).as("%s", o.failure()).isNull();
        final JsonObject recovery = o.run().getJsonObject("sim").getJsonObject("crash").getJsonObject("recovery");
        assertThat(recovery.getJsonObject("at_crash").getString("stage")).isEqualTo("after-redo");
        assertThat(recovery.getJsonObject("report").getInteger("applied")).as("rolled forward").isPositive();
    }

    /** SmallBank, one draw in 8 replaced by a readForUpdate of a savings account that writes nothing and commits. */
    private record LockOnly(OltpSpec spec) implements DelegatingSpec {
        static final String TYPE = "LockOnly";

        @Override
        public Drawn draw(final SplittableRandom random) {
            return lockOnly(random, spec.draw(random));
        }

        @Override
        public Drawn draw(final SplittableRandom random, final int computeNode, final int loop) {
            return lockOnly(random, spec.draw(random, computeNode, loop));
        }

        private static Drawn lockOnly(final SplittableRandom random, final Drawn drawn) {
            if (random.nextInt(8) != 0) {
                return drawn;
            }
            final long account = drawn.routingKey();
            return new Drawn(TYPE, txn -> txn.readForUpdate(SmallBank.SAVINGS, account).map(row -> 0L), account,
                false);
        }
    }
}
