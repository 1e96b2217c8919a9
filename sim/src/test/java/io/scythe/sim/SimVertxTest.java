package io.scythe.sim;

import io.vertx.core.Vertx;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;

/** Base of the simulator's tests: one simulation Vert.x ({@link SimVertx}) per test class, closed after it. */
abstract class SimVertxTest {
    static Vertx vertx;

    @BeforeAll
    static void startVertx() {
        vertx = SimVertx.create();
    }

    @AfterAll
    static void stopVertx() throws Exception {
        vertx.close().await();
    }
}
