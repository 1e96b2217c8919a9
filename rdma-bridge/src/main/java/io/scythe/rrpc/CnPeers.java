package io.scythe.rrpc;

import io.scythe.bridge.Bridge;
import io.scythe.bridge.RdmaChannel;
import io.scythe.fabric.MemoryKind;
import io.scythe.fabric.MemoryRegion;
import io.scythe.fabric.Nic;
import io.scythe.fabric.RemoteRegion;
import io.vertx.core.Context;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;
import io.vertx.core.eventbus.DeliveryOptions;
import io.vertx.core.eventbus.Message;
import io.vertx.core.eventbus.MessageConsumer;
import io.vertx.core.internal.ContextInternal;
import io.vertx.core.json.JsonObject;
import org.agrona.DirectBuffer;
import org.agrona.MutableDirectBuffer;
import org.agrona.concurrent.UnsafeBuffer;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executor;
import java.util.concurrent.TimeUnit;
import java.util.function.BiFunction;
import java.util.function.Function;
import java.util.function.Supplier;

/**
 * CN-to-CN messaging, the substrate Lotus's CN-side locks and SELCC's forwarding stand on: every event loop of a
 * compute node runs an RRPC {@link RpcServer} for its peers (its own rings, polled by its bridge's duty cycle, no
 * thread of its own), and a loop calls handlers on other compute nodes through RRPC {@link Rocket}s, batched per
 * destination as every RRPC call is. Loop {@code i} calls loop {@code i} of the peer (Lotus's pairing of cores; loop
 * {@code i mod n} when the peer runs {@code n < i + 1} loops), or a loop the caller names.
 *
 * <p>Every call has a bound ({@link RrpcOptions#callTimeoutNs()}, required here): a call to a dead, paused or
 * overloaded peer fails with {@link RpcException#TIMED_OUT} once it passes, opening the ring included, and a reply
 * that comes later is dropped. {@link #peerLeft} fails what is in flight to a peer at once (cluster mode calls it when
 * the peer's member leaves). Back-pressure is RRPC's: calls wait in a Rocket's bounded backlog while the peer's ring
 * is full, and past it fail with {@link RpcException#BACK_PRESSURE}.
 *
 * <p>Memory: {@link #register} (or {@link #publish}) makes a region of this node reachable by peers' one-sided verbs;
 * a peer looks its descriptor up ({@link #region}) and WRITEs or READs it over its loop's channel to this node
 * ({@link #write}, {@link #read}), with no CPU of this node involved.
 *
 * <p>Peers are found by name through a {@link Directory} (cluster mode: the registry maps {@code cn1} to its current
 * incarnation {@code cn1.e3}); rings and channels open lazily, on the first call, over the Vert.x event bus (control
 * traffic; {@link #connect} opens them in advance, as the simulator must before virtual time starts).
 *
 * <p>Thread rules: {@link #serveHere}, calls, lookups and verbs on one of this node's serving loops; {@link #handle},
 * {@link #publish}, {@link #peerLeft} and {@link #close} from any thread.
 */
public final class CnPeers {
    /** Built-in RPC: answers the index (u32) of the loop that served it. */
    public static final int PING = 0x5001;
    /** Built-in RPC: answers the u64 at the u32 offset asked in this node's {@link #PROBE_REGION} (see {@link #probe}). */
    public static final int PROBE_READ = 0x5002;
    /** A small region every compute node publishes, which {@link #probe} WRITEs into. */
    public static final String PROBE_REGION = "peers.probe";
    public static final int PROBE_BYTES = 4096;
    /** A peer that answers nothing for a second is taken for dead, paused or overloaded. */
    public static final long DEFAULT_CALL_TIMEOUT_NS = TimeUnit.SECONDS.toNanos(1);
    /**
     * The least a directory lookup (an event-bus request, always in real time) waits. A call's bound may be far
     * shorter (the simulator's are microseconds of virtual time) and a 1 ms real-time lookup failed under load
     * (CnPeersSimTest at load 20-57); a lookup to a peer that leaves is failed at once anyway ({@link #peerLeft}).
     */
    static final long MIN_LOOKUP_TIMEOUT_MS = 1_000;
    /** Where the fabric cannot wake a loop on a peer's WRITE (shm), an idle loop polls its rings this often. */
    public static final long DEFAULT_IDLE_POLL_NS = TimeUnit.MICROSECONDS.toNanos(200);
    /** Rings per loop's server: one per calling (node, loop); paired calls need one per peer. */
    public static final int DEFAULT_MAX_RINGS = 64;
    /** Reply rings of the node's client (one region each): one per (loop, peer node, peer loop) called. */
    public static final int DEFAULT_MAX_REPLY_RINGS = 256;
    /** The loop a call goes to when the caller names none: the one paired with the caller's. */
    public static final int PAIRED = -1;

    /** Where compute nodes are on the fabric now. */
    @FunctionalInterface
    public interface Directory {
        /** The fabric node of compute node {@code peer} (its current incarnation), or {@code null} if unknown. */
        String fabricNodeOf(String peer);

        /** Peers named by their fabric node (the embedded cluster, the simulator, tests). */
        Directory IDENTITY = peer -> peer;
    }

    private final Vertx vertx;
    private final Nic nic;
    private final RrpcOptions options;
    private final Directory directory;
    private final int loopCount;
    private final RrpcClient client;
    private final DeliveryOptions lookup;
    /** Directory requests under way, to the peer each asks: failed at once when that peer leaves ({@link #ask}). */
    private final Map<Promise<?>, String> lookingUp = new java.util.concurrent.ConcurrentHashMap<>();
    private final Map<Integer, RpcHandler> handlers = new ConcurrentHashMap<>();
    private final Map<Bridge, Loop> loops = new ConcurrentHashMap<>();
    private final Loop[] loopsByIndex;
    private final Map<String, MemoryRegion> published = new ConcurrentHashMap<>();
    /** Regions this object registered itself, deregistered on {@link #close}. */
    private final List<MemoryRegion> owned = new java.util.concurrent.CopyOnWriteArrayList<>();
    private final Map<String, Future<Integer>> loopsOfPeer = new ConcurrentHashMap<>();
    private final Map<String, Future<RemoteRegion>> peerRegions = new ConcurrentHashMap<>();
    private final MemoryRegion probeRegion;
    private MessageConsumer<JsonObject> directoryConsumer;
    private volatile boolean closed;

    /**
     * @param loops how many loops of this node will serve ({@link #serveHere} with 0 to loops - 1)
     */
    public CnPeers(final Vertx vertx, final Nic nic, final RrpcOptions options, final int loops,
                   final Directory directory) {
        if (options.callTimeoutNs() <= 0) {
            throw new IllegalArgumentException("callTimeoutNs=" + options.callTimeoutNs() + ": peer calls need a "
                + "bound (a dead peer must not hold a call forever); see CnPeers.defaultOptions()");
        }
        if (loops < 1) {
            throw new IllegalArgumentException("loops=" + loops + " must be at least 1");
        }
        this.vertx = vertx;
        this.nic = nic;
        this.options = new RrpcOptions(options.toJson());
        this.directory = directory;
        this.loopCount = loops;
        this.loopsByIndex = new Loop[loops];
        this.client = RrpcClient.withRegionPerRing(vertx, nic, this.options, "peers.replies");
        this.lookup = new DeliveryOptions().setSendTimeout(Math.max(MIN_LOOKUP_TIMEOUT_MS,
            TimeUnit.NANOSECONDS.toMillis(this.options.callTimeoutNs())));
        this.probeRegion = register(PROBE_REGION, PROBE_BYTES);
    }

    /** Peer messaging's defaults: a 1 s call bound, idle polling every 200 us where nothing wakes a loop. */
    public static RrpcOptions defaultOptions() {
        return new RrpcOptions().callTimeoutNs(DEFAULT_CALL_TIMEOUT_NS).idlePollNs(DEFAULT_IDLE_POLL_NS)
            .maxRings(DEFAULT_MAX_RINGS).maxReplyRings(DEFAULT_MAX_REPLY_RINGS);
    }

    /** The server name of loop {@code index} of a compute node. */
    public static String endpoint(final int index) {
        return "loop" + index;
    }

    /** Event-bus address where compute node {@code fabricNode} answers how many loops it serves and its regions. */
    public static String directoryAddress(final String fabricNode) {
        return "scythe.peers." + fabricNode + ".directory";
    }

    // ------------------------------------------------------------------------------------------------ serving

    /**
     * Serves {@code rpcId} with {@code handler} on every loop of this node (now, and on loops that start later). The
     * handler runs on the loop that received the call; {@link #loopIndex()} tells which.
     */
    public CnPeers handle(final int rpcId, final RpcHandler handler) {
        if (rpcId == PING || rpcId == PROBE_READ) {
            throw new IllegalArgumentException("rpc id 0x" + Integer.toHexString(rpcId) + " is built in");
        }
        handlers.put(rpcId, handler);
        for (final Loop loop : loops.values()) {
            loop.executor.execute(() -> loop.server.handle(rpcId, handler));
        }
        return this;
    }

    /**
     * Makes the calling loop this node's loop {@code index}: starts its RRPC server for peers and polls its calls'
     * deadlines. Call on the loop (its bridge current).
     */
    public Future<Void> serveHere(final int index) {
        final Bridge bridge = Bridge.current();
        if (index < 0 || index >= loopCount) {
            return Future.failedFuture(new IllegalArgumentException("loop index " + index + " is not within [0, "
                + loopCount + ")"));
        }
        synchronized (this) {
            if (closed || loopsByIndex[index] != null || loops.containsKey(bridge)) {
                return Future.failedFuture(new IllegalStateException(closed ? "peers of " + nic.node()
                    + " are closed" : "loop " + index + " of " + nic.node() + " serves peers already"));
            }
            final RpcServer server = new RpcServer(vertx, nic, options, endpoint(index));
            final Loop loop = new Loop(index, bridge, server);
            loopsByIndex[index] = loop;
            loops.put(bridge, loop);
            handlers.forEach(server::handle);
            server.handle(PING, (request, responder) -> responder.reply(intBuffer(index)));
            server.handle(PROBE_READ, this::answerProbe);
            bridge.addPoller(loop);
            if (directoryConsumer == null) {
                directoryConsumer = vertx.eventBus().consumer(directoryAddress(nic.node()), this::answerDirectory);
            }
            return Future.all(server.start(), directoryConsumer.completion()).mapEmpty();
        }
    }

    /** Serves on each of {@code contexts}, one per loop of this node in index order (event loops with bridges). */
    public Future<Void> start(final List<Context> contexts) {
        if (contexts.size() != loopCount) {
            return Future.failedFuture(new IllegalArgumentException(contexts.size() + " contexts for " + loopCount
                + " loops"));
        }
        final List<Future<Void>> started = new ArrayList<>();
        for (int i = 0; i < contexts.size(); i++) {
            final int index = i;
            final Promise<Void> one = Promise.promise();
            contexts.get(i).runOnContext(v -> serveHere(index).onComplete(one));
            started.add(one.future());
        }
        return Future.all(started).mapEmpty();
    }

    /** The index of the calling loop among this node's serving loops, or -1. */
    public int loopIndex() {
        final Loop loop = loopHere();
        return loop == null ? -1 : loop.index;
    }

    private void answerDirectory(final Message<JsonObject> message) {
        final String name = message.body() == null ? null : message.body().getString("region");
        final JsonObject reply = new JsonObject().put("node", nic.node()).put("loops", loopCount);
        if (name != null) {
            final MemoryRegion region = published.get(name);
            if (region == null || !region.isRegistered()) {
                message.fail(404, "compute node " + nic.node() + " publishes no region '" + name + "'; it publishes "
                    + new TreeSet<>(published.keySet()));
                return;
            }
            reply.put("region", new JsonObject().put("node", region.node()).put("name", region.name())
                .put("address", region.address()).put("length", region.length()).put("rkey", region.rkey())
                .put("kind", region.kind().name()));
        }
        message.reply(reply);
    }

    private void answerProbe(final RpcRequest request, final RpcResponder responder) {
        final int offset = request.payloadLength() == 4 ? request.payload().getInt(request.payloadOffset()) : -1;
        if (offset < 0 || offset > PROBE_BYTES - 8 || (offset & 7) != 0) {
            responder.fail(RpcException.FIRST_APPLICATION_CODE, "probe offset " + offset + " is not an aligned u64 "
                + "of the " + PROBE_BYTES + "-byte probe region");
            return;
        }
        final UnsafeBuffer value = new UnsafeBuffer(new byte[8]);
        value.putLong(0, probeRegion.buffer().getLongVolatile(offset));
        responder.reply(value);
    }

    // -------------------------------------------------------------------------------------------------- calls

    /** Calls {@code rpcId} on {@code peer}'s loop paired with the calling one; the payload is copied at once. */
    public Future<RpcReply> call(final String peer, final int rpcId, final DirectBuffer payload, final int offset,
                                 final int length) {
        return call(peer, PAIRED, rpcId, payload, offset, length);
    }

    public Future<RpcReply> call(final String peer, final int rpcId, final DirectBuffer payload) {
        return call(peer, PAIRED, rpcId, payload, 0, payload.capacity());
    }

    /** Calls {@code rpcId} on loop {@code loop} of {@code peer} ({@link #PAIRED}: the calling loop's pair). */
    public Future<RpcReply> call(final String peer, final int loop, final int rpcId, final DirectBuffer payload,
                                 final int offset, final int length) {
        // withPeer's steps without its lambdas: this is the hot path.
        final Loop here = loopHere();
        if (here == null) {
            return notOnALoop();
        }
        final String node = directory.fabricNodeOf(peer);
        return node == null ? Future.failedFuture(unknown(peer))
            : callFrom(here, node, loop, rpcId, payload, offset, length);
    }

    /**
     * The incarnation (fabric node) the directory names for {@code peer} now, or null (unknown): with
     * {@link #callNode}, a caller knows which incarnation its call reached (SELCC's dead-holder wait decides by it).
     */
    public String fabricNodeOf(final String peer) {
        return directory.fabricNodeOf(peer);
    }

    /** As {@link #call(String, int, int, DirectBuffer, int, int)}, to the incarnation {@code fabricNode} named. */
    public Future<RpcReply> callNode(final String fabricNode, final int loop, final int rpcId,
                                     final DirectBuffer payload, final int offset, final int length) {
        final Loop here = loopHere();
        return here == null ? notOnALoop() : callFrom(here, fabricNode, loop, rpcId, payload, offset, length);
    }

    private Future<RpcReply> callFrom(final Loop here, final String node, final int loop, final int rpcId,
                                      final DirectBuffer payload, final int offset, final int length) {
        Future<Rocket> rocket = here.rocketTo(node, loop);
        if (rocket.succeeded() && rocket.result().broken() != null) {
            here.forget(node); // its connection failed: this call opens a new ring
            client.forget(rocket.result());
            rocket = here.rocketTo(node, loop);
        }
        if (rocket.succeeded()) {
            return rocket.result().call(rpcId, payload, offset, length);
        }
        if (rocket.failed()) {
            return Future.failedFuture(unreachable(node, rocket.cause()));
        }
        // The ring is still opening: the call's bound runs from now, and its payload must outlive the caller's.
        final long deadlineNs = here.bridge.clock().nanoTime() + options.callTimeoutNs();
        final UnsafeBuffer copy = new UnsafeBuffer(new byte[length]);
        copy.putBytes(0, payload, offset, length);
        return here.whenOpen(node, rocket, deadlineNs, r -> r.call(rpcId, copy, 0, length, deadlineNs));
    }

    /** The u32 loop index {@code peer}'s paired loop answers (or {@code loop}'s, when not {@link #PAIRED}). */
    public Future<Integer> ping(final String peer, final int loop) {
        return call(peer, loop, PING, new UnsafeBuffer(new byte[0]), 0, 0).map(reply -> reply.payload().getInt(0));
    }

    /** This loop's Rocket to {@code peer}'s paired loop (or {@code loop}): its counts, zero-copy calls. */
    public Future<Rocket> rocket(final String peer, final int loop) {
        return withPeer(peer, (here, node) -> here.rocketTo(node, loop));
    }

    /**
     * Opens, from the calling loop, the ring to {@code peer}'s paired loop and the one-sided channel to {@code peer}
     * (what calls and verbs would open on first use); completes on this loop.
     */
    public Future<Void> connect(final String peer) {
        return withPeer(peer, (here, node) -> Future.all(here.rocketTo(node, PAIRED), here.channelTo(node))
            .mapEmpty());
    }

    /**
     * Peer {@code fabricNode} (an incarnation) is gone: on every loop its calls in flight and those waiting for a
     * ring fail at once with {@link RpcException#DISCONNECTED}, its rings, reply rings and channels are released, and
     * what was learnt of it is forgotten. Any thread; completes once every loop has done it.
     */
    public Future<Void> peerLeft(final String fabricNode, final String why) {
        loopsOfPeer.remove(fabricNode);
        peerRegions.keySet().removeIf(key -> key.startsWith(fabricNode + "/"));
        final RpcException cause = new RpcException(RpcException.DISCONNECTED, "compute node " + fabricNode
            + " left: " + why);
        lookingUp.forEach((asking, node) -> {
            if (node.equals(fabricNode)) {
                asking.tryFail(cause); // its directory requests too (each caller is back on its loop: onLoop)
            }
        });
        final List<Future<Void>> done = new ArrayList<>();
        for (final Loop loop : loops.values()) {
            final Promise<Void> one = Promise.promise();
            loop.executor.execute(() -> {
                loop.forget(fabricNode);
                client.abandon(loop.bridge, fabricNode, cause);
                loop.failWaiting(fabricNode, cause);
                one.complete();
            });
            done.add(one.future());
        }
        return Future.all(done).mapEmpty();
    }

    // ------------------------------------------------------------------------------------------------- memory

    /**
     * Registers {@code bytes} of this node's memory (zeroed: keep large ones off event loops) and publishes it to
     * peers under {@code name}; deregistered by {@link #close}.
     */
    public MemoryRegion register(final String name, final long bytes) {
        final MemoryRegion region = nic.register(name, bytes, MemoryKind.HOST);
        owned.add(region);
        publish(region);
        return region;
    }

    /** Lets peers look {@code region} (of this node) up by its name. */
    public void publish(final MemoryRegion region) {
        if (!region.node().equals(nic.node())) {
            throw new IllegalArgumentException("region " + region.name() + " is of node " + region.node() + ", not "
                + nic.node());
        }
        published.put(region.name(), region);
    }

    public void unpublish(final String name) {
        published.remove(name);
    }

    /** This node's region published as {@code name}, or {@code null}. */
    public MemoryRegion published(final String name) {
        return published.get(name);
    }

    /** Where {@code peer}'s published region {@code name} is; cached once found. Call on a serving loop. */
    public Future<RemoteRegion> region(final String peer, final String name) {
        return withPeer(peer, (here, node) -> here.onLoop(lookUpRegion(node, name)));
    }

    private Future<RemoteRegion> lookUpRegion(final String node, final String name) {
        final String key = node + "/" + name;
        Future<RemoteRegion> found = peerRegions.get(key);
        if (found == null) {
            final Promise<RemoteRegion> asking = Promise.promise();
            found = peerRegions.putIfAbsent(key, asking.future());
            if (found == null) {
                found = asking.future();
                asking.future().onFailure(e -> peerRegions.remove(key, asking.future()));
                ask(node, asking, vertx.eventBus().<JsonObject>request(directoryAddress(node),
                    new JsonObject().put("region", name), lookup).map(reply -> remoteRegion(reply.body())));
            }
        }
        return found;
    }

    /**
     * Completes {@code asking} with {@code request}, a directory request to peer {@code node}, unless {@link #peerLeft}
     * fails it first: a request to a paused peer otherwise waits for its send timeout (the call timeout, 60 s in the
     * cluster's fence scenario), however soon the peer's member leaves (issue 23 §1: its SSL handshake towards the
     * paused peer timed out after 10 s and the request still waited; ClusterProcessTest's "cn0's probe of cn1 ends").
     */
    private <T> void ask(final String node, final Promise<T> asking, final Future<T> request) {
        lookingUp.put(asking, node);
        asking.future().onComplete(ar -> lookingUp.remove(asking));
        request.onComplete(ar -> {
            if (ar.succeeded()) {
                asking.tryComplete(ar.result());
            } else {
                asking.tryFail(ar.cause());
            }
        });
    }

    /** Drops a cached descriptor (its region was deregistered: a verb with it failed with a remote access error). */
    public void forgetRegion(final String peer, final String name) {
        final String node = directory.fabricNodeOf(peer);
        if (node != null) {
            peerRegions.remove(node + "/" + name);
        }
    }

    /** The calling loop's one-sided channel to {@code peer}, connected on first use. */
    public Future<RdmaChannel> channel(final String peer) {
        return withPeer(peer, Loop::channelTo);
    }

    /** One-sided WRITE into a peer's region; {@code src} stays unchanged until the Future completes. */
    public Future<Void> write(final RemoteRegion region, final long offset, final DirectBuffer src,
                              final int srcOffset, final int length) {
        return withLoop(here -> here.channelTo(region.node()).compose(channel -> channel.write(region, offset, src,
            srcOffset, length)));
    }

    /** One-sided READ from a peer's region into {@code dst}. */
    public Future<Void> read(final RemoteRegion region, final long offset, final MutableDirectBuffer dst,
                             final int dstOffset, final int length) {
        return withLoop(here -> here.channelTo(region.node()).compose(channel -> channel.read(region, offset, dst,
            dstOffset, length)));
    }

    /**
     * Checks both paths to {@code peer} from the calling loop: WRITEs a fresh u64 into its probe region (one-sided, at
     * this loop's slot) and asks its paired loop to read it back. {@code {peer, fabricNode, loop, rttUs, readBack}}.
     */
    public Future<JsonObject> probe(final String peer) {
        return withLoop(here -> probeFrom(here, peer));
    }

    private Future<JsonObject> probeFrom(final Loop here, final String peer) {
        final long startNs = here.bridge.clock().nanoTime();
        final int offset = (here.index % (PROBE_BYTES / 8)) * 8;
        final UnsafeBuffer value = new UnsafeBuffer(new byte[8]);
        value.putLong(0, startNs ^ ((long) here.index << 56) | 1);
        return region(peer, PROBE_REGION)
            .compose(region -> write(region, offset, value, 0, 8).map(region))
            .compose(region -> Future.all(call(peer, PROBE_READ, intBuffer(offset)), ping(peer, PAIRED))
                .map(both -> new JsonObject().put("peer", peer).put("fabricNode", region.node())
                    .put("loop", both.<Integer>resultAt(1))
                    .put("rttUs", (here.bridge.clock().nanoTime() - startNs) / 1000.0)
                    .put("readBack", both.<RpcReply>resultAt(0).payload().getLong(0) == value.getLong(0))));
    }

    // ------------------------------------------------------------------------------------------------ closing

    /** Whether {@link #close} was called (what runs on for this node's sake, e.g. a recovery barrier, stops). */
    public boolean closed() {
        return closed;
    }

    /** Stops serving on every loop, fails every call in flight, releases rings and regions. Any thread. */
    public Future<Void> close() {
        final List<Future<Void>> done = new ArrayList<>();
        synchronized (this) {
            if (closed) {
                return Future.succeededFuture();
            }
            closed = true;
        }
        final RpcException cause = new RpcException(RpcException.DISCONNECTED, "peer messaging of " + nic.node()
            + " is closed");
        for (final Loop loop : loops.values()) {
            final Promise<Void> one = Promise.promise();
            final Runnable stop = () -> {
                loop.bridge.removePoller(loop);
                loop.paired.clear();
                loop.named.clear();
                loop.failWaiting(null, cause);
                client.abandonAll(loop.bridge, cause);
                loop.server.stop().onComplete(ar -> one.complete());
            };
            if (loop.here()) {
                stop.run(); // e.g. the simulator closing its loops, which run nothing more
            } else {
                loop.executor.execute(stop);
            }
            done.add(one.future());
        }
        if (directoryConsumer != null) {
            done.add(directoryConsumer.unregister());
        }
        client.forgetThreadCache();
        return Future.join(done).<Void>mapEmpty().eventually(() -> {
            for (final MemoryRegion region : owned) {
                if (region.isRegistered()) {
                    nic.deregister(region);
                }
            }
            published.clear();
            return Future.succeededFuture();
        });
    }

    // -------------------------------------------------------------------------------------------- statistics

    /** Requests this node's loops served for peers. */
    public long served() {
        long n = 0;
        for (final Loop loop : loops.values()) {
            n += loop.server.requests();
        }
        return n;
    }

    /** Requests loop {@code index} served (read on that loop for an exact count). */
    public long servedOn(final int index) {
        final Loop loop = loopsByIndex[index];
        return loop == null ? 0 : loop.server.requests();
    }

    /** Loops this node serves from. */
    public int loops() {
        return loopCount;
    }

    /** This node's fabric name. */
    public String node() {
        return nic.node();
    }

    public RrpcOptions options() {
        return options;
    }

    // ------------------------------------------------------------------------------------------------ helpers

    /** Runs {@code body} with the calling serving loop, or fails clearly when the caller is on none. */
    private <T> Future<T> withLoop(final Function<Loop, Future<T>> body) {
        final Loop here = loopHere();
        return here == null ? notOnALoop() : body.apply(here);
    }

    private Loop loopHere() {
        final Bridge bridge = Bridge.currentOrNull();
        return bridge == null ? null : loops.get(bridge);
    }

    private <T> Future<T> notOnALoop() {
        return Future.failedFuture(new IllegalStateException("call peers of " + nic.node() + " from one of its "
            + "serving loops (thread '" + Thread.currentThread().getName() + "' is not one)"));
    }

    /** As {@link #withLoop}, with {@code peer}'s fabric node too, or fails clearly when the peer is unknown. */
    private <T> Future<T> withPeer(final String peer, final BiFunction<Loop, String, Future<T>> body) {
        return withLoop(here -> {
            final String node = directory.fabricNodeOf(peer);
            return node == null ? Future.failedFuture(unknown(peer)) : body.apply(here, node);
        });
    }

    private static RpcException unknown(final String peer) {
        return new RpcException(RpcException.DISCONNECTED, "no compute node '" + peer + "' in the cluster");
    }

    private static Throwable unreachable(final String node, final Throwable cause) {
        if (cause instanceof RpcException) {
            return cause;
        }
        if (cause instanceof io.vertx.core.eventbus.ReplyException reply
            && reply.failureType() == io.vertx.core.eventbus.ReplyFailure.TIMEOUT) {
            return new RpcException(RpcException.TIMED_OUT, "compute node " + node + " did not answer while its "
                + "ring was opened (dead, paused or overloaded): " + cause.getMessage());
        }
        return new RpcException(RpcException.DISCONNECTED, "cannot reach compute node " + node + ": "
            + cause.getMessage());
    }

    private static UnsafeBuffer intBuffer(final int value) {
        final UnsafeBuffer buffer = new UnsafeBuffer(new byte[4]);
        buffer.putInt(0, value);
        return buffer;
    }

    private static RemoteRegion remoteRegion(final JsonObject reply) {
        final JsonObject r = reply.getJsonObject("region");
        return new RemoteRegion(r.getString("node"), r.getString("name"), r.getLong("address"), r.getLong("length"),
            r.getInteger("rkey"), MemoryKind.valueOf(r.getString("kind")));
    }

    /** How many loops {@code node} serves, asked once. */
    private Future<Integer> loopsOf(final String node) {
        final Future<Integer> known = loopsOfPeer.get(node);
        if (known != null) {
            return known;
        }
        final Promise<Integer> asking = Promise.promise();
        final Future<Integer> raced = loopsOfPeer.putIfAbsent(node, asking.future());
        if (raced != null) {
            return raced;
        }
        asking.future().onFailure(e -> loopsOfPeer.remove(node, asking.future()));
        ask(node, asking, vertx.eventBus().<JsonObject>request(directoryAddress(node), new JsonObject(), lookup)
            .map(reply -> reply.body().getInteger("loops")));
        return asking.future();
    }

    /** One serving loop: its server, and the calls waiting for a ring to open, polled for their deadlines. */
    private final class Loop implements Bridge.Poller {
        final int index;
        final Bridge bridge;
        final RpcServer server;
        final Executor executor;
        final ContextInternal context;
        /** Calls waiting for a ring to open, in call order (so in deadline order: one bound for all). */
        final ArrayDeque<Waiting> waiting = new ArrayDeque<>();
        /** This loop's Rockets by peer fabric node: to the paired loop, and to loops named by index. */
        final Map<String, Future<Rocket>> paired = new java.util.HashMap<>();
        final Map<String, Future<Rocket>[]> named = new java.util.HashMap<>();

        Loop(final int index, final Bridge bridge, final RpcServer server) {
            this.index = index;
            this.bridge = bridge;
            this.server = server;
            final Executor deferred = bridge.deferredExecutor();
            this.context = (ContextInternal) Vertx.currentContext();
            if (deferred != null) {
                this.executor = deferred; // a simulated loop
            } else if (context != null) {
                this.executor = task -> context.runOnContext(v -> task.run());
            } else {
                throw new IllegalStateException("serve peers from an event loop with a bridge");
            }
        }

        /**
         * Whether the calling code runs on this loop's thread. Simulated loops share one thread, and what runs here
         * names this loop's bridge itself rather than finding it current, so there it may run at once.
         */
        boolean here() {
            return Thread.currentThread() == bridge.thread();
        }

        /** {@code future}, completed on this loop (a cached lookup may complete on the loop that started it). */
        <T> Future<T> onLoop(final Future<T> future) {
            if (future.isComplete()) {
                return future;
            }
            final Promise<T> promise = promise();
            future.onComplete(ar -> {
                if (here()) {
                    promise.handle(ar);
                } else {
                    executor.execute(() -> promise.handle(ar));
                }
            });
            return promise.future();
        }

        <T> Promise<T> promise() {
            return context != null && bridge.deferredExecutor() == null ? context.promise() : Promise.promise();
        }

        /**
         * This loop's Rocket to {@code node}'s loop {@code loop} (or the paired one), from this loop's own cache: a call
         * builds no key and takes no lock.
         */
        Future<Rocket> rocketTo(final String node, final int loop) {
            if (loop == PAIRED) {
                final Future<Rocket> known = paired.get(node);
                if (known != null && !known.failed()) {
                    return known;
                }
                final Future<Rocket> opening = openPaired(node);
                paired.put(node, opening);
                return opening;
            }
            Future<Rocket>[] byLoop = named.get(node);
            if (byLoop == null || byLoop.length <= loop) {
                byLoop = java.util.Arrays.copyOf(byLoop == null ? newRockets(0) : byLoop, loop + 1);
                named.put(node, byLoop);
            }
            if (byLoop[loop] == null || byLoop[loop].failed()) {
                byLoop[loop] = client.rocket(bridge, node, endpoint(loop));
            }
            return byLoop[loop];
        }

        @SuppressWarnings("unchecked")
        private Future<Rocket>[] newRockets(final int length) {
            return (Future<Rocket>[]) new Future<?>[length];
        }

        /** Drops what this loop cached of {@code node} (it left, or its ring broke). */
        void forget(final String node) {
            paired.remove(node);
            named.remove(node);
        }

        private Future<Rocket> openPaired(final String node) {
            final Future<Integer> count = loopsOf(node);
            if (count.succeeded()) {
                return client.rocket(bridge, node, endpoint(index % count.result()));
            }
            if (count.failed()) {
                return Future.failedFuture(count.cause());
            }
            return onLoop(count).compose(n -> client.rocket(bridge, node, endpoint(index % n)));
        }

        Future<RdmaChannel> channelTo(final String node) {
            return onLoop(client.oneSided(bridge, node));
        }

        /** Runs {@code then} once {@code opening} is open, unless {@code deadlineNs} or the peer's leaving is first. */
        <T> Future<T> whenOpen(final String node, final Future<Rocket> opening, final long deadlineNs,
                               final Function<Rocket, Future<T>> then) {
            final Promise<T> promise = promise();
            final Waiting entry = new Waiting(node, deadlineNs, promise);
            waiting.add(entry);
            bridge.wake(); // busy now: polled for the deadline
            onLoop(opening).onComplete(ar -> {
                waiting.remove(entry);
                if (promise.future().isComplete()) {
                    return; // timed out, or the peer left meanwhile
                }
                if (ar.failed()) {
                    promise.tryFail(unreachable(node, ar.cause()));
                } else {
                    then.apply(ar.result()).onComplete(promise);
                }
            });
            return promise.future();
        }

        /** Fails the waiting calls to {@code node} ({@code null}: all). */
        void failWaiting(final String node, final RpcException cause) {
            for (final Iterator<Waiting> it = waiting.iterator(); it.hasNext(); ) {
                final Waiting w = it.next();
                if (node == null || w.node.equals(node)) {
                    it.remove();
                    w.promise.tryFail(cause);
                }
            }
        }

        @Override
        public int poll(final long nowNs) {
            int expired = 0;
            Waiting head;
            while ((head = waiting.peek()) != null && head.deadlineNs - nowNs <= 0) {
                waiting.poll();
                expired++;
                head.promise.tryFail(new RpcException(RpcException.TIMED_OUT, "compute node " + head.node
                    + " did not open a ring within the call's bound of "
                    + TimeUnit.NANOSECONDS.toMicros(options.callTimeoutNs()) + " us (dead, paused or overloaded)"));
            }
            return expired;
        }

        @Override
        public boolean busy() {
            return !waiting.isEmpty();
        }
    }

    private record Waiting(String node, long deadlineNs, Promise<?> promise) {
    }

    /** Runs {@code body} on serving loop {@code index} (its bridge current) and hands back its Future. Any thread. */
    public <T> Future<T> onLoop(final int index, final Supplier<Future<T>> body) {
        final Loop loop = loopsByIndex[index];
        if (loop == null) {
            return Future.failedFuture(new IllegalStateException("loop " + index + " does not serve yet"));
        }
        final Promise<T> promise = Promise.promise();
        loop.executor.execute(() -> {
            try {
                body.get().onComplete(promise);
            } catch (final RuntimeException e) {
                promise.fail(e);
            }
        });
        return promise.future();
    }
}
