package io.scythe.txn;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** The harness's rule for aborted transactions: its values and the attempts each gives a coordinator. */
class OnAbortTest {
    @Test
    void shouldGiveEveryProtocolTheRuleItNames() {
        assertThat(OnAbort.named("retry").attempts(1000)).isEqualTo(1000);
        assertThat(OnAbort.named("new").attempts(1000)).isEqualTo(1);
        assertThat(OnAbort.valueOf("RETRY").label()).isEqualTo("retry");
        // Scythe's harness: TPC-C's NewOrder retried, its other types once; other workloads' types retried.
        final OnAbort scythe = OnAbort.named("scythe");
        assertThat(scythe.attempts(1000, "NewOrder")).isEqualTo(1000);
        assertThat(scythe.attempts(1000, "StockLevel")).isEqualTo(1);
        assertThat(scythe.attempts(1000, "Payment")).isEqualTo(1);
        assertThat(scythe.attempts(1000, "Amalgamate")).isEqualTo(1000);
        assertThat(OnAbort.RETRY.attempts(1000, "StockLevel")).isEqualTo(1000);
        assertThat(OnAbort.NEW.attempts(1000, "NewOrder")).isEqualTo(1);
    }

    @Test
    void shouldRefuseAnUnknownRuleNamingTheOnesItTakes() {
        assertThatThrownBy(() -> OnAbort.named("again"))
            .isInstanceOf(IllegalArgumentException.class)
            .hasMessageContaining("--on-abort 'again'").hasMessageContaining("retry, new, scythe");
    }
}
