package io.scythe.txn.aurogon;

import io.scythe.storage.ObjectLayout;
import org.junit.jupiter.api.Test;

import java.util.HashSet;
import java.util.Set;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** The 64-bit timestamp layout (§4.1; ours: 47-bit clock, 8-bit server, 8-bit loop): issue 20's B4. */
class AurogonTimestampTest {
    private static final long LOW = 1 - AurogonTimestamp.BIAS_NS;
    private static final long HIGH = AurogonTimestamp.MAX_CLOCK - AurogonTimestamp.BIAS_NS;

    @Test
    void shouldUnpackWhatItPackedAtTheEndsOfEveryField() {
        for (final long clock : new long[] {LOW, -1, 0, 1, 123_456_789, HIGH}) {
            for (final int server : new int[] {0, 1, 77, AurogonTimestamp.MAX_SERVER}) {
                for (final int loop : new int[] {0, 1, 200, AurogonTimestamp.MAX_LOOP}) {
                    final long ts = AurogonTimestamp.pack(clock, server, loop);
                    assertThat(AurogonTimestamp.clockNs(ts)).isEqualTo(clock);
                    assertThat(AurogonTimestamp.server(ts)).isEqualTo(server);
                    assertThat(AurogonTimestamp.loop(ts)).isEqualTo(loop);
                    assertThat(ts).as("positive, above a loaded record's version").isGreaterThan(
                        ObjectLayout.LOADED_VERSION);
                    assertThat(AurogonTimestamp.toString(ts)).isEqualTo(clock + "ns@" + server + "/" + loop);
                }
            }
        }
        assertThat(AurogonTimestamp.pack(0, 0x12, 0x34) & 0xffff).as("server then loop in the low 16 bits")
            .isEqualTo(0x1234);
    }

    @Test
    void shouldBeUniqueAcrossServersAndLoopsAtOneClockReading() {
        final Set<Long> seen = new HashSet<>();
        for (int server = 0; server <= AurogonTimestamp.MAX_SERVER; server++) {
            for (int loop = 0; loop <= AurogonTimestamp.MAX_LOOP; loop++) {
                assertThat(seen.add(AurogonTimestamp.pack(5_000, server, loop))).isTrue();
            }
        }
        assertThat(seen).hasSize(256 * 256);
    }

    @Test
    void shouldOrderByClockFirstThenServerThenLoop() {
        assertThat(AurogonTimestamp.pack(1_001, 0, 0)).isGreaterThan(AurogonTimestamp.pack(1_000, 255, 255));
        assertThat(AurogonTimestamp.pack(-1, 255, 255)).isLessThan(AurogonTimestamp.pack(0, 0, 0));
        assertThat(AurogonTimestamp.pack(1_000, 3, 0)).isGreaterThan(AurogonTimestamp.pack(1_000, 2, 255));
        assertThat(AurogonTimestamp.pack(1_000, 3, 9)).isGreaterThan(AurogonTimestamp.pack(1_000, 3, 8));
        assertThat(AurogonTimestamp.pack(HIGH, 255, 255)).isEqualTo(Long.MAX_VALUE).isPositive();
    }

    @Test
    void shouldStayStrictlyIncreasingOnOneLoopWhenTheClockStallsOrStepsBack() {
        final long first = AurogonTimestamp.next(0, 10_000, 4, 7);
        assertThat(first).isEqualTo(AurogonTimestamp.pack(10_000, 4, 7));
        final long stalled = AurogonTimestamp.next(first, 10_000, 4, 7);
        assertThat(stalled).isEqualTo(AurogonTimestamp.pack(10_001, 4, 7));
        final long back = AurogonTimestamp.next(stalled, 9_000, 4, 7);
        assertThat(back).isEqualTo(AurogonTimestamp.pack(10_002, 4, 7));
        assertThat(AurogonTimestamp.next(back, 20_000, 4, 7)).isEqualTo(AurogonTimestamp.pack(20_000, 4, 7));
        // Above another loop's timestamp (a floor), the ids stay this loop's.
        final long floored = AurogonTimestamp.next(AurogonTimestamp.pack(30_000, 9, 9), 20_000, 4, 7);
        assertThat(floored).isEqualTo(AurogonTimestamp.pack(30_001, 4, 7));
    }

    @Test
    void shouldRefuseIdsAndClockReadingsOutOfRange() {
        assertThatThrownBy(() -> AurogonTimestamp.pack(0, 256, 0)).isInstanceOf(IllegalArgumentException.class)
            .hasMessageContaining("server id 256");
        assertThatThrownBy(() -> AurogonTimestamp.pack(0, -1, 0)).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> AurogonTimestamp.pack(0, 0, 256)).isInstanceOf(IllegalArgumentException.class)
            .hasMessageContaining("loop id 256");
        assertThatThrownBy(() -> AurogonTimestamp.pack(0, 0, -1)).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> AurogonTimestamp.pack(HIGH + 1, 0, 0)).isInstanceOf(IllegalArgumentException.class)
            .hasMessageContaining("47-bit range");
        // Clock 0 of server 0's loop 0 would be 0, a loaded record's version: refused (failed before the fix).
        assertThatThrownBy(() -> AurogonTimestamp.pack(LOW - 1, 0, 0)).isInstanceOf(IllegalArgumentException.class)
            .hasMessageContaining("[" + LOW + ", " + HIGH + "]");
        assertThatThrownBy(() -> AurogonTimestamp.pack(Long.MIN_VALUE / 2, 0, 0))
            .isInstanceOf(IllegalArgumentException.class);
    }
}
