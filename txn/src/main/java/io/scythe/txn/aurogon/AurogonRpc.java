package io.scythe.txn.aurogon;

/**
 * Aurogon's participant RPCs, carried by RRPC (the paper sends its requests as messages the participant's CPU runs,
 * §4.1). Little-endian; every request starts with the same 24 bytes.
 *
 * <pre>
 *  request                                        reply
 *  0  table id (i32)                              0  status (i32): Participant.OK, REFUSED, NOT_FOUND, NOT_PENDING,
 *  4  READ: flags (i32) PREATTACH, NO_DEFER,        TOO_OLD, ABSENT (READ), DUPLICATE (INSERT),
 *     SPS; INSTALL, INSERT: flags (i32) SPS;          SPS_STALE (READ with the SPS flag), SPS_IMMORTAL
 *                                                    (READ, INSTALL, INSERT with it: its floor at 8)
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
 * </ul> A coordinator's COMMIT or STAGE of a version already committed at its timestamp (a recovery committed its
 * transaction while it was paused) answers {@code Participant.COMMITTED_ALREADY} (2: done), one of a version rolled
 * back or never installed {@code NOT_PENDING}; a recovery's COMMIT answers {@code FIRST_SEEN} or {@code NOT_PENDING}.
 * INSTALL, COMMIT, ROLLBACK, STAGE and APPLY/DISCARD answer with the status, the largest timestamp seen (at
 * 8) and an orphan hint (at 16): 24 bytes; INSERT adds the wts of the version below it (the absence it read) at 24:
 * 32 bytes. A READ reply has its hint at 24, its value at 32. The largest timestamp seen is what DST's chasing clocks
 * advance to ({@link AurogonClock}); the hint is the timestamp of a transaction this node suspects its coordinator
 * left behind (a version pending, or a replication held, past the orphan lease; 0 for none), which the coordinator
 * that reads it resolves ({@link CoordinatorRecovery}).
 *
 * <p>Backups and recovery (§4.5):
 * <pre>
 *  REPLICATE  0 backup table id, 4 value length (DELETE), 8 key, 16 ts, 24 writes this node gets (i32),
 *             28 offset of the part (i32), 32 mask of the transaction's backup nodes (i64), 40 the
 *             transaction's id (i64, the one its coordinator reports it under), 48 its coordinator's low-water
 *             (i64: the oldest timestamp it has open, see Backups), 56 the part; answers OK,
 *             Backups.COMMITTED (a recovery committed it here), Backups.FENCED (rolled back), or
 *             Backups.STALE (with its floor as the seen timestamp)
 *  HOLDS      16 ts; answers 0 Backups.FULL/COMMITTED/ABORTED (fencing it when not held in full),
 *             Backups.FORGOTTEN (decided and forgotten: see Backups), or Backups.NOT_HERE (4: a replacement born
 *             after ts holding nothing of it; nothing fenced), 4 writes held,
 *             8 mask, 16 the transaction's id (0 when nothing of it is held)
 *  FETCH      0 write index, 4 offset, 16 ts; answers 0 status, 4 value length (DELETE), 8 key, 16 backup table
 *             id, 24 the value's bytes from offset
 *  APPLY      16 ts: the held writes go into the backup tables (OK, Backups.FENCED, Backups.FORGOTTEN, or a
 *             Participant status when a promoted copy had no adopted version for a write; every write is still
 *             applied)
 *  DISCARD    16 ts: the held writes are dropped, the transaction fenced (OK, Backups.FENCED when it was applied,
 *             Backups.FORGOTTEN)
 *  SUSPECTS   16 ts; answers 0 count, 4 flags (SUSPECTS_HELD: held here undecided; SUSPECTS_TRUNCATED: more
 *             records than the reply holds, ask again once these are decided), 8 count x (table id i32, key i64) of
 *             the records whose suspect version is pending at ts
 *  HEARTBEAT  16 a timestamp of the sending coordinator (its server and loop ids): it is alive; answers OK, or
 *             WATCHING while a pending version or held replication here may yet become a suspect (or is one)
 *  COMMITTED_AT 16 ts; answers as SUSPECTS does the records with a committed version at ts (a recovery
 *             whose transaction lost a backup share asks whether its commit reached a primary, and what it wrote);
 *             4: flags: 1 (COMMITTED_AT_TRUNCATED) when more than one reply holds were found; 2
 *             (COMMITTED_AT_COORDINATOR_LIVE) when a version is pending here at ts and ts's coordinator was not
 *             told dead at or above it (it may still COMMIT here: the recovery must not roll back)
 *  COPY       0 backup table id, 4 value length (DELETE), 8 key, 16 the primary's newest committed wts, 24 the
 *             value: written into the copy as an APPLY writes it, unless a newer write is there (re-replication of
 *             a rejoining copy, the W step; answers OK; refused once the node rejoined)
 *  PENDING    0 table id, 8 key: answers OK, or PENDING_HELD while a version of the key is pending here (a
 *             rejoining copy's re-replication, R1: the copier reads the key again later)
 * </pre>
 */
public final class AurogonRpc {
    public static final int READ = 0x5a01;
    public static final int INSTALL = 0x5a02;
    public static final int COMMIT = 0x5a03;
    public static final int ROLLBACK = 0x5a04;
    public static final int INSERT = 0x5a05;
    public static final int READ_MORE = 0x5a06;
    public static final int STAGE = 0x5a07;
    public static final int REPLICATE = 0x5a08;
    public static final int HOLDS = 0x5a09;
    public static final int FETCH = 0x5a0a;
    public static final int APPLY = 0x5a0b;
    public static final int DISCARD = 0x5a0c;
    public static final int SUSPECTS = 0x5a0d;
    /** FaRMv2-clock's sync request: answered with the node's host clock (i64 at 8) read by its CPU. */
    public static final int CLOCK = 0x5a0e;
    /** A live coordinator's heartbeat ({@link Heartbeats}): the node hears from it although it sends nothing else. */
    public static final int HEARTBEAT = 0x5a0f;
    /** HEARTBEAT's answer while the node watches undecided state ({@link Heartbeats}: idle loops beat on). */
    public static final int WATCHING = 1;
    /** The records with a committed version at a timestamp ({@link CoordinatorRecovery}, a lost backup share). */
    public static final int COMMITTED_AT = 0x5a10;
    /**
     * The W step of a rejoining copy's re-replication (issue 20/23; {@code recovery.ReReplicator}): the primary's
     * newest committed version of a key, applied to the copy by the APPLY rule (by wts: never over a newer one).
     */
    public static final int COPY = 0x5a11;
    /**
     * Whether a version of a key is pending at its primary (re-replication's R1, {@code recovery.ReReplicator}: such a
     * key is copied once it is decided).
     */
    public static final int PENDING = 0x5a12;
    /** PENDING's answer while a version is pending. */
    public static final int PENDING_HELD = 2;
    /** COMMITTED_AT's reply flag (at 4): more records than the reply holds (the recovery fails, loudly). */
    public static final int COMMITTED_AT_TRUNCATED = 1;
    /**
     * COMMITTED_AT's reply flag (at 4): a version is pending here at the timestamp and the host has not told its
     * coordinator dead at or above it ({@code ParticipantService#mayStillCommit}): a COMMIT of it may still land here,
     * so no COMMIT found so far does not mean none will come.
     */
    public static final int COMMITTED_AT_COORDINATOR_LIVE = 2;
    /** SUSPECTS' reply flag (at 4): the node holds the transaction as a backup, undecided. */
    public static final int SUSPECTS_HELD = 1;
    /**
     * SUSPECTS' reply flag (at 4): more records are suspect at ts than the reply holds; the recovery decides those it
     * got, then asks again (they are no longer pending then, so the next reply holds the next ones).
     */
    public static final int SUSPECTS_TRUNCATED = 2;

    public static final int HEADER_BYTES = 24;
    public static final int TABLE_OFFSET = 0;
    public static final int FLAGS_OFFSET = 4;
    public static final int LENGTH_OFFSET = 4;
    public static final int KEY_OFFSET = 8;
    public static final int TS_OFFSET = 16;

    public static final int READ_REPLY_HEADER_BYTES = 32;
    public static final int READ_SEEN_OFFSET = 16;
    public static final int READ_HINT_OFFSET = 24;
    public static final int STATUS_REPLY_BYTES = 24;
    public static final int STATUS_SEEN_OFFSET = 8;
    public static final int STATUS_HINT_OFFSET = 16;
    public static final int INSERT_REPLY_BYTES = 32;
    public static final int INSERT_BELOW_OFFSET = 24;
    /**
     * REPLICATE: writes this node gets (i32), the part's offset (i32), the mask (i64), the transaction's id (i64),
     * the coordinator's low-water (i64), then the part.
     */
    public static final int REPLICATE_EXPECTED_OFFSET = 24;
    public static final int REPLICATE_OFFSET_OFFSET = 28;
    public static final int REPLICATE_MASK_OFFSET = 32;
    public static final int REPLICATE_TXN_OFFSET = 40;
    /** REPLICATE: the coordinator's low-water, the oldest timestamp it has open ({@link Backups}). */
    public static final int REPLICATE_LOW_OFFSET = 48;
    public static final int REPLICATE_HEADER_BYTES = 56;
    /** HOLDS reply: state (i32), writes held (i32), mask (i64), the transaction's id (i64). */
    public static final int HOLDS_REPLY_TXN_OFFSET = 16;
    public static final int HOLDS_REPLY_BYTES = 24;
    public static final int FETCH_REPLY_HEADER_BYTES = 24;
    public static final int SUSPECT_BYTES = 12;
    /** STAGE: the part's offset in the value, then (at {@link #STAGE_HEADER_BYTES}) the part. */
    public static final int STAGE_OFFSET = 24;
    public static final int STAGE_HEADER_BYTES = 32;
    /** COMMIT: this bit in the table id marks a recovery's COMMIT (answered Participant.FIRST_SEEN once). */
    public static final int BY_RECOVERY = 0x4000_0000;
    /** COMMIT length of a delete. */
    public static final int DELETE = -1;

    /** RPC failure code of a malformed request. */
    public static final int BAD_REQUEST = 0x5a00;

    private AurogonRpc() {
    }
}
