package io.scythe.tso;

import io.scythe.rrpc.Rocket;
import io.vertx.core.Future;
import org.agrona.concurrent.UnsafeBuffer;

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
    private final java.util.function.Consumer<Rocket> broken;
    private final long timeoutMs;

    public ProxyTsoSource(final String proxy, final Supplier<Future<Rocket>> rocket) {
        this(proxy, rocket, r -> { }, 0);
    }

    /**
     * @param timeoutMs how long a fetch may wait for the proxy's answer (0: for ever): a proxy that dies between taking
     *                  a request and answering it leaves no verb outstanding to fail, so without this the group would
     *                  wait for ever; a late answer is a range nobody uses, a gap
     */
    public ProxyTsoSource(final String proxy, final Supplier<Future<Rocket>> rocket,
                          final java.util.function.Consumer<Rocket> broken, final long timeoutMs) {
        this.proxy = proxy;
        this.rocket = rocket;
        this.broken = broken;
        this.timeoutMs = timeoutMs;
    }

    @Override
    public Future<Long> fetch(final int count) {
        final UnsafeBuffer request = new UnsafeBuffer(new byte[4]);
        request.putInt(0, count);
        return rocket.get().compose(r -> within(r.call(TsoLayout.RPC_FETCH, request))
            .onFailure(e -> {
                if (!(e instanceof io.scythe.rrpc.RpcException x) || x.code() == io.scythe.rrpc.RpcException.DISCONNECTED) {
                    broken.accept(r); // the connection broke, or the proxy went silent
                }
            }))
            .map(reply -> reply.payload().getLong(0));
    }

    private <T> Future<T> within(final Future<T> call) {
        final io.vertx.core.Context context = io.vertx.core.Vertx.currentContext();
        if (timeoutMs <= 0 || context == null || call.isComplete()) {
            return call;
        }
        final io.vertx.core.Promise<T> outcome = ((io.vertx.core.internal.ContextInternal) context).promise();
        final long timer = context.owner().setTimer(timeoutMs, t -> outcome.tryFail(new java.util.concurrent
            .TimeoutException("TSO proxy " + proxy + " did not answer within " + timeoutMs + " ms")));
        call.onComplete(ar -> {
            context.owner().cancelTimer(timer);
            if (ar.succeeded()) {
                outcome.tryComplete(ar.result());
            } else {
                outcome.tryFail(ar.cause());
            }
        });
        return outcome.future();
    }

    @Override
    public String name() {
        return "proxy:" + proxy;
    }
}
