package io.scythe.node;

import io.scythe.fabric.Nic;
import io.scythe.fabric.RemoteRegion;
import io.scythe.tso.TsoService;
import io.vertx.core.Future;
import io.vertx.core.VerticleBase;

import java.util.List;

/** The TSO service role: the timestamp counter in its node's NIC device memory (Scythe §4.5 (1)). */
public final class TsoServiceVerticle extends VerticleBase {
    private final Nic nic;
    private final List<String> issuers;
    private final long timeoutMs;
    private TsoService service;
    private RemoteRegion counter;

    /** @param issuers every proxy and directly-fetching compute node whose high water a restart must respect */
    public TsoServiceVerticle(final Nic nic, final List<String> issuers, final long timeoutMs) {
        this.nic = nic;
        this.issuers = List.copyOf(issuers);
        this.timeoutMs = timeoutMs;
    }

    @Override
    public Future<?> start() {
        service = new TsoService(vertx, nic, issuers, timeoutMs);
        return service.start().onSuccess(c -> counter = c);
    }

    @Override
    public Future<?> stop() {
        return service == null ? Future.succeededFuture() : service.stop();
    }

    public TsoService service() {
        return service;
    }

    public RemoteRegion counter() {
        return counter;
    }
}
