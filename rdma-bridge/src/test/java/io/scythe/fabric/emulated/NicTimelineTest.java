package io.scythe.fabric.emulated;

import org.agrona.BufferUtil;
import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.api.Test;

import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicLong;

import static org.assertj.core.api.Assertions.assertThat;

/** Bookings on the NIC's wheels: in ready-time order, never overlapping, safe under concurrent booking. */
class NicTimelineTest {
    private static final long T0 = 1_000_000_000L;

    private static NicTimeline timeline() {
        return new NicTimeline(new UnsafeBuffer(BufferUtil.allocateDirectAligned(NicTimeline.length(64, 0), 64)),
            64, 0);
    }

    @Test
    void shouldServeWorkReadyEarlierFirstEvenWhenBookedAfterWorkReadyMuchLater() {
        final NicTimeline t = timeline();
        // A response booked 60 us ahead (a CAS queued on a hot word) ...
        assertThat(t.reserve(NicTimeline.TX_PORT, T0 + 60_000, 100)).isEqualTo(T0 + 60_000);
        // ... leaves the port free for a response ready now.
        assertThat(t.reserve(NicTimeline.TX_PORT, T0, 100)).isEqualTo(T0);
    }

    @Test
    void shouldGrowAWaitingBookingsHoldByTheBookingsItFindsOnTheAddress() {
        final NicTimeline t = timeline();
        final int word = t.bucketOffset(4096);
        // free: the plain hold
        assertThat(t.reserveInTurnUntil(word, T0, 600, 600, 2_400)).isEqualTo(T0 + 600);
        // 200 ns later: finds the holder (1) and counts itself: 600 + 2 x 2400
        assertThat(t.reserveInTurnUntil(word, T0 + 200, 600, 600, 2_400)).isEqualTo(T0 + 600 + 5_400);
        // 400 ns later: 5,600 ns left over a last hold of 5,400: 2 found, so 600 + 3 x 2400
        assertThat(t.reserveInTurnUntil(word, T0 + 400, 600, 600, 2_400)).isEqualTo(T0 + 6_000 + 7_800);
        // once it is free again the next one holds the plain 600 ns
        assertThat(t.reserveInTurnUntil(word, T0 + 20_000, 600, 600, 2_400)).isEqualTo(T0 + 20_600);
        // perQueued 0 is the constant conflict hold of reserveInTurn
        final NicTimeline constant = timeline();
        assertThat(constant.reserveInTurnUntil(word, T0, 600, 18_000, 0)).isEqualTo(T0 + 600);
        assertThat(constant.reserveInTurnUntil(word, T0 + 100, 600, 18_000, 0)).isEqualTo(T0 + 600 + 18_000);
    }

    @Test
    void shouldQueueBookingsReadyAtOnceBackToBackWithoutOverlap() {
        final NicTimeline t = timeline();
        long previousEnd = T0;
        for (int i = 0; i < 100; i++) {
            final long start = t.reserve(NicTimeline.ATOMIC_UNIT_HOST, T0, 400);
            assertThat(start).isGreaterThanOrEqualTo(previousEnd);
            previousEnd = start + 400;
        }
        assertThat(previousEnd - T0).as("100 x 400 ns on one unit").isBetween(40_000L, 40_000L + 2 * 256);
    }

    @Test
    void shouldSpanSlotsForLongBookingsAndLetThoseBeyondTheWheelThrough() {
        final NicTimeline t = timeline();
        assertThat(t.reserve(NicTimeline.RESPONDER_UNIT, T0, 10_000)).isEqualTo(T0);
        assertThat(t.reserve(NicTimeline.RESPONDER_UNIT, T0 + 5_000, 100)).isGreaterThanOrEqualTo(T0 + 10_000);
        // A booking longer than the whole wheel (2048 x 128 ns) still ends when its duration says.
        final long start = t.reserve(NicTimeline.TX_PORT, T0, 1_000_000);
        assertThat(start).isEqualTo(T0);
    }

    @Test
    void shouldNeverGiveTwoConcurrentBookersTheSameTime() throws Exception {
        final NicTimeline t = timeline();
        final int threads = 4;
        final int each = 500; // 200 us in all: within the wheel's 262 us
        final ConcurrentHashMap<Long, Boolean> starts = new ConcurrentHashMap<>();
        final AtomicLong clashes = new AtomicLong();
        final CountDownLatch done = new CountDownLatch(threads);
        for (int i = 0; i < threads; i++) {
            new Thread(() -> {
                for (int n = 0; n < each; n++) {
                    // 100 ns bookings, all ready at T0: each must get its own 100 ns.
                    if (starts.put(t.reserve(NicTimeline.TX_PORT, T0, 100), Boolean.TRUE) != null) {
                        clashes.incrementAndGet();
                    }
                }
                done.countDown();
            }).start();
        }
        done.await();
        assertThat(clashes.get()).isZero();
        final long last = starts.keySet().stream().mapToLong(Long::longValue).max().orElseThrow();
        // 2,000 x 100 ns, plus at most one slot's tail (28 ns) lost per slot.
        assertThat(last + 100 - T0).isBetween(200_000L, 200_000L * 128 / 100 + 128);
    }
}
