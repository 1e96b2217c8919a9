package io.scythe.bridge;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.scythe.fabric.CompletionQueue;
import org.junit.jupiter.api.Test;

/** A spinning poller slows to one poll per {@code idlePollNs} once idle that long, and spins again on work. */
class IdlePollingTest {
    @Test
    void shouldSpinUntilIdleThenWakeEveryIdlePoll() {
        final IdlePolling p = new IdlePolling(200);
        p.expectWork(1_000);
        p.polled(1_100, 0);
        assertThat(p.busy(true)).as("100 ns idle: still spinning").isTrue();
        assertThat(p.wakeAtNs(true)).isEqualTo(CompletionQueue.NO_EVENT);
        p.polled(1_200, 0);
        assertThat(p.busy(true)).as("200 ns idle").isFalse();
        assertThat(p.wakeAtNs(true)).isEqualTo(1_400);
        p.polled(1_400, 3);
        assertThat(p.busy(true)).as("work: spinning again").isTrue();
        assertThat(p.wakeAtNs(true)).isEqualTo(CompletionQueue.NO_EVENT);
    }

    @Test
    void shouldNeverAskForPollsWhenItDoesNotSpin() {
        final IdlePolling p = new IdlePolling(200);
        p.polled(10_000, 0);
        assertThat(p.busy(false)).isFalse();
        assertThat(p.wakeAtNs(false)).isEqualTo(CompletionQueue.NO_EVENT);
    }

    @Test
    void shouldSpinAlwaysWithoutAnIdlePoll() {
        final IdlePolling p = new IdlePolling(0);
        p.polled(1_000_000, 0);
        assertThat(p.busy(true)).isTrue();
        assertThat(p.wakeAtNs(true)).isEqualTo(CompletionQueue.NO_EVENT);
        assertThatThrownBy(() -> new IdlePolling(-1)).hasMessageContaining("idlePollNs=-1");
    }
}
