package io.scythe.sim;

import io.scythe.txn.rcc.calvin.CalvinModule;
import io.vertx.core.json.JsonObject;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * RCC's CALVIN with a memory node failing over (issue 18; the simulator refused {@code --crash-mn} for it before):
 * replays of the explorer's seeds ({@code sim --explore --seed S --crash-mn 1 --replicas 2 --mns 3 --protocols P
 * --workload W}, some with {@code --cns 3 --redo-log}: three schedulers and the input log), run as the explorer runs
 * them (invariants, SmallBank's money or TPC-C's consistency conditions, serializability of the history). Each seed's
 * participant read or active participant's write-back met the dead node, and is done again where the keys serve now
 * ({@code CalvinNode#installAgain}, {@code CalvinNode#readRecord}), or an input-log record's copy there counted for
 * nothing ({@code CalvinInputLog#writeAt}); the path counters ({@code sim.paths_taken}) must show it, so a replay whose
 * timing drifted away fails instead of passing without testing it. Without those steps the executor gave its loop up
 * (the write-back's failure) or the sequencer stopped (the input log's).
 */
class CalvinMnCrashSimTest extends SimVertxTest {
    @ParameterizedTest
    @CsvSource({"rcc-calvin,SMALLBANK,1,1,false", "rcc-calvin,SMALLBANK,2,1,false", "rcc-calvin,SMALLBANK,3,1,false",
        "rcc-calvin,SMALLBANK,4,1,false", "rcc-calvin,SMALLBANK,5,1,false", "rcc-calvin:primitive=rpc,SMALLBANK,1,1,false",
        "rcc-calvin:primitive=rpc,SMALLBANK,2,1,false", "rcc-calvin:primitive=rpc,SMALLBANK,3,1,false",
        "rcc-calvin,SMALLBANK,1,3,true", "rcc-calvin,SMALLBANK,2,3,true", "rcc-calvin,SMALLBANK,3,3,true",
        "rcc-calvin:primitive=rpc,SMALLBANK,1,3,true", "rcc-calvin:primitive=rpc,SMALLBANK,2,3,true",
        "rcc-calvin,TPCC,1,1,false", "rcc-calvin,TPCC,2,1,false"})
    void shouldFailAMemoryNodeOverWithoutGivingUp(final String protocol, final String workload, final long seed,
                                                  final int cns, final boolean redoLog) throws Exception {
        final Explorer.Workload w = Explorer.Workload.valueOf(workload);
        final SimOptions base = Explorer.lengthened(w, Explorer.options(protocol, seed)).memoryNodes(3).replicas(2);
        if (cns > 1) {
            base.computeNodes(cns);
        }
        base.redoLog(redoLog);
        final SimOptions options = Explorer.crashMemoryNode(base, 1, Faults.DEFAULT_DETECT_NS);
        final Explorer.Outcome outcome = Explorer.check(vertx, w, options);
        final JsonObject sim = RccMnCrashSimTest.cleanRun(outcome);
        final JsonObject paths = sim.getJsonObject("paths_taken", new JsonObject());
        assertThat(paths.getLong(CalvinModule.WRITE_BACK_AGAIN_ON_FAILOVER, 0L)
            + paths.getLong(CalvinModule.READ_AGAIN_ON_FAILOVER, 0L)
            + paths.getLong(CalvinModule.LOG_COPY_ON_REMOVED_NODE, 0L)).as(paths.encode()).isPositive();
    }
}
