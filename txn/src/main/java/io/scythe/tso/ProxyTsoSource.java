package io.scythe.tso;

import io.scythe.rrpc.Rocket;
import io.vertx.core.Future;
import org.agrona.concurrent.UnsafeBuffer;

import java.util.function.Supplier;

/** Ranges from a TSO proxy, over RRPC: the proxy merges the groups of many compute nodes into one FAA. */
public final class ProxyTsoSource implements TsoSource {
    private final String proxy;
    private final Supplier<Future<Rocket>> rocket;

    public ProxyTsoSource(final String proxy, final Supplier<Future<Rocket>> rocket) {
        this.proxy = proxy;
        this.rocket = rocket;
    }

    @Override
    public Future<Long> fetch(final int count) {
        final UnsafeBuffer request = new UnsafeBuffer(new byte[4]);
        request.putInt(0, count);
        return rocket.get().compose(r -> r.call(TsoLayout.RPC_FETCH, request))
            .map(reply -> reply.payload().getLong(0));
    }

    @Override
    public String name() {
        return "proxy:" + proxy;
    }
}
