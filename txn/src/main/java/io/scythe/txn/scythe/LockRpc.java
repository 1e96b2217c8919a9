package io.scythe.txn.scythe;

/**
 * The Takeout Lock's RPC (Scythe Fig. 14 {@code RPC_CALL("Lock", ts, mode)}), carried by RRPC. Little-endian.
 *
 * <pre>
 *  request (32 B)                                  reply (48 B)
 *  0  table id (i32)                               0  status (i32): TakeoutLock.GRANTED ... REFUSED_HOT, or BAD_REQUEST
 *  4  mode (i32): 0 COLD (OCC), 1 HOT (TOCC),     4  object bytes that follow the reply (i32)
 *     + WITH_OBJECT: return the object if free
 *     + SHARED: a reader's ticket (HOT only)
 *  8  object pointer (u64, incarnation|address)    8  queued ahead (i64): the object's heat
 *  16 timestamp (u64)                              16 ticket (i64), -1 unless granted
 *  24 transaction id (u64): recorded with the      24 upper (i64) when the request was served
 *     ticket for recovery (0: none, tests)
 *                                                  32 queued_ts (i64) after the request; for a SHARED
 *                                                     request the ticket's turn instead: it holds the lock
 *                                                     once upper >= turn (TakeoutLock#lockShared)
 *                                                  40 version (i64) of the object when the request was served
 *                                                  48 the object (header and value), when asked for WITH_OBJECT
 *                                                     and the lock was granted at once
 * </pre>
 * WITH_OBJECT (§4.2.2 (1), and the prototype's QUEUING_READ): a TOCC read that is granted at once gets the object in
 * the same reply, saving its READ; the lock is free then, so no writer can be mid-write.
 * The version lets a transaction granted the lock at once (its ticket already served) skip re-reading the header
 * to validate: with the lock free, every earlier holder's write-back (value, version, then the FAA that freed it)
 * has landed, so that version is the object's until this transaction unlocks.
 * The object's lock words are at the pointer's address ({@code lower} +0, {@code upper} +8): the reply need not
 * carry the address, the CN has it.
 */
public final class LockRpc {
    public static final int LOCK = 0x5401;
    /**
     * Releases a shared ticket (the request's layout, its timestamp word carrying the ticket; mode 0): the memory
     * node adds 1 to {@code upper} for it and records it released, so recovery knows which of a dead compute node's
     * shared tickets it still owes (readers of one run release in any order, so {@code upper} alone cannot tell).
     * Reply: status {@link TakeoutLock#GRANTED} (released), or {@link #BAD_REQUEST} (unknown object, or a ticket
     * not held: nothing changed).
     */
    public static final int UNLOCK_SHARED = 0x5402;

    public static final int REQUEST_BYTES = 32;
    public static final int TABLE_OFFSET = 0;
    public static final int MODE_OFFSET = 4;
    public static final int POINTER_OFFSET = 8;
    public static final int TS_OFFSET = 16;
    public static final int TXN_OFFSET = 24;

    public static final int REPLY_BYTES = 48;
    public static final int STATUS_OFFSET = 0;
    public static final int QUEUED_OFFSET = 8;
    public static final int TICKET_OFFSET = 16;
    public static final int UPPER_OFFSET = 24;
    public static final int QUEUED_TS_OFFSET = 32;
    public static final int VERSION_OFFSET = 40;

    public static final int MODE_COLD = 0;
    public static final int MODE_HOT = 1;
    /** Mode flag: return the object in the reply when the lock is granted at once. */
    public static final int WITH_OBJECT = 0x100;
    /** Mode flag: a shared (reader) ticket, granted together with the readers queued just ahead (HOT only). */
    public static final int SHARED = 0x200;
    /** In a SHARED request's reply: the ticket's turn (where an exclusive one's reply has queued_ts). */
    public static final int TURN_OFFSET = QUEUED_TS_OFFSET;
    public static final int OBJECT_BYTES_OFFSET = 4;
    /** Unknown table, stale or misaligned pointer, bad mode: nothing changed. */
    public static final int BAD_REQUEST = -1;

    private LockRpc() {
    }
}
