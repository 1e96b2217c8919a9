package io.scythe.fabric;

import io.scythe.fabric.local.LocalFabric;
import org.agrona.concurrent.CachedNanoClock;
import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/** The local provider: the fabric contract, plus what only an in-JVM fabric can check. */
class LocalFabricVerbsTest extends FabricContractTest {
    private final CachedNanoClock clock = new CachedNanoClock();

    @Override
    protected Fabric openFabric(final String cluster) {
        return new LocalFabric(new FabricOptions().cluster(cluster).costModel(CostModel.zero()).clock(clock));
    }

    @Test
    void shouldCompleteWithinOnePollWhenTheModelIsFree() {
        qp.post(new WorkRequest().read(remote.addressOf(0), remote.rkey(), local, 0, 8).wrId(1));
        assertThat(cq.poll(clock.nanoTime(), recorder, 16)).isPositive();
        assertThat(recorder.ids()).containsExactly(1L);
    }

    @Test
    void shouldApplyBackPressureWhenTheSendQueueIsFull() {
        final CostModel slow = CostModel.cx5();
        final LocalFabric timed = new LocalFabric(new FabricOptions().costModel(slow).clock(clock));
        try {
            final Nic a = timed.attachNow("a");
            final Nic b = timed.attachNow("b");
            final RemoteRegion r = b.register("r", 64, MemoryKind.HOST).describe();
            final CompletionQueue q = a.createCompletionQueue(64);
            final QueuePair p = a.connect("b", q, new QpOptions().sendQueueDepth(4)).result();
            for (int i = 0; i < 4; i++) {
                assertThat(p.post(new WorkRequest().read(r.address(), r.rkey(), local, 0, 8))).isZero();
            }
            assertThat(p.post(new WorkRequest().read(r.address(), r.rkey(), local, 0, 8)))
                .isEqualTo(QueuePair.SEND_QUEUE_FULL);
            assertThat(p.outstanding()).isEqualTo(4);
        } finally {
            timed.close();
        }
    }

    @Test
    void shouldRefuseUseFromAThreadThatDoesNotOwnTheQueue() throws Exception {
        final Throwable[] failure = new Throwable[1];
        final Thread other = new Thread(() -> {
            try {
                qp.post(new WorkRequest().read(remote.addressOf(0), remote.rkey(), local, 0, 8));
            } catch (final Throwable t) {
                failure[0] = t;
            }
        });
        other.start();
        other.join();
        assertThat(failure[0]).isInstanceOf(IllegalStateException.class).hasMessageContaining("owned by thread");
    }
}
