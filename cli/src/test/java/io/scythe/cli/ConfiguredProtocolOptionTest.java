package io.scythe.cli;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Where the registered protocols are accepted ({@code cluster --protocol}), a registered one with options the registry
 * resolves is accepted too ({@code scythe:exclusive}, the paper's Scythe since {@code scythe} takes shared tickets);
 * an option it refuses, or an unknown name, still is refused naming what is accepted.
 */
class ConfiguredProtocolOptionTest {
    @Test
    void shouldAcceptARegisteredProtocolWithOptionsAndRefuseABadOne() throws Exception {
        final Accepts accepts = ClusterCommand.class.getDeclaredField("protocol").getAnnotation(Accepts.class);
        assertThat(OptionChecks.problem(accepts, String.class, "scythe")).isNull();
        assertThat(OptionChecks.problem(accepts, String.class, "scythe:exclusive")).isNull();
        assertThat(OptionChecks.problem(accepts, String.class, "scythe:exclusiv")).startsWith("accepts one of");
        assertThat(OptionChecks.problem(accepts, String.class, "nosuch:exclusive")).startsWith("accepts one of");
        assertThat(OptionChecks.problem(accepts, String.class, ":exclusive")).startsWith("accepts one of");
    }
}
