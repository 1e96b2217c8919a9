package io.scythe.node;

import io.scythe.bridge.BridgeVerticle;
import io.scythe.storage.ObjectLayout;
import io.scythe.storage.Table;
import io.scythe.storage.TableSchema;
import io.scythe.txn.Coordinator;
import io.scythe.txn.api.Procedures;
import io.scythe.txn.api.TxnReply;
import io.scythe.txn.api.TxnRequest;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;
import io.vertx.core.VertxOptions;
import io.vertx.core.eventbus.ReplyException;
import io.vertx.core.json.JsonObject;
import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.api.Test;

import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** An application embeds Scythe in its own Vert.x, uses both APIs, and undeploys it cleanly. */
class EmbeddedScytheTest {
    @Test
    void shouldServeBothApisFromAConfigurationAndStopCleanly() throws Exception {
        final Vertx app = Vertx.vertx(new VertxOptions().setEventLoopPoolSize(2));
        try {
            BridgeVerticle.deployOnEveryEventLoop(app, new JsonObject()).await(10, TimeUnit.SECONDS);
            final Procedures procedures = new Procedures().register("add", 2, args -> txn ->
                txn.readForUpdate("counters", args[0]).map(b -> {
                    final UnsafeBuffer next = new UnsafeBuffer(new byte[8]);
                    next.putLong(0, b.getLong(0) + args[1]);
                    txn.write("counters", args[0], next, 0, 8);
                    return b.getLong(0) + args[1];
                }));
            final EmbeddedScythe scythe = EmbeddedScythe.deploy(app, new JsonObject().put("memoryNodes", 2)
                .put("protocol", "scythe"), (db, part, parts) -> {
                    final Table t = db.create(TableSchema.fixed(1, "counters", 8, 8));
                    for (long k = part; k < 8; k += parts) {
                        t.insert(k, new UnsafeBuffer(new byte[8]), 0, 8, ObjectLayout.LOADED_VERSION);
                    }
                }, procedures);
            // Event-bus API: keys 0..7 spread over both memory nodes.
            for (long k = 0; k < 8; k++) {
                final TxnReply reply = app.eventBus().<TxnReply>request(CoordinatorVerticle.ADDRESS,
                    new TxnRequest("add", new long[] {k, k + 1})).await(10, TimeUnit.SECONDS).body();
                assertThat(reply.committed()).as(reply.reason()).isTrue();
                assertThat(reply.result()).isEqualTo(k + 1);
            }
            // In-process API on one of its loops.
            final Promise<Coordinator.Outcome<Long>> done = Promise.promise();
            scythe.loops().get(1).runOnContext(v -> scythe.coordinator()
                .run(procedures.bind("add", new long[] {5, 100})).onComplete(done));
            assertThat(done.future().await(10, TimeUnit.SECONDS).result()).isEqualTo(106);
            assertThat(scythe.memoryNodes()).hasSize(2);
            scythe.close();
            assertThatThrownBy(() -> app.eventBus().request(CoordinatorVerticle.ADDRESS,
                new TxnRequest("add", new long[] {1, 1})).await(5, TimeUnit.SECONDS))
                .isInstanceOf(ReplyException.class).hasMessageContaining("No handlers");
        } finally {
            app.close().await(10, TimeUnit.SECONDS);
        }
    }
}
