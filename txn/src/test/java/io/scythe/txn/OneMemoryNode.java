package io.scythe.txn;

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
import io.scythe.storage.ObjectLayout;
import io.scythe.storage.Table;
import io.scythe.storage.TableSchema;
import io.scythe.tso.DirectTsoSource;
import io.scythe.tso.TsoGroup;
import io.scythe.tso.TsoService;
import io.scythe.txn.runtime.LoopTimers;
import io.vertx.core.Context;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;
import io.vertx.core.VertxOptions;
import io.vertx.core.json.JsonObject;
import org.agrona.concurrent.UnsafeBuffer;

import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;

/**
 * A test cluster on one event loop: memory node "mn" with one table of 8-byte values (keys 0..15 loaded with 100,
 * room for {@code capacity}) serving LogDB, Takeout Lock and recovery RPCs, a TSO, and a compute node's RRPC
 * client.
 */
public final class OneMemoryNode implements AutoCloseable {
    public final Vertx vertx;
    public final LocalFabric fabric;
    public final Table table;
    public final Catalog catalog;
    public final RrpcClient rrpc;
    /** The compute node's NIC, the one {@link #rrpc} talks through ({@link #clocks}). */
    public final Nic cn;
    /** {@link #cn}'s clocks for {@link #loop}, made there on first use ({@link #clocks}). */
    private io.scythe.bridge.NodeClocks clocks;
    public final RpcServer server;
    public final RemoteRegion counter;
    public final Context loop;
    /** The memory node's services (every registered module's, e.g. a participant it published). */
    public final io.scythe.txn.mn.MemoryNodeServices services;
    /** How the runtimes of {@link #on} look up keys that miss their address cache. */
    public volatile io.scythe.storage.remote.RemoteTable.LookupMode lookupMode =
        io.scythe.storage.remote.RemoteTable.LookupMode.RPC;
    /** Asked for every one-sided verb that lands ({@code null}: none fails): tests' "lands, but reports failure". */
    public final java.util.concurrent.atomic.AtomicReference<io.scythe.fabric.VerbFaultInjector> verbFaults =
        new java.util.concurrent.atomic.AtomicReference<>();

    public OneMemoryNode(final String tableName, final long capacity) throws Exception {
        this(tableName, capacity, false);
    }

    /** One table of {@code capacity} 8-byte values, keys 0..15 loaded with 100; read-only to transactions or not. */
    public OneMemoryNode(final String tableName, final long capacity, final boolean readOnly) throws Exception {
        this(tableName, capacity, readOnly, 8);
    }

    /** As {@link #OneMemoryNode(String, long, boolean)}, values of {@code valueBytes} (100 in their first 8, 0 after). */
    public OneMemoryNode(final String tableName, final long capacity, final boolean readOnly, final int valueBytes)
        throws Exception {
        this(tableName, capacity, readOnly, valueBytes, java.util.function.UnaryOperator.identity());
    }

    /**
     * As {@link #OneMemoryNode(String, long, boolean, int)}, the memory node's data and services seeing its NIC
     * through {@code nicOfServices} (a test's stand-in for a fabric that behaves differently; its RPC server keeps the
     * NIC itself).
     */
    public OneMemoryNode(final String tableName, final long capacity, final boolean readOnly, final int valueBytes,
                         final java.util.function.UnaryOperator<Nic> nicOfServices) throws Exception {
        this(tableName, capacity, readOnly, valueBytes, nicOfServices, 0);
    }

    /**
     * As {@link #OneMemoryNode(String, long, boolean, int, java.util.function.UnaryOperator)}, each object slot with
     * {@code objectRoom} bytes beyond header and value ({@code LogDb#objectRoom}: a protocol's state beside the value,
     * e.g. RCC MVCC's older versions).
     */
    public OneMemoryNode(final String tableName, final long capacity, final boolean readOnly, final int valueBytes,
                         final java.util.function.UnaryOperator<Nic> nicOfServices, final int objectRoom)
        throws Exception {
        vertx = Vertx.vertx(new VertxOptions().setEventLoopPoolSize(1));
        BridgeVerticle.deployOnEveryEventLoop(vertx, new JsonObject()).await(10, TimeUnit.SECONDS);
        loop = BridgeVerticle.eventLoopContexts(vertx).get(0);
        fabric = new LocalFabric(new FabricOptions().costModel(CostModel.cx5()).verbFaultInjector((qp, opcode) -> {
            final io.scythe.fabric.VerbFaultInjector faults = verbFaults.get();
            return faults == null ? null : faults.afterLanding(qp, opcode);
        }));
        final Nic mn = fabric.attachNow("mn");
        final LogDb db = new LogDb(nicOfServices.apply(mn));
        if (objectRoom > 0) {
            db.objectRoom(schema -> objectRoom);
        }
        final TableSchema schema = TableSchema.fixed(1, tableName, valueBytes, capacity);
        table = db.create(readOnly ? schema.asReadOnly() : schema);
        server = new RpcServer(vertx, mn, new RrpcOptions());
        services = serve(db, table, server);
        counter = new TsoService(vertx, fabric.attachNow("tso"), List.of(), 1000).start().await(10, TimeUnit.SECONDS);
        cn = fabric.attachNow("cn");
        rrpc = new RrpcClient(vertx, cn, new RrpcOptions());
        catalog = new Catalog().add(tableName, List.of(new Catalog.Partition("mn", table.describe())));
    }

    /**
     * Loads keys 0-15 of {@code table} (value 100) on {@code db} and starts its memory-node services on
     * {@code server}, served from this node's loop.
     */
    private io.scythe.txn.mn.MemoryNodeServices serve(final LogDb db, final Table table, final RpcServer server)
        throws Exception {
        final int valueBytes = table.schema().maxValueBytes();
        final UnsafeBuffer v = new UnsafeBuffer(new byte[valueBytes]);
        v.putLong(0, 100);
        for (long k = 0; k < 16; k++) {
            table.insert(k, v, 0, valueBytes, ObjectLayout.LOADED_VERSION);
        }
        final io.scythe.txn.mn.MemoryNodeServices started = io.scythe.txn.mn.MemoryNodeServices.start(db, server,
            Watermarks.DEFAULT, true);
        final Promise<Void> up = Promise.promise();
        loop.runOnContext(ignored -> server.start().onComplete(up));
        up.future().await(10, TimeUnit.SECONDS);
        return started;
    }

    /**
     * Another memory node, {@code name}, on this node's fabric and loop: its own table of the same schema (keys 0-15
     * loaded as here), for tests whose partitions or copies lie on two nodes. Closed with this one.
     */
    public io.scythe.txn.mn.MemoryNodeServices another(final String name) throws Exception {
        final Nic nic = fabric.attachNow(name);
        final LogDb db = new LogDb(nic);
        return serve(db, db.create(table.schema()), new RpcServer(vertx, nic, new RrpcOptions()));
    }

    /** Runs {@code body} on the loop with a fresh runtime and waits for its result. */
    public <R> R on(final Function<TxnRuntime, Future<R>> body) throws Exception {
        return on(catalog, null, body);
    }

    /** As {@link #on(Function)}, the runtime's timestamps from {@code tso} ({@code null}: the TSO's counter). */
    public <R> R on(final io.scythe.txn.runtime.TimestampOracle tso, final Function<TxnRuntime, Future<R>> body)
        throws Exception {
        return on(catalog, tso, body);
    }

    /** As {@link #on(Function)}, the runtime over {@code catalog} (e.g. one naming backup copies on this node). */
    public <R> R onCatalog(final Catalog catalog, final Function<TxnRuntime, Future<R>> body) throws Exception {
        return on(catalog, null, body);
    }

    private <R> R on(final Catalog catalog, final io.scythe.txn.runtime.TimestampOracle tso,
                     final Function<TxnRuntime, Future<R>> body) throws Exception {
        final Promise<R> done = Promise.promise();
        loop.runOnContext(v -> {
            final TxnRuntime runtime = new TxnRuntime(catalog, rrpc, LoopTimers.current(), tso != null ? tso
                : new TsoGroup(64, new DirectTsoSource(counter, () -> rrpc.oneSided("tso"))), Watermarks.DEFAULT,
                1L << 40).lookupMode(lookupMode);
            try {
                body.apply(runtime).onComplete(done);
            } catch (final RuntimeException e) {
                done.fail(e); // at once, not as a 30 s timeout with the cause lost
            }
        });
        return done.future().await(30, TimeUnit.SECONDS);
    }

    /**
     * The compute node's host and NIC clocks for {@link #loop} ({@code NodeClocks.onLoop} of {@link #cn}), one for
     * the node, made on first use: call on the loop, and give it to a runtime ({@code TxnRuntime#clocks}) whose
     * protocol reads them (Aurogon's 2LClock reads the memory node's NIC clock through them). The runtimes of
     * {@link #on} get none unless given.
     */
    public io.scythe.bridge.NodeClocks clocks() {
        if (Vertx.currentContext() != loop) {
            throw new IllegalStateException("OneMemoryNode#clocks is for the node's loop (call it inside #on)");
        }
        if (clocks == null) {
            clocks = io.scythe.bridge.NodeClocks.onLoop(cn);
        }
        return clocks;
    }

    /** Runs {@code body} on the loop (a runtime of the caller's, made there) and waits for its result. */
    public <R> R onLoop(final java.util.function.Supplier<Future<R>> body) throws Exception {
        final Promise<R> done = Promise.promise();
        loop.runOnContext(v -> {
            try {
                body.get().onComplete(done);
            } catch (final RuntimeException e) {
                done.fail(e);
            }
        });
        return done.future().await(30, TimeUnit.SECONDS);
    }

    /** The version in {@code key}'s object header. */
    public long versionOf(final long key) {
        return table.objectMemory().getLongVolatile(table.offsetOf(table.lookup(key)) + ObjectLayout.VERSION_OFFSET);
    }

    /** Puts {@code value} into the 8-byte header word at {@code offset} of {@code key}'s object (ObjectLayout). */
    public void setHeaderWord(final long key, final int offset, final long value) {
        table.objectMemory().putLongVolatile(table.offsetOf(table.lookup(key)) + offset, value);
    }

    /** The committed value of {@code key} read directly in the table's memory. */
    public long valueOf(final long key) {
        return table.objectMemory().getLongVolatile(table.offsetOf(table.lookup(key)) + ObjectLayout.VALUE_OFFSET);
    }

    @Override
    public void close() throws Exception {
        vertx.close().await(10, TimeUnit.SECONDS);
        fabric.close();
    }
}
