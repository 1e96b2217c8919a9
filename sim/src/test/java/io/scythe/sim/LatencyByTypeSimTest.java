package io.scythe.sim;

import io.scythe.bench.workload.Tpcc;
import io.scythe.bench.workload.TpccSpec;
import io.vertx.core.json.JsonObject;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

/**
 * {@code latency_by_type_us}, the per-type breakdown of the latency of a run's commits (issue 22: which transaction
 * type makes the tail): one entry per committed type, its percentiles ordered, its commits' attempts adding up to the
 * run's, and the types' commits at or above the run's P99 adding up to about 1 % of the commits.
 */
class LatencyByTypeSimTest extends SimVertxTest {
    @Test
    void shouldBreakTheLatencyOfCommitsDownByType() throws Exception {
        final SimResult r = new Simulation(new SimOptions().protocol("scythe").computeNodes(1).loopsPerComputeNode(2)
            .clientsPerComputeNode(16).memoryNodes(2).durationNs(2_000_000).seed(1),
            new TpccSpec(new Tpcc.Scale(1, 30, 100, TpccSpec.headroomFor(0)), 0.99, 1, TpccSpec.Mix.STANDARD, 0.99,
                TpccSpec.Home.RANDOM)).run(vertx);
        final JsonObject run = r.run().toJson();
        final JsonObject committed = run.getJsonObject("committed_by_type");
        final JsonObject byType = run.getJsonObject("latency_by_type_us");
        assertThat(byType.fieldNames()).as(byType.encode()).containsExactlyInAnyOrderElementsOf(committed.fieldNames())
            .contains("NewOrder", "Payment");
        double attempts = 0;
        long inTail = 0;
        double slowest = 0;
        for (final String type : byType.fieldNames()) {
            final JsonObject t = byType.getJsonObject(type);
            assertThat(t.getDouble("p50")).as(type).isPositive().isLessThanOrEqualTo(t.getDouble("p99"));
            assertThat(t.getDouble("p99")).as(type).isLessThanOrEqualTo(t.getDouble("max"));
            assertThat(t.getDouble("attempts_per_commit")).as(type).isGreaterThanOrEqualTo(1.0);
            attempts += t.getDouble("attempts_per_commit") * committed.getLong(type);
            inTail += t.getLong("in_tail");
            slowest = Math.max(slowest, t.getDouble("max"));
        }
        final long commits = run.getLong("committed");
        assertThat(attempts / commits).isCloseTo(run.getDouble("attempts_per_commit"), within(0.02));
        assertThat(inTail).as(byType.encode()).isBetween(1L, Math.max(2L, commits / 50));
        assertThat(slowest).isCloseTo(run.getJsonObject("latency_us").getDouble("max"), within(slowest / 100));
    }
}
