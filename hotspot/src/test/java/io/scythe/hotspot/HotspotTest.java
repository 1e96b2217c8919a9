package io.scythe.hotspot;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class HotspotTest {
    @Test
    void shouldSmoothRoundTripsWithAlphaPointNineAndScaleTheHangoutByTheQueue() {
        final Srtt srtt = new Srtt();
        assertThat(srtt.srttNs(2_000)).as("fallback before any sample").isEqualTo(2_000);
        srtt.sample(3_000);
        assertThat(srtt.srttNs(0)).isEqualTo(3_000);
        srtt.sample(13_000);
        assertThat(srtt.srttNs(0)).isEqualTo(4_000); // 0.9 * 3000 + 0.1 * 13000
        assertThat(srtt.hangoutNs(3, 0)).isEqualTo(12_000);
        assertThat(srtt.hangoutNs(0, 0)).isZero();
        assertThatThrownBy(() -> new Srtt(1.0)).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> srtt.sample(-1)).isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void shouldCallAnObjectHotAboveTheColdWatermarkAndRefuseBadWatermarks() {
        assertThat(Watermarks.DEFAULT.hot(3)).isFalse();
        assertThat(Watermarks.DEFAULT.hot(4)).isTrue();
        assertThatThrownBy(() -> new Watermarks(5, 4)).hasMessageContaining("cold <= hot");
        assertThatThrownBy(() -> new Watermarks(-1, 4)).isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void shouldLowerTheColdWatermarkOfAnObjectThatKeepsAbortingAndRestoreItOnCommits() {
        final AdaptiveWatermarks adaptive = new AdaptiveWatermarks(Watermarks.DEFAULT, 1024);
        assertThat(adaptive.cold(7)).isEqualTo(3);
        for (int i = 0; i < 4; i++) {
            adaptive.aborted(7);
        }
        assertThat(adaptive.cold(7)).isEqualTo(1);
        assertThat(adaptive.cold(8)).as("other objects keep theirs").isEqualTo(3);
        for (int i = 0; i < 10; i++) {
            adaptive.aborted(7);
        }
        assertThat(adaptive.cold(7)).isZero();
        for (int i = 0; i < 6; i++) {
            adaptive.committed(7);
        }
        assertThat(adaptive.cold(7)).isEqualTo(3);
    }
}
