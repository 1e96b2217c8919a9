package io.scythe.fabric.local;

import io.scythe.fabric.Fabric;
import io.scythe.fabric.FabricOptions;
import io.scythe.fabric.FabricProvider;
import io.vertx.core.Vertx;

/** Service entry of the {@value LocalFabric#NAME} provider. */
public final class LocalFabricProvider implements FabricProvider {
    @Override
    public String name() {
        return LocalFabric.NAME;
    }

    @Override
    public Fabric open(final Vertx vertx, final FabricOptions options) {
        return new LocalFabric(options);
    }
}
