package io.scythe.sim;

import io.scythe.bench.history.HistoryCollector;
import io.scythe.bench.history.SerializabilityChecker;
import io.scythe.bench.workload.SmallBankSpec;
import io.scythe.storage.ObjectLayout;
import io.scythe.txn.AbortException;
import io.scythe.txn.Protocol;
import io.scythe.txn.Txn;
import io.scythe.txn.TxnRuntime;
import io.scythe.txn.motor.MotorModule;
import io.vertx.core.Future;
import io.vertx.core.json.JsonObject;
import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Motor under snapshot isolation ({@code motor-si}): reads at T_start from the CVT without validation, first committer
 * wins on written keys. Each scenario is run by one client of a 1-CN simulation, step by step, under motor (SR) and
 * motor-si side by side; the outcomes are strings ("committed" or "aborted REASON") and values read.
 */
class MotorSiSimTest extends SimVertxTest {
    private static final String CHECKING = "checking";
    private static final String SAVINGS = "savings";

    /**
     * T reads checking 2, then U commits a new checking 2, then T writes savings 1 and commits: SR aborts it (read
     * validation), SI commits it (none). T2 takes T_start, then U2 commits checking 2, then T2 reads it: SI reads the
     * version below its T_start from the CVT (U's value, not U2's); SR aborts the read (newest not below T_start).
     */
    @Test
    void shouldReadTheSnapshotBelowTStartAndSkipReadValidation() throws Exception {
        final List<String> sr = scenario(MotorModule.MOTOR, MotorSiSimTest::readsSnapshot);
        final List<String> si = scenario(MotorModule.MOTOR_SI, MotorSiSimTest::readsSnapshot);
        assertThat(sr).as("SR").containsExactly("T read 1000", "T aborted validation", "T2 aborted validation");
        assertThat(si).as("SI").containsExactly("T read 1000", "T committed", "T2 read 1100 (newest 1200)",
            "T2 committed");
    }

    /**
     * First committer wins under SI: T reads checking 5 (before U's commit) and T' reads checking 6 (after U''s: from
     * the CVT below its T_start); both then write the key U wrote, and both abort at their lock (version changed).
     */
    @Test
    void shouldAbortTheSecondWriterOfAKeyUnderSnapshotIsolation() throws Exception {
        final List<String> si = scenario(MotorModule.MOTOR_SI, MotorSiSimTest::writeWrite);
        assertThat(si).containsExactly("T aborted validation", "T' read 1000", "T' aborted validation",
            "checking 5 = 1001", "checking 6 = 1001");
    }

    /**
     * Contended SmallBank under motor-si on 3 CNs and 3 MNs with 2 backups: money conserved (SmallBank's transfers
     * write every key they read, so write skew cannot break it), no lock left, backups equal, and the history allowed
     * by snapshot isolation (no cycle without two consecutive rw edges: no lost update).
     */
    @Test
    void shouldRunSmallBankUnderSnapshotIsolationWithReplicas() throws Exception {
        final Simulation sim = new Simulation(new SimOptions().protocol("motor-si").computeNodes(3)
            .loopsPerComputeNode(2).clientsPerComputeNode(4).memoryNodes(3).replicas(2).durationNs(200_000).seed(1)
            .faults(new Faults().jitterNs(1_000)), new SmallBankSpec(1000, 0.99, "scythe"));
        final HistoryCollector history = new HistoryCollector(ObjectLayout.LOADED_VERSION, "motor-si seed 1");
        sim.recorder(history);
        final JsonObject run = sim.run(vertx).run().toJson();
        assertThat(run.getJsonObject("sim").getJsonArray("violations")).isEmpty();
        assertThat(run.getJsonObject("conserved").getBoolean("ok")).as("money").isTrue();
        assertThat(run.getLong("committed")).isGreaterThan(20);
        assertThat(run.getLong("replica_differences")).isZero();
        assertThat(run.getLong("locks_left_held")).isZero();
        final SerializabilityChecker.Result verdict = SerializabilityChecker.check(history.history(), 10);
        assertThat(verdict.snapshotIsolationAllowed()).as(String.join("\n", verdict.lines())).isTrue();
    }

    @Test
    void shouldNameTheSnapshotIsolationVariantAndRefuseUnknownOptions() {
        final Protocol p = io.scythe.txn.spi.ProtocolRegistry.protocol("motor-si:versions=3");
        assertThat(p.name()).isEqualTo("motor-si:versions=3");
        assertThat(p.snapshotIsolation()).isTrue();
        assertThat(io.scythe.txn.spi.ProtocolRegistry.protocol("motor").snapshotIsolation()).isFalse();
        org.assertj.core.api.Assertions.assertThatThrownBy(() -> MotorModule.MOTOR_SI.configured("isolation=sr"))
            .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("motor-si");
    }

    @FunctionalInterface
    private interface Steps {
        Future<Void> run(Protocol p, TxnRuntime r, List<String> out);
    }

    /** Runs {@code steps} once on the first client of a 1-CN, 1-MN simulation; what they recorded. */
    private List<String> scenario(final Protocol p, final Steps steps) throws Exception {
        final List<String> out = new ArrayList<>();
        final boolean[] ran = new boolean[1];
        final Simulation sim = new Simulation(new SimOptions().protocol(p.name()).computeNodes(1)
            .loopsPerComputeNode(1).clientsPerComputeNode(1).memoryNodes(1).durationNs(400_000).seed(1),
            new SmallBankSpec(100, 0.5, "scythe"));
        sim.operation((runtime, random) -> {
            if (ran[0]) {
                return runtime.timers().after(20_000).map(v -> 20_000L);
            }
            ran[0] = true;
            final long began = runtime.timers().nowNs();
            return steps.run(p, runtime, out).recover(e -> {
                out.add("failed: " + e);
                return Future.succeededFuture();
            }).map(v -> runtime.timers().nowNs() - began);
        });
        sim.run(vertx).run();
        return out;
    }

    private static Future<Void> readsSnapshot(final Protocol p, final TxnRuntime r, final List<String> out) {
        final Txn t = p.begin(r, false);
        final Txn t2 = p.begin(r, false);
        // checking 2 written once by Motor (its CVT then holds two versions): 1000
        return set(p, r, CHECKING, 2, 1000)
            .compose(v -> t.read(CHECKING, 2)).compose(b -> {
                out.add("T read " + b.getLong(0));
                return set(p, r, CHECKING, 2, 1100); // U commits after T's read
            })
            .compose(v -> t.read(SAVINGS, 1)).compose(b -> {
                t.write(SAVINGS, 1, value(b.getLong(0) + 1), 0, 8);
                return end(t, "T", out);
            })
            .compose(v -> t2.read(SAVINGS, 3)) // T2's T_start
            .compose(b -> set(p, r, CHECKING, 2, 1200)) // U2 commits after T2's T_start
            .compose(v -> t2.read(CHECKING, 2).transform(x -> {
                if (x.failed()) {
                    return fail(t2, "T2", x.cause(), out);
                }
                out.add("T2 read " + x.result().getLong(0) + " (newest 1200)");
                return t2.read(SAVINGS, 3).compose(b -> {
                    t2.write(SAVINGS, 3, value(b.getLong(0) + 1), 0, 8);
                    return end(t2, "T2", out);
                });
            }));
    }

    private static Future<Void> writeWrite(final Protocol p, final TxnRuntime r, final List<String> out) {
        final Txn t = p.begin(r, false);
        final Txn t1 = p.begin(r, false);
        return set(p, r, CHECKING, 5, 1000).compose(v -> set(p, r, CHECKING, 6, 1000))
            .compose(v -> t.read(CHECKING, 5))
            .compose(b -> set(p, r, CHECKING, 5, b.getLong(0) + 1)) // U: first committer
            .compose(v -> {
                t.write(CHECKING, 5, value(5), 0, 8);
                return end(t, "T", out);
            })
            .compose(v -> t1.read(SAVINGS, 7)) // T''s T_start
            .compose(b -> set(p, r, CHECKING, 6, 1001)) // U' commits after it
            .compose(v -> t1.read(CHECKING, 6)).compose(b -> {
                out.add("T' read " + b.getLong(0));
                t1.write(CHECKING, 6, value(6), 0, 8);
                return end(t1, "T'", out);
            })
            .compose(v -> p.begin(r, false).read(CHECKING, 5)).compose(b -> {
                out.add("checking 5 = " + b.getLong(0));
                return p.begin(r, false).read(CHECKING, 6);
            }).map(b -> {
                out.add("checking 6 = " + b.getLong(0));
                return null;
            });
    }

    /** A committed read-for-update and write of {@code key} to {@code v}. */
    private static Future<Void> set(final Protocol p, final TxnRuntime r, final String table, final long key,
                                    final long v) {
        final Txn u = p.begin(r, false);
        return u.readForUpdate(table, key).compose(b -> {
            u.write(table, key, value(v), 0, 8);
            return u.commit();
        }).mapEmpty();
    }

    /** Commits {@code t}, recording "NAME committed" or "NAME aborted REASON" (then aborted as a coordinator does). */
    private static Future<Void> end(final Txn t, final String name, final List<String> out) {
        return t.commit().transform(x -> {
            if (x.succeeded()) {
                out.add(name + " committed");
                return Future.succeededFuture();
            }
            return fail(t, name, x.cause(), out);
        });
    }

    private static Future<Void> fail(final Txn t, final String name, final Throwable e, final List<String> out) {
        out.add(name + " aborted " + (e instanceof AbortException a ? a.reason() : "by " + e));
        return t.abort();
    }

    private static UnsafeBuffer value(final long v) {
        final UnsafeBuffer b = new UnsafeBuffer(new byte[8]);
        b.putLong(0, v);
        return b;
    }
}
