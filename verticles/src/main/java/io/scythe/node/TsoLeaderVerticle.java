package io.scythe.node;

import io.netty.util.concurrent.FastThreadLocal;
import io.scythe.bridge.RdmaChannel;
import io.scythe.fabric.RemoteRegion;
import io.scythe.rrpc.Rocket;
import io.scythe.tso.DirectTsoSource;
import io.scythe.tso.ProxyTsoSource;
import io.scythe.txn.runtime.TimestampOracle;
import io.scythe.tso.TsoGroup;
import io.scythe.tso.TsoLayout;
import io.scythe.tso.TsoService;
import io.scythe.tso.TsoSource;
import io.vertx.core.Future;
import io.vertx.core.VerticleBase;
import io.vertx.core.eventbus.MessageConsumer;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Function;

/**
 * The TSO group of a compute node's event loop (Scythe §4.5 (2)): deploy one per event loop; transaction flows get
 * their loop's oracle from {@link #current()}. Its sources are the configured proxies, and the TSO service's counter
 * itself when {@code direct}; each fetch picks one at random, as the paper's leader does. The first instance of a node
 * also answers the node's high water (the largest timestamp any of its loops handed out), for a restarting service.
 */
public final class TsoLeaderVerticle extends VerticleBase {
    private static final FastThreadLocal<TimestampOracle> CURRENT = new FastThreadLocal<>();
    private static final Map<String, List<TsoGroup>> GROUPS = new ConcurrentHashMap<>();

    private final String node;
    private final String tsoNode;
    private final List<String> proxies;
    private final boolean direct;
    private final Function<String, Future<Rocket>> rockets;
    private final Function<String, Future<RdmaChannel>> channels;
    private final int maxGroup;
    private TsoGroup group;
    private MessageConsumer<Object> highWater;

    /**
     * @param rockets  this node's RRPC Rockets by remote node (called on the verticle's loop)
     * @param channels this node's one-sided channels by remote node (called on the verticle's loop)
     */
    public TsoLeaderVerticle(final String node, final String tsoNode, final List<String> proxies, final boolean direct,
                             final Function<String, Future<Rocket>> rockets,
                             final Function<String, Future<RdmaChannel>> channels, final int maxGroup) {
        if (proxies.isEmpty() && !direct) {
            throw new IllegalArgumentException("a TSO group needs proxies or direct access to the service");
        }
        this.node = node;
        this.tsoNode = tsoNode;
        this.proxies = List.copyOf(proxies);
        this.direct = direct;
        this.rockets = rockets;
        this.channels = channels;
        this.maxGroup = maxGroup;
    }

    /** The TSO group of the calling event loop. */
    public static TimestampOracle current() {
        final TimestampOracle oracle = CURRENT.getIfExists();
        if (oracle == null) {
            throw new IllegalStateException("no TsoLeaderVerticle on thread " + Thread.currentThread().getName());
        }
        return oracle;
    }

    @Override
    public Future<?> start() {
        final Future<RemoteRegion> counter = direct
            ? TsoService.locate(vertx, tsoNode, TsoProxyVerticle.LOCATE_TIMEOUT_MS) : Future.succeededFuture();
        return counter.compose(c -> {
            final List<TsoSource> sources = new ArrayList<>();
            for (final String proxy : proxies) {
                sources.add(new ProxyTsoSource(proxy, () -> rockets.apply(proxy)));
            }
            if (direct) {
                sources.add(new DirectTsoSource(c, () -> channels.apply(tsoNode)));
            }
            group = new TsoGroup(maxGroup, sources.toArray(new TsoSource[0]));
            CURRENT.set(group);
            final List<TsoGroup> groups = GROUPS.computeIfAbsent(node, n -> new java.util.concurrent.CopyOnWriteArrayList<>());
            final boolean first = groups.isEmpty();
            groups.add(group);
            if (first && direct) {
                highWater = vertx.eventBus().consumer(TsoLayout.highWaterAddress(node), m -> m.reply(
                    GROUPS.getOrDefault(node, List.of()).stream().mapToLong(TsoGroup::highWater).max().orElse(0)));
                return highWater.completion();
            }
            return Future.succeededFuture();
        });
    }

    @Override
    public Future<?> stop() {
        if (CURRENT.getIfExists() == group) {
            CURRENT.remove();
        }
        final List<TsoGroup> groups = GROUPS.get(node);
        if (groups != null) {
            groups.remove(group);
        }
        return highWater == null ? Future.succeededFuture() : highWater.unregister();
    }

    public TsoGroup group() {
        return group;
    }
}
