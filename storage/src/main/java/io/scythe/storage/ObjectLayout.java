package io.scythe.storage;

/**
 * The layout of one object in a memory node's registered memory: a 64-byte header, then the newest committed value.
 * One READ of {@code HEADER_BYTES + valueLength} bytes fetches everything a protocol needs to decide: lock state,
 * version and data. Every field is a whole, 8-byte-aligned word, so a NIC atomic on one field never races with a CPU
 * update of another (RDMA atomics are atomic only against other RDMA atomics on the same word).
 *
 * <pre>
 *   0                   1                   2                   3
 *   0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
 *  +---------------------------------------------------------------+
 *  |                  lower (u64)   Takeout Lock: next ticket        |  0  MN CPU, in the Lock RPC (Fig. 14)
 *  +---------------------------------------------------------------+
 *  |                  upper (u64)   Takeout Lock: ticket served      |  8  CN, RDMA FAA +1 to unlock
 *  +---------------------------------------------------------------+
 *  |                  queued_ts (u64) largest timestamp queued       | 16  MN CPU, in the Lock RPC
 *  +---------------------------------------------------------------+
 *  |                  cas_lock (u64)  0 free, else the holder        | 24  CN, RDMA CAS (FORD/FaRM baselines)
 *  +---------------------------------------------------------------+
 *  |  B|           version (63 bits) commit ts of the value below   | 32  writer of the value; B = busy
 *  +---------------------------------------------------------------+
 *  |  older: address of the next-older version record (48 bits)    | 40  0 when there is none
 *  +---------------------------------------------------------------+
 *  |                  protocol word (u64)                            | 48  per protocol: e.g. a read timestamp
 *  +-------------------------------+---------------+---------------+
 *  |  value length (u32)           | flags (u16)   | incarnation   | 56  DELETED; slot reuse count (u16)
 *  +-------------------------------+---------------+---------------+
 *  |                  value (value length bytes, 8-byte padded)      | 64
 *  |                              ...                                |
 *  +---------------------------------------------------------------+
 * </pre>
 *
 * Deviation from Scythe's Fig. 13 ({@code u16 lower; u16 upper; u64 queued_ts}): lower and upper are 64-bit and in
 * separate words. The paper's client unlocks with an FAA of {@code 1<<16} on the word holding both counters while the
 * MN's CPU increments {@code lower} in that same word; on a real NIC an RDMA atomic is not atomic against a CPU write
 * to the same word, so a ticket could be lost. With separate words the MN only ever writes {@code lower} and the CNs
 * only ever add to {@code upper}; the counters never wrap in practice. The public prototype also uses 64-bit fields.
 */
public final class ObjectLayout {
    public static final int LOWER_OFFSET = 0;
    public static final int UPPER_OFFSET = 8;
    public static final int QUEUED_TS_OFFSET = 16;
    public static final int CAS_LOCK_OFFSET = 24;
    public static final int VERSION_OFFSET = 32;
    public static final int OLDER_OFFSET = 40;
    public static final int PROTOCOL_WORD_OFFSET = 48;
    public static final int VALUE_LENGTH_OFFSET = 56;
    public static final int FLAGS_OFFSET = 60;
    public static final int INCARNATION_OFFSET = 62;
    public static final int HEADER_BYTES = 64;
    public static final int VALUE_OFFSET = HEADER_BYTES;

    /**
     * Bit 63 of {@code version}: set while the value is being rewritten. A writer sets it, rewrites the value, then
     * stores the new version; a reader that sees it set, or sees {@code version} change across its copy of the value,
     * copied a torn value and must read again (a seqlock). Timestamps are below 2^63.
     */
    public static final long VERSION_BUSY = 1L << 63;

    /**
     * Version of bulk-loaded data: below every timestamp (the TSO hands out 1 and up) and every FORD-style counter
     * (old + 1), so a commit always installs a version its object never had. Load with 1 and the first commit at
     * timestamp 1 would install a version equal to the one readers validated against: a lost update.
     */
    public static final long LOADED_VERSION = 0;

    /**
     * The version a write installs with commit version {@code commitVersion} over an object whose version, under the
     * writer's lock, is {@code current}: above both. Every path that installs a version (write-back, recovery's roll
     * forward, the memory node's revive and abandon, which add 1) follows it, so the versions of an object strictly
     * increase in the order they are installed and no two writes of it install the same one: version equality is
     * then proof that nothing was written in between (OCC validation), and the version order is the install order
     * (the history checker). A commit version alone does not do: a TOCC write carries its start timestamp, and the
     * memory node's {@code +1} versions fall among timestamps handed out to live transactions.
     */
    public static long versionAfter(final long commitVersion, final long current) {
        return Math.max(commitVersion, current + 1);
    }

    /** Flag: the newest version is a delete (a tombstone, kept until no transaction can read the older ones). */
    public static final int FLAG_DELETED = 1;

    /** Addresses fit in 48 bits on x86-64 and ConnectX. */
    public static final long ADDRESS_MASK = (1L << 48) - 1;
    public static final int INCARNATION_SHIFT = 48;

    /**
     * An object <em>pointer</em>, as indexes store it and compute nodes cache it: the slot's incarnation in the top
     * 16 bits, its address below. A slot freed and reused for another key gets the next incarnation, so a stale
     * cached pointer is detected (its incarnation no longer matches the header's) instead of reading another key.
     */
    public static long pointer(final long address, final int incarnation) {
        return ((long) (incarnation & 0xffff) << INCARNATION_SHIFT) | (address & ADDRESS_MASK);
    }

    public static long addressOf(final long pointer) {
        return pointer & ADDRESS_MASK;
    }

    public static int incarnationOf(final long pointer) {
        return (int) (pointer >>> INCARNATION_SHIFT);
    }

    private ObjectLayout() {
    }

    /** Bytes an object slot with room for {@code maxValueBytes} takes: header plus value, 8-byte aligned. */
    public static int slotBytes(final int maxValueBytes) {
        return HEADER_BYTES + align8(maxValueBytes);
    }

    static int align8(final int bytes) {
        return (bytes + 7) & ~7;
    }
}
