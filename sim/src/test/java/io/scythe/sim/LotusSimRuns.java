package io.scythe.sim;

import io.scythe.txn.lotus.LotusCluster;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonObject;
import org.agrona.concurrent.UnsafeBuffer;

import static org.assertj.core.api.Assertions.assertThat;

/** What the Lotus simulator tests share: a run with one crashed compute node's recovery, and a buffer's copy. */
final class LotusSimRuns {
    private LotusSimRuns() {
    }

    /** A run of {@code sim} and its one Lotus recovery, which did not fail. */
    record Recovered(JsonObject run, String what, LotusCluster.Recovery recovery) {
    }

    /**
     * Runs {@code sim} and checks that Lotus recovered exactly one dead compute node without a failure ({@code what}:
     * the run's {@code sim} object, for the assertions' messages).
     */
    static Recovered runWithOneRecovery(final Simulation sim, final Vertx vertx) throws Exception {
        final JsonObject run = sim.run(vertx).run().toJson();
        final String what = run.getJsonObject("sim").encode();
        final LotusCluster cluster = LotusCluster.of(sim.peersOf(0));
        assertThat(cluster.recoveries()).as(what).hasSize(1);
        final LotusCluster.Recovery r = cluster.recoveries().get(0);
        assertThat(r.failure()).as(what).isNull();
        return new Recovered(run, what, r);
    }

    /**
     * Per copy of checking 1 and 2 (named by copy, key and memory node), read from the memory nodes' memory directly:
     * the key, its newest visible value ({@code ObjectProbe#committedValue}) and its INVISIBLE cells.
     */
    static java.util.Map<String, long[]> committedCopies(final Simulation sim) {
        final java.util.Map<String, long[]> out = new java.util.TreeMap<>();
        for (int mn = 0; mn < sim.memoryNodes().size(); mn++) {
            final io.scythe.storage.LogDb db = sim.memoryNodes().get(mn);
            for (int b = 0; b <= 2; b++) {
                final io.scythe.storage.Table t = (b == 0 ? db : db.backupView(b)).table("checking");
                for (final long key : new long[] {1, 2}) {
                    final Long value = t == null ? null : io.scythe.txn.spi.ObjectProbe.committedLong(t, key);
                    if (value != null) {
                        out.put("copy " + b + " of checking " + key + " on memory node " + mn, new long[] {key, value,
                            io.scythe.txn.lotus.Cvt.invisibleCells(t, io.scythe.txn.spi.ObjectProbe.homeOffset(t, key))});
                    }
                }
            }
        }
        return out;
    }

    /** Writes checking 1 one less and checking 2 one more than {@code read} (their values, in that order) holds. */
    static void moveOne(final io.scythe.txn.Txn txn, final io.vertx.core.CompositeFuture read) {
        final UnsafeBuffer a = copy(read.resultAt(0));
        final UnsafeBuffer b = copy(read.resultAt(1));
        a.putLong(0, a.getLong(0) - 1);
        b.putLong(0, b.getLong(0) + 1);
        txn.write("checking", 1, a, 0, a.capacity());
        txn.write("checking", 2, b, 0, b.capacity());
    }

    /** A copy of {@code b} (a read's result, which its transaction may reuse). */
    static UnsafeBuffer copy(final UnsafeBuffer b) {
        final UnsafeBuffer c = new UnsafeBuffer(new byte[b.capacity()]);
        c.putBytes(0, b, 0, b.capacity());
        return c;
    }
}
