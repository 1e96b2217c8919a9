package io.scythe.txn.recovery;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * Copy-then-verify is only sound where a commit's lock shows in the primary object's header; the copier refuses the
 * protocols that lock elsewhere, naming why (its copy under load is tested in {@code CnRecoveryTest}).
 */
class ReReplicatorTest {
    @Test
    void shouldRefuseProtocolsWhoseCommitsDoNotLockThePrimarysHeader() {
        for (final String protocol : new String[] {"lotus", "rcc-calvin", "rcc-nowait", "selcc-2pl"}) {
            assertThatThrownBy(() -> new ReReplicator(null, protocol)).as(protocol)
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("not " + protocol)
                .hasMessageContaining("ford-occ, motor, motor-si, scythe, scythe-occ");
        }
        assertThatThrownBy(() -> new ReReplicator(null, "rcc-nowait:primitive=rpc")).as("options do not make it so")
            .isInstanceOf(IllegalArgumentException.class);
    }

    /** A protocol configured by options is its base protocol: {@code motor:versions=3} locks the header as motor does. */
    @Test
    void shouldMatchAProtocolConfiguredByOptionsByItsBaseName() {
        assertThat(ReReplicator.headerLocked("motor:versions=3")).isTrue();
        assertThat(ReReplicator.headerLocked("motor")).isTrue();
        assertThat(ReReplicator.headerLocked("motor-si:versions=3")).as("SI locks as SR does").isTrue();
        assertThat(ReReplicator.headerLocked("scythe-occ:x=1")).isTrue();
        assertThat(ReReplicator.headerLocked("lotus:x=1")).isFalse();
        assertThat(ReReplicator.headerLocked("motorx")).isFalse();
        assertThat(ReReplicator.headerLocked(":motor")).isFalse();
    }

    /**
     * Aurogon's commits lock no header either, but its module writes the new copy itself (a COPY applied by the APPLY
     * rule, never over a newer version: ProtocolModule#replicaWrite), so its copies can be re-replicated.
     */
    @Test
    void shouldAcceptAurogonWhoseModuleWritesTheCopyItself() {
        assertThat(ReReplicator.supported("aurogon")).isTrue();
        assertThat(ReReplicator.supported("aurogon-2l")).isTrue();
        assertThat(ReReplicator.headerLocked("aurogon")).isFalse();
        assertThat(ReReplicator.supported("lotus")).isFalse();
        assertThat(ReReplicator.supported("scythe")).isTrue();
        assertThat(new ReReplicator(null, "aurogon")).isNotNull();
    }
}
