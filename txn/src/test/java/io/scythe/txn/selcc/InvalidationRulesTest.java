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
        final UnsafeBuffer waits = Invalidation.request(Invalidation.PEER_WR, 7, "mn3", 42, 4096, 256, 3, true);
        assertThat(waits.getByte(Invalidation.KIND_OFFSET)).isEqualTo((byte) Invalidation.PEER_WR);
        assertThat(waits.getByte(Invalidation.REQUESTER_OFFSET)).isEqualTo((byte) 7);
        assertThat(waits.getByte(Invalidation.PRIORITY_OFFSET) & 0xff).isEqualTo(3);
        assertThat(waits.getByte(Invalidation.FLAGS_OFFSET) & Invalidation.FLAG_MAY_WAIT).isEqualTo(1);
        assertThat(waits.getLong(Invalidation.ADDRESS_OFFSET)).isEqualTo(4096);
        assertThat(Invalidation.node(waits, 0)).isEqualTo("mn3");

        final UnsafeBuffer holds = Invalidation.request(Invalidation.PEER_RD, 1, "mn0", 1, 64, 128, 255, false);
        assertThat(holds.getByte(Invalidation.PRIORITY_OFFSET) & 0xff).isEqualTo(255);
        assertThat(holds.getByte(Invalidation.FLAGS_OFFSET) & Invalidation.FLAG_MAY_WAIT).isZero();
        assertThat(Invalidation.node(holds, 0)).isEqualTo("mn0"); // the flags do not reach into the name
    }

    @Test
    void shouldRefuseAPriorityOutsideOneByte() {
        assertThatThrownBy(() -> Invalidation.request(Invalidation.PEER_WR, 1, "mn0", 1, 64, 128, 256, true))
            .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("priority 256");
        assertThatThrownBy(() -> Invalidation.request(Invalidation.PEER_WR, 1, "mn0", 1, 64, 128, -1, true))
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
}
