package io.scythe.txn.rcc;

/**
 * The RPCs of RCC's RPC stages (§4.2, §4.3), served on memory nodes by {@link RccLockService}. Little-endian.
 *
 * <pre>
 *  LOCK request (24 B)                           LOCK reply (16 B, then the object when granted)
 *  0  table id (i32)                             0  status (i32): GRANTED, BUSY, STALE
 *  4  kind (i32): NOWAIT or WAITDIE              4  object bytes that follow (i32; 0: too large, READ it)
 *  8  object pointer (u64, incarnation|address)  8  holder (u64): the lock word the request found
 *  16 owner (u64): what the lock word takes      16 the object (header and value), when granted
 *     (NOWAIT: transaction id; WAITDIE: its
 *     timestamp)
 *
 *  WRITE_BACK request: count (i32), pad (i32), then per object (40 B + value, 8-byte padded):
 *  0  table id (i32)        4  flags (i32): VALUE, DELETE, REVIVE, VERSION
 *  8  object pointer (u64)  16 version to install (u64)
 *  24 owner (u64)           32 lock word offset (i32; 0: nothing to release)   36 value length (i32)
 *  40 value
 *  WRITE_BACK reply (8 B): status (i32) GRANTED when every object was written and released, STALE when one
 *  was not this owner's (nothing of the request was applied then), pad (i32).
 *
 *  WRITE_PART request (recovery's roll-forward of a value too large for a WRITE_BACK, RccLockKind), one object:
 *  0  table id (i32)        4  flags (i32): MVCC (the newest version to its older slot first, unless BUSY)
 *  8  object pointer (u64)  16 owner (u64)
 *  24 lock word offset (i32)   28 value length (i32, the whole value)
 *  32 part offset (i32)        36 part length (i32)      40 the part
 *  Applied only while the word holds the owner: the version word BUSY (after MVCC's move, when it was not BUSY),
 *  the part at its offset in the value, the value length. WRITE_PART reply (8 B): status (i32) GRANTED, or STALE
 *  when the word no longer holds the owner (nothing written), pad.
 *
 *  RELEASE request: count (i32), pad (i32), then per object (24 B): table id (i32), lock word offset (i32),
 *  pointer (u64), owner (u64); each word is CASed from owner to 0 (a word no longer the owner's is left alone).
 *  RELEASE reply (8 B): released (i32), pad.
 *
 *  READ request: as LOCK's (kind and owner unused); reply as LOCK's: GRANTED with the object, or STALE.
 *  VALIDATE request: count (i32), pad (i32), then per object (24 B): table id (i32), lock word offset (i32),
 *  pointer (u64), version read (u64). Reply (8 B): status (i32) GRANTED when every object still has that version
 *  and a free lock word, else BUSY with the index (i32) of the first that does not.
 * </pre>
 * A LOCK of kind NOWAIT CASes {@code cas_lock} from 0 to the owner and answers at once (BUSY when taken). A LOCK of
 * kind WAITDIE CASes {@code tts}; when it is taken by a younger transaction (larger timestamp) the request waits on
 * the object's waiting list (RCC: older waits, younger dies) and is answered when it gets the word, or BUSY when
 * the word passes to an older one; the handler never blocks other requests.
 */
public final class RccRpc {
    public static final int LOCK = 0x5301;
    public static final int WRITE_BACK = 0x5302;
    public static final int RELEASE = 0x5303;
    /** Part of a value too large for one WRITE_BACK, written while the word holds the owner (recovery's). */
    public static final int WRITE_PART = 0x5307;
    /** Bytes of a WRITE_PART request before its part. */
    public static final int PART_HEAD_BYTES = 40;
    /** OCC's Read stage: the object, copied by the handler (request as LOCK's, reply as LOCK's when granted). */
    public static final int READ = 0x5304;
    /** OCC's Validate stage: per object table (i32), lock word offset (i32), pointer (u64), version read (u64). */
    public static final int VALIDATE = 0x5305;

    /**
     * MVCC's Read stage (request as LOCK's, owner = the reader's ctts): R2 and R1 checked and rts raised in the
     * handler; reply {@link #MV_READ_REPLY_BYTES}: status (i32: GRANTED, BUSY when R2 fails or an insert is in
     * progress, STALE, NO_VERSION), value length (i32; -1: too large for a reply, READ the tuple), wts (u64) of the
     * version, rts (u64) after the read, flags (i32: MvccTuple PRESENT|DELETED), pad, then the value.
     */
    public static final int MV_READ = 0x5310;
    /**
     * MVCC's Lock stage (request as LOCK's, owner = ctts): W1, the CAS of tts from 0, W1 again; reply as LOCK's with
     * the whole tuple (its older versions too), status TOO_LATE when W1 fails.
     */
    public static final int MV_LOCK = 0x5311;
    /**
     * SUNDIAL's Renew stage: count (i32), pad, then per object (32 B) table (i32), pad, pointer (u64), wts read (u64),
     * commit ts (u64): each lease is extended (rts raised to the commit ts) when the object still has the wts read
     * and is not locked. Reply (8 B): status GRANTED, or BUSY with the index (i32) of the first that was not.
     */
    public static final int SD_RENEW = 0x5312;
    /**
     * SUNDIAL's Read stage (request as LOCK's): the tuple (object and rts) copied by the handler, atomically; BUSY
     * while an insert of it is in progress or a commit rewrites it. Reply as LOCK's.
     */
    public static final int SD_READ = 0x5313;
    /** SUNDIAL's Lock stage (request as LOCK's, owner = transaction id): CAS of the lock word, reply as LOCK's. */
    public static final int SD_LOCK = 0x5314;
    public static final int MV_READ_REPLY_BYTES = 32;
    public static final int RENEW_ENTRY_BYTES = 32;
    /** MVCC: no version older than the reader's timestamp among the tuple's four (R1). */
    public static final int NO_VERSION = 3;
    /** MVCC: W1 failed (a version or a read at or after the writer's timestamp). */
    public static final int TOO_LATE = 4;

    /**
     * RCC's Log stage by RPC ({@link RccLog}): address (u64), rkey (i32), length (i32), then the record, which the
     * handler copies into the log region of that rkey on its node. Reply (8 B): GRANTED, or STALE when no log region
     * there holds the range.
     */
    public static final int LOG = 0x5306;
    public static final int LOG_HEAD_BYTES = 16;

    public static final int KIND_NOWAIT = 1;
    public static final int KIND_WAITDIE = 2;

    public static final int LOCK_REQUEST_BYTES = 24;
    public static final int LOCK_REPLY_BYTES = 16;
    public static final int GRANTED = 0;
    public static final int BUSY = 1;
    /** Unknown table, or the pointer is no longer a live object of it (slot freed or reused). */
    public static final int STALE = 2;

    public static final int HEAD_BYTES = 8;
    public static final int ENTRY_BYTES = 40;
    /** A RELEASE or VALIDATE entry: table, lock word offset, pointer, and the owner or the version read. */
    public static final int WORD_ENTRY_BYTES = 24;

    public static final int FLAG_VALUE = 1;
    public static final int FLAG_DELETE = 2;
    public static final int FLAG_REVIVE = 4;
    public static final int FLAG_VERSION = 8;
    /**
     * MVCC: first move the newest version to the older slot it overwrites (MvccTuple#victim); not when the version
     * word is BUSY (recovery finishing a one-sided commit whose doorbell moved it already, RccLockKind).
     */
    public static final int FLAG_MVCC = 16;
    /** MVCC: an inserted tuple, whose older slots are emptied (what they held was another key's or a delete's). */
    public static final int FLAG_FRESH = 32;
    /** SUNDIAL: rts (after the value, MvccTuple#rtsOffset) takes the installed version too (the lease [ts, ts]). */
    public static final int FLAG_RTS = 64;

    private RccRpc() {
    }

    /** Bytes of a WRITE_BACK entry with a value of {@code length} bytes. */
    public static int entryBytes(final int length) {
        return ENTRY_BYTES + ((length + 7) & ~7);
    }

    /**
     * Puts one WRITE_BACK entry into {@code request} at {@code at} ({@code length} bytes of {@code value}, none when
     * 0); returns the offset of the next.
     */
    public static int putWriteBack(final org.agrona.MutableDirectBuffer request, final int at, final int tableId,
                                   final int flags, final long pointer, final long version, final long owner,
                                   final int lockOffset, final org.agrona.DirectBuffer value, final int length) {
        request.putInt(at, tableId);
        request.putInt(at + 4, flags);
        request.putLong(at + 8, pointer);
        request.putLong(at + 16, version);
        request.putLong(at + 24, owner);
        request.putInt(at + 32, lockOffset);
        request.putInt(at + 36, length);
        if (length > 0) {
            request.putBytes(at + ENTRY_BYTES, value, 0, length);
        }
        return at + entryBytes(length);
    }
}
