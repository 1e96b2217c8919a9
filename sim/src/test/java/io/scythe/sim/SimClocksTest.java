package io.scythe.sim;

import io.scythe.bridge.Bridge;
import io.scythe.bridge.IdlePolicy;
import io.scythe.bridge.NicClockReading;
import io.scythe.bridge.NodeClocks;
import io.scythe.fabric.ClockDeviation;
import io.scythe.fabric.ClockOptions;
import io.scythe.fabric.CostModel;
import io.scythe.fabric.DriftingClock;
import io.scythe.fabric.FabricOptions;
import io.scythe.fabric.Nic;
import io.scythe.fabric.local.LocalFabric;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Per-node clocks in virtual time: simulated loops of a CN and an MN on the local fabric, whose clocks are virtual
 * time plus each node's offset and drift, read through the fabric SPI and {@link NodeClocks}.
 */
class SimClocksTest {
    private static final long T0 = VirtualClock.EPOCH_NS;
    /** mn0's NIC: 250 ns ahead and 40 ppm fast; its host 1.5 ms behind and 25 ppm slow. */
    private static final ClockDeviation MN_NIC = new ClockDeviation(250, 40);
    private static final ClockDeviation MN_HOST = new ClockDeviation(-1_500_000, -25);
    private static final ClockDeviation CN_HOST = new ClockDeviation(800_000, 12.5);
    private final SimScheduler scheduler = new SimScheduler(3);
    private LocalFabric fabric;
    private Nic cn;
    private Nic mn;
    private SimLoop cnLoop;

    @BeforeEach
    void setUp() {
        fabric = new LocalFabric(new FabricOptions().costModel(CostModel.cx5()).clock(scheduler.clock())
            .clocks(new ClockOptions().nodeNic("mn0", MN_NIC).nodeHost("mn0", MN_HOST).host(CN_HOST)));
        cnLoop = loop("cn0");
        loop("mn0");
        cn = fabric.attachNow("cn0");
        mn = fabric.attachNow("mn0");
    }

    @AfterEach
    void tearDown() {
        Bridge.switchCurrent(null);
        fabric.close();
    }

    private SimLoop loop(final String name) {
        final SimLoop loop = scheduler.newLoop(name, (l, poll, work, requests) -> 100);
        final Bridge bridge = new Bridge(Thread.currentThread(), loop, scheduler.clock(), IdlePolicy.BACKOFF, 0);
        bridge.deferredExecutor(loop);
        loop.bridge(bridge);
        return loop;
    }

    private static long reads(final ClockDeviation deviation, final long elapsedNs) {
        return T0 + elapsedNs + deviation.offsetNs() + (long) Math.floor(elapsedNs * deviation.driftPpm() / 1e6);
    }

    @Test
    void shouldReadEachNodesClocksAtSeveralVirtualTimes() {
        final long[] at = {0, 1_000, 1_000_000, 250_000_000, 2_000_000_000L};
        final List<long[]> seen = new ArrayList<>();
        for (final long dt : at) {
            final Runnable read = () -> seen.add(new long[] {scheduler.clock().nanoTime() - T0, mn.nicClockNs(),
                mn.hostClockNs(), cn.nicClockNs(), cn.hostClockNs()});
            cnLoop.schedule(read, dt, TimeUnit.NANOSECONDS);
        }
        scheduler.runUntil(Long.MAX_VALUE, () -> false);
        assertThat(seen).hasSize(at.length);
        for (int i = 0; i < at.length; i++) {
            final long dt = at[i];
            assertThat(seen.get(i)[0]).isEqualTo(dt);
            assertThat(seen.get(i)[1]).as("mn0 NIC at +%d ns", dt).isEqualTo(reads(MN_NIC, dt));
            assertThat(seen.get(i)[2]).as("mn0 host at +%d ns", dt).isEqualTo(reads(MN_HOST, dt));
            assertThat(seen.get(i)[3]).as("cn0 NIC: perfect").isEqualTo(T0 + dt);
            assertThat(seen.get(i)[4]).as("cn0 host: the default").isEqualTo(reads(CN_HOST, dt));
        }
        // 2 s of 40 ppm fast is 80 us ahead of the start's 250 ns.
        assertThat(seen.get(at.length - 1)[1] - (T0 + 2_000_000_000L)).isEqualTo(250 + 80_000);
    }

    @Test
    void shouldReadTheRemoteNicClockAsTheReadExecutedWithinItsLatency() {
        final CostModel model = CostModel.cx5();
        final List<NicClockReading> readings = new ArrayList<>();
        final long[] finishedAt = new long[3];
        final long[] start = {1_000_000, 5_000_000, 400_000_000};
        for (int i = 0; i < start.length; i++) {
            final int n = i;
            final Runnable read = () -> NodeClocks.onLoop(cn).readRemoteNic("mn0").onSuccess(reading -> {
                readings.add(reading);
                finishedAt[n] = scheduler.clock().nanoTime();
            });
            cnLoop.schedule(read, start[i], TimeUnit.NANOSECONDS);
        }
        scheduler.runUntil(Long.MAX_VALUE, () -> false);
        assertThat(readings).hasSize(start.length);
        final DriftingClock mnNic = (DriftingClock) mn.nicClock();
        for (int i = 0; i < start.length; i++) {
            final NicClockReading r = readings.get(i);
            // cn0's NIC is perfect: its readings are virtual time.
            assertThat(r.sentNs()).isEqualTo(T0 + start[i]);
            assertThat(r.completedNs()).isLessThanOrEqualTo(finishedAt[i]);
            assertThat(r.remoteNs()).as("mn0 read its clock after the READ crossed the wire")
                .isGreaterThanOrEqualTo(mnNic.at(r.sentNs() + model.doorbellNs() + model.oneWayLatencyNs()));
            assertThat(r.remoteNs()).as("and before its response crossed back")
                .isLessThanOrEqualTo(mnNic.at(r.completedNs() - model.oneWayLatencyNs()));
            final long trueOffset = mnNic.at(r.sentNs() + r.roundTripNs() / 2) - (r.sentNs() + r.roundTripNs() / 2);
            assertThat(Math.abs(r.offsetNs() - trueOffset)).isLessThanOrEqualTo(r.roundTripNs() / 2);
        }
        assertThat(readings.get(2).offsetNs()).as("400 ms at 40 ppm: 16 us of drift on top of 250 ns")
            .isBetween(250L + 16_000 - 2_000, 250L + 16_000 + 2_000);
    }

    @Test
    void shouldGiveEverySimulatedNodeItsClocksFromTheOptions() {
        final SimOptions options = new SimOptions().clocks(new ClockOptions().nodeNic("mn0", MN_NIC)
            .spread(ClockDeviation.NONE, new ClockDeviation(1_000, 5)).seed(7));
        assertThat(options.validate().toJson().getJsonObject("clocks").getJsonObject("nodes")
            .getJsonObject("mn0").getJsonObject("nic").getLong("offsetNs")).isEqualTo(250);
        assertThat(options.clocks().hostOf("cn0")).isNotEqualTo(options.clocks().hostOf("cn1"));
        assertThat(new SimOptions().clocks().isPerfect()).as("none by default").isTrue();
    }
}
