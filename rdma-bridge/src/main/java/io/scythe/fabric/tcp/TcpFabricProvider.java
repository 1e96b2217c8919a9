package io.scythe.fabric.tcp;

import io.scythe.fabric.Fabric;
import io.scythe.fabric.FabricOptions;
import io.scythe.fabric.FabricProvider;
import io.vertx.core.Vertx;

/** Service entry of the {@value TcpFabric#NAME} provider. */
public final class TcpFabricProvider implements FabricProvider {
    @Override
    public String name() {
        return TcpFabric.NAME;
    }

    @Override
    public Fabric open(final Vertx vertx, final FabricOptions options) {
        return new TcpFabric(vertx, options);
    }
}
