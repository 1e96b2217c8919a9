package io.scythe.sim;

import io.vertx.core.Vertx;
import io.vertx.core.VertxOptions;

import java.util.concurrent.TimeUnit;

/**
 * The Vert.x instance simulations run on: one event loop (the simulator is single-threaded) whose blocked-thread
 * checker tolerates a long simulation, which is CPU work on that loop by design: nothing else runs there meanwhile.
 */
public final class SimVertx {
    private SimVertx() {
    }

    public static Vertx create() {
        return Vertx.vertx(new VertxOptions().setEventLoopPoolSize(1).setWorkerPoolSize(1)
            .setInternalBlockingPoolSize(1)
            .setBlockedThreadCheckInterval(1).setBlockedThreadCheckIntervalUnit(TimeUnit.HOURS)
            .setMaxEventLoopExecuteTime(1).setMaxEventLoopExecuteTimeUnit(TimeUnit.HOURS));
    }
}
