package io.scythe.storage.mv;

/**
 * RPC ids and payloads of multi-version tables on a memory node (served by {@link MvService}, called by
 * {@link MvRemoteTable}): the operations as the memory node's CPU does them, one round trip each, for the stages a
 * protocol runs two-sided (RCC's hybrids: an atomic read-and-raise or lock in one handler) and for what only the CPU
 * can do (moving a version to the overflow log). Little-endian (native) words:
 * <pre>
 *  READ      request: u32 table | u32 flags (1: raise rts) | u64 pointer | u64 ts              24 bytes
 *            reply:   i32 status (value length, or MvStatus) | i32 slot (-1 overflow) | u64 wts | value
 *  INSTALL   request: u32 table | u32 flags (1: exclusive, 2: has value) | u64 pointer | u64 ts | u64 owner
 *                     | u32 pad | u32 value length | value                                      40 bytes + value
 *            reply:   i32 status (the slot, or MvStatus) | u32 pad
 *  COMMIT    request: u32 table | u32 flags (2: has value) | u64 pointer | u64 ts | u32 slot
 *                     | u32 value length | value                                                32 bytes + value
 *            reply:   i32 status | u32 pad
 *  ROLLBACK  request: u32 table | u32 pad | u64 pointer | u64 ts | u32 slot | u32 pad           32 bytes
 *            reply:   i32 status | u32 pad
 *  MAKE_ROOM request: u32 table | u32 pad | u64 pointer                                         16 bytes
 *            reply:   i32 status | u32 pad
 *  LOOKUP    request: u32 table | u32 pad | u64 key                                             16 bytes
 *            reply:   u64 object pointer (0: absent)
 * </pre>
 * The value's length is always the header's last word, and a value follows only with the flag set.
 * Outcomes of timestamp ordering (refusals, pending versions, a held latch) are statuses in the reply; the RRPC error
 * reply is only for requests that are malformed or name no table, with the codes below.
 */
public final class MvRpc {
    public static final int READ = 0x4d01;
    public static final int INSTALL = 0x4d02;
    public static final int COMMIT = 0x4d03;
    public static final int ROLLBACK = 0x4d04;
    public static final int MAKE_ROOM = 0x4d05;
    public static final int LOOKUP = 0x4d06;

    public static final int FLAG_RAISE_RTS = 1;
    public static final int FLAG_EXCLUSIVE = 1;
    public static final int FLAG_VALUE = 2;

    public static final int READ_REQUEST_BYTES = 24;
    public static final int READ_REPLY_HEADER_BYTES = 16;
    public static final int INSTALL_HEADER_BYTES = 40;
    public static final int COMMIT_HEADER_BYTES = 32;
    public static final int ROLLBACK_REQUEST_BYTES = 32;
    public static final int POINTER_REQUEST_BYTES = 16;
    public static final int STATUS_REPLY_BYTES = 8;

    /** No multi-version table with that id on the node. */
    public static final int UNKNOWN_TABLE = 120;
    /** The request's bytes are not of this RPC's form. */
    public static final int BAD_REQUEST = 121;

    private MvRpc() {
    }
}
