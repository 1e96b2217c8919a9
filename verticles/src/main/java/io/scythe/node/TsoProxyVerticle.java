package io.scythe.node;

import io.scythe.bridge.RdmaChannel;
import io.scythe.fabric.Nic;
import io.scythe.fabric.QpOptions;
import io.scythe.rrpc.RpcServer;
import io.scythe.rrpc.RrpcOptions;
import io.scythe.tso.TsoProxy;
import io.scythe.tso.TsoService;
import io.vertx.core.Future;
import io.vertx.core.VerticleBase;

/**
 * A TSO proxy role (Scythe §4.5 (3)): an RRPC server on this verticle's event loop serving compute nodes' TSO groups,
 * merged into FAAs on the TSO service's counter over this node's own queue pair.
 */
public final class TsoProxyVerticle extends VerticleBase {
    public static final long LOCATE_TIMEOUT_MS = 5_000;

    private final Nic nic;
    private final String tsoNode;
    private final RrpcOptions options;
    private RpcServer server;
    private TsoProxy proxy;
    private Future<RdmaChannel> channel;

    public TsoProxyVerticle(final Nic nic, final String tsoNode, final RrpcOptions options) {
        this.nic = nic;
        this.tsoNode = tsoNode;
        this.options = options;
    }

    @Override
    public Future<?> start() {
        return TsoService.locate(vertx, tsoNode, LOCATE_TIMEOUT_MS).compose(counter -> {
            server = new RpcServer(vertx, nic, options);
            proxy = new TsoProxy(nic.node(), counter, () -> {
                if (channel == null || channel.failed()) {
                    channel = RdmaChannel.connect(nic, tsoNode, new QpOptions());
                }
                return channel;
            });
            return proxy.register(vertx, server).compose(v -> server.start());
        });
    }

    @Override
    public Future<?> stop() {
        final Future<Void> closed = proxy == null ? Future.succeededFuture() : proxy.close();
        return closed.compose(v -> server == null ? Future.succeededFuture() : server.stop());
    }

    public TsoProxy proxy() {
        return proxy;
    }
}
