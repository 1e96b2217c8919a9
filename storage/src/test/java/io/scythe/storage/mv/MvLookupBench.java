package io.scythe.storage.mv;

import org.agrona.concurrent.UnsafeBuffer;

import java.lang.management.ManagementFactory;
import java.util.SplittableRandom;

import static io.scythe.storage.mv.MvSlotDescriptor.COMMITTED;
import static io.scythe.storage.mv.MvSlotDescriptor.PENDING;
import static io.scythe.storage.mv.MvSlotDescriptor.head;

/**
 * What a compute node spends deciding, on an image one READ brought back, which version a reader sees: lookups per
 * second and bytes allocated per lookup, for RCC's 4 slots of YCSB's 40-byte values and for 8 slots. Not a test (speed
 * goals live in benchmarks, never in timed tests); run it by hand:
 * <pre>
 *   java --add-exports java.base/jdk.internal.misc=ALL-UNNAMED \
 *     -cp storage/target/classes:storage/target/test-classes:AGRONA_JAR io.scythe.storage.mv.MvLookupBench
 * </pre>
 */
public final class MvLookupBench {
    private static final int IMAGES = 1024;
    private static final int ROUNDS = 7;
    private static final int LOOKUPS_PER_ROUND = 20_000_000;

    private MvLookupBench() {
    }

    public static void main(final String[] args) {
        for (final int slots : new int[] {4, 8}) {
            run(slots, 40);
        }
    }

    private static void run(final int slots, final int valueBytes) {
        final MvObject view = new MvObject(slots, valueBytes);
        final UnsafeBuffer[] images = images(slots, valueBytes, view);
        final SplittableRandom random = new SplittableRandom(7);
        final long[] timestamps = new long[4096];
        for (int i = 0; i < timestamps.length; i++) {
            timestamps[i] = random.nextLong(10 * slots + 10);
        }
        final com.sun.management.ThreadMXBean threads =
            (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
        long sink = 0;
        double best = 0;
        long allocated = 0;
        for (int round = 0; round < ROUNDS; round++) {
            final long bytesBefore = threads.getCurrentThreadAllocatedBytes();
            final long start = System.nanoTime();
            for (int i = 0; i < LOOKUPS_PER_ROUND; i++) {
                view.wrap(images[i & (IMAGES - 1)], 0);
                final int slot = view.find(timestamps[i & (timestamps.length - 1)]);
                sink += slot + view.chainToSearch();
            }
            final long ns = System.nanoTime() - start;
            allocated = threads.getCurrentThreadAllocatedBytes() - bytesBefore;
            best = Math.max(best, LOOKUPS_PER_ROUND * 1e9 / ns);
        }
        System.out.printf("%d slots x %d B (image %d B): %.1f M lookups/s (best of %d rounds), %.4f B allocated per "
            + "lookup [%d]%n", slots, valueBytes, view.objectBytes(), best / 1e6, ROUNDS,
            (double) allocated / LOOKUPS_PER_ROUND, sink & 1);
    }

    /** Images of objects whose slots hold committed versions 10, 20, ... and one pending at the top. */
    private static UnsafeBuffer[] images(final int slots, final int valueBytes, final MvObject view) {
        final UnsafeBuffer value = new UnsafeBuffer(new byte[valueBytes]);
        final UnsafeBuffer[] images = new UnsafeBuffer[IMAGES];
        for (int i = 0; i < IMAGES; i++) {
            images[i] = new UnsafeBuffer(new byte[MvObjectDescriptor.objectBytes(slots, valueBytes)]);
            view.wrap(images[i], 0);
            for (int slot = 0; slot < slots; slot++) {
                final int state = slot == slots - 1 ? PENDING : COMMITTED;
                final long wts = 10L * (slot + 1) + (i & 3);
                view.fillSlot(slot, 1, value, 0, valueBytes, state == COMMITTED ? head(COMMITTED, wts) : 0);
                images[i].putLong(view.headAt(slot), head(state, wts));
            }
            images[i].putLong(view.overflowWtsAt(), 5);
            images[i].putLong(view.overflowAt(), 0x1000_0000_0000L);
        }
        return images;
    }
}
