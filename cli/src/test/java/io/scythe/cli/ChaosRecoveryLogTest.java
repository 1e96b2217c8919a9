package io.scythe.cli;

import static org.assertj.core.api.Assertions.assertThat;

import io.vertx.core.json.JsonObject;
import java.time.Instant;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

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
}
