package io.scythe.txn.recovery;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * Copy-then-verify is only sound where a commit's lock shows in the primary object's header; the copier refuses the
 * protocols that lock elsewhere, naming why (its copy under load is tested in {@code CnRecoveryTest}).
 */
class ReReplicatorTest {
    @Test
    void shouldRefuseProtocolsWhoseCommitsDoNotLockThePrimarysHeader() {
        for (final String protocol : new String[] {"lotus", "rcc-calvin", "rcc-nowait", "selcc-2pl", "aurogon"}) {
            assertThatThrownBy(() -> new ReReplicator(null, protocol)).as(protocol)
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("not " + protocol)
                .hasMessageContaining("ford-occ, motor, scythe, scythe-occ");
        }
    }
}
