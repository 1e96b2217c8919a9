package io.scythe.fabric;

import io.scythe.fabric.local.LocalFabric;
import io.vertx.core.json.JsonObject;
import org.agrona.concurrent.CachedNanoClock;
import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * Per-node clocks on the local provider, on a manual clock standing for true time: each node's host and NIC clock
 * with its own offset and drift, the NIC clock read one-sided by a peer, and completion timestamps.
 */
class NicClockTest {
    private static final long T0 = 5_000_000_000L;
    private static final long MS = 1_000_000;
    private final CachedNanoClock trueTime = new CachedNanoClock();
    private LocalFabric fabric;

    @AfterEach
    void tearDown() {
        if (fabric != null) {
            fabric.close();
        }
    }

    private LocalFabric fabric(final CostModel model, final ClockOptions clocks) {
        trueTime.update(T0);
        fabric = new LocalFabric(new FabricOptions().costModel(model).clock(trueTime).clocks(clocks));
        return fabric;
    }

    @Test
    void shouldReadEachNodesOwnOffsetAndDriftAtSeveralTrueTimes() {
        // mn's NIC: +300 ns and 50 ppm fast; its host: 2 ms behind and 20 ppm slow; cn: the defaults.
        fabric(CostModel.zero(), new ClockOptions()
            .nic(new ClockDeviation(-40, 0)).host(new ClockDeviation(1_000, 0))
            .nodeNic("mn", new ClockDeviation(300, 50)).nodeHost("mn", new ClockDeviation(-2 * MS, -20)));
        final Nic mn = fabric.attachNow("mn");
        final Nic cn = fabric.attachNow("cn");
        final long[] elapsed = {0, 1, 999_999, MS, 1_000 * MS, 3_600_000 * MS};
        for (final long dt : elapsed) {
            trueTime.update(T0 + dt);
            assertThat(mn.nicClockNs()).as("mn NIC at +%d ns", dt).isEqualTo(T0 + dt + 300 + Math.floorDiv(dt * 50, 1_000_000));
            assertThat(mn.hostClockNs()).as("mn host at +%d ns", dt)
                .isEqualTo(T0 + dt - 2 * MS + Math.floorDiv(-dt * 20, 1_000_000));
            assertThat(cn.nicClockNs()).isEqualTo(T0 + dt - 40);
            assertThat(cn.hostClockNs()).isEqualTo(T0 + dt + 1_000);
        }
        trueTime.update(T0 + 1_000 * MS);
        assertThat(mn.nicClockNs() - cn.nicClockNs()).as("after 1 s, 50 ppm is 50 us").isEqualTo(340 + 50_000);
    }

    @Test
    void shouldNeverRunBackwardsWithNegativeDrift() {
        final DriftingClock slow = new DriftingClock(trueTime, new ClockDeviation(0, -ClockDeviation.MAX_DRIFT_PPM),
            0);
        long previous = Long.MIN_VALUE;
        for (long t = 0; t < 10_000; t++) {
            final long reading = slow.at(t);
            assertThat(reading).isGreaterThanOrEqualTo(previous);
            previous = reading;
        }
        assertThat(slow.at(10_000_000)).isEqualTo(10_000_000 - 10_000);
    }

    @Test
    void shouldReadARemoteNicClockAsTheReadExecutesThereTimedAsADeviceRead() {
        final CostModel model = CostModel.cx5();
        fabric(model, new ClockOptions().nodeNic("mn", new ClockDeviation(7_000, 0))
            .nodeNic("cn", new ClockDeviation(-500, 0)));
        final Nic cn = fabric.attachNow("cn");
        final Nic mn = fabric.attachNow("mn");
        final RemoteRegion device = mn.register("dm", 64, MemoryKind.DEVICE).describe();
        final CompletionQueue cq = cn.createCompletionQueue(16);
        final QueuePair qp = cn.connect("mn", cq, new QpOptions()).result();
        final UnsafeBuffer dst = new UnsafeBuffer(new byte[8]);
        // Warm the QP context, then time an 8-byte READ of device memory to compare the clock read with.
        qp.post(new WorkRequest().read(device.address(), device.rkey(), dst, 0, 8));
        completeOneNsAtATime(cq);
        trueTime.advance(10_000);
        final long deviceReadNs = completeOneNsAtATime(cq, qp, new WorkRequest().read(device.address(),
            device.rkey(), dst, 0, 8))[0];
        trueTime.advance(10_000);
        final RemoteRegion word = NicClockWord.of("mn");
        final long postedAt = trueTime.nanoTime();
        final long[] done = completeOneNsAtATime(cq, qp, new WorkRequest().read(word.address(), word.rkey(), dst, 0,
            NicClockWord.LENGTH));
        final long roundTrip = done[0];
        assertThat(roundTrip).as("timed as a READ of device memory").isEqualTo(deviceReadNs);
        final long executedAt = dst.getLong(0) - 7_000; // mn's clock has no drift: its reading less its offset
        assertThat(executedAt - postedAt).as("the READ crossed the wire before it read the clock")
            .isGreaterThanOrEqualTo(model.doorbellNs() + model.oneWayLatencyNs());
        assertThat(postedAt + roundTrip - executedAt).as("and the response crossed it back")
            .isGreaterThanOrEqualTo(model.oneWayLatencyNs());
        assertThat(done[1]).as("completion timestamp: cn's clock when the completion came")
            .isEqualTo(postedAt + roundTrip - 500);
    }

    @Test
    void shouldReadTheClockAtPostWithAFreeCostModel() {
        fabric(CostModel.zero(), new ClockOptions().nodeNic("mn", new ClockDeviation(123, 0)));
        final Nic cn = fabric.attachNow("cn");
        fabric.attachNow("mn");
        final CompletionQueue cq = cn.createCompletionQueue(16);
        final QueuePair qp = cn.connect("mn", cq, new QpOptions()).result();
        final UnsafeBuffer dst = new UnsafeBuffer(new byte[8]);
        trueTime.update(T0 + 77);
        qp.post(new WorkRequest().read(NicClockWord.ADDRESS, NicClockWord.RKEY, dst, 0, 8));
        trueTime.update(T0 + 500);
        final long[] stamp = new long[1];
        assertThat(cq.poll(trueTime.nanoTime(), (q, id, op, st, len) -> stamp[0] = cq.completionTimestampNs(), 16))
            .isPositive();
        assertThat(dst.getLong(0)).isEqualTo(T0 + 77 + 123);
        assertThat(stamp[0]).as("completed when polled: nothing is modelled").isEqualTo(T0 + 500);
    }

    @Test
    void shouldDrawTheSameSpreadForANodeWhereverItIsDrawn() {
        final ClockOptions spread = new ClockOptions().nic(new ClockDeviation(1_000, 0))
            .spread(new ClockDeviation(100, 2), new ClockDeviation(1_000_000, 30)).seed(9);
        final ClockOptions again = new ClockOptions(new JsonObject(spread.toJson().encode()));
        final java.util.Set<Long> offsets = new java.util.HashSet<>();
        for (int i = 0; i < 50; i++) {
            final String node = "cn" + i;
            final ClockDeviation nic = spread.nicOf(node);
            assertThat(nic.offsetNs()).isBetween(900L, 1_100L);
            assertThat(nic.driftPpm()).isBetween(-2.0, 2.0);
            assertThat(spread.hostOf(node).offsetNs()).isBetween(-1_000_000L, 1_000_000L);
            assertThat(spread.hostOf(node).driftPpm()).isBetween(-30.0, 30.0);
            assertThat(again.nicOf(node)).isEqualTo(nic);
            assertThat(again.hostOf(node)).isEqualTo(spread.hostOf(node));
            offsets.add(spread.hostOf(node).offsetNs());
        }
        assertThat(offsets).as("nodes draw different clocks").hasSizeGreaterThan(40);
        assertThat(new ClockOptions(spread).seed(10).hostOf("cn0")).isNotEqualTo(spread.hostOf("cn0"));
        assertThat(new ClockOptions(spread).nodeHost("cn0", ClockDeviation.NONE).hostOf("cn0"))
            .as("a node's own clock replaces default and spread").isEqualTo(ClockDeviation.NONE);
    }

    @Test
    void shouldReadClocksFromFabricJsonAndRefuseBadOnes() {
        final FabricOptions options = new FabricOptions(new JsonObject().put("clocks", new JsonObject()
            .put("host", new JsonObject().put("offsetNs", 1_500_000).put("driftPpm", -12.5))
            .put("nodes", new JsonObject().put("mn0", new JsonObject()
                .put("nic", new JsonObject().put("offsetNs", 250))))));
        assertThat(options.clocks().hostOf("cn0")).isEqualTo(new ClockDeviation(1_500_000, -12.5));
        assertThat(options.clocks().nicOf("mn0")).isEqualTo(new ClockDeviation(250, 0));
        assertThat(options.clocks().nicOf("cn0")).isEqualTo(ClockDeviation.NONE);
        assertThat(new FabricOptions(options.toJson()).clocks().toJson()).isEqualTo(options.clocks().toJson());
        assertThat(new FabricOptions().clocks().isPerfect()).isTrue();
        assertThatThrownBy(() -> new FabricOptions(new JsonObject().put("clocks", new JsonObject()
            .put("nic", new JsonObject().put("offset", 5)))))
            .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("[offset]").hasMessageContaining("clocks.nic");
        assertThatThrownBy(() -> new FabricOptions(new JsonObject().put("clocks", new JsonObject()
            .put("host", new JsonObject().put("driftPpm", 5_000)))))
            .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("driftPpm=5000");
        assertThatThrownBy(() -> new FabricOptions(new JsonObject().put("clocks", new JsonObject()
            .put("spread", new JsonObject().put("nic", new JsonObject().put("offsetNs", -1))))))
            .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("must not be negative");
    }

    /** Polls, advancing true time 1 ns at a time, until the one outstanding request completes. */
    private void completeOneNsAtATime(final CompletionQueue cq) {
        while (cq.outstanding() > 0) {
            cq.poll(trueTime.nanoTime(), (q, id, op, st, len) -> assertThat(st).isEqualTo(WcStatus.SUCCESS), 16);
            if (cq.outstanding() > 0) {
                trueTime.advance(1);
            }
        }
    }

    /** Posts {@code wr} and completes it; returns its round trip and its completion timestamp. */
    private long[] completeOneNsAtATime(final CompletionQueue cq, final QueuePair qp, final WorkRequest wr) {
        final long start = trueTime.nanoTime();
        assertThat(qp.post(wr)).isEqualTo(QueuePair.POST_OK);
        final long[] stamp = {Long.MIN_VALUE};
        while (cq.outstanding() > 0) {
            cq.poll(trueTime.nanoTime(), (q, id, op, st, len) -> {
                assertThat(st).isEqualTo(WcStatus.SUCCESS);
                stamp[0] = cq.completionTimestampNs();
            }, 16);
            if (cq.outstanding() > 0) {
                trueTime.advance(1);
            }
        }
        return new long[] {trueTime.nanoTime() - start, stamp[0]};
    }
}
