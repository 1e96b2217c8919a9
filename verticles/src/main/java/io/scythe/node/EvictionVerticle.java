package io.scythe.node;

import io.scythe.storage.HorizonBoard;
import io.scythe.storage.LogDb;
import io.vertx.core.Future;
import io.vertx.core.VerticleBase;

import java.util.function.LongSupplier;

/**
 * Reclaims a memory node's old versions in the background: every {@code periodMs}, on a worker thread (it walks
 * version chains), frees what no transaction at or above the horizon can read. The horizon is the smallest timestamp
 * compute nodes announced on the {@link HorizonBoard}, or, when none has a live transaction, {@code idleHorizon}
 * (the newest timestamp handed out).
 */
public final class EvictionVerticle extends VerticleBase {
    public static final long DEFAULT_PERIOD_MS = 10;

    private final LogDb db;
    private final HorizonBoard board;
    private final LongSupplier idleHorizon;
    private final long periodMs;
    private long timer = -1;
    private boolean running;
    private volatile long reclaimed;
    private volatile long lastHorizon;

    public EvictionVerticle(final LogDb db, final HorizonBoard board, final LongSupplier idleHorizon,
                            final long periodMs) {
        if (periodMs <= 0) {
            throw new IllegalArgumentException("eviction periodMs=" + periodMs + " must be positive");
        }
        this.db = db;
        this.board = board;
        this.idleHorizon = idleHorizon;
        this.periodMs = periodMs;
    }

    @Override
    public Future<?> start() {
        timer = vertx.setPeriodic(periodMs, t -> round());
        return Future.succeededFuture();
    }

    private void round() {
        if (running) {
            return; // the previous round is still walking
        }
        running = true;
        final long horizon = board.horizon(idleHorizon.getAsLong());
        vertx.executeBlocking(() -> db.reclaim(horizon), false).onComplete(ar -> {
            running = false;
            lastHorizon = horizon;
            if (ar.succeeded()) {
                reclaimed += ar.result();
            }
        });
    }

    @Override
    public Future<?> stop() {
        if (timer >= 0) {
            vertx.cancelTimer(timer);
        }
        return Future.succeededFuture();
    }

    /** Version records and objects freed so far. */
    public long reclaimed() {
        return reclaimed;
    }

    public long lastHorizon() {
        return lastHorizon;
    }
}
