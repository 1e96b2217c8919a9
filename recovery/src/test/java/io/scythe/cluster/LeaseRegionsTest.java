package io.scythe.cluster;

import io.scythe.fabric.MemoryKind;
import io.scythe.fabric.RemoteRegion;
import org.junit.jupiter.api.Test;

import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** A CN's lease regions, changed by its start and the configuration apply queue at once ({@link LeaseRegions}). */
class LeaseRegionsTest {
    private static RemoteRegion words(final String mn, final long address) {
        return new RemoteRegion(mn, FabricLease.REGION, address, FabricLease.REGION_BYTES, 7, MemoryKind.HOST);
    }

    /**
     * A replacement mn1 publishes new words and the queue applies the configuration that brings it back while the CN's
     * start is still reading the regions (it read mn1's old words before): the new words win, whichever runs last.
     * Before (two plain read-modify-writes of a volatile): the queue skipped mn1 (no regions yet), then the start set
     * the old words, and the CN renewed on words nobody watched, losing its lease.
     */
    @Test
    void aMemoryNodeBackWhileTheStartReadsTheRegionsKeepsItsNewWords() throws Exception {
        final LeaseRegions regions = new LeaseRegions();
        final CountDownLatch reading = new CountDownLatch(1);
        final CountDownLatch goOn = new CountDownLatch(1);
        final AtomicReference<Throwable> failed = new AtomicReference<>();
        final Thread start = new Thread(() -> {
            try {
                regions.start(List.of("mn0", "mn1"), mn -> {
                    if (mn.equals("mn1")) {
                        reading.countDown();
                        await(goOn);
                        return words("mn1", 100); // read before the replacement published its words
                    }
                    return words(mn, 0);
                }, List::of);
            } catch (final Throwable e) {
                failed.set(e);
            }
        }, "cn-start");
        start.start();
        assertTrue(reading.await(30, TimeUnit.SECONDS));
        final Thread queue = new Thread(() -> regions.applied(List.of("mn1"), mn -> words(mn, 200), List.of()),
            "apply-queue");
        queue.start();
        final long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (queue.getState() != Thread.State.BLOCKED && queue.getState() != Thread.State.TERMINATED
            && System.nanoTime() < deadline) {
            Thread.sleep(1);
        }
        goOn.countDown();
        start.join(5_000);
        queue.join(5_000);
        assertEquals(null, failed.get());
        assertEquals(200, regions.targets().get("mn1").address(), "the replacement's new words");
        assertEquals(0, regions.targets().get("mn0").address());
    }

    @Test
    void renewsOnlyOnTheMemoryNodesTheAppliedConfigurationServesWith() {
        final LeaseRegions regions = new LeaseRegions();
        regions.applied(List.of("mn1"), mn -> words(mn, 1), List.of());
        assertEquals(java.util.Map.of(), regions.targets(), "nothing before the start");
        regions.start(List.of("mn0", "mn1", "mn2"), mn -> mn.equals("mn2") ? null : words(mn, 0), () -> List.of("mn2"));
        assertEquals(java.util.Set.of("mn0", "mn1"), regions.targets().keySet(), "mn2 removed, keeps no words");
        regions.applied(List.of(), mn -> null, List.of("mn0"));
        assertEquals(java.util.Set.of("mn1"), regions.targets().keySet());
        final IllegalStateException e = org.junit.jupiter.api.Assertions.assertThrows(IllegalStateException.class,
            () -> new LeaseRegions().start(List.of("mn0"), mn -> null, List::of));
        assertTrue(e.getMessage().contains("memory node mn0 keeps no lease words"), e.getMessage());
    }

    private static void await(final CountDownLatch latch) {
        try {
            assertTrue(latch.await(5, TimeUnit.SECONDS));
        } catch (final InterruptedException e) {
            throw new IllegalStateException(e);
        }
    }
}
