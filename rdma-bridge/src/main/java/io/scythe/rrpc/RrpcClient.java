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
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A node's RRPC client: its reply region (one reply ring per remote node and event loop), its {@link RdmaStraws}
 * per remote node, and, per event loop, one {@link Rocket} and one one-sided {@link RdmaChannel} per remote node
 * (one Rocket per server when a node runs several, as compute nodes do for their peers: {@link #rocket(String,
 * String)}).
 *
 * <p>Reply rings live in one shared region (a memory node's clients), or each in its own region ({@link
 * #withRegionPerRing}, what {@link CnPeers} uses): a ring given up is then deregistered, so a server that writes into
 * it late (a peer that left, then woke) is refused by the NIC, and the ring can be used again safely.
 */
public final class RrpcClient {
    /** How long opening a ring may take (an event-bus round trip to the server). */
    public static final long OPEN_TIMEOUT_MS = 10_000;

    private final Vertx vertx;
    private final Nic nic;
    private final RrpcOptions options;
    /** The shared reply region, or {@code null} with a region per ring. */
    private final MemoryRegion replies;
    /** Name of the shared reply region, or the prefix of each ring's region. */
    private final String repliesName;
    private final long openTimeoutMs;
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
        this(vertx, nic, options, "rrpc.replies", false);
    }

    private RrpcClient(final Vertx vertx, final Nic nic, final RrpcOptions options, final String repliesName,
                       final boolean regionPerRing) {
        this.vertx = vertx;
        this.nic = nic;
        this.options = new RrpcOptions(options.toJson());
        this.repliesName = repliesName;
        this.replies = regionPerRing ? null : nic.register(repliesName,
            (long) this.options.maxReplyRings() * this.options.ringBytes(), MemoryKind.HOST);
        // Unless set, a call's bound covers opening its ring: the open may not take longer.
        this.openTimeoutMs = this.options.openTimeoutMs() > 0 ? this.options.openTimeoutMs()
            : this.options.callTimeoutNs() > 0
            ? Math.max(1, TimeUnit.NANOSECONDS.toMillis(this.options.callTimeoutNs())) : OPEN_TIMEOUT_MS;
    }

    /**
     * A client whose reply rings are each a region of their own, named {@code repliesName.N}, registered when a Rocket
     * opens and deregistered when it is given up ({@link #abandon}).
     */
    public static RrpcClient withRegionPerRing(final Vertx vertx, final Nic nic, final RrpcOptions options,
                                               final String repliesName) {
        return new RrpcClient(vertx, nic, options, io.scythe.fabric.FabricOptions.checkName("region", repliesName),
            true);
    }

    public RrpcOptions options() {
        return options;
    }

    public Nic nic() {
        return nic;
    }

    /** This loop's Rocket to {@code server}, opened on first use. Call on an event loop with a bridge. */
    public Future<Rocket> rocket(final String server) {
        return rocket(loop(), server, null);
    }

    /** This loop's Rocket to server {@code endpoint} of {@code node} (a node running several), opened on first use. */
    public Future<Rocket> rocket(final String node, final String endpoint) {
        return rocket(loop(), node, endpoint);
    }

    /** As {@link #rocket(String, String)} for the loop of {@code bridge} (called on it, not necessarily current). */
    Future<Rocket> rocket(final Bridge bridge, final String node, final String endpoint) {
        return rocket(loop(bridge), node, endpoint);
    }

    private Future<Rocket> rocket(final Loop loop, final String server, final String endpoint) {
        final String key = endpoint == null ? server : server + "/" + endpoint;
        final Future<Rocket> existing = loop.rockets.get(key);
        if (existing != null && !(existing.succeeded() && existing.result().broken() != null)) {
            return existing;
        }
        if (existing != null) {
            // Its queue pair failed (the server stopped answering, restarted or went away): given up, and opened
            // anew, so calls reach the server again once it answers (a tcp connection given up after its transport
            // timeout is reopened here).
            loop.rockets.remove(key);
            retire(existing.result(), existing.result().broken());
        }
        final Future<Rocket> opening = open(loop, server, endpoint);
        if (!opening.failed()) {
            loop.rockets.put(key, opening);
        }
        return opening;
    }

    /** This loop's one-sided channel to {@code server} (the straws' one-sided QPs), connected on first use. */
    public Future<RdmaChannel> oneSided(final String server) {
        return oneSided(loop(), server);
    }

    /** As {@link #oneSided(String)} for the loop of {@code bridge} (called on it, not necessarily current). */
    Future<RdmaChannel> oneSided(final Bridge bridge, final String server) {
        return oneSided(loop(bridge), server);
    }

    private Future<RdmaChannel> oneSided(final Loop loop, final String server) {
        final Future<RdmaChannel> existing = loop.channels.get(server);
        if (existing != null && !(existing.succeeded() && existing.result().connectionGone())) {
            return existing;
        }
        if (existing != null) {
            // Its connection is gone for good (the peer stopped answering past the transport timeout, or closed it):
            // what was posted on it failed; this connects anew, so verbs reach the peer again once it answers.
            loop.channels.remove(server);
            existing.result().close();
        }
        final Future<RdmaChannel> connecting = RdmaChannel.connect(loop.bridge, nic, server,
                options.verbTransportTimeoutMs() > 0
                    ? new QpOptions().transportTimeoutMs(options.verbTransportTimeoutMs()) : new QpOptions())
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
        final String key = broken.destination();
        final Future<Rocket> cached = loop.rockets.get(key);
        if (cached != null && cached.succeeded() && cached.result() == broken) {
            loop.rockets.remove(key);
            straws(server).detach(broken);
        }
    }

    /**
     * Gives up this loop's Rockets and one-sided channel to {@code server}, every server of it: their calls in flight
     * and later ones fail with {@code cause} (the node left the cluster), their queue pairs are released, and, with
     * a region per ring, their reply rings are deregistered and free again. The next call opens anew. Call on the
     * loop of {@code bridge}.
     */
    void abandon(final Bridge bridge, final String server, final RpcException cause) {
        final Loop loop = loop(bridge);
        for (final java.util.Iterator<Map.Entry<String, Future<Rocket>>> it = loop.rockets.entrySet().iterator();
             it.hasNext(); ) {
            final Map.Entry<String, Future<Rocket>> e = it.next();
            if (!e.getKey().equals(server) && !e.getKey().startsWith(server + "/")) {
                continue;
            }
            it.remove();
            // One still opening is given up once open: its calls wait on it and must fail too.
            e.getValue().onSuccess(rocket -> retire(rocket, cause));
        }
        final Future<RdmaChannel> channel = loop.channels.remove(server);
        if (channel != null) {
            channel.onSuccess(RdmaChannel::close);
        }
    }

    /**
     * {@link #abandon} on the calling loop: its Rockets and channel to {@code server} fail with {@code cause} and the
     * next call connects anew (a node whose process was replaced: what it had of the old one is gone). Call on a loop.
     */
    public void abandon(final String server, final RpcException cause) {
        abandon(loop().bridge, server, cause);
    }

    /** Drops a Rocket that can call no more ({@link Rocket#broken()}) so the next call opens anew. On its loop. */
    void forget(final Rocket broken) {
        final Loop loop = loop(broken.bridge());
        final Future<Rocket> cached = loop.rockets.get(broken.destination());
        if (cached != null && cached.succeeded() && cached.result() == broken) {
            loop.rockets.remove(broken.destination());
            retire(broken, broken.broken());
        }
    }

    /** {@link #abandon} of every node this loop has Rockets or channels to. */
    void abandonAll(final Bridge bridge, final RpcException cause) {
        final Loop loop = loop(bridge);
        final java.util.Set<String> servers = new java.util.TreeSet<>(loop.channels.keySet());
        for (final String key : loop.rockets.keySet()) {
            final int slash = key.indexOf('/'); // node names have none
            servers.add(slash < 0 ? key : key.substring(0, slash));
        }
        for (final String server : servers) {
            abandon(bridge, server, cause);
        }
    }

    private void retire(final Rocket rocket, final RpcException cause) {
        rocket.abandon(cause);
        straws(rocket.server()).detach(rocket);
        final ReplyRing ring = rocket.replyRing();
        if (replies == null && ring.region().isRegistered()) {
            nic.deregister(ring.region()); // a late WRITE into it now fails at the writer: safe to reuse
            freeReplyRings.add(ring.index());
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
        final Loop loop = loop(bridge);
        lastLoop.set(loop);
        return loop;
    }

    private Loop loop(final Bridge bridge) {
        return loops.computeIfAbsent(bridge, b -> new Loop(nextLoopId.getAndIncrement(), b));
    }

    /** Where a Rocket's replies land: {@code offset} into {@code region}, ring number {@code index}. */
    record ReplyRing(MemoryRegion region, int offset, int index) {
    }

    private ReplyRing takeReplyRing(final int index) {
        if (replies != null) {
            return new ReplyRing(replies, index * options.ringBytes(), index);
        }
        return new ReplyRing(nic.register(repliesName + "." + index, options.ringBytes(), MemoryKind.HOST), 0, index);
    }

    private Future<Rocket> open(final Loop loop, final String server, final String endpoint) {
        final Integer free = freeReplyRings.poll();
        final int index = free != null ? free : nextReplyRing.getAndIncrement();
        if (index >= options.maxReplyRings()) {
            return Future.failedFuture(new FabricException("RRPC client " + nic.node() + " has no free reply ring "
                + "(maxReplyRings=" + options.maxReplyRings() + ")"));
        }
        final ReplyRing ring = takeReplyRing(index);
        final ContextInternal context = (ContextInternal) vertx.getOrCreateContext();
        final Rocket rocket = new Rocket(this, server, endpoint, loop.bridge, context, ring);
        final JsonObject request = new JsonObject()
            .put("client", nic.node())
            .put("loop", loop.id)
            .put("replyAddress", ring.region().address() + ring.offset())
            .put("replyRkey", ring.region().rkey())
            .put("bucketBytes", options.bucketBytes())
            .put("ringBuckets", options.ringBuckets());
        return straws(server).attach(rocket, loop.bridge)
            .compose(qp -> vertx.eventBus().<JsonObject>request(RpcServer.openAddress(server, endpoint), request,
                    new DeliveryOptions().setSendTimeout(openTimeoutMs))
                .map(reply -> {
                    rocket.opened(qp, reply.body().getLong("ringAddress"), reply.body().getInteger("ringRkey"));
                    return rocket;
                }))
            .onFailure(e -> {
                loop.rockets.remove(rocket.destination());
                straws(server).detach(rocket);
                if (replies == null) {
                    nic.deregister(ring.region());
                }
                freeReplyRings.add(index);
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
