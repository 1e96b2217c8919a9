package io.scythe.tso;

import io.scythe.rrpc.Rocket;
import io.scythe.rrpc.RpcException;
import io.vertx.core.Future;
import org.agrona.concurrent.UnsafeBuffer;

import java.util.function.Consumer;
import java.util.function.Supplier;

/**
 * Ranges from a TSO proxy, over RRPC: the proxy merges the groups of many compute nodes into one FAA. When the call
 * fails because the connection to the proxy broke (the proxy died or restarted), the Rocket is dropped ({@code broken})
 * so that a later fetch opens a new one to the proxy's next incarnation; a failure the proxy answered (its own FAA
 * failed) leaves the Rocket alone.
 */
public final class ProxyTsoSource implements TsoSource {
    private final String proxy;
    private final Supplier<Future<Rocket>> rocket;
    private final Consumer<Rocket> broken;
    private final long timeoutMs;

    public ProxyTsoSource(final String proxy, final Supplier<Future<Rocket>> rocket) {
        this(proxy, rocket, r -> { }, 0);
    }

    /**
     * @param timeoutMs how long a fetch may wait for the connection and the proxy's answer (0: for ever): a proxy that
     *                  dies between taking a request and answering it leaves no verb outstanding to fail, so without
     *                  this the group would wait for ever; a late answer is a range nobody uses, a gap
     */
    public ProxyTsoSource(final String proxy, final Supplier<Future<Rocket>> rocket,
                          final Consumer<Rocket> broken, final long timeoutMs) {
        this.proxy = proxy;
        this.rocket = rocket;
        this.broken = broken;
        this.timeoutMs = timeoutMs;
    }

    @Override
    public Future<Long> fetch(final int count) {
        final UnsafeBuffer request = new UnsafeBuffer(new byte[4]);
        request.putInt(0, count);
        // The limit covers connecting too: a connect to a vanished host can take seconds.
        final Future<Rocket> connecting = rocket.get();
        return Deadline.within(connecting.compose(r -> r.call(TsoLayout.RPC_FETCH, request)), timeoutMs,
                () -> "TSO proxy " + proxy)
            .onFailure(e -> {
                if (connecting.succeeded()
                    && (!(e instanceof RpcException x) || x.code() == RpcException.DISCONNECTED)) {
                    broken.accept(connecting.result()); // the connection broke, or the proxy went silent
                }
            })
            .map(reply -> reply.payload().getLong(0));
    }

    @Override
    public String name() {
        return "proxy:" + proxy;
    }
}
