package io.scythe.bench.hazelcast;

import io.vertx.core.json.JsonObject;
import org.junit.jupiter.api.Test;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * SmallBank over Hazelcast's TWO_PHASE transactions on two embedded members (loopback, their own cluster name):
 * money is conserved, including under heavy contention (50 customers, Zipf 0.99), and the report has the shape of
 * the Scythe runs.
 */
class HazelcastSmallBankTest {
    @Test
    void shouldConserveMoneyOverHazelcastTransactions() throws Exception {
        final ByteArrayOutputStream printed = new ByteArrayOutputStream();
        final JsonObject json = new HazelcastSmallBank(new HazelcastSmallBank.Options(List.of(4, 16), 2, 1000, 500,
            100, 7, 10_000), 50, 0.99, "standard", new PrintStream(printed)).run().toJson();
        assertThat(json.getString("workload")).isEqualTo("smallbank");
        assertThat(json.getJsonObject("params").getString("system")).isEqualTo("hazelcast");
        assertThat(json.getJsonArray("runs")).hasSize(2);
        for (int i = 0; i < 2; i++) {
            final JsonObject run = json.getJsonArray("runs").getJsonObject(i);
            assertThat(run.getString("protocol")).isEqualTo("hazelcast");
            assertThat(run.getBoolean("invariants_ok")).as(printed.toString()).isTrue();
            assertThat(run.getJsonObject("conserved").getBoolean("ok")).isTrue();
            assertThat(run.getJsonObject("conserved").getLong("initial")).isEqualTo(50 * 2 * 10_000L);
            assertThat(run.getLong("committed")).isPositive();
            assertThat(run.getJsonObject("latency_us").getDouble("p50")).isPositive();
            assertThat(run.getJsonObject("committed_by_type").getLong("SendPayment")).isPositive();
            // money did move: deposits and checks changed the total
            assertThat(run.getJsonObject("conserved").getLong("committed_delta")).isNotZero();
        }
    }

    @Test
    void shouldPutBothSystemsInOneReportWithTheirRatios() {
        final org.HdrHistogram.Histogram latency = new org.HdrHistogram.Histogram(3);
        latency.recordValue(1000);
        final io.scythe.bench.report.BenchReport scythe = new io.scythe.bench.report.BenchReport("smallbank",
            new JsonObject().put("accounts", 100))
            .add(new io.scythe.bench.report.RunResult("scythe", 8).measured(4000, 0, 1, latency))
            .add(new io.scythe.bench.report.RunResult("ford-occ", 8).measured(3000, 0, 1, latency))
            .add(new io.scythe.bench.report.RunResult("scythe", 32).measured(9000, 0, 1, latency));
        final io.scythe.bench.report.BenchReport hazelcast = new io.scythe.bench.report.BenchReport("smallbank",
            new JsonObject().put("system", "hazelcast"))
            .add(new io.scythe.bench.report.RunResult("hazelcast", 8).measured(200, 0, 1, latency))
            .add(new io.scythe.bench.report.RunResult("hazelcast", 32).measured(300, 0, 2, latency));
        final ByteArrayOutputStream printed = new ByteArrayOutputStream();
        final JsonObject json = HazelcastSmallBank.compared(scythe, hazelcast, new PrintStream(printed)).toJson();
        assertThat(json.getJsonArray("runs")).hasSize(5);
        assertThat(json.getJsonObject("params").getJsonObject("hazelcast").getString("system")).isEqualTo("hazelcast");
        assertThat(json.getJsonArray("runs").getJsonObject(3).getJsonObject("ratio_over_hazelcast"))
            .isEqualTo(new JsonObject().put("scythe", 20.0).put("ford-occ", 15.0));
        assertThat(json.getJsonArray("runs").getJsonObject(4).getJsonObject("ratio_over_hazelcast"))
            .isEqualTo(new JsonObject().put("scythe", 60.0)); // 9000/s over 150/s
        assertThat(printed.toString()).contains("clients    8").contains("\"scythe\":20.0");
    }

    @Test
    void shouldRejectBadOptions() {
        assertThatThrownBy(() -> new HazelcastSmallBank(new HazelcastSmallBank.Options(List.of(1), 2, 1000, 10, 0, 1,
            1000), 1, 0.5, "standard", System.out)).hasMessageContaining("accounts=1");
        assertThatThrownBy(() -> new HazelcastSmallBank(new HazelcastSmallBank.Options(List.of(1), 2, 1000, 10, 0, 1,
            1000), 100, 0.5, "tpcc", System.out)).hasMessageContaining("unknown SmallBank mix");
        assertThatThrownBy(() -> new HazelcastMembers(0)).hasMessageContaining("members=0");
    }
}
