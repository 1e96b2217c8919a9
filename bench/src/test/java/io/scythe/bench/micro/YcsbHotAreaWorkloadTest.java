package io.scythe.bench.micro;

import io.scythe.bench.workload.YcsbSpec;
import io.scythe.fabric.CostModel;
import io.vertx.core.json.JsonObject;
import org.junit.jupiter.api.Test;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/** RCC's hot-area YCSB under heavy contention (90 % of the keys in a 20-key hot area): every write is counted. */
class YcsbHotAreaWorkloadTest {
    @Test
    void shouldCountEveryCommittedWriteInTheHotArea() throws Exception {
        final ByteArrayOutputStream printed = new ByteArrayOutputStream();
        final JsonObject json = new OltpWorkload(new OltpWorkload.Options(List.of("scythe", "ford-occ"), List.of(16),
            2, 100_000, CostModel.cx5(), 600, 150, 5), YcsbSpec.profile("hot-area", 20_000, 0.99, null, null, 0.9),
            new PrintStream(printed)).run().toJson();
        for (int i = 0; i < 2; i++) {
            final JsonObject run = json.getJsonArray("runs").getJsonObject(i);
            assertThat(run.getBoolean("invariants_ok")).as(printed.toString()).isTrue();
            assertThat(run.getString("ycsb_profile")).isEqualTo("hot-area");
            assertThat(run.getLong("hot_keys")).isEqualTo(20);
            // exactly two writes per committed transaction
            assertThat(run.getJsonObject("conserved").getLong("committed_delta"))
                .isGreaterThanOrEqualTo(2 * run.getLong("committed")).isPositive();
            assertThat(run.getLong("aborted")).as("the hot area is contended").isPositive();
        }
    }
}
