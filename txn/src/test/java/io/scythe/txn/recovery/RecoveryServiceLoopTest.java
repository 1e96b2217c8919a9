package io.scythe.txn.recovery;

import io.scythe.fabric.Nic;
import io.scythe.txn.OneMemoryNode;
import io.scythe.txn.spi.MemoryNodeContext;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Proxy;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A memory node's fence barrier that completes on another thread (as shm's does, on its connection manager, once a
 * verb the dead compute node was inside when it was killed is waited out): the recovery RPCs still list and release
 * on the RPC server's loop, and the recovery succeeds with every release step counted. Before, the rest of the RPC
 * ran on that thread: "no Bridge on thread 'scythe-shm-cm-mn0'" after the dead node's tickets were already cancelled,
 * so the retried recovery found none (CnKillProcessTest, CI run 67).
 */
class RecoveryServiceLoopTest {
    private final ExecutorService fabricThread = Executors.newSingleThreadExecutor(r ->
        new Thread(r, "test-fabric-thread"));

    @AfterEach
    void stop() {
        fabricThread.shutdownNow();
    }

    /** {@code nic}, its fence barriers completed a moment later on {@link #fabricThread}. */
    private Nic barriersOnAnotherThread(final Nic nic) {
        return (Nic) Proxy.newProxyInstance(Nic.class.getClassLoader(), new Class<?>[] {Nic.class},
            (proxy, method, args) -> {
                final Object result;
                try {
                    result = method.invoke(nic, args);
                } catch (final InvocationTargetException e) {
                    throw e.getCause();
                }
                if (!method.getName().equals("fenceBarrier")) {
                    return result;
                }
                @SuppressWarnings("unchecked") final Future<Void> barrier = (Future<Void>) result;
                final Promise<Void> late = Promise.promise(); // no context: completes where it is completed
                fabricThread.execute(() -> {
                    try {
                        Thread.sleep(20);
                    } catch (final InterruptedException e) {
                        Thread.currentThread().interrupt();
                    }
                    barrier.onComplete(late);
                });
                return late.future();
            });
    }

    @Test
    void shouldListAndReleaseOnTheServersLoopWhenTheFenceBarrierCompletesOnAnotherThread() throws Exception {
        try (OneMemoryNode cluster = new OneMemoryNode("t", 64, false, 8, this::barriersOnAnotherThread)) {
            final List<Thread> ranOn = new CopyOnWriteArrayList<>();
            final Thread loop = cluster.on(runtime -> {
                cluster.services.onDeadNode(MemoryNodeContext.Phase.BEFORE_INSERTS, "probe", (dead, ids) -> {
                    ranOn.add(Thread.currentThread());
                    return 1;
                });
                return Future.succeededFuture(Thread.currentThread());
            });
            final CnRecovery.Report report = cluster.on(runtime -> new CnRecovery(runtime).recover("cnDead"));
            assertThat(report.released("probe")).as("the release step counted in the report").isEqualTo(1);
            assertThat(ranOn).as("release steps run on the RPC server's loop").containsExactly(loop);
            // Recovered again (owed again, or re-run): admitted and answered on the loop as well, nothing left.
            final CnRecovery.Report again = cluster.on(runtime -> new CnRecovery(runtime).recover("cnDead"));
            assertThat(again.released("tickets")).isZero();
            assertThat(ranOn).containsExactly(loop, loop);
            inputLogIsNotARedoLog(cluster);
        }
        assertThat(fabricThread.shutdownNow()).isEmpty();
        assertThat(fabricThread.awaitTermination(5, TimeUnit.SECONDS)).isTrue();
    }

    /**
     * (On the same memory node, to add no set-up time.) A loop opening a redo log and CALVIN's input log with one id
     * base gets two regions (before, both were named {@code redo.<node>.<idBase>}: "already registered"); the
     * recovery of that node lists and frees the redo log only, and the input log survivors read stays registered.
     */
    private static void inputLogIsNotARedoLog(final OneMemoryNode cluster) throws Exception {
        final io.scythe.rrpc.RrpcClient dying = new io.scythe.rrpc.RrpcClient(cluster.vertx,
            cluster.fabric.attachNow("cnInput"), new io.scythe.rrpc.RrpcOptions());
        final List<Integer> rkeys = cluster.on(runtime -> {
            final List<Future<Integer>> opened = new java.util.ArrayList<>();
            for (final int kind : new int[] {-1, RecoveryRpc.KIND_INPUT_LOG}) {
                final org.agrona.concurrent.UnsafeBuffer request = new org.agrona.concurrent.UnsafeBuffer(new byte[
                    kind < 0 ? RecoveryRpc.LOG_OPEN_REQUEST_BYTES : RecoveryRpc.LOG_OPEN_KIND_REQUEST_BYTES]);
                request.putLong(0, 1L << 40);
                request.putInt(8, 4096);
                if (kind >= 0) {
                    request.putInt(12, kind);
                }
                opened.add(dying.rocket("mn").compose(r -> r.call(RecoveryRpc.LOG_OPEN, request))
                    .map(reply -> reply.payload().getInt(8)));
            }
            return Future.all(opened).map(v -> List.of(opened.get(0).result(), opened.get(1).result()));
        });
        final Nic mn = cluster.fabric.nic("mn");
        assertThat(RecoveryService.logRegion(mn, rkeys.get(0))).isNotNull();
        assertThat(RecoveryService.inputLogRegion(mn, rkeys.get(1))).isNotNull();
        assertThat(RecoveryService.logRegion(mn, rkeys.get(1))).as("the input log is no redo log").isNull();
        final CnRecovery.Report report = cluster.on(runtime -> new CnRecovery(runtime).recover("cnInput"));
        assertThat(report.logRegions()).as("regions listed by LOG_LIST").isEqualTo(1);
        assertThat(RecoveryService.logRegion(mn, rkeys.get(0))).as("redo log freed on release").isNull();
        assertThat(RecoveryService.inputLogRegion(mn, rkeys.get(1))).as("input log kept").isNotNull();
        // Where a survivor in another process finds it (INPUT_LOG_FIND, by the dead incarnation's name): this region,
        // and nothing for a node that opened none.
        final List<Integer> found = cluster.on(runtime -> {
            final List<Future<Integer>> asked = new java.util.ArrayList<>();
            for (final String name : new String[] {"cnInput", "cnNone"}) {
                final org.agrona.concurrent.UnsafeBuffer request = new org.agrona.concurrent.UnsafeBuffer(
                    name.getBytes(java.nio.charset.StandardCharsets.UTF_8));
                asked.add(runtime.rocket("mn").compose(r -> r.call(RecoveryRpc.INPUT_LOG_FIND, request))
                    .map(reply -> reply.length() < RecoveryRpc.LOG_OPEN_REPLY_BYTES ? -1 : reply.payload().getInt(8)));
            }
            return Future.all(asked).map(v -> List.of(asked.get(0).result(), asked.get(1).result()));
        });
        assertThat(found).as("rkeys found by INPUT_LOG_FIND (-1: none)").containsExactly(rkeys.get(1), -1);
    }
}
