package io.scythe.storage.mv;

/**
 * One inline version slot of a multi-version object ({@link MvObjectDescriptor}): a version's write timestamp and
 * state in one head word, the transaction that installed it, and its value bracketed by a tail word.
 *
 * <pre>
 *   0                   1                   2                   3
 *   0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
 *  +---+-----------------------------------------------------------+
 *  | S |               wts (62 bits) write timestamp                 |  0  head: S = state, written last
 *  +---+-----------------------------------------------------------+
 *  |                  owner (u64)  id of the installing transaction   |  8  recovery rolls back a dead one's
 *  +-------------------------------+-------------------------------+
 *  |  value length (u32)           |  reserved (u32)               | 16
 *  +-------------------------------+-------------------------------+
 *  |                  value (value length bytes of maxValueBytes,    | 24
 *  |                  8-byte padded)                                 |
 *  +---------------------------------------------------------------+
 *  |                  tail (u64)  = head of the committed version    | 24 + align8(maxValueBytes)
 *  |                  the value belongs to; 0 while it is rewritten  |
 *  +---------------------------------------------------------------+
 * </pre>
 *
 * States (S, bits 63-62 of the head): {@link #EMPTY} (0, so zeroed memory is a free slot), {@link #PENDING}
 * (installed, not yet decided: Aurogon's PENDING, RCC MVCC's {@code tts}), {@link #COMMITTED}, {@link #ABORTED}
 * (rolled back; free for the next install). Readers ignore EMPTY and ABORTED slots and never return a PENDING value.
 *
 * <p>The tail tells a whole committed value from one being recycled under a reader: a committed slot is only ever
 * rewritten by the memory node (eviction, reclamation), which zeroes the tail <em>before</em> touching anything else,
 * and a reader copies the slot in address order, head first and tail last. A reader that saw a committed head and
 * then a tail equal to it copied the value in between untouched.
 */
public final class MvSlotDescriptor {
    public static final int HEAD_OFFSET = 0;
    public static final int OWNER_OFFSET;
    public static final int VALUE_LENGTH_OFFSET;
    public static final int VALUE_OFFSET;
    /** Bytes before the value. */
    public static final int HEADER_BYTES;
    /** Bytes besides the value: header and tail. */
    public static final int OVERHEAD_BYTES;

    public static final int STATE_SHIFT = 62;
    public static final long WTS_MASK = (1L << STATE_SHIFT) - 1;
    /** Largest write timestamp a slot holds (the TSO's timestamps stay below 2^62). */
    public static final long MAX_WTS = WTS_MASK;
    public static final int EMPTY = 0;
    public static final int PENDING = 1;
    public static final int COMMITTED = 2;
    public static final int ABORTED = 3;

    static {
        int offset = HEAD_OFFSET + Long.BYTES;
        OWNER_OFFSET = offset;
        offset += Long.BYTES;
        VALUE_LENGTH_OFFSET = offset;
        offset += 2 * Integer.BYTES;
        VALUE_OFFSET = offset;
        HEADER_BYTES = offset;
        OVERHEAD_BYTES = HEADER_BYTES + Long.BYTES;
    }

    private MvSlotDescriptor() {
    }

    /** Bytes of one slot for values of up to {@code maxValueBytes}. */
    public static int slotBytes(final int maxValueBytes) {
        return OVERHEAD_BYTES + align8(maxValueBytes);
    }

    /** Offset of the tail word in a slot for values of up to {@code maxValueBytes}. */
    public static int tailOffset(final int maxValueBytes) {
        return VALUE_OFFSET + align8(maxValueBytes);
    }

    /** The head word of a version in {@code state} written at {@code wts}. */
    public static long head(final int state, final long wts) {
        if (wts < 0 || wts > MAX_WTS) {
            throw new IllegalArgumentException("wts=" + wts + " must be within [0, 2^62)");
        }
        return ((long) state << STATE_SHIFT) | wts;
    }

    public static int state(final long head) {
        return (int) (head >>> STATE_SHIFT);
    }

    public static long wts(final long head) {
        return head & WTS_MASK;
    }

    /** Whether the head is a version readers must take into account: pending or committed. */
    public static boolean live(final long head) {
        final int state = state(head);
        return state == PENDING || state == COMMITTED;
    }

    static int align8(final int bytes) {
        return (bytes + 7) & ~7;
    }
}
