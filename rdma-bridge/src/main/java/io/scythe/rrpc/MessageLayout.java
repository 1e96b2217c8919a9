package io.scythe.rrpc;

/**
 * One RRPC message inside a bucket.
 *
 * <pre>
 *   0                   1                   2                   3
 *   0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
 *  +-------------------------------+-------------------------------+
 *  |  rpc id (u16)                 |  kind (u16)                   |  0  see the KIND_ constants
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
 * An ERROR reply's payload is a u32 error code followed by a UTF-8 message. A zero-copy request's payload starts
 * with its target (u64 address, u32 rkey, u32 capacity); a DESCRIPTOR reply's payload is (u64 address, u32 rkey,
 * u32 length); a ZERO_COPY_DONE reply's payload is the u32 length written.
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
    /** Reply: the data is at (address, rkey, length) on the server, to READ one-sided (Fig. 20 (b)). */
    public static final short KIND_DESCRIPTOR = 4;
    /** Reply: the server WROTE the data into the caller's buffer before this message (Fig. 20 (c)). */
    public static final short KIND_ZERO_COPY_DONE = 5;
    /** Request carrying a registered target buffer for a zero-copy reply. */
    public static final short KIND_REQUEST_ZERO_COPY = 6;
    /** Bytes of the zero-copy target prefix and of a descriptor. */
    public static final int TARGET_BYTES = 16;

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
