package io.scythe.rrpc;

import org.agrona.DirectBuffer;
import org.agrona.MutableDirectBuffer;
import org.agrona.concurrent.AtomicBuffer;

/** Writes and reads buckets ({@link BucketLayout}) in a buffer; a flyweight, reused. */
public final class Bucket {
    private Bucket() {
    }

    /** Room left in a bucket of {@code bucketBytes} that already holds {@code used} message bytes. */
    public static int room(final int bucketBytes, final int used) {
        return bucketBytes - BucketLayout.OVERHEAD_BYTES - used;
    }

    /**
     * Appends a message at {@code at} (an offset inside the bucket's message area, from {@link
     * BucketLayout#HEADER_BYTES}); the caller checked the room.
     *
     * @return the offset after the message
     */
    public static int append(final MutableDirectBuffer bucket, final int bucketOffset, final int at,
                             final int rpcId, final short kind, final int callId, final DirectBuffer payload,
                             final int payloadOffset, final int length) {
        final int m = bucketOffset + at;
        bucket.putShort(m + MessageLayout.RPC_ID_OFFSET, (short) rpcId);
        bucket.putShort(m + MessageLayout.KIND_OFFSET, kind);
        bucket.putInt(m + MessageLayout.CALL_ID_OFFSET, callId);
        bucket.putInt(m + MessageLayout.LENGTH_OFFSET, length);
        bucket.putInt(m + 12, 0);
        if (length > 0) {
            bucket.putBytes(m + MessageLayout.HEADER_BYTES, payload, payloadOffset, length);
        }
        return at + MessageLayout.messageBytes(length);
    }

    /**
     * Seals a bucket whose messages end at {@code end}: writes the header and both labels.
     *
     * @return the number of bytes to WRITE (header, messages and end label)
     */
    public static int seal(final MutableDirectBuffer bucket, final int bucketOffset, final int end, final long lap,
                           final int ack, final int count) {
        final int length = end - BucketLayout.HEADER_BYTES;
        final int label = BucketLayout.label(lap, length);
        bucket.putInt(bucketOffset + BucketLayout.ACK_OFFSET, ack);
        bucket.putShort(bucketOffset + BucketLayout.COUNT_OFFSET, (short) count);
        bucket.putShort(bucketOffset + BucketLayout.COUNT_OFFSET + 2, (short) 0);
        bucket.putInt(bucketOffset + 12, 0);
        bucket.putInt(bucketOffset + BucketLayout.endLabelOffset(length), label);
        bucket.putInt(bucketOffset + BucketLayout.LABEL_OFFSET, label);
        return BucketLayout.endLabelOffset(length) + BucketLayout.END_LABEL_BYTES;
    }

    /**
     * Whether the bucket at {@code bucketOffset} of a ring in {@code memory} holds a complete batch of lap
     * {@code lap}.
     *
     * @return the batch length, or -1 when it is not (yet) complete; -2 when it is malformed (labels agree but the
     *     length runs past the bucket)
     */
    public static int ready(final AtomicBuffer memory, final int bucketOffset, final int bucketBytes,
                            final long lap) {
        final int label = memory.getIntVolatile(bucketOffset + BucketLayout.LABEL_OFFSET);
        if (label == 0) {
            return -1;
        }
        final int length = BucketLayout.lengthOf(label);
        if (label != BucketLayout.label(lap, length)) {
            return -1; // a label of another lap: stale, or the sender is ahead of what we expect
        }
        if (BucketLayout.endLabelOffset(length) + BucketLayout.END_LABEL_BYTES > bucketBytes) {
            return -2;
        }
        final int end = memory.getIntVolatile(bucketOffset + BucketLayout.endLabelOffset(length));
        return end == label ? length : -1;
    }

    /** Zeroes the labels of a consumed bucket so that it cannot be taken again. */
    public static void release(final AtomicBuffer memory, final int bucketOffset, final int length) {
        memory.putIntRelease(bucketOffset + BucketLayout.endLabelOffset(length), 0);
        memory.putIntRelease(bucketOffset + BucketLayout.LABEL_OFFSET, 0);
    }
}
