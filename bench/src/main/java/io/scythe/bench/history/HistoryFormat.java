package io.scythe.bench.history;

import java.nio.charset.StandardCharsets;

/**
 * The history file: a magic, then records, each a type byte and its fields. Every number is an unsigned LEB128
 * varint (7 bits a byte, low bits first, high bit set on all bytes but the last; a 64-bit value takes 1 to 10 bytes);
 * a string is a varint byte length and UTF-8 bytes. Records can be read one after another as they come (streamable);
 * transaction records are not in commit order (each event loop hands over its own chunk of records), the {@code seq}
 * field gives it. Written in version 2; {@link HistoryReader} reads versions 1 and 2.
 *
 * <pre>
 *   magic   "SCYHIST" 0x02                                                            8 bytes
 *   HEADER  1  initialVersion  label                                                  first record, exactly once
 *   TABLE   2  tableId  name                                                          before any use of tableId
 *   TXN     3  seq  txnId  commitTs  accessCount  access...                           one per committed transaction
 *             access = (tableId &lt;&lt; 4 | READ 1 | WRITE 2 | ABSENT 4 | TOMBSTONE 8)  key
 *                      [versionRead]                          if READ
 *                      [versionMade]                          if WRITE
 *   END     4  transactionCount                                                       last record; a file without it
 *                                                                                     was cut short
 *   DOUBT   5  as TXN                                                                 a transaction in doubt
 *   RC_TXN  6  as TXN                                                                 a committed transaction that
 *                                                                                     ran at read committed
 * </pre>
 *
 * {@code initialVersion} is the version every key had when the history began (the bulk load's; a key not loaded was
 * absent at it). {@code seq} numbers the transactions in the order their commits completed (from 1). A key is
 * {@code (tableId, key)}.
 *
 * <p><b>Version 2: versions are order keys.</b> {@code versionMade} places the write in its key's version order: a
 * key's versions are ordered by their value (in the protocols here an object's versions strictly increase in the
 * order they are installed, {@code ObjectLayout#versionAfter}; a protocol whose versions are not ordered, or that has
 * none, records a per-object counter that is). So a write needs no link to the version it overwrote, and a write
 * may be placed anywhere in the order (a multi-version protocol's blind write between two versions).
 * {@code ABSENT}: the read found no live value (the key missing from the index, or deleted), and {@code versionRead}
 * is then a bound: the version read is the newest one at or below it (a missing key's exact version is not known to
 * the reader, and an uncommitted insert may have left a version nobody committed). {@code TOMBSTONE}: the write was a
 * delete. An insert is a read of the key's absence and a write; a delete a read and a tombstone. {@code DOUBT}: a
 * transaction given up past its point of no return (its outcome unknown to its client; recovery decides it): the
 * versions it may have installed are placed in their keys' orders, but it is not counted as committed and takes no
 * part in the dependency graph. Its transactionCount counts it, its seq is from the same sequence. {@code RC_TXN}: a
 * committed transaction declared read committed ({@code Txn#declareReadCommitted}: TPC-C's StockLevel, clause
 * 2.8.2.3), checked at that level only (Adya's PL-2, mixed with PL-3 transactions: its reads' anti-dependencies are
 * not obligatory edges; every version it read must still be a committed one). Added within version 2: an older reader
 * refuses a file holding one ("unknown record type"), it does not misread it.
 *
 * <p>Version 1 (still read): {@code access = (tableId << 2 | READ 1 | WRITE 2) key [versionRead if READ]
 * [versionMade versionOverwritten if WRITE]}; the version order of a key is the chain of overwrites, and inserts,
 * deletes and absent reads are not recorded.
 */
public final class HistoryFormat {
    /** "SCYHIST" and format version 2, which {@link HistoryWriter} writes. */
    public static final byte[] MAGIC = "SCYHIST\u0002".getBytes(StandardCharsets.US_ASCII);
    /** "SCYHIST" and format version 1, still read. */
    public static final byte[] MAGIC_V1 = "SCYHIST\u0001".getBytes(StandardCharsets.US_ASCII);
    public static final int HEADER = 1;
    public static final int TABLE = 2;
    public static final int TXN = 3;
    public static final int END = 4;
    /** A transaction in doubt, laid out as {@link #TXN}. */
    public static final int DOUBT = 5;
    /** A committed transaction that ran at read committed, laid out as {@link #TXN}. */
    public static final int RC_TXN = 6;
    /** Access flag: the transaction read the key (at versionRead). */
    public static final int READ = 1;
    /** Access flag: the transaction wrote the key (versionMade; in version 1 over versionOverwritten). */
    public static final int WRITE = 2;
    /** Access flag (version 2): the read found no live value; versionRead bounds the version read from above. */
    public static final int ABSENT = 4;
    /** Access flag (version 2): the write was a delete. */
    public static final int TOMBSTONE = 8;
    /** Bits of the access head that are flags, in version 2. */
    public static final int FLAG_BITS = 4;
    /** Bits of the access head that are flags, in version 1. */
    public static final int FLAG_BITS_V1 = 2;
    /** Longest varint: a 64-bit value. */
    public static final int MAX_VARINT_BYTES = 10;

    private HistoryFormat() {
    }

    /**
     * How a committed transaction's access is recorded (the one rule every recorder follows, see
     * {@link io.scythe.txn.HistoryRecorder}): {@link #READ} when it was read (a value, or {@link #ABSENT} when none
     * was live), {@link #WRITE} when it was written or inserted ({@link #TOMBSTONE} for a delete); 0 when it was only
     * looked up (nothing seen, nothing installed).
     */
    public static int flags(final io.scythe.txn.Access access) {
        int flags = 0;
        if (access.fetched || access.readAbsent) {
            flags |= READ | (access.readAbsent ? ABSENT : 0);
        }
        if ((access.dirty || access.inserted) && access.installedVersion != 0) { // 0: never computed (in doubt)
            flags |= WRITE | (access.deleting ? TOMBSTONE : 0);
        }
        return flags;
    }

    /** Writes {@code value} as an unsigned varint at {@code at}; returns the position after it. */
    public static int putVarint(final byte[] buffer, int at, long value) {
        while ((value & ~0x7FL) != 0) {
            buffer[at++] = (byte) ((value & 0x7F) | 0x80);
            value >>>= 7;
        }
        buffer[at++] = (byte) value;
        return at;
    }
}
