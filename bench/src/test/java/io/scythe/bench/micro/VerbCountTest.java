package io.scythe.bench.micro;

import io.scythe.bench.workload.SmallBank;
import io.scythe.bridge.BridgeVerticle;
import io.scythe.fabric.CostModel;
import io.scythe.fabric.Opcode;
import io.scythe.node.EmbeddedScythe;
import io.scythe.storage.ObjectLayout;
import io.scythe.storage.remote.LogDbRpc;
import io.scythe.txn.scythe.LockRpc;
import io.scythe.txn.Coordinator;
import io.scythe.txn.api.Procedures;
import io.vertx.core.Context;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;
import io.vertx.core.VertxOptions;
import io.vertx.core.json.JsonObject;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The driver's verb counters are exact: one SmallBank Balance under ford-occ posts exactly the verbs the protocol
 * prescribes (a READ of each of the two objects, a header READ of each in validation; the two address lookups by
 * RPC the first time only, cached after), counted on the loop by {@link LoopCounters}.
 */
class VerbCountTest {
    private static final long CUSTOMER = 7;

    private Vertx vertx;
    private EmbeddedScythe cluster;

    @BeforeEach
    void start() throws Exception {
        vertx = Vertx.vertx(new VertxOptions().setEventLoopPoolSize(1));
        BridgeVerticle.deployOnEveryEventLoop(vertx, new JsonObject()).await(30, TimeUnit.SECONDS);
        cluster = EmbeddedScythe.deploy(vertx, new JsonObject().put("memoryNodes", 2).put("protocol", "ford-occ")
                .put("costModel", CostModel.profile("zero").toJson()),
            (db, part, parts) -> SmallBank.load(db, 100, part, parts), new Procedures());
    }

    @AfterEach
    void stop() throws Exception {
        if (cluster != null) {
            cluster.close();
        }
        vertx.close().await(30, TimeUnit.SECONDS);
    }

    @Test
    void shouldCountTheVerbsOfOneBalanceExactly() throws Exception {
        final LoopCounters first = balance();
        assertThat(first.verbs().verbs(Opcode.READ)).isEqualTo(4);
        assertThat(first.verbs().rpcCalls()).isEqualTo(2); // the two pointer lookups
        assertThat(first.verbs().rpcCalls(LogDbRpc.LOOKUP >>> 8)).isEqualTo(2);
        assertThat(first.verbs().rpcCalls(LockRpc.LOCK >>> 8)).isZero();
        assertThat(first.verbs().verbs(Opcode.WRITE)).isZero();
        assertThat(first.verbs().verbs(Opcode.COMPARE_AND_SWAP)).isZero();
        assertThat(first.verbs().totalVerbs()).isEqualTo(4);

        final LoopCounters cached = balance();
        assertThat(cached.verbs().verbs(Opcode.READ)).isEqualTo(4);
        assertThat(cached.verbs().rpcCalls()).isZero();
        assertThat(cached.verbs().totalVerbs()).isEqualTo(4);
        // Two whole objects (64-byte header + 8-byte balance each) and two 64-byte headers.
        final int object = cluster.memoryNodes().get(0).table(SmallBank.CHECKING).describe().objectSlotBytes();
        assertThat(cached.verbs().bytes(Opcode.READ)).isEqualTo(2L * object + 2L * ObjectLayout.HEADER_BYTES);
        assertThat(cached.loopCpuNs()).isPositive();
    }

    /** Runs one Balance of {@link #CUSTOMER} on the loop; what the loop posted meanwhile. */
    private LoopCounters balance() throws Exception {
        final Context loop = cluster.loops().get(0);
        final LoopCounters before = LoopCounters.read(cluster.loops());
        final Promise<Coordinator.Outcome<Long>> done = Promise.promise();
        final SmallBank.Type balance = SmallBank.STANDARD_MIX.stream().filter(t -> t.name().equals("Balance"))
            .findFirst().orElseThrow();
        loop.runOnContext(v -> cluster.coordinator()
            .run(txn -> balance.procedure().run(txn, CUSTOMER, CUSTOMER + 1, 0)).onComplete(done));
        assertThat(done.future().await(30, TimeUnit.SECONDS).attempts()).isEqualTo(1);
        return LoopCounters.read(cluster.loops()).since(before);
    }
}
