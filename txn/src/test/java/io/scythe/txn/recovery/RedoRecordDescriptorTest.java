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

    /** Count, lock kind and configuration epoch share the header's old count and lock kind words (issue 23). */
    @Test
    void shouldCarryTheConfigurationEpochInTheHeaderWithoutGrowingIt() {
        final UnsafeBuffer b = sealedRecord(200);
        RedoRecordDescriptor.putCounts(b, 0, 0xffff, 7, 0xffff_ffffL);
        assertThat(RedoRecordDescriptor.countOf(b, 0)).isEqualTo(0xffff);
        assertThat(RedoRecordDescriptor.lockKindOf(b, 0)).isEqualTo(7);
        assertThat(RedoRecordDescriptor.epochOf(b, 0)).isEqualTo(0xffff_ffffL);
        assertThat(RedoRecordDescriptor.HEADER_BYTES).isEqualTo(48);
        org.assertj.core.api.Assertions.assertThatThrownBy(() -> RedoRecordDescriptor.putCounts(b, 0, 0x10000, 1, 0))
            .hasMessageContaining("65536 entries (at most 65535)");
        org.assertj.core.api.Assertions.assertThatThrownBy(() -> RedoRecordDescriptor.putCounts(b, 0, 1, 1,
            1L << 32)).hasMessageContaining("configuration epoch 4294967296");
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

    /** The first word names the format: a record of another version is refused, never read as this layout. */
    @Test
    void shouldRefuseARecordOfAnotherFormatVersion() {
        final UnsafeBuffer current = sealedRecord(200);
        assertThat(RedoRecordDescriptor.formatOf(current, 0, 1024)).isEqualTo(RedoRecordDescriptor.FORMAT_VERSION);
        RedoRecordDescriptor.checkFormat(current, 0, 1024, "current");
        assertThat(RedoRecordDescriptor.formatOf(new UnsafeBuffer(new byte[512]), 0, 512)).as("no record").isEqualTo(-1);
        RedoRecordDescriptor.checkFormat(new UnsafeBuffer(new byte[512]), 0, 512, "an empty slot");
        final UnsafeBuffer old = sealedRecord(200);
        old.putInt(RedoRecordDescriptor.MAGIC_OFFSET, 0x5352444f); // 'SRDO': the records before the version
        assertThat(RedoRecordDescriptor.formatOf(old, 0, 1024)).isEqualTo(0x4f);
        assertThat(RedoRecordDescriptor.completeLength(old, 0, 1024)).isEqualTo(-1);
        org.assertj.core.api.Assertions.assertThatThrownBy(() -> RedoRecordDescriptor.checkFormat(old, 0, 1024,
            "at offset 0")).isInstanceOf(RedoRecordDescriptor.UnreadableRedoRecordException.class)
            .hasMessageContaining("redo record at offset 0 has format version 79 (0x4f)");
    }
}
