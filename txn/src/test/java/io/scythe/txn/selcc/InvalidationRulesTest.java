package io.scythe.txn.selcc;

import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.api.Test;

import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * The invalidation message's fairness fields (SELCC §5.3.2: the sender's priority N_r + 1 and whether it may wait)
 * and which remembered message a frame serves first once its local transactions let go.
 */
class InvalidationRulesTest {
    @Test
    void shouldCarryThePriorityAndTheMayWaitFlag() {
        final UnsafeBuffer waits = Invalidation.request(Invalidation.PEER_WR, 7, "mn3", 42, 4096, 256, 3, true, 77,
            0x1234_5678L, 9L);
        assertThat(waits.getByte(Invalidation.KIND_OFFSET)).isEqualTo((byte) Invalidation.PEER_WR);
        assertThat(waits.getByte(Invalidation.REQUESTER_OFFSET)).isEqualTo((byte) 7);
        assertThat(waits.getByte(Invalidation.PRIORITY_OFFSET) & 0xff).isEqualTo(3);
        assertThat(waits.getByte(Invalidation.FLAGS_OFFSET) & Invalidation.FLAG_MAY_WAIT).isEqualTo(1);
        assertThat(waits.getLong(Invalidation.ADDRESS_OFFSET)).isEqualTo(4096);
        assertThat(Invalidation.node(waits, 0)).isEqualTo("mn3");
        // forwarding by one-sided WRITE: the sender's receive slot (address, rkey) and the ticket it checks there
        assertThat(waits.getInt(Invalidation.SLOT_RKEY_OFFSET)).isEqualTo(77);
        assertThat(waits.getLong(Invalidation.SLOT_ADDRESS_OFFSET)).isEqualTo(0x1234_5678L);
        assertThat(waits.getLong(Invalidation.TICKET_OFFSET)).isEqualTo(9L);

        final UnsafeBuffer holds = Invalidation.request(Invalidation.PEER_RD, 1, "mn0", 1, 64, 128, 255, false, 0, 0, 0);
        assertThat(holds.getByte(Invalidation.PRIORITY_OFFSET) & 0xff).isEqualTo(255);
        assertThat(holds.getByte(Invalidation.FLAGS_OFFSET) & Invalidation.FLAG_MAY_WAIT).isZero();
        assertThat(Invalidation.node(holds, 0)).isEqualTo("mn0"); // the flags do not reach into the name
    }

    @Test
    void shouldLayTheSlotImageOutAsTheReceiverReadsIt() {
        final UnsafeBuffer line = new UnsafeBuffer(new byte[40]);
        line.putLong(32, 0xABCDL);
        final UnsafeBuffer slot = Invalidation.slotImage(11L, line, 40, true, 0x0000_0008_0000_0010L);
        assertThat(slot.capacity()).isEqualTo(Invalidation.SLOT_LINE_OFFSET + 40);
        assertThat(slot.getLong(Invalidation.SLOT_TICKET_OFFSET)).isEqualTo(11L);
        assertThat(slot.getLong(Invalidation.SLOT_DIRTY_OFFSET)).isEqualTo(0x0000_0008_0000_0010L);
        assertThat(slot.getByte(Invalidation.SLOT_HEADER_DIRTY_OFFSET)).isEqualTo((byte) 1);
        assertThat(slot.getLong(Invalidation.SLOT_LINE_OFFSET + 32)).isEqualTo(0xABCDL);
    }

    @Test
    void shouldRefuseAPriorityOutsideOneByte() {
        assertThatThrownBy(() -> Invalidation.request(Invalidation.PEER_WR, 1, "mn0", 1, 64, 128, 256, true, 0, 0,
            0))
            .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("priority 256");
        assertThatThrownBy(() -> Invalidation.request(Invalidation.PEER_WR, 1, "mn0", 1, 64, 128, -1, true, 0, 0, 0))
            .isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void shouldServeTheHighestPriorityFirstAndTheEarliestAmongEquals() {
        final LineCache.Waiting first = new LineCache.Waiting(Invalidation.PEER_WR, 2, 1, null);
        final LineCache.Waiting older = new LineCache.Waiting(Invalidation.PEER_RD, 3, 4, null);
        final LineCache.Waiting younger = new LineCache.Waiting(Invalidation.PEER_WR, 4, 4, null);
        final LineCache.Waiting low = new LineCache.Waiting(Invalidation.PEER_WR, 5, 2, null);
        assertThat(LineCache.highest(List.of(first, older, younger, low))).isSameAs(older);
        assertThat(LineCache.highest(List.of(first, low))).isSameAs(low);
        assertThat(LineCache.highest(List.of(first))).isSameAs(first);
        assertThatThrownBy(() -> LineCache.highest(List.of())).isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void shouldGrantEveryRememberedReaderAheadOfTheWritersInOneDowngrade() {
        final LineCache.Waiting best = new LineCache.Waiting(Invalidation.PEER_RD, 3, 5, null);
        final LineCache.Waiting writer = new LineCache.Waiting(Invalidation.PEER_WR, 2, 3, null);
        final LineCache.Waiting reader = new LineCache.Waiting(Invalidation.PEER_RD, 4, 3, null);
        final LineCache.Waiting behind = new LineCache.Waiting(Invalidation.PEER_RD, 6, 2, null);
        final LineCache.Waiting again = new LineCache.Waiting(Invalidation.PEER_RD, 3, 4, null);
        final LineCache.Waiting self = new LineCache.Waiting(Invalidation.PEER_RD, 7, 9, null);
        final List<LineCache.Waiting> waiting = new java.util.ArrayList<>(List.of(writer, reader, behind, again, self));
        assertThat(LineCache.readersWith(best, waiting, 7)).containsExactly(best, reader);
        assertThat(waiting).as("the ones left: answered \"not held\" once the downgrade landed")
            .containsExactly(writer, behind, again, self);
        final List<LineCache.Waiting> readersOnly = new java.util.ArrayList<>(List.of(behind));
        assertThat(LineCache.readersWith(best, readersOnly, 7)).containsExactly(best, behind);
        assertThat(readersOnly).isEmpty();
    }
}
