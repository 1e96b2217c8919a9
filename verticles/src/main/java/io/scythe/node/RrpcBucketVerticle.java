package io.scythe.node;

import io.scythe.fabric.Nic;
import io.scythe.rrpc.RpcServer;
import io.scythe.rrpc.RrpcOptions;
import io.vertx.core.Future;
import io.vertx.core.VerticleBase;

import java.util.List;
import java.util.function.Consumer;

/**
 * A node's RRPC server on the event loop this verticle is deployed on: that loop is the node's "core" for RPCs (its
 * handlers never run in parallel), polled by the loop's bridge. The services given register their handlers before
 * the server opens to clients.
 */
public final class RrpcBucketVerticle extends VerticleBase {
    private final Nic nic;
    private final RrpcOptions options;
    private final List<Consumer<RpcServer>> services;
    private RpcServer server;

    public RrpcBucketVerticle(final Nic nic, final RrpcOptions options, final List<Consumer<RpcServer>> services) {
        this.nic = nic;
        this.options = options;
        this.services = List.copyOf(services);
    }

    @Override
    public Future<?> start() {
        server = new RpcServer(vertx, nic, options);
        for (final Consumer<RpcServer> service : services) {
            service.accept(server);
        }
        return server.start();
    }

    @Override
    public Future<?> stop() {
        return server == null ? Future.succeededFuture() : server.stop();
    }

    public RpcServer server() {
        return server;
    }
}
