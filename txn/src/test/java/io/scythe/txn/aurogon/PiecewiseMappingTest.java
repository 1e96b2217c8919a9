package io.scythe.txn.aurogon;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

class PiecewiseMappingTest {
    /**
     * Pairs along a rate no two fabric clocks can have (1 %, ten times twice the fabric's largest drift): the fitted
     * rate is clamped to {@code 1 +- MAX_RATE_ERROR}, and past the polyline's end the mapping goes on at that rate.
     * Before, the fitted 1 % was extrapolated, 10 us per ms.
     */
    @Test
    void shouldClampTheRateItExtrapolatesWith() {
        final PiecewiseMapping m = new PiecewiseMapping(200_000, 500);
        long x = 0;
        for (; x < 2_000_000; x += 20_000) {
            m.add(x, x + x / 100, 100);
        }
        assertThat(m.slicesFitted()).isGreaterThan(5);
        final long from = x + 1_000_000; // past the last segment's end (two slices ahead at most)
        final long span = 10_000_000;
        final double rate = (double) (m.map(from + span) - m.map(from)) / span;
        assertThat(rate).as("extrapolated rate").isLessThanOrEqualTo(1 + PiecewiseMapping.MAX_RATE_ERROR + 1e-9)
            .isGreaterThanOrEqualTo(1 - PiecewiseMapping.MAX_RATE_ERROR - 1e-9);
        assertThat(m.synchronised(from + span)).isTrue();
        assertThat(m.synchronised(x + PiecewiseMapping.MAX_EXTRAPOLATION_NS + 1_000_000)).isFalse();
    }

    /** After an idle gap past the bound, a fresh pair is served as an offset (and counts as synchronised). */
    @Test
    void shouldServeAFreshPairAfterAGapPastTheBound() {
        final PiecewiseMapping m = new PiecewiseMapping(200_000, 500);
        for (long x = 0; x < 2_000_000; x += 20_000) {
            m.add(x, x + 7_000, 100);
        }
        final long late = 2_000_000 + 2 * PiecewiseMapping.MAX_EXTRAPOLATION_NS;
        assertThat(m.synchronised(late)).isFalse();
        assertThat(m.staleNs(late)).isGreaterThan(PiecewiseMapping.MAX_EXTRAPOLATION_NS);
        m.add(late, late + 9_000, 100);
        assertThat(m.synchronised(late + 1_000)).isTrue();
        assertThat(m.map(late + 1_000)).isEqualTo(late + 10_000);
    }

    /**
     * After an idle gap, a pair whose round trip is far above the last slice's best (a stalled probe: its midpoint
     * estimate may be off by half that round trip) is not served as the offset; the mapping stays unsynchronised until
     * a good pair comes. Before, whatever pair came first was served (issue 20 review).
     */
    @Test
    void shouldNotServeAStalledPairAsTheOffsetAfterAGap() {
        final PiecewiseMapping m = new PiecewiseMapping(200_000, 500);
        for (long x = 0; x < 2_000_000; x += 20_000) {
            m.add(x, x + 7_000, 100);
        }
        final long late = 2_000_000 + 2 * PiecewiseMapping.MAX_EXTRAPOLATION_NS;
        m.add(late, late + 7_000 + 40_000, 80_000); // round trip 80 us, its offset 40 us off
        assertThat(m.offsetsRefused()).isEqualTo(1);
        assertThat(m.synchronised(late)).as("the stalled pair refreshed nothing").isFalse();
        m.add(late + 1_000, late + 1_000 + 7_000, 120);
        assertThat(m.synchronised(late + 1_000)).isTrue();
        assertThat(m.map(late + 2_000)).isEqualTo(late + 2_000 + 7_000);
    }
}
