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
        }
        assertThat(fabricThread.shutdownNow()).isEmpty();
        assertThat(fabricThread.awaitTermination(5, TimeUnit.SECONDS)).isTrue();
    }
}
