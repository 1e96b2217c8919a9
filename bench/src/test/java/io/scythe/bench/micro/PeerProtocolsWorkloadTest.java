package io.scythe.bench.micro;

import io.scythe.fabric.CostModel;
import io.scythe.routing.RoutingMode;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import org.junit.jupiter.api.Test;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The protocols whose compute nodes message each other (SELCC's invalidations, Lotus's lock RPCs) run in the embedded
 * benchmark with several compute nodes, routed by shard: the cluster wires their CN peers as the simulator does. Every
 * node commits, every bump is counted exactly once, and no lock is left held.
 */
class PeerProtocolsWorkloadTest {
    @Test
    void shouldRunEveryPeerProtocolOnEveryComputeNodeWithNothingLost() throws Exception {
        for (final String protocol : List.of("selcc-2pl", "sel-2pl", "lotus")) {
            final ByteArrayOutputStream printed = new ByteArrayOutputStream();
            final RoutedOltpWorkloadTest.Counters spec = new RoutedOltpWorkloadTest.Counters();
            final JsonObject run = new OltpWorkload(new OltpWorkload.Options(List.of(protocol), List.of(8), 2, 100_000,
                CostModel.cx5(), 400, 100, 11), spec, new PrintStream(printed)).computeNodes(List.of(3))
                .routing(RoutingMode.SHARD).run().toJson().getJsonArray("runs").getJsonObject(0);
            assertThat(run.getLong("errors")).as(protocol + ": " + printed).isZero();
            assertThat(run.getBoolean("invariants_ok")).as(protocol + ": " + printed).isTrue();
            assertThat(run.getLong("locks_left_held")).as(protocol).isZero();
            assertThat(run.getJsonObject("conserved").getBoolean("ok")).as(protocol).isTrue();
            final JsonArray byCn = run.getJsonArray("committed_by_cn");
            assertThat(byCn.size()).isEqualTo(3);
            for (int cn = 0; cn < 3; cn++) {
                assertThat(byCn.getLong(cn)).as(protocol + " on node " + cn + ": " + printed).isPositive();
            }
            assertThat(printed.toString()).contains(protocol, "3 compute nodes", "txn/s").doesNotContain("ERROR");
        }
    }
}
