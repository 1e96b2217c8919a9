package io.scythe.bench.micro;

import io.scythe.bench.report.BenchReport;
import io.scythe.fabric.CostModel;
import io.vertx.core.json.JsonObject;
import org.junit.jupiter.api.Test;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * SmallBank under heavy contention (50 customers, Zipf 0.99, 16 clients), every protocol: the money is conserved,
 * no lock is left held, no transaction gives up, and each protocol commits.
 */
class SmallBankWorkloadTest {
    @Test
    void shouldConserveMoneyUnderContentionWithEveryProtocol() throws Exception {
        final ByteArrayOutputStream printed = new ByteArrayOutputStream();
        final BenchReport report = new SmallBankWorkload(new SmallBankWorkload.Options(
            List.of("scythe", "ford-occ", "farm-occ", "scythe-occ"), List.of(16), 50, 0.99, "standard", 2, 100_000,
            CostModel.cx5(), 700, 200, 7), new PrintStream(printed)).run();
        final JsonObject json = report.toJson();
        assertThat(json.getJsonArray("runs")).hasSize(4);
        for (int i = 0; i < 4; i++) {
            final JsonObject run = json.getJsonArray("runs").getJsonObject(i);
            assertThat(run.getJsonObject("money").getBoolean("conserved")).as(printed.toString()).isTrue();
            assertThat(run.getLong("locks_left_held")).as(run.encode()).isZero();
            assertThat(run.getLong("gave_up")).as(run.encode()).isZero();
            assertThat(run.getLong("committed")).as(run.getString("protocol")).isPositive();
            assertThat(run.getBoolean("invariants_ok")).isTrue();
        }
        // The contention is real: conflicts happened and were resolved by aborts and retries.
        assertThat(json.getJsonArray("runs").getJsonObject(1).getLong("aborted")).isPositive();
    }
}
