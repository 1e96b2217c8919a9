package io.scythe.cluster;

import com.hazelcast.core.EntryEvent;
import com.hazelcast.core.HazelcastInstance;
import com.hazelcast.map.IMap;
import com.hazelcast.map.listener.EntryAddedListener;
import com.hazelcast.map.listener.EntryUpdatedListener;
import io.scythe.routing.ShardDirectory;
import io.scythe.routing.ShardMap;
import io.vertx.core.Future;
import io.vertx.core.Vertx;

import java.util.UUID;
import java.util.concurrent.atomic.AtomicReference;

/**
 * The cluster-mode {@link ShardDirectory}: the cluster's one {@link ShardMap} is the value of entry {@value #KEY} of
 * the Hazelcast map {@value #MAP} (the map's own text, {@link ShardMap#encode}: epoch, compute nodes, one owner per
 * shard), so every member reads the same owners under the same epoch. A move reads the entry, computes the next epoch's
 * map and writes it by compare-and-set ({@code IMap.replace(key, old, new)}), again on a lost race: concurrent moves
 * from several members each take their own epoch and none is lost. Each member caches the newest map it saw, kept up
 * to date by an entry listener, so {@link #current()} never blocks and an event loop may check ownership with it; a
 * member whose cache is behind refuses with an older epoch, and the router that learns from it learns at least that.
 *
 * <p>Map operations block (0.5-1 ms each, DEPENDENCIES.md): {@link #open} and {@link #move} run them on a worker.
 * Hazelcast data structures are for ownership, never per-transaction traffic: routing reads the cache.
 */
public final class HazelcastShardMap implements ShardDirectory, AutoCloseable {
    /** The Hazelcast map holding the shard map. */
    public static final String MAP = "scythe.routing";
    /** Its one entry. */
    public static final String KEY = "shards";

    private final Vertx vertx;
    private final HazelcastInstance hazelcast;
    private final IMap<String, String> entries;
    /** The newest map seen; null only while opening. */
    private final AtomicReference<ShardMap> cached = new AtomicReference<>();
    private UUID listener;

    private HazelcastShardMap(final Vertx vertx, final HazelcastInstance hazelcast) {
        this.vertx = vertx;
        this.hazelcast = hazelcast;
        this.entries = hazelcast.getMap(MAP);
    }

    /**
     * The cluster's shard map, seen from {@code hazelcast}'s member: {@code initial} if no member wrote one yet (the
     * first to open writes it), else the one there, which must have {@code initial}'s shard count.
     */
    public static Future<HazelcastShardMap> open(final Vertx vertx, final HazelcastInstance hazelcast,
                                                 final ShardMap initial) {
        return vertx.executeBlocking(() -> openNow(vertx, hazelcast, initial), false);
    }

    /** {@link #open}, blocking the calling thread (never an event loop). */
    public static HazelcastShardMap openNow(final Vertx vertx, final HazelcastInstance hazelcast,
                                            final ShardMap initial) {
        final HazelcastShardMap directory = new HazelcastShardMap(vertx, hazelcast);
        // Listen first: a move between the read below and the listener's start would otherwise go unseen.
        directory.listener = directory.entries.addEntryListener(directory.new Changes(), KEY, true);
        final String there = directory.entries.putIfAbsent(KEY, initial.encode());
        final ShardMap current = there == null ? initial : ShardMap.decode(there);
        if (current.shards() != initial.shards()) {
            directory.close();
            throw new IllegalArgumentException("the cluster's shard map (" + MAP + "/" + KEY + ") has "
                + current.shards() + " shards, this node was configured with " + initial.shards());
        }
        directory.learn(current); // or a newer one the listener saw meanwhile
        return directory;
    }

    private final class Changes implements EntryAddedListener<String, String>, EntryUpdatedListener<String, String> {
        @Override
        public void entryAdded(final EntryEvent<String, String> event) {
            learn(ShardMap.decode(event.getValue()));
        }

        @Override
        public void entryUpdated(final EntryEvent<String, String> event) {
            learn(ShardMap.decode(event.getValue()));
        }
    }

    /** Keeps {@code map} if it is newer than the cached one. */
    private ShardMap learn(final ShardMap map) {
        return cached.accumulateAndGet(map, (have, seen) -> have == null ? seen : have.newer(seen));
    }

    @Override
    public ShardMap current() {
        return cached.get();
    }

    @Override
    public Future<ShardMap> move(final int shard, final int toComputeNode) {
        return vertx.executeBlocking(() -> moveNow(shard, toComputeNode), false);
    }

    /** {@link #move}, blocking the calling thread (never an event loop). */
    public ShardMap moveNow(final int shard, final int toComputeNode) {
        while (true) {
            final String text = entries.get(KEY);
            if (text == null) {
                throw new IllegalStateException("the cluster's shard map (" + MAP + "/" + KEY + ") is gone: the map "
                    + "was cleared or destroyed");
            }
            final ShardMap now = ShardMap.decode(text);
            final ShardMap next = now.moved(shard, toComputeNode);
            if (next == now) {
                return learn(now);
            }
            if (entries.replace(KEY, text, next.encode())) {
                learn(next);
                return next;
            }
            // Another member moved a shard in between: move from its map.
        }
    }

    /** Reads the cluster's map now (blocking; the cache follows the listener anyway). */
    public ShardMap refreshNow() {
        final String text = entries.get(KEY);
        return text == null ? current() : learn(ShardMap.decode(text));
    }

    @Override
    public void close() {
        try {
            if (listener != null && hazelcast.getLifecycleService().isRunning()) {
                entries.removeEntryListener(listener);
            }
        } catch (final RuntimeException leaving) {
            // the member is shutting down anyway
        }
    }
}
