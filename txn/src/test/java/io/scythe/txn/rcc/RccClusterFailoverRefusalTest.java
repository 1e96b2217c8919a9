package io.scythe.txn.rcc;

import io.scythe.txn.rcc.calvin.CalvinModule;
import io.scythe.txn.spi.ProtocolRegistry;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Cluster mode's memory-node failover (and so {@code scythe chaos --mn-faults}) is taken by every RCC protocol: the
 * locking ones by the shared failover, MVCC and SUNDIAL with their promoted copies settled on their memory node (the
 * rts floor, issue 18), CALVIN with its promoted copies serving at once (no stale writer: its locks are on the compute
 * nodes), which no other RCC protocol may.
 */
class RccClusterFailoverRefusalTest {
    @Test
    void everyProtocolShouldTakeAClusterFailoverTheTimestampOnesWithTheirSettlingCalvinServingAtOnce() {
        final RccModule rcc = new RccModule();
        for (final io.scythe.txn.Protocol p : java.util.List.of(RccModule.MVCC, RccModule.SUNDIAL,
            ProtocolRegistry.protocol("rcc-mvcc:primitive=rpc"), ProtocolRegistry.protocol("rcc-sundial:hybrid=101010"),
            RccModule.NOWAIT, RccModule.WAITDIE, RccModule.OCC)) {
            assertThat(rcc.clusterMemoryNodeFailoverRefusal(p)).as(p.name()).isNull();
            assertThat(rcc.clusterPromotedCopiesServeAtOnce(p)).as(p.name()).isFalse();
            assertThat(rcc.clusterSettlesPromotedCopies(p)).as(p.name())
                .isEqualTo(p.name().startsWith("rcc-mvcc") || p.name().startsWith("rcc-sundial"));
        }
        assertThat(new CalvinModule().replicates()).as("cluster nodes keep CALVIN's backups").isTrue();
        for (final String calvin : java.util.List.of("rcc-calvin", "rcc-calvin:primitive=rpc")) {
            final io.scythe.txn.Protocol p = ProtocolRegistry.protocol(calvin);
            assertThat(new CalvinModule().clusterMemoryNodeFailoverRefusal(p)).as(calvin).isNull();
            assertThat(new CalvinModule().clusterPromotedCopiesServeAtOnce(p)).as(calvin).isTrue();
            assertThat(new CalvinModule().clusterSettlesPromotedCopies(p)).as(calvin).isFalse();
        }
    }
}
