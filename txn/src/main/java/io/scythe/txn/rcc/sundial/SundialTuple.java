package io.scythe.txn.rcc.sundial;

import io.scythe.storage.ObjectLayout;
import io.scythe.txn.rcc.TupleFormat;
import org.agrona.DirectBuffer;

/**
 * RCC's SUNDIAL tuple (Fig. 3, §4.5) in our object format, and its rules, sans IO (on a compute node's READ image or
 * a memory node's table memory at {@code base}):
 * <pre>
 *  0   header: cas_lock (24) only an insert's lock; wts = version (32), ObjectLayout.VERSION_BUSY set while a
 *      commit rewrites the value; lock (48, the protocol word) = the writer's transaction id while it holds it
 *  64  value
 *  E   rts (u64), in the room the memory nodes give each slot (E = ObjectLayout.slotBytes(maxValueBytes))
 * </pre>
 * The lease of the version is {@code [wts, rts]}; a commit at ts sets {@code wts = rts = ts}.
 */
public final class SundialTuple {
    public static final int LOCK_OFFSET = TupleFormat.TTS_OFFSET;

    private SundialTuple() {
    }

    public static int rtsOffset(final int maxValueBytes) {
        return ObjectLayout.slotBytes(maxValueBytes);
    }

    /** Bytes one READ of the tuple takes: object and rts. */
    public static int tupleBytes(final int maxValueBytes) {
        return rtsOffset(maxValueBytes) + 8;
    }

    public static long wts(final DirectBuffer t, final int base) {
        return t.getLong(base + ObjectLayout.VERSION_OFFSET);
    }

    public static long rts(final DirectBuffer t, final int base, final int max) {
        return t.getLong(base + rtsOffset(max));
    }

    /**
     * The lowest {@code commit.tts} a writer that locked this image may take: {@code max(rts, wts) + 1}, above the
     * version it overwrites and every read of it (SUNDIAL's write rule).
     */
    public static long writerFloor(final DirectBuffer t, final int base, final int max) {
        return Math.max(rts(t, base, max), wts(t, base)) + 1;
    }

    public static long lock(final DirectBuffer t, final int base) {
        return t.getLong(base + LOCK_OFFSET);
    }

    public static boolean inserting(final DirectBuffer t, final int base) {
        return t.getLong(base + ObjectLayout.CAS_LOCK_OFFSET) != 0;
    }

    /** A commit is rewriting the value: the version word is BUSY. */
    public static boolean busy(final DirectBuffer t, final int base) {
        return (wts(t, base) & ObjectLayout.VERSION_BUSY) != 0;
    }

    /**
     * The end of the lease a reader of this image may take: {@code max(rts, wts)}, but only {@code wts} while a writer
     * holds the tuple. A one-sided renewal's CAS of rts that landed after the writer locked raised rts (and then
     * failed), and the writer commits above the rts it read when it locked, maybe below the raised one: a reader
     * trusting that rts would commit inside the writer's new version (a G2, rcc-sundial phantom crash seed 42). With
     * the lease at wts it must renew, which fails while the lock is held.
     */
    public static long readLease(final DirectBuffer t, final int base, final int max) {
        final long wts = wts(t, base);
        return lock(t, base) != 0 ? wts : Math.max(rts(t, base, max), wts);
    }

    /**
     * Renewal's condition: the version is still the one read ({@code wts}, BUSY clear) and nobody holds the tuple
     * (neither a writer nor an insert).
     */
    public static boolean renewable(final DirectBuffer t, final int base, final long wts) {
        return wts(t, base) == wts && lock(t, base) == 0 && !inserting(t, base);
    }
}
