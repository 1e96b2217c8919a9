package io.scythe.fabric.shm;

import io.scythe.fabric.Fabric;
import io.scythe.fabric.FabricOptions;
import io.scythe.fabric.FabricProvider;
import io.vertx.core.Vertx;

/** Service entry of the {@value ShmFabric#NAME} provider. */
public final class ShmFabricProvider implements FabricProvider {
    @Override
    public String name() {
        return ShmFabric.NAME;
    }

    @Override
    public Fabric open(final Vertx vertx, final FabricOptions options) {
        return new ShmFabric(options);
    }
}
