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
import io.scythe.storage.LogDb;
import io.scythe.storage.Table;
import io.scythe.tso.TsoService;
import io.scythe.txn.Catalog;
import io.scythe.txn.Coordinator;
import io.scythe.txn.Protocol;
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
 * memory node, default 1 MiB), which {@code CnRecovery} finishes if the compute node dies. {@code "replicas": k}
 * (default 0) gives every partition k backup copies on the k memory nodes after its own, to which every write-back
 * and redo record goes too ({@code Catalog}'s placement; k below {@code memoryNodes}); {@code "lookup": "onesided"}
 * has lookups that miss the address cache READ the index instead of asking the memory node's CPU ({@code "rpc"},
 * the default). With
 * {@code adaptiveWatermarks} (a key of the scythe module: the whole config is the protocol's options) each coordinator
 * lowers an object's cold watermark as transactions abort on it, so they
 * switch to TOCC sooner there (beyond the paper: its §6 future work). The tables are created and loaded by the caller's
 * {@link Loader} on each memory node. This is the same cluster {@code scythe bench} measures.
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
    private final FastThreadLocal<Coordinator> coordinator = new FastThreadLocal<>();
    private final List<String> deployments = new ArrayList<>();
    private TsoService tso;
    private final List<MemoryNodeServices> memoryNodeServices = new ArrayList<>();
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
    /** How the coordinators' lookups that miss the address cache reach the index (config {@code lookup}). */
    private io.scythe.storage.remote.RemoteTable.LookupMode lookupMode = io.scythe.storage.remote.RemoteTable.LookupMode.RPC;

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
        final CostModel model = config.containsKey("costModel")
            ? CostModel.fromJson(config.getJsonObject("costModel")) : CostModel.cx5();
        final int parts = config.getInteger("memoryNodes", 2);
        if (parts < 1) {
            throw new IllegalArgumentException("memoryNodes=" + parts + " must be at least 1");
        }
        final Protocol protocol = io.scythe.txn.spi.ProtocolRegistry.protocol(config.getString("protocol", "scythe"));
        final int maxAttempts = config.getInteger("maxAttempts", 1000);
        final JsonObject marks = config.getJsonObject("watermarks", new JsonObject());
        final Watermarks watermarks = new Watermarks(marks.getInteger("cold", Watermarks.DEFAULT_COLD),
            marks.getInteger("hot", Watermarks.DEFAULT_HOT));
        final EmbeddedScythe s = new EmbeddedScythe(vertx, new LocalFabric(new FabricOptions().costModel(model)));
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
        final Nic cn = fabric.attachNow("cn");
        final RrpcClient rrpc = new RrpcClient(vertx, cn, new RrpcOptions());
        deployments.addAll(new CoordinatorDeployment(catalog, rrpc, counter, "tso", protocol, maxAttempts,
                watermarks, protocolOptions, procedures, 0L, null)
            .deploy(vertx, loops, List.of(CoordinatorVerticle.ADDRESS), c -> {
                enableRedoLog(c);
                giveUpBy("cn", c);
                coordinator.set(c);
                coordinators.add(c);
            })
            .await(30, TimeUnit.SECONDS));
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
        if ((idBase & ~io.scythe.txn.recovery.RecoveryRpc.NODE_ID_MASK) != 0 || idBase == 0) {
            throw new IllegalArgumentException("idBase=" + Long.toHexString(idBase) + " must be non-zero and within "
                + "the node bits " + Long.toHexString(io.scythe.txn.recovery.RecoveryRpc.NODE_ID_MASK));
        }
        final RrpcClient rrpc = new RrpcClient(vertx, fabric.attachNow(name), new RrpcOptions());
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

    /** The coordinator of the calling event loop (one of {@link #loops()}). */
    public Coordinator coordinator() {
        final Coordinator c = coordinator.getIfExists();
        if (c == null) {
            throw new IllegalStateException("no Scythe coordinator on thread '" + Thread.currentThread().getName()
                + "': call from one of EmbeddedScythe.loops()");
        }
        return c;
    }

    /** Every loop's coordinator (statistics). */
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

    /** Undeploys the coordinators, stops the TSO, frees the fabric. Blocks; idempotent. */
    @Override
    public void close() throws Exception {
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
        if (tso != null) {
            tso.stop().await(30, TimeUnit.SECONDS);
            tso = null;
        }
        fabric.close();
    }
}
