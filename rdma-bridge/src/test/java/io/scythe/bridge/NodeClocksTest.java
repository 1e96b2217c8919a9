package io.scythe.bridge;

import io.scythe.fabric.ClockDeviation;
import io.scythe.fabric.ClockOptions;
import io.scythe.fabric.CostModel;
import io.scythe.fabric.FabricOptions;
import io.scythe.fabric.Nic;
import io.scythe.fabric.local.LocalFabric;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.VertxOptions;
import io.vertx.core.json.JsonObject;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

/** {@link NodeClocks} on real event loops over the local fabric: clocks of one's own node and a peer's NIC clock. */
class NodeClocksTest {
    private static final long MN_NIC_OFFSET_NS = 40_000;
    private static final long CN_NIC_OFFSET_NS = -10_000;
    private static final long CN_HOST_OFFSET_NS = 3_000_000;
    private static Vertx vertx;
    private static LocalFabric fabric;
    private static Nic cn;

    @BeforeAll
    static void setUp() throws Exception {
        vertx = Vertx.vertx(new VertxOptions().setEventLoopPoolSize(1));
        fabric = new LocalFabric(new FabricOptions().costModel(CostModel.cx5()).clocks(new ClockOptions()
            .nodeNic("mn", new ClockDeviation(MN_NIC_OFFSET_NS, 0))
            .nodeNic("cn", new ClockDeviation(CN_NIC_OFFSET_NS, 0))
            .nodeHost("cn", new ClockDeviation(CN_HOST_OFFSET_NS, 0))));
        cn = fabric.attachNow("cn");
        fabric.attachNow("mn");
        BridgeVerticle.deployOnEveryEventLoop(vertx, new JsonObject()).await(10, TimeUnit.SECONDS);
    }

    @AfterAll
    static void tearDown() throws Exception {
        vertx.close().await(10, TimeUnit.SECONDS);
        fabric.close();
    }

    private static <T> T onLoop(final Supplier<Future<T>> body) throws Exception {
        return OnLoop.run(vertx, context -> body.get());
    }

    @Test
    void shouldEstimateAPeersNicOffsetWithinHalfTheReadsRoundTrip() throws Exception {
        final List<NicClockReading> readings = onLoop(() -> {
            final NodeClocks clocks = NodeClocks.onLoop(cn);
            final int queuePairsBefore = cn.queuePairs().size();
            final List<NicClockReading> taken = new ArrayList<>();
            Future<Void> chain = Future.succeededFuture();
            for (int i = 0; i < 5; i++) {
                chain = chain.compose(v -> clocks.readRemoteNic("mn").map(reading -> {
                    taken.add(reading);
                    return null;
                }));
            }
            return chain.map(v -> {
                assertThat(cn.queuePairs()).as("one channel per peer, reused").hasSize(queuePairsBefore + 1);
                return taken;
            });
        });
        for (final NicClockReading reading : readings) {
            assertThat(reading.node()).isEqualTo("mn");
            assertThat(reading.roundTripNs()).isGreaterThanOrEqualTo(2 * CostModel.DEFAULT_ONE_WAY_LATENCY_NS);
            assertThat(reading.offsetNs()).isCloseTo(MN_NIC_OFFSET_NS - CN_NIC_OFFSET_NS,
                within(reading.roundTripNs() / 2));
        }
        for (final NicClockReading reading : readings) {
            // In true time, mn read its clock one modelled response leg (8 bytes back over the wire) before cn's
            // completion: stamped at its modelled time, however late the loop polled it.
            final long responseLegNs = (reading.completedNs() - CN_NIC_OFFSET_NS)
                - (reading.remoteNs() - MN_NIC_OFFSET_NS);
            assertThat(responseLegNs).isBetween(CostModel.DEFAULT_ONE_WAY_LATENCY_NS,
                CostModel.DEFAULT_ONE_WAY_LATENCY_NS + 100);
        }
        assertThat(readings.get(1).sentNs()).isGreaterThan(readings.get(0).completedNs());
    }

    @Test
    void shouldReadTheLoopsOwnNodesHostAndNicClocks() throws Exception {
        final long[] read = onLoop(() -> {
            final NodeClocks clocks = NodeClocks.onLoop(cn);
            final long trueBefore = System.nanoTime();
            final long host = clocks.hostNs();
            final long nic = clocks.nicNs();
            return Future.succeededFuture(new long[] {trueBefore, host, nic, System.nanoTime()});
        });
        assertThat(read[1] - CN_HOST_OFFSET_NS).isBetween(read[0], read[3]);
        assertThat(read[2] - CN_NIC_OFFSET_NS).isBetween(read[0], read[3]);
    }
}
