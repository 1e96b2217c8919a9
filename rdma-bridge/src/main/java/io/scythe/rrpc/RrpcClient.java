package io.scythe.rrpc;

import io.scythe.bridge.Bridge;
import io.scythe.bridge.RdmaChannel;
import io.scythe.fabric.FabricException;
import io.scythe.fabric.MemoryKind;
import io.scythe.fabric.MemoryRegion;
import io.scythe.fabric.Nic;
import io.scythe.fabric.QpOptions;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.eventbus.DeliveryOptions;
import io.vertx.core.internal.ContextInternal;
import io.vertx.core.json.JsonObject;

import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A node's RRPC client: its reply region (one reply ring per remote node and event loop), its {@link RdmaStraws}
 * per remote node, and, per event loop, one {@link Rocket} and one one-sided {@link RdmaChannel} per remote node.
 */
public final class RrpcClient {
    /** How long opening a ring may take (an event-bus round trip to the server). */
    public static final long OPEN_TIMEOUT_MS = 10_000;

    private final Vertx vertx;
    private final Nic nic;
    private final RrpcOptions options;
    private final MemoryRegion replies;
    private final AtomicInteger nextReplyRing = new AtomicInteger();
    /**
     * Reply rings of opens that failed: the server never got a request on them, so nothing can write there any more.
     * Reused first; without this a client probing a dead server (a TSO group retrying a killed proxy) would use up
     * every ring in seconds and never reach the server's next incarnation.
     */
    private final java.util.Queue<Integer> freeReplyRings = new java.util.concurrent.ConcurrentLinkedQueue<>();
    private final AtomicInteger nextLoopId = new AtomicInteger();
    private final Map<String, RdmaStraws> straws = new ConcurrentHashMap<>();
    private final Map<Bridge, Loop> loops = new ConcurrentHashMap<>();
    /** This thread's Loop, so a call does not look the map up. */
    private final io.netty.util.concurrent.FastThreadLocal<Loop> lastLoop = new io.netty.util.concurrent.FastThreadLocal<>();

    public RrpcClient(final Vertx vertx, final Nic nic, final RrpcOptions options) {
        this.vertx = vertx;
        this.nic = nic;
        this.options = new RrpcOptions(options.toJson());
        this.replies = nic.register("rrpc.replies", (long) this.options.maxReplyRings() * this.options.ringBytes(),
            MemoryKind.HOST);
    }

    RrpcOptions options() {
        return options;
    }

    public Nic nic() {
        return nic;
    }

    /** This loop's Rocket to {@code server}, opened on first use. Call on an event loop with a bridge. */
    public Future<Rocket> rocket(final String server) {
        final Loop loop = loop();
        final Future<Rocket> existing = loop.rockets.get(server);
        if (existing != null) {
            return existing;
        }
        final Future<Rocket> opening = open(loop, server);
        if (!opening.failed()) {
            loop.rockets.put(server, opening);
        }
        return opening;
    }

    /** This loop's one-sided channel to {@code server} (the straws' one-sided QPs), connected on first use. */
    public Future<RdmaChannel> oneSided(final String server) {
        final Loop loop = loop();
        final Future<RdmaChannel> existing = loop.channels.get(server);
        if (existing != null) {
            return existing;
        }
        final Future<RdmaChannel> connecting = RdmaChannel.connect(nic, server, new QpOptions())
            .onFailure(e -> loop.channels.remove(server));
        if (!connecting.failed()) {
            loop.channels.put(server, connecting);
        }
        return connecting;
    }

    /**
     * Drops this loop's one-sided channel to {@code server} if it is {@code broken} (its peer restarted, its queue pair
     * died): the next {@link #oneSided} connects anew. Call on the loop.
     */
    public void forgetOneSided(final String server, final RdmaChannel broken) {
        final Loop loop = loop();
        final Future<RdmaChannel> cached = loop.channels.get(server);
        if (cached != null && cached.succeeded() && cached.result() == broken) {
            loop.channels.remove(server);
            broken.close();
        }
    }

    /**
     * Drops this loop's Rocket to {@code server} if it is {@code broken} (its queue pair failed: the server died or
     * restarted): the next {@link #rocket} opens a new one, on a new queue pair. Call on the loop.
     */
    public void forgetRocket(final String server, final Rocket broken) {
        final Loop loop = loop();
        final Future<Rocket> cached = loop.rockets.get(server);
        if (cached != null && cached.succeeded() && cached.result() == broken) {
            loop.rockets.remove(server);
            straws(server).detach(broken);
        }
    }

    /** The straws to {@code server}. */
    public RdmaStraws straws(final String server) {
        return straws.computeIfAbsent(server, s -> new RdmaStraws(nic, s, options));
    }

    private Loop loop() {
        final Bridge bridge = Bridge.current();
        final Loop cached = lastLoop.getIfExists();
        if (cached != null && cached.bridge == bridge) {
            return cached;
        }
        final Loop loop = loops.computeIfAbsent(bridge, b -> new Loop(nextLoopId.getAndIncrement(), b));
        lastLoop.set(loop);
        return loop;
    }

    private Future<Rocket> open(final Loop loop, final String server) {
        final Integer free = freeReplyRings.poll();
        final int ring = free != null ? free : nextReplyRing.getAndIncrement();
        if (ring >= options.maxReplyRings()) {
            return Future.failedFuture(new FabricException("RRPC client " + nic.node() + " has no free reply ring "
                + "(maxReplyRings=" + options.maxReplyRings() + ")"));
        }
        final int replyOffset = ring * options.ringBytes();
        final ContextInternal context = (ContextInternal) vertx.getOrCreateContext();
        final Rocket rocket = new Rocket(this, server, loop.bridge, context, replies, replyOffset);
        final JsonObject request = new JsonObject()
            .put("client", nic.node())
            .put("loop", loop.id)
            .put("replyAddress", replies.address() + replyOffset)
            .put("replyRkey", replies.rkey())
            .put("bucketBytes", options.bucketBytes())
            .put("ringBuckets", options.ringBuckets());
        return straws(server).attach(rocket, loop.bridge)
            .compose(qp -> vertx.eventBus().<JsonObject>request(RpcServer.openAddress(server), request,
                    new DeliveryOptions().setSendTimeout(OPEN_TIMEOUT_MS))
                .map(reply -> {
                    rocket.opened(qp, reply.body().getLong("ringAddress"), reply.body().getInteger("ringRkey"));
                    return rocket;
                }))
            .onFailure(e -> {
                loop.rockets.remove(server);
                straws(server).detach(rocket);
                freeReplyRings.add(ring);
            });
    }

    /**
     * Drops the calling thread's cached loop: a thread-local that would otherwise keep this client (and its whole
     * cluster) reachable from a thread that outlives it, as the simulator's one thread outlives every simulated run.
     */
    public void forgetThreadCache() {
        lastLoop.remove();
    }

    /** Straws open now, by remote node (metrics, tests). */
    public Map<String, RdmaStraws> straws() {
        return Map.copyOf(straws);
    }

    private static final class Loop {
        final int id;
        final Bridge bridge;
        final Map<String, Future<Rocket>> rockets = new HashMap<>();
        final Map<String, Future<RdmaChannel>> channels = new HashMap<>();

        Loop(final int id, final Bridge bridge) {
            this.id = id;
            this.bridge = bridge;
        }
    }
}
