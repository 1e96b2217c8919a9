package io.scythe.rrpc;

import io.scythe.bridge.Bridge;
import io.scythe.bridge.BridgeVerticle;
import io.scythe.fabric.CostModel;
import io.scythe.fabric.Fabric;
import io.scythe.fabric.FabricOptions;
import io.scythe.fabric.Nic;
import io.scythe.fabric.shm.ShmFabric;
import io.scythe.fabric.tcp.TcpFabric;
import io.vertx.core.Context;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.VertxOptions;
import io.vertx.core.json.JsonObject;
import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.nio.file.Files;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * CN-to-CN messaging on the shm and tcp providers (two compute nodes of one JVM, over mapped files or loopback
 * sockets): paired calls both ways and a WRITE into the peer's buffer that the peer reads back. Timeouts are the
 * providers' no more than the local one's (the Rocket's deadlines), and a first connection on tcp may take a second
 * (the resolver starts): the bound is generous and {@link CnPeersTest} checks timeouts.
 */
class CnPeersProvidersTest {
    static final int WHO = 0x6001;

    private Vertx vertx;
    private Fabric fabric;
    private FabricOptions fabricOptions;
    private CnPeers a;
    private CnPeers b;

    @AfterEach
    void tearDown() throws Exception {
        if (a != null) {
            a.close().await(10, TimeUnit.SECONDS);
        }
        if (b != null) {
            b.close().await(10, TimeUnit.SECONDS);
        }
        if (fabric != null) {
            fabric.close();
        }
        if (vertx != null) {
            vertx.close().await(10, TimeUnit.SECONDS);
        }
        if (fabricOptions != null && ShmFabric.NAME.equals(fabricOptions.provider())) {
            ShmFabric.removeClusterFiles(fabricOptions.shmDirectory(), fabricOptions.cluster());
            assertThat(Files.exists(ShmFabric.clusterDirectory(fabricOptions.shmDirectory(), fabricOptions.cluster())))
                .as("files left in " + fabricOptions.shmDirectory()).isFalse();
        }
    }

    @ParameterizedTest
    @ValueSource(strings = {ShmFabric.NAME, TcpFabric.NAME})
    void shouldCallPairedLoopsAndWriteIntoThePeer(final String provider) throws Exception {
        vertx = Vertx.vertx(new VertxOptions().setEventLoopPoolSize(2));
        BridgeVerticle.deployOnEveryEventLoop(vertx, new JsonObject()).await(10, TimeUnit.SECONDS);
        fabricOptions = new FabricOptions().provider(provider).cluster("peers-" + ProcessHandle.current().pid())
            .costModel(CostModel.zero()).address("cnA", "127.0.0.1:0").address("cnB", "127.0.0.1:0");
        fabric = Fabric.open(vertx, fabricOptions);
        final Nic nicA = fabric.attach("cnA").await(10, TimeUnit.SECONDS);
        final Nic nicB = fabric.attach("cnB").await(10, TimeUnit.SECONDS);
        final List<Context> loops = BridgeVerticle.eventLoopContexts(vertx);
        final RrpcOptions options = CnPeers.defaultOptions().callTimeoutNs(TimeUnit.SECONDS.toNanos(10))
            .maxRings(4).maxReplyRings(8);
        a = new CnPeers(vertx, nicA, options, 2, CnPeers.Directory.IDENTITY);
        b = new CnPeers(vertx, nicB, options, 2, CnPeers.Directory.IDENTITY);
        for (final CnPeers peers : List.of(a, b)) {
            peers.handle(WHO, (request, responder) -> {
                final UnsafeBuffer out = new UnsafeBuffer(new byte[4]);
                out.putInt(0, peers.loopIndex());
                responder.reply(out);
            });
            peers.start(loops).await(10, TimeUnit.SECONDS);
        }
        for (int loop = 0; loop < 2; loop++) {
            final int mine = loop;
            final int[] who = a.onLoop(loop, () -> {
                final Future<RpcReply> paired = a.call("cnB", WHO, new UnsafeBuffer(new byte[8]));
                final Future<RpcReply> named = a.call("cnB", 1 - mine, WHO, new UnsafeBuffer(new byte[8]), 0, 8);
                return Future.all(paired, named).map(v -> new int[] {paired.result().payload().getInt(0),
                    named.result().payload().getInt(0)});
            }).await(30, TimeUnit.SECONDS);
            assertThat(who).as(provider + " loop " + loop).containsExactly(mine, 1 - mine);
            // And back: B's loop calls A's.
            assertThat(b.onLoop(loop, () -> b.ping("cnA", CnPeers.PAIRED)).await(30, TimeUnit.SECONDS))
                .isEqualTo(mine);
        }
        final JsonObject probe = a.onLoop(1, () -> a.probe("cnB")).await(30, TimeUnit.SECONDS);
        assertThat(probe.getBoolean("readBack")).as(provider + " WRITE read back by the peer: " + probe).isTrue();
        assertThat(b.published(CnPeers.PROBE_REGION).buffer().getLongVolatile(8)).isNotZero(); // loop 1's slot
        if (provider.equals(ShmFabric.NAME)) {
            // No peer WRITE wakes a loop on shm: its servers poll, but once idle only every idlePollNs, not in a spin.
            final long before = a.onLoop(0, () -> Future.succeededFuture(Bridge.current().polls()))
                .await(10, TimeUnit.SECONDS);
            Thread.sleep(500);
            final long polls = a.onLoop(0, () -> Future.succeededFuture(Bridge.current().polls()))
                .await(10, TimeUnit.SECONDS) - before;
            assertThat(polls).as("polls of an idle loop in 500 ms (200 us apart at most 2,500)").isLessThan(2_600);
        }
    }
}
