package io.scythe.bench.micro;

import io.scythe.bench.workload.GclSpec;
import io.scythe.fabric.CostModel;
import io.scythe.storage.Table;
import io.scythe.txn.selcc.GclRegion;
import io.vertx.core.json.JsonObject;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * Issue 21: GAM's micro-benchmark on the embedded cluster's compute nodes ({@code bench --workload gcl}), the
 * simulator's accesses ({@link GclSpec}) in real time: no write is lost through 8-frame caches shared by 2 compute
 * nodes (evictions of dirty lines, invalidations, handovers), and the end check fails a run whose counters do not add
 * up.
 */
class GclWorkloadTest {
    private static GclWorkload.Options options(final String protocol) {
        return options(protocol, 400);
    }

    private static GclWorkload.Options options(final String protocol, final long durationMs) {
        // 400 lines over 2 memory nodes, half the accesses writes, skewed, half of them to the last line again.
        return new GclWorkload.Options(List.of(protocol), List.of(8), 2, 2, CostModel.cx5(), durationMs, 0, 1, 400, 256,
            8, 0.5, 0.99, 1.0, 0.5, 0);
    }

    private static JsonObject run(final GclWorkload workload) throws Exception {
        return workload.run().toJson().getJsonArray("runs").getJsonObject(0);
    }

    @ParameterizedTest
    @ValueSource(strings = {"selcc-2pl", "sel-2pl"})
    void shouldLoseNoWriteThroughTinyCachesOnTwoComputeNodes(final String protocol) throws Exception {
        final ByteArrayOutputStream printed = new ByteArrayOutputStream();
        // At least 200 accesses, so more than 20 writes (LongEnoughRun: longer again on a starved CPU; 20 or fewer in
        // 400 ms at load ~40).
        final JsonObject run = io.scythe.bench.LongEnoughRun.run(200, 400, (durationMs, attempt) -> new GclWorkload(
            options(protocol, durationMs), new PrintStream(printed)).run().toJson()).getJsonArray("runs").getJsonObject(0);
        final JsonObject gcl = run.getJsonObject("gcl");
        assertThat(run.getBoolean("invariants_ok")).as(printed.toString()).isTrue();
        assertThat(gcl.getLong("writes")).as("writes completed").isGreaterThan(20);
        assertThat(gcl.getLong("counters_sum")).as("the memory nodes' counters").isEqualTo(gcl.getLong("writes"));
        assertThat(gcl.getLong("latches_left_held")).isZero();
        assertThat(run.getLong("failed")).isZero();
        assertThat(gcl.getJsonArray("accesses_by_node").size()).as("both compute nodes accessed lines").isEqualTo(2);
        if (protocol.startsWith("selcc")) {
            assertThat(gcl.getDouble("invalidations_per_access")).as("lines shared across nodes").isPositive();
            assertThat(gcl.getDouble("hit_ratio")).as("some accesses hit the cache").isPositive();
        } else {
            assertThat(gcl.getDouble("hit_ratio")).as("SEL has no cache").isZero();
        }
        assertThat(printed.toString()).contains(protocol, "accesses/s", "hit ratio", "Jain").doesNotContain("VIOLATED");
    }

    @Test
    void shouldFailARunWhoseCountersDoNotAddUp() throws Exception {
        final ByteArrayOutputStream printed = new ByteArrayOutputStream();
        final JsonObject run = run(new GclWorkload(options("selcc-2pl"), new PrintStream(printed)).beforeCheck(spec -> {
            final Table t = spec.memoryNodes().get(1).table(GclRegion.TABLE);
            final int at = GclSpec.counterOffset(t, 3);
            t.objectMemory().putLong(at, t.objectMemory().getLong(at) + 1); // a write that never completed
        }));
        final JsonObject gcl = run.getJsonObject("gcl");
        assertThat(run.getBoolean("invariants_ok")).isFalse();
        assertThat(gcl.getLong("counters_sum")).isEqualTo(gcl.getLong("writes") + 1);
        assertThat(gcl.getJsonArray("violations").getString(0)).contains("counters add up to");
        assertThat(printed.toString()).contains("VIOLATED");
    }

    @Test
    void shouldRefuseProtocolsWithoutGlobalCacheLines() {
        assertThatThrownBy(() -> new GclWorkload(options("scythe"), System.out))
            .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("not scythe")
            .hasMessageContaining("no global cache lines");
    }
}
