package io.scythe.storage.mv;

import org.agrona.DirectBuffer;
import org.agrona.MutableDirectBuffer;
import org.agrona.concurrent.AtomicBuffer;

import static io.scythe.storage.mv.MvSlotDescriptor.ABORTED;
import static io.scythe.storage.mv.MvSlotDescriptor.COMMITTED;
import static io.scythe.storage.mv.MvSlotDescriptor.EMPTY;
import static io.scythe.storage.mv.MvSlotDescriptor.PENDING;
import static io.scythe.storage.mv.MvSlotDescriptor.state;
import static io.scythe.storage.mv.MvSlotDescriptor.wts;

/**
 * A flyweight over one multi-version object ({@link MvObjectDescriptor}): the memory node wraps its registered memory,
 * a compute node the image one READ brought back. The rules of timestamp ordering live here once, for both sides.
 * Head and tail words are read with volatile loads, in slot order and before the trailer, which is what makes the
 * rules hold on live memory too (see the package documentation).
 *
 * <p>Not thread-safe: one per thread or event loop, re-{@link #wrap wrapped} per object.
 */
public final class MvObject {
    /** {@link #find} found no live version at or below the timestamp among the slots. */
    public static final int NONE = -1;

    private final int slots;
    private final int maxValueBytes;
    private final int slotBytes;
    private final int tailOffset;
    private final int trailerOffset;
    private AtomicBuffer buffer;
    private int offset;
    /** The head of the slot the last {@link #find} returned (0 when none). */
    private long foundHead;

    public MvObject(final int slots, final int maxValueBytes) {
        MvObjectDescriptor.checkGeometry(slots, maxValueBytes);
        this.slots = slots;
        this.maxValueBytes = maxValueBytes;
        this.slotBytes = MvSlotDescriptor.slotBytes(maxValueBytes);
        this.tailOffset = MvSlotDescriptor.tailOffset(maxValueBytes);
        this.trailerOffset = MvObjectDescriptor.trailerOffset(slots, maxValueBytes);
    }

    /** Wraps the object at {@code offset} of {@code buffer}; returns this. */
    public MvObject wrap(final AtomicBuffer buffer, final int offset) {
        this.buffer = buffer;
        this.offset = offset;
        return this;
    }

    public AtomicBuffer buffer() {
        return buffer;
    }

    public int slots() {
        return slots;
    }

    public int maxValueBytes() {
        return maxValueBytes;
    }

    /** Bytes of the whole object: what one READ fetches. */
    public int objectBytes() {
        return trailerOffset + MvObjectDescriptor.TRAILER_BYTES;
    }

    // ------------------------------------------------------------------------------------------------ fields

    public long rts() {
        return buffer.getLongVolatile(offset + MvObjectDescriptor.RTS_OFFSET);
    }

    public long latch() {
        return buffer.getLongVolatile(offset + MvObjectDescriptor.LATCH_OFFSET);
    }

    public long key() {
        return buffer.getLong(offset + MvObjectDescriptor.KEY_OFFSET);
    }

    /** Offset in the buffer of slot {@code slot}. */
    public int slotOffset(final int slot) {
        return offset + MvObjectDescriptor.SLOTS_OFFSET + slot * slotBytes;
    }

    /** Offset in the buffer of slot {@code slot}'s head word (from the object's start when wrapped at 0). */
    public int headAt(final int slot) {
        return slotOffset(slot) + MvSlotDescriptor.HEAD_OFFSET;
    }

    /** Offset in the buffer of slot {@code slot}'s tail word. */
    public int tailAt(final int slot) {
        return slotOffset(slot) + tailOffset;
    }

    /** Offset in the buffer of {@code overflowWts}; {@code overflow} is the next word. */
    public int overflowWtsAt() {
        return offset + trailerOffset + MvObjectDescriptor.OVERFLOW_WTS_IN_TRAILER;
    }

    public int overflowAt() {
        return offset + trailerOffset + MvObjectDescriptor.OVERFLOW_IN_TRAILER;
    }

    public long head(final int slot) {
        return buffer.getLongVolatile(headAt(slot));
    }

    public long owner(final int slot) {
        return buffer.getLong(slotOffset(slot) + MvSlotDescriptor.OWNER_OFFSET);
    }

    public int valueLength(final int slot) {
        return buffer.getInt(slotOffset(slot) + MvSlotDescriptor.VALUE_LENGTH_OFFSET);
    }

    /** Offset in the buffer of slot {@code slot}'s value. */
    public int valueOffset(final int slot) {
        return slotOffset(slot) + MvSlotDescriptor.VALUE_OFFSET;
    }

    public long tail(final int slot) {
        return buffer.getLongVolatile(tailAt(slot));
    }

    public long overflowWts() {
        return buffer.getLongVolatile(overflowWtsAt());
    }

    public long overflow() {
        return buffer.getLongVolatile(overflowAt());
    }

    /**
     * Fills slot {@code slot} below its head: owner, value (none when {@code length} is negative: a pre-attached
     * write, whose value comes at commit) and tail ({@code tail}: the committed head when the value is final, else
     * 0). Plain stores: whoever publishes the head afterwards orders them.
     */
    public void fillSlot(final int slot, final long owner, final DirectBuffer value, final int valueOffset,
                         final int length, final long tail) {
        final int at = slotOffset(slot);
        buffer.putLong(at + MvSlotDescriptor.OWNER_OFFSET, owner);
        buffer.putInt(at + MvSlotDescriptor.VALUE_LENGTH_OFFSET, Math.max(length, 0));
        buffer.putInt(at + MvSlotDescriptor.VALUE_LENGTH_OFFSET + Integer.BYTES, 0);
        if (length > 0) {
            buffer.putBytes(at + MvSlotDescriptor.VALUE_OFFSET, value, valueOffset, length);
        }
        buffer.putLong(at + tailOffset, tail);
    }

    /** Copies slot {@code slot}'s value to {@code dst}; returns its length. */
    public int copyValue(final int slot, final MutableDirectBuffer dst, final int dstOffset) {
        final int length = valueLength(slot);
        if (length < 0 || length > maxValueBytes) {
            return -1; // torn: the slot is being rewritten; the tail check tells
        }
        dst.putBytes(dstOffset, buffer, valueOffset(slot), length);
        return length;
    }

    // ------------------------------------------------------------------------------------------------ reads

    /**
     * The slot of the version a reader at {@code ts} sees among the inline slots: the live (pending or committed)
     * one with the largest {@code wts <= ts}, a committed one only when whole ({@link #intact}); else {@link #NONE}.
     * If it is pending, the read must wait or give up; either way {@link #chainToSearch()} says whether a newer
     * committed version at or below {@code ts} may sit in the overflow chain instead. Aurogon reads at
     * {@code wts < ts}: it calls this with {@code ts - 1} (timestamps are unique).
     */
    public int find(final long ts) {
        int found = NONE;
        long foundWts = -1;
        for (int slot = 0; slot < slots; slot++) {
            final long head = head(slot);
            final int state = state(head);
            final long wts = wts(head);
            if ((state == PENDING || state == COMMITTED) && wts <= ts && wts > foundWts
                && (state == PENDING || intact(slot, head))) {
                found = slot;
                foundWts = wts;
                foundHead = head;
            }
        }
        if (found == NONE) {
            foundHead = 0;
        }
        return found;
    }

    /** The head word of the slot the last {@link #find} returned, as it read it. */
    public long foundHead() {
        return foundHead;
    }

    /** Whether the committed value of slot {@code slot} under {@code head} is whole: its tail matches. */
    public boolean intact(final int slot, final long head) {
        return tail(slot) == head;
    }

    /**
     * Where a reader must also look after {@link #find}: the overflow chain's address when it may
     * hold a committed version newer than the slot's (only when the memory node moved one out while the reader was
     * copying; otherwise the chain is older than every slot) or the slots hold nothing for it; else 0. Call after
     * {@link #find} (the trailer must be read after the slots) and walk from the address returned, not from a fresh
     * read of the trailer.
     */
    public long chainToSearch() {
        final long chainWts = overflowWts();
        final long chain = overflow();
        return chain != 0 && (foundHead == 0 || chainWts > wts(foundHead)) ? chain : 0;
    }

    // ------------------------------------------------------------------------------------------------ installs

    /**
     * Where a version at {@code ts} may be installed, by timestamp ordering: refused when a read at or above
     * {@code ts} happened ({@link MvStatus#TOO_LATE}), a committed version at or above it exists
     * ({@link MvStatus#SUPERSEDED}), a live version has that very timestamp ({@link MvStatus#DUPLICATE}), or, for an
     * exclusive install, any version is pending ({@link MvStatus#PENDING_EXISTS}). Pending versions above or below
     * {@code ts} do not refuse it: versions are ordered by their timestamps, not by when they were installed.
     *
     * @return a free slot (empty or rolled back), or a refusal, or {@link MvStatus#FULL}
     */
    public int installSlot(final long ts, final boolean exclusive) {
        if (ts <= rts()) {
            return MvStatus.TOO_LATE;
        }
        int free = MvStatus.FULL;
        for (int slot = 0; slot < slots; slot++) {
            final long head = head(slot);
            final int state = state(head);
            if (state == EMPTY || state == ABORTED) {
                if (free < 0) {
                    free = slot;
                }
                continue;
            }
            final long wts = wts(head);
            if (wts == ts) {
                return MvStatus.DUPLICATE;
            }
            if (state == COMMITTED && wts > ts) {
                return MvStatus.SUPERSEDED;
            }
            if (state == PENDING && exclusive) {
                return MvStatus.PENDING_EXISTS;
            }
        }
        return free;
    }

    /** A free slot (empty or rolled back), or -1. */
    public int freeSlot() {
        for (int slot = 0; slot < slots; slot++) {
            final int state = state(head(slot));
            if (state == EMPTY || state == ABORTED) {
                return slot;
            }
        }
        return -1;
    }

    /**
     * The slot the memory node may move to the overflow chain to make room: the oldest live version, if it is
     * committed and not the newest committed one; else -1. Moving only the oldest keeps the chain older than every
     * slot, and never moving the newest committed keeps timestamp ordering's checks inline.
     */
    public int evictable() {
        int oldest = -1;
        long oldestWts = Long.MAX_VALUE;
        int committed = 0;
        for (int slot = 0; slot < slots; slot++) {
            final long head = head(slot);
            if (MvSlotDescriptor.live(head)) {
                committed += state(head) == COMMITTED ? 1 : 0;
                if (wts(head) < oldestWts) {
                    oldest = slot;
                    oldestWts = wts(head);
                }
            }
        }
        return oldest >= 0 && committed > 1 && state(head(oldest)) == COMMITTED ? oldest : -1;
    }

    /** The committed slot with the largest {@code wts <= ts}, or -1 (the memory node's view: no torn slots). */
    public int newestCommittedAtOrBelow(final long ts) {
        int found = -1;
        long foundWts = -1;
        for (int slot = 0; slot < slots; slot++) {
            final long head = head(slot);
            if (state(head) == COMMITTED && wts(head) <= ts && wts(head) > foundWts) {
                found = slot;
                foundWts = wts(head);
            }
        }
        return found;
    }

    /** Slots whose version is pending. */
    public int pendingCount() {
        int pending = 0;
        for (int slot = 0; slot < slots; slot++) {
            pending += state(head(slot)) == PENDING ? 1 : 0;
        }
        return pending;
    }
}
