package io.scythe.txn.selcc;

import io.scythe.bridge.BridgeVerticle;
import io.scythe.fabric.CostModel;
import io.scythe.fabric.FabricOptions;
import io.scythe.fabric.local.LocalFabric;
import io.scythe.rrpc.CnPeers;
import io.scythe.rrpc.RrpcOptions;
import io.vertx.core.Context;
import io.vertx.core.Vertx;
import io.vertx.core.VertxOptions;
import io.vertx.core.json.JsonObject;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The recovery barrier's question over real CN-to-CN messaging ({@link RecoveryBarrier#over}, {@code
 * LineCache#serveBarrier}): two compute nodes of two loops on the local fabric, cnA a survivor that never heard of
 * cnB.e1's recovery, cnB its restarted node; cnC is configured but not in the cluster (the directory does not know
 * it, the host never registered it). The survivor's loops (no line cached) acknowledge, learning the recovery from
 * the question; cnC is dropped.
 */
class SelccRecoveryBarrierTest {
    private Vertx vertx;
    private LocalFabric fabric;
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
        if (vertx != null) {
            vertx.close().await(10, TimeUnit.SECONDS);
        }
        if (fabric != null) {
            fabric.close();
        }
    }

    @Test
    void shouldPassOnceEveryLiveSurvivorLoopAcknowledgedOverItsPeers() throws Exception {
        vertx = Vertx.vertx(new VertxOptions().setEventLoopPoolSize(2));
        BridgeVerticle.deployOnEveryEventLoop(vertx, new JsonObject()).await(10, TimeUnit.SECONDS);
        fabric = new LocalFabric(new FabricOptions().costModel(CostModel.zero()));
        final List<Context> loops = BridgeVerticle.eventLoopContexts(vertx);
        final RrpcOptions options = CnPeers.defaultOptions().maxRings(8).maxReplyRings(16);
        final Set<String> live = Set.of("cnA", "cnB");
        final CnPeers.Directory directory = peer -> live.contains(peer) ? peer : null;
        a = new CnPeers(vertx, fabric.attachNow("cnA"), options, 2, directory);
        b = new CnPeers(vertx, fabric.attachNow("cnB"), options, 2, directory);
        final io.scythe.txn.spi.ComputeNodeContext survivor = io.scythe.txn.ComputeNodePeers.context(0,
            List.of("cnA", "cnB", "cnC"), a, new java.util.HashMap<>(), l -> { }, l -> { }, false);
        SelccModule.hearReleases(survivor, a);
        LineCache.serveBarrier(a);
        a.start(loops).await(10, TimeUnit.SECONDS);
        b.start(loops).await(10, TimeUnit.SECONDS);
        assertThat(SelccModule.releases(a).released("cnB.e1")).isFalse();

        final String outcome = RecoveryBarrier.await(List.of("cnA", "cnC"), 2, Map.of("cnB.e1", 1L << 48),
            RecoveryBarrier.over(b), peer -> io.vertx.core.Future.succeededFuture(peer.equals("cnC")),
            ns -> vertx.timer(Math.max(1, ns / 1_000_000)).mapEmpty(), System::nanoTime,
            TimeUnit.SECONDS.toNanos(10), why -> { }, () -> false).await(20, TimeUnit.SECONDS);

        assertThat(outcome).contains("[cnC] never registered or recovered");
        assertThat(SelccModule.releases(a).released("cnB.e1")).as("learnt from the question").isTrue();
        assertThat(SelccModule.releases(a).buriedOn("mn0", 1L << 48 | 9)).isTrue();
        assertThat(a.servedOn(0)).as("loop 0 asked").isPositive();
        assertThat(a.servedOn(1)).as("loop 1 asked").isPositive();
    }

    /**
     * A node that closed (its lease lost, shutting down) stops asking: before, its rounds went on for ever on behalf of
     * a node that is gone (issue 21 review). Its gate stays shut (the future fails, it never passes).
     */
    @Test
    void shouldStopAskingOnceTheNodeClosedItsPeerMessaging() {
        final java.util.concurrent.atomic.AtomicInteger asked = new java.util.concurrent.atomic.AtomicInteger();
        final java.util.concurrent.atomic.AtomicBoolean closed = new java.util.concurrent.atomic.AtomicBoolean();
        final io.vertx.core.Future<String> outcome = RecoveryBarrier.await(List.of("cnA"), 1,
            Map.of("cnB.e1", 1L << 48), (peer, loop, incarnation, prefix) -> {
                if (asked.incrementAndGet() == 3) {
                    closed.set(true); // closed while its third question was out
                }
                return io.vertx.core.Future.succeededFuture(false); // never acknowledged
            }, peer -> io.vertx.core.Future.succeededFuture(false), ns -> io.vertx.core.Future.succeededFuture(),
            System::nanoTime, TimeUnit.SECONDS.toNanos(10), why -> { }, closed::get);
        assertThat(outcome.failed()).isTrue();
        assertThat(outcome.cause()).hasMessageContaining("stopped").hasMessageContaining("1 acknowledgements");
        assertThat(asked.get()).isEqualTo(3);
    }
}
