package io.scythe.fabric;

import io.vertx.core.Vertx;

/** A fabric implementation, found with {@link java.util.ServiceLoader} by its {@link #name()}. */
public interface FabricProvider {
    String name();

    /** @throws FabricException when the provider cannot run here, with one sentence naming what is missing */
    Fabric open(Vertx vertx, FabricOptions options);
}
