package io.scythe.txn.scythe;

import io.scythe.txn.spi.ProtocolRegistry;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * {@code scythe}, the default, is the shared-ticket variant (issue 22); the paper's exclusive-only tickets are
 * {@code scythe:exclusive}, the old name {@code scythe:shared} still runs the default; a bad option is refused clearly.
 */
class SharedReadsOptionTest {
    @Test
    void shouldMakeTheSharedVariantTheDefaultAndKeepTheExclusiveOneByOption() {
        assertThat(ProtocolRegistry.protocol("scythe")).isSameAs(ScytheModule.SCYTHE);
        assertThat(ProtocolRegistry.protocol("scythe:exclusive")).isSameAs(ScytheModule.EXCLUSIVE);
        assertThat(ProtocolRegistry.protocol("scythe:exclusive").name()).isEqualTo("scythe:exclusive");
        assertThat(ProtocolRegistry.protocol("scythe:shared")).isSameAs(ScytheModule.SHARED_READS);
        assertThat(ProtocolRegistry.protocol("scythe:shared").name()).isEqualTo("scythe:shared");
        assertThat(ProtocolRegistry.listedNames()).contains("scythe").doesNotContain("scythe:shared",
            "scythe:exclusive");
        assertThat(ProtocolRegistry.moduleOf("scythe:exclusive")).isInstanceOf(ScytheModule.class);
        assertThat(ProtocolRegistry.moduleOf("scythe:shared")).isInstanceOf(ScytheModule.class);
    }

    @Test
    void shouldRefuseAnUnknownOptionNamingTheOnesItTakes() {
        assertThatThrownBy(() -> ProtocolRegistry.protocol("scythe:exclusiv"))
            .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("scythe:exclusive")
            .hasMessageContaining("scythe:shared");
        assertThatThrownBy(() -> ProtocolRegistry.protocol("scythe-occ:shared"))
            .isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> ProtocolRegistry.protocol("scythe:exclusive:shared"))
            .isInstanceOf(IllegalArgumentException.class);
    }
}
