package io.scythe.sim;

import io.scythe.bench.workload.SmallBankSpec;
import io.scythe.txn.Txn;
import io.scythe.txn.lotus.Cvt;
import io.scythe.txn.lotus.LotusModule;
import io.vertx.core.Future;
import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * An aborted Lotus attempt's read that completes after its locks went must not write the record's CVT (a suspected
 * cause of the lost commit of LotusClusterProcessTest in CI run 67: key 6 one committed move of 2 short, all moves
 * acknowledged). Attempt A locks checking 1 (a local CAS: at once) and looks its address up (a miss on its loop: an RPC
 * to the memory node); its lock of checking 2, held by B, is refused, so A aborts and frees checking 1 while the lookup
 * is in flight. Then A's read READs the CVT and finds an INVISIBLE cell. Before the fix it took it for a gone writer's
 * ("the key is locked by this attempt") and cleared it, holding no lock. In a cluster under load the cell is the next
 * writer's, which locked the key after A's release and wrote its INVISIBLE version: cleared, its visible write then
 * sets the version of a cell no longer valid, and its acknowledged commit is lost on that key alone. Here the cell is
 * made INVISIBLE directly (the writer's timing is not needed to show that A writes after its locks are gone).
 */
class LotusLateReadSimTest extends SimVertxTest {
    @Test
    void shouldNotLetAnAbortedAttemptsLateReadWriteTheCvtOnceItsLocksAreGone() throws Exception {
        final List<String> steps = new ArrayList<>();
        final int[] invisible = {-1, -1}; // INVISIBLE cells of checking 1 when A's abort is done, and once A is quiet
        final io.scythe.txn.TxnRuntime[] first = new io.scythe.txn.TxnRuntime[1];
        final io.vertx.core.Promise<Long> firstDone = io.vertx.core.Promise.promise();
        final boolean[] ran = new boolean[1];
        final Simulation sim = new Simulation(new SimOptions().protocol("lotus").computeNodes(1)
            .loopsPerComputeNode(2).clientsPerComputeNode(2).memoryNodes(1).durationNs(400_000).seed(1),
            new SmallBankSpec(100, 0.5, "scythe"));
        sim.operation((runtime, random) -> {
            if (first[0] == null) {
                first[0] = runtime; // P's and B's loop: its address cache knows checking 1
                return firstDone.future();
            }
            if (ran[0] || runtime == first[0]) {
                return runtime.timers().after(20_000).map(v -> 20_000L);
            }
            ran[0] = true;
            final io.scythe.txn.TxnRuntime r0 = first[0];
            final long began = runtime.timers().nowNs();
            final Txn p = LotusModule.LOTUS.begin(r0, false);
            final Txn a = LotusModule.LOTUS.begin(runtime, false); // on the other loop: checking 1 not cached there
            return Future.all(p.readForUpdate("checking", 1), p.readForUpdate("checking", 2), a.readForUpdate(
                "checking", 4)).compose(v -> {
                    write(p, 1, ((UnsafeBuffer) v.resultAt(0)).getLong(0) - 1);
                    write(p, 2, ((UnsafeBuffer) v.resultAt(1)).getLong(0) + 1);
                    return p.commit();
                }).compose(ts -> markOlderCellInvisible(r0)).compose(ts -> {
                    // The older cell of checking 1 now reads INVISIBLE, as the next writer's does between its
                    // INVISIBLE write and its visible one (a deterministic stand-in: no writer's timing involved).
                    final Txn b = LotusModule.LOTUS.begin(r0, false);
                    return b.readForUpdate("checking", 2).compose(x -> {
                        // A has its T_start: its read of checking 1 locks it, then looks its address up (a miss on
                        // this loop: an RPC to the memory node), still in flight when A aborts and frees the lock.
                        final Future<UnsafeBuffer> late = a.readForUpdate("checking", 1);
                        final Future<UnsafeBuffer> refused = a.readForUpdate("checking", 2);
                        assertThat(refused.failed()).as("A's lock of checking 2, held by B, refused at once")
                            .isTrue();
                        return a.abort().compose(y -> {
                            steps.add("A aborted, its read of checking 1 " + (late.isComplete() ? "done"
                                : "in flight"));
                            return countInvisible(r0);
                        }).compose(n -> {
                            invisible[0] = n;
                            return late.transform(r -> {
                                steps.add("A's late read " + (r.succeeded() ? "returned" : "failed ("
                                    + r.cause().getMessage() + ")"));
                                return a.quiesced();
                            });
                        }).compose(y -> runtime.timers().after(20_000)).compose(y -> countInvisible(r0))
                            .compose(n -> {
                                invisible[1] = n;
                                return b.abort();
                            });
                    });
                }).map(x -> {
                    firstDone.tryComplete(0L);
                    return runtime.timers().nowNs() - began;
                });
        });
        sim.run(vertx).run();
        System.out.println("lotus late read: " + steps + ", INVISIBLE cells of checking 1 after A's abort "
            + invisible[0] + ", once A is quiet " + invisible[1]);
        assertThat(steps).as("the interleaving").hasSize(2);
        assertThat(steps.get(0)).as("A's read still in flight when it aborted").endsWith("in flight");
        assertThat(invisible[0]).as("the INVISIBLE cell, when A's abort is done").isEqualTo(1);
        assertThat(invisible[1]).as("A, over and holding no lock, wrote checking 1's CVT: " + steps).isEqualTo(1);
    }

    /** The CVT of checking 1 on its primary, with its address and rkey. */
    private static Future<Object[]> cvtOfChecking1(final io.scythe.txn.TxnRuntime runtime) {
        final io.scythe.txn.Catalog.Partition part = runtime.catalog().table("checking").partitionOf(1);
        final int at = Cvt.offset(part.descriptor().schema().maxValueBytes());
        final UnsafeBuffer cvt = new UnsafeBuffer(new byte[Cvt.cvtBytes(Cvt.DEFAULT_VERSIONS)]);
        return runtime.remote(part).lookupRpc(1).compose(pointer -> runtime.channel(part.node()).compose(ch -> {
            final long address = io.scythe.storage.ObjectLayout.addressOf(pointer) + at;
            final int rkey = part.descriptor().objects().rkey();
            return ch.read(address, rkey, cvt, 0, cvt.capacity()).map(v -> new Object[] {cvt, address, rkey, ch});
        }));
    }

    private static Future<Integer> countInvisible(final io.scythe.txn.TxnRuntime runtime) {
        return cvtOfChecking1(runtime).map(c -> {
            return Cvt.invisible((UnsafeBuffer) c[0], 0);
        });
    }

    /** Writes INVISIBLE into the version word of checking 1's older valid cell (the newest stays visible). */
    private static Future<Long> markOlderCellInvisible(final io.scythe.txn.TxnRuntime runtime) {
        return cvtOfChecking1(runtime).compose(c -> {
            final UnsafeBuffer cvt = (UnsafeBuffer) c[0];
            final int newest = Cvt.newest(cvt, 0);
            int older = -1;
            for (int i = 0; i < Cvt.DEFAULT_VERSIONS; i++) {
                older = i != newest && Cvt.valid(cvt, 0, i) ? i : older;
            }
            assertThat(older).as("checking 1 has an older valid cell").isNotNegative();
            final UnsafeBuffer word = new UnsafeBuffer(new byte[8]);
            word.putLong(0, Cvt.INVISIBLE);
            final io.scythe.bridge.Doorbell batch = ((io.scythe.bridge.RdmaChannel) c[3]).doorbell();
            batch.write((Long) c[1] + Cvt.cell(older) + CELL_VERSION, (Integer) c[2], word, 0, 8);
            return batch.post().map(0L);
        });
    }

    /** Offset of a cell's version word ({@code Cvt.CELL_VERSION}). */
    private static final int CELL_VERSION = 16;

    private static void write(final Txn txn, final long account, final long value) {
        final UnsafeBuffer b = new UnsafeBuffer(new byte[8]);
        b.putLong(0, value);
        txn.write("checking", account, b, 0, 8);
    }
}
