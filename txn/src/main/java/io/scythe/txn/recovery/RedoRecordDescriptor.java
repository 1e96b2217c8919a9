package io.scythe.txn.recovery;

import org.agrona.DirectBuffer;
import org.agrona.MutableDirectBuffer;

import java.util.zip.CRC32C;

/**
 * The layout of one redo record in a compute node's log region on a memory node. A record starts at a slot
 * boundary ({@link #SLOT_BYTES}) and takes as many contiguous slots as it needs.
 *
 * <pre>
 *   0                   1                   2                   3
 *   0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
 *  +-------------------------------+-------------------------------+
 *  | 'SRD' (u24), format version u8 |  total length, trailer incl.  |  0
 *  +-------------------------------+-------------------------------+
 *  |                  transaction id (u64)                          |  8
 *  +---------------------------------------------------------------+
 *  |                  version to install (u64): commit timestamp    | 16
 *  +-------------------------------+-------------------------------+
 *  | entry count u16|lock kind u16 |  configuration epoch (u32)    | 24
 *  +-------------------------------+-------------------------------+
 *  |                  log sequence number (u64)                     | 32
 *  +---------------------------------------------------------------+
 *  |                  low water (u64): every record of this log     | 40
 *  |                  with a smaller sequence number was finished   |
 *  +---------------------------------------------------------------+
 *  |  entries, each: node name length (u16), op (u4), primary copy  | 48
 *  |  it was written under (u4), backups (u8), table id (u32),      |
 *  |  pointer (u64), lock token (u64), value                        |
 *  |  length (u32), node name bytes, value bytes, padded to 8, then |
 *  |  one pointer (u64) per backup copy of the object               |
 *  +---------------------------------------------------------------+
 *  |  commit word (u64): CRC32C of everything above | magic << 32  | total - 8
 *  +---------------------------------------------------------------+
 * </pre>
 *
 * The record is written with one WRITE; the commit is decided when it is complete, which the trailing commit word
 * proves (a WRITE cut short by a crash or a fence leaves a word that does not match).
 *
 * <p>The configuration epoch is the memory-node configuration the commit's attempt ran in (its writes went to the
 * primaries serving then; 0 without failover). Recovery trusts a primary's lock word for an entry only if the record
 * was written in that primary's term ({@code MemoryNodeConfiguration#primarySince} at or below the record's epoch):
 * a copy primary again after a failover and a rejoin starts its lock words and Takeout counters afresh, so an old
 * record's ticket can be a live holder's (issue 23). The count and lock kind took u32 each before; both fit u16
 * (at most {@link #MAX_ENTRIES} entries; lock kinds are small registry numbers), so the record kept its size.
 *
 * <p>Format: the first word is {@link #MAGIC}, the family {@code 'SRD'} ({@link #FAMILY}) in its high 24 bits and the
 * format version ({@link #FORMAT_VERSION}) in its low 8. A build reads only its own format: a complete record of the
 * family with another version is refused ({@link #checkFormat}), never read as this layout; recovery of that
 * incarnation then stops before it applies anything and leaves it owed for an operator (a build that reads that
 * format), which the recovering node's health reports. The records written before the version existed carried
 * {@code 'SRDO'} ({@link #LEGACY_MAGIC}, version byte {@code 'O'} = 0x4F) and the same trailer scheme (that word in
 * the trailer's high half): from the configuration epoch's introduction (a376c2d1) their layout is exactly this one
 * (u16 count, u16 lock kind, u32 epoch), and they are read as version 2; before it count and lock kind were u32 each
 * and no epoch (little-endian, so the lock kind u16 reads 0, no module's kind): those are refused. Operator step for
 * a refused incarnation: stop the node that refused it first (it keeps its recovery claim, so the other compute nodes
 * get RECOVERY_BUSY until it is fenced or leaves), then recover the incarnation with a build that reads that format.
 * A change to this layout must raise {@link #FORMAT_VERSION}.
 *
 * <p>Truncation: the log of one event loop numbers its records (the sequence number, increasing across every region
 * the loop opens) and each record carries the loop's low water when it was written: the smallest sequence number whose
 * write-back and unlock had not finished then. Everything below the largest low water found in a dead node's log was
 * finished, so recovery skips it without a verb: the log is truncated by the records that follow, with no extra WRITE
 * on the commit path. A slot is reused without being cleared; an old complete record that is not below the low water
 * (the last few a loop wrote) is still harmless, since recovery applies an entry only while the object's lock is still
 * held by that record's lock token (a served ticket, a CAS word of another transaction skip it).
 */
public final class RedoRecordDescriptor {
    /** The record family, {@code 'SRD'}: the first word's high 24 bits. */
    public static final int FAMILY = 0x535244;
    /**
     * The layout this build writes and reads (the first word's low 8 bits). 2: count and lock kind u16, configuration
     * epoch u32 (issue 23); the records before carried {@code 'SRDO'} (0x4F).
     */
    public static final int FORMAT_VERSION = 2;
    /** The first word of a record of this build's format. */
    public static final int MAGIC = FAMILY << 8 | FORMAT_VERSION;
    /**
     * The first word of the records written before the format version existed, {@code 'SRDO'}: from the configuration
     * epoch's introduction (a376c2d1) they have this layout exactly and are read as version 2 ({@link
     * #completeLength}); before it their count and lock kind were u32 each (refused).
     */
    public static final int LEGACY_MAGIC = 0x5352444f;
    public static final int MAGIC_OFFSET = 0;
    public static final int LENGTH_OFFSET = 4;
    public static final int TXN_ID_OFFSET = 8;
    public static final int VERSION_OFFSET = 16;
    /** Entry count, u16. */
    public static final int COUNT_OFFSET = 24;
    /** Lock kind, u16. */
    public static final int LOCK_KIND_OFFSET = 26;
    /** The memory-node configuration epoch the record was written in, u32. */
    public static final int EPOCH_OFFSET = 28;
    /** Most entries one record holds (its u16 count). */
    public static final int MAX_ENTRIES = 0xffff;
    /** Largest lock kind a record names (u16). */
    public static final int MAX_LOCK_KIND = 0xffff;
    /** Largest configuration epoch a record names (u32). */
    public static final long MAX_EPOCH = 0xffffffffL;
    public static final int LSN_OFFSET = 32;
    public static final int LOW_WATER_OFFSET = 40;
    public static final int HEADER_BYTES = 48;

    public static final int ENTRY_NODE_LENGTH_OFFSET = 0;
    public static final int ENTRY_OP_OFFSET = 2;
    public static final int ENTRY_TABLE_OFFSET = 4;
    public static final int ENTRY_POINTER_OFFSET = 8;
    public static final int ENTRY_TOKEN_OFFSET = 16;
    public static final int ENTRY_VALUE_LENGTH_OFFSET = 24;
    public static final int ENTRY_FIXED_BYTES = 28;
    public static final int TRAILER_BYTES = 8;

    /** Log regions are cut into slots of this size; a record starts on a slot boundary. */
    public static final int SLOT_BYTES = 512;

    /*
     * The lock kind word names a protocol module's LockKind (io.scythe.txn.spi): Scythe's Takeout ticket is 1 (the
     * token is the ticket), FORD/FaRM's CAS word 2 (the token is the owner); recovery asks the registry for it.
     */

    /*
     * With replication an entry also names where its object is on each backup copy of its partition (the catalog's
     * placement order: backup 1 first), so that recovery writes the copies as the write-back would. The node of each
     * copy follows from the primary's node and table by the placement; the count sits in the op word's high byte,
     * which is 0 without backups, so an unreplicated record is what it was.
     */

    /** The entry count of the record at {@code offset}. */
    public static int countOf(final DirectBuffer buffer, final int offset) {
        return buffer.getShort(offset + COUNT_OFFSET) & 0xffff;
    }

    /** The lock kind of the record at {@code offset}. */
    public static int lockKindOf(final DirectBuffer buffer, final int offset) {
        return buffer.getShort(offset + LOCK_KIND_OFFSET) & 0xffff;
    }

    /** The configuration epoch the record at {@code offset} was written in. */
    public static long epochOf(final DirectBuffer buffer, final int offset) {
        return buffer.getInt(offset + EPOCH_OFFSET) & 0xffffffffL;
    }

    /**
     * Writes the record's entry count, lock kind and configuration epoch.
     *
     * @throws IllegalArgumentException when one does not fit its field
     */
    public static void putCounts(final MutableDirectBuffer buffer, final int offset, final int count,
                                 final int lockKind, final long epoch) {
        if (count < 0 || count > MAX_ENTRIES || lockKind < 0 || lockKind > MAX_LOCK_KIND || epoch < 0
            || epoch > MAX_EPOCH) {
            throw new IllegalArgumentException("redo record of " + count + " entries (at most " + MAX_ENTRIES
                + "), lock kind " + lockKind + ", configuration epoch " + epoch + ": does not fit its header");
        }
        buffer.putShort(offset + COUNT_OFFSET, (short) count);
        buffer.putShort(offset + LOCK_KIND_OFFSET, (short) lockKind);
        buffer.putInt(offset + EPOCH_OFFSET, (int) epoch);
    }

    /** Entry ops: bit set of what the write-back installs. */
    public static final int OP_VALUE = 1;
    public static final int OP_DELETE = 2;
    public static final int OP_REVIVE = 4;
    public static final int OP_INSERTED = 8;

    private RedoRecordDescriptor() {
    }

    public static int align8(final int bytes) {
        return (bytes + 7) & ~7;
    }

    /** Bytes of one entry with a node name of {@code nodeBytes} and a value of {@code valueBytes}. */
    public static int entryBytes(final int nodeBytes, final int valueBytes) {
        return align8(ENTRY_FIXED_BYTES + nodeBytes + valueBytes);
    }

    /** Bytes of one entry with a node name of {@code nodeBytes}, a value of {@code valueBytes} and backups. */
    public static int entryBytes(final int nodeBytes, final int valueBytes, final int backups) {
        return backupPointersOffset(nodeBytes, valueBytes) + backups * Long.BYTES;
    }

    /** Offset, within an entry, of its backup pointers. */
    public static int backupPointersOffset(final int nodeBytes, final int valueBytes) {
        return entryBytes(nodeBytes, valueBytes);
    }

    /** Most backups an entry can name (the op word's high byte). */
    public static final int MAX_BACKUPS = 0xff;

    /** Most loaded copy numbers an entry can name as the primary it was written under (the op byte's high half). */
    public static final int MAX_PRIMARY_COPY = 0xf;

    /**
     * The op word of an entry: {@code op} bits in the low half of the low byte, the loaded copy number of the copy
     * serving as the partition's primary when the record was written in its high half (0 unless a memory-node
     * failover promoted a backup), the count of backup pointers in the high byte.
     */
    public static int opWord(final int op, final int primaryCopy, final int backups) {
        if (op < 0 || op > 0xf || primaryCopy < 0 || primaryCopy > MAX_PRIMARY_COPY || backups < 0
            || backups > MAX_BACKUPS) {
            throw new IllegalArgumentException("op=" + op + " primaryCopy=" + primaryCopy + " backups=" + backups);
        }
        return backups << 8 | primaryCopy << 4 | op;
    }

    /** The op bits of an entry's op word. */
    public static int opOf(final int opWord) {
        return opWord & 0xf;
    }

    /** The loaded copy number of the primary an entry was written under ({@link #opWord}). */
    public static int primaryCopyOf(final int opWord) {
        return (opWord >>> 4) & 0xf;
    }

    /** The number of backup pointers of an entry's op word. */
    public static int backupsOf(final int opWord) {
        return (opWord >>> 8) & 0xff;
    }

    /** The commit word of the record of {@code totalLength} bytes at {@code offset} of {@code buffer}. */
    public static long commitWord(final DirectBuffer buffer, final int offset, final int totalLength) {
        return commitWord(buffer, offset, totalLength, MAGIC);
    }

    private static long commitWord(final DirectBuffer buffer, final int offset, final int totalLength,
                                   final int word) {
        final CRC32C crc = new CRC32C();
        final byte[] array = buffer.byteArray();
        if (array != null) { // on the heap (a record being sealed): checksummed in place, not copied first
            crc.update(array, buffer.wrapAdjustment() + offset,
                totalLength - TRAILER_BYTES);
        } else {
            final byte[] bytes = new byte[totalLength - TRAILER_BYTES];
            buffer.getBytes(offset, bytes);
            crc.update(bytes, 0, bytes.length);
        }
        return ((long) word << 32) | (crc.getValue() & 0xffffffffL);
    }

    /** Seals the record at {@code offset}: writes its commit word. */
    public static void seal(final MutableDirectBuffer buffer, final int offset, final int totalLength) {
        buffer.putLong(offset + totalLength - TRAILER_BYTES, commitWord(buffer, offset, totalLength));
    }

    /**
     * The format version of the record at {@code offset} ({@code limit} bytes readable from there): the low byte of
     * its first word if its high 24 bits are {@link #FAMILY}, else -1 (no record starts there).
     */
    public static int formatOf(final DirectBuffer buffer, final int offset, final int limit) {
        if (limit < Integer.BYTES) {
            return -1;
        }
        final int word = buffer.getInt(offset + MAGIC_OFFSET);
        return word >>> 8 == FAMILY ? word & 0xff : -1;
    }

    /**
     * Refuses a record of another format at {@code offset} ({@code where} names it in the message): recovery must not
     * apply what it cannot read. Only a COMPLETE record under its own first word is refused: a sane length (header
     * and trailer, a multiple of 8, within {@code limit}) and a trailer equal to that word in its high half and the
     * CRC32C of the record before it in its low half. The scan reaches every slot boundary, inside torn records'
     * bodies and reused slots' stale tails too, so four bytes there that merely read like another version's first
     * word (a user value {@code "ODRS"}, say) are garbage as before, never a reason to stop a recovery. A record of
     * {@link #LEGACY_MAGIC} that {@link #completeLength} reads as this layout is not refused either.
     *
     * @throws UnreadableRedoRecordException when a complete record of the family but of another version starts there
     */
    public static void checkFormat(final DirectBuffer buffer, final int offset, final int limit, final String where) {
        final int version = formatOf(buffer, offset, limit);
        if (version >= 0 && version != FORMAT_VERSION
            && completeUnder(buffer, offset, limit, buffer.getInt(offset + MAGIC_OFFSET)) >= 0
            && completeLength(buffer, offset, limit) < 0) {
            throw new UnreadableRedoRecordException(where, version);
        }
    }

    /**
     * A redo record of a format this build does not read ({@link #checkFormat}): its recovery applies nothing, is not
     * retried, and leaves the incarnation owed for an operator.
     */
    public static final class UnreadableRedoRecordException extends IllegalStateException {
        private final int version;

        public UnreadableRedoRecordException(final String where, final int version) {
            super("redo record " + where + " has format version " + version + " (0x" + Integer.toHexString(version)
                + "); this build reads only version " + FORMAT_VERSION + ": nothing of this recovery was applied, "
                + "and the incarnation is left owed for an operator (recover it with a build that reads that format)");
            this.version = version;
        }

        /** The format version the record carries. */
        public int version() {
            return version;
        }
    }

    /**
     * The length of the complete record at {@code offset} of {@code buffer} ({@code limit} bytes readable from
     * there), or -1 when there is none or it is incomplete (torn, unsealed). A complete {@link #LEGACY_MAGIC} record
     * of this layout (written between the configuration epoch's introduction and the format version's, whose lock
     * kind word is not 0) counts as one; one of the older layout (u32 count and lock kind: its lock kind u16 reads 0,
     * no module's kind) does not, and {@link #checkFormat} refuses it.
     */
    public static int completeLength(final DirectBuffer buffer, final int offset, final int limit) {
        if (limit < HEADER_BYTES + TRAILER_BYTES) {
            return -1;
        }
        final int word = buffer.getInt(offset + MAGIC_OFFSET);
        if (word == MAGIC) {
            return completeUnder(buffer, offset, limit, MAGIC);
        }
        if (word == LEGACY_MAGIC && lockKindOf(buffer, offset) != 0) {
            return completeUnder(buffer, offset, limit, LEGACY_MAGIC);
        }
        return -1;
    }

    /**
     * The length of the record at {@code offset} if it is complete under first word {@code word} (a sane length, its
     * trailer {@code word << 32 | CRC32C}), else -1.
     */
    private static int completeUnder(final DirectBuffer buffer, final int offset, final int limit, final int word) {
        if (limit < HEADER_BYTES + TRAILER_BYTES) {
            return -1;
        }
        final int length = buffer.getInt(offset + LENGTH_OFFSET);
        if (length < HEADER_BYTES + TRAILER_BYTES || length > limit || (length & 7) != 0) {
            return -1;
        }
        return buffer.getLong(offset + length - TRAILER_BYTES) == commitWord(buffer, offset, length, word)
            ? length : -1;
    }
}
