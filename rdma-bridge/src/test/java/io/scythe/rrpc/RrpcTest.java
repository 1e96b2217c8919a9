package io.scythe.rrpc;

import io.scythe.bridge.BridgeVerticle;
import io.scythe.fabric.CostModel;
import io.scythe.fabric.FabricOptions;
import io.scythe.fabric.MemoryKind;
import io.scythe.fabric.MemoryRegion;
import io.scythe.fabric.Nic;
import io.scythe.fabric.local.LocalFabric;
import io.vertx.core.Context;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;
import io.vertx.core.VertxOptions;
import io.vertx.core.json.JsonObject;
import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;

import static org.assertj.core.api.Assertions.assertThat;

/** RRPC end to end on the local fabric: correctness under many concurrent callers, batching, errors, hybrid modes. */
class RrpcTest {
    static final int ECHO = 1;
    /** ECHO calls the server answered (the caller-stall test waits for its own, not for a fixed time). */
    static final java.util.concurrent.atomic.AtomicLong ECHOES_ANSWERED = new java.util.concurrent.atomic.AtomicLong();
    static final int ADD = 2;
    static final int THROW = 3;
    static final int BIG = 4;
    /** Never answers (a request the server took and then sat on, as a stalled memory node does). */
    static final int SILENT = 5;
    /** Keeps its responder unanswered until a {@link #RELEASE} call answers it with the payload it got. */
    static final int DEFER = 6;
    static final int RELEASE = 7;

    private Vertx vertx;
    private LocalFabric fabric;
    private RpcServer server;
    private RrpcClient client;
    private Context serverContext;
    private MemoryRegion blob;
    private RpcResponder deferred;
    private long deferredValue;

    /** Asked for each landed verb when set ({@link io.scythe.fabric.VerbFaultInjector}). */
    private final java.util.concurrent.atomic.AtomicReference<io.scythe.fabric.VerbFaultInjector> verbFaults =
        new java.util.concurrent.atomic.AtomicReference<>();

    /** The server's connects to fail, one each, before they go through ({@link FailingConnects}). */
    private final java.util.concurrent.atomic.AtomicInteger connectFailures =
        new java.util.concurrent.atomic.AtomicInteger();

    /** The memory node's NIC, its connects failing while {@code failures} counts down (a split still there). */
    private record FailingConnects(Nic nic, java.util.concurrent.atomic.AtomicInteger failures) implements Nic {
        @Override
        public String node() {
            return nic.node();
        }

        @Override
        public io.scythe.fabric.Fabric fabric() {
            return nic.fabric();
        }

        @Override
        public org.agrona.concurrent.NanoClock nicClock() {
            return nic.nicClock();
        }

        @Override
        public org.agrona.concurrent.NanoClock hostClock() {
            return nic.hostClock();
        }

        @Override
        public MemoryRegion register(final String name, final long length, final MemoryKind kind) {
            return nic.register(name, length, kind);
        }

        @Override
        public MemoryRegion region(final String name) {
            return nic.region(name);
        }

        @Override
        public java.util.Collection<MemoryRegion> regions() {
            return nic.regions();
        }

        @Override
        public void deregister(final MemoryRegion region) {
            nic.deregister(region);
        }

        @Override
        public io.scythe.fabric.CompletionQueue createCompletionQueue(final int capacity) {
            return nic.createCompletionQueue(capacity);
        }

        @Override
        public Future<io.scythe.fabric.QueuePair> connect(final String remoteNode,
                                                          final io.scythe.fabric.CompletionQueue cq,
                                                          final io.scythe.fabric.QpOptions options) {
            if (failures.getAndUpdate(n -> Math.max(0, n - 1)) > 0) {
                return Future.failedFuture(new io.scythe.fabric.FabricException("no route to " + remoteNode));
            }
            return nic.connect(remoteNode, cq, options);
        }

        @Override
        public void acceptor(final Nic.QpAcceptor acceptor) {
            nic.acceptor(acceptor);
        }

        @Override
        public int fence(final String peerNode) {
            return nic.fence(peerNode);
        }

        @Override
        public boolean isFenced(final String peerNode) {
            return nic.isFenced(peerNode);
        }

        @Override
        public Future<Void> fenceBarrier(final String peerNode) {
            return nic.fenceBarrier(peerNode);
        }

        @Override
        public void readmit(final String peerNode) {
            nic.readmit(peerNode);
        }

        @Override
        public java.util.Collection<io.scythe.fabric.QueuePair> queuePairs() {
            return nic.queuePairs();
        }

        @Override
        public void close() {
            nic.close();
        }
    }

    private void start(final CostModel model, final RrpcOptions options) throws Exception {
        vertx = Vertx.vertx(new VertxOptions().setEventLoopPoolSize(2));
        BridgeVerticle.deployOnEveryEventLoop(vertx, new JsonObject()).await(10, TimeUnit.SECONDS);
        fabric = new LocalFabric(new FabricOptions().costModel(model).verbFaultInjector((qp, opcode) -> {
            final io.scythe.fabric.VerbFaultInjector faults = verbFaults.get();
            return faults == null ? null : faults.afterLanding(qp, opcode);
        }));
        final Nic mn = fabric.attachNow("mn");
        final Nic cn = fabric.attachNow("cn");
        blob = mn.register("blob", 8192, MemoryKind.HOST);
        for (int i = 0; i < 8192; i += 8) {
            blob.buffer().putLong(i, i * 31L);
        }
        server = new RpcServer(vertx, new FailingConnects(mn, connectFailures), options)
            .handle(ECHO, (req, res) -> {
                res.reply(req.payload(), req.payloadOffset(), req.payloadLength());
                ECHOES_ANSWERED.incrementAndGet();
            })
            .handle(ADD, (req, res) -> {
                final UnsafeBuffer out = new UnsafeBuffer(new byte[8]);
                out.putLong(0, req.payload().getLong(req.payloadOffset()) + req.payload().getLong(
                    req.payloadOffset() + 8));
                res.reply(out);
            })
            .handle(THROW, (req, res) -> {
                throw new IllegalStateException("boom");
            })
            .handle(SILENT, (req, res) -> { })
            .handle(DEFER, (req, res) -> {
                deferred = res;
                deferredValue = req.payload().getLong(req.payloadOffset());
            })
            .handle(RELEASE, (req, res) -> {
                final UnsafeBuffer value = new UnsafeBuffer(new byte[8]);
                value.putLong(0, deferredValue);
                deferred.reply(value);
                res.reply(req.payload(), req.payloadOffset(), req.payloadLength());
            })
            .handle(BIG, (req, res) -> {
                final int length = req.payload().getInt(req.payloadOffset());
                if (req.hasZeroCopyTarget()) {
                    final UnsafeBuffer data = new UnsafeBuffer(new byte[length]);
                    data.putBytes(0, blob.buffer(), 0, length);
                    res.reply(data);
                } else {
                    res.replyDescriptor(blob.address(), blob.rkey(), length);
                }
            });
        serverContext = vertx.getOrCreateContext();
        onContext(serverContext, () -> server.start());
        client = new RrpcClient(vertx, cn, options);
    }

    @AfterEach
    void tearDown() throws Exception {
        if (vertx != null) {
            vertx.close().await(10, TimeUnit.SECONDS);
        }
        if (fabric != null) {
            fabric.close();
        }
    }

    private static <T> T onContext(final Context context, final Supplier<Future<T>> body) throws Exception {
        final Promise<T> promise = Promise.promise();
        context.runOnContext(v -> body.get().onComplete(promise));
        return promise.future().await(60, TimeUnit.SECONDS);
    }

    @Test
    void shouldAnswerEveryCallOfManyConcurrentCallersOnTwoLoopsWithoutBatching() throws Exception {
        start(CostModel.cx5(), new RrpcOptions().batching(false));
        final List<Future<long[]>> runs = new ArrayList<>();
        for (final Context loop : io.scythe.bridge.BridgeVerticle.eventLoopContexts(vertx)) {
            final Promise<long[]> done = Promise.promise();
            loop.runOnContext(v -> client.rocket("mn").onSuccess(rocket -> {
                final long[] stats = new long[3];
                final List<Future<?>> all = new ArrayList<>();
                for (int c = 0; c < 64; c++) {
                    all.add(chain(rocket, c, 200, stats));
                }
                Future.all(all).map(stats).onComplete(done);
            }).onFailure(done::fail));
            runs.add(done.future());
        }
        for (final Future<long[]> run : runs) {
            assertThat(run.await(60, TimeUnit.SECONDS)[0]).as("wrong replies").isZero();
        }
        assertThat(server.requests()).isEqualTo(2L * 64 * 200);
    }

    @Test
    void shouldAnswerEveryCallOfManyConcurrentCallersCorrectlyAndBatchThem() throws Exception {
        start(CostModel.cx5(), new RrpcOptions().ringBuckets(8));
        final int callers = 200;
        final int rounds = 20;
        final List<Context> loops = io.scythe.bridge.BridgeVerticle.eventLoopContexts(vertx); // two threads
        final List<Future<long[]>> runs = new ArrayList<>();
        for (final Context loop : loops) {
            final Promise<long[]> done = Promise.promise();
            loop.runOnContext(v -> client.rocket("mn").onSuccess(rocket -> {
                final long[] stats = new long[3];
                final List<Future<?>> all = new ArrayList<>();
                for (int c = 0; c < callers; c++) {
                    all.add(chain(rocket, c, rounds, stats));
                }
                Future.all(all).onComplete(ar -> {
                    stats[1] = rocket.buckets();
                    stats[2] = rocket.doorbells();
                    if (ar.succeeded()) {
                        done.complete(stats);
                    } else {
                        done.fail(ar.cause());
                    }
                });
            }).onFailure(done::fail));
            runs.add(done.future());
        }
        for (final Future<long[]> run : runs) {
            final long[] stats = run.await(60, TimeUnit.SECONDS);
            assertThat(stats[0]).as("wrong replies").isZero();
            assertThat(stats[1]).as("buckets < calls: message batching").isLessThan(callers * rounds / 4);
            assertThat(stats[2]).as("doorbells <= buckets: doorbell batching").isLessThanOrEqualTo(stats[1]);
        }
        assertThat(server.requests()).isEqualTo(2L * callers * rounds);
        assertThat(server.malformed()).isZero();
        assertThat(client.straws().get("mn").size()).as("two Rockets share one RPC queue pair").isEqualTo(1);
    }

    /** {@code rounds} ADD calls one after another, each checked. */
    private Future<Void> chain(final Rocket rocket, final int caller, final int rounds, final long[] stats) {
        Future<Void> f = Future.succeededFuture();
        for (int r = 0; r < rounds; r++) {
            final long a = caller * 1000L + r;
            f = f.compose(v -> {
                final UnsafeBuffer args = new UnsafeBuffer(new byte[16]);
                args.putLong(0, a);
                args.putLong(8, 7);
                return rocket.call(ADD, args).map(reply -> {
                    if (reply.payload().getLong(0) != a + 7) {
                        stats[0]++;
                    }
                    return null;
                });
            });
        }
        return f;
    }

    /**
     * A handler that keeps its responder to answer later keeps its call: the calls answered at once meanwhile get
     * their own answers, and the kept one its own (the server answers them with one responder object, so it must
     * take a new one once a handler returned without answering).
     */
    @Test
    void shouldAnswerACallKeptForLaterApartFromTheCallsAnsweredMeanwhile() throws Exception {
        start(CostModel.zero(), new RrpcOptions());
        final String outcome = onContext(vertx.getOrCreateContext(), () -> client.rocket("mn").compose(rocket -> {
            final UnsafeBuffer seven = new UnsafeBuffer(new byte[8]);
            seven.putLong(0, 7);
            final Future<RpcReply> kept = rocket.call(DEFER, seven);
            final Future<RpcReply> echo = rocket.call(ECHO, new UnsafeBuffer("hello".getBytes()));
            final Future<RpcReply> release = echo.compose(e -> rocket.call(RELEASE, new UnsafeBuffer("bye".getBytes())));
            return Future.join(kept, echo, release).transform(ar -> Future.succeededFuture(
                (kept.succeeded() ? String.valueOf(kept.result().payload().getLong(0)) : kept.cause().toString())
                    + "|" + (echo.succeeded() ? echo.result().payload().getStringWithoutLengthAscii(0, 5) : echo.cause())
                    + "|" + (release.succeeded() ? release.result().payload().getStringWithoutLengthAscii(0, 3)
                    : release.cause())));
        }));
        assertThat(outcome).isEqualTo("7|hello|bye");
    }

    /**
     * Issue 23 (rpclate): a call kept for later on a ring its client then gives up (here {@link RrpcClient#abandon},
     * as a peer that left; a failed queue pair or a client restarted under its name do the same) and opens again. The
     * server reuses its ring for the reopened one (same client and loop), whose call ids start again at 1. The kept
     * call's late answer must not reach the new ring: before, it completed the new ring's call 1 (another DEFER,
     * of 8) with 7, the answer of a call its caller had already failed, and the right answer was then dropped.
     */
    @Test
    void aLateAnswerToARingGivenUpIsNotMatchedToACallOfItsReopenedRing() throws Exception {
        start(CostModel.zero(), new RrpcOptions());
        final Context loop = vertx.getOrCreateContext();
        final UnsafeBuffer seven = new UnsafeBuffer(new byte[8]);
        seven.putLong(0, 7);
        final UnsafeBuffer eight = new UnsafeBuffer(new byte[8]);
        eight.putLong(0, 8);
        final UnsafeBuffer hello = new UnsafeBuffer("hello".getBytes());
        final java.util.concurrent.atomic.AtomicReference<Future<RpcReply>> old =
            new java.util.concurrent.atomic.AtomicReference<>();
        // Call 1 of the first ring kept by the server; the ECHO answered after it shows the server took it.
        onContext(loop, () -> client.rocket("mn").compose(rocket -> {
            old.set(rocket.call(DEFER, seven));
            return rocket.call(ECHO, hello);
        }));
        final RpcResponder kept = onContext(serverContext, () -> Future.succeededFuture(deferred));
        onContext(loop, () -> {
            client.abandon("mn", new RpcException(RpcException.DISCONNECTED, "given up by the test"));
            return Future.succeededFuture();
        });
        assertThat(old.get().failed()).as("giving the ring up failed its call").isTrue();
        // The reopened ring's call 1, kept too; again an ECHO after it shows the server took it.
        final java.util.concurrent.atomic.AtomicReference<Future<RpcReply>> reopened =
            new java.util.concurrent.atomic.AtomicReference<>();
        onContext(loop, () -> client.rocket("mn").compose(rocket -> {
            reopened.set(rocket.call(DEFER, eight));
            return rocket.call(ECHO, hello);
        }));
        final String late = onContext(serverContext, () -> {
            kept.reply(seven); // the late answer to the first ring's call 1
            return Future.succeededFuture(kept.answered() + ":" + server.staleReplies());
        });
        final String release = onContext(loop, () -> client.rocket("mn")
            .compose(rocket -> rocket.call(RELEASE, new UnsafeBuffer("bye".getBytes())))
            .map(r -> r.payload().getStringWithoutLengthAscii(0, 3)));
        assertThat(release).isEqualTo("bye");
        final long value = onContext(loop, () -> reopened.get().map(r -> r.payload().getLong(0)));
        assertThat(value).as("the reopened ring's call 1 gets its own answer").isEqualTo(8L);
        assertThat(late).as("answered, not posted").isEqualTo("true:1");
    }

    @Test
    void shouldFailUnknownAndThrowingRpcsClearlyAndKeepServing() throws Exception {
        start(CostModel.zero(), new RrpcOptions());
        final String outcome = onContext(vertx.getOrCreateContext(), () -> client.rocket("mn").compose(rocket -> {
            final Future<RpcReply> unknown = rocket.call(999, new UnsafeBuffer(new byte[4]));
            final Future<RpcReply> thrown = rocket.call(THROW, new UnsafeBuffer(new byte[4]));
            final Future<RpcReply> tooBig = rocket.call(ECHO, new UnsafeBuffer(new byte[4096]));
            final UnsafeBuffer hello = new UnsafeBuffer("hello".getBytes());
            final Future<RpcReply> echo = rocket.call(ECHO, hello);
            return Future.join(unknown, thrown, tooBig, echo).transform(ar ->
                Future.succeededFuture(((RpcException) unknown.cause()).code() + "|"
                    + ((RpcException) thrown.cause()).code() + ":" + thrown.cause().getMessage().contains("boom")
                    + "|" + ((RpcException) tooBig.cause()).code() + "|"
                    + echo.result().payload().getStringWithoutLengthAscii(0, 5)));
        }));
        assertThat(outcome).isEqualTo(RpcException.UNKNOWN_RPC + "|" + RpcException.HANDLER_FAILED + ":true|"
            + RpcException.TOO_LARGE + "|hello");
    }

    /**
     * The caller's loop does not run for longer than the call timeout (starved on a loaded host, as the node logs of a
     * chaos run showed: loops 3 to 6 s late) while the server, on another loop, answers at once: the reply is in the
     * ring when the loop polls again, so the call succeeds; it is not failed as timed out before its reply is read.
     * Without a reply (a server that sits on it), a call still fails with {@link RpcException#TIMED_OUT}.
     */
    @Test
    void shouldReadARepliedCallBeforeJudgingItsDeadlineAfterTheCallersLoopStalled() throws Exception {
        final long timeoutMs = 200;
        start(CostModel.zero(), new RrpcOptions().callTimeoutNs(TimeUnit.MILLISECONDS.toNanos(timeoutMs)));
        final Context caller = vertx.getOrCreateContext();
        assertThat(caller).isNotSameAs(serverContext);
        final long answeredBefore = ECHOES_ANSWERED.get();
        final String outcome = onContext(caller, () -> client.rocket("mn").compose(rocket -> {
            final UnsafeBuffer hello = new UnsafeBuffer("hello".getBytes());
            final Future<RpcReply> echo = rocket.call(ECHO, hello);
            // Queued after the call's flush: the request is out, then this loop stalls past the call's deadline,
            // until the server answered and 3 deadlines more passed for its reply to land (a fixed 600 ms failed on
            // a loaded machine when the server's loop had not answered yet: the call rightly timed out).
            caller.runOnContext(v -> {
                final long bound = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
                while (ECHOES_ANSWERED.get() == answeredBefore && System.nanoTime() < bound) {
                    Thread.onSpinWait();
                }
                final long until = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(3 * timeoutMs);
                while (System.nanoTime() < until) {
                    Thread.onSpinWait();
                }
            });
            return echo.transform(ar -> Future.succeededFuture(ar.succeeded()
                ? ar.result().payload().getStringWithoutLengthAscii(0, 5) : ar.cause().toString()));
        }));
        assertThat(outcome).isEqualTo("hello");
        final Throwable unanswered = onContext(caller, () -> client.rocket("mn").compose(rocket ->
            rocket.call(SILENT, new UnsafeBuffer("again".getBytes())).transform(ar ->
                Future.succeededFuture(ar.cause()))));
        assertThat(unanswered).isInstanceOf(RpcException.class);
        assertThat(((RpcException) unanswered).code()).isEqualTo(RpcException.TIMED_OUT);
    }

    /**
     * Issue 20 (rrpcheal): a call timed out while the server answered a later call of the same ring was taken by a
     * live server ({@link RpcException#taken()}: the ring is served in order), which Aurogon's removal wait uses to
     * judge it at once; a call no later one was answered after (only earlier ones) says nothing either way.
     */
    @Test
    void shouldSayATimedOutCallWasTakenOnlyWhenTheServerAnsweredALaterCall() throws Exception {
        // 1 s, not 100 ms: the ECHO sent with the held call must be answered within it on a loaded machine too.
        start(CostModel.zero(), new RrpcOptions().callTimeoutNs(TimeUnit.SECONDS.toNanos(1)));
        final String outcome = onContext(vertx.getOrCreateContext(), () -> client.rocket("mn").compose(rocket -> {
            final UnsafeBuffer hello = new UnsafeBuffer("hello".getBytes());
            return rocket.call(ECHO, hello).compose(before -> rocket.call(SILENT, hello).transform(alone -> {
                final Future<RpcReply> held = rocket.call(SILENT, hello);
                final Future<RpcReply> later = rocket.call(ECHO, hello);
                return Future.join(held, later).transform(both -> Future.succeededFuture(
                    describe(alone.cause()) + "|" + describe(held.cause()) + "|" + later.succeeded()));
            }));
        }));
        assertThat(outcome).isEqualTo(RpcException.TIMED_OUT + ":false|" + RpcException.TIMED_OUT + ":true|true");
    }

    private static String describe(final Throwable failure) {
        return failure instanceof RpcException r ? r.code() + ":" + r.taken() : String.valueOf(failure);
    }

    @Test
    void shouldServeLargeRepliesOneSidedAndZeroCopy() throws Exception {
        start(CostModel.cx5(), new RrpcOptions());
        final MemoryRegion target = client.nic().register("target", 8192, MemoryKind.HOST);
        final long[] checks = onContext(vertx.getOrCreateContext(), () -> client.rocket("mn").compose(rocket -> {
            final UnsafeBuffer ask = new UnsafeBuffer(new byte[4]);
            ask.putInt(0, 4096);
            final UnsafeBuffer dst = new UnsafeBuffer(new byte[4096]);
            final Future<Long> descriptor = rocket.call(BIG, ask).compose(reply -> {
                assertThat(reply.mode()).isEqualTo(RpcReply.Mode.DESCRIPTOR);
                return rocket.fetch(reply, dst, 0).map(v -> dst.getLong(4088));
            });
            final Future<Long> zeroCopy = rocket.callZeroCopy(BIG, ask, 0, 4, target, 1024, 7168).map(reply -> {
                assertThat(reply.mode()).isEqualTo(RpcReply.Mode.ZERO_COPY);
                assertThat(reply.length()).isEqualTo(4096);
                return target.buffer().getLong(1024 + 4088);
            });
            return Future.all(descriptor, zeroCopy).map(v -> new long[] {descriptor.result(), zeroCopy.result()});
        }));
        assertThat(checks[0]).isEqualTo(4088 * 31L);
        assertThat(checks[1]).isEqualTo(4088 * 31L);
    }

    @Test
    void shouldQueueCallsWhenTheRingIsFullAndRefuseThemPastTheBacklog() throws Exception {
        start(CostModel.cx5(), new RrpcOptions().ringBuckets(2).maxBacklog(50));
        final int[] outcome = onContext(vertx.getOrCreateContext(), () -> client.rocket("mn").compose(rocket -> {
            final List<Future<RpcReply>> calls = new ArrayList<>();
            final UnsafeBuffer big = new UnsafeBuffer(new byte[400]); // one call per bucket
            for (int i = 0; i < 100; i++) {
                calls.add(rocket.call(ECHO, big));
            }
            return Future.join(new ArrayList<>(calls)).transform(ar -> {
                int ok = 0;
                int refused = 0;
                for (final Future<RpcReply> c : calls) {
                    if (c.succeeded()) {
                        ok++;
                    } else if (((RpcException) c.cause()).code() == RpcException.BACK_PRESSURE) {
                        refused++;
                    }
                }
                return Future.succeededFuture(new int[] {ok, refused});
            });
        }));
        assertThat(outcome[0] + outcome[1]).isEqualTo(100);
        assertThat(outcome[1]).isPositive();
        assertThat(outcome[0]).isGreaterThanOrEqualTo(50);
    }

    @Test
    void shouldDropATornOrMalformedBucketWithoutCorruptingItsNeighbours() throws Exception {
        start(CostModel.zero(), new RrpcOptions());
        final String first = onContext(vertx.getOrCreateContext(), () -> client.rocket("mn").compose(rocket ->
            rocket.call(ECHO, new UnsafeBuffer("one".getBytes())).map(r -> r.payload().getStringWithoutLengthAscii(
                0, 3))));
        assertThat(first).isEqualTo("one");
        // A buggy peer WRITEs a bucket at the ring's next position whose label claims more than a bucket holds.
        final MemoryRegion inbox = fabric.nic("mn").region("rrpc.inbox");
        final Nic evil = fabric.attachNow("evil");
        final io.scythe.fabric.CompletionQueue cq = evil.createCompletionQueue(16);
        final io.scythe.fabric.QueuePair qp = evil.connect("mn", cq, new io.scythe.fabric.QpOptions()).result();
        final UnsafeBuffer forged = new UnsafeBuffer(new byte[4]);
        forged.putInt(0, BucketLayout.label(0, BucketLayout.LENGTH_MASK));
        qp.post(new io.scythe.fabric.WorkRequest().write(inbox.address() + BucketLayout.DEFAULT_BUCKET_BYTES,
            inbox.rkey(), forged, 0, 4));
        final long deadline = System.nanoTime() + 5_000_000_000L;
        while (server.malformed() == 0 && System.nanoTime() < deadline) {
            cq.poll(System.nanoTime(), (q, id, op, st, len) -> { }, 16);
            Thread.sleep(1);
        }
        assertThat(server.malformed()).isEqualTo(1);
        final String second = onContext(vertx.getOrCreateContext(), () -> client.rocket("mn").compose(rocket ->
            rocket.call(ECHO, new UnsafeBuffer("two".getBytes())).map(r -> r.payload().getStringWithoutLengthAscii(
                0, 3))));
        assertThat(second).isEqualTo("two");
        assertThat(server.malformed()).isEqualTo(1);
    }

    /**
     * Two loops' Rockets to one server share a queue pair, owned (its completions polled) by the loop that opened it
     * first. A call from the other loop, made while that loop's bridge is quiet, must still make its bridge poll the
     * reply ring: a recovery's first RPC on a coordinator loop with no transaction running waited forever for a
     * reply that had arrived.
     */
    @Test
    void shouldAnswerACallFromAQuietLoopWhoseQueuePairAnotherLoopOwns() throws Exception {
        start(CostModel.zero(), new RrpcOptions());
        // The quiet loop is the one without the server, whose polling never stops while it has clients.
        final List<Context> loops = new ArrayList<>(io.scythe.bridge.BridgeVerticle.eventLoopContexts(vertx));
        final Thread serverThread = onContext(serverContext, () -> Future.succeededFuture(Thread.currentThread()));
        final Context owner = onContext(loops.get(0), () -> Future.succeededFuture(Thread.currentThread()))
            == serverThread ? loops.get(0) : loops.get(1);
        loops.remove(owner);
        final Context quiet = loops.get(0);
        final UnsafeBuffer hello = new UnsafeBuffer(new byte[8]);
        hello.putLong(0, 7);
        // The owner opens the shared queue pair; the quiet loop opens its Rocket on it.
        onContext(owner, () -> client.rocket("mn").compose(r -> r.call(ECHO, hello)));
        onContext(quiet, () -> client.rocket("mn").compose(r -> r.call(ECHO, hello)));
        assertThat(client.straws("mn").size()).as("one queue pair serves both loops").isEqualTo(1);
        Thread.sleep(200); // nothing outstanding: the quiet loop's bridge stops polling
        final Promise<Long> echoed = Promise.promise();
        quiet.runOnContext(v -> client.rocket("mn").compose(r -> r.call(ECHO, hello))
            .map(reply -> reply.payload().getLong(0)).onComplete(echoed));
        assertThat(echoed.future().await(10, TimeUnit.SECONDS)).isEqualTo(7);
    }

    @Test
    void shouldTakeAtLeastTwoOneWayLatenciesPerCallOnTheModelledFabric() throws Exception {
        start(CostModel.cx5(), new RrpcOptions());
        final long elapsed = onContext(vertx.getOrCreateContext(), () -> client.rocket("mn").compose(rocket -> {
            final long start = System.nanoTime();
            return rocket.call(ECHO, new UnsafeBuffer(new byte[8])).map(r -> System.nanoTime() - start);
        }));
        assertThat(elapsed).isGreaterThanOrEqualTo(2 * CostModel.DEFAULT_ONE_WAY_LATENCY_NS);
    }

    @Test
    void shouldReachAServerThatCameUpAfterMoreFailedOpensThanThereAreReplyRings() throws Exception {
        start(CostModel.zero(), new RrpcOptions());
        final Context loop = vertx.getOrCreateContext();
        // A dead server probed again and again (a TSO group retrying a killed proxy): every open fails.
        for (int i = 0; i < 2 * RrpcOptions.DEFAULT_MAX_REPLY_RINGS; i++) {
            final String outcome = onContext(loop, () -> client.rocket("later").transform(ar -> Future.succeededFuture(
                ar.succeeded() ? "opened" : ar.cause().getMessage())));
            assertThat(outcome).doesNotContain("no free reply ring").isNotEqualTo("opened");
        }
        // The server comes up: the next open gets a ring (those of failed opens were given back) and calls work.
        final RpcServer later = new RpcServer(vertx, fabric.attachNow("later"), new RrpcOptions())
            .handle(ECHO, (req, res) -> {
                res.reply(req.payload(), req.payloadOffset(), req.payloadLength());
                ECHOES_ANSWERED.incrementAndGet();
            });
        onContext(serverContext, later::start);
        final UnsafeBuffer hello = new UnsafeBuffer(new byte[8]);
        hello.putLong(0, 42);
        final long echoed = onContext(loop, () -> client.rocket("later").compose(r -> r.call(ECHO, hello))
            .map(reply -> reply.payload().getLong(0)));
        assertThat(echoed).isEqualTo(42);
    }

    /**
     * A reply WRITE that landed but reported failure (its acknowledgements lost: the server's queue pair to the client
     * moves to ERROR, the client's own queue pair still works). Before, the server closed the client's rings and every
     * later call timed out; now it connects again and serves on.
     */
    @Test
    void shouldServeOnAfterAReplyWriteFailedWhileTheClientsQueuePairWorks() throws Exception {
        start(CostModel.zero(), new RrpcOptions().callTimeoutNs(5_000_000_000L)); // every echo must succeed
        final java.util.concurrent.atomic.AtomicInteger failed = new java.util.concurrent.atomic.AtomicInteger();
        verbFaults.set((qp, opcode) -> qp.localNode().equals("mn") && opcode == io.scythe.fabric.Opcode.WRITE
            && failed.getAndIncrement() == 0 ? io.scythe.fabric.WcStatus.TRANSPORT_RETRY_EXCEEDED : null);
        assertThat(fiveEchoes()).containsExactly("100", "101", "102", "103", "104");
        assertThat(failed.get()).as("the fault fired").isGreaterThan(1);
        assertThat(server.resumedRings()).isEqualTo(1);
    }

    /**
     * Out of credit, a handler's zero-copy reply goes to the backlog while its zero-copy WRITE is posted at once; the
     * client then acknowledges every bucket sealed so far and the backlogged reply is sealed. Should the zero-copy
     * WRITE fail, that ring must not resume (its data is not kept for a rewrite: the rewritten bucket would point the
     * client at memory never written). Fails before (review of aurofix, finding 2): only the buckets sealed when the
     * WRITE was posted were covered, so the resume went ahead.
     */
    @Test
    void aZeroCopyReplyBackloggedOutOfCreditKeepsItsRingFromResuming() throws Exception {
        start(CostModel.zero(), new RrpcOptions());
        final int buckets = server.options().ringBuckets();
        final RpcServer.ServerRing ring = server.new ServerRing("cn", 0);
        final UnsafeBuffer reply = new UnsafeBuffer(new byte[8]);
        for (int i = 0; i < buckets; i++) {
            ring.append((short) 0, i, reply, 0, 8);
            ring.seal();
        }
        assertThat(ring.creditAvailable()).as("out of credit: the client acknowledged nothing yet").isFalse();
        ring.append((short) 0, buckets, reply, 0, 8); // the zero-copy call's reply
        assertThat(ring.replyBacklog).hasSize(1);
        ring.zeroCopyPosted(); // its zero-copy WRITE posted, the reply still backlogged
        ring.ackFromClient(buckets);
        assertThat(ring.zeroCopyUnacknowledged()).as("its reply not even sealed").isTrue();
        ring.drainBacklog();
        ring.seal();
        assertThat(ring.zeroCopyUnacknowledged()).as("sealed, not acknowledged").isTrue();
        ring.ackFromClient(buckets + 1);
        assertThat(ring.zeroCopyUnacknowledged()).as("the client has it").isFalse();
        ring.zeroCopyPosted(); // a later flush's zero-copy WRITE with nothing unsealed: the bound never goes back
        assertThat(ring.zeroCopyUntil).isEqualTo(buckets + 1);
    }

    /**
     * A reply WRITE fails and the server's reconnects to the client fail twice more (the split that failed the WRITE
     * still there; the client's own queue pair works, so it never opens its ring again): the server tries again,
     * backing off, and serves on once a connect goes through. Fails before (review of aurofix, finding 3): the first
     * failed connect closed the ring for good and every later call timed out.
     */
    @Test
    void shouldRetryAFailedReconnectAndServeOnOnceItConnects() throws Exception {
        start(CostModel.zero(), new RrpcOptions().callTimeoutNs(5_000_000_000L)); // every echo must succeed
        final java.util.concurrent.atomic.AtomicInteger failed = new java.util.concurrent.atomic.AtomicInteger();
        verbFaults.set((qp, opcode) -> {
            if (qp.localNode().equals("mn") && opcode == io.scythe.fabric.Opcode.WRITE
                && failed.getAndIncrement() == 0) {
                connectFailures.set(2);
                return io.scythe.fabric.WcStatus.TRANSPORT_RETRY_EXCEEDED;
            }
            return null;
        });
        assertThat(fiveEchoes()).containsExactly("100", "101", "102", "103", "104");
        assertThat(connectFailures.get()).as("both failed connects used").isZero();
        assertThat(onContext(serverContext, () -> Future.succeededFuture(server.reconnects())))
            .as("the failed two and the one that went through").isEqualTo(3L);
        assertThat(server.resumedRings()).isEqualTo(1);
    }

    /**
     * Five ECHO calls one after another from one loop (100 to 104): each call's echoed value, or its failure's
     * message.
     */
    private List<String> fiveEchoes() throws Exception {
        final Context loop = vertx.getOrCreateContext();
        final List<String> outcomes = new ArrayList<>();
        for (long i = 0; i < 5; i++) {
            final UnsafeBuffer hello = new UnsafeBuffer(new byte[8]);
            hello.putLong(0, 100 + i);
            outcomes.add(onContext(loop, () -> client.rocket("mn").compose(r -> r.call(ECHO, hello))
                .transform(ar -> Future.succeededFuture(ar.succeeded()
                    ? String.valueOf(ar.result().payload().getLong(0)) : ar.cause().getMessage()))));
        }
        return outcomes;
    }
}
