package io.scythe.sim;

import io.scythe.bench.workload.SmallBankSpec;
import io.scythe.bridge.Bridge;
import io.scythe.rrpc.CnPeers;
import io.scythe.rrpc.RpcException;
import io.scythe.rrpc.RrpcOptions;
import io.vertx.core.Future;
import io.vertx.core.json.JsonObject;
import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * CN-to-CN messaging in the simulator: every simulated CN loop serves its peers and polls its rings as a memory
 * node's core does; calls go loop i to loop i, their bounds run in virtual time, and a run is the same bit for bit.
 */
class CnPeersSimTest extends SimVertxTest {
    /** Answers the index of the loop that served it and the u64 it was sent. */
    static final int WHO = 0x6001;
    static final long BOUND_NS = 30_000;

    /** What the clients saw, in virtual-time order. */
    private final List<long[]> timeouts = new ArrayList<>();

    private Simulation simulation(final long seed, final Faults faults, final boolean callTheCrashed) {
        final SimOptions options = new SimOptions().protocol("ford-occ").computeNodes(3).loopsPerComputeNode(2)
            .clientsPerComputeNode(4).memoryNodes(1).durationNs(200_000).seed(seed).faults(faults);
        final Simulation sim = new Simulation(options, new SmallBankSpec(100, 0.99, "scythe"));
        return sim.peers(CnPeers.defaultOptions().callTimeoutNs(BOUND_NS), peers -> peers.handle(WHO,
            (request, responder) -> {
                final UnsafeBuffer out = new UnsafeBuffer(new byte[12]);
                out.putInt(0, peers.loopIndex());
                out.putLong(4, request.payload().getLong(request.payloadOffset()));
                responder.reply(out);
            })).operation((runtime, random) -> {
                final CnPeers here = sim.peersHere();
                final int me = Integer.parseInt(here.node().substring(2));
                final int target = callTheCrashed && me != 2 ? 2 : (me + 1 + random.nextInt(2)) % 3;
                final long sent = random.nextLong();
                final UnsafeBuffer payload = new UnsafeBuffer(new byte[8]);
                payload.putLong(0, sent);
                final long startNs = Bridge.current().clock().nanoTime();
                return here.call("cn" + target, WHO, payload).transform(ar -> {
                    final long elapsedNs = Bridge.current().clock().nanoTime() - startNs;
                    if (ar.failed() && ar.cause() instanceof RpcException e && e.code() == RpcException.TIMED_OUT) {
                        timeouts.add(new long[] {startNs, elapsedNs});
                        return Future.succeededFuture(elapsedNs);
                    }
                    if (ar.failed()) {
                        return Future.failedFuture(ar.cause());
                    }
                    final int loop = ar.result().payload().getInt(0);
                    final long echoed = ar.result().payload().getLong(4);
                    return loop == here.loopIndex() && echoed == sent ? Future.succeededFuture(elapsedNs)
                        : Future.failedFuture(new AssertionError("loop " + here.loopIndex() + " of " + here.node()
                        + " got loop " + loop + ", " + echoed + " for " + sent));
                });
            });
    }

    @Test
    void shouldCallPairedLoopsOfOtherComputeNodesTheSameWayEveryRun() throws Exception {
        final Simulation first = simulation(5, new Faults(), false);
        final SimResult a = first.run(vertx);
        final SimResult b = simulation(5, new Faults(), false).run(vertx);
        final JsonObject run = a.run().toJson();
        assertThat(run.getJsonObject("sim").getJsonArray("violations")).isEmpty();
        assertThat(run.getLong("committed")).as("calls answered in the measured window").isGreaterThan(100);
        assertThat(a.historyHash()).isEqualTo(b.historyHash());
        assertThat(run.getJsonObject("sim").getLong("events"))
            .isEqualTo(b.run().toJson().getJsonObject("sim").getLong("events"));
        assertThat(run.getJsonObject("latency_us").encode()).isEqualTo(b.run().toJson().getJsonObject("latency_us")
            .encode());
        long served = 0;
        for (int cn = 0; cn < 3; cn++) {
            served += first.peersOf(cn).served();
        }
        assertThat(served).as("calls served").isGreaterThanOrEqualTo(run.getLong("committed"));
        assertThat(timeouts).isEmpty();
    }

    @Test
    void shouldFailCallsToACrashedPeerWhenTheirBoundPassesInVirtualTime() throws Exception {
        final SimResult r = simulation(9, new Faults().crash(2, 50_000), true).run(vertx);
        final JsonObject sim = r.run().toJson().getJsonObject("sim");
        assertThat(sim.getJsonArray("violations")).isEmpty();
        assertThat(sim.getLong("errors")).isZero();
        assertThat(timeouts).as("calls to cn2 after it crashed").hasSizeGreaterThan(10);
        for (final long[] t : timeouts) {
            // At the bound, plus at most a duty cycle or two of the caller's loop.
            assertThat(t[1]).isBetween(BOUND_NS, BOUND_NS + 2_000);
        }
        final int seen = timeouts.size();
        timeouts.clear();
        simulation(9, new Faults().crash(2, 50_000), true).run(vertx);
        assertThat(timeouts).as("the same timeouts again").hasSize(seen);
    }
}
