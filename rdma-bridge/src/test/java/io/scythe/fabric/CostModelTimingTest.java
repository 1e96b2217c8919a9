package io.scythe.fabric;

import io.scythe.fabric.local.LocalFabric;
import io.vertx.core.json.JsonObject;
import org.agrona.concurrent.CachedNanoClock;
import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** The local provider's timing, checked against the cost model on a manual clock. */
class CostModelTimingTest {
    private static final long T0 = 1_000_000;
    private final CachedNanoClock clock = new CachedNanoClock();
    private LocalFabric fabric;

    @AfterEach
    void tearDown() {
        if (fabric != null) {
            fabric.close();
        }
    }

    private Nic[] nodes(final CostModel model, final String... names) {
        clock.update(T0);
        fabric = new LocalFabric(new FabricOptions().costModel(model).clock(clock));
        final Nic[] nics = new Nic[names.length];
        for (int i = 0; i < names.length; i++) {
            nics[i] = fabric.attachNow(names[i]);
        }
        return nics;
    }

    /**
     * Advances the clock 1 ns at a time until {@code cq} delivers {@code count} completions; returns their times
     * relative to the clock when called (when the requests were posted).
     */
    private List<Long> completionTimes(final CompletionQueue cq, final int count, final long limitNs) {
        final long base = clock.nanoTime();
        final List<Long> times = new ArrayList<>();
        final Recorder recorder = new Recorder();
        while (times.size() < count) {
            final int before = recorder.entries.size();
            cq.poll(clock.nanoTime(), recorder, 1024);
            for (int i = before; i < recorder.entries.size(); i++) {
                assertThat(recorder.entries.get(i).status()).isEqualTo(WcStatus.SUCCESS);
                times.add(clock.nanoTime() - base);
            }
            assertThat(clock.nanoTime() - base).as("completions overdue").isLessThan(limitNs);
            clock.advance(1);
        }
        return times;
    }

    @Test
    void shouldTakeTheLocalPathBetweenColocatedNodesAndTheNetworkToOthers() {
        final CostModel model = CostModel.cx5();
        clock.update(T0);
        fabric = new LocalFabric(new FabricOptions().costModel(model).clock(clock).colocate("server0", "cn0", "mn0")
            .clocks(new ClockOptions(new JsonObject().put("spread", new JsonObject().put("host",
                new JsonObject().put("offsetNs", 100_000).put("driftPpm", 100))))));
        final Nic cn0 = fabric.attachNow("cn0");
        final Nic mn0 = fabric.attachNow("mn0");
        final Nic mn1 = fabric.attachNow("mn1");
        final RemoteRegion local = mn0.register("r", 4096, MemoryKind.HOST).describe();
        final RemoteRegion remote = mn1.register("r", 4096, MemoryKind.HOST).describe();
        final CompletionQueue cq = cn0.createCompletionQueue(16);
        final QueuePair toLocal = cn0.connect("mn0", cq, new QpOptions()).result();
        final QueuePair toRemote = cn0.connect("mn1", cq, new QpOptions()).result();
        toLocal.post(new WorkRequest().read(local.address(), local.rkey(), new UnsafeBuffer(new byte[64]), 0, 64));
        final long localNs = completionTimes(cq, 1, 10_000).get(0);
        toRemote.post(new WorkRequest().read(remote.address(), remote.rkey(), new UnsafeBuffer(new byte[64]), 0, 64));
        final long remoteNs = completionTimes(cq, 1, 10_000).get(0);
        // 2 x 50 ns one way, and 64 B at 0.1 ns/B: a memory access, not a verb (at least 2 one-way latencies).
        assertThat(localNs).isEqualTo(2 * FabricOptions.LOCAL_PATH_NS + 6);
        assertThat(remoteNs).isGreaterThanOrEqualTo(2 * model.oneWayLatencyNs());
        // One server, one set of clocks; another server draws its own from the spread.
        assertThat(mn0.hostClock().nanoTime()).isEqualTo(cn0.hostClock().nanoTime());
        assertThat(mn0.nicClock().nanoTime()).isEqualTo(cn0.nicClock().nanoTime());
        assertThat(mn1.hostClock().nanoTime()).isNotEqualTo(cn0.hostClock().nanoTime());
        assertThat(fabric.options().colocated("cn0", "mn0")).isTrue();
        assertThat(fabric.options().colocated("cn0", "mn1")).isFalse();
        assertThatThrownBy(() -> new FabricOptions().colocate("s0", "cn0").colocate("s1", "cn0"))
            .hasMessageContaining("node cn0 is already on server s0");
    }

    @Test
    void shouldNotCompleteASmallReadBeforeItsModelledRoundTrip() {
        final CostModel model = CostModel.cx5();
        final Nic[] n = nodes(model, "cn", "mn");
        final RemoteRegion r = n[1].register("r", 4096, MemoryKind.HOST).describe();
        final CompletionQueue cq = n[0].createCompletionQueue(16);
        final QueuePair qp = n[0].connect("mn", cq, new QpOptions()).result();
        qp.post(new WorkRequest().read(r.address(), r.rkey(), new UnsafeBuffer(new byte[8]), 0, 8));
        final long cold = completionTimes(cq, 1, 10_000).get(0);
        clock.advance(10_000);
        qp.post(new WorkRequest().read(r.address(), r.rkey(), new UnsafeBuffer(new byte[8]), 0, 8));
        final long rtt = completionTimes(cq, 1, 10_000).get(0);
        assertThat(cold - rtt).as("the first verb fetches the QP context").isEqualTo(model.pcieRoundTripNs());
        final long floor = 2 * model.oneWayLatencyNs() + model.pcieRoundTripNs() + model.doorbellNs();
        assertThat(rtt).isGreaterThanOrEqualTo(2_000).isGreaterThanOrEqualTo(floor).isLessThan(floor + 200);
    }

    @Test
    void shouldMakeAWriteVisibleOnlyAfterItReachesTheResponder() {
        final CostModel model = CostModel.cx5();
        final Nic[] n = nodes(model, "cn", "mn");
        final MemoryRegion region = n[1].register("r", 4096, MemoryKind.HOST);
        final CompletionQueue cq = n[0].createCompletionQueue(16);
        final QueuePair qp = n[0].connect("mn", cq, new QpOptions()).result();
        qp.post(new WorkRequest().read(region.address(), region.rkey(), new UnsafeBuffer(new byte[8]), 0, 8));
        completionTimes(cq, 1, 10_000); // QP context now cached
        clock.advance(10_000);
        final UnsafeBuffer value = new UnsafeBuffer(new byte[8]);
        value.putLong(0, 99);
        qp.post(new WorkRequest().write(region.address(), region.rkey(), value, 0, 8).inline(true));
        clock.advance(model.oneWayLatencyNs() - 1);
        cq.poll(clock.nanoTime(), new Recorder(), 16);
        assertThat(region.buffer().getLong(0)).as("not yet arrived").isZero();
        clock.advance(model.doorbellNs() + 200);
        cq.poll(clock.nanoTime(), new Recorder(), 16);
        assertThat(region.buffer().getLong(0)).isEqualTo(99);
    }

    @Test
    void shouldSerialiseAtomicsOnOneAddressAndBeFasterOnDeviceMemory() {
        final CostModel model = CostModel.cx5();
        final Nic[] n = nodes(model, "cn", "mn");
        final RemoteRegion host = n[1].register("host", 4096, MemoryKind.HOST).describe();
        final RemoteRegion device = n[1].register("device", 4096, MemoryKind.DEVICE).describe();
        final long hostSpan = atomicSpan(n[0], host, 0, 8);
        final long hostSpreadSpan = atomicSpan(n[0], host, 8, 8);
        final long deviceSpan = atomicSpan(n[0], device, 0, 8);
        // 8 CAS on one host word from 8 QPs at once: the first holds the address for two PCIe transactions, each of
        // the 7 that found it held (a conflict) for the conflict hold (Scythe Table 1's Zipf row).
        assertThat(hostSpan).isGreaterThanOrEqualTo(model.atomicSameAddressNs(MemoryKind.HOST)
            + 6 * model.atomicConflictHoldNs(MemoryKind.HOST));
        // On 8 different words only the NIC-wide atomic rate (2.5 Mops: 400 ns each) serialises them.
        assertThat(hostSpreadSpan).isLessThan(hostSpan).isGreaterThanOrEqualTo(7 * 399);
        assertThat(deviceSpan).isLessThan(hostSpreadSpan / 10);
    }

    @Test
    void shouldGrowAConflictingAtomicsHoldWithTheQueueItJoinsInTheQueueProfile() {
        final CostModel queue = CostModel.profile(CostModel.PROFILE_CX5_QUEUE);
        final CostModel pcie = CostModel.profile(CostModel.PROFILE_CX5_PCIE);
        final long perQueued = queue.atomicQueuedHoldNs(MemoryKind.HOST);
        assertThat(perQueued).isEqualTo(CostModel.QUEUE_ATOMIC_QUEUED_HOLD_HOST_NS);
        assertThat(queue.atomicQueuedHoldNs(MemoryKind.DEVICE)).isZero();
        assertThat(pcie.atomicQueuedHoldNs(MemoryKind.HOST)).isZero();
        final Nic[] n = nodes(queue, "cn", "mn");
        final RemoteRegion host = n[1].register("host", 4096, MemoryKind.HOST).describe();
        final long oneWord = atomicSpan(n[0], host, 0, 8);
        final long spread = atomicSpan(n[0], host, 8, 8);
        // 8 on one word at once: the first holds it 600 ns, each of the 7 others finds at least the holder there and
        // holds it 600 ns + 2 x 2.4 us or more; the last completes after all holds.
        assertThat(oneWord).isGreaterThanOrEqualTo(6 * (queue.atomicConflictHoldNs(MemoryKind.HOST) + 2 * perQueued));
        // 8 words: no queue, no growth (only the atomic unit's 400 ns each)
        assertThat(spread).isLessThan(8 * 400 + 100);
    }

    @Test
    void shouldPipelineAtomicsOnDifferentWordsOfOneQueuePairAtTheAtomicUnitsRate() {
        final CostModel model = CostModel.cx5();
        final Nic[] n = nodes(model, "cn", "mn");
        final RemoteRegion host = n[1].register("host", 4096, MemoryKind.HOST).describe();
        final CompletionQueue cq = n[0].createCompletionQueue(64);
        final QueuePair qp = n[0].connect("mn", cq, new QpOptions()).result();
        final UnsafeBuffer result = new UnsafeBuffer(new byte[8 * 32]);
        final WorkRequest[] batch = new WorkRequest[32];
        for (int i = 0; i < 32; i++) {
            batch[i] = new WorkRequest().fetchAndAdd(host.address() + 8L * i, host.rkey(), 1, result, 8 * i)
                .signaled(true).wrId(i);
            if (i > 0) {
                batch[i - 1].link(batch[i]);
            }
        }
        qp.post(batch[0]);
        final List<Long> times = completionTimes(cq, 32, 100_000);
        final long span = times.get(31) - times.get(0);
        // Different words: only the NIC-wide unit (400 ns each) serialises them, not the 600 ns same-address hold.
        assertThat(span).isBetween(31 * 400L, 31 * 400L + 512);
        // CAS lock + READ in one doorbell (FORD): the READ does not wait for the CAS's address hold.
        final long cas = singleCompletion(cq, qp, new WorkRequest().compareAndSwap(host.address() + 512,
            host.rkey(), 0, 1, result, 0));
        final WorkRequest lock = new WorkRequest().compareAndSwap(host.address() + 1024, host.rkey(), 0, 1, result,
            0).wrId(1);
        lock.link(new WorkRequest().read(host.address() + 2048, host.rkey(), new UnsafeBuffer(new byte[64]), 0, 64)
            .signaled(true).wrId(2));
        final long lockAndRead = singleCompletion(cq, qp, lock);
        assertThat(lockAndRead).isLessThan(cas + 200);
    }

    /** Posts {@code wr} (a batch) after every resource fell free; returns when its last completion arrives. */
    private long singleCompletion(final CompletionQueue cq, final QueuePair qp, final WorkRequest wr) {
        clock.advance(1_000_000);
        int count = 0;
        for (WorkRequest w = wr; w != null; w = w.next()) {
            w.signaled(w.next() == null);
            count++;
        }
        qp.post(wr);
        return completionTimes(cq, 1, 100_000).get(0);
    }

    /** Posts one FAA on each of {@code qps} new QPs at once; returns first-to-last completion time. */
    private long atomicSpan(final Nic cn, final RemoteRegion region, final int stride, final int qps) {
        final CompletionQueue cq = cn.createCompletionQueue(64);
        final UnsafeBuffer result = new UnsafeBuffer(new byte[8 * qps]);
        for (int i = 0; i < qps; i++) {
            final QueuePair qp = cn.connect("mn", cq, new QpOptions()).result();
            qp.post(new WorkRequest().fetchAndAdd(region.address() + (long) i * stride, region.rkey(), 1, result,
                i * 8));
        }
        final long start = clock.nanoTime();
        final List<Long> times = completionTimes(cq, qps, 400_000);
        clock.update(start + 1_000_000); // let every resource fall free before the next measurement
        for (final QueuePair qp : cn.queuePairs()) {
            qp.close();
        }
        return times.get(times.size() - 1) - times.get(0);
    }

    @Test
    void shouldChargeBandwidthForLargeTransfers() {
        final CostModel model = CostModel.cx5();
        final Nic[] n = nodes(model, "cn", "mn");
        final int size = 1 << 20;
        final RemoteRegion r = n[1].register("r", size, MemoryKind.HOST).describe();
        final CompletionQueue cq = n[0].createCompletionQueue(16);
        final QueuePair qp = n[0].connect("mn", cq, new QpOptions()).result();
        qp.post(new WorkRequest().read(r.address(), r.rkey(), new UnsafeBuffer(new byte[size]), 0, size));
        final long elapsed = completionTimes(cq, 1, 1_000_000).get(0);
        final double wireNs = size * 8 / model.bandwidthGbps();
        assertThat((double) elapsed).isGreaterThanOrEqualTo(wireNs).isLessThan(wireNs + 5_000);
    }

    @Test
    void shouldPayTheResponderRateOncePerRequestSoMessageBatchingBeatsDoorbellBatchingForSmallData() {
        final CostModel model = CostModel.cx5();
        final Nic[] n = nodes(model, "cn", "mn");
        final RemoteRegion r = n[1].register("r", 1 << 16, MemoryKind.HOST).describe();
        final CompletionQueue cq = n[0].createCompletionQueue(128);
        final QueuePair qp = n[0].connect("mn", cq, new QpOptions()).result();
        final UnsafeBuffer src = new UnsafeBuffer(new byte[2048]);
        // 64 WRITEs of 16 B in one doorbell batch ...
        WorkRequest first = new WorkRequest().write(r.address(), r.rkey(), src, 0, 16).signaled(false);
        WorkRequest last = first;
        for (int i = 1; i < 64; i++) {
            last = last.link(new WorkRequest().write(r.address() + 16L * i, r.rkey(), src, 16 * i, 16)
                .signaled(i == 63));
        }
        qp.post(first);
        final long doorbellBatch = completionTimes(cq, 1, 100_000).get(0);
        clock.update(clock.nanoTime() + 1_000_000);
        // ... against the same 1 KiB as one message-batched WRITE.
        qp.post(new WorkRequest().write(r.address(), r.rkey(), src, 0, 1024));
        final long messageBatch = completionTimes(cq, 1, 100_000).get(0);
        assertThat(messageBatch).isLessThan(doorbellBatch);
        assertThat(doorbellBatch - messageBatch).isGreaterThanOrEqualTo((long) (60 * model.responderOpNs()));
    }

    @Test
    void shouldChargeAContextFetchWhenMoreQueuePairsAreActiveThanTheNicCaches() {
        final CostModel model = CostModel.fromJson(new JsonObject().put("qpCacheEntries", 8));
        final Nic[] n = nodes(model, "cn", "mn");
        final RemoteRegion r = n[1].register("r", 64, MemoryKind.HOST).describe();
        final CompletionQueue cq = n[0].createCompletionQueue(64);
        final UnsafeBuffer dst = new UnsafeBuffer(new byte[8]);
        final List<QueuePair> few = new ArrayList<>();
        final List<QueuePair> many = new ArrayList<>();
        for (int i = 0; i < 2; i++) {
            few.add(n[0].connect("mn", cq, new QpOptions()).result());
        }
        for (int i = 0; i < 64; i++) {
            many.add(n[0].connect("mn", cq, new QpOptions()).result());
        }
        final long fewMean = meanRoundTrip(cq, few, r, dst, 3);
        final long manyMean = meanRoundTrip(cq, many, r, dst, 3);
        // 2 QPs stay cached; 64 cycling through 8 entries miss nearly every time.
        assertThat(manyMean - fewMean).isGreaterThanOrEqualTo(model.pcieRoundTripNs() * 3 / 4);
    }

    /** Mean round trip of one READ at a time, cycling through {@code qps} {@code rounds} times. */
    private long meanRoundTrip(final CompletionQueue cq, final List<QueuePair> qps, final RemoteRegion r,
                               final UnsafeBuffer dst, final int rounds) {
        long total = 0;
        for (int round = -1; round < rounds; round++) { // round -1 warms the cache: not counted
            for (final QueuePair qp : qps) {
                clock.advance(10_000);
                qp.post(new WorkRequest().read(r.address(), r.rkey(), dst, 0, 8));
                final long rtt = completionTimes(cq, 1, 10_000).get(0);
                total += round < 0 ? 0 : rtt;
            }
        }
        return total / (rounds * qps.size());
    }

    @Test
    void shouldCompleteAtTheNextPollWithTheZeroProfile() {
        final Nic[] n = nodes(CostModel.zero(), "cn", "mn");
        final RemoteRegion r = n[1].register("r", 64, MemoryKind.HOST).describe();
        final CompletionQueue cq = n[0].createCompletionQueue(16);
        final QueuePair qp = n[0].connect("mn", cq, new QpOptions()).result();
        qp.post(new WorkRequest().read(r.address(), r.rkey(), new UnsafeBuffer(new byte[8]), 0, 8));
        final Recorder recorder = new Recorder();
        assertThat(cq.poll(clock.nanoTime(), recorder, 16)).isPositive();
        assertThat(recorder.entries).hasSize(1);
        assertThat(CostModel.zero().isFree()).isTrue();
        assertThat(CostModel.cx5().isFree()).isFalse();
    }

    @Test
    void shouldOverrideProfileKeysFromJsonAndRefuseBadOnes() {
        final CostModel model = CostModel.fromJson(new JsonObject().put("profile", "cx5").put("oneWayLatencyNs", 0));
        assertThat(model.oneWayLatencyNs()).isZero();
        assertThat(model.pcieRoundTripNs()).isEqualTo(CostModel.DEFAULT_PCIE_ROUND_TRIP_NS);
        assertThat(CostModel.fromJson(model.toJson()).toJson()).isEqualTo(model.toJson());
        assertThatThrownBy(() -> CostModel.fromJson(new JsonObject().put("oneWayLatncyNs", 5)))
            .hasMessageContaining("unknown cost-model keys [oneWayLatncyNs]");
        assertThatThrownBy(() -> CostModel.fromJson(new JsonObject().put("doorbellNs", -1)))
            .hasMessageContaining("doorbellNs");
        assertThatThrownBy(() -> CostModel.fromJson(new JsonObject().put("atomicBuckets", 1000)))
            .hasMessageContaining("power of two");
        assertThatThrownBy(() -> CostModel.profile("cx9")).hasMessageContaining("unknown cost-model profile");
    }

    @Test
    void shouldDifferFromCx5PcieOnlyInTheHostAtomicFit() {
        // cx5-pcie is the default before issue 22's fit: no atomic pipeline, a conflict holds as long as no conflict.
        final JsonObject pcie = CostModel.profile(CostModel.PROFILE_CX5_PCIE).toJson();
        final JsonObject cx5 = CostModel.cx5().toJson();
        assertThat(pcie.getLong("atomicPipelineHostNs")).isZero();
        assertThat(pcie.getLong("atomicConflictHoldHostNs")).isEqualTo(pcie.getLong("atomicSameAddressHostNs"));
        assertThat(cx5.getLong("atomicPipelineHostNs")).isEqualTo(CostModel.DEFAULT_ATOMIC_PIPELINE_HOST_NS);
        assertThat(cx5.getLong("atomicConflictHoldHostNs")).isEqualTo(CostModel.DEFAULT_ATOMIC_CONFLICT_HOLD_HOST_NS);
        for (final String key : new String[] {"profile", "atomicPipelineHostNs", "atomicConflictHoldHostNs"}) {
            pcie.remove(key);
            cx5.remove(key);
        }
        assertThat(pcie).isEqualTo(cx5);
    }

    @Test
    void shouldDifferFromCx5PcieOnlyInTheTable1AtomicRate() {
        final CostModel table1 = CostModel.profile(CostModel.PROFILE_CX5_TABLE1);
        assertThat(table1.label()).isEqualTo("cx5-table1");
        assertThat(table1.atomicOpNs(io.scythe.fabric.MemoryKind.HOST)).isCloseTo(1000 / 1.76,
            org.assertj.core.api.Assertions.within(0.01));
        final JsonObject rest = table1.toJson();
        rest.remove("atomicRateHostMops");
        rest.remove("profile");
        final JsonObject cx5 = CostModel.profile(CostModel.PROFILE_CX5_PCIE).toJson();
        cx5.remove("atomicRateHostMops");
        cx5.remove("profile");
        assertThat(rest).isEqualTo(cx5); // READ RTT, WRITE rate, PCIe and address hold unchanged
        assertThat(CostModel.fromJson(new JsonObject().put("profile", "cx5-table1").put("doorbellNs", 0)).label())
            .isEqualTo("cx5-table1*");
    }
}
