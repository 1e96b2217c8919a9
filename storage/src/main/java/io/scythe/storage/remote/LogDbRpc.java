package io.scythe.storage.remote;

/**
 * RPC ids and payloads of LogDB on a memory node (served by {@link LogDbService}, called by {@link RemoteTable}).
 * Little-endian (native) words:
 * <pre>
 *  LOOKUP  request: u32 table id | u32 pad | u64 key                   reply: u64 object pointer (0: absent)
 *                                                                            | u64 absent bound (Table#absentBound)
 *  READ    request: u32 table id | u32 pad | u64 pointer | u64 ts      reply: the value visible at ts, or error
 *  LOOKUP_READ request: u32 table id | u32 pad | u64 key | u64 ts      reply: u64 pointer | value (one round trip)
 *  INSERT  request: u32 table id | u32 lock (0 CAS word, 1 ticket) | u64 key | u64 lock word (owner id or ts)
 *                   | u32 value length | u32 pad | value       reply: u64 pointer | u64 version | u64 ticket
 *  ABANDON request: u32 table id | u32 lock | u64 key | u64 pointer     reply: u64 0
 *  LOCATE  request: u32 table id | u32 pad | u64 key                   reply: u64 object pointer
 *  KEYS    request: u32 table id | u32 limit | u64 skip      reply: u32 count | u32 pad | u64 keys in all | keys
 *  GRANT   request: u32 table id | u32 count [| u64 holder]  reply: u32 count | u32 pad | count x u64 pointer
 *  RECLAIM request: u32 table id | u32 pad | u64 holder       reply: u64 slots given back
 * </pre>
 * KEYS enumerates a table's index (deleted objects too) in the index's order, {@code limit} keys from the
 * {@code skip}-th on: the re-replicator of a rejoining copy pages through a primary with it. The order is the
 * index's as it is now; keys inserted or freed between pages may be missed or seen twice (the caller copes).
 * LOCATE is for backup copies ({@code BackupTables}): the object of the key there, a deleted placeholder created when
 * there is none ({@code Table#locateBackupObject}), which a primary's write-back then addresses one-sided.
 * INSERT creates the key already locked by the inserting transaction ({@code Table#insertLocked}); ABANDON undoes
 * it when that transaction does not commit ({@code Table#abandonInsert}). The ticket is the Takeout Lock ticket the
 * inserter holds ({@code Table#insertTicket}; 0 with a CAS word): a revived object's is not 0, and the inserter's
 * redo record must name it for recovery to tell its lock still held.
 * GRANT hands object slots, outside the index, to a compute node that inserts one-sided (Lotus:
 * {@code Table#grantSlots}); it writes the object and its index slot itself. With a holder (its incarnation's id,
 * non-zero) the memory node remembers the slots as that holder's, and RECLAIM, sent by the recovery of that dead
 * holder once its redo records are settled, gives back those no index entry names ({@code Table#reclaimGranted}).
 * Errors use the RRPC error reply with the codes below.
 */
public final class LogDbRpc {
    public static final int LOOKUP = 0x4c01;
    public static final int READ = 0x4c02;
    public static final int LOOKUP_READ = 0x4c03;
    public static final int INSERT = 0x4c04;
    public static final int ABANDON = 0x4c05;
    public static final int LOCATE = 0x4c06;
    public static final int KEYS = 0x4c07;
    public static final int GRANT = 0x4c08;
    public static final int RECLAIM = 0x4c09;
    /** Most slots one GRANT reply carries (its 456 bytes fit one reply bucket of the default RRPC options, 472). */
    public static final int GRANT_MAX = 56;
    /** Most keys one KEYS reply carries: its 464 bytes fit one reply bucket of the default RRPC options (472). */
    public static final int KEYS_MAX = 56;
    /** Bytes of a KEYS reply before the keys. */
    public static final int KEYS_REPLY_HEADER_BYTES = 16;
    /** Bytes of a LOOKUP reply: the pointer, and for a missing key the version bound of its absence. */
    public static final int LOOKUP_REPLY_BYTES = 16;
    /** Bytes of an INSERT request before the value. */
    public static final int INSERT_HEADER_BYTES = 32;
    /** Bytes of an INSERT reply. */
    public static final int INSERT_REPLY_BYTES = 24;

    /** No table with that id on the node. */
    public static final int UNKNOWN_TABLE = 104;
    /** The key is absent, or no version is visible at the timestamp. */
    public static final int NOT_FOUND = 105;
    /** The pointer is stale (its slot was freed or reused). */
    public static final int STALE = 106;
    /** The request's bytes are not of this RPC's form. */
    public static final int BAD_REQUEST = 107;
    /** INSERT of a key that exists. */
    public static final int DUPLICATE = 108;
    /** INSERT into a table with no room left (objects or index). */
    public static final int FULL = 109;
    /** INSERT of a key whose object another transaction holds or queues on (its existence is not settled). */
    public static final int LOCKED = 110;

    private LogDbRpc() {
    }
}
