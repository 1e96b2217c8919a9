package io.scythe.fabric.tcp;

import io.scythe.fabric.CostModel;
import io.scythe.fabric.Fabric;
import io.scythe.fabric.FabricContractTest;
import io.scythe.fabric.FabricOptions;
import io.vertx.core.Vertx;
import io.vertx.core.VertxOptions;

import java.util.concurrent.TimeUnit;

/** The fabric contract on the tcp provider: two nodes of one JVM talking over loopback sockets. */
class TcpFabricContractTest extends FabricContractTest {
    private Vertx vertx;

    @Override
    protected Fabric openFabric(final String cluster) {
        vertx = Vertx.vertx(new VertxOptions().setEventLoopPoolSize(2));
        return new TcpFabric(vertx, new FabricOptions().provider(TcpFabric.NAME).cluster(cluster)
            .costModel(CostModel.zero()).address("cn0", "127.0.0.1:0").address("mn0", "127.0.0.1:0"));
    }

    @Override
    protected void closeProvider() throws Exception {
        vertx.close().await(10, TimeUnit.SECONDS);
    }
}
