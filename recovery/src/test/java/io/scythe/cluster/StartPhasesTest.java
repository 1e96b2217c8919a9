package io.scythe.cluster;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

class StartPhasesTest {

    @Test
    void shouldTimeEachPhaseAndStopTheStartAtTheEndOfThePhaseThatLearntItMustFail() {
        final AtomicLong clock = new AtomicLong();
        final AtomicReference<String> lost = new AtomicReference<>();
        final StartPhases phases = new StartPhases(clock::get, lost::get);
        clock.addAndGet(1_500_000);
        phases.end("cluster join");
        clock.addAndGet(2_000_000);
        phases.end("epoch and slot");
        assertThat(phases).hasToString("cluster join 1 ms, epoch and slot 2 ms");
        clock.addAndGet(3_000_000);
        lost.set("epoch 2 of cn1 is not its own: another incarnation holds cn1.e2");
        // The tables phase ends: the start stops there, not after its TSO and coordinators.
        assertThatThrownBy(() -> phases.end("(tables)")).isInstanceOf(IllegalStateException.class)
            .hasMessage("epoch 2 of cn1 is not its own: another incarnation holds cn1.e2 (found by the end of its "
                + "start's (tables) phase, after cluster join 1 ms, epoch and slot 2 ms, (tables) 3 ms)");
    }
}
