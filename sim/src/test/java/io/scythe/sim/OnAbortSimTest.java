package io.scythe.sim;

import io.scythe.bench.workload.SmallBankSpec;
import io.scythe.txn.OnAbort;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.util.ArrayList;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/** The harness's rule for aborted transactions (--on-abort) is the same for every protocol, FORD's included. */
class OnAbortSimTest extends SimVertxTest {
    /** One warehouse, small: contended enough that every type aborts in 2 ms. */
    private static final io.scythe.bench.workload.TpccSpec TPCC = new io.scythe.bench.workload.TpccSpec(
        new io.scythe.bench.workload.Tpcc.Scale(1, 30, 100, io.scythe.bench.workload.TpccSpec.headroomFor(0)), 0.99, 1);

    private List<TxnRecord> run(final String protocol, final OnAbort rule) throws Exception {
        final List<TxnRecord> records = new ArrayList<>();
        final SimOptions options = new SimOptions().protocol(protocol).loopsPerComputeNode(2)
            .clientsPerComputeNode(8).durationNs(300_000).seed(7).onAbort(rule);
        assertThat(options.toJson().getString("on_abort")).isEqualTo(rule.label());
        new Simulation(options, new SmallBankSpec(50, 0.99, "scythe")).listener(records::add).run(vertx);
        return records;
    }

    @ParameterizedTest
    @ValueSource(strings = {"scythe", "ford-occ"})
    void shouldRetryTheSameTransactionOnlyUnderRetry(final String protocol) throws Exception {
        final List<TxnRecord> retried = run(protocol, OnAbort.RETRY);
        // Retry: an aborted attempt is run again (the same transaction, its keys) until it commits.
        assertThat(retried).anyMatch(t -> t.kind() == TxnRecord.Kind.COMMITTED && t.attempts() > 1);
        assertThat(retried).noneMatch(t -> t.kind() == TxnRecord.Kind.GAVE_UP);
        final List<TxnRecord> fresh = run(protocol, OnAbort.NEW);
        // New: one attempt each; an abort is reported as given up and the client draws its next transaction.
        assertThat(fresh).allMatch(t -> t.attempts() <= 1);
        assertThat(fresh).anyMatch(t -> t.kind() == TxnRecord.Kind.GAVE_UP);
        assertThat(fresh).anyMatch(t -> t.kind() == TxnRecord.Kind.COMMITTED);
    }

    /**
     * Scythe's own harness: TPC-C's NewOrder retried until it commits, the other four types run once (an abort given
     * up). Fails with the rule ignored (every type retried: StockLevels of several attempts, none given up).
     */
    @Test
    void shouldRetryOnlyNewOrderOfTpccUnderScythesRule() throws Exception {
        final List<TxnRecord> records = new ArrayList<>();
        final SimOptions options = new SimOptions().protocol("scythe").loopsPerComputeNode(2).clientsPerComputeNode(16)
            .durationNs(2_000_000).seed(3).onAbort(OnAbort.SCYTHE);
        final io.vertx.core.json.JsonObject run = new Simulation(options, TPCC).listener(records::add).run(vertx)
            .run().toJson();
        // The aborts broken down by type (issue 22's diagnosis) add up to the aborts by reason, and name the types.
        final java.util.Map<String, Long> summed = new java.util.TreeMap<>();
        run.getJsonObject("aborts_by_type").forEach(type -> ((io.vertx.core.json.JsonObject) type.getValue())
            .forEach(r -> summed.merge(r.getKey(), ((Number) r.getValue()).longValue(), Long::sum)));
        final java.util.Map<String, Long> byReason = new java.util.TreeMap<>();
        run.getJsonObject("aborts_by_reason").forEach(r -> byReason.put(r.getKey(), ((Number) r.getValue()).longValue()));
        assertThat(summed).isEqualTo(byReason).isNotEmpty();
        assertThat(run.getJsonObject("aborts_by_type").fieldNames()).contains("NewOrder").doesNotContain("unknown");
        // By table too: per type the same counts by reason, and Scythe names the table of every conflict it aborts on.
        final io.vertx.core.json.JsonObject byTable = run.getJsonObject("aborts_by_table");
        assertThat(byTable).isNotNull();
        run.getJsonObject("aborts_by_type").forEach(type -> {
            final java.util.Map<String, Long> ofType = new java.util.TreeMap<>();
            byTable.getJsonObject(type.getKey()).forEach(table -> ((io.vertx.core.json.JsonObject) table.getValue())
                .forEach(r -> ofType.merge(r.getKey(), ((Number) r.getValue()).longValue(), Long::sum)));
            final java.util.Map<String, Long> expected = new java.util.TreeMap<>();
            ((io.vertx.core.json.JsonObject) type.getValue())
                .forEach(r -> expected.put(r.getKey(), ((Number) r.getValue()).longValue()));
            assertThat(ofType).as(type.getKey()).isEqualTo(expected);
        });
        assertThat(byTable.getJsonObject("NewOrder").fieldNames()).containsAnyOf("warehouse", "district", "stock");
        final io.vertx.core.json.JsonObject unnamed = byTable.getJsonObject("NewOrder").getJsonObject("unnamed");
        // unnamed: a rollback, an insert's conflict (Inserts), a request answered after its attempt was given up
        assertThat(unnamed == null ? java.util.Set.of() : unnamed.fieldNames()).isSubsetOf("user", "locked");
        assertThat(records).filteredOn(t -> !t.type().equals("NewOrder")).allMatch(t -> t.attempts() <= 1)
            .anyMatch(t -> t.kind() == TxnRecord.Kind.GAVE_UP);
        assertThat(records).anyMatch(t -> t.type().equals("NewOrder") && t.kind() == TxnRecord.Kind.COMMITTED
            && t.attempts() > 1);
        assertThat(records).noneMatch(t -> t.type().equals("NewOrder") && t.kind() == TxnRecord.Kind.GAVE_UP);
    }
}
