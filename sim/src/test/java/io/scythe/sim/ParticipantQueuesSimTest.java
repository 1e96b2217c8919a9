package io.scythe.sim;

import io.scythe.bench.workload.SmallBankSpec;
import io.scythe.bridge.Bridge;
import io.scythe.txn.TxnRuntime;
import io.vertx.core.Future;
import io.vertx.core.json.JsonObject;
import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Co-located servers' participant queues ({@code --colocate}, {@link QueueCores}): each loop of a server polls its
 * own queue on a core of its own, so a request from one coordinator loop is served at once while another loop's
 * queue on the same server holds a backlog (one first-come queue for the server would make it wait behind it).
 */
class ParticipantQueuesSimTest extends SimVertxTest {
    /** No handler serves it: each call is still a request the participant takes (and answers with an error). */
    private static final int NOBODY = 0x7ff0;
    private static final int BURST = 40;
    private static final long REQUEST_NS = 2_000;

    @Test
    void shouldServeOneLoopsQueueWhileAnotherLoopsQueueOfTheSameServerIsBacklogged() throws Exception {
        final SimOptions options = new SimOptions().protocol("ford-occ").computeNodes(1).memoryNodes(1)
            .loopsPerComputeNode(2).clientsPerComputeNode(2).colocate(true).durationNs(400_000).seed(1)
            .cpu(SimOptions.DEFAULT_CN_POLL_NS, SimOptions.DEFAULT_CN_WORK_NS, SimOptions.DEFAULT_MN_POLL_NS,
                REQUEST_NS);
        final Simulation sim = new Simulation(options, new SmallBankSpec(100, 0.99, "scythe"));
        // The first loop to call sends bursts (each a backlog of BURST x 2 us on its queue); the other one call at a
        // time, whose latencies are kept.
        final Map<TxnRuntime, Boolean> bursting = new IdentityHashMap<>();
        final List<Long> single = new ArrayList<>();
        final List<Long> bursts = new ArrayList<>();
        sim.operation((runtime, random) -> {
            final boolean burst = bursting.computeIfAbsent(runtime, r -> bursting.isEmpty());
            final long startNs = Bridge.current().clock().nanoTime();
            return runtime.rocket("mn0").compose(rocket -> {
                final List<Future<?>> calls = new ArrayList<>();
                for (int i = 0; i < (burst ? BURST : 1); i++) {
                    calls.add(rocket.call(NOBODY, new UnsafeBuffer(new byte[8])).recover(e -> Future.succeededFuture()));
                }
                return Future.join(calls);
            }).map(done -> {
                final long latencyNs = Bridge.current().clock().nanoTime() - startNs;
                (burst ? bursts : single).add(latencyNs);
                return latencyNs;
            });
        });
        final JsonObject run = sim.run(vertx).run().toJson();
        assertThat(run.getJsonObject("sim").getLong("errors")).isZero();
        assertThat(bursting).hasSize(2);
        assertThat(bursts).as("bursts answered").hasSizeGreaterThan(3);
        // The burster's queue is busy BURST x REQUEST_NS after each burst: its next burst waits that long.
        assertThat(bursts.stream().mapToLong(Long::longValue).max().orElseThrow())
            .isGreaterThanOrEqualTo(BURST * REQUEST_NS / 2);
        // The other loop's queue has a core of its own: its calls never wait behind that backlog, which they met
        // many times (they are far more than the bursts): a round trip and a poll or two (about 2.2 us here; a
        // server's first calls up to 10 us while rings open), never a quarter of the backlog. One queue for the
        // server (before per-loop queues) made them wait up to the whole of it (BURST x REQUEST_NS / 2: 40 us).
        assertThat(single).as("single calls answered").hasSizeGreaterThan(10 * bursts.size());
        assertThat(single.stream().mapToLong(Long::longValue).max().orElseThrow())
            .isLessThan(BURST * REQUEST_NS / 4);
    }
}
