package io.scythe.sim;

import io.scythe.bench.workload.SmallBankSpec;
import io.scythe.routing.RoutingMode;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import org.junit.jupiter.api.Test;

import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * Routed clients in the simulator: four compute nodes, every listed protocol, each transaction sent to a node by its
 * routing key's shard (or Lotus's hybrid); a shard map that moves under the routers; the default (local) untouched.
 */
class SimRoutingTest extends SimVertxTest {
    private static SimOptions options(final String protocol, final RoutingMode routing) {
        return new SimOptions().protocol(protocol).computeNodes(4).loopsPerComputeNode(2).clientsPerComputeNode(8)
            .durationNs(300_000).seed(5).routing(routing).shards(64);
    }

    private SimResult run(final SimOptions options) throws Exception {
        return new Simulation(options, new SmallBankSpec(1000, 0.99, "standard")).run(vertx);
    }

    private static long sum(final JsonArray longs) {
        long s = 0;
        for (int i = 0; i < longs.size(); i++) {
            s += longs.getLong(i);
        }
        return s;
    }

    @Test
    void shouldRunEveryProtocolOnFourRoutedComputeNodesWithMoneyConserved() throws Exception {
        final List<String> protocols = io.scythe.txn.spi.ProtocolRegistry.listedNames();
        assertThat(protocols).contains("scythe", "scythe-occ", "ford-occ", "farm-occ");
        for (final RoutingMode routing : List.of(RoutingMode.SHARD, RoutingMode.RANDOM, RoutingMode.HYBRID)) {
            for (final String protocol : protocols) {
                final SimResult r = run(options(protocol, routing));
                final JsonObject run = r.run().toJson();
                final String what = routing.label() + " " + protocol + ": " + run.getJsonObject("sim").encode();
                assertThat(r.invariantsOk()).as(what).isTrue();
                assertThat(run.getJsonObject("conserved").getBoolean("ok")).as(what).isTrue();
                final JsonObject routed = run.getJsonObject("sim").getJsonObject("routing");
                assertThat(routed.getString("mode")).isEqualTo(routing.label());
                final JsonArray byCn = routed.getJsonArray("committed_by_cn");
                assertThat(byCn).hasSize(4);
                for (int cn = 0; cn < 4; cn++) {
                    assertThat(byCn.getLong(cn)).as("node " + cn + " of " + what).isPositive();
                }
                assertThat(sum(byCn)).as(what).isEqualTo(run.getLong("committed"));
                assertThat(routed.getLong("rerouted")).as("no shard moved").isZero();
            }
        }
    }

    @Test
    void shouldRefuseAndSendAgainWhatAMovedShardRoutedWrongSameEverySeed() throws Exception {
        final SimOptions moving = options("scythe", RoutingMode.HYBRID).moveShardEveryNs(5_000);
        final SimResult first = run(moving);
        final JsonObject sim = first.run().toJson().getJsonObject("sim");
        assertThat(first.invariantsOk()).as(sim.encode()).isTrue();
        final JsonObject routed = sim.getJsonObject("routing");
        assertThat(routed.getLong("shard_map_epoch")).as("a move every 5 us for 300 us").isGreaterThan(50);
        assertThat(routed.getLong("rerouted")).as(routed.encode()).isPositive();
        final SimResult again = run(options("scythe", RoutingMode.HYBRID).moveShardEveryNs(5_000));
        assertThat(again.historyHash()).as("deterministic").isEqualTo(first.historyHash());
        assertThat(run(options("scythe", RoutingMode.HYBRID)).historyHash()).as("the moves changed the run")
            .isNotEqualTo(first.historyHash());
    }

    @Test
    void shouldLeaveLocalRunsAsTheyWereAndRefuseWhatRoutingDoesNotModel() throws Exception {
        final SimOptions unrouted = new SimOptions().protocol("ford-occ").computeNodes(2).loopsPerComputeNode(2)
            .clientsPerComputeNode(8).durationNs(200_000).seed(3);
        final SimResult before = run(unrouted);
        final SimResult local = run(new SimOptions().protocol("ford-occ").computeNodes(2).loopsPerComputeNode(2)
            .clientsPerComputeNode(8).durationNs(200_000).seed(3).routing(RoutingMode.LOCAL).shards(7));
        assertThat(local.historyHash()).isEqualTo(before.historyHash());
        assertThat(local.run().toJson().getJsonObject("sim").containsKey("routing")).isFalse();
        final SimOptions crashing = options("scythe", RoutingMode.SHARD);
        crashing.faults().crash(1, 100_000);
        assertThatThrownBy(crashing::validate).hasMessageContaining("not modelled with crash or verb faults");
        assertThatThrownBy(() -> options("scythe", RoutingMode.LOCAL).moveShardEveryNs(1_000).validate())
            .hasMessageContaining("needs routing shard, random or hybrid");
    }
}
