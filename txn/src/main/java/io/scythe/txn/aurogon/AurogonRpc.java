package io.scythe.txn.aurogon;

/**
 * Aurogon's participant RPCs, carried by RRPC (the paper sends its requests as messages the participant's CPU runs,
 * §4.1). Little-endian; every request starts with the same 24 bytes.
 *
 * <pre>
 *  request                                        reply
 *  0  table id (i32)                              0  status (i32): Participant.OK, REFUSED, NOT_FOUND, NOT_PENDING,
 *  4  READ: flags (i32) PREATTACH, NO_DEFER;          TOO_OLD, ABSENT (READ), DUPLICATE (INSERT)
 *     COMMIT: value length (i32), -1 for a    4  READ: value length (i32)
 *     delete; else 0
 *  8  key (i64)                                   8  READ: wts of the version read (i64)
 *  16 timestamp (i64)                             16 READ: the participant's largest timestamp seen (i64)
 *  24 COMMIT: the value                           24 READ: the value
 * </pre>
 * READ answers late when the version it read is pending (when that version is decided); ABSENT carries the wts of
 * the absence read. Values longer than one RRPC bucket go in parts, so the bucket stays what every protocol uses:
 * <ul>
 *   <li>a READ reply carries the value's total length at 4 and as much of it as fits one reply; the coordinator
 *       asks for the rest with READ_MORE (the same 24-byte header, the offset in the flags slot, the wts of the
 *       version read in the timestamp slot), answered in READ's format with the bytes from that offset of that
 *       committed version ({@code TOO_OLD} when it was reclaimed meanwhile); READ_MORE raises no rts;</li>
 *   <li>a COMMIT carries the total length and the value's last bytes, as many as fit; the bytes before them were
 *       staged first by STAGE requests (header with the total length, the part's offset (i32) at 24, the part at
 *       32), kept with the pending version at the timestamp ({@code NOT_PENDING} when none is pending) and dropped
 *       with it at rollback.</li>
 * </ul> INSTALL, COMMIT and ROLLBACK answer with the status and the largest timestamp seen (at 8): 16
 * bytes; INSERT adds the wts of the version below it (the absence it read) at 16: 24 bytes. The largest timestamp
 * seen is what DST's chasing clocks advance to ({@link AurogonClock}).
 */
public final class AurogonRpc {
    public static final int READ = 0x5a01;
    public static final int INSTALL = 0x5a02;
    public static final int COMMIT = 0x5a03;
    public static final int ROLLBACK = 0x5a04;
    public static final int INSERT = 0x5a05;
    public static final int READ_MORE = 0x5a06;
    public static final int STAGE = 0x5a07;

    public static final int HEADER_BYTES = 24;
    public static final int TABLE_OFFSET = 0;
    public static final int FLAGS_OFFSET = 4;
    public static final int LENGTH_OFFSET = 4;
    public static final int KEY_OFFSET = 8;
    public static final int TS_OFFSET = 16;

    public static final int READ_REPLY_HEADER_BYTES = 24;
    public static final int READ_SEEN_OFFSET = 16;
    public static final int STATUS_REPLY_BYTES = 16;
    public static final int STATUS_SEEN_OFFSET = 8;
    public static final int INSERT_REPLY_BYTES = 24;
    public static final int INSERT_BELOW_OFFSET = 16;
    /** STAGE: the part's offset in the value, then (at {@link #STAGE_HEADER_BYTES}) the part. */
    public static final int STAGE_OFFSET = 24;
    public static final int STAGE_HEADER_BYTES = 32;
    /** COMMIT length of a delete. */
    public static final int DELETE = -1;

    /** RPC failure code of a malformed request. */
    public static final int BAD_REQUEST = 0x5a00;

    private AurogonRpc() {
    }
}
