package io.scythe.node;

import io.scythe.bridge.BridgeVerticle;
import io.scythe.codec.KryoCodec;
import io.scythe.fabric.CostModel;
import io.scythe.fabric.FabricOptions;
import io.scythe.fabric.Nic;
import io.scythe.fabric.RemoteRegion;
import io.scythe.fabric.local.LocalFabric;
import io.scythe.hotspot.Watermarks;
import io.scythe.rrpc.RpcServer;
import io.scythe.rrpc.RrpcClient;
import io.scythe.rrpc.RrpcOptions;
import io.scythe.storage.LogDb;
import io.scythe.storage.ObjectLayout;
import io.scythe.storage.Table;
import io.scythe.storage.TableSchema;
import io.scythe.storage.remote.LogDbService;
import io.scythe.tso.DirectTsoSource;
import io.scythe.tso.TsoGroup;
import io.scythe.tso.TsoService;
import io.scythe.txn.Catalog;
import io.scythe.txn.Coordinator;
import io.scythe.txn.TxnRuntime;
import io.scythe.txn.api.Procedures;
import io.scythe.txn.api.TxnReply;
import io.scythe.txn.api.TxnRequest;
import io.scythe.txn.runtime.LoopTimers;
import io.scythe.txn.scythe.TakeoutLockService;
import io.vertx.core.Context;
import io.vertx.core.DeploymentOptions;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;
import io.vertx.core.VertxOptions;
import io.vertx.core.json.JsonObject;
import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.util.List;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/** Transactions over the event bus: committed, aborted and error replies; bad requests change nothing. */
class CoordinatorVerticleTest {
    private Vertx vertx;
    private LocalFabric fabric;
    private Table table;
    private volatile CoordinatorVerticle coordinatorVerticle;

    @BeforeEach
    void setUp() throws Exception {
        vertx = Vertx.vertx(new VertxOptions().setEventLoopPoolSize(1));
        BridgeVerticle.deployOnEveryEventLoop(vertx, new JsonObject()).await(10, TimeUnit.SECONDS);
        final Context loop = BridgeVerticle.eventLoopContexts(vertx).get(0);
        fabric = new LocalFabric(new FabricOptions().costModel(CostModel.cx5()));
        final Nic mn = fabric.attachNow("mn");
        final LogDb db = new LogDb(mn);
        table = db.create(TableSchema.fixed(1, "checking", 8, 16));
        final UnsafeBuffer v = new UnsafeBuffer(new byte[8]);
        for (long k = 0; k < 16; k++) {
            v.putLong(0, 100);
            table.insert(k, v, 0, 8, ObjectLayout.LOADED_VERSION);
        }
        final RpcServer server = new RpcServer(vertx, mn, new RrpcOptions());
        new LogDbService(db).register(server);
        new TakeoutLockService(db, Watermarks.DEFAULT, true).register(server);
        final Promise<Void> started = Promise.promise();
        loop.runOnContext(ignored -> server.start().onComplete(started));
        started.future().await(10, TimeUnit.SECONDS);
        final RemoteRegion counter = new TsoService(vertx, fabric.attachNow("tso"), List.of(), 1000).start()
            .await(10, TimeUnit.SECONDS);
        final Nic cn = fabric.attachNow("cn");
        final RrpcClient rrpc = new RrpcClient(vertx, cn, new RrpcOptions());
        final Catalog catalog = new Catalog().add("checking",
            List.of(new Catalog.Partition("mn", table.describe())));
        final Procedures procedures = new Procedures()
            .register("divide", 2, args -> txn -> txn.readForUpdate("checking", args[0]).map(b -> {
                final UnsafeBuffer next = new UnsafeBuffer(new byte[8]);
                next.putLong(0, b.getLong(0) / args[1]); // a bug in user code: divides by zero when told to
                txn.write("checking", args[0], next, 0, 8);
                return 0L;
            }))
            .register("balance", 1, args -> txn -> txn.read("checking", args[0]).map(b -> b.getLong(0)))
            .register("rollBack", 1, args -> txn -> txn.readForUpdate("checking", args[0]).compose(b ->
                io.vertx.core.Future.failedFuture(new io.scythe.txn.AbortException(io.scythe.txn.AbortReason.USER,
                    "the procedure rolled back"))))
            .register("conflict", 1, args -> txn -> txn.read("checking", args[0]).compose(b ->
                io.vertx.core.Future.failedFuture(new io.scythe.txn.AbortException(io.scythe.txn.AbortReason.LOCKED,
                    "always in conflict")))) // retried up to the limit (5 attempts here)
            .register("throwAtOnce", 1, args -> txn -> {
                throw new IllegalStateException("user code failed before its first read");
            })
            .register("deposit", 2, args -> txn ->
            txn.readForUpdate("checking", args[0]).map(b -> {
                final UnsafeBuffer next = new UnsafeBuffer(new byte[8]);
                next.putLong(0, b.getLong(0) + args[1]);
                txn.write("checking", args[0], next, 0, 8);
                return args[1];
            }));
        vertx.deployVerticle(() -> coordinatorVerticle = new CoordinatorVerticle(() -> new Coordinator(new TxnRuntime(catalog, rrpc,
                LoopTimers.current(), new TsoGroup(64, new DirectTsoSource(counter, () -> rrpc.oneSided("tso"))),
                Watermarks.DEFAULT, 1L << 40),
                io.scythe.txn.spi.ProtocolRegistry.protocol("scythe"), 5), procedures, CoordinatorVerticle.ADDRESS),
            new DeploymentOptions().setInstances(1)).await(10, TimeUnit.SECONDS);
    }

    @AfterEach
    void tearDown() throws Exception {
        vertx.close().await(10, TimeUnit.SECONDS);
        fabric.close();
    }

    private TxnReply send(final Object body) throws Exception {
        return vertx.eventBus().<TxnReply>request(CoordinatorVerticle.ADDRESS, body).await(10, TimeUnit.SECONDS)
            .body();
    }

    private long balance(final long key) {
        return table.objectMemory().getLongVolatile(table.offsetOf(table.lookup(key)) + ObjectLayout.VALUE_OFFSET);
    }

    @Test
    void shouldCommitAStoredProcedureAndAnswerBadRequestsWithAnErrorThatChangesNothing() throws Exception {
        final TxnReply ok = send(new TxnRequest("deposit", new long[] {3, 50}));
        assertThat(ok.status()).isEqualTo(TxnReply.Status.COMMITTED);
        assertThat(ok.result()).isEqualTo(50);
        assertThat(ok.attempts()).isEqualTo(1);
        assertThat(ok.mode()).as("the protocol mode in its own field").isEqualTo("scythe/occ");
        assertThat(ok.commitTs()).isPositive();
        assertThat(ok.reason()).isNull();
        assertThat(balance(3)).isEqualTo(150);

        assertRejected(send(new TxnRequest("withdraw", new long[] {3, 50})), TxnReply.Rejection.UNKNOWN_PROCEDURE,
            "unknown procedure");
        assertRejected(send(new TxnRequest("deposit", new long[] {3})), TxnReply.Rejection.BAD_ARGUMENTS,
            "takes 2 arguments");
        assertRejected(send("deposit 3 50"), TxnReply.Rejection.MALFORMED, "malformed request");
        assertRejected(send(new TxnRequest("deposit", new long[] {999, 5})), TxnReply.Rejection.BAD_ARGUMENTS,
            "no key 999");
        assertThat(balance(3)).as("bad requests changed nothing").isEqualTo(150);

        assertThat(send(new TxnRequest("deposit", new long[] {3, 7})).committed()).as("still serving").isTrue();
        assertThat(balance(3)).isEqualTo(157);
    }

    private static void assertRejected(final TxnReply reply, final TxnReply.Rejection why, final String reason) {
        assertThat(reply.status()).as(reply.reason()).isEqualTo(TxnReply.Status.REJECTED);
        assertThat(reply.rejection()).isEqualTo(why);
        assertThat(reply.reason()).contains(reason);
        assertThat(reply.attempts()).isZero();
    }

    @Test
    void shouldReplyWithTheAbortReasonAndTheRealAttemptsAndAReadOnlyCommitTimestamp() throws Exception {
        final TxnReply rolledBack = send(new TxnRequest("rollBack", new long[] {2}));
        assertThat(rolledBack.status()).isEqualTo(TxnReply.Status.ABORTED);
        assertThat(rolledBack.abortReason()).isEqualTo("user");
        assertThat(rolledBack.attempts()).as("a user rollback is not retried").isEqualTo(1);
        assertThat(rolledBack.reason()).contains("the procedure rolled back");

        final TxnReply gaveUp = send(new TxnRequest("conflict", new long[] {2}));
        assertThat(gaveUp.status()).isEqualTo(TxnReply.Status.ABORTED);
        assertThat(gaveUp.abortReason()).isEqualTo("locked");
        assertThat(gaveUp.attempts()).as("every attempt up to the limit").isEqualTo(5);

        final TxnReply wrote = send(new TxnRequest("deposit", new long[] {2, 1}));
        final TxnReply read = send(new TxnRequest("balance", new long[] {2}));
        assertThat(read.committed()).isTrue();
        assertThat(read.result()).isEqualTo(101);
        assertThat(read.mode()).isEqualTo("scythe/occ");
        assertThat(read.commitTs()).as("a read-only commit has a real timestamp, after the write it read")
            .isGreaterThan(wrote.commitTs());
    }

    @Test
    void shouldReportAProcedureThatThrowsAsAnErrorWithNothingCommittedNeverAsOutcomeUnknown() throws Exception {
        final TxnReply divided = send(new TxnRequest("divide", new long[] {4, 0}));
        assertThat(divided.status()).isEqualTo(TxnReply.Status.FAILED);
        assertThat(divided.reason()).contains("nothing committed").contains("ArithmeticException")
            .doesNotContain("outcome unknown");
        final TxnReply thrown = send(new TxnRequest("throwAtOnce", new long[] {4}));
        assertThat(thrown.status()).isEqualTo(TxnReply.Status.FAILED);
        assertThat(thrown.reason()).contains("nothing committed").doesNotContain("outcome unknown");
        assertThat(balance(4)).as("nothing committed").isEqualTo(100);
        assertThat(send(new TxnRequest("divide", new long[] {4, 2})).committed()).isTrue();
        assertThat(balance(4)).as("the lock the failed attempts took was released").isEqualTo(50);
    }

    /**
     * A message as a clustered event bus delivers it: its body is decoded by the Kryo codec only when the consumer
     * reads it ({@code ClusteredMessage.body()} decodes lazily), so a malformed one fails inside the handler.
     */
    private static final class WireMessage implements io.vertx.core.eventbus.Message<Object> {
        private final byte[] wire;
        private final Promise<TxnReply> reply = Promise.promise();

        WireMessage(final byte[] wire) {
            this.wire = wire;
        }

        @Override
        public String address() {
            return CoordinatorVerticle.ADDRESS;
        }

        @Override
        public io.vertx.core.MultiMap headers() {
            return io.vertx.core.MultiMap.caseInsensitiveMultiMap();
        }

        @Override
        public Object body() {
            return KryoCodec.of(TxnRequest.class).decodeFromWire(0, io.vertx.core.buffer.Buffer.buffer(wire));
        }

        @Override
        public String replyAddress() {
            return "reply";
        }

        @Override
        public boolean isSend() {
            return true;
        }

        @Override
        public void reply(final Object message, final io.vertx.core.eventbus.DeliveryOptions options) {
            reply.complete((TxnReply) message);
        }

        @Override
        public <R> io.vertx.core.Future<io.vertx.core.eventbus.Message<R>> replyAndRequest(final Object message,
            final io.vertx.core.eventbus.DeliveryOptions options) {
            throw new UnsupportedOperationException();
        }
    }

    /**
     * Malformed, truncated and mutated event-bus messages each get an error reply at once (not silence, which a
     * client must take as "outcome unknown"), and nothing changes but what the valid ones among them did.
     */
    @Test
    void shouldAnswerEveryMalformedWireMessageAtOnceAndChangeNothing() throws Exception {
        final byte[] good = CoordinatorFuzz.wire(new TxnRequest("deposit", new long[] {5, 1}));
        final java.util.Random random = new java.util.Random(42);
        long deposited = 0;
        int errors = 0;
        for (int i = 0; i < 1500; i++) {
            final byte[] bytes = CoordinatorFuzz.message(i, random, good);
            final WireMessage message = new WireMessage(bytes);
            coordinatorVerticle.deliver(message);
            final TxnReply reply = message.reply.future().await(10, TimeUnit.SECONDS);
            if (reply.committed()) {
                deposited += reply.result(); // a mutation that is still a valid deposit to key 5
            } else {
                errors++;
                assertThat(reply.status()).isIn(TxnReply.Status.REJECTED, TxnReply.Status.FAILED);
                assertThat(reply.reason()).doesNotContain("outcome unknown");
            }
        }
        assertThat(errors).as("most mutations are malformed").isGreaterThan(1000);
        long total = 0;
        for (long k = 0; k < 16; k++) {
            total += balance(k);
        }
        assertThat(total).as("only the valid deposits among them changed anything").isEqualTo(16 * 100 + deposited);
        assertThat(send(new TxnRequest("deposit", new long[] {3, 7})).committed()).as("still serving").isTrue();
    }

    @Test
    void shouldCarryRequestsAndRepliesThroughTheKryoCodec() {
        CoordinatorVerticle.registerCodecs(vertx.eventBus());
        final KryoCodec<TxnRequest> codec = KryoCodec.of(TxnRequest.class);
        final TxnRequest back = codec.decode(codec.encode(new TxnRequest("deposit", new long[] {1, 2})));
        assertThat(back.procedure()).isEqualTo("deposit");
        assertThat(back.args()).containsExactly(1, 2);
        final KryoCodec<TxnReply> replies = KryoCodec.of(TxnReply.class);
        for (final TxnReply reply : List.of(TxnReply.committed(7, 9, 2, 11, "scythe/tocc"),
            TxnReply.aborted("user", 1, "x"), TxnReply.rejected(TxnReply.Rejection.NOT_SERVING, "y"),
            TxnReply.wrongOwner(3, "z"), TxnReply.failed("f"), TxnReply.unknown("u"))) {
            assertThat(replies.decode(replies.encode(reply))).isEqualTo(reply);
        }
    }
}
