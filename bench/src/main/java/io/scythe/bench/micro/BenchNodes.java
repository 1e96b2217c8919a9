package io.scythe.bench.micro;

import io.scythe.bridge.BridgeVerticle;
import io.scythe.fabric.CostModel;
import io.scythe.fabric.FabricOptions;
import io.scythe.fabric.local.LocalFabric;
import io.vertx.core.Context;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;
import io.vertx.core.VertxOptions;
import io.vertx.core.json.JsonObject;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;

/** A Vert.x instance with a bridge per event loop and a local fabric: what a micro-benchmark runs on. */
public final class BenchNodes implements AutoCloseable {
    /**
     * Event loops a micro-benchmark runs on, unless {@link #loops(int)} said otherwise: one. On a 2-core machine two
     * busy-polling loops leave no core to the JIT, the GC and the OS, and a loop the scheduler preempts stalls for a
     * whole tick (4 ms): P99s of milliseconds that no design causes.
     */
    public static final int DEFAULT_LOOPS = 1;
    private static volatile int eventLoops = DEFAULT_LOOPS;

    /** Sets the event loops of later micro-benchmarks (the CLI's {@code --loops}). */
    public static void loops(final int count) {
        if (count < 1) {
            throw new IllegalArgumentException("loops=" + count + " must be at least 1");
        }
        eventLoops = count;
    }

    static int loops() {
        return eventLoops;
    }

    final Vertx vertx;
    final LocalFabric fabric;
    final List<Context> loops = new ArrayList<>();

    BenchNodes(final CostModel model, final int eventLoops) throws Exception {
        vertx = bridged(eventLoops);
        fabric = new LocalFabric(new FabricOptions().costModel(model));
        loops.addAll(BridgeVerticle.eventLoopContexts(vertx)); // one per loop: the clients spread over every core
    }

    /**
     * A Vert.x of {@code eventLoops} event loops, each with its verb bridge polling busily (called from a thread
     * that is not an event loop: it waits for the deployment).
     */
    static Vertx bridged(final int eventLoops) throws Exception {
        final Vertx vertx = Vertx.vertx(new VertxOptions().setEventLoopPoolSize(eventLoops));
        BridgeVerticle.deployOnEveryEventLoop(vertx, new JsonObject().put("idle", "busy-spin"))
            .await(30, TimeUnit.SECONDS);
        return vertx;
    }

    /** Runs {@code body} on {@code context} and waits for its Future (from a non-event-loop thread). */
    static <T> T on(final Context context, final Supplier<Future<T>> body) throws Exception {
        final Promise<T> promise = Promise.promise();
        context.runOnContext(v -> body.get().onComplete(promise));
        return promise.future().await(10, TimeUnit.MINUTES);
    }

    @Override
    public void close() throws Exception {
        vertx.close().await(60, TimeUnit.SECONDS);
        fabric.close();
    }
}
