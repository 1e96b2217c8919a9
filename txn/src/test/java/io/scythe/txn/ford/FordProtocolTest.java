package io.scythe.txn.ford;

import io.scythe.txn.spi.ProtocolRegistry;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/** FORD's clients retry no aborted transaction (FordModule#FORD_OCC); the other protocols keep the coordinator's. */
class FordProtocolTest {
    @Test
    void shouldNotRetryAnAbortedFordTransactionWhileOthersDo() {
        assertThat(ProtocolRegistry.protocol("ford-occ").retriesAbortedTransactions()).isFalse();
        assertThat(ProtocolRegistry.protocol("farm-occ").retriesAbortedTransactions()).isTrue();
        assertThat(ProtocolRegistry.protocol("scythe").retriesAbortedTransactions()).isTrue();
    }
}
