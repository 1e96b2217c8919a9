package io.scythe.storage.mv;

/**
 * The layout of one multi-version object in a memory node's registered memory: a header of whole words, a fixed
 * number of inline version slots ({@link MvSlotDescriptor}), and a trailer naming the overflow chain of older
 * versions in the table's version log ({@link io.scythe.storage.VersionLayout} records). One READ of
 * {@link #objectBytes} bytes fetches the read timestamp, the latch and every inline version with its state.
 *
 * <pre>
 *   0                   1                   2                   3
 *   0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
 *  +---------------------------------------------------------------+
 *  |                  rts (u64)  largest timestamp read at           |  0  atomics only: CN CAS/FAA, MN CAS
 *  +---------------------------------------------------------------+
 *  |                  latch (u64)  0 free, else the installer's id   |  8  atomics only: CN CAS, MN CAS
 *  +---------------------------------------------------------------+
 *  |                  key (u64)                                      | 16  set once, at load
 *  +---------------------------------------------------------------+
 *  |                  slot 0 (MvSlotDescriptor, slotBytes)           | 24
 *  |                  ...                                            |
 *  |                  slot K-1                                       |
 *  +---------------------------------------------------------------+
 *  |                  overflowWts (u64)  largest wts ever moved to   | 24 + K x slotBytes  MN only
 *  |                  the overflow chain; 0 when none was            |
 *  +---------------------------------------------------------------+
 *  |                  overflow (u64)  address of the newest record   | 32 + K x slotBytes  MN only
 *  |                  of the overflow chain; 0 when there is none    |
 *  +---------------------------------------------------------------+
 * </pre>
 *
 * Who writes what: {@code rts} and {@code latch} are changed only by atomics (never by a WRITE: IB spec
 * &sect;10.7.2.3 makes no promise between a WRITE and an atomic on one word). A slot's words are written by one party
 * at a time: the latch holder fills a free slot; the installer alone decides its pending slot; only the memory node
 * recycles a committed slot. The trailer is the memory node's. The trailer comes after the slots on purpose: a READ
 * copies in address order, so a reader that missed a version because the memory node had just moved it out of its
 * slot reads the trailer afterwards and finds it in the chain.
 */
public final class MvObjectDescriptor {
    public static final int RTS_OFFSET = 0;
    public static final int LATCH_OFFSET;
    public static final int KEY_OFFSET;
    /** Offset of slot 0. */
    public static final int SLOTS_OFFSET;
    /** Bytes of the header (before slot 0). */
    public static final int HEADER_BYTES;
    /** Bytes of the trailer (after the last slot). */
    public static final int TRAILER_BYTES = 2 * Long.BYTES;
    /** Offset of {@code overflowWts} from the trailer's start; {@code overflow} follows it. */
    public static final int OVERFLOW_WTS_IN_TRAILER = 0;
    public static final int OVERFLOW_IN_TRAILER = Long.BYTES;

    /** Fewest inline slots: the newest committed version (never moved out) and room for one pending. */
    public static final int MIN_SLOTS = 2;
    /** Most inline slots (a READ fetches them all). */
    public static final int MAX_SLOTS = 16;
    /** RCC MVCC's choice (§4.4: at most 4.2 % of its read aborts came from running out of 4 slots). */
    public static final int DEFAULT_SLOTS = 4;

    /** The latch holder id of the memory node's own structural work (eviction, reclamation). */
    public static final long MEMORY_NODE_OWNER = -1L;

    static {
        int offset = RTS_OFFSET + Long.BYTES;
        LATCH_OFFSET = offset;
        offset += Long.BYTES;
        KEY_OFFSET = offset;
        offset += Long.BYTES;
        SLOTS_OFFSET = offset;
        HEADER_BYTES = offset;
    }

    private MvObjectDescriptor() {
    }

    /** Bytes of one object with {@code slots} inline slots for values of up to {@code maxValueBytes}. */
    public static int objectBytes(final int slots, final int maxValueBytes) {
        return HEADER_BYTES + slots * MvSlotDescriptor.slotBytes(maxValueBytes) + TRAILER_BYTES;
    }

    /** Offset of slot {@code slot} in an object. */
    public static int slotOffset(final int slot, final int maxValueBytes) {
        return SLOTS_OFFSET + slot * MvSlotDescriptor.slotBytes(maxValueBytes);
    }

    /** Offset of the trailer in an object with {@code slots} slots. */
    public static int trailerOffset(final int slots, final int maxValueBytes) {
        return SLOTS_OFFSET + slots * MvSlotDescriptor.slotBytes(maxValueBytes);
    }

    /**
     * Checks a geometry before memory is laid out with it.
     *
     * @throws IllegalArgumentException when the slot count or value size is out of range, or an object would not fit
     *     a single READ of at most 2 GiB
     */
    public static void checkGeometry(final int slots, final int maxValueBytes) {
        if (slots < MIN_SLOTS || slots > MAX_SLOTS) {
            throw new IllegalArgumentException("inline slots=" + slots + " must be within [" + MIN_SLOTS + ", "
                + MAX_SLOTS + "]");
        }
        if (maxValueBytes <= 0 || (long) slots * MvSlotDescriptor.slotBytes(maxValueBytes) > Integer.MAX_VALUE / 2) {
            throw new IllegalArgumentException("maxValueBytes=" + maxValueBytes + " out of range for " + slots
                + " slots");
        }
    }

    /** Checks that {@code capacity} bytes hold at least one object of the geometry. */
    public static void checkCapacity(final long capacity, final int slots, final int maxValueBytes) {
        if (capacity < objectBytes(slots, maxValueBytes)) {
            throw new IllegalStateException("capacity=" + capacity + " is less than one object of "
                + objectBytes(slots, maxValueBytes) + " bytes");
        }
    }
}
