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
    }

    @Test
    void shouldRefuseAnUnknownRuleNamingTheOnesItTakes() {
        assertThatThrownBy(() -> OnAbort.named("again"))
            .isInstanceOf(IllegalArgumentException.class)
            .hasMessageContaining("--on-abort 'again'").hasMessageContaining("retry, new");
    }
}
