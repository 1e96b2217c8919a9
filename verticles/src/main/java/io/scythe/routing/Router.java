package io.scythe.routing;

import io.scythe.txn.api.TxnRequest;
import io.vertx.core.Future;

import java.util.SplittableRandom;
import java.util.function.Supplier;

/**
 * The routing layer's view (Lotus §1.1: "external; caches the shard-to-CN mapping"): picks each transaction's compute
 * node by its {@link RoutingMode} from a cached {@link ShardMap}, which goes stale when a shard moves, until an owner's
 * refusal says so ({@link #learn}). One per client or event loop: not thread-safe.
 */
public final class Router {
    /** The routing key of a transaction that has none: it goes to a random node and nobody checks it. */
    public static final long NO_ROUTING_KEY = TxnRequest.NO_ROUTING_KEY;

    private final RoutingMode mode;
    private ShardMap map;
    private long refusals;

    public Router(final RoutingMode mode, final ShardMap map) {
        if (mode == RoutingMode.LOCAL) {
            throw new IllegalArgumentException("routing local sends nothing anywhere: no router");
        }
        this.mode = mode;
        this.map = map;
    }

    public RoutingMode mode() {
        return mode;
    }

    /** The map this router routes by (maybe stale). */
    public ShardMap map() {
        return map;
    }

    /**
     * Whether a transaction with {@code routingKey} goes to its shard's owner (which then checks that it owns it),
     * rather than to a random node.
     */
    public boolean byShard(final long routingKey, final boolean readOnly) {
        return routingKey != NO_ROUTING_KEY && (mode == RoutingMode.SHARD || mode == RoutingMode.HYBRID && !readOnly);
    }

    /** The compute node (index in the map) to send the transaction to; {@code random} only for random choices. */
    public int route(final long routingKey, final boolean readOnly, final SplittableRandom random) {
        return byShard(routingKey, readOnly) ? map.ownerOfKey(routingKey) : random.nextInt(map.computeNodes());
    }

    /** An owner refused a route taken from this router's map: keep {@code current} if it is newer. */
    public void learn(final ShardMap current) {
        refusals++;
        map = map.newer(current);
    }

    /** Where a router sends a transaction: to compute node {@code cn}, checked there by shard when {@code byShard}. */
    @FunctionalInterface
    public interface Sender<T> {
        Future<T> send(int cn, boolean byShard);
    }

    /**
     * Sends a transaction where this router routes it, through {@code sender}; when the node refuses it
     * ({@link WrongOwnerException}: nothing of it ran), learns {@code current}'s map and sends it again, at most
     * {@code reroutes} more times (then the refusal is the outcome).
     */
    public <T> Future<T> send(final long routingKey, final boolean readOnly, final SplittableRandom random,
                              final Supplier<ShardMap> current, final int reroutes, final Sender<T> sender) {
        final int cn = route(routingKey, readOnly, random);
        return sender.send(cn, byShard(routingKey, readOnly)).recover(e -> {
            if (e instanceof WrongOwnerException && reroutes > 0) {
                learn(current.get());
                return send(routingKey, readOnly, random, current, reroutes - 1, sender);
            }
            return Future.failedFuture(e);
        });
    }

    /** Routes refused so far (each sent again). */
    public long refusals() {
        return refusals;
    }
}
