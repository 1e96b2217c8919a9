package io.scythe.routing;

import io.vertx.core.Future;

import java.util.concurrent.atomic.AtomicReference;

/** The deterministic {@link ShardDirectory}: the current map in an atomic reference of this JVM; thread-safe. */
public final class LocalShardDirectory implements ShardDirectory {
    private final AtomicReference<ShardMap> map;

    public LocalShardDirectory(final ShardMap initial) {
        if (initial == null) {
            throw new IllegalArgumentException("a shard directory starts from a map, not null");
        }
        this.map = new AtomicReference<>(initial);
    }

    @Override
    public ShardMap current() {
        return map.get();
    }

    @Override
    public Future<ShardMap> move(final int shard, final int toComputeNode) {
        try {
            return Future.succeededFuture(moveNow(shard, toComputeNode));
        } catch (final IllegalArgumentException e) {
            return Future.failedFuture(e);
        }
    }

    /** {@link #move}, returning the map at once (nothing here blocks). */
    public ShardMap moveNow(final int shard, final int toComputeNode) {
        return map.updateAndGet(m -> m.moved(shard, toComputeNode));
    }
}
