package io.scythe.cluster;

import static org.assertj.core.api.Assertions.assertThat;

import io.scythe.txn.spi.ProtocolRegistry;
import org.junit.jupiter.api.Test;

/**
 * A restarted compute node is a restart to its module (held back, its recovered incarnations named) while earlier
 * incarnations are owed or one was recovered within the grace scope; a CALVIN node, taken over for good, always
 * (issue 18: restarted more than ten minutes after its recovery it started as an original member and hung).
 */
class RestartGraceScopeTest {
    private static final long NOW = 10_000_000_000L;

    @Test
    void shouldHoldBackARestartWithinTheScopeOnly() {
        final long scope = ScytheNode.restartGraceScopeMs(false);
        assertThat(scope).isEqualTo(ScytheNode.RESTART_GRACE_SCOPE_MS);
        assertThat(ScytheNode.awaitsOwnRecovery(false, NOW - scope + 1, NOW, scope)).isTrue();
        assertThat(ScytheNode.awaitsOwnRecovery(false, NOW - scope - 1, NOW, scope)).isFalse();
        assertThat(ScytheNode.awaitsOwnRecovery(false, -1, NOW, scope)).isFalse();
        assertThat(ScytheNode.awaitsOwnRecovery(true, -1, NOW, scope)).isTrue();
    }

    @Test
    void shouldHoldBackACalvinRestartHoweverLateItComes() {
        final boolean calvin = ProtocolRegistry.peerModuleOf(ProtocolRegistry.protocol("rcc-calvin"))
            .restartAlwaysRejoins(ProtocolRegistry.protocol("rcc-calvin"));
        assertThat(calvin).isTrue();
        final long scope = ScytheNode.restartGraceScopeMs(calvin);
        assertThat(ScytheNode.awaitsOwnRecovery(false, 0, NOW, scope)).as("recovered ~115 days ago").isTrue();
        assertThat(ScytheNode.awaitsOwnRecovery(false, -1, NOW, scope)).as("never taken over: a fresh member")
            .isFalse();
    }

    @Test
    void shouldLeaveOtherPeerProtocolsToTheScope() {
        for (final String name : new String[] {"lotus", "selcc-2pl"}) {
            assertThat(ProtocolRegistry.peerModuleOf(ProtocolRegistry.protocol(name))
                .restartAlwaysRejoins(ProtocolRegistry.protocol(name))).as(name).isFalse();
        }
    }
}
