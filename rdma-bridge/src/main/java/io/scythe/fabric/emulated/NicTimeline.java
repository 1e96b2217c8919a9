package io.scythe.fabric.emulated;

import io.scythe.fabric.CostModel;
import io.scythe.fabric.MemoryKind;
import org.agrona.BitUtil;
import org.agrona.concurrent.AtomicBuffer;

/**
 * The shared timing state of one virtual NIC. Requesters on any thread (and, over shared memory, in any process)
 * book the NIC's resources with CASes on this memory, so work queues where the hardware queues.
 *
 * <p><b>Bandwidth resources</b> (the TX port, the responder's processing unit, the two atomic units) are booked on a
 * <em>wheel</em>: time is cut into slots of 2^shift ns and each slot word says up to where in the slot the resource
 * is booked. A booking starts in the slot of its ready time, after what is booked there, and continues into the
 * following slots' free time, so work is served in the order it becomes ready, not in the order it was booked (to
 * within one slot: a booking that finds a later one in its slot goes after it; bookings never overlap): a response booked for 60 us from now (a CAS queued on a
 * hot word) does not hold the port for a READ response due in 2 us, as a single free-at word would (found by review:
 * that made a hot word's CAS queue block every other verb of the MN). A slot word holds the slot's number (its tag)
 * and the booked nanoseconds; a word with an older tag is a slot of an earlier lap and counts as empty. Bookings
 * more than a wheel ahead (2048 slots: 262 us on the port, 524 us on the host atomic unit) are not recorded: the
 * model only undercounts load that far out.
 *
 * <p><b>Address buckets</b> serialise atomics on one 8-byte word; they are first come, first served queues with one
 * free-at word each, which is what the NIC's per-address lock is.
 *
 * <pre>
 *  +-----------------------------------------------------------------+
 *  | wheel: TX port              2048 slot words  [tag:44 | end:20]   |  offset 0       egress link
 *  | wheel: responder unit       2048 slot words                      |  offset 16 KiB  inbound READ/WRITE/SEND
 *  | wheel: atomic unit (host)   2048 slot words                      |  offset 32 KiB
 *  | wheel: atomic unit (device) 2048 slot words                      |  offset 48 KiB
 *  +-----------------------------------------------------------------+
 *  | address bucket 0 free at | bucket 1 | ... | bucket n-1 (u64)     |  offset 64 KiB  per-address atomic locks
 *  +-----------------------------------------------------------------+
 *  | QP cache: entry 0 | entry 1 | ... | entry m-1  (QP ids, u64)     |  after the buckets: direct-mapped
 *  +-----------------------------------------------------------------+
 *  | address bucket 0 last hold | bucket 1 | ... | bucket n-1 (u64)   |  after the QP cache: the hold of the
 *  +-----------------------------------------------------------------+  booking that ends at the free-at word
 * </pre>
 */
public final class NicTimeline {
    public static final int TX_PORT = 0;
    public static final int RESPONDER_UNIT = 1;
    public static final int ATOMIC_UNIT_HOST = 2;
    public static final int ATOMIC_UNIT_DEVICE = 3;
    private static final int RESOURCES = 4;
    static final int WHEEL_SLOTS = 2048;
    private static final int WHEEL_BYTES = WHEEL_SLOTS * Long.BYTES;
    /** Slot length per resource: small enough to order work finely, large enough to hold a few operations. */
    private static final int[] SLOT_SHIFT = {7, 7, 8, 7};
    private static final int USED_BITS = 20;
    private static final long USED_MASK = (1L << USED_BITS) - 1;
    private static final long TAG_MASK = (1L << (64 - USED_BITS)) - 1;
    public static final int BUCKETS_OFFSET = RESOURCES * WHEEL_BYTES;

    private final AtomicBuffer buffer;
    private final int bucketMask;
    private final int qpCacheOffset;
    private final int qpCacheEntries;
    private final int lastHoldOffset;

    /**
     * @param buffer at least {@link #length(int, int)} bytes, 8-byte aligned, zeroed or left by an earlier timeline
     */
    public NicTimeline(final AtomicBuffer buffer, final int buckets, final int qpCacheEntries) {
        if (Integer.bitCount(buckets) != 1) {
            throw new IllegalArgumentException("buckets=" + buckets + " must be a power of two");
        }
        if (buffer.capacity() < length(buckets, qpCacheEntries)) {
            throw new IllegalArgumentException("timeline buffer capacity=" + buffer.capacity() + " < "
                + length(buckets, qpCacheEntries));
        }
        buffer.verifyAlignment();
        this.buffer = buffer;
        this.bucketMask = buckets - 1;
        this.qpCacheOffset = BUCKETS_OFFSET + buckets * Long.BYTES;
        this.qpCacheEntries = qpCacheEntries;
        this.lastHoldOffset = qpCacheOffset + qpCacheEntries * Long.BYTES;
    }

    public NicTimeline(final AtomicBuffer buffer, final CostModel model) {
        this(buffer, model.atomicBuckets(), model.qpCacheEntries());
    }

    /** Bytes a timeline with {@code buckets} address buckets and a QP cache of {@code qpCacheEntries} needs. */
    public static int length(final int buckets, final int qpCacheEntries) {
        return Math.toIntExact(BUCKETS_OFFSET + (2L * buckets + qpCacheEntries) * Long.BYTES);
    }

    public static int length(final CostModel model) {
        return length(model.atomicBuckets(), model.qpCacheEntries());
    }

    /**
     * Looks the context of queue pair {@code qpId} up in this NIC's QP cache (direct-mapped, as a cheap stand-in
     * for the NIC's), installing it on a miss.
     *
     * @return whether it missed (the request pays a PCIe round trip to fetch the context)
     */
    public boolean qpContextMiss(final long qpId) {
        if (qpCacheEntries == 0) {
            return false;
        }
        final int entry = qpCacheOffset + (int) Long.remainderUnsigned(qpId * 0x9E3779B97F4A7C15L, qpCacheEntries)
            * Long.BYTES;
        if (buffer.getLongVolatile(entry) == qpId) {
            return false;
        }
        buffer.putLongVolatile(entry, qpId);
        return true;
    }

    /**
     * Books {@code durationNs} of bandwidth resource {@code resource} ({@link #TX_PORT}, {@link #RESPONDER_UNIT},
     * {@link #ATOMIC_UNIT_HOST}, {@link #ATOMIC_UNIT_DEVICE}) no earlier than {@code readyAtNs}, in the first free
     * capacity from there on (possibly split over slots, as packets of different QPs interleave on a link).
     *
     * @return {@code end - durationNs}, where {@code end} is when the booked work is done: callers may treat the
     *         booking as running from the returned time for {@code durationNs}
     */
    public long reserve(final int resource, final long readyAtNs, final long durationNs) {
        if (durationNs <= 0) {
            return readyAtNs;
        }
        final int shift = SLOT_SHIFT[resource];
        final long slotNs = 1L << shift;
        final int wheel = resource * WHEEL_BYTES;
        long t = readyAtNs;
        long remaining = durationNs;
        long end = readyAtNs;
        while (remaining > 0) {
            final long slot = t >> shift;
            final long slotStart = slot << shift;
            final long tag = slot & TAG_MASK;
            final int offset = wheel + (int) (slot & (WHEEL_SLOTS - 1)) * Long.BYTES;
            final long word = buffer.getLongVolatile(offset);
            final long wordTag = word >>> USED_BITS;
            final long used;
            if (wordTag == tag) {
                used = word & USED_MASK;
            } else if (word != 0 && ((wordTag - tag) & TAG_MASK) < (TAG_MASK >>> 1)) {
                // The slot holds a booking a whole wheel ahead of this one: beyond the horizon, not recorded.
                final long take = Math.min(remaining, slotStart + slotNs - t);
                remaining -= take;
                end = t + take;
                t = slotStart + slotNs;
                continue;
            } else {
                used = 0; // a slot of an earlier lap, or never used
            }
            final long position = Math.max(t, slotStart + used);
            final long free = slotStart + slotNs - position;
            if (free <= 0) {
                t = slotStart + slotNs;
                continue;
            }
            final long take = Math.min(free, remaining);
            if (buffer.compareAndSetLong(offset, word, (tag << USED_BITS) | (position + take - slotStart))) {
                remaining -= take;
                end = position + take;
                t = slotStart + slotNs;
            }
        }
        return end - durationNs;
    }

    /**
     * Books the first come, first served resource whose free-at word is at {@code offset} (an address bucket) for
     * {@code durationNs}, starting no earlier than {@code readyAtNs}.
     *
     * @return the booking's start time
     */
    public long reserveInTurn(final int offset, final long readyAtNs, final long durationNs) {
        return reserveInTurn(offset, readyAtNs, durationNs, durationNs);
    }

    /**
     * As {@link #reserveInTurn(int, long, long)}, but a booking that must wait (the resource is booked past
     * {@code readyAtNs}: a conflict) holds it for {@code conflictNs} instead of {@code durationNs}.
     *
     * @return the booking's start time: later than {@code readyAtNs} exactly when it waited
     */
    public long reserveInTurn(final int offset, final long readyAtNs, final long durationNs, final long conflictNs) {
        long free = buffer.getLongVolatile(offset);
        while (true) {
            final long start = Math.max(free, readyAtNs);
            final long witness = buffer.compareAndExchangeLong(offset, free,
                start + (start > readyAtNs ? conflictNs : durationNs));
            if (witness == free) {
                return start;
            }
            free = witness;
        }
    }

    /**
     * As {@link #reserveInTurn(int, long, long, long)}, but a booking that must wait holds the resource for {@code
     * conflictNs} plus {@code perQueuedNs} for every booking it finds on the resource at {@code readyAtNs} (the one
     * holding it and those queued behind that one) and itself: the per-address hold that grows with the queue it joins
     * ({@link CostModel}'s {@code atomicQueuedHoldHostNs}). The bookings found are counted as the time left on the
     * resource over the hold of its last booking (exact when the holds ahead are equal; the holds along one queue
     * grow, so it counts at most the bookings there are). {@code perQueuedNs} 0 is exactly the four-argument
     * method.
     *
     * @return when the booking ends (its start is later than {@code readyAtNs} exactly when it waited)
     */
    public long reserveInTurnUntil(final int offset, final long readyAtNs, final long durationNs, final long conflictNs,
                                   final long perQueuedNs) {
        final int holdAt = lastHoldOffset + (offset - BUCKETS_OFFSET);
        long free = buffer.getLongVolatile(offset);
        while (true) {
            final long start = Math.max(free, readyAtNs);
            final long hold;
            if (start == readyAtNs) {
                hold = durationNs;
            } else {
                final long last = buffer.getLongVolatile(holdAt);
                final long left = free - readyAtNs;
                final long found = last <= 0 ? 1 : Math.max(1, (left + last - 1) / last);
                hold = conflictNs + perQueuedNs * (found + 1);
            }
            final long witness = buffer.compareAndExchangeLong(offset, free, start + hold);
            if (witness == free) {
                buffer.putLongVolatile(holdAt, hold);
                return start + hold;
            }
            free = witness;
        }
    }

    public static int atomicUnit(final MemoryKind kind) {
        return kind == MemoryKind.DEVICE ? ATOMIC_UNIT_DEVICE : ATOMIC_UNIT_HOST;
    }

    /** Word of the address bucket that serialises atomics on the 8-byte word at {@code remoteAddress}. */
    public int bucketOffset(final long remoteAddress) {
        long h = remoteAddress >>> 3;
        h ^= h >>> 33;
        h *= 0xff51afd7ed558ccdL;
        h ^= h >>> 33;
        return BUCKETS_OFFSET + (((int) h) & bucketMask) * Long.BYTES;
    }

    /** How far into the slot holding {@code timeNs} {@code resource} is booked (for tests and diagnostics). */
    public long bookedAt(final int resource, final long timeNs) {
        final long slot = timeNs >> SLOT_SHIFT[resource];
        final long word = buffer.getLongVolatile(resource * WHEEL_BYTES
            + (int) (slot & (WHEEL_SLOTS - 1)) * Long.BYTES);
        return (word >>> USED_BITS) == (slot & TAG_MASK) ? word & USED_MASK : 0;
    }

    static {
        if (!BitUtil.isAligned(BUCKETS_OFFSET, 64)) {
            throw new AssertionError("bucket table must start on a cache line");
        }
    }
}
