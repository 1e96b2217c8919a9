package io.scythe.node;

import io.scythe.bridge.BridgeVerticle;
import io.scythe.routing.Router;
import io.scythe.routing.RoutingMode;
import io.scythe.routing.ShardMap;
import io.scythe.routing.WrongOwnerException;
import io.scythe.storage.ObjectLayout;
import io.scythe.storage.Table;
import io.scythe.storage.TableSchema;
import io.scythe.txn.Coordinator;
import io.scythe.txn.api.Procedures;
import io.scythe.txn.api.TxnReply;
import io.scythe.txn.api.TxnRequest;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;
import io.vertx.core.VertxOptions;
import io.vertx.core.eventbus.ReplyException;
import io.vertx.core.json.JsonObject;
import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.api.Test;

import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.CopyOnWriteArrayList;
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

    /** Counters 0..15 on two memory nodes; {@code add(key, delta)} also notes the compute node that ran it. */
    private static EmbeddedScythe counters(final Vertx app, final int computeNodes, final Procedures procedures)
        throws Exception {
        return EmbeddedScythe.deploy(app, new JsonObject().put("memoryNodes", 2).put("protocol", "ford-occ")
            .put("computeNodes", computeNodes).put("shards", 8), (db, part, parts) -> {
                final Table t = db.create(TableSchema.fixed(1, "counters", 8, 16));
                for (long k = part; k < 16; k += parts) {
                    t.insert(k, new UnsafeBuffer(new byte[8]), 0, 8, ObjectLayout.LOADED_VERSION);
                }
            }, procedures);
    }

    @Test
    void shouldRunSeveralComputeNodesRefuseWhatTheyDoNotOwnAndFollowAMovedShard() throws Exception {
        final Vertx app = Vertx.vertx(new VertxOptions().setEventLoopPoolSize(2));
        try {
            BridgeVerticle.deployOnEveryEventLoop(app, new JsonObject()).await(10, TimeUnit.SECONDS);
            // Which node ran each commit: transaction ids carry the node in bits 32-39.
            final List<long[]> ranOn = new CopyOnWriteArrayList<>();
            final Procedures procedures = new Procedures().register("add", 2, args -> txn ->
                txn.readForUpdate("counters", args[0]).map(b -> {
                    final UnsafeBuffer next = new UnsafeBuffer(new byte[8]);
                    next.putLong(0, b.getLong(0) + args[1]);
                    txn.write("counters", args[0], next, 0, 8);
                    ranOn.add(new long[] {args[0], (txn.id() >>> 32) & 0xff});
                    return b.getLong(0) + args[1];
                }));
            final EmbeddedScythe scythe = counters(app, 3, procedures);
            assertThat(scythe.computeNodes()).isEqualTo(3);
            assertThat(scythe.shardMap().nodes()).containsExactly("cn", "cn1", "cn2");
            // Event bus: key 5 is shard 5, cn2's. Sent to cn1 routed by shard, it is refused; to cn2 it commits.
            final TxnReply refused = app.eventBus().<TxnReply>request(CoordinatorVerticle.ADDRESS + ".cn1",
                new TxnRequest("add", new long[] {5, 1}, 5)).await(10, TimeUnit.SECONDS).body();
            assertThat(refused.wrongOwner()).isTrue();
            assertThat(refused.ownerEpoch()).isEqualTo(ShardMap.FIRST_EPOCH);
            assertThat(refused.reason()).isEqualTo("wrong owner, epoch 1: shard 5 is owned by cn2, not by cn1");
            assertThat(ranOn).isEmpty();
            final TxnReply ran = app.eventBus().<TxnReply>request(CoordinatorVerticle.ADDRESS + ".cn2",
                new TxnRequest("add", new long[] {5, 1}, 5)).await(10, TimeUnit.SECONDS).body();
            assertThat(ran.committed()).as(ran.reason()).isTrue();
            // Not routed by shard: any node runs it.
            assertThat(app.eventBus().<TxnReply>request(CoordinatorVerticle.ADDRESS + ".cn",
                new TxnRequest("add", new long[] {5, 1})).await(10, TimeUnit.SECONDS).body().committed()).isTrue();
            assertThat(ranOn).extracting(r -> r[1]).containsExactly(2L, 0L);
            ranOn.clear();

            // In process: a router sends keys 0..15 by shard; each runs on its shard's owner.
            final Router router = new Router(RoutingMode.SHARD, scythe.shardMap());
            for (long k = 0; k < 16; k++) {
                assertThat(routed(scythe, router, procedures, k)).isEqualTo(0);
            }
            assertThat(ranOn).allSatisfy(r -> assertThat(r[1]).isEqualTo(r[0] % 8 % 3));
            ranOn.clear();
            // Shard 5 moves to cn0: the router's route to cn2 is stale, refused, and sent again to cn0.
            final ShardMap moved = scythe.moveShard(5, 0);
            assertThat(moved.epoch()).isEqualTo(2);
            assertThat(routed(scythe, router, procedures, 13)).isEqualTo(1);
            assertThat(routed(scythe, router, procedures, 5)).as("learnt: no refusal").isEqualTo(0);
            assertThat(ranOn).extracting(r -> r[1]).containsExactly(0L, 0L);
            final Promise<Coordinator.Outcome<Long>> stale = Promise.promise();
            scythe.loops().get(0).runOnContext(v -> scythe.run(2, 5, procedures.bind("add", new long[] {5, 1}))
                .onComplete(stale));
            assertThatThrownBy(() -> stale.future().await(10, TimeUnit.SECONDS))
                .isInstanceOf(WrongOwnerException.class).hasMessage("wrong owner, epoch 2: shard 5 is owned by cn, "
                    + "not by cn2");
            assertThat(app.eventBus().<TxnReply>request(CoordinatorVerticle.ADDRESS + ".cn2",
                new TxnRequest("add", new long[] {13, 1}, 13)).await(10, TimeUnit.SECONDS).body().ownerEpoch())
                .isEqualTo(2);
            assertThatThrownBy(() -> scythe.addComputeNode("extra", 2L << 32)).hasMessageContaining("taken");
            scythe.close();
        } finally {
            app.close().await(10, TimeUnit.SECONDS);
        }
    }

    /** Runs add(key, 1) where {@code router} sends it, again after each refusal; returns how many refusals. */
    private static long routed(final EmbeddedScythe scythe, final Router router, final Procedures procedures,
                               final long key) throws Exception {
        final long before = router.refusals();
        final Promise<Coordinator.Outcome<Long>> done = Promise.promise();
        scythe.loops().get(1).runOnContext(v -> send(scythe, router, procedures, key).onComplete(done));
        done.future().await(10, TimeUnit.SECONDS);
        return router.refusals() - before;
    }

    private static Future<Coordinator.Outcome<Long>> send(final EmbeddedScythe scythe, final Router router,
                                                          final Procedures procedures, final long key) {
        return router.send(key, false, new SplittableRandom(0), scythe::shardMap, 1,
            (cn, byShard) -> scythe.run(cn, key, procedures.bind("add", new long[] {key, 1})));
    }
}
