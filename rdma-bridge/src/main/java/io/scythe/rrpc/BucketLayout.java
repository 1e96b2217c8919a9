package io.scythe.rrpc;

/**
 * One bucket of an RRPC ring (Scythe §4.6 (3), Fig. 21): a batch of messages written by one RDMA WRITE. The ring is
 * divided into buckets of {@code bucketBytes} (512 by default); the sender packs the small messages of a round into
 * buckets (message batching) and posts the round's buckets as one doorbell batch of WRITEs (doorbell batching).
 *
 * <pre>
 *   0                   1                   2                   3
 *   0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
 *  +-----------------------+---------------------------------------+
 *  |  lap (12 bits)        |  batch length (20 bits)               |  0  start label
 *  +-----------------------+---------------------------------------+
 *  |  ack: buckets of the other direction this side has consumed   |  4
 *  +-------------------------------+-------------------------------+
 *  |  message count (u16)          |  reserved (u16)               |  8
 *  +-------------------------------+-------------------------------+
 *  |  reserved (u32)                                               | 12
 *  +---------------------------------------------------------------+
 *  |  messages (batch length bytes): see MessageLayout             | 16
 *  |                              ...                              |
 *  +---------------------------------------------------------------+
 *  |  end label: equal to the start label                          | 16 + batch length
 *  +---------------------------------------------------------------+
 * </pre>
 * The receiver takes a bucket only when its start label is non-zero, carries the lap it expects for that position of
 * the ring, and equals the end label: a WRITE still landing (or a stale bucket from an earlier lap) is never taken.
 * After consuming it the receiver zeroes both labels. The lap makes an old end label left at the same offset
 * useless to a new start label.
 */
public final class BucketLayout {
    public static final int LABEL_OFFSET = 0;
    public static final int ACK_OFFSET = 4;
    public static final int COUNT_OFFSET = 8;
    public static final int HEADER_BYTES = 16;
    public static final int END_LABEL_BYTES = 4;
    /** Bytes of a bucket that are not messages. */
    public static final int OVERHEAD_BYTES = HEADER_BYTES + END_LABEL_BYTES;
    public static final int LENGTH_BITS = 20;
    public static final int LENGTH_MASK = (1 << LENGTH_BITS) - 1;
    public static final int LAP_MASK = 0xfff;
    /** The paper's bucket size and the cut-off between pure RPC and the hybrid modes (Scythe §4.6, Fig. 10). */
    public static final int DEFAULT_BUCKET_BYTES = 512;
    public static final int MIN_BUCKET_BYTES = 128;
    public static final int MAX_BUCKET_BYTES = 1 << 16;

    private BucketLayout() {
    }

    /** The label of a batch of {@code length} message bytes written on lap {@code lap} of the ring. */
    public static int label(final long lap, final int length) {
        // Lap 0 would give a label equal to a zeroed one for an empty batch: laps start at 1.
        return (int) (((lap % LAP_MASK) + 1) << LENGTH_BITS) | length;
    }

    public static int lengthOf(final int label) {
        return label & LENGTH_MASK;
    }

    /** Offset of the end label of a batch of {@code length} message bytes. */
    public static int endLabelOffset(final int length) {
        return HEADER_BYTES + length;
    }

    public static void checkBucketBytes(final int bucketBytes) {
        if (bucketBytes < MIN_BUCKET_BYTES || bucketBytes > MAX_BUCKET_BYTES || (bucketBytes & 7) != 0) {
            throw new IllegalArgumentException("bucketBytes=" + bucketBytes + " must be a multiple of 8 within ["
                + MIN_BUCKET_BYTES + ", " + MAX_BUCKET_BYTES + "]");
        }
    }
}
