package io.scythe.bench.micro;

import io.scythe.bench.workload.Tpcc;
import io.scythe.bench.workload.TpccSpec;
import io.scythe.fabric.CostModel;
import io.vertx.core.json.JsonObject;
import org.junit.jupiter.api.Test;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * TPC-C under contention (2 warehouses, 30 customers per district, 200 items, Zipf 0.99, 8 clients) with scythe,
 * ford-occ and farm-occ: after each run the consistency conditions 1-4 hold, W_YTD grew by exactly the committed
 * payments, no lock is left held, and every transaction type committed; Scythe's aborts are counted by table.
 */
class TpccWorkloadTest {
    @Test
    void shouldKeepTheConsistencyConditionsUnderConcurrency() throws Exception {
        final ByteArrayOutputStream printed = new ByteArrayOutputStream();
        final JsonObject json = new OltpWorkload(new OltpWorkload.Options(List.of("scythe", "ford-occ", "farm-occ"),
            List.of(8), 2, 100_000, CostModel.cx5(), 1_500, 0, 11),
            new TpccSpec(new Tpcc.Scale(2, 30, 200, 20_000), 0.99, 11), new PrintStream(printed)).run().toJson();
        assertThat(json.getJsonArray("runs")).hasSize(3);
        for (int i = 0; i < 3; i++) {
            final JsonObject run = json.getJsonArray("runs").getJsonObject(i);
            final String what = printed + run.encodePrettily();
            assertThat(run.getJsonObject("conserved").getBoolean("ok")).as(what).isTrue();
            assertThat(run.getLong("locks_left_held")).as(what).isZero();
            final JsonObject consistency = run.getJsonObject("consistency");
            assertThat(consistency.fieldNames()).as(what).hasSize(5);
            for (final String condition : consistency.fieldNames()) {
                assertThat(consistency.getJsonObject(condition).getBoolean("ok")).as(condition + what).isTrue();
            }
            assertThat(run.getBoolean("invariants_ok")).as(what).isTrue();
            assertThat(run.getLong("gave_up")).as(what).isZero();
            assertThat(run.getJsonObject("committed_by_type").fieldNames()).as(what)
                .contains("NewOrder", "Payment");
            assertThat(run.getJsonObject("conserved").getLong("committed_delta")).as(what).isPositive();
            // Aborts by table: Scythe names the TPC-C table it aborted on, the others none (all unnamed).
            final JsonObject byTable = run.getJsonObject("aborts_by_table");
            assertThat(byTable).as(what).isNotNull();
            if (run.getString("protocol").equals("scythe")) {
                assertThat(byTable.fieldNames()).as(what).containsAnyOf("warehouse", "district", "stock");
            } else {
                assertThat(byTable.fieldNames()).as(what).isSubsetOf("unnamed");
            }
        }
    }
}
