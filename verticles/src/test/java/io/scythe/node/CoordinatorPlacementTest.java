package io.scythe.node;

import io.scythe.bridge.BridgeVerticle;
import io.scythe.storage.ObjectLayout;
import io.scythe.storage.Table;
import io.scythe.storage.TableSchema;
import io.scythe.txn.Coordinator;
import io.scythe.txn.api.Procedures;
import io.vertx.core.AbstractVerticle;
import io.vertx.core.Context;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;
import io.vertx.core.VertxOptions;
import io.vertx.core.json.JsonObject;
import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.util.IdentityHashMap;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A compute node has one coordinator on each event loop, even while something else creates contexts: Vert.x places a
 * deployment on the next loop round-robin whatever it is deployed from, so {@link CoordinatorDeployment} checks where
 * each instance landed and deploys again until it is on its loop.
 */
class CoordinatorPlacementTest {
    private static final int LOOPS = 4;
    private Vertx vertx;
    private EmbeddedScythe scythe;

    @AfterEach
    void stop() throws Exception {
        if (scythe != null) {
            scythe.close();
        }
        if (vertx != null) {
            vertx.close().await(10, TimeUnit.SECONDS);
        }
    }

    @Test
    void shouldPutOneCoordinatorOnEveryLoopWhileOtherContextsAreMade() throws Exception {
        vertx = Vertx.vertx(new VertxOptions().setEventLoopPoolSize(LOOPS));
        BridgeVerticle.deployOnEveryEventLoop(vertx, new JsonObject()).await(10, TimeUnit.SECONDS);
        scythe = EmbeddedScythe.deploy(vertx, new JsonObject().put("memoryNodes", 1), (db, part, parts) -> {
            final Table t = db.create(TableSchema.fixed(1, "t", 8, 64));
            t.insert(0, new UnsafeBuffer(new byte[8]), 0, 8, ObjectLayout.LOADED_VERSION);
        }, new Procedures());
        // Others make contexts all along (each takes the next loop round-robin), so deployments land anywhere.
        final AtomicBoolean making = new AtomicBoolean(true);
        final AtomicInteger made = new AtomicInteger();
        final Thread maker = new Thread(() -> {
            try {
                while (making.get()) {
                    vertx.deployVerticle(new AbstractVerticle() { }).compose(vertx::undeploy)
                        .await(10, TimeUnit.SECONDS);
                    made.incrementAndGet();
                }
            } catch (final Exception e) {
                throw new IllegalStateException(e);
            }
        }, "context-maker");
        maker.start();
        final EmbeddedScythe.ComputeNode[] nodes = new EmbeddedScythe.ComputeNode[3];
        try {
            for (int i = 0; i < nodes.length; i++) {
                nodes[i] = scythe.addComputeNode("cnP" + i, (long) (i + 10) << 32);
            }
        } finally {
            making.set(false);
            maker.join(20_000);
        }
        assertThat(made.get()).as("contexts made meanwhile").isPositive();
        for (final EmbeddedScythe.ComputeNode node : nodes) {
            assertThat(node.deployments()).hasSize(LOOPS);
            final Map<Coordinator, Boolean> distinct = new IdentityHashMap<>();
            for (final Context loop : scythe.loops()) {
                final Coordinator c = node.on(loop);
                assertThat(c).as("%s's coordinator on a loop", node.name()).isNotNull();
                distinct.put(c, true);
            }
            assertThat(distinct).as("%s: one coordinator per loop", node.name()).hasSize(LOOPS);
        }
        // And each loop's thread ran exactly one of each node's coordinators' creation.
        final Set<Thread> loopThreads = java.util.Collections.newSetFromMap(new IdentityHashMap<>());
        for (final Context loop : scythe.loops()) {
            final Promise<Thread> t = Promise.promise();
            loop.runOnContext(v -> t.complete(Thread.currentThread()));
            loopThreads.add(t.future().await(10, TimeUnit.SECONDS));
        }
        assertThat(loopThreads).hasSize(LOOPS);
    }
}
