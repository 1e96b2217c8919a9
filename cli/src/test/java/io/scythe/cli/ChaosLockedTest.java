package io.scythe.cli;

import static org.assertj.core.api.Assertions.assertThat;

import io.vertx.core.json.JsonObject;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * {@code scythe chaos} names each object left locked at the end (a soak ended "FAIL 11 objects still locked or queued
 * on after the run" with nothing to tell which or whose): where it is, its lock words, the held ticket's holder and
 * what became of that incarnation.
 */
class ChaosLockedTest {
    private static final Map<String, String> STATES = Map.of("cn1.e3", "owed: never seen recovered", "cn0.e2",
        "recovered by cn2");

    @Test
    void shouldNameTheTableKeyTicketsAndTheHoldersFate() {
        final JsonObject o = new JsonObject().put("table", "accounts").put("key", 41L).put("object", 4096)
            .put("lower", 19L).put("upper", 17L).put("holder", "cn1.e3");
        assertThat(ChaosCommand.describeLocked("mn1", o, STATES::get)).isEqualTo("mn1 accounts key 41 (object at "
            + "4096): 2 tickets outstanding (17..18), ticket 17 held by cn1.e3 (owed: never seen recovered)");
        assertThat(ChaosCommand.describeLocked("mn0", o.copy().put("lower", 18L).put("holder", "cn0.e2"),
            STATES::get)).endsWith("1 ticket outstanding (17..17), ticket 17 held by cn0.e2 (recovered by cn2)");
    }

    @Test
    void shouldSayWhenNoHolderWasRecordedOrTheCountersPassedOrACasWordHolds() {
        final JsonObject o = new JsonObject().put("table", "deposits").put("object", 0).put("lower", 5L)
            .put("upper", 4L);
        assertThat(ChaosCommand.describeLocked("mn0", o, STATES::get)).isEqualTo("mn0 deposits key ? (not in the "
            + "index) (object at 0): 1 ticket outstanding (4..4), ticket 4 held by nobody the ledger recorded (an "
            + "insert's ticket, or cancelled)");
        assertThat(ChaosCommand.describeLocked("mn0", o.copy().put("upper", 6L).put("key", 3L), STATES::get))
            .isEqualTo("mn0 deposits key 3 (object at 0): upper 6 passed lower 5 (released once more than taken)");
        assertThat(ChaosCommand.describeLocked("mn0", o.copy().put("upper", 5L).put("cas", "80000000000a"),
            STATES::get)).endsWith("(object at 0): tickets free; CAS word 0x80000000000a");
    }

    /**
     * A CN that exited on its own and whose restart fails again is noted as that fault's error and left down, not the
     * end of the run: a soak ended with "cluster stopped" and no end checks when cn0's second restart failed.
     */
    @Test
    void shouldNoteARestartThatFailedAsTheFaultsErrorAndGoOn() throws Exception {
        final JsonObject fault = new JsonObject().put("cn", "cn0.e1");
        assertThat(ChaosCommand.restartNoting(() -> {
            throw new IllegalStateException("node cn0 exited with 1 before it was ready\nits log");
        }, fault)).isFalse();
        assertThat(fault.getString("error")).isEqualTo("restart after it exited failed: node cn0 exited with 1 before "
            + "it was ready");
        final JsonObject fine = new JsonObject().put("cn", "cn1.e2");
        assertThat(ChaosCommand.restartNoting(() -> { }, fine)).isTrue();
        assertThat(fine.containsKey("error")).isFalse();
    }
}
