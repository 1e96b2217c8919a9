package io.scythe.sim;

import io.scythe.bench.history.HistoryCollector;
import io.scythe.bench.history.SerializabilityChecker;
import io.scythe.bench.workload.SmallBankSpec;
import io.scythe.fabric.Opcode;
import io.scythe.storage.ObjectLayout;
import io.scythe.txn.Txn;
import io.scythe.txn.lotus.LotusModule;
import io.scythe.txn.lotus.LotusNode;
import io.vertx.core.Future;
import io.vertx.core.json.JsonObject;
import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.api.Test;

import java.util.Set;
import java.util.TreeSet;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Lotus on its own memory-node store (issue 19): CVTs and full-record versions, INVISIBLE then visible writes to the
 * primary and its backups, the lock-free read-only path, SR and SI.
 */
class LotusCvtSimTest extends SimVertxTest {
    private static SimOptions options(final String protocol, final long seed) {
        return new SimOptions().protocol(protocol).computeNodes(3).loopsPerComputeNode(2).clientsPerComputeNode(4)
            .memoryNodes(3).replicas(2).durationNs(200_000).seed(seed);
    }

    /**
     * SmallBank (its Balance declared read-only: lock-free at T_start) with 3-way replication: money kept, no lock
     * left, a serializable history under SR; under SI no cycle with a single anti-dependency (no lost update, no
     * write-write overlap: only write skew, which SI allows), and no RDMA CAS or FAA to any memory node.
     */
    @Test
    void shouldKeepTheMoneyAndTheIsolationLevelOnTheCvtStore() throws Exception {
        final Set<Opcode> atomics = Set.of(Opcode.COMPARE_AND_SWAP, Opcode.FETCH_AND_ADD);
        for (final String protocol : new String[] {"lotus", "lotus-si"}) {
            for (final long seed : new long[] {1, 2}) {
                final String what = protocol + " seed " + seed;
                final Simulation sim = new Simulation(options(protocol, seed).faults(new Faults().jitterNs(1_000)
                    .verbFail(1.0, atomics)), new SmallBankSpec(200, 0.99, "scythe"));
                final HistoryCollector history = new HistoryCollector(ObjectLayout.LOADED_VERSION, what);
                sim.recorder(history);
                final JsonObject run = sim.run(vertx).run().toJson();
                assertThat(run.getJsonObject("sim").getJsonArray("violations")).as(what).isEmpty();
                assertThat(run.getJsonObject("conserved").getBoolean("ok")).as("money, " + what).isTrue();
                assertThat(run.getLong("committed")).as(what).isGreaterThan(20);
                assertThat(run.getJsonObject("sim").getJsonObject("verb_faults").getLong("injected"))
                    .as("atomics to memory nodes, " + what).isZero();
                LotusSimTest.assertNoLockLeft(sim, 3);
                final SerializabilityChecker.Result verdict = SerializabilityChecker.check(history.history(), 50);
                if (protocol.equals("lotus")) {
                    assertThat(verdict.serializable()).as(String.join("\n", verdict.lines())).isTrue();
                } else {
                    for (final SerializabilityChecker.Cycle c : verdict.cycles()) {
                        assertThat(adjacentAntiDependencies(c)).as("SI allows only cycles with two adjacent "
                            + "anti-dependencies: " + c).isTrue();
                    }
                }
            }
        }
    }

    /** Whether cycle {@code c} has two consecutive RW edges (Adya's G-SI allows those only). */
    private static boolean adjacentAntiDependencies(final SerializabilityChecker.Cycle c) {
        final int n = c.steps().size();
        for (int i = 0; i < n; i++) {
            if (c.steps().get(i).kind() == SerializabilityChecker.EdgeKind.RW
                && c.steps().get((i + 1) % n).kind() == SerializabilityChecker.EdgeKind.RW) {
                return true;
            }
        }
        return false;
    }

    /**
     * The digest's window: writers move 1 from checking 1 to checking 2 (two cells, made visible one after the other
     * by one doorbell per memory node) while lock-free read-only transactions read both. Every reader that commits saw
     * the same sum: none saw one of a writer's cells visible and the other still INVISIBLE (or the older version).
     */
    @Test
    void shouldNeverShowALockFreeReaderHalfAWritersCells() throws Exception {
        final Set<Long> sums = new TreeSet<>();
        final long[] counts = new long[3]; // readers committed, writers committed, attempts aborted
        final Simulation sim = new Simulation(options("lotus", 7).clientsPerComputeNode(2).durationNs(1_000_000).faults(new Faults()
            .jitterNs(2_000)), new SmallBankSpec(100, 0.5, "scythe"));
        sim.operation((runtime, random) -> {
            final long began = runtime.timers().nowNs();
            final Txn txn = LotusModule.LOTUS.begin(runtime, false);
            final boolean reader = random.nextInt(3) != 0;
            final Future<Long> done;
            if (reader) {
                txn.declareReadOnly();
                done = Future.all(txn.read("checking", 1), txn.read("checking", 2)).compose(v -> txn.commit()
                    .map(ts -> {
                        sums.add(((UnsafeBuffer) v.resultAt(0)).getLong(0) + ((UnsafeBuffer) v.resultAt(1)).getLong(0));
                        counts[0]++;
                        return ts;
                    }));
            } else {
                done = Future.all(txn.readForUpdate("checking", 1), txn.readForUpdate("checking", 2)).compose(v -> {
                    final UnsafeBuffer a = copy(v.resultAt(0));
                    final UnsafeBuffer b = copy(v.resultAt(1));
                    a.putLong(0, a.getLong(0) - 1);
                    b.putLong(0, b.getLong(0) + 1);
                    txn.write("checking", 1, a, 0, a.capacity());
                    txn.write("checking", 2, b, 0, b.capacity());
                    return txn.commit().map(ts -> {
                        counts[1]++;
                        return ts;
                    });
                });
            }
            return done.recover(e -> {
                counts[2]++;
                return txn.abort().transform(x -> Future.succeededFuture(0L));
            }).map(x -> runtime.timers().nowNs() - began);
        });
        final JsonObject run = sim.run(vertx).run().toJson();
        assertThat(run.getJsonObject("sim").getJsonArray("violations")).isEmpty();
        assertThat(counts[0]).as("readers committed").isGreaterThan(20);
        assertThat(counts[1]).as("writers committed").isGreaterThan(10);
        assertThat(sums).as("sums seen by committed lock-free readers").hasSize(1);
        LotusSimTest.assertNoLockLeft(sim, 3);
        for (int cn = 0; cn < 3; cn++) {
            assertThat(LotusNode.of(sim.peersOf(cn)).locks().held()).isEmpty();
        }
    }

    private static UnsafeBuffer copy(final UnsafeBuffer b) {
        final UnsafeBuffer c = new UnsafeBuffer(new byte[b.capacity()]);
        c.putBytes(0, b, 0, b.capacity());
        return c;
    }
}
