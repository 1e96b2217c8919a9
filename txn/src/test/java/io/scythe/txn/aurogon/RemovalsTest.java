package io.scythe.txn.aurogon;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

class RemovalsTest {
    @Test
    void shouldPollACatalogAtAThousandthOfTheFailoverWait() {
        assertThat(Removals.pollNs(2_020_000)).as("the simulator's memory-node crash runs").isEqualTo(2_020);
        assertThat(Removals.pollNs(6_000_000_000L)).as("a cluster compute node's 6 s wait").isEqualTo(6_000_000);
        assertThat(Removals.pollNs(100_000_000_000L)).isEqualTo(Removals.MAX_POLL_NS);
        assertThat(Removals.pollNs(10_000)).isEqualTo(Removals.MIN_POLL_NS);
    }
}
