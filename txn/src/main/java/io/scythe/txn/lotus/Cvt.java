package io.scythe.txn.lotus;

import io.scythe.storage.ObjectLayout;
import org.agrona.DirectBuffer;
import org.agrona.MutableDirectBuffer;

/**
 * Lotus's memory-node store of one record (lotus.md §2.6, paper §7.1), sans IO: its consecutive version table (CVT) and
 * its full-record versions, kept in the room each object slot of a lotus run has after its value
 * ({@code Protocol#objectRoom}), and the rules on an image of them (a compute node's READ, or a memory node's memory).
 *
 * <pre>
 *  object slot: header (ObjectLayout) | home value | room:
 *  R+0   CVT header: key (u64) | table id (u32, +1: 0 is a CVT never written) | N (u32)
 *  R+16  N cells of 32 bytes: headCV (u8) | valid (u8) | deleted (u8) | 0 | length (i32) | address (u64) |
 *        version (u64, INVISIBLE while its writer has no T_commit) | tailCV (u8) | 0 ...
 *  R+16+32N  N version records: full records in 64-byte cache lines, each line's byte 0 its CV, 63 value bytes
 * </pre>
 * A cell's address is its record's offset in the object slot (the same on the primary and every backup; the paper's
 * 64-bit address). One READ of the CVT (16 + 32N bytes) then one READ of a record: the paper's two READs.
 *
 * <p>The home value and header stay where every protocol keeps them, but a commit writes only the header's version word
 * (after its visible write: recovery's sign that it landed); the value stays as loaded or inserted. A CVT never
 * written (a loaded or inserted record no lotus writer touched yet) has one version: the home, at the header's version;
 * once written, readers take every version from it, and the end-of-run checks the newest ({@link #committedValue}).
 *
 * <p>Rules:
 * <ul>
 *   <li>A cell counts when valid and its head and tail CVs agree (else it is being rewritten: the reader aborts).</li>
 *   <li><b>Read at T_start</b> ({@link #pick}): the valid visible cell with the largest version below T_start; the
 *       image also tells whether a newer visible version exists (a locked read aborts: serializability, and SI's
 *       first committer wins) and whether an INVISIBLE cell exists (a lock-free read aborts: see below).</li>
 *   <li>A record counts only if every line's CV equals its cell's CV (a record is rewritten only in the oldest cell,
 *       with the CV one higher, so a reader overlapping the rewrite sees another CV).</li>
 *   <li><b>Write</b> ({@link #victim}), under the key's write lock: a free cell, else one left INVISIBLE (its writer is
 *       gone: nobody else writes under our lock), else the oldest. The new record and the cell go INVISIBLE with CV
 *       + 1 before T_commit; the version word becomes T_commit after.</li>
 *   <li><b>GC</b> ({@link #expired}): besides overwriting the oldest, a write clears cells whose version is more than
 *       {@link #GC_AFTER_NS} below the writer's clock (its T_commit; the TSO's timestamps are clock nanoseconds), never
 *       the newest visible one.</li>
 * </ul>
 *
 * <p><b>The window the digest flags</b> (a lock-free reader with T_start above a writer's T_commit seeing some of its
 * cells visible and others INVISIBLE) is closed by aborting a lock-free read that meets an INVISIBLE cell: a writer's
 * INVISIBLE writes all landed before it asked for T_commit, so a reader whose T_start is above it finds each of its
 * cells INVISIBLE (abort) or visible, never the older version beside a newer one. (The reader first asks for the
 * key's read lock: granted only when no live writer holds the key, so the cell is a gone writer's, which it settles.)
 */
public final class Cvt {
    /** The version of a cell whose writer has no T_commit yet. */
    public static final long INVISIBLE = -1L;
    /** Lotus's default number of versions per record. */
    public static final int DEFAULT_VERSIONS = 2;
    /** Cells older than this below the writer's clock are cleared (the paper's 500 ms). */
    public static final long GC_AFTER_NS = 500_000_000L;
    public static final int HEADER_BYTES = 16;
    public static final int CELL_BYTES = 32;
    public static final int LINE = 64;

    static final int CELL_HEAD_CV = 0;
    static final int CELL_VALID = 1;
    static final int CELL_DELETED = 2;
    static final int CELL_LENGTH = 4;
    static final int CELL_ADDRESS = 8;
    static final int CELL_VERSION = 16;
    static final int CELL_TAIL_CV = 24;

    /** What {@link #pick} returns when no version is old enough. */
    public static final int NONE = -1;
    /** What {@link #pick} returns when a cell is torn (being rewritten). */
    public static final int TORN = -2;

    private Cvt() {
    }

    /** Offset of the CVT in an object slot of a table with {@code maxValueBytes}. */
    public static int offset(final int maxValueBytes) {
        return ObjectLayout.slotBytes(maxValueBytes);
    }

    /** Bytes of one version record: whole 64-byte lines of 63 value bytes and a CV each. */
    public static int recordBytes(final int maxValueBytes) {
        return Math.max(1, (maxValueBytes + LINE - 2) / (LINE - 1)) * LINE;
    }

    /** Bytes of the CVT of {@code versions} cells (what its READ fetches). */
    public static int cvtBytes(final int versions) {
        return HEADER_BYTES + versions * CELL_BYTES;
    }

    /** The room an object slot needs beyond its header and value: the CVT and {@code versions} records. */
    public static int room(final int maxValueBytes, final int versions) {
        if (versions < 2 || versions > 64) {
            throw new IllegalArgumentException("lotus keeps 2 to 64 versions per record, not " + versions);
        }
        return cvtBytes(versions) + versions * recordBytes(maxValueBytes);
    }

    /** Offset in the object slot of record {@code i}. */
    public static int recordOffset(final int maxValueBytes, final int versions, final int i) {
        return offset(maxValueBytes) + cvtBytes(versions) + i * recordBytes(maxValueBytes);
    }

    /** Offset in a CVT image of cell {@code i}. */
    public static int cell(final int i) {
        return HEADER_BYTES + i * CELL_BYTES;
    }

    /** Whether the CVT at {@code base} was ever written (its table word set). */
    public static boolean written(final DirectBuffer cvt, final int base) {
        return cvt.getInt(base + 8) != 0;
    }

    public static long key(final DirectBuffer cvt, final int base) {
        return cvt.getLong(base);
    }

    public static int versions(final DirectBuffer cvt, final int base) {
        return cvt.getInt(base + 12);
    }

    public static boolean valid(final DirectBuffer cvt, final int base, final int i) {
        return cvt.getByte(base + cell(i) + CELL_VALID) != 0;
    }

    /**
     * Whether the CVT at {@code base} has no valid cell: an insert's CVT (written whole, its one cell) whose cell was
     * cleared, by its abort or by the settling of a gone inserter's; its home says what the key is (deleted by the
     * ABANDON).
     */
    public static boolean empty(final DirectBuffer cvt, final int base) {
        for (int i = 0; i < versions(cvt, base); i++) {
            if (valid(cvt, base, i)) {
                return false;
            }
        }
        return true;
    }

    public static boolean torn(final DirectBuffer cvt, final int base, final int i) {
        return cvt.getByte(base + cell(i) + CELL_HEAD_CV) != cvt.getByte(base + cell(i) + CELL_TAIL_CV);
    }

    public static long version(final DirectBuffer cvt, final int base, final int i) {
        return cvt.getLong(base + cell(i) + CELL_VERSION);
    }

    public static byte cv(final DirectBuffer cvt, final int base, final int i) {
        return cvt.getByte(base + cell(i) + CELL_HEAD_CV);
    }

    public static int length(final DirectBuffer cvt, final int base, final int i) {
        return cvt.getInt(base + cell(i) + CELL_LENGTH);
    }

    public static boolean deleted(final DirectBuffer cvt, final int base, final int i) {
        return cvt.getByte(base + cell(i) + CELL_DELETED) != 0;
    }

    public static long address(final DirectBuffer cvt, final int base, final int i) {
        return cvt.getLong(base + cell(i) + CELL_ADDRESS);
    }

    /** What a CVT image says to a reader at {@code start}: the cell to read, and what else it saw. */
    public record Pick(int cell, boolean newer, boolean invisible) {
    }

    /**
     * The valid visible cell with the largest version below {@code start} ({@link #NONE}: none; {@link #TORN}: a
     * cell is being rewritten), whether a visible version at or above {@code start} exists, and whether a cell is
     * INVISIBLE.
     */
    public static Pick pick(final DirectBuffer cvt, final int base, final long start) {
        final int n = versions(cvt, base);
        int best = NONE;
        long bestVersion = Long.MIN_VALUE;
        boolean newer = false;
        boolean invisible = false;
        for (int i = 0; i < n; i++) {
            if (!valid(cvt, base, i)) {
                continue;
            }
            if (torn(cvt, base, i)) {
                return new Pick(TORN, newer, invisible);
            }
            final long v = version(cvt, base, i);
            if (v == INVISIBLE) {
                invisible = true;
            } else if (Long.compareUnsigned(v, start) >= 0) {
                newer = true;
            } else if (best == NONE || v > bestVersion) {
                best = i;
                bestVersion = v;
            }
        }
        return new Pick(best, newer, invisible);
    }

    /** The newest valid visible cell, or {@link #NONE}. */
    public static int newest(final DirectBuffer cvt, final int base) {
        final int n = versions(cvt, base);
        int best = NONE;
        for (int i = 0; i < n; i++) {
            if (valid(cvt, base, i) && version(cvt, base, i) != INVISIBLE
                && (best == NONE || version(cvt, base, i) > version(cvt, base, best))) {
                best = i;
            }
        }
        return best;
    }

    /**
     * The cell a writer (holding the key's write lock) writes its new version to: a free one, else one left
     * INVISIBLE, else the oldest visible one (GC by overwriting, lotus.md §2.6). Never the newest visible one.
     */
    public static int victim(final DirectBuffer cvt, final int base) {
        final int n = versions(cvt, base);
        final int newest = newest(cvt, base);
        int oldest = NONE;
        for (int i = 0; i < n; i++) {
            if (i == newest) {
                continue;
            }
            if (!valid(cvt, base, i) || version(cvt, base, i) == INVISIBLE) {
                return i;
            }
            if (oldest == NONE || version(cvt, base, i) < version(cvt, base, oldest)) {
                oldest = i;
            }
        }
        return oldest;
    }

    /** Whether cell {@code i}, not the newest visible one, is older than {@link #GC_AFTER_NS} below {@code now}. */
    public static boolean expired(final DirectBuffer cvt, final int base, final int i, final long now) {
        return i != newest(cvt, base) && valid(cvt, base, i) && version(cvt, base, i) != INVISIBLE
            && now - version(cvt, base, i) > GC_AFTER_NS;
    }

    /** Writes a whole CVT header (the first write of a record's CVT) at {@code base}. */
    public static void header(final MutableDirectBuffer cvt, final int base, final long key, final int tableId,
                              final int versions) {
        cvt.putLong(base, key);
        cvt.putInt(base + 8, tableId + 1);
        cvt.putInt(base + 12, versions);
    }

    /** Writes cell {@code i}'s 32 bytes at {@code base} (a CVT image, or a buffer to WRITE: base is the cell). */
    public static void putCell(final MutableDirectBuffer b, final int at, final byte cv, final boolean valid,
                               final boolean deleted, final int length, final long address, final long version) {
        b.setMemory(at, CELL_BYTES, (byte) 0);
        b.putByte(at + CELL_HEAD_CV, cv);
        b.putByte(at + CELL_VALID, (byte) (valid ? 1 : 0));
        b.putByte(at + CELL_DELETED, (byte) (deleted ? 1 : 0));
        b.putInt(at + CELL_LENGTH, length);
        b.putLong(at + CELL_ADDRESS, address);
        b.putLong(at + CELL_VERSION, version);
        b.putByte(at + CELL_TAIL_CV, cv);
    }

    /** Lays {@code length} bytes of {@code value} out as a record at {@code at} of {@code b}, every line's CV {@code cv}. */
    public static void putRecord(final MutableDirectBuffer b, final int at, final int recordBytes, final byte cv,
                                 final DirectBuffer value, final int offset, final int length) {
        b.setMemory(at, recordBytes, (byte) 0);
        for (int line = 0, done = 0; line * LINE < recordBytes; line++) {
            b.putByte(at + line * LINE, cv);
            final int n = Math.min(LINE - 1, length - done);
            if (n > 0) {
                b.putBytes(at + line * LINE + 1, value, offset + done, n);
                done += n;
            }
        }
    }

    /**
     * Copies the {@code length} value bytes of the record at {@code at} of {@code b} to {@code dst} at
     * {@code dstOffset}, if every line's CV is {@code cv}; returns whether it was (else the record was torn).
     */
    public static boolean getRecord(final DirectBuffer b, final int at, final int recordBytes, final byte cv,
                                    final int length, final MutableDirectBuffer dst, final int dstOffset) {
        for (int line = 0; line * LINE < recordBytes; line++) {
            if (b.getByte(at + line * LINE) != cv) {
                return false;
            }
        }
        for (int line = 0, done = 0; done < length; line++) {
            final int n = Math.min(LINE - 1, length - done);
            dst.putBytes(dstOffset + done, b, at + line * LINE + 1, n);
            done += n;
        }
        return true;
    }

    /**
     * The valid INVISIBLE cells of the CVT of the object at {@code object} of {@code table}, read from memory directly
     * (racy while transactions run): 0 when its slot holds no CVT ({@link #cvtAt}). A writer's are there from its
     * INVISIBLE write to its visible one; once no transaction runs, one is a gone writer's that nobody settled.
     */
    public static int invisibleCells(final io.scythe.storage.Table table, final int object) {
        final int at = cvtAt(table, object, Long.MIN_VALUE);
        if (at < 0) {
            return 0;
        }
        return invisible(table.objectMemory(), at);
    }

    /** The valid INVISIBLE cells of the CVT image at {@code base}. */
    public static int invisible(final DirectBuffer cvt, final int base) {
        int invisible = 0;
        for (int i = 0; i < versions(cvt, base); i++) {
            if (valid(cvt, base, i) && version(cvt, base, i) == INVISIBLE) {
                invisible++;
            }
        }
        return invisible;
    }

    /**
     * Where the CVT of the object at {@code object} of {@code table} is in its memory, or -1 when the slot holds none
     * of Lotus's (another protocol's table, a CVT never written, or one of another key than {@code key}; any key
     * with {@code Long.MIN_VALUE}).
     */
    /**
     * The table id a CVT of {@code table} carries: its primary's (a writer writes the same CVT to every copy), so a
     * backup copy ({@code BackupTables#schemaOf}: its id is the primary's plus a stride per backup) is read as one too.
     */
    private static int primaryId(final io.scythe.storage.Table table) {
        return primaryId(table.schema().id());
    }

    /** The id of the primary of the table (or backup copy) of id {@code id}: what its CVTs carry. */
    static int primaryId(final int id) {
        return id % io.scythe.storage.BackupTables.ID_STRIDE;
    }

    private static int cvtAt(final io.scythe.storage.Table table, final int object, final long key) {
        final int max = table.schema().maxValueBytes();
        final int at = object + offset(max);
        final org.agrona.concurrent.AtomicBuffer m = table.objectMemory();
        if (table.objectSlotBytes() < offset(max) + HEADER_BYTES || !written(m, at)) {
            return -1;
        }
        final int n = versions(m, at);
        // Another protocol's slot can hold anything where a CVT would be (RCC MVCC's version slots, say): a count
        // out of Lotus's range is not a CVT, never an error.
        if (n < 2 || n > 64 || table.objectSlotBytes() != offset(max) + room(max, n)
            || key != Long.MIN_VALUE && key(m, at) != key || m.getInt(at + 8) != primaryId(table) + 1) {
            return -1;
        }
        return at;
    }

    /**
     * The end-of-run view ({@code ObjectProbe#committedValue}) of the object at {@code object} of {@code table} (key
     * {@code key}), read from memory directly (no transaction runs) and never written: {@code ObjectProbe#NOT_MINE}
     * when its slot holds no CVT of it (another protocol's table, or a CVT never written: the home is its one
     * version); null when its newest visible version is deleted (or it has none); else a copy of its newest visible
     * version (the home value is stale once the CVT is written: a commit writes only the home's version word).
     */
    public static org.agrona.concurrent.AtomicBuffer committedValue(final io.scythe.storage.Table table,
                                                                    final int object, final long key) {
        final int max = table.schema().maxValueBytes();
        final int at = cvtAt(table, object, key);
        if (at < 0) {
            return io.scythe.txn.spi.ObjectProbe.NOT_MINE;
        }
        final org.agrona.concurrent.AtomicBuffer m = table.objectMemory();
        final int cell = newest(m, at);
        if (cell == NONE || deleted(m, at, cell)) {
            return null;
        }
        final int length = length(m, at, cell);
        final org.agrona.concurrent.UnsafeBuffer value = new org.agrona.concurrent.UnsafeBuffer(new byte[max]);
        if (length < 0 || length > max || !getRecord(m, object + (int) address(m, at, cell), recordBytes(max),
            cv(m, at, cell), length, value, 0)) {
            throw new IllegalStateException("lotus: key " + key + " of " + table.schema().name() + " has a torn newest "
                + "version at the end of the run");
        }
        return value;
    }
}
