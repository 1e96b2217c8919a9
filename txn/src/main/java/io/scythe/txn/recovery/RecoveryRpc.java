package io.scythe.txn.recovery;

/**
 * The memory-node RPCs of redo logging and recovery ({@link RecoveryService}). All payloads little-endian, as every
 * RRPC payload.
 * <ul>
 *   <li>{@link #LOG_OPEN}: {@code idBase u64, bytes u32} - registers a log region for the calling compute node's
 *       loop whose transaction ids start at {@code idBase}; reply {@code address u64, rkey u32, bytes u32}.</li>
 *   <li>{@link #LOG_LIST}: {@code node name (UTF-8)} - fences that compute node on this memory node (nothing it
 *       sent may land after) and lists its log regions; reply {@code count u32, pad u32}, then per region
 *       {@code address u64, rkey u32, bytes u32, idBase u64}.</li>
 *   <li>{@link #RELEASE_NODE}: {@code count u32, pad u32, count x id prefix u64, node name (UTF-8)} - fences it,
 *       then cancels every Takeout ticket it holds or queues for, abandons inserts it left locked, frees CAS lock
 *       words whose owner id has one of the prefixes ({@link #NODE_ID_MASK}), and frees its log regions; reply
 *       {@code tickets u32, casWords u32, inserts u32, regions u32}.</li>
 * </ul>
 */
public final class RecoveryRpc {
    public static final int LOG_OPEN = 0x5201;
    public static final int LOG_LIST = 0x5202;
    public static final int RELEASE_NODE = 0x5203;

    public static final int LOG_OPEN_REQUEST_BYTES = 12;
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

    /**
     * The part of a transaction id that names its compute node (and epoch): bits 48-63 (epoch) and 32-39 (node
     * slot); bits 40-47 number the loop and the low 32 bits count transactions (see {@code ScytheNode}).
     */
    public static final long NODE_ID_MASK = 0xffff_00ff_0000_0000L;

    private RecoveryRpc() {
    }
}
