package io.scythe.bridge;

import io.netty.channel.EventLoop;
import io.vertx.core.DeploymentOptions;
import io.vertx.core.Future;
import io.vertx.core.ThreadingModel;
import io.vertx.core.VerticleBase;
import io.vertx.core.Vertx;
import io.vertx.core.internal.ContextInternal;
import io.vertx.core.internal.VertxInternal;
import io.vertx.core.json.JsonObject;
import org.agrona.concurrent.NanoClock;
import org.agrona.concurrent.SystemNanoClock;

import java.util.Collections;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * Runs the {@link Bridge} of one event loop: installs it on start, so that every verticle of that loop posts verbs
 * through it and gets their Futures completed on its own thread, and closes it on stop. Deploy one per event loop
 * with {@link #deployOnEveryEventLoop}.
 *
 * <p>Config: {@code {"idle": "backoff" | "busy-spin", "spinWindowNs": 50000}}.
 */
public final class BridgeVerticle extends VerticleBase {
    private static final List<Bridge> RUNNING = new CopyOnWriteArrayList<>();

    private final NanoClock clock;
    private Bridge bridge;

    public BridgeVerticle() {
        this(new SystemNanoClock());
    }

    public BridgeVerticle(final NanoClock clock) {
        this.clock = clock;
    }

    @Override
    public Future<?> start() {
        final ContextInternal ctx = (ContextInternal) context;
        if (!ctx.isEventLoopContext()) {
            return Future.failedFuture("BridgeVerticle must be deployed on an event loop, not " + ctx.threadingModel());
        }
        if (Bridge.currentOrNull() != null) {
            return Future.failedFuture("a Bridge already runs on event loop '" + Thread.currentThread().getName()
                + "': deploy at most one BridgeVerticle per event loop");
        }
        final JsonObject config = config();
        final IdlePolicy idle;
        try {
            idle = IdlePolicy.fromAlias(config.getString("idle", IdlePolicy.BACKOFF.alias()));
        } catch (final IllegalArgumentException e) {
            return Future.failedFuture(e);
        }
        final long spinWindowNs = config.getLong("spinWindowNs", IdlePolicy.DEFAULT_SPIN_WINDOW_NS);
        if (spinWindowNs < 0) {
            return Future.failedFuture("spinWindowNs=" + spinWindowNs + " must not be negative");
        }
        final EventLoop loop = ctx.nettyEventLoop();
        bridge = new Bridge(Thread.currentThread(), loop, clock, idle, spinWindowNs);
        bridge.deploymentId(deploymentID());
        bridge.install();
        RUNNING.add(bridge);
        return Future.succeededFuture();
    }

    @Override
    public Future<?> stop() {
        if (bridge != null) {
            RUNNING.remove(bridge);
            bridge.close();
        }
        return Future.succeededFuture();
    }

    /**
     * One new context on each event loop of {@code vertx}, in loop order. {@code vertx.getOrCreateContext()} from a
     * non-Vert.x thread does not promise distinct loops (two calls after a deployment landed on one loop here), so
     * whoever spreads work over the loops — a benchmark's clients, a coordinator per core — takes its contexts here.
     */
    public static List<io.vertx.core.Context> eventLoopContexts(final Vertx vertx) {
        final VertxInternal internal = (VertxInternal) vertx;
        final List<io.vertx.core.Context> contexts = new java.util.ArrayList<>();
        for (final var executor : internal.nettyEventLoopGroup()) {
            contexts.add(internal.contextBuilder().withThreadingModel(ThreadingModel.EVENT_LOOP)
                .withEventLoop((EventLoop) executor).build());
        }
        return contexts;
    }

    /** The bridges running in this JVM (to sum their statistics). */
    public static List<Bridge> running() {
        return Collections.unmodifiableList(RUNNING);
    }

    /**
     * Deploys one BridgeVerticle on each event loop of {@code vertx}. Fails (and undeploys) when two instances landed
     * on one loop, which happens only if other contexts were created concurrently, and at once when the JVM lacks
     * {@link JvmAccess#AGRONA_FLAG}.
     *
     * @return the deployment id
     */
    public static Future<String> deployOnEveryEventLoop(final Vertx vertx, final JsonObject config) {
        try {
            JvmAccess.requireAgronaAccess(); // before any buffer: named, not an IllegalAccessError inside Agrona
        } catch (final IllegalStateException e) {
            return Future.failedFuture(e);
        }
        final VertxInternal internal = (VertxInternal) vertx;
        int loops = 0;
        for (final var ignored : internal.nettyEventLoopGroup()) {
            loops++;
        }
        final int instances = loops;
        final java.util.function.Supplier<BridgeVerticle> factory = BridgeVerticle::new;
        return vertx.deployVerticle(factory, new DeploymentOptions()
                .setThreadingModel(ThreadingModel.EVENT_LOOP)
                .setInstances(instances)
                .setConfig(config))
            .compose(id -> {
                final Set<Thread> threads = Collections.newSetFromMap(new IdentityHashMap<>());
                int count = 0;
                for (final Bridge b : RUNNING) {
                    if (id.equals(b.deploymentId())) {
                        threads.add(b.thread());
                        count++;
                    }
                }
                if (threads.size() != instances || count != instances) {
                    return vertx.undeploy(id).transform(ignored -> Future.<String>failedFuture(
                        "BridgeVerticle instances landed on " + threads.size() + " of " + instances
                            + " event loops; deploy it before other verticles"));
                }
                return Future.succeededFuture(id);
            });
    }
}
