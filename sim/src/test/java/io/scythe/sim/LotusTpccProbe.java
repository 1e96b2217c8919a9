package io.scythe.sim;

import io.scythe.bench.workload.Tpcc;
import io.scythe.bench.workload.TpccSpec;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledIfSystemProperty;

/** Not a test: prints one TPC-C run of a protocol (abort reasons), with {@code -Dscythe.lotus.probe=true}. */
@EnabledIfSystemProperty(named = "scythe.lotus.probe", matches = "true")
class LotusTpccProbe extends SimVertxTest {
    @Test
    void probe() throws Exception {
        for (final String p : System.getProperty("scythe.lotus.protocols", "ford-occ,lotus").split(",")) {
            final io.vertx.core.json.JsonObject run = new Simulation(Explorer.options(p, 1).computeNodes(3)
                .clientsPerComputeNode(4), new TpccSpec(new Tpcc.Scale(1, 30, 100, TpccSpec.headroomFor(0)), 0.99, 1))
                .run(vertx).run().toJson();
            System.out.println("PROBE " + p + " committed=" + run.getLong("committed") + " aborts="
                + run.getValue("aborts_by_reason") + " " + run.getValue("abort_reasons") + " keys=" + run.fieldNames());
        }
    }
}
