package io.scythe.txn.scythe;

import io.scythe.txn.spi.ProtocolRegistry;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** {@code scythe:shared}, the shared-ticket variant, asked for by name only; a bad option is refused clearly. */
class SharedReadsOptionTest {
    @Test
    void shouldNameTheSharedVariantByOptionAndKeepItOffTheListedProtocols() {
        assertThat(ProtocolRegistry.protocol("scythe:shared")).isSameAs(ScytheModule.SHARED_READS);
        assertThat(ProtocolRegistry.protocol("scythe:shared").name()).isEqualTo("scythe:shared");
        assertThat(ProtocolRegistry.listedNames()).doesNotContain("scythe:shared");
        assertThat(ProtocolRegistry.moduleOf("scythe:shared")).isInstanceOf(ScytheModule.class);
    }

    @Test
    void shouldRefuseAnUnknownOptionNamingTheOneItTakes() {
        assertThatThrownBy(() -> ProtocolRegistry.protocol("scythe:sharde"))
            .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("scythe:shared");
        assertThatThrownBy(() -> ProtocolRegistry.protocol("scythe-occ:shared"))
            .isInstanceOf(IllegalArgumentException.class);
    }
}
