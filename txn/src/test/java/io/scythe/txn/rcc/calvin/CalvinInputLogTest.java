package io.scythe.txn.rcc.calvin;

import io.scythe.txn.rcc.calvin.CalvinWire.Decl;
import io.scythe.txn.rcc.calvin.CalvinWire.Key;
import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.api.Test;

import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/** CALVIN's input-log records (sans-IO): what a scan of a region finds, and what it must not (a torn record). */
class CalvinInputLogTest {
    private static final Decl A = new Decl(0x11, 2, List.of(new Key("savings", 7), new Key("checking", 9)),
        List.of(false, true));
    private static final Decl B = new Decl(0x12, 2, List.of(new Key("savings", 8)), List.of(true));

    @Test
    void shouldFindEveryCompleteRecordOfARegionByEpochAndNoTornOne() {
        final UnsafeBuffer region = new UnsafeBuffer(new byte[8 * CalvinInputLog.SLOT_BYTES]);
        final UnsafeBuffer e5 = CalvinInputLog.encode(5, 2, List.of(List.of(A), List.of(), List.of(A, B)));
        final UnsafeBuffer e3 = CalvinInputLog.encode(3, 2, List.of(List.of(), List.of(B), List.of()));
        final UnsafeBuffer e9 = CalvinInputLog.encode(9, 2, List.of(List.of(B), List.of(), List.of()));
        region.putBytes(2 * CalvinInputLog.SLOT_BYTES, e5, 0, e5.capacity());
        region.putBytes(0, e3, 0, e3.capacity());
        // A torn record: its last byte (part of the CRC) never landed.
        region.putBytes(5 * CalvinInputLog.SLOT_BYTES, e9, 0, e9.capacity() - 1);

        final List<CalvinInputLog.Entry> found = CalvinInputLog.scan(region, region.capacity());

        assertThat(found).extracting(CalvinInputLog.Entry::epoch).containsExactly(3L, 5L);
        assertThat(found.get(1).from()).isEqualTo(2);
        assertThat(found.get(1).byNode()).containsExactly(List.of(A), List.of(), List.of(A, B));
        assertThat(found.get(0).byNode()).containsExactly(List.of(), List.of(B), List.of());
        // One flipped bit in a declaration: the CRC refuses it.
        region.putByte(2 * CalvinInputLog.SLOT_BYTES + CalvinInputLog.HEADER_BYTES + 6,
            (byte) (region.getByte(2 * CalvinInputLog.SLOT_BYTES + CalvinInputLog.HEADER_BYTES + 6) ^ 1));
        assertThat(CalvinInputLog.scan(region, region.capacity())).extracting(CalvinInputLog.Entry::epoch)
            .containsExactly(3L);
    }
}
