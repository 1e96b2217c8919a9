package io.scythe.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * {@code scythe chaos} starts a fresh cluster when its start fails (issue 23 §3: a loaded machine failed 5 of 8 chaos
 * starts, each the end of the run), stopping the failed one first, at most {@link ChaosCommand#START_ATTEMPTS} times.
 */
class ChaosStartRetryTest {
    /** A cluster stand-in: its attempt number and whether it was stopped. */
    private static final class Fake implements AutoCloseable {
        final int attempt;
        boolean closed;

        Fake(final int attempt) {
            this.attempt = attempt;
        }

        @Override
        public void close() {
            closed = true;
        }
    }

    @Test
    void shouldStopAFailedStartAndStartAFreshClusterUntilOneStarts() throws Exception {
        final List<Fake> made = new ArrayList<>();
        final Fake started = ChaosCommand.startedWithRetries(3, a -> {
            final Fake f = new Fake(a);
            made.add(f);
            return f;
        }, f -> {
            if (f.attempt < 3) {
                throw new IllegalStateException("node cn1 exited with 1 before it was ready; its log x:\ntail");
            }
        }, Path.of("logs"));
        assertThat(started.attempt).isEqualTo(3);
        assertThat(made).extracting(f -> f.closed).containsExactly(true, true, false);
    }

    @Test
    void shouldGiveUpWithTheLastFailureAfterTheBound() {
        final List<Fake> made = new ArrayList<>();
        assertThatThrownBy(() -> ChaosCommand.startedWithRetries(ChaosCommand.START_ATTEMPTS, a -> {
            final Fake f = new Fake(a);
            made.add(f);
            return f;
        }, f -> {
            throw new IllegalStateException("start " + f.attempt + " failed");
        }, Path.of("logs"))).hasMessage("start " + ChaosCommand.START_ATTEMPTS + " failed");
        assertThat(made).hasSize(ChaosCommand.START_ATTEMPTS);
    }
}
