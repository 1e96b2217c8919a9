package io.scythe.bench.history;

import java.nio.charset.StandardCharsets;

/**
 * The history file: a magic, then records, each a type byte and its fields. Every number is an unsigned LEB128
 * varint (7 bits a byte, low bits first, high bit set on all bytes but the last; a 64-bit value takes 1 to 10 bytes);
 * a string is a varint byte length and UTF-8 bytes. Records can be read one after another as they come (streamable);
 * transaction records are not in commit order (each event loop hands over its own chunk of records), the {@code seq}
 * field gives it.
 *
 * <pre>
 *   magic   "SCYHIST" 0x01                                                            8 bytes
 *   HEADER  1  initialVersion  label                                                  first record, exactly once
 *   TABLE   2  tableId  name                                                          before any use of tableId
 *   TXN     3  seq  txnId  commitTs  accessCount  access...                           one per committed transaction
 *             access = (tableId &lt;&lt; 2 | READ 1 | WRITE 2)  key
 *                      [versionRead]                          if READ
 *                      [versionMade  versionOverwritten]      if WRITE
 *   END     4  transactionCount                                                       last record; a file without it
 *                                                                                     was cut short
 * </pre>
 *
 * {@code initialVersion} is the version every key had when the history began (the bulk load's). {@code seq} numbers
 * the transactions in the order their commits completed (from 1). A key is {@code (tableId, key)}.
 */
public final class HistoryFormat {
    /** "SCYHIST" and format version 1. */
    public static final byte[] MAGIC = "SCYHIST\u0001".getBytes(StandardCharsets.US_ASCII);
    public static final int HEADER = 1;
    public static final int TABLE = 2;
    public static final int TXN = 3;
    public static final int END = 4;
    /** Access flag: the transaction read the key (at versionRead). */
    public static final int READ = 1;
    /** Access flag: the transaction wrote the key (versionMade over versionOverwritten). */
    public static final int WRITE = 2;
    public static final int FLAG_BITS = 2;
    /** Longest varint: a 64-bit value. */
    public static final int MAX_VARINT_BYTES = 10;

    private HistoryFormat() {
    }

    /**
     * How a committed transaction's access is recorded (the one rule every recorder follows): {@link #READ} when it
     * was fetched, plus {@link #WRITE} when it was also written (versionMade over the version read, see
     * {@link io.scythe.txn.HistoryRecorder}); 0 when it was only looked up (nothing seen, nothing installed).
     */
    public static int flags(final io.scythe.txn.Access access) {
        return !access.fetched ? 0 : READ | (access.dirty ? WRITE : 0);
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
