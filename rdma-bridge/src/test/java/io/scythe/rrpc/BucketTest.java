package io.scythe.rrpc;

import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

class BucketTest {
    private static final int BUCKET = BucketLayout.DEFAULT_BUCKET_BYTES;

    @Test
    void shouldPackMessagesAndAcceptOnlyACompleteBucketOfTheExpectedLap() {
        final UnsafeBuffer staging = new UnsafeBuffer(new byte[BUCKET]);
        final UnsafeBuffer payload = new UnsafeBuffer(new byte[64]);
        payload.putLong(0, 0x1234);
        int at = BucketLayout.HEADER_BYTES;
        at = Bucket.append(staging, 0, at, 7, MessageLayout.KIND_REQUEST, 1, payload, 0, 8);
        at = Bucket.append(staging, 0, at, 9, MessageLayout.KIND_REQUEST, 2, payload, 0, 13);
        final int bytes = Bucket.seal(staging, 0, at, 3, 42, 2);
        assertThat(bytes).isEqualTo(at + 4);

        // The receiver's ring: copy the sealed bucket in, but the end label last (as a WRITE lands).
        final UnsafeBuffer ring = new UnsafeBuffer(org.agrona.BufferUtil.allocateDirectAligned(2 * BUCKET, 64));
        final int length = at - BucketLayout.HEADER_BYTES;
        ring.putBytes(BUCKET, staging, 0, bytes - 4);
        assertThat(Bucket.ready(ring, BUCKET, BUCKET, 3)).as("end label not yet there").isEqualTo(-1);
        ring.putBytes(BUCKET + bytes - 4, staging, bytes - 4, 4);
        assertThat(Bucket.ready(ring, BUCKET, BUCKET, 2)).as("another lap").isEqualTo(-1);
        assertThat(Bucket.ready(ring, BUCKET, BUCKET, 3)).isEqualTo(length);
        assertThat(ring.getInt(BUCKET + BucketLayout.ACK_OFFSET)).isEqualTo(42);
        assertThat(ring.getShort(BUCKET + BucketLayout.COUNT_OFFSET)).isEqualTo((short) 2);
        final int first = BUCKET + BucketLayout.HEADER_BYTES;
        assertThat(ring.getShort(first + MessageLayout.RPC_ID_OFFSET)).isEqualTo((short) 7);
        assertThat(ring.getLong(first + MessageLayout.HEADER_BYTES)).isEqualTo(0x1234);
        final int second = first + MessageLayout.messageBytes(8);
        assertThat(ring.getInt(second + MessageLayout.CALL_ID_OFFSET)).isEqualTo(2);
        assertThat(ring.getInt(second + MessageLayout.LENGTH_OFFSET)).isEqualTo(13);
        Bucket.release(ring, BUCKET, length);
        assertThat(Bucket.ready(ring, BUCKET, BUCKET, 3)).isEqualTo(-1);
    }

    @Test
    void shouldRefuseATornBucketWhoseEndLabelIsFromAnotherLap() {
        final UnsafeBuffer ring = new UnsafeBuffer(org.agrona.BufferUtil.allocateDirectAligned(BUCKET, 64));
        final UnsafeBuffer staging = new UnsafeBuffer(new byte[BUCKET]);
        final int end = Bucket.append(staging, 0, BucketLayout.HEADER_BYTES, 1, MessageLayout.KIND_REQUEST, 1,
            staging, 0, 0);
        final int bytes = Bucket.seal(staging, 0, end, 5, 0, 1);
        // The old lap's end label sits where the new one will go; only the start label of lap 6 has landed.
        ring.putInt(bytes - 4, BucketLayout.label(5, end - BucketLayout.HEADER_BYTES));
        ring.putInt(0, BucketLayout.label(6, end - BucketLayout.HEADER_BYTES));
        assertThat(Bucket.ready(ring, 0, BUCKET, 6)).isEqualTo(-1);
    }

    @Test
    void shouldFlagALabelWhoseLengthRunsPastTheBucket() {
        final UnsafeBuffer ring = new UnsafeBuffer(org.agrona.BufferUtil.allocateDirectAligned(BUCKET, 64));
        ring.putInt(0, BucketLayout.label(1, BUCKET));
        assertThat(Bucket.ready(ring, 0, BUCKET, 1)).isEqualTo(-2);
        assertThat(MessageLayout.maxPayload(BUCKET)).isEqualTo(BUCKET - 20 - 16 - 4);
    }
}
