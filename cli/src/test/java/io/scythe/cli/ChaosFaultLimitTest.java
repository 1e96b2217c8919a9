package io.scythe.cli;

import static org.assertj.core.api.Assertions.assertThat;

import io.vertx.core.json.JsonObject;
import org.junit.jupiter.api.Test;

/**
 * A compute-node fault chaos did not schedule (an exit on its own, a timed-out start killed) counts toward the
 * protocol's per-run limit ({@code ProtocolModule#clusterComputeNodeFaultLimit}, rcc-calvin: 1): one past the limit
 * fails the run naming the limit and why, instead of the run giving up later with a less clear error.
 */
class ChaosFaultLimitTest {
    @Test
    void shouldLeaveAFaultWithinTheLimitAlone() {
        final JsonObject fault = new JsonObject().put("fault", "lease lost (unplanned, exit 137)");
        assertThat(ChaosCommand.beyondFaultLimit(fault, 1, 1, "one sequencer epoch", "rcc-calvin")).isFalse();
        assertThat(fault.containsKey("error")).isFalse();
    }

    @Test
    void shouldFailTheFaultPastTheLimitNamingTheLimitAndWhy() {
        final JsonObject fault = new JsonObject().put("fault", "lease lost (unplanned, exit 137)");
        assertThat(ChaosCommand.beyondFaultLimit(fault, 2, 1, "one sequencer epoch", "rcc-calvin")).isTrue();
        assertThat(fault.getString("error")).isEqualTo("compute-node fault 2 of this run, beyond the 1 protocol "
            + "rcc-calvin survives on cluster nodes (one sequencer epoch)");
    }

    @Test
    void shouldKeepAnEarlierErrorBesideTheLimit() {
        final JsonObject fault = new JsonObject().put("error", "restart after it exited failed: x");
        ChaosCommand.beyondFaultLimit(fault, 3, 1, "why", "rcc-calvin");
        assertThat(fault.getString("error")).startsWith("restart after it exited failed: x; compute-node fault 3");
    }

    @Test
    void shouldNeverFailWithoutALimit() {
        final JsonObject fault = new JsonObject();
        assertThat(ChaosCommand.beyondFaultLimit(fault, 1_000, Integer.MAX_VALUE, null, "scythe")).isFalse();
        assertThat(fault.isEmpty()).isTrue();
    }
}
