package io.scythe.sim;

import io.scythe.bench.workload.SmallBankSpec;
import io.vertx.core.json.JsonObject;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * SELCC's OCC at 4 compute nodes (the command that failed: {@code scythe sim --workload smallbank --accounts 10000
 * --cns 4 --protocols selcc-occ}, as 200 us). Its reads for update took the line Shared, so at θ = 0.99
 * the hot accounts were held Shared by most loops, each of which then upgraded at its commit: an upgrade invalidates
 * the other readers, all busy upgrading too and so dropping it, and none ever won (a livelock: clients retried for
 * the whole 50 ms drain, their dirty lines never flushed, latch words left set, money short in memory). A read for
 * update now takes the line Exclusive; the run must end quiescent, conserve money and leave no latch set.
 */
class SelccOccLivelockSimTest extends SimVertxTest {
    @Test
    void shouldFinishEveryClientAtFourComputeNodes() throws Exception {
        final SimOptions o = new SimOptions().protocol("selcc-occ").computeNodes(4).loopsPerComputeNode(4)
            .clientsPerComputeNode(8).memoryNodes(2).durationNs(200_000).seed(1);
        final SimResult r = new Simulation(o, new SmallBankSpec(10_000, 0.99, "standard")).run(vertx);
        final JsonObject run = r.run().toJson();
        final JsonObject sim = run.getJsonObject("sim");
        assertThat(sim.getJsonArray("violations")).as(sim.encode()).isEmpty();
        assertThat(sim.getBoolean("quiescent")).as("every client finished").isTrue();
        assertThat(sim.getInteger("unfinished_clients")).isZero();
        assertThat(run.getJsonObject("conserved").getBoolean("ok")).as(run.getJsonObject("conserved").encode())
            .isTrue();
        assertThat(run.getInteger("locks_left_held")).isZero();
        assertThat(run.getLong("committed")).as("commits in 200 us").isGreaterThan(30);
    }
}
