package io.scythe.cli;

import static org.assertj.core.api.Assertions.assertThat;

import io.vertx.core.json.JsonObject;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code scythe chaos} finds a recovery in the recoverer's log when no serving CN's health lists it (the recoverer
 * was faulted before it was polled: stop 43's soak reported cn2.e1 "not recovered within 60 s" though cn3's log has
 * its recovery 2 s after the fault). The lines are the ones that soak's node logged.
 */
class ChaosRecoveryLogTest {
    private static final String RECOVERED = "2026-11-28T05:29:10.403698812Z scythe node cn3: recovery of {\"cn\":"
        + "\"cn2.e1\",\"claim\":1,\"ms\":1663.066463,\"completeRecords\":110,\"ok\":true,\"owedMs\":2219}";

    @Test
    void shouldFindTheFirstSuccessfulRecoveryOfThatIncarnationWithItsTime() {
        final long t0 = Instant.parse("2026-11-28T05:29:08.000Z").toEpochMilli();
        final JsonObject found = ChaosCommand.recoveryInLog(Stream.of(
            "2026-11-28T05:29:08.610742535Z scythe node cn3: has the recovery duty for cn2.e1 (claim 1)",
            "2026-11-28T05:29:09.000Z scythe node cn3: recovery of {\"cn\":\"cn2.e10\",\"ok\":true}",
            "2026-11-28T05:29:09.500Z scythe node cn3: recovery of {\"cn\":\"cn2.e1\",\"ok\":false}",
            "2026-11-28T05:29:09.700Z scythe node cn3: recovery of {\"cn\":\"cn2.e1\",\"ok\":tr", // torn
            RECOVERED), "cn2.e1", t0);
        assertThat(found).isNotNull();
        assertThat(found.getLong("recoveredMs")).isEqualTo(2403L);
        assertThat(found.getJsonObject("recovery").getInteger("completeRecords")).isEqualTo(110);
    }

    @Test
    void shouldFindNothingWhenOnlyAnotherIncarnationOrAFailureWasLogged() {
        assertThat(ChaosCommand.recoveryInLog(Stream.of(RECOVERED.replace("cn2.e1", "cn2.e11"),
            RECOVERED.replace("\"ok\":true", "\"ok\":false")), "cn2.e1", 0L)).isNull();
    }

    /**
     * The end checks look in the logs again for a fault still without a recovery (stop 45's soak: cn0.e1, cn1.e1 and
     * cn2.e1 were recovered 75-90 s after their faults by cn1's next incarnation, all four CNs down meanwhile, and the
     * run said "not recovered within 60 s"; a SIGKILL's watch did not look in the logs at all): such a fault is
     * reported with when and by whom it was recovered, and one recovered in time is no failure.
     */
    @Test
    void shouldReportARecoveryLaterThanTheWatchWithItsTimeAndRecoverer(@TempDir final Path logs) throws Exception {
        final long t0 = Instant.parse("2026-11-28T05:27:55.403Z").toEpochMilli(); // 75 s before RECOVERED
        Files.writeString(logs.resolve("node-cn0.log"), "2026-11-28T05:27:56Z scythe node cn0: pid 1\n",
            StandardCharsets.UTF_8);
        Files.writeString(logs.resolve("node-cn3.log"), "2026-11-28T05:27:50Z scythe node cn3: pid 2\n" + RECOVERED
            + "\n2026-11-28T05:29:11Z scythe node cn3: pid 3\n", StandardCharsets.UTF_8);
        final JsonObject late = new JsonObject().put("fault", "SIGKILL").put("cn", "cn2.e1").put("atWallMs", t0);
        assertThat(ChaosCommand.recoveryFailure(late)).isEqualTo("cn2.e1 (SIGKILL) was not recovered by the end of "
            + "the run");
        ChaosCommand.recoveredInLogs(late, logs, 4);
        assertThat(late.getLong("recoveredMs")).isEqualTo(75_000L);
        assertThat(ChaosCommand.recoveryFailure(late)).isEqualTo("cn2.e1 (SIGKILL) was recovered only after 75000 ms "
            + "(bound 60 s; by cn3 (its log))");
        final JsonObject inTime = new JsonObject().put("fault", "SIGSTOP").put("cn", "cn2.e1").put("atWallMs",
            t0 + 30_000);
        ChaosCommand.recoveredInLogs(inTime, logs, 4);
        assertThat(ChaosCommand.recoveryFailure(inTime)).isNull();
        final JsonObject other = new JsonObject().put("fault", "SIGKILL").put("cn", "cn1.e1").put("atWallMs", t0);
        ChaosCommand.recoveredInLogs(other, logs, 4);
        assertThat(ChaosCommand.recoveryFailure(other)).isEqualTo("cn1.e1 (SIGKILL) was not recovered by the end of "
            + "the run");
    }

    /**
     * A CN that exits on its own is named by the incarnation its log says that process was (soakports' soak: cn0.e2,
     * restarted after a SIGKILL of cn0.e1, lost its lease and was reported as cn0.e1, matched to cn0.e1's recovery:
     * "recovered 0 ms"). The lines are that soak's cn0 log's; the epoch last polled (1) is used only without one.
     */
    @Test
    void shouldNameAnUnplannedExitByTheIncarnationItsLogGivesThatProcess(@TempDir final Path logs) throws Exception {
        Files.writeString(logs.resolve("node-cn0.log"), String.join("\n",
            "scythe node cn0 ready: role cn, epoch 1, fabric cn0.e1, http 127.0.0.1:21323, pid 24868",
            "2026-11-28T13:47:33.961954381Z scythe node cn0: has the recovery duty for cn3.e1 (claim 1)",
            "scythe node cn0 ready: role cn, epoch 2, fabric cn0.e2, http 127.0.0.1:21323, pid 27643",
            "2026-11-28T13:47:49.739870434Z scythe node cn0: lease of epoch 2 lost: the cluster no longer lists it",
            "scythe node cn0 ready: role cn, epoch 3, fabric cn0.e3, http 127.0.0.1:21323, pid 31525") + "\n",
            StandardCharsets.UTF_8);
        assertThat(ChaosCommand.exitedIncarnation(logs, "cn0", 27643, 1)).isEqualTo("cn0.e2");
        assertThat(ChaosCommand.exitedIncarnation(logs, "cn0", 31525, 1)).isEqualTo("cn0.e3");
        assertThat(ChaosCommand.exitedIncarnation(logs, "cn0", 2764, 1)).isEqualTo("cn0.e1"); // no line: last polled
        assertThat(ChaosCommand.exitedIncarnation(logs, "cn1", 27643, 4)).isEqualTo("cn1.e4"); // no log
        assertThat(ChaosCommand.exitedIncarnation(null, "cn0", -1, 2)).isEqualTo("cn0.e2");
    }
}
