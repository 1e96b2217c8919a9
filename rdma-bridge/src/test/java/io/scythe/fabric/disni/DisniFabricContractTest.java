package io.scythe.fabric.disni;

import io.scythe.fabric.CostModel;
import io.scythe.fabric.Fabric;
import io.scythe.fabric.FabricContractTest;
import io.scythe.fabric.FabricOptions;
import io.vertx.core.Vertx;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeAll;

import java.util.concurrent.TimeUnit;

/**
 * The fabric contract on real RDMA. Runs only where libdisni loads, an RDMA device exists, and
 * {@code SCYTHE_RDMA_ADDRESS} names an address of the device (two nodes of this JVM listen on ports 7471 and 7472).
 */
class DisniFabricContractTest extends FabricContractTest {
    private Vertx vertx;

    @BeforeAll
    static void requireRdma() {
        Assumptions.assumeTrue(DisniSupport.available(), "no libdisni or no RDMA device on this host");
        Assumptions.assumeTrue(System.getenv("SCYTHE_RDMA_ADDRESS") != null,
            "SCYTHE_RDMA_ADDRESS (an IP address of the RDMA device) is not set");
    }

    @Override
    protected Fabric openFabric(final String cluster) {
        vertx = Vertx.vertx();
        final String host = System.getenv("SCYTHE_RDMA_ADDRESS");
        return new DisniFabric(vertx, new FabricOptions().provider(DisniFabric.NAME).cluster(cluster)
            .costModel(CostModel.zero()).address("cn0", host + ":7471").address("mn0", host + ":7472"));
    }

    @Override
    protected boolean readsNicClocks() {
        return false;
    }

    @org.junit.jupiter.api.Test
    void shouldRefuseNicClocksSayingWhatTheyWouldNeed() {
        org.assertj.core.api.Assertions.assertThatThrownBy(cn::nicClock)
            .isInstanceOf(io.scythe.fabric.FabricException.class).hasMessageContaining("ibv_query_rt_values_ex");
        org.assertj.core.api.Assertions.assertThat(qp.post(new io.scythe.fabric.WorkRequest().read(
            io.scythe.fabric.NicClockWord.ADDRESS, io.scythe.fabric.NicClockWord.RKEY, local, 0, 8)))
            .isEqualTo(io.scythe.fabric.QueuePair.INVALID_REQUEST);
        org.assertj.core.api.Assertions.assertThat(cn.hostClockNs()).isPositive();
    }

    @Override
    protected void closeProvider() throws Exception {
        vertx.close().await(10, TimeUnit.SECONDS);
    }
}
