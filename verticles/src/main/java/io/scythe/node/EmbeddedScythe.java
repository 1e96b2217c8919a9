package io.scythe.node;

import io.netty.util.concurrent.FastThreadLocal;
import io.scythe.bridge.BridgeVerticle;
import io.scythe.fabric.CostModel;
import io.scythe.fabric.FabricOptions;
import io.scythe.fabric.Nic;
import io.scythe.fabric.RemoteRegion;
import io.scythe.fabric.local.LocalFabric;
import io.scythe.hotspot.Watermarks;
import io.scythe.rrpc.RpcServer;
import io.scythe.rrpc.RrpcClient;
import io.scythe.rrpc.RrpcOptions;
import io.scythe.routing.ShardMap;
import io.scythe.routing.WrongOwnerException;
import io.scythe.storage.LogDb;
import io.scythe.storage.Table;
import io.scythe.tso.TsoService;
import io.scythe.txn.Catalog;
import io.scythe.txn.Coordinator;
import io.scythe.txn.Protocol;
import io.scythe.txn.Txn;
import io.scythe.txn.api.Procedures;
import io.scythe.txn.mn.MemoryNodeServices;
import io.scythe.txn.recovery.RecoveryService;
import io.vertx.core.Context;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonObject;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;

/**
 * Scythe inside a Vert.x application: a whole cluster in this JVM on the local fabric (memory nodes holding the
 * tables partitioned by key, a TSO whose counter lives in NIC device memory, a compute node whose every event loop
 * runs a {@link CoordinatorVerticle}), deployed from a configuration object into the application's own {@code Vertx}.
 * The application then uses the event-bus API ({@link CoordinatorVerticle#ADDRESS}) or, on one of {@link #loops()},
 * the in-process API ({@link #coordinator()}). {@link #close()} undeploys it and frees the fabric.
 *
 * <p>Config: {@code {"memoryNodes": 2, "protocol": "scythe", "maxAttempts": 1000, "costModel": {...},
 * "watermarks": {"cold": 3, "hot": 10}, "adaptiveWatermarks": false}}; every key optional. With
 * {@code "redoLog": true} (the default) every commit writes a redo record first ({@code "redoLogBytes"} per loop and
 * memory node, default 1 MiB), which {@code CnRecovery} finishes if the compute node dies. Every RRPC call of a
 * compute node to a memory node fails after {@code "memoryNodeTimeoutMs"} (default 4000) without a reply.
 * {@code "replicas": k}
 * (default 0) gives every partition k backup copies on the k memory nodes after its own, to which every write-back
 * and redo record goes too ({@code Catalog}'s placement; k below {@code memoryNodes}); {@code "lookup": "onesided"}
 * has lookups that miss the address cache READ the index instead of asking the memory node's CPU ({@code "rpc"},
 * the default). With
 * {@code adaptiveWatermarks} (a key of the scythe module: the whole config is the protocol's options) each coordinator
 * lowers an object's cold watermark as transactions abort on it, so they
 * switch to TOCC sooner there (beyond the paper: its §6 future work). The tables are created and loaded by the caller's
 * {@link Loader} on each memory node. This is the same cluster {@code scythe bench} measures.
 *
 * <p>With {@code "computeNodes": N} (default 1) it runs N compute nodes, each with its own fabric identity (NIC),
 * RRPC client, transaction-id base and a coordinator on every event loop: the loops are the JVM's, so every loop
 * hosts one coordinator of each node, and a client on a loop reaches any node's coordinator there without a thread
 * hop ({@link #coordinator(int)}). Node 0 is named {@code cn} (as the one node always was), the others {@code cn1},
 * {@code cn2}, ... A {@link ShardMap} of {@code "shards"} shards (default {@value ShardMap#DEFAULT_SHARDS}), round-robin
 * over the nodes at first, says which node owns which shard: {@link #run(int, long, Function)} and requests routed by
 * shard on the event bus are refused by a node that does not own the shard, and {@link #moveShard} moves one.
 */
public final class EmbeddedScythe implements AutoCloseable {
    /** Creates and fills the tables of memory node {@code part} of {@code parts}. */
    @FunctionalInterface
    public interface Loader {
        void load(LogDb db, int part, int parts);
    }

    private final Vertx vertx;
    private final LocalFabric fabric;
    private final List<Context> loops;
    private final List<LogDb> memoryNodes = new ArrayList<>();
    private final List<Coordinator> coordinators = new CopyOnWriteArrayList<>();
    /** The coordinators of the calling loop, one per compute node, by node index. */
    private final FastThreadLocal<Coordinator[]> loopCoordinators = new FastThreadLocal<>();
    private int computeNodes = 1;
    private final List<String> computeNodeNames = new ArrayList<>();
    /** Which compute node owns which shard: the cluster's own routing state, read by every node's check. */
    private io.scythe.routing.LocalShardDirectory shardMap;
    private final List<String> deployments = new ArrayList<>();
    private TsoService tso;
    private final List<MemoryNodeServices> memoryNodeServices = new ArrayList<>();
    /** Each memory node's RRPC server, in node order, and the loop it polls on. */
    private final List<RpcServer> rpcServers = new ArrayList<>();
    private final List<ComputeNode> extraNodes = new ArrayList<>();
    /** Compute nodes that gave up (a commit they could not finish): fenced, as a cluster node losing its lease. */
    private final CopyOnWriteArrayList<String> gaveUp = new CopyOnWriteArrayList<>();
    private Catalog catalog;
    private RemoteRegion tsoCounter;
    private Protocol protocol;
    private int maxAttempts;
    private Watermarks watermarks;
    private JsonObject protocolOptions;
    private Procedures procedures;
    private int redoLogBytes;
    /** The compute nodes' RRPC options toward memory nodes: every call bounded (config {@code memoryNodeTimeoutMs}). */
    private RrpcOptions memoryNodeClientOptions = RrpcOptions.forMemoryNodes();
    /** How the coordinators' lookups that miss the address cache reach the index (config {@code lookup}). */
    private io.scythe.storage.remote.RemoteTable.LookupMode lookupMode = io.scythe.storage.remote.RemoteTable.LookupMode.RPC;

    /** The module of the protocol run when its compute nodes message each other, else {@code null}. */
    private io.scythe.txn.spi.ProtocolModule peerModule;
    /** Each compute node's CN-to-CN messaging, in node order (with {@link #peerModule} only). */
    private final List<io.scythe.rrpc.CnPeers> peers = new CopyOnWriteArrayList<>();
    /** What the compute nodes of {@link #peerModule} share ({@code ComputeNodeContext#shared}). */
    private final Map<String, Object> computeNodeShared = new java.util.HashMap<>();
    /** Set when it closes: the modules' periodic tasks stop ({@code run.over}). */
    private volatile boolean closing;

    /** The Vert.x instance {@link #start} made for it, closed with it; {@code null} when the caller's. */
    private Vertx owned;

    private EmbeddedScythe(final Vertx vertx, final LocalFabric fabric) {
        this.vertx = vertx;
        this.fabric = fabric;
        this.loops = BridgeVerticle.eventLoopContexts(vertx);
    }

    /**
     * Deploys the cluster into {@code vertx}, which must already run a bridge on every event loop
     * ({@link BridgeVerticle#deployOnEveryEventLoop}). Blocks the calling thread, which must not be an event loop.
     */
    public static EmbeddedScythe deploy(final Vertx vertx, final JsonObject config, final Loader loader,
                                        final Procedures procedures) throws Exception {
        io.scythe.bridge.JvmAccess.requireAgronaAccess();
        final CostModel model = config.containsKey("costModel")
            ? CostModel.fromJson(config.getJsonObject("costModel")) : CostModel.cx5();
        final int parts = config.getInteger("memoryNodes", 2);
        if (parts < 1) {
            throw new IllegalArgumentException("memoryNodes=" + parts + " must be at least 1");
        }
        final Protocol protocol = io.scythe.txn.spi.ProtocolRegistry.protocol(config.getString("protocol", "scythe"));
        final int maxAttempts = config.getInteger("maxAttempts", 1000);
        final int computeNodes = config.getInteger("computeNodes", 1);
        if (computeNodes < 1 || computeNodes > ShardMap.MAX_COMPUTE_NODES - 1) {
            throw new IllegalArgumentException("computeNodes=" + computeNodes + " must be within [1, "
                + (ShardMap.MAX_COMPUTE_NODES - 1) + "]");
        }
        final int shards = config.getInteger("shards", ShardMap.DEFAULT_SHARDS);
        final JsonObject marks = config.getJsonObject("watermarks", new JsonObject());
        final Watermarks watermarks = new Watermarks(marks.getInteger("cold", Watermarks.DEFAULT_COLD),
            marks.getInteger("hot", Watermarks.DEFAULT_HOT));
        final EmbeddedScythe s = new EmbeddedScythe(vertx, new LocalFabric(new FabricOptions().costModel(model)));
        s.computeNodes = computeNodes;
        for (int cn = 0; cn < computeNodes; cn++) {
            s.computeNodeNames.add(computeNodeName(cn));
        }
        s.shardMap = new io.scythe.routing.LocalShardDirectory(ShardMap.roundRobin(shards, s.computeNodeNames));
        final long mnTimeoutMs = config.getLong("memoryNodeTimeoutMs",
            TimeUnit.NANOSECONDS.toMillis(RrpcOptions.DEFAULT_MEMORY_NODE_CALL_TIMEOUT_NS));
        if (mnTimeoutMs <= 0) {
            throw new IllegalArgumentException("memoryNodeTimeoutMs=" + mnTimeoutMs + " must be positive: a call to a "
                + "memory node that stops answering must end");
        }
        s.memoryNodeClientOptions = RrpcOptions.forMemoryNodes().callTimeoutNs(TimeUnit.MILLISECONDS.toNanos(
            mnTimeoutMs));
        s.redoLogBytes = config.getBoolean("redoLog", true)
            ? config.getInteger("redoLogBytes", io.scythe.txn.recovery.RedoLog.DEFAULT_REGION_BYTES) : 0;
        try {
            s.start(parts, loader, protocol, maxAttempts, watermarks, config, procedures);
            return s;
        } catch (final Exception e) {
            s.close();
            throw e;
        }
    }

    /**
     * Starts the cluster in a Vert.x instance of its own ({@code eventLoops} event loops, a bridge on each), which
     * {@link #close()} closes. When it fails to start, that instance is closed before the exception is thrown, so no
     * event-loop thread keeps the JVM alive. Blocks the calling thread, which must not be an event loop. Use it in
     * try-with-resources; {@link #vertx()} is the instance, for the application's own verticles and event-bus clients.
     *
     * @throws IllegalStateException naming the JVM option when the JVM lacks {@link io.scythe.bridge.JvmAccess#AGRONA_FLAG}
     */
    public static EmbeddedScythe start(final int eventLoops, final JsonObject config, final Loader loader,
                                       final Procedures procedures) throws Exception {
        io.scythe.bridge.JvmAccess.requireAgronaAccess(); // before any thread exists
        if (eventLoops < 1) {
            throw new IllegalArgumentException("eventLoops=" + eventLoops + " must be at least 1");
        }
        final Vertx vertx = Vertx.vertx(new io.vertx.core.VertxOptions().setEventLoopPoolSize(eventLoops));
        try {
            BridgeVerticle.deployOnEveryEventLoop(vertx, new JsonObject()).await(30, TimeUnit.SECONDS);
            final EmbeddedScythe s = deploy(vertx, config, loader, procedures);
            s.owned = vertx;
            return s;
        } catch (final Exception | Error e) {
            try {
                vertx.close().await(30, TimeUnit.SECONDS);
            } catch (final Exception closing) {
                e.addSuppressed(closing);
            }
            throw e;
        }
    }

    /** The Vert.x instance it runs in. */
    public Vertx vertx() {
        return vertx;
    }

    private void start(final int parts, final Loader loader, final Protocol protocol, final int maxAttempts,
                       final Watermarks watermarks, final JsonObject protocolOptions, final Procedures procedures)
        throws Exception {
        final int replicas = protocolOptions.getInteger("replicas", 0);
        io.scythe.storage.BackupTables.check(replicas, parts);
        try {
            lookupMode = io.scythe.storage.remote.RemoteTable.LookupMode.named(protocolOptions.getString("lookup",
                "rpc"));
        } catch (final IllegalArgumentException e) {
            throw new IllegalArgumentException("lookup=" + e.getMessage(), e);
        }
        for (int p = 0; p < parts; p++) {
            final Nic mn = fabric.attachNow("mn" + p);
            final LogDb db = new LogDb(mn);
            db.objectRoom(protocol::objectRoom); // 0 for every protocol but those keeping state beside the value
            db.objectFormat(schema -> io.scythe.txn.spi.ProtocolRegistry.objectFormat(protocol, schema));
            loader.load(db, p, parts);
            memoryNodes.add(db);
        }
        // Backup copies of every partition (replication), before any service serves them.
        if (replicas > 0) {
            io.scythe.storage.BackupTables.replicate(memoryNodes, replicas);
        }
        final Map<String, List<io.scythe.storage.TableDescriptor>> tablesOf = new LinkedHashMap<>();
        for (int p = 0; p < parts; p++) {
            final LogDb db = memoryNodes.get(p);
            final RpcServer server = new RpcServer(vertx, db.nic(), new RrpcOptions());
            memoryNodeServices.add(MemoryNodeServices.start(db, server, watermarks, true));
            rpcServers.add(server);
            onLoop(loops.get(p % loops.size()), server::start);
            tablesOf.put(db.nic().node(), db.tables().stream().map(Table::describe).toList());
        }
        catalog = Catalog.fromMemoryNodes(new ArrayList<>(tablesOf.keySet()), tablesOf);
        this.protocol = protocol;
        this.maxAttempts = maxAttempts;
        this.watermarks = watermarks;
        this.protocolOptions = protocolOptions;
        this.procedures = procedures;
        tso = new TsoService(vertx, fabric.attachNow("tso"), List.of(), 1000);
        final RemoteRegion counter = tso.start().await(30, TimeUnit.SECONDS);
        tsoCounter = counter;
        // A protocol whose compute nodes message each other (ProtocolModule#peerMessaging) gets peer messaging and
        // its compute-node services, wired as the simulator wires them (ComputeNodePeers).
        peerModule = io.scythe.txn.spi.ProtocolRegistry.peerModuleOf(protocol);
        if (peerModule != null) {
            if ((long) computeNodes * loops.size() > 0xff) {
                throw new IllegalArgumentException(protocol.name() + " numbers the compute nodes' loops (1 to 255): "
                    + computeNodes + " compute nodes x " + loops.size() + " loops are too many");
            }
            computeNodeShared.put("run.over", (java.util.function.BooleanSupplier) () -> closing);
            computeNodeShared.put("clock.wall", true); // its loops' timers: wall-clock time on a shared machine
            computeNodeShared.put("routing.shards", shardMap.current().shards());
            computeNodeShared.put("routing.moved", (java.util.function.BiConsumer<Integer, Integer>)
                (shard, to) -> shardMap.moveNow(shard, to));
        }
        for (int cn = 0; cn < computeNodes; cn++) {
            startComputeNode(cn, counter);
        }
        if (peerModule != null) {
            connectPeers(peerModule.peerMessaging(protocol) == io.scythe.txn.spi.PeerMessaging.EVERY_LOOP);
        }
    }

    /** Opens each loop's rings to the loops of the other compute nodes it may call, before the first transaction. */
    private void connectPeers(final boolean everyLoop) throws Exception {
        for (int cn = 0; cn < computeNodes; cn++) {
            final int from = cn;
            for (final Context loop : loops) {
                onLoop(loop, () -> Future.all(io.scythe.txn.ComputeNodePeers.connectFrom(peers, from, loops.size(),
                    everyLoop)).mapEmpty());
            }
        }
    }

    /** Compute node {@code cn}'s name: {@code cn} for node 0, as when there was one; {@code cnN} for the others. */
    public static String computeNodeName(final int cn) {
        return cn == 0 ? "cn" : "cn" + cn;
    }

    /** Its own NIC, RRPC client and transaction-id base (node bits 32-39), a coordinator on every loop. */
    private void startComputeNode(final int cn, final RemoteRegion counter) throws Exception {
        final String name = computeNodeNames.get(cn);
        final io.scythe.fabric.Nic nic = fabric.attachNow(name);
        final RrpcClient rrpc = new RrpcClient(vertx, nic, memoryNodeClientOptions);
        final List<String> addresses = computeNodes == 1 ? List.of(CoordinatorVerticle.ADDRESS)
            : List.of(CoordinatorVerticle.ADDRESS, CoordinatorVerticle.ADDRESS + "." + name);
        final io.scythe.rrpc.CnPeers cnPeers;
        final io.scythe.txn.spi.ComputeNodeContext.LoopSetUp loopSetUp;
        if (peerModule != null) {
            cnPeers = io.scythe.txn.ComputeNodePeers.open(vertx, nic, io.scythe.txn.ComputeNodePeers.options(
                peerModule, protocol), computeNodes, loops.size());
            peers.add(cnPeers);
            loopSetUp = peerModule.startComputeNode(io.scythe.txn.ComputeNodePeers.context(cn, computeNodeNames,
                cnPeers, computeNodeShared));
            cnPeers.start(loops).await(30, TimeUnit.SECONDS);
        } else {
            cnPeers = null;
            loopSetUp = io.scythe.txn.spi.ComputeNodeContext.LoopSetUp.NONE;
        }
        // With peers, loops are numbered across the cluster (slot 0, bits 40-47), as in the simulator: node cn's
        // loop l is cn * loops + l + 1 (SELCC's participants); else the node's slot is in bits 32-39.
        final long idBase = cnPeers != null ? (long) cn * loops.size() << 40 : (long) cn << 32;
        deployments.addAll(new CoordinatorDeployment(catalog, rrpc, counter, "tso", protocol, maxAttempts,
                watermarks, protocolOptions, procedures, idBase, null)
            .deploy(vertx, loops, addresses, c -> {
                enableRedoLog(c);
                giveUpBy(name, c);
                if (cnPeers != null) {
                    withPeers(c, cn, cnPeers, loopSetUp);
                }
                Coordinator[] mine = loopCoordinators.getIfExists();
                if (mine == null) {
                    mine = new Coordinator[computeNodes];
                    loopCoordinators.set(mine);
                }
                mine[cn] = c;
                coordinators.add(c);
            }, computeNodes == 1 ? null : key -> shardMap.refusal(cn, key))
            .await(30, TimeUnit.SECONDS));
    }

    /** Gives coordinator {@code c} (on its loop) its node's peers and the module's loop set-up, as the simulator. */
    private void withPeers(final Coordinator c, final int cn, final io.scythe.rrpc.CnPeers cnPeers,
                           final io.scythe.txn.spi.ComputeNodeContext.LoopSetUp loopSetUp) {
        final int l = cnPeers.loopIndex();
        final int number = io.scythe.txn.ComputeNodePeers.loopNumber(cn, l, loops.size());
        if (l < 0 || (c.runtime().idBase() >>> 40 & 0xff) != number) {
            throw new IllegalStateException("the coordinator of compute node " + cn + " on loop " + l + " has idBase "
                + Long.toHexString(c.runtime().idBase()) + ", not loop number " + number + " of the cluster");
        }
        c.runtime().peerLoops(io.scythe.txn.ComputeNodePeers.loop(peers, cnPeers, number, l, loops.size()));
        final Context here = vertx.getOrCreateContext();
        loopSetUp.startLoop(l, c.runtime(), task -> here.runOnContext(v -> task.run()));
    }

    /**
     * A loop of compute node {@code name} that cannot go on safely ({@code TxnRuntime#onGiveUp}) stops the node as
     * losing its lease would: it is fenced on every memory node, and left for a recovery ({@link #gaveUp}).
     */
    private void giveUpBy(final String name, final Coordinator c) {
        c.runtime().onGiveUp(why -> {
            if (gaveUp.addIfAbsent(name)) { // two loops of one node may give up at once
                fence(name);
            }
        });
    }

    /** The compute nodes that gave up, fenced and waiting for a recovery. */
    public List<String> gaveUp() {
        return List.copyOf(gaveUp);
    }

    private void enableRedoLog(final Coordinator c) {
        c.runtime().lookupMode(lookupMode);
        if (redoLogBytes > 0) {
            io.scythe.txn.recovery.RedoLog.enable(c.runtime(), redoLogBytes);
        }
    }

    /**
     * Another compute node in this JVM, with its own fabric identity {@code name} and transaction-id base
     * {@code idBase} (distinct per node: bits 32-39 or 48-63, see {@code RecoveryRpc.NODE_ID_MASK}), one coordinator
     * per loop and no event-bus address: for tests of CN failure ({@link #fence}) and recovery. Blocks.
     */
    public ComputeNode addComputeNode(final String name, final long idBase) throws Exception {
        if (peerModule != null) {
            throw new UnsupportedOperationException("addComputeNode: " + protocol.name() + "'s compute nodes message "
                + "each other, and an added node gets no peers");
        }
        if ((idBase & ~io.scythe.txn.recovery.RecoveryRpc.NODE_ID_MASK) != 0 || idBase == 0) {
            throw new IllegalArgumentException("idBase=" + Long.toHexString(idBase) + " must be non-zero and within "
                + "the node bits " + Long.toHexString(io.scythe.txn.recovery.RecoveryRpc.NODE_ID_MASK));
        }
        if (idBase >>> 32 < computeNodes) {
            throw new IllegalArgumentException("idBase=" + Long.toHexString(idBase) + " is one of the " + computeNodes
                + " compute nodes' (node bits 1 to " + (computeNodes - 1) + " are taken)");
        }
        final RrpcClient rrpc = new RrpcClient(vertx, fabric.attachNow(name), memoryNodeClientOptions);
        final Map<Thread, Coordinator> byLoop = new java.util.concurrent.ConcurrentHashMap<>();
        final List<String> ids = new CoordinatorDeployment(catalog, rrpc, tsoCounter, "tso", protocol, maxAttempts,
                watermarks, protocolOptions, procedures, idBase, null)
            .deploy(vertx, loops, List.of(), c -> {
                enableRedoLog(c);
                giveUpBy(name, c);
                byLoop.put(Thread.currentThread(), c); // the verticle's context is not the loop's: key by thread
            })
            .await(30, TimeUnit.SECONDS);
        final Map<Context, Coordinator> coordinators = new java.util.HashMap<>();
        for (final Context loop : loops) {
            coordinators.put(loop, byLoop.get(onLoop(loop, () -> Future.succeededFuture(Thread.currentThread()))));
        }
        final ComputeNode node = new ComputeNode(name, idBase, coordinators, ids);
        extraNodes.add(node);
        return node;
    }

    /** A compute node added by {@link #addComputeNode}. */
    public record ComputeNode(String name, long idBase, Map<Context, Coordinator> coordinators,
                              List<String> deployments) {
        /** Its coordinator on {@code loop}, one of {@link EmbeddedScythe#loops()}. */
        public Coordinator on(final Context loop) {
            return coordinators.get(loop);
        }
    }

    /** "Compute node {@code name} is dead": fences it on every memory node (its queue pairs revoked). */
    public void fence(final String name) {
        for (final LogDb db : memoryNodes) {
            db.nic().fence(name);
        }
    }

    /**
     * Memory node {@code p}'s CPU stops answering (its RRPC server no longer polls; one-sided verbs still land, as on
     * a NIC whose host is paused): calls to it end by the compute nodes' bound ({@code memoryNodeTimeoutMs}). For
     * fault tests; {@link #resumeMemoryNode} undoes it. Blocks.
     */
    public void pauseMemoryNode(final int p) throws Exception {
        final RpcServer server = rpcServers.get(p);
        onLoop(loops.get(p % loops.size()), () -> {
            server.pause();
            return Future.succeededFuture();
        });
    }

    /** Memory node {@code p} answers again: what waited in its rings is served. Blocks. */
    public void resumeMemoryNode(final int p) throws Exception {
        final RpcServer server = rpcServers.get(p);
        onLoop(loops.get(p % loops.size()), () -> {
            server.resume();
            return Future.succeededFuture();
        });
    }

    /** The memory nodes' recovery services, in node order (checks after a recovery). */
    public List<RecoveryService> recoveryServices() {
        return memoryNodeServices.stream().map(MemoryNodeServices::recovery).toList();
    }

    /** What each memory node serves (its modules' services by type), in node order. */
    public List<MemoryNodeServices> memoryNodeServices() {
        return List.copyOf(memoryNodeServices);
    }

    private static <T> T onLoop(final Context loop, final java.util.function.Supplier<Future<T>> body)
        throws Exception {
        final Promise<T> done = Promise.promise();
        loop.runOnContext(v -> body.get().onComplete(done));
        return done.future().await(30, TimeUnit.SECONDS);
    }

    /** The coordinator of the calling event loop (one of {@link #loops()}) of compute node 0. */
    public Coordinator coordinator() {
        return coordinator(0);
    }

    /** Compute node {@code cn}'s coordinator on the calling event loop (one of {@link #loops()}). */
    public Coordinator coordinator(final int cn) {
        final Coordinator[] mine = loopCoordinators.getIfExists();
        if (mine == null) {
            throw new IllegalStateException("no Scythe coordinator on thread '" + Thread.currentThread().getName()
                + "': call from one of EmbeddedScythe.loops()");
        }
        return mine[cn];
    }

    /**
     * Runs {@code body}, routed by {@code routingKey}'s shard, on compute node {@code cn}'s coordinator of the calling
     * loop, as a request routed to it by shard: fails with {@link WrongOwnerException} (nothing ran) when {@code cn}
     * does not own the shard now.
     */
    public <R> Future<Coordinator.Outcome<R>> run(final int cn, final long routingKey,
                                                  final Function<Txn, Future<R>> body) {
        final WrongOwnerException refused = shardMap.refusal(cn, routingKey);
        return refused != null ? Future.failedFuture(refused) : coordinator(cn).run(body);
    }

    /** {@link #run(int, long, Function)} with at most {@code attempts} attempts ({@link Coordinator#run(Function, int)}). */
    public <R> Future<Coordinator.Outcome<R>> run(final int cn, final long routingKey,
                                                  final Function<Txn, Future<R>> body, final int attempts) {
        final WrongOwnerException refused = shardMap.refusal(cn, routingKey);
        return refused != null ? Future.failedFuture(refused) : coordinator(cn).run(body, attempts);
    }

    /** How many compute nodes run transactions (not counting {@link #addComputeNode}'s). */
    public int computeNodes() {
        return computeNodes;
    }

    /** Which compute node owns which shard now. */
    public ShardMap shardMap() {
        return shardMap.current();
    }

    /** Where the current map lives (this JVM's: the deterministic directory). */
    public io.scythe.routing.ShardDirectory shardDirectory() {
        return shardMap;
    }

    /** Makes compute node {@code toCn} the owner of {@code shard} (the next epoch's map, returned); thread-safe. */
    public ShardMap moveShard(final int shard, final int toCn) {
        return shardMap.moveNow(shard, toCn);
    }

    /** Every loop's coordinator of every compute node (statistics). */
    public List<Coordinator> coordinators() {
        return List.copyOf(coordinators);
    }

    /** One context per event loop, each with a coordinator. */
    public List<Context> loops() {
        return loops;
    }

    /** The memory nodes' stores, in node order (checks after a run). */
    public List<LogDb> memoryNodes() {
        return List.copyOf(memoryNodes);
    }

    /**
     * Undeploys the coordinators, stops the TSO, frees the fabric, and closes the Vert.x instance when
     * {@link #start} made it. Blocks; idempotent.
     */
    @Override
    public void close() throws Exception {
        closing = true;
        for (final ComputeNode node : extraNodes) {
            for (final String id : node.deployments()) {
                vertx.undeploy(id).await(30, TimeUnit.SECONDS);
            }
        }
        extraNodes.clear();
        for (final String id : deployments) {
            vertx.undeploy(id).await(30, TimeUnit.SECONDS);
        }
        deployments.clear();
        for (final io.scythe.rrpc.CnPeers p : peers) {
            p.close().await(30, TimeUnit.SECONDS);
        }
        peers.clear();
        if (tso != null) {
            tso.stop().await(30, TimeUnit.SECONDS);
            tso = null;
        }
        fabric.close();
        if (owned != null) {
            final Vertx closing = owned;
            owned = null;
            closing.close().await(30, TimeUnit.SECONDS);
        }
    }
}
