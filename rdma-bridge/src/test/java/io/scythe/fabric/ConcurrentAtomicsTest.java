package io.scythe.fabric;

import io.scythe.fabric.local.LocalFabric;
import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicLong;

import static org.assertj.core.api.Assertions.assertThat;

/** Many requesters, one word: atomics lose no update, and CAS increments stay exact. */
class ConcurrentAtomicsTest {

    @Test
    void shouldLoseNoUpdateUnderConcurrentFetchAndAddAndCompareAndSwap() throws Exception {
        runContended(CostModel.zero(), 4, 50_000);
    }

    @Test
    void shouldLoseNoUpdateWithTheCostModelOn() throws Exception {
        runContended(CostModel.cx5(), 2, 5_000);
    }

    private void runContended(final CostModel model, final int threads, final int opsPerThread) throws Exception {
        try (LocalFabric fabric = new LocalFabric(new FabricOptions().costModel(model))) {
            final Nic mn = fabric.attachNow("mn");
            final MemoryRegion region = mn.register("counters", 64, MemoryKind.HOST);
            final RemoteRegion remote = region.describe();
            final CountDownLatch start = new CountDownLatch(1);
            final AtomicLong casSuccesses = new AtomicLong();
            final List<Thread> workers = new ArrayList<>();
            final List<Throwable> failures = new ArrayList<>();
            for (int t = 0; t < threads; t++) {
                final Nic cn = fabric.attachNow("cn" + t);
                workers.add(new Thread(() -> {
                    try {
                        final CompletionQueue cq = cn.createCompletionQueue(64);
                        final QueuePair qp = cn.connect("mn", cq, new QpOptions()).result();
                        final UnsafeBuffer result = new UnsafeBuffer(new byte[8]);
                        final Recorder recorder = new Recorder();
                        start.await();
                        for (int i = 0; i < opsPerThread; i++) {
                            // FAA on word 0.
                            qp.post(new WorkRequest().fetchAndAdd(remote.address(), remote.rkey(), 1, result, 0));
                            await(cq, recorder);
                            // CAS-increment of word 1: read, then CAS until it sticks.
                            long seen = 0;
                            while (true) {
                                qp.post(new WorkRequest().compareAndSwap(remote.address() + 8, remote.rkey(), seen,
                                    seen + 1, result, 0));
                                await(cq, recorder);
                                final long witness = result.getLong(0);
                                if (witness == seen) {
                                    casSuccesses.incrementAndGet();
                                    break;
                                }
                                seen = witness;
                            }
                        }
                    } catch (final Throwable e) {
                        synchronized (failures) {
                            failures.add(e);
                        }
                    }
                }));
            }
            workers.forEach(Thread::start);
            start.countDown();
            for (final Thread w : workers) {
                w.join();
            }
            assertThat(failures).isEmpty();
            final long expected = (long) threads * opsPerThread;
            assertThat(region.buffer().getLongVolatile(0)).isEqualTo(expected);
            assertThat(region.buffer().getLongVolatile(8)).isEqualTo(expected);
            assertThat(casSuccesses.get()).isEqualTo(expected);
        }
    }

    @Test
    void shouldLetSeveralThreadsPostOnASharedQueuePairWhileItsOwnerCompletesEverything() throws Exception {
        try (LocalFabric fabric = new LocalFabric(new FabricOptions().costModel(CostModel.cx5()))) {
            final Nic mn = fabric.attachNow("mn");
            final Nic cn = fabric.attachNow("cn");
            final MemoryRegion region = mn.register("counters", 64, MemoryKind.HOST);
            final RemoteRegion remote = region.describe();
            final CompletionQueue cq = cn.createCompletionQueue(4096);
            final QueuePair shared = cn.connect("mn", cq, new QpOptions().shared(true).sendQueueDepth(4096)).result();
            final int posters = 3;
            final int each = 20_000;
            final java.util.concurrent.atomic.AtomicLong completions = new java.util.concurrent.atomic.AtomicLong();
            final java.util.concurrent.atomic.AtomicBoolean failed = new java.util.concurrent.atomic.AtomicBoolean();
            final CountDownLatch done = new CountDownLatch(posters);
            final List<Thread> threads = new ArrayList<>();
            for (int t = 0; t < posters; t++) {
                threads.add(new Thread(() -> {
                    final UnsafeBuffer result = new UnsafeBuffer(new byte[8]);
                    for (int i = 0; i < each; i++) {
                        while (shared.post(new WorkRequest().fetchAndAdd(remote.address(), remote.rkey(), 1, result,
                            0)) == QueuePair.SEND_QUEUE_FULL) {
                            Thread.onSpinWait();
                        }
                    }
                    done.countDown();
                }));
            }
            threads.forEach(Thread::start);
            // This thread owns the completion queue: it alone executes and completes.
            final CompletionHandler count = (qp, id, op, status, bytes) -> {
                if (status != WcStatus.SUCCESS) {
                    failed.set(true);
                }
                completions.incrementAndGet();
            };
            final long deadline = System.nanoTime() + 60_000_000_000L;
            while ((done.getCount() > 0 || cq.outstanding() > 0) && System.nanoTime() < deadline) {
                cq.poll(System.nanoTime(), count, 1024);
            }
            for (final Thread t : threads) {
                t.join();
            }
            assertThat(failed.get()).isFalse();
            assertThat(completions.get()).isEqualTo((long) posters * each);
            assertThat(region.buffer().getLongVolatile(0)).isEqualTo((long) posters * each);
            assertThat(cq.outstanding()).isZero();
        }
    }

    private static void await(final CompletionQueue cq, final Recorder recorder) {
        recorder.clear();
        while (recorder.entries.isEmpty()) {
            cq.poll(System.nanoTime(), recorder, 16);
        }
        assertThat(recorder.last().status()).isEqualTo(WcStatus.SUCCESS);
    }
}
