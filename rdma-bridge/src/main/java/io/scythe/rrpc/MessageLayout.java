package io.scythe.rrpc;

/**
 * One RRPC message inside a bucket.
 *
 * <pre>
 *   0                   1                   2                   3
 *   0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
 *  +-------------------------------+-------------------------------+
 *  |  rpc id (u16)                 |  kind (u16)                   |  0  REQUEST, REPLY, ERROR
 *  +-------------------------------+-------------------------------+
 *  |  call id (u32): the caller's correlation number               |  4
 *  +---------------------------------------------------------------+
 *  |  payload length (u32)                                         |  8
 *  +---------------------------------------------------------------+
 *  |  reserved (u32)                                               | 12
 *  +---------------------------------------------------------------+
 *  |  payload (payload length bytes, padded to 8)                  | 16
 *  +---------------------------------------------------------------+
 * </pre>
 * An ERROR reply's payload is a u16 error code followed by a UTF-8 message.
 */
public final class MessageLayout {
    public static final int RPC_ID_OFFSET = 0;
    public static final int KIND_OFFSET = 2;
    public static final int CALL_ID_OFFSET = 4;
    public static final int LENGTH_OFFSET = 8;
    public static final int HEADER_BYTES = 16;

    public static final short KIND_REQUEST = 1;
    public static final short KIND_REPLY = 2;
    public static final short KIND_ERROR = 3;

    private MessageLayout() {
    }

    /** Bytes a message with a payload of {@code length} takes in a bucket. */
    public static int messageBytes(final int length) {
        return HEADER_BYTES + ((length + 7) & ~7);
    }

    /** The largest payload that fits a bucket of {@code bucketBytes} alone. */
    public static int maxPayload(final int bucketBytes) {
        return bucketBytes - BucketLayout.OVERHEAD_BYTES - HEADER_BYTES - 4;
    }
}
