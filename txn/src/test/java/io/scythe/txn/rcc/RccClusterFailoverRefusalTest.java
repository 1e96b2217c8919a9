package io.scythe.txn.rcc;

import io.scythe.txn.rcc.calvin.CalvinModule;
import io.scythe.txn.spi.ProtocolRegistry;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Cluster mode's memory-node failover (and so {@code scythe chaos --mn-faults}) is refused for RCC's timestamp
 * protocols, whose promoted copies' rts is not floored, and for CALVIN, whose executors give the run up on a dead
 * memory node; the locking ones take the shared failover.
 */
class RccClusterFailoverRefusalTest {
    @Test
    void timestampProtocolsAndCalvinShouldRefuseAClusterFailoverWhileLockingOnesTakeIt() {
        final RccModule rcc = new RccModule();
        assertThat(rcc.clusterMemoryNodeFailoverRefusal(RccModule.MVCC)).contains("rts is not floored");
        assertThat(rcc.clusterMemoryNodeFailoverRefusal(RccModule.SUNDIAL)).contains("rcc-sundial");
        assertThat(rcc.clusterMemoryNodeFailoverRefusal(ProtocolRegistry.protocol("rcc-mvcc:primitive=rpc")))
            .contains("rts is not floored");
        assertThat(rcc.clusterMemoryNodeFailoverRefusal(RccModule.NOWAIT)).isNull();
        assertThat(rcc.clusterMemoryNodeFailoverRefusal(RccModule.WAITDIE)).isNull();
        assertThat(rcc.clusterMemoryNodeFailoverRefusal(RccModule.OCC)).isNull();
        assertThat(new CalvinModule().clusterMemoryNodeFailoverRefusal(ProtocolRegistry.protocol("rcc-calvin")))
            .contains("gives the run up");
    }
}
