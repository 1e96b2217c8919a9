package io.scythe.sim;

import io.vertx.core.json.JsonObject;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * RCC's coordinator log and backups (issue 18, {@code io.scythe.txn.rcc.RccLog}): with 2 backups on 3 memory nodes and
 * the log on, each protocol in forms whose Log, Commit and Release digits differ (the Log stage by WRITE and by the
 * LOG RPC; the commit by WRITEs and by WRITE_BACK RPCs) keeps every invariant, spends time in its Log stage and leaves
 * every backup holding its primary's newest version (version, flags, length and value: what the copies' comparison
 * reads; MVCC's and SUNDIAL's backups keep no older slots and no rts). A crashed compute node's NOWAIT and OCC commits
 * are rolled forward from their log records (found: the records were written), whichever primitive wrote them.
 */
class RccLogSimTest extends SimVertxTest {
    @ParameterizedTest
    @ValueSource(strings = {"rcc-nowait:hybrid=111011", "rcc-waitdie:primitive=rpc", "rcc-mvcc:hybrid=001011",
        "rcc-sundial:primitive=rpc", "rcc-sundial:hybrid=010111"})
    void shouldLogToEveryReplicaAndLeaveBackupsEqualToPrimaries(final String protocol) throws Exception {
        final SimOptions o = Explorer.options(protocol, 1).memoryNodes(3).replicas(2).redoLog(true)
            .durationNs(100_000);
        final Explorer.Outcome outcome = Explorer.check(vertx, Explorer.Workload.SMALLBANK, o);
        assertThat(outcome.failure()).as(protocol).isNull();
        assertThat(outcome.committed()).as(protocol).isPositive();
        final JsonObject run = outcome.run();
        assertThat(run.getInteger("replica_differences")).as(protocol).isZero();
        assertThat(run.getJsonObject("stages_us").getDouble("log")).as(protocol + ": the Log stage").isPositive();
    }

    @ParameterizedTest
    @ValueSource(strings = {"rcc-nowait:hybrid=111011", "rcc-occ:primitive=rpc", "rcc-nowait"})
    void shouldRollACrashedNodesCommitsForwardFromTheLog(final String protocol) throws Exception {
        final SimOptions o = Explorer.crashOptions(protocol, 1).memoryNodes(3).replicas(2).durationNs(300_000);
        o.faults().crash(0, 150_000).recover(true, Faults.DEFAULT_DETECT_NS);
        final Explorer.Outcome outcome = Explorer.check(vertx, Explorer.Workload.SMALLBANK, o);
        assertThat(outcome.failure()).as(protocol).isNull();
        final JsonObject crash = outcome.run().getJsonObject("sim").getJsonObject("crash");
        final JsonObject report = crash.getJsonObject("recovery").getJsonObject("report");
        assertThat(report).as(protocol + ": recovery finished " + crash).isNotNull();
        assertThat(report.getInteger("complete_records")).as(protocol + ": log records found").isPositive();
        assertThat(crash.getInteger("locks_left_held")).as(protocol).isZero();
        assertThat(outcome.run().getInteger("replica_differences")).as(protocol).isZero();
    }

    /**
     * WAITDIE, MVCC and SUNDIAL (their lock words hold timestamps, or MVCC's and SUNDIAL's commits write more than the
     * value: an older slot, rts): a crash at a time where recovery rolls entries forward itself (found by trying
     * crash times) leaves no lock, tts or lease word held (the dead-node step frees what no record names), no
     * committed write lost and a serializable history (Explorer.check), and backups equal to primaries.
     */
    @ParameterizedTest
    @CsvSource({"rcc-waitdie, 243", "rcc-mvcc, 229", "rcc-sundial:primitive=rpc, 243"})
    void shouldRecoverTimestampProtocolsFromTheLog(final String protocol, final int crashUs) throws Exception {
        final SimOptions o = Explorer.crashOptions(protocol, 1).memoryNodes(3).replicas(2).durationNs(300_000);
        o.faults().crash(0, crashUs * 1_000L).recover(true, 0);
        final Explorer.Outcome outcome = Explorer.check(vertx, Explorer.Workload.SMALLBANK, o);
        assertThat(outcome.failure()).as(protocol).isNull();
        final JsonObject crash = outcome.run().getJsonObject("sim").getJsonObject("crash");
        final JsonObject report = crash.getJsonObject("recovery").getJsonObject("report");
        assertThat(report).as(protocol + ": recovery finished " + crash).isNotNull();
        assertThat(report.getInteger("applied")).as(protocol + ": entries rolled forward " + report).isPositive();
        assertThat(crash.getInteger("locks_left_held")).as(protocol).isZero();
        assertThat(outcome.run().getInteger("replica_differences")).as(protocol).isZero();
    }
}
