package io.scythe.cluster;

import io.scythe.txn.MemoryNodeConfiguration;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/** The configuration as the Hazelcast map holds it: what a CN writes another decodes, rejoining nodes included. */
class MemoryNodeFailoverTest {
    @Test
    void shouldDecodeWhatItEncodesWithRejoiningNodesAndOlderEntriesWithoutThem() {
        final MemoryNodeConfiguration rejoin = MemoryNodeConfiguration.initial(3, 1).without(1).rejoin(1, 1);
        assertThat(MemoryNodeFailover.decode(MemoryNodeFailover.encode(rejoin))).isEqualTo(rejoin);
        final MemoryNodeConfiguration without = MemoryNodeConfiguration.initial(3, 1).without(2);
        assertThat(MemoryNodeFailover.decode(MemoryNodeFailover.encode(without))).isEqualTo(without);
        assertThat(without.primarySince()).as("p2's backup promoted in epoch 1").containsExactly(0L, 0L, 1L);
        final MemoryNodeConfiguration older = MemoryNodeFailover.decode(
            "{\"epoch\":1,\"copies\":[[0],[1],[0,1]],\"removed\":[1]}");
        final MemoryNodeConfiguration without1 = MemoryNodeConfiguration.initial(3, 1).without(1);
        assertThat(older.copies()).as("an entry written before rejoin existed").isEqualTo(without1.copies());
        assertThat(older.removed()).isEqualTo(without1.removed());
        assertThat(older.primarySince()).as("one written before terms: every term from the start, as read then")
            .containsExactly(0L, 0L, 0L);
    }

    /**
     * Configurations heard from Hazelcast are applied off its event thread (applying one may block on an IMap.get),
     * one at a time, in the order heard: the caller (the event thread) is not held up by a blocked apply.
     */
    @Test
    void shouldApplyConfigurationsOnAWorkerInTheOrderHeardWithoutHoldingTheCaller() throws Exception {
        final io.vertx.core.Vertx vertx = io.vertx.core.Vertx.vertx();
        try {
            final java.util.concurrent.CountDownLatch release = new java.util.concurrent.CountDownLatch(1);
            final java.util.List<Long> applied = new java.util.concurrent.CopyOnWriteArrayList<>();
            final java.util.List<String> threads = new java.util.concurrent.CopyOnWriteArrayList<>();
            final java.util.concurrent.CountDownLatch all = new java.util.concurrent.CountDownLatch(3);
            final java.util.function.Consumer<String> deliver = MemoryNodeFailover.inOrder(vertx, c -> {
                threads.add(Thread.currentThread().getName());
                try {
                    if (c.epoch() == 1) {
                        release.await(); // blocks, as a rejoin's IMap.get may
                    }
                } catch (final InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
                applied.add(c.epoch());
                all.countDown();
            });
            final MemoryNodeConfiguration one = MemoryNodeConfiguration.initial(3, 1).without(1);
            final MemoryNodeConfiguration two = one.rejoin(1, 1);
            final long startNs = System.nanoTime();
            for (final MemoryNodeConfiguration c : java.util.List.of(one, two, two.rejoined(1))) {
                deliver.accept(MemoryNodeFailover.encode(c));
            }
            assertThat(System.nanoTime() - startNs).as("the caller is not held up by the blocked apply")
                .isLessThan(java.util.concurrent.TimeUnit.SECONDS.toNanos(1));
            Thread.sleep(50);
            assertThat(applied).as("nothing overtakes the blocked first one").isEmpty();
            release.countDown();
            assertThat(all.await(10, java.util.concurrent.TimeUnit.SECONDS)).isTrue();
            assertThat(applied).containsExactly(1L, 2L, 3L);
            assertThat(threads).as("never on the caller's thread").noneMatch(t -> t.equals(Thread.currentThread()
                .getName())).allMatch(t -> t.contains("worker"));
        } finally {
            vertx.close().await(10, java.util.concurrent.TimeUnit.SECONDS);
        }
    }
}
