package io.scythe.sim;

import io.scythe.bench.workload.OltpSpec;
import io.scythe.bench.workload.SmallBankSpec;
import io.scythe.storage.LogDb;
import io.scythe.storage.ObjectLayout;
import io.scythe.storage.Table;
import io.vertx.core.json.JsonObject;
import org.junit.jupiter.api.Test;

import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The end checks after the drain: a run still busy is reported not quiescent, on its own, not as the lost locks or
 * money its transactions in flight seem to leave; the drain is extended (up to {@link SimOptions#drainMaxNs()}) until
 * every client finished; and a lock really leaked still fails the run, quiescent or not. (The FORD retry storm that
 * outlasted the 50 ms drain: {@code scythe sim --workload smallbank --cns 1 --mns 3 --tso-proxies 2 --theta 0.99
 * --warmup 1ms --seed 1 --protocols ford-occ --clients 80 --loops 1 --duration 10ms}, quiescent at 55.6 ms now.)
 */
class DrainTest extends SimVertxTest {
    /** A CAS lock word of a transaction of loop 0 of cn0 (ids carry their loop + 1 from bit 40). */
    private static final long CN0_TXN = (1L << 40) | 5;
    /** A CAS lock word naming no loop: a holder nobody knows. */
    private static final long NOBODY = 5;

    private static SimOptions options() {
        return new SimOptions().protocol("ford-occ").computeNodes(1).loopsPerComputeNode(1).clientsPerComputeNode(8)
            .memoryNodes(2).durationNs(200_000).seed(1);
    }

    private static JsonObject run(final SimOptions options, final long plantedLock) throws Exception {
        final OltpSpec spec = new SmallBankSpec(50, 0.99, "scythe");
        return new Simulation(options, plantedLock == 0 ? spec : new PlantedLock(spec, plantedLock)).run(vertx).run()
            .toJson();
    }

    @Test
    void shouldReportARunStillBusyAfterTheDrainAsNotQuiescentNotAsLostLocksOrMoney() throws Exception {
        final JsonObject run = run(options().drainNs(0).drainMaxNs(0), 0);

        final JsonObject sim = run.getJsonObject("sim");
        assertThat(sim.getBoolean("quiescent")).isFalse();
        final JsonObject busy = sim.getJsonObject("not_quiescent");
        assertThat(busy.getLong("transactions")).isPositive().isEqualTo(sim.getLong("unfinished_clients"));
        assertThat(busy.getLong("verbs")).isPositive();
        assertThat(run.getBoolean("invariants_ok")).isFalse();
        final List<Object> violations = sim.getJsonArray("violations").getList();
        assertThat(violations).hasSize(1);
        assertThat((String) violations.get(0)).startsWith("not quiescent after drain: "
            + busy.getLong("transactions") + " transactions, " + busy.getLong("verbs") + " verbs in flight");
    }

    @Test
    void shouldExtendTheDrainUntilEveryClientFinished() throws Exception {
        final JsonObject run = run(options().drainNs(0), 0);

        final JsonObject sim = run.getJsonObject("sim");
        assertThat(sim.getBoolean("quiescent")).isTrue();
        assertThat(sim.getDouble("drained_ms")).isPositive().isLessThan(1000.0);
        assertThat(sim.containsKey("not_quiescent")).isFalse();
        assertThat(run.getBoolean("invariants_ok")).as(sim.encode()).isTrue();
        assertThat(run.getLong("locks_left_held")).isZero();
    }

    @Test
    void shouldStillFailALeakedLockInAQuiescentRun() throws Exception {
        final JsonObject run = run(options(), CN0_TXN);

        final JsonObject sim = run.getJsonObject("sim");
        assertThat(sim.getBoolean("quiescent")).isTrue();
        assertThat(run.getBoolean("invariants_ok")).isFalse();
        assertThat(run.getLong("locks_left_held")).isEqualTo(1);
        assertThat(sim.getJsonArray("violations").getList()).singleElement().asString()
            .startsWith("1 locks left held").contains("CAS word " + Long.toHexString(CN0_TXN)).contains("cn0");
    }

    @Test
    void shouldStillFailALockNoTransactionInFlightCouldHoldWhenNotQuiescent() throws Exception {
        final JsonObject run = run(options().drainNs(0).drainMaxNs(0), NOBODY);

        final JsonObject sim = run.getJsonObject("sim");
        assertThat(sim.containsKey("not_quiescent")).isTrue();
        assertThat(sim.getJsonArray("violations").getList()).anySatisfy(v -> assertThat((String) v)
            .startsWith("1 locks left held").contains("held by nobody known"));
        assertThat(sim.getJsonObject("locks_unexplained").getLong("held_on_live_nodes")).isEqualTo(1);
    }

    /** Plants a CAS lock word on the first object of memory node 0 when the end checks count the money. */
    private record PlantedLock(OltpSpec spec, long casWord) implements DelegatingSpec {
        @Override
        public long total(final List<LogDb> dbs) {
            final Table table = dbs.get(0).tables().iterator().next();
            table.objectMemory().putLongVolatile(ObjectLayout.CAS_LOCK_OFFSET, casWord);
            return spec.total(dbs);
        }
    }
}
