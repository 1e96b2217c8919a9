package io.scythe.node;

import io.scythe.fabric.RemoteRegion;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.eventbus.DeliveryOptions;

import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Looks regions up on memory nodes and caches the answers, as FORD and RCC cache remote addresses: one event-bus
 * round trip per region per compute node. A stale entry is harmless (a verb with it fails with a remote access
 * error); {@link #invalidate} drops it.
 */
public final class RegionDirectoryClient {
    /** How long a lookup waits; a timeout means the memory node is unreachable or overloaded. */
    public static final long DEFAULT_TIMEOUT_MS = 5_000;

    private final Vertx vertx;
    private final DeliveryOptions delivery;
    private final Map<String, RemoteRegion> cache = new ConcurrentHashMap<>();

    public RegionDirectoryClient(final Vertx vertx) {
        this(vertx, DEFAULT_TIMEOUT_MS);
    }

    public RegionDirectoryClient(final Vertx vertx, final long timeoutMs) {
        this.vertx = vertx;
        this.delivery = new DeliveryOptions().setSendTimeout(timeoutMs);
        MemoryNodeVerticle.registerCodecs(vertx.eventBus());
    }

    /** Where {@code region} of memory node {@code node} is; from the cache when known. */
    public Future<RemoteRegion> lookup(final String node, final String region) {
        final RemoteRegion cached = cache.get(key(node, region));
        if (cached != null) {
            return Future.succeededFuture(cached);
        }
        return vertx.eventBus().<RegionDirectory>request(MemoryNodeVerticle.metadataAddress(node),
                new RegionLookup(region), delivery)
            .map(reply -> {
                final RemoteRegion found = reply.body().regions().get(0);
                cache.put(key(node, region), found);
                return found;
            });
    }

    /** Every region of memory node {@code node} (not cached). */
    public Future<List<RemoteRegion>> all(final String node) {
        return vertx.eventBus().<RegionDirectory>request(MemoryNodeVerticle.metadataAddress(node),
                new RegionLookup(RegionLookup.ALL), delivery)
            .map(reply -> reply.body().regions());
    }

    public void invalidate(final String node, final String region) {
        cache.remove(key(node, region));
    }

    private static String key(final String node, final String region) {
        return node + '/' + region;
    }
}
