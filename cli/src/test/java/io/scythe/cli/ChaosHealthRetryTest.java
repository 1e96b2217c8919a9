package io.scythe.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The end checks' health read ({@link ChaosCommand#retried}): a node whose /health did not answer once (a loaded
 * machine holding its HTTP loop past the read's timeout) is asked again within a bound, not called unchecked at once.
 */
class ChaosHealthRetryTest {

    private long now;

    @Test
    void shouldAskAgainUntilTheNodeAnswers() {
        final int[] calls = {0};
        final List<Integer> late = new ArrayList<>();
        final String h = ChaosCommand.retried(() -> ++calls[0] < 3 ? null : "up", 20_000, () -> now,
            ms -> now += ms * 1_000_000, late::add);
        assertThat(h).isEqualTo("up");
        assertThat(calls[0]).isEqualTo(3);
        assertThat(late).containsExactly(3);
    }

    @Test
    void shouldGiveUpAfterTheBound() {
        final int[] calls = {0};
        final List<Integer> late = new ArrayList<>();
        final String h = ChaosCommand.retried(() -> {
            calls[0]++;
            now += 2_000_000_000L; // each read times out after 2 s
            return null;
        }, 20_000, () -> now, ms -> now += ms * 1_000_000, late::add);
        assertThat(h).isNull();
        assertThat(calls[0]).isEqualTo(9); // 2.5 s a try: the ninth ends past 20 s
        assertThat(late).isEmpty();
    }

    @Test
    void shouldReadOnceWhenTheNodeAnswers() {
        final int[] calls = {0};
        final List<Integer> late = new ArrayList<>();
        assertThat(ChaosCommand.retried(() -> ++calls[0], 20_000, () -> now, ms -> { }, late::add)).isEqualTo(1);
        assertThat(late).isEmpty();
    }
}
