package io.scythe.fabric.disni;

import io.scythe.fabric.Fabric;
import io.scythe.fabric.FabricOptions;
import io.scythe.fabric.FabricProvider;
import io.vertx.core.Vertx;

/** Service entry of the {@value DisniFabric#NAME} provider. */
public final class DisniFabricProvider implements FabricProvider {
    @Override
    public String name() {
        return DisniFabric.NAME;
    }

    @Override
    public Fabric open(final Vertx vertx, final FabricOptions options) {
        return new DisniFabric(vertx, options);
    }
}
