package io.scythe.txn;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;

/**
 * The back-off bound after an aborted attempt, shared by the coordinator and the simulator's B-link transactions
 * (TreeSim: retried at once, refused TO attempts of one leaf refused each other forever, selcc22).
 */
class CoordinatorBackoffTest {
    @Test
    void shouldDoubleFromOneMicrosecondUpToTheCap() {
        assertThat(Coordinator.backoffBoundNs(1)).isEqualTo(1_000);
        assertThat(Coordinator.backoffBoundNs(2)).isEqualTo(2_000);
        assertThat(Coordinator.backoffBoundNs(8)).isEqualTo(128_000);
        assertThat(Coordinator.backoffBoundNs(9)).isEqualTo(Coordinator.MAX_BACKOFF_NS);
        assertThat(Coordinator.backoffBoundNs(10_000)).isEqualTo(Coordinator.MAX_BACKOFF_NS);
    }

    @Test
    void shouldRefuseAnAttemptBelowOne() {
        assertThatThrownBy(() -> Coordinator.backoffBoundNs(0)).isInstanceOf(IllegalArgumentException.class)
            .hasMessageContaining("attempt 0");
    }
}
