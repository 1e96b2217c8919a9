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
import io.scythe.storage.remote.LogDbService;
import io.scythe.tso.TsoService;
import io.scythe.txn.Catalog;
import io.scythe.txn.Coordinator;
import io.scythe.txn.Protocol;
import io.scythe.txn.api.Procedures;
import io.scythe.txn.scythe.TakeoutLockService;
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
 * {@code adaptiveWatermarks} each coordinator lowers an object's cold watermark as transactions abort on it, so they
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
        final Protocol protocol = Protocol.named(config.getString("protocol", Protocol.SCYTHE.name()));
        final int maxAttempts = config.getInteger("maxAttempts", 1000);
        final JsonObject marks = config.getJsonObject("watermarks", new JsonObject());
        final Watermarks watermarks = new Watermarks(marks.getInteger("cold", Watermarks.DEFAULT_COLD),
            marks.getInteger("hot", Watermarks.DEFAULT_HOT));
        final boolean adaptive = config.getBoolean("adaptiveWatermarks", false);
        final EmbeddedScythe s = new EmbeddedScythe(vertx, new LocalFabric(new FabricOptions().costModel(model)));
        try {
            s.start(parts, loader, protocol, maxAttempts, watermarks, adaptive, procedures);
            return s;
        } catch (final Exception e) {
            s.close();
            throw e;
        }
    }

    private void start(final int parts, final Loader loader, final Protocol protocol, final int maxAttempts,
                       final Watermarks watermarks, final boolean adaptive, final Procedures procedures)
        throws Exception {
        final Map<String, List<Catalog.Partition>> partitions = new LinkedHashMap<>();
        for (int p = 0; p < parts; p++) {
            final String node = "mn" + p;
            final Nic mn = fabric.attachNow(node);
            final LogDb db = new LogDb(mn);
            loader.load(db, p, parts);
            memoryNodes.add(db);
            final RpcServer server = new RpcServer(vertx, mn, new RrpcOptions());
            new LogDbService(db).register(server);
            new TakeoutLockService(db, watermarks, true).register(server);
            onLoop(loops.get(p % loops.size()), server::start);
            for (final Table t : db.tables()) {
                partitions.computeIfAbsent(t.schema().name(), n -> new ArrayList<>())
                    .add(new Catalog.Partition(node, t.describe()));
            }
        }
        final Catalog catalog = new Catalog();
        partitions.forEach((name, list) -> {
            if (list.size() != parts) {
                throw new IllegalStateException("table " + name + " is on " + list.size() + " of " + parts
                    + " memory nodes; the loader must create every table on every node");
            }
            catalog.add(name, list);
        });
        tso = new TsoService(vertx, fabric.attachNow("tso"), List.of(), 1000);
        final RemoteRegion counter = tso.start().await(30, TimeUnit.SECONDS);
        final Nic cn = fabric.attachNow("cn");
        final RrpcClient rrpc = new RrpcClient(vertx, cn, new RrpcOptions());
        deployments.addAll(new CoordinatorDeployment(catalog, rrpc, counter, "tso", protocol, maxAttempts,
                watermarks, adaptive, procedures, 0L, null)
            .deploy(vertx, loops, List.of(CoordinatorVerticle.ADDRESS), c -> {
                coordinator.set(c);
                coordinators.add(c);
            })
            .await(30, TimeUnit.SECONDS));
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
