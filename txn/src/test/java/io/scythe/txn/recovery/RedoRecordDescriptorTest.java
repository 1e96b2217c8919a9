package io.scythe.txn.recovery;

import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/** A redo record counts as complete only when whole: a torn or stale byte anywhere makes it incomplete. */
class RedoRecordDescriptorTest {
    private static UnsafeBuffer sealedRecord(final int length) {
        final UnsafeBuffer b = new UnsafeBuffer(new byte[RedoRecordDescriptor.SLOT_BYTES * 2]);
        b.putInt(RedoRecordDescriptor.MAGIC_OFFSET, RedoRecordDescriptor.MAGIC);
        b.putInt(RedoRecordDescriptor.LENGTH_OFFSET, length);
        b.putLong(RedoRecordDescriptor.TXN_ID_OFFSET, 42);
        b.putLong(RedoRecordDescriptor.VERSION_OFFSET, 7);
        for (int i = RedoRecordDescriptor.HEADER_BYTES; i < length - RedoRecordDescriptor.TRAILER_BYTES; i++) {
            b.putByte(i, (byte) i);
        }
        RedoRecordDescriptor.seal(b, 0, length);
        return b;
    }

    @Test
    void shouldAcceptASealedRecord() {
        assertThat(RedoRecordDescriptor.completeLength(sealedRecord(200), 0, 1024)).isEqualTo(200);
    }

    @Test
    void shouldRejectATornRecord() {
        final UnsafeBuffer torn = sealedRecord(200);
        torn.putByte(100, (byte) (torn.getByte(100) ^ 1)); // a byte of an older record left in the slot
        assertThat(RedoRecordDescriptor.completeLength(torn, 0, 1024)).isEqualTo(-1);
        final UnsafeBuffer unsealed = sealedRecord(200);
        unsealed.putLong(200 - RedoRecordDescriptor.TRAILER_BYTES, 0); // the WRITE stopped before its last word
        assertThat(RedoRecordDescriptor.completeLength(unsealed, 0, 1024)).isEqualTo(-1);
    }

    @Test
    void shouldRejectALengthBeyondTheRegionOrNoMagic() {
        assertThat(RedoRecordDescriptor.completeLength(sealedRecord(200), 0, 199)).isEqualTo(-1);
        assertThat(RedoRecordDescriptor.completeLength(new UnsafeBuffer(new byte[512]), 0, 512)).isEqualTo(-1);
    }
}
