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
        old.putInt(RedoRecordDescriptor.MAGIC_OFFSET, 0x5352444f); // 'SRDO', the layout before a376c2d1:
        old.putInt(RedoRecordDescriptor.COUNT_OFFSET, 3); // u32 count
        old.putInt(RedoRecordDescriptor.COUNT_OFFSET + 4, 1); // u32 lock kind: the u16 kind reads 0
        sealAs(old, 0, 200, 0x5352444f);
        assertThat(RedoRecordDescriptor.formatOf(old, 0, 1024)).isEqualTo(0x4f);
        assertThat(RedoRecordDescriptor.completeLength(old, 0, 1024)).isEqualTo(-1);
        org.assertj.core.api.Assertions.assertThatThrownBy(() -> RedoRecordDescriptor.checkFormat(old, 0, 1024,
            "at offset 0")).isInstanceOf(RedoRecordDescriptor.UnreadableRedoRecordException.class)
            .hasMessageContaining("redo record at offset 0 has format version 79 (0x4f)");
        final UnsafeBuffer other = sealedRecord(200);
        other.putInt(RedoRecordDescriptor.MAGIC_OFFSET, RedoRecordDescriptor.FAMILY << 8 | 3);
        sealAs(other, 0, 200, RedoRecordDescriptor.FAMILY << 8 | 3);
        org.assertj.core.api.Assertions.assertThatThrownBy(() -> RedoRecordDescriptor.checkFormat(other, 0, 1024,
            "at offset 0")).hasMessageContaining("format version 3 (0x3)");
    }

    /** 'SRDO' records written from a376c2d1 to the format version have this layout: read as version 2. */
    @Test
    void shouldReadALegacyMagicRecordOfThisLayout() {
        final UnsafeBuffer b = sealedRecord(200);
        b.putInt(RedoRecordDescriptor.MAGIC_OFFSET, 0x5352444f);
        RedoRecordDescriptor.putCounts(b, 0, 2, 1, 5);
        sealAs(b, 0, 200, 0x5352444f);
        assertThat(RedoRecordDescriptor.completeLength(b, 0, 1024)).isEqualTo(200);
        RedoRecordDescriptor.checkFormat(b, 0, 1024, "legacy");
        b.putByte(100, (byte) (b.getByte(100) ^ 1));
        assertThat(RedoRecordDescriptor.completeLength(b, 0, 1024)).as("torn").isEqualTo(-1);
    }

    /**
     * The scan checks every slot boundary, inside torn records and stale tails too: four bytes there that read like
     * another version's first word (a user value "ODRS") are garbage unless a complete record of that word starts
     * there. Before, checkFormat refused them and stopped the recovery.
     */
    @Test
    void shouldNotRefuseAnotherVersionsWordThatStartsNoCompleteRecord() {
        final UnsafeBuffer log = new UnsafeBuffer(new byte[RedoRecordDescriptor.SLOT_BYTES * 3]);
        final int slot = RedoRecordDescriptor.SLOT_BYTES;
        log.putInt(0, RedoRecordDescriptor.MAGIC); // a torn record of two slots whose value crosses the boundary
        log.putInt(RedoRecordDescriptor.LENGTH_OFFSET, slot + 200);
        log.putBytes(slot, "ODRS".getBytes(java.nio.charset.StandardCharsets.US_ASCII)); // 'SRDO' little-endian
        log.putInt(slot + RedoRecordDescriptor.LENGTH_OFFSET, 200); // even a plausible length after it
        log.putBytes(2 * slot, "\u0007DRS".getBytes(java.nio.charset.StandardCharsets.US_ASCII)); // version 7
        for (int at = 0; at < log.capacity(); at += slot) {
            RedoRecordDescriptor.checkFormat(log, at, log.capacity() - at, "at " + at);
            assertThat(RedoRecordDescriptor.completeLength(log, at, log.capacity() - at)).isEqualTo(-1);
        }
        assertThat(RedoRecordDescriptor.formatOf(log, slot, slot * 2)).isEqualTo(0x4f);
    }

    private static void sealAs(final UnsafeBuffer b, final int offset, final int length, final int word) {
        final byte[] body = new byte[length - RedoRecordDescriptor.TRAILER_BYTES];
        b.getBytes(offset, body);
        final java.util.zip.CRC32C crc = new java.util.zip.CRC32C();
        crc.update(body);
        b.putLong(offset + length - RedoRecordDescriptor.TRAILER_BYTES, (long) word << 32 | crc.getValue());
    }
}
