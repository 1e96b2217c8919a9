package io.scythe.txn.rcc.mvcc;

import io.scythe.storage.ObjectLayout;
import io.scythe.txn.rcc.TupleFormat;
import org.agrona.DirectBuffer;

/**
 * RCC's MVCC tuple (Fig. 3, §4.4) in our object format, and its rules, sans IO: they read a tuple in any buffer (a
 * compute node's READ image, or a memory node's table memory in its RPC handlers) at offset {@code base}.
 *
 * <pre>
 *  object slot (one READ fetches it all)
 *  0   header (ObjectLayout): cas_lock (24) is only an insert's lock here; version (32) = wts of the newest version,
 *      with ObjectLayout.VERSION_BUSY set while a commit rewrites it; tts (48, the protocol word) = the writer's
 *      timestamp while it holds the write lock, else 0; value length (56) and flags (60: DELETED) of the newest
 *  64  the newest version's value (maxValueBytes, 8-byte aligned)
 *  E   rts (u64): the largest timestamp that read the tuple          E = ObjectLayout.slotBytes(maxValueBytes)
 *  E+8 three older versions, S = 16 + align8(maxValueBytes) bytes each:
 *      wts (u64) | length (i32) | flags (i32: PRESENT 1, DELETED 2) | value
 * </pre>
 * So the tuple keeps RCC's four versions: the newest in the object's own value (loaders, services and the end-of-run
 * checks see the current value where every protocol has it) and three older ones in the room the memory nodes give
 * each slot ({@link #room}, {@code Protocol#objectRoom}). Zeroed room is three absent slots.
 *
 * <p>Rules, for a transaction at timestamp {@code ctts}:
 * <ul>
 *   <li><b>R1</b> ({@link #pick}): the version with the largest {@code wts < ctts} among the four; none (all four newer,
 *       or absent) aborts the read, as in RCC ("no suitable version"; RCC measured 4.2 % of read aborts from it).
 *       The newest version is not a candidate while its version word is BUSY (a commit is rewriting it in place; the
 *       commit copied it to an older slot first, so it is still there).</li>
 *   <li><b>R2</b> ({@link #r2}): {@code tts == 0 || tts > ctts}: no pending writer, or one after this read.</li>
 *   <li><b>W1</b> ({@link #w1}): {@code ctts > max(wts)} and {@code ctts >= rts}. RCC writes {@code ctts > rts}; here a
 *       transaction may read a record and then write it, its read having raised rts to exactly its own ctts
 *       (timestamps are unique, so {@code rts == ctts} is its own read).</li>
 *   <li><b>W2</b>: {@code tts == 0} (the CAS from 0) and no insert in progress ({@code cas_lock == 0}).</li>
 *   <li><b>Commit</b> ({@link #victim}): the newest version moves to the older slot that is absent or else has the
 *       smallest wts (RCC's "overwrite the oldest"), and the new version becomes the newest. A reader that needed the
 *       version overwritten then finds none and aborts (R1).</li>
 * </ul>
 */
public final class MvccTuple {
    public static final int OLD_SLOTS = 3;
    public static final int PRESENT = 1;
    public static final int DELETED = 2;
    /** {@link #pick}: the newest version, in the object's own value. */
    public static final int NEWEST = -1;
    /** {@link #pick}: no version old enough. */
    public static final int NONE = -2;

    public static final int TTS_OFFSET = TupleFormat.TTS_OFFSET;

    private MvccTuple() {
    }

    /** Offset of rts in a tuple of a table with {@code maxValueBytes}. */
    public static int rtsOffset(final int maxValueBytes) {
        return ObjectLayout.slotBytes(maxValueBytes);
    }

    /** Bytes of one older slot. */
    public static int oldSlotBytes(final int maxValueBytes) {
        return 16 + ((maxValueBytes + 7) & ~7);
    }

    /** Offset of older slot {@code i}. */
    public static int oldSlotOffset(final int maxValueBytes, final int i) {
        return rtsOffset(maxValueBytes) + 8 + i * oldSlotBytes(maxValueBytes);
    }

    /** The room each object needs beyond header and value: rts and three older versions. */
    public static int room(final int maxValueBytes) {
        return 8 + OLD_SLOTS * oldSlotBytes(maxValueBytes);
    }

    /** Bytes of the whole tuple (what one READ fetches). */
    public static int tupleBytes(final int maxValueBytes) {
        return ObjectLayout.slotBytes(maxValueBytes) + room(maxValueBytes);
    }

    public static long tts(final DirectBuffer t, final int base) {
        return t.getLong(base + TTS_OFFSET);
    }

    public static long rts(final DirectBuffer t, final int base, final int max) {
        return t.getLong(base + rtsOffset(max));
    }

    /** The newest version's wts, without the BUSY bit. */
    public static long newestWts(final DirectBuffer t, final int base) {
        return t.getLong(base + ObjectLayout.VERSION_OFFSET) & ~ObjectLayout.VERSION_BUSY;
    }

    public static boolean busy(final DirectBuffer t, final int base) {
        return (t.getLong(base + ObjectLayout.VERSION_OFFSET) & ObjectLayout.VERSION_BUSY) != 0;
    }

    public static long oldWts(final DirectBuffer t, final int base, final int max, final int i) {
        return t.getLong(base + oldSlotOffset(max, i));
    }

    public static int oldFlags(final DirectBuffer t, final int base, final int max, final int i) {
        return t.getInt(base + oldSlotOffset(max, i) + 12);
    }

    public static boolean present(final DirectBuffer t, final int base, final int max, final int i) {
        return (oldFlags(t, base, max, i) & PRESENT) != 0;
    }

    /** The largest wts of the four versions. */
    public static long maxWts(final DirectBuffer t, final int base, final int max) {
        long m = newestWts(t, base);
        for (int i = 0; i < OLD_SLOTS; i++) {
            if (present(t, base, max, i)) {
                m = Math.max(m, oldWts(t, base, max, i));
            }
        }
        return m;
    }

    /** R1: {@link #NEWEST}, an older slot, or {@link #NONE}. */
    public static int pick(final DirectBuffer t, final int base, final int max, final long ctts) {
        int best = NONE;
        long bestWts = -1;
        if (!busy(t, base) && newestWts(t, base) < ctts) {
            best = NEWEST;
            bestWts = newestWts(t, base);
        }
        for (int i = 0; i < OLD_SLOTS; i++) {
            final long w = oldWts(t, base, max, i);
            if (present(t, base, max, i) && w < ctts && w > bestWts) { // a copy equal to the newest: the newest
                best = i;
                bestWts = w;
            }
        }
        return best;
    }

    /** R2. */
    public static boolean r2(final DirectBuffer t, final int base, final long ctts) {
        final long tts = tts(t, base);
        return tts == 0 || tts > ctts;
    }

    /** W1. */
    public static boolean w1(final DirectBuffer t, final int base, final int max, final long ctts) {
        return ctts > maxWts(t, base, max) && ctts >= rts(t, base, max);
    }

    /** No insert in progress (an insert holds the CAS word until its commit installs it). */
    public static boolean notInserting(final DirectBuffer t, final int base) {
        return t.getLong(base + ObjectLayout.CAS_LOCK_OFFSET) == 0;
    }

    /** The older slot a commit moves the newest version to: an absent one, else the oldest. */
    public static int victim(final DirectBuffer t, final int base, final int max) {
        int victim = 0;
        for (int i = 0; i < OLD_SLOTS; i++) {
            if (!present(t, base, max, i)) {
                return i;
            }
            if (oldWts(t, base, max, i) < oldWts(t, base, max, victim)) {
                victim = i;
            }
        }
        return victim;
    }

    /**
     * Whether two READs of one tuple saw the same versions (RCC's atomic read: only the wts must match; tts may
     * differ, R2 decides on it): the version word, BUSY bit included, and each older slot's wts and flags.
     */
    public static boolean sameVersions(final DirectBuffer a, final DirectBuffer b, final int max) {
        if (a.getLong(ObjectLayout.VERSION_OFFSET) != b.getLong(ObjectLayout.VERSION_OFFSET)
            || a.getShort(ObjectLayout.INCARNATION_OFFSET) != b.getShort(ObjectLayout.INCARNATION_OFFSET)) {
            return false;
        }
        for (int i = 0; i < OLD_SLOTS; i++) {
            if (oldWts(a, 0, max, i) != oldWts(b, 0, max, i) || oldFlags(a, 0, max, i) != oldFlags(b, 0, max, i)) {
                return false;
            }
        }
        return true;
    }

    /** The flags an older slot gets for the newest version of {@code t} (PRESENT, and DELETED for a tombstone). */
    public static int newestAsOldFlags(final DirectBuffer t, final int base) {
        return PRESENT | ((t.getShort(base + ObjectLayout.FLAGS_OFFSET) & ObjectLayout.FLAG_DELETED) != 0 ? DELETED
            : 0);
    }

    /**
     * Writes into {@code dst} at {@code at} the older-slot image of the newest version of {@code t} (wts, length,
     * flags, value): what a commit moves to {@link #victim}.
     */
    public static void newestAsOld(final DirectBuffer t, final int base, final int max,
                                   final org.agrona.MutableDirectBuffer dst, final int at) {
        final int length = Math.max(0, Math.min(t.getInt(base + ObjectLayout.VALUE_LENGTH_OFFSET), max));
        dst.putLong(at, newestWts(t, base));
        dst.putInt(at + 8, length);
        dst.putInt(at + 12, newestAsOldFlags(t, base));
        dst.putBytes(at + 16, t, base + ObjectLayout.VALUE_OFFSET, length);
    }
}
