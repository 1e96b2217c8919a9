package io.scythe.bench.micro;

import io.scythe.fabric.CostModel;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import org.junit.jupiter.api.Test;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/** {@code scythe bench --workload rrpc --peer cn}: CN-to-CN calls measured beside CN-to-MN calls, with their ratio. */
class RrpcPeerWorkloadTest {
    @Test
    void shouldMeasureCallsToAComputeNodeBesideCallsToAMemoryNode() throws Exception {
        final ByteArrayOutputStream printed = new ByteArrayOutputStream();
        final JsonObject json = new RrpcWorkload(new RrpcWorkload.Options(List.of(16, 1024), List.of(1, 8),
            CostModel.cx5(), 300, 0, RrpcWorkload.Peer.CN), new PrintStream(printed, true)).run().toJson();
        final JsonArray runs = json.getJsonArray("runs");
        assertThat(json.getJsonObject("params").getString("peer")).isEqualTo("cn");
        assertThat(runs.size()).isEqualTo(8);
        final long[] calls = new long[2];
        for (int i = 0; i < runs.size(); i += 2) {
            final JsonObject mn = runs.getJsonObject(i);
            final JsonObject cn = runs.getJsonObject(i + 1);
            assertThat(mn.getString("protocol")).isEqualTo("rrpc");
            assertThat(mn.getString("peer")).isEqualTo("mn");
            assertThat(cn.getString("protocol")).isEqualTo("rrpc-cn");
            assertThat(cn.getString("peer")).isEqualTo("cn");
            assertThat(cn.getInteger("size_bytes")).isEqualTo(mn.getInteger("size_bytes"));
            assertThat(cn.getInteger("clients")).isEqualTo(mn.getInteger("clients"));
            for (final JsonObject run : List.of(mn, cn)) {
                assertThat(run.getBoolean("invariants_ok")).as(run.encode()).isTrue(); // every reply checked
            }
            calls[0] += mn.getLong("committed");
            calls[1] += cn.getLong("committed");
            if (mn.getLong("committed") > 0) { // a starved loop may start a short run after its end
                assertThat(cn.getDouble("cn_over_mn")).isCloseTo(cn.getDouble("calls_per_s")
                    / mn.getDouble("calls_per_s"), org.assertj.core.data.Offset.offset(0.01));
            }
        }
        assertThat(calls[0]).as("calls to the MN").isPositive();
        assertThat(calls[1]).as("calls to the CN").isPositive();
        assertThat(runs.getJsonObject(3).getString("mode")).isEqualTo("rpc-zero-copy");
        assertThat(printed.toString()).contains("rrpc-cn").contains("cn/mn");
    }
}
