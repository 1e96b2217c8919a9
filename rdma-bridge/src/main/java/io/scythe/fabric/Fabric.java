package io.scythe.fabric;

import io.vertx.core.Future;
import io.vertx.core.Vertx;
import org.agrona.concurrent.NanoClock;

import java.util.ServiceLoader;
import java.util.TreeSet;

/**
 * The RDMA fabric: one provider (local, shm, tcp, disni) chosen by {@link FabricOptions#provider()}, the nodes this
 * process attaches to it, and the clock and cost model its emulated verbs follow.
 */
public interface Fabric extends AutoCloseable {

    /**
     * Opens the fabric named by {@code options.provider()}.
     *
     * @param vertx the Vert.x instance for providers that do I/O (tcp); may be {@code null} for local and shm
     * @throws FabricException when no such provider exists, or it cannot run here (one sentence says why)
     */
    static Fabric open(final Vertx vertx, final FabricOptions options) {
        options.validate();
        final TreeSet<String> known = new TreeSet<>();
        for (final FabricProvider provider : ServiceLoader.load(FabricProvider.class, Fabric.class.getClassLoader())) {
            if (provider.name().equals(options.provider())) {
                return provider.open(vertx, options);
            }
            known.add(provider.name());
        }
        throw new FabricException("unknown fabric provider '" + options.provider() + "'; available: " + known);
    }

    /** Provider name. */
    String provider();

    FabricOptions options();

    CostModel costModel();

    /**
     * True time: the clock the cost model is measured against (virtual in the simulator), from which every node's
     * host and NIC clock deviate ({@link Nic#hostClock()}, {@link Nic#nicClock()}).
     */
    NanoClock clock();

    /**
     * Attaches this process to the fabric as {@code node} (for tcp: starts its verbs server on the node's configured
     * address).
     */
    Future<Nic> attach(String node);

    /** The NIC this process attached as {@code node}, or {@code null}. */
    Nic nic(String node);

    /** Closes every NIC this process attached. */
    @Override
    void close();
}
