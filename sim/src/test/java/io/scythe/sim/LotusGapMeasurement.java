package io.scythe.sim;

import io.scythe.bench.workload.SmallBankSpec;
import io.scythe.fabric.CostModel;
import io.vertx.core.json.JsonObject;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledIfSystemProperty;

/**
 * Not a test: a measurement of lotus against ford-occ at Lotus's topology (3 MNs, 9 CNs, 3-way replication) on
 * SmallBank, under the default cost model and with one of its properties changed, to see what the gap depends on.
 * Runs only with {@code -Dscythe.lotus.measure=true}; prints one line per run.
 */
@EnabledIfSystemProperty(named = "scythe.lotus.measure", matches = "true")
class LotusGapMeasurement extends SimVertxTest {
    @Test
    void measure() throws Exception {
        final int clients = Integer.getInteger("scythe.lotus.clients", 16);
        final String[] models = System.getProperty("scythe.lotus.models", "default").split(",");
        for (final String model : models) {
          for (final String theta : System.getProperty("scythe.lotus.theta", "0.99").split(",")) {
            for (final String spec : System.getProperty("scythe.lotus.protocols", "ford-occ,lotus,motor").split(",")) {
                // "lotus/vt0": lotus with its version-table cache off (LotusNode reads the property as it starts)
                final String protocol = spec.split("/")[0];
                if (spec.endsWith("/vt0")) {
                    System.setProperty("scythe.lotus.vtCacheEntries", "0");
                } else {
                    System.clearProperty("scythe.lotus.vtCacheEntries");
                }
                final CostModel cost = switch (model) {
                    case "default" -> CostModel.cx5();
                    case "atomic-0.5" -> CostModel.fromJson(new JsonObject().put("atomicRateHostMops", 0.5));
                    case "atomic-unlimited" -> CostModel.fromJson(new JsonObject().put("atomicRateHostMops", 0.0));
                    case "same-address-2us" -> CostModel.fromJson(new JsonObject().put("atomicSameAddressHostNs",
                        2_000));
                    default -> throw new IllegalArgumentException(model);
                };
                final SimOptions o = new SimOptions().protocol(protocol).computeNodes(9).loopsPerComputeNode(Integer.getInteger("scythe.lotus.loops", 2))
                    .clientsPerComputeNode(clients).memoryNodes(3).replicas(2).durationNs(Long.getLong("scythe.lotus.durationNs", 200_000)).seed(Long.getLong("scythe.lotus.seed", 1))
                    .routing(io.scythe.routing.RoutingMode.named(System.getProperty("scythe.lotus.routing", "local")))
                    .costModel(cost);
                final Simulation sim = new Simulation(o, new SmallBankSpec(Long.getLong("scythe.lotus.accounts",
                    100_000), Double.parseDouble(theta), "standard"));
                final JsonObject run = sim.run(vertx).run().toJson();
                final io.scythe.bridge.VerbStats verbs = sim.cnVerbs();
                final double committed = Math.max(1, run.getLong("committed"));
                final long[] cache = new long[5];
                for (int cn = 0; cn < 9 && protocol.startsWith("lotus"); cn++) {
                    final long[] c = io.scythe.txn.lotus.LotusNode.of(sim.peersOf(cn)).vtCache().counts();
                    for (int i = 0; i < c.length; i++) {
                        cache[i] += c[i];
                    }
                }
                System.out.printf("VERBS theta=" + theta + " protocol=%s committed=%d read/txn=%.3f write/txn=%.3f cas/txn=%.3f "
                    + "faa/txn=%.3f rpc/txn=%.3f doorbells/txn=%.3f vt-cache hits=%d misses=%d fills=%d "
                    + "invalidations=%d evictions=%d%n", spec, run.getLong("committed"),
                    verbs.verbs(io.scythe.fabric.Opcode.READ) / committed,
                    verbs.verbs(io.scythe.fabric.Opcode.WRITE) / committed,
                    verbs.verbs(io.scythe.fabric.Opcode.COMPARE_AND_SWAP) / committed,
                    verbs.verbs(io.scythe.fabric.Opcode.FETCH_AND_ADD) / committed, verbs.rpcCalls() / committed,
                    verbs.doorbells() / committed, cache[0], cache[1], cache[2], cache[3], cache[4]);
                System.out.println("MEASURE model=" + model + " routing=" + o.routing().label() + " theta=" + theta + " protocol=" + spec + " clients=" + 9 * clients
                    + " committed_per_s=" + run.getDouble("committed_per_s") + " abort_rate="
                    + run.getDouble("abort_rate") + " p50_us=" + run.getJsonObject("latency_us").getValue("p50")
                    + " stages=" + run.getJsonObject("stages_us") + " mn=" + run.getJsonObject("sim")
                    .getValue("busiest_mn_cpu_utilization") + " cn_cpu_busiest=" + run.getJsonObject("sim")
                    .getValue("busiest_cn_cpu_utilization") + " cn_cpu_mean=" + run.getJsonObject("sim")
                    .getValue("mean_cn_cpu_utilization") + String.format(" cas_per_mn_mops=%.3f read_write_per_mn_mops=%.3f",
                    verbs.verbs(io.scythe.fabric.Opcode.COMPARE_AND_SWAP) / committed
                        * run.getDouble("committed_per_s") / 3e6,
                    (verbs.verbs(io.scythe.fabric.Opcode.READ) + verbs.verbs(io.scythe.fabric.Opcode.WRITE)) / committed
                        * run.getDouble("committed_per_s") / 3e6) + " violations=" + run.getJsonObject("sim")
                    .getJsonArray("violations"));
            }
          }
        }
        System.clearProperty("scythe.lotus.vtCacheEntries");
    }
}
