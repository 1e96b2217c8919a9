package io.scythe.txn.rcc;

import io.scythe.txn.rcc.calvin.CalvinModule;
import io.scythe.txn.spi.ProtocolRegistry;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Cluster mode's memory-node failover (and so {@code scythe chaos --mn-faults}) is taken by every RCC protocol but
 * CALVIN, whose failover is built in the simulator only (CalvinMnCrashSimTest): the locking ones by the shared failover, MVCC and
 * SUNDIAL with their promoted copies settled on their memory node (the rts floor, issue 18).
 */
class RccClusterFailoverRefusalTest {
    @Test
    void everyProtocolButCalvinShouldTakeAClusterFailoverTheTimestampOnesWithTheirSettling() {
        final RccModule rcc = new RccModule();
        for (final io.scythe.txn.Protocol p : java.util.List.of(RccModule.MVCC, RccModule.SUNDIAL,
            ProtocolRegistry.protocol("rcc-mvcc:primitive=rpc"), ProtocolRegistry.protocol("rcc-sundial:hybrid=101010"),
            RccModule.NOWAIT, RccModule.WAITDIE, RccModule.OCC)) {
            assertThat(rcc.clusterMemoryNodeFailoverRefusal(p)).as(p.name()).isNull();
            assertThat(rcc.clusterSettlesPromotedCopies(p)).as(p.name())
                .isEqualTo(p.name().startsWith("rcc-mvcc") || p.name().startsWith("rcc-sundial"));
        }
        assertThat(new CalvinModule().clusterMemoryNodeFailoverRefusal(ProtocolRegistry.protocol("rcc-calvin")))
            .contains("simulator only");
    }
}
