package io.scythe.txn.motor;

import io.scythe.bridge.Doorbell;
import io.scythe.storage.ObjectLayout;
import io.scythe.txn.lotus.Cvt;
import org.agrona.DirectBuffer;
import org.agrona.MutableDirectBuffer;
import org.agrona.concurrent.UnsafeBuffer;

import java.util.ArrayList;
import java.util.List;

/**
 * Motor's rules on an image of one object (sans IO): what a reader at T_start takes, and what a writer holding the
 * object's CAS lock writes. The cells and records are {@link Cvt}'s layout (Lotus's store: valid, length, address,
 * version, head and tail check values; full records with a check value per cache line), read only here.
 *
 * <pre>
 *  object slot: header (CAS lock word, version, ...) | home value | CVT header | N cells | N records
 *  a reader's READ: [0, {@link #readBytes}) = header, home value and CVT in one READ (the lock word with them)
 * </pre>
 * The home is always the newest committed version (the shared write-back installs it, with its version word); the
 * cells hold the last N committed versions as full records, the newest among them. A reader whose T_start is above
 * the home's version takes the home from the READ it already has; an older T_start picks a cell and READs its record.
 */
public final class MotorCvt {
    /** Motor's default versions per record in Lotus's evaluation (Motor's own SmallBank: 3). */
    public static final int DEFAULT_VERSIONS = Cvt.DEFAULT_VERSIONS;

    private MotorCvt() {
    }

    /** Where the CVT is in an object slot of a table with {@code maxValueBytes}. */
    public static int at(final int maxValueBytes) {
        return Cvt.offset(maxValueBytes);
    }

    /** What one READ of an object fetches: header, home value and the CVT of {@code versions} cells. */
    public static int readBytes(final int maxValueBytes, final int versions) {
        return at(maxValueBytes) + Cvt.cvtBytes(versions);
    }

    /** What a reader at T_start does with its image. */
    public enum Choice {
        /** The home is the version below T_start (it is the newest, and older than T_start). */
        HOME,
        /** A cell holds it: READ its record ({@link Read#cell}). */
        CELL,
        /** A writer holds the lock word: its T_commit may be below T_start with its versions not written yet. */
        LOCKED,
        /** A cell is being rewritten (head and tail check values differ). */
        TORN,
        /** No version below T_start is kept (overwritten by newer ones: N too small for this reader). */
        TOO_OLD
    }

    /** A reader's choice, and the cell when {@link Choice#CELL}. */
    public record Read(Choice choice, int cell) {
    }

    /**
     * The version a reader at {@code start} reads from the image {@code image} of key {@code key} (a READ of
     * {@link #readBytes}); {@code homeVersion} is the header's (checked by the caller: the object is the key's).
     * A locked object aborts any reader (its holder may have taken T_commit below {@code start} and not written yet).
     */
    public static Read read(final DirectBuffer image, final int maxValueBytes, final int versions, final long key,
                            final long homeVersion, final long start) {
        if (image.getLong(ObjectLayout.CAS_LOCK_OFFSET) != 0) {
            return new Read(Choice.LOCKED, Cvt.NONE);
        }
        if (homeVersion < start) {
            return new Read(Choice.HOME, Cvt.NONE);
        }
        final int at = at(maxValueBytes);
        if (!ours(image, at, versions, key)) {
            return new Read(Choice.TOO_OLD, Cvt.NONE);
        }
        final Cvt.Pick pick = Cvt.pick(image, at, start);
        if (pick.cell() == Cvt.TORN) {
            return new Read(Choice.TORN, Cvt.NONE);
        }
        return pick.cell() == Cvt.NONE ? new Read(Choice.TOO_OLD, Cvt.NONE) : new Read(Choice.CELL, pick.cell());
    }

    /** Whether the CVT at {@code at} of {@code image} was written by Motor for {@code key} with {@code versions} cells. */
    public static boolean ours(final DirectBuffer image, final int at, final int versions, final long key) {
        return Cvt.written(image, at) && Cvt.key(image, at) == key && Cvt.versions(image, at) == versions;
    }

    /**
     * The cell a writer (holding the lock, {@code image} read under it) writes its new version to, or {@link Cvt#NONE}
     * when the CVT is to be written whole ({@link #fresh}): never written, or another key's (a reused slot).
     */
    public static int victim(final DirectBuffer image, final int maxValueBytes, final int versions, final long key) {
        final int at = at(maxValueBytes);
        return ours(image, at, versions, key) ? Cvt.victim(image, at) : Cvt.NONE;
    }

    /** The check value of the version written to cell {@code cell}: one above the cell's old one. */
    public static byte nextCv(final DirectBuffer image, final int maxValueBytes, final int cell) {
        return (byte) (Cvt.cv(image, at(maxValueBytes), cell) + 1);
    }

    /**
     * Lays out a CVT written whole at {@code base} of {@code out} (the CVT only, {@link Cvt#cvtBytes} bytes): the
     * header, cell 0 the previous version when {@code previous} (record 0), and the new version in the next cell
     * (record 0 or 1); the other cells invalid. Returns the cell of the new version.
     */
    public static int fresh(final MutableDirectBuffer out, final int base, final int maxValueBytes, final int versions,
                            final long key, final int tableId, final boolean previous, final boolean previousDeleted,
                            final int previousLength, final long previousVersion, final boolean deleted,
                            final int length, final long version) {
        out.setMemory(base, Cvt.cvtBytes(versions), (byte) 0);
        Cvt.header(out, base, key, tableId, versions);
        final int cell = previous ? 1 : 0;
        if (previous) {
            Cvt.putCell(out, base + Cvt.cell(0), (byte) 1, true, previousDeleted, previousLength,
                Cvt.recordOffset(maxValueBytes, versions, 0), previousVersion);
        }
        Cvt.putCell(out, base + Cvt.cell(cell), (byte) 1, true, deleted, length,
            Cvt.recordOffset(maxValueBytes, versions, cell), version);
        return cell;
    }

    /**
     * What writing one version adds to a doorbell of any copy of an object (the same bytes at the same offsets of
     * the slot on each copy, in order: records before the cell or CVT that names them, so a reader overlapping them
     * finds the check values differ).
     */
    public static final class Writes {
        private final List<Integer> offsets = new ArrayList<>();
        private final List<UnsafeBuffer> bytes = new ArrayList<>();

        private Writes put(final int offset, final UnsafeBuffer b) {
            offsets.add(offset);
            bytes.add(b);
            return this;
        }

        /** Whether there is nothing to write. */
        public boolean isEmpty() {
            return offsets.isEmpty();
        }

        /** Adds the writes to {@code batch} of the copy whose object is at {@code base}. */
        public void add(final Doorbell batch, final long base, final int rkey) {
            for (int i = 0; i < offsets.size(); i++) {
                batch.write(base + offsets.get(i), rkey, bytes.get(i), 0, bytes.get(i).capacity());
            }
        }
    }

    /**
     * The writes of a version at {@code version} into cell {@code victim} ({@link #victim}) of the CVT in
     * {@code image} (read under the lock): its record ({@code value}, {@code length} bytes; none when
     * {@code deleted}), then the cell, with the cell's next check value.
     */
    public static Writes intoVictim(final DirectBuffer image, final int maxValueBytes, final int versions,
                                    final int victim, final boolean deleted, final DirectBuffer value,
                                    final int length, final long version) {
        final int recordBytes = Cvt.recordBytes(maxValueBytes);
        final byte cv = nextCv(image, maxValueBytes, victim);
        final UnsafeBuffer record = new UnsafeBuffer(new byte[recordBytes]);
        Cvt.putRecord(record, 0, recordBytes, cv, value, 0, deleted ? 0 : length);
        final UnsafeBuffer cell = new UnsafeBuffer(new byte[Cvt.CELL_BYTES]);
        final int recordAt = Cvt.recordOffset(maxValueBytes, versions, victim);
        Cvt.putCell(cell, 0, cv, true, deleted, deleted ? 0 : length, recordAt, version);
        return new Writes().put(recordAt, record).put(at(maxValueBytes) + Cvt.cell(victim), cell);
    }

    /**
     * The writes of a CVT written whole ({@link #fresh}) holding the version at {@code version} and, when
     * {@code previous} is not null, the version it replaces (from {@code previous} at
     * {@link ObjectLayout#VALUE_OFFSET}: an object image; {@code previousLength} bytes, {@code previousDeleted}, at
     * {@code previousVersion}).
     */
    public static Writes whole(final int maxValueBytes, final int versions, final long key, final int tableId,
                               final DirectBuffer previous, final boolean previousDeleted, final int previousLength,
                               final long previousVersion, final boolean deleted, final DirectBuffer value,
                               final int length, final long version) {
        final int recordBytes = Cvt.recordBytes(maxValueBytes);
        final UnsafeBuffer cvt = new UnsafeBuffer(new byte[Cvt.cvtBytes(versions)]);
        final int cell = fresh(cvt, 0, maxValueBytes, versions, key, tableId, previous != null, previousDeleted,
            previousDeleted ? 0 : previousLength, previousVersion, deleted, deleted ? 0 : length, version);
        final Writes w = new Writes();
        if (previous != null) {
            final UnsafeBuffer old = new UnsafeBuffer(new byte[recordBytes]);
            Cvt.putRecord(old, 0, recordBytes, (byte) 1, previous, ObjectLayout.VALUE_OFFSET,
                previousDeleted ? 0 : previousLength);
            w.put(Cvt.recordOffset(maxValueBytes, versions, 0), old);
        }
        final UnsafeBuffer record = new UnsafeBuffer(new byte[recordBytes]);
        Cvt.putRecord(record, 0, recordBytes, (byte) 1, value, 0, deleted ? 0 : length);
        return w.put(Cvt.recordOffset(maxValueBytes, versions, cell), record).put(at(maxValueBytes), cvt);
    }

    /** The write marking the CVT not written ({@link Cvt#written} false): its header zeroed. */
    public static Writes unwritten(final int maxValueBytes) {
        return new Writes().put(at(maxValueBytes), new UnsafeBuffer(new byte[Cvt.HEADER_BYTES]));
    }

    /** Whether the CVT in {@code image} (at {@link #at}) holds a valid cell of {@code version}. */
    public static boolean holds(final DirectBuffer image, final int maxValueBytes, final int versions,
                                final long version) {
        final int at = at(maxValueBytes);
        for (int i = 0; i < versions; i++) {
            if (Cvt.valid(image, at, i) && Cvt.version(image, at, i) == version) {
                return true;
            }
        }
        return false;
    }
}
