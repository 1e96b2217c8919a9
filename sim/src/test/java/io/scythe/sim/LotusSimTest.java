package io.scythe.sim;

import io.scythe.bench.history.HistoryCollector;
import io.scythe.bench.history.SerializabilityChecker;
import io.scythe.bench.workload.SmallBankSpec;
import io.scythe.fabric.Opcode;
import io.scythe.storage.ObjectLayout;
import io.scythe.txn.lotus.LotusNode;
import io.vertx.core.json.JsonObject;
import org.junit.jupiter.api.Test;

import java.util.Set;

import static org.assertj.core.api.Assertions.assertThat;

/** Lotus's lock-first protocol in the simulator, on several compute nodes whose lock tables hold the locks. */
class LotusSimTest extends SimVertxTest {
    private static SimOptions options(final String protocol, final long seed, final int cns) {
        return new SimOptions().protocol(protocol).computeNodes(cns).loopsPerComputeNode(2).clientsPerComputeNode(4)
            .memoryNodes(2).durationNs(200_000).seed(seed);
    }

    @Test
    void shouldCommitSerializablyOnSeveralComputeNodesAndLeaveNoLockHeld() throws Exception {
        for (final long seed : new long[] {1, 2, 3}) {
            final Simulation sim = new Simulation(options("lotus", seed, 3).faults(new Faults().jitterNs(1_000)),
                new SmallBankSpec(1000, 0.99, "scythe"));
            final HistoryCollector history = new HistoryCollector(ObjectLayout.LOADED_VERSION, "lotus seed " + seed);
            sim.recorder(history);
            final JsonObject run = sim.run(vertx).run().toJson();
            assertThat(run.getJsonObject("sim").getJsonArray("violations")).as("seed " + seed).isEmpty();
            assertThat(run.getJsonObject("conserved").getBoolean("ok")).as("money, seed " + seed).isTrue();
            assertThat(run.getLong("committed")).as("seed " + seed).isGreaterThan(20);
            final SerializabilityChecker.Result verdict = SerializabilityChecker.check(history.history(), 10);
            assertThat(verdict.serializable()).as(String.join("\n", verdict.lines())).isTrue();
            long sent = 0;
            long served = 0;
            for (int cn = 0; cn < 3; cn++) {
                final LotusNode node = LotusNode.of(sim.peersOf(cn));
                assertThat(node.locks().held()).as("locks left in cn" + cn + ", seed " + seed).isEmpty();
                assertThat(node.locks().checkInvariant()).isNull();
                final long[] counts = node.counts();
                assertThat(counts[0]).as("messages cannot carry fewer than one key").isLessThanOrEqualTo(counts[1]);
                assertThat(counts[2]).as("local locks on cn" + cn).isPositive();
                sent += counts[0];
                served += counts[3];
            }
            assertThat(sent).as("lock messages between compute nodes").isPositive();
            assertThat(served).as("acquires and releases served").isGreaterThanOrEqualTo(sent);
        }
    }

    @Test
    void shouldRunTheSameWayEveryTime() throws Exception {
        final SimResult a = new Simulation(options("lotus", 9, 2), new SmallBankSpec(500, 0.9, "scythe")).run(vertx);
        final SimResult b = new Simulation(options("lotus", 9, 2), new SmallBankSpec(500, 0.9, "scythe")).run(vertx);
        assertThat(a.historyHash()).isEqualTo(b.historyHash());
        assertThat(a.run().toJson().getJsonObject("latency_us").encode())
            .isEqualTo(b.run().toJson().getJsonObject("latency_us").encode());
    }

    /**
     * No RDMA CAS or FAA reaches a memory node: every one-sided atomic from a compute node to a memory node is made to
     * fail, and none is issued (FORD, which locks with CAS, shows the probe sees them).
     */
    @Test
    void shouldSendNoAtomicVerbToMemoryNodes() throws Exception {
        final Set<Opcode> atomics = Set.of(Opcode.COMPARE_AND_SWAP, Opcode.FETCH_AND_ADD);
        final JsonObject lotus = new Simulation(options("lotus", 4, 2).faults(new Faults().verbFail(1.0, atomics)),
            new SmallBankSpec(1000, 0.5, "scythe")).run(vertx).run().toJson();
        assertThat(lotus.getJsonObject("sim").getJsonObject("verb_faults").getLong("injected")).isZero();
        assertThat(lotus.getJsonObject("sim").getJsonArray("violations")).isEmpty();
        assertThat(lotus.getLong("committed")).isGreaterThan(50);
        final JsonObject ford = new Simulation(options("ford-occ", 4, 2).faults(new Faults().verbFail(1.0, atomics)),
            new SmallBankSpec(1000, 0.5, "scythe")).run(vertx).run().toJson();
        assertThat(ford.getJsonObject("sim").getJsonObject("verb_faults").getLong("injected")).isPositive();
    }
}
