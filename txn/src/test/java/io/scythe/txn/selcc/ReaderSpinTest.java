package io.scythe.txn.selcc;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** The reader spin flag (§5.3.2): a writer's high-priority invalidation delays this reader's next global reads. */
class ReaderSpinTest {
    private static final LineCache.Line A = new LineCache.Line("mn0", 64);
    private static final LineCache.Line B = new LineCache.Line("mn1", 64);

    @Test
    void shouldDelayReadsOfThatLineInProportionToTheWritersPriority() {
        final ReaderSpin spin = new ReaderSpin(2_000, 2, 8);
        spin.writerWaiting(A, 3, 10_000, 0);
        assertThat(spin.delayNs(A, 10_000)).isEqualTo(6_000);
        assertThat(spin.delayNs(A, 13_000)).isEqualTo(3_000);
        assertThat(spin.delayNs(B, 10_000)).as("another line").isZero();
        assertThat(spin.delayNs(A, 16_000)).as("the window is over").isZero();
        assertThat(spin.delayNs(A, 11_000)).as("an expired flag is cleared").isZero();
    }

    /**
     * The unit grows to this reader's last atomic round trip on the line (selcc21): a hot word's atomics queue, and a
     * window shorter than them closed before the writer's CAS landed.
     */
    @Test
    void shouldScaleTheWindowByTheLinesAtomicRoundTrip() {
        final ReaderSpin spin = new ReaderSpin(2_000, 2, 8);
        spin.writerWaiting(A, 2, 0, 50_000);
        assertThat(spin.delayNs(A, 0)).isEqualTo(100_000);
        spin.writerWaiting(B, 2, 0, 1_000);
        assertThat(spin.delayNs(B, 0)).as("a round trip below the unit: the unit").isEqualTo(4_000);
    }

    @Test
    void shouldIgnoreAWritersFirstTryAndKeepTheLongestWindow() {
        final ReaderSpin spin = new ReaderSpin(2_000, 2, 8);
        spin.writerWaiting(A, 1, 0, 0);
        assertThat(spin.delayNs(A, 0)).isZero();
        spin.writerWaiting(A, 5, 0, 0);
        spin.writerWaiting(A, 2, 1_000, 0);
        assertThat(spin.delayNs(A, 1_000)).isEqualTo(9_000);
    }

    /**
     * selcc21b: the window's priority is capped (a line's priority ages without bound while it stays contended; an
     * uncapped window held readers of a hot B-link node out past the run).
     */
    @Test
    void shouldCapThePriorityAWindowIsScaledBy() {
        final ReaderSpin spin = new ReaderSpin(2_000, 2, 8);
        spin.writerWaiting(A, 200, 0, 50_000);
        assertThat(spin.delayNs(A, 0)).as("8 x the round trip, not 200 x").isEqualTo(400_000);
        spin.writerWaiting(B, 7, 0, 0);
        assertThat(spin.delayNs(B, 0)).as("below the cap: unchanged").isEqualTo(14_000);
    }

    @Test
    void shouldDoNothingWhenTurnedOffAndRefuseBadSettings() {
        final ReaderSpin off = new ReaderSpin(0, 2, 8);
        off.writerWaiting(A, 200, 0, 0);
        assertThat(off.delayNs(A, 0)).isZero();
        assertThatThrownBy(() -> new ReaderSpin(-1, 2, 8)).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> new ReaderSpin(1, 0, 8)).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> new ReaderSpin(1, 2, 1)).isInstanceOf(IllegalArgumentException.class);
    }
}
