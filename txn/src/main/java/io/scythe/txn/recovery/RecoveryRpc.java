package io.scythe.txn.recovery;

/**
 * The memory-node RPCs of redo logging and recovery ({@link RecoveryService}). All payloads little-endian, as every
 * RRPC payload.
 * <ul>
 *   <li>{@link #LOG_OPEN}: {@code idBase u64, bytes u32} - registers a log region for the calling compute node's
 *       loop whose transaction ids start at {@code idBase}; reply {@code address u64, rkey u32, bytes u32}. With a
 *       {@code kind u32} after them ({@link #LOG_OPEN_KIND_REQUEST_BYTES}), a region of that kind: {@link #KIND_REDO}
 *       as without it, {@link #KIND_INPUT_LOG} a protocol's input log (CALVIN's), named apart from the redo logs
 *       ({@code RecoveryService.INPUT_LOG_REGION_PREFIX}), neither listed by {@link #LOG_LIST} nor freed by
 *       {@link #RELEASE_NODE} (survivors read it after the node's release).</li>
 *   <li>{@link #LOG_LIST}: {@code claim u64, node name (UTF-8)} - fences that compute node on this memory node
 *       (nothing it sent may land after), makes the caller its one recoverer here (see below) and lists its log
 *       regions; reply {@code count u32, pad u32}, then per region {@code address u64, rkey u32, bytes u32,
 *       idBase u64}.</li>
 *   <li>{@link #RELEASE_NODE}: {@code claim u64, count u32, pad u32, count x id prefix u64, node name (UTF-8)} -
 *       fences it, then (from its recoverer only) runs the protocol modules' release steps that come before inserts
 *       (Scythe: cancel every Takeout ticket it holds or queues for), abandons inserts it left locked, runs the steps
 *       that come after (FORD: free CAS lock words whose owner id has one of the prefixes, {@link #NODE_ID_MASK}),
 *       and frees its log regions; the recovery is over on this node. Reply {@code inserts u32, regions u32,
 *       steps u32, pad u32}, then per step {@code released u32, name length u16, name (UTF-8)}.</li>
 * </ul>
 *
 * <p>One recoverer per dead node at a time: two rolling the same log forward at once would both see a lock still
 * held by a record's ticket and both add 1 to {@code upper}, skipping a live ticket. The first caller of a dead node
 * is its recoverer until its release; another caller is refused with {@link #RECOVERY_BUSY} unless it brings a
 * larger {@code claim} (the claim counter of the cluster's owed-recovery entry) and this memory node has fenced the
 * recoverer before it (its member left: it is dead, and nothing it started can land any more).
 */
public final class RecoveryRpc {
    public static final int LOG_OPEN = 0x5201;
    public static final int LOG_LIST = 0x5202;
    public static final int RELEASE_NODE = 0x5203;
    /**
     * Where the input-log region ({@link #KIND_INPUT_LOG}) a compute-node incarnation opened here is: request the
     * incarnation's fabric identity (UTF-8, up to {@link #MAX_NODE_NAME_BYTES}); reply {@code address u64, rkey u32,
     * bytes u32} ({@link #LOG_OPEN_REPLY_BYTES}), or nothing when it opened none. What survivors on other processes ask
     * for a dead node's CALVIN input log (the region outlives the node's release).
     */
    public static final int INPUT_LOG_FIND = 0x5204;

    public static final int LOG_OPEN_REQUEST_BYTES = 12;
    /** A {@link #LOG_OPEN} request naming the region's kind. */
    public static final int LOG_OPEN_KIND_REQUEST_BYTES = 16;
    /** Region kind: a loop's redo log. */
    public static final int KIND_REDO = 0;
    /** Region kind: a protocol's input log (CALVIN's sequenced batches), kept past the node's release. */
    public static final int KIND_INPUT_LOG = 1;
    /** Bytes before the node name of a {@link #LOG_LIST} request (the claim). */
    public static final int LIST_REQUEST_HEADER_BYTES = 8;
    /** Bytes before the id prefixes of a {@link #RELEASE_NODE} request (claim, count, pad). */
    public static final int RELEASE_REQUEST_HEADER_BYTES = 16;
    public static final int LOG_OPEN_REPLY_BYTES = 16;
    public static final int LIST_HEADER_BYTES = 8;
    public static final int LIST_ENTRY_BYTES = 24;
    public static final int RELEASE_REPLY_BYTES = 16;
    /** Longest node name accepted. */
    public static final int MAX_NODE_NAME_BYTES = 256;
    /** Failure code: a malformed request. */
    public static final int BAD_REQUEST = 120;
    /** Failure code: the log region could not be registered. */
    public static final int NO_SPACE = 121;
    /** Failure code: another live compute node is recovering that node on this memory node. */
    public static final int RECOVERY_BUSY = 122;

    /**
     * The part of a transaction id that names its compute node (and epoch): bits 48-63 (epoch) and 32-39 (node
     * slot); bits 40-47 number the loop and the low 32 bits count transactions (see {@code ScytheNode}).
     */
    public static final long NODE_ID_MASK = 0xffff_00ff_0000_0000L;

    private RecoveryRpc() {
    }
}
