package io.scythe.txn.mn;

import io.scythe.hotspot.Watermarks;
import io.scythe.rrpc.RpcServer;
import io.scythe.storage.LogDb;
import io.scythe.storage.remote.LogDbService;
import io.scythe.txn.recovery.RecoveryService;
import io.scythe.txn.spi.MemoryNodeContext;
import io.scythe.txn.spi.ProtocolModule;
import io.scythe.txn.spi.ProtocolRegistry;

import java.util.HashMap;
import java.util.HashSet;
import java.util.Map;
import java.util.Set;

/**
 * Everything one memory node serves, set up in one place for every kind of node (cluster node, embedded cluster,
 * simulator, benchmarks): the LogDB service, the redo-log and recovery service (when asked), and the services of
 * every registered protocol module ({@link ProtocolModule#startMemoryNode}), whatever protocol the compute nodes
 * run. Call before the RPC server starts.
 */
public final class MemoryNodeServices implements MemoryNodeContext {
    private final LogDb db;
    private final RpcServer server;
    private final Watermarks watermarks;
    private final LogDbService logDb;
    private final RecoveryService recovery;
    private final Map<Class<?>, Object> services = new HashMap<>();
    private final Set<String> deadNodeSteps = new HashSet<>();

    private MemoryNodeServices(final LogDb db, final RpcServer server, final Watermarks watermarks,
                               final boolean recovery) {
        this.db = db;
        this.server = server;
        this.watermarks = watermarks;
        this.logDb = new LogDbService(db).register(server);
        this.recovery = recovery ? new RecoveryService(db).register(server, logDb) : null;
    }

    /**
     * Registers on {@code server} the services of memory node {@code db}: LogDB, recovery ({@code recovery}: redo
     * logs and the release of dead compute nodes; the simulator runs without) and every module's.
     */
    public static MemoryNodeServices start(final LogDb db, final RpcServer server, final Watermarks watermarks,
                                           final boolean recovery) {
        final MemoryNodeServices node = new MemoryNodeServices(db, server, watermarks, recovery);
        for (final ProtocolModule module : ProtocolRegistry.modules()) {
            module.startMemoryNode(node);
        }
        return node;
    }

    @Override
    public LogDb db() {
        return db;
    }

    @Override
    public RpcServer server() {
        return server;
    }

    @Override
    public LogDbService logDb() {
        return logDb;
    }

    @Override
    public Watermarks watermarks() {
        return watermarks;
    }

    /** The recovery service, or {@code null} when this node keeps none. */
    public RecoveryService recovery() {
        return recovery;
    }

    /** Two modules sharing a lock (FORD's and FaRM's CAS word) add its step under one name: it runs once. */
    @Override
    public void onDeadNode(final Phase phase, final String counted, final DeadNodeStep step) {
        if (recovery != null && deadNodeSteps.add(counted)) {
            recovery.onDeadNode(phase, counted, step);
        }
    }

    /**
     * Tells {@code listener}, on this node's RPC loop, of every release of a dead compute node here once it ran (its
     * fabric identity and id prefixes: every module's dead-node step ran on this node): a host whose compute nodes run
     * in processes of their own publishes it to them ({@code ComputeNodeContext#onPeerReleased}). Nothing on a node
     * that keeps no recovery service.
     */
    public void onReleased(final java.util.function.BiConsumer<String, long[]> listener) {
        if (recovery != null) {
            recovery.onReleased(listener);
        }
    }

    private final java.util.List<Promotion> promotions = new java.util.concurrent.CopyOnWriteArrayList<>();

    @Override
    public void onPromotion(final Promotion promotion) {
        promotions.add(promotion);
    }

    /**
     * Cluster mode's memory-node failover promoted this node's copies {@code tables} (ids here), and every live
     * compute node applied it: every module's {@link Promotion#promote}. On this node's RPC loop.
     *
     * @return the modules' refusals (empty when every one promoted them)
     */
    public java.util.List<String> promote(final String protocol, final Set<Integer> tables) {
        final java.util.List<String> refusals = new java.util.ArrayList<>();
        for (final Promotion p : promotions) {
            final String refused;
            try {
                refused = p.promote(protocol, tables);
            } catch (final RuntimeException e) {
                // One module's failure must not skip the others' promotions; said, as a refusal is.
                refusals.add("promotion of " + tables + " by " + p + " failed: " + e);
                continue;
            }
            if (refused != null) {
                refusals.add(refused);
            }
        }
        return refusals;
    }

    /** This node is a replacement process rejoining a cluster running {@code protocol} ({@link Promotion#replacement}). */
    public void replacement(final String protocol) {
        for (final Promotion p : promotions) {
            p.replacement(protocol);
        }
    }

    /** This replacement process rejoined: its copies are full copies ({@link Promotion#rejoined}). */
    public void rejoined() {
        for (final Promotion p : promotions) {
            p.rejoined();
        }
    }

    /** What {@link #loopNumbers} answers; set by hosts that number compute nodes' loops by configuration. */
    private volatile java.util.function.LongFunction<int[]> loopNumbers = prefix -> new int[0];

    /** Tells this node how the host numbers a compute node's loops ({@link MemoryNodeContext#loopNumbers}). */
    public void loopNumbers(final java.util.function.LongFunction<int[]> numbers) {
        this.loopNumbers = numbers;
    }

    @Override
    public int[] loopNumbers(final long idPrefix) {
        return loopNumbers.apply(idPrefix);
    }

    @Override
    public <T> void publish(final Class<T> type, final T service) {
        services.putIfAbsent(type, service);
    }

    /**
     * The service of {@code type} a module published on this node.
     *
     * @throws IllegalStateException when none did (its module is not registered)
     */
    public <T> T service(final Class<T> type) {
        final Object service = services.get(type);
        if (service == null) {
            throw new IllegalStateException("no protocol module published a " + type.getSimpleName()
                + " on memory node " + db.nic().node());
        }
        return type.cast(service);
    }
}
