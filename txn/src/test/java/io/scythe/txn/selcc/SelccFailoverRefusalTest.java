package io.scythe.txn.selcc;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * SELCC's redo records carry commit version 0, which recovery cannot settle on a promoted copy: cluster mode's
 * memory-node failover is refused for each of its protocols by name (issue 23 review), never run and then stuck.
 */
class SelccFailoverRefusalTest {
    @Test
    void shouldRefuseClusterMemoryNodeFailoverForEverySelccProtocol() {
        final SelccModule module = new SelccModule();
        for (final io.scythe.txn.Protocol p : module.protocols()) {
            assertThat(module.clusterMemoryNodeFailoverRefusal(p)).as(p.name()).contains(p.name())
                .contains("commit version 0");
        }
        assertThat(module.clusterMemoryNodeFailoverRefusal(io.scythe.txn.spi.ProtocolRegistry.protocol("scythe")))
            .isNull();
    }
}
