package io.scythe.sim;

import io.scythe.bench.history.HistoryCollector;
import io.scythe.bench.history.SerializabilityChecker;
import io.scythe.bench.workload.YcsbSpec;
import io.scythe.fabric.ClockDeviation;
import io.scythe.fabric.ClockOptions;
import io.scythe.storage.ObjectLayout;
import io.scythe.txn.Access;
import io.scythe.txn.HistoryRecorder;
import io.vertx.core.json.JsonObject;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Aurogon's SPS mode ({@code aurogon:sps}, §4.4) in the simulator with skewed clocks (issue 20: injected offsets from
 * 1 us to 10 ms change throughput, never correctness). Each run checks the invariants, the conserved quantity, the
 * serializability of its history, and SPS itself, in virtual (real) time: two committed transactions touching one
 * record, at least one of them writing it, where the first finished before the second began, are in that order in
 * timestamp order, Aurogon's serial order ({@link #spsInversions}). The check can fail: raw host clocks 10 ms apart
 * without SPS ({@code aurogon-hostclock}) invert such pairs.
 */
class AurogonSpsSimTest extends SimVertxTest {
    /** What one run gave: its commits, its SPS inversions, and the SPS refusals its participants counted. */
    record Run(long committed, long inversions, long pairsChecked, long staleReads, long refusedWrites) {
    }

    /**
     * Every node's NIC and host clock off by up to {@code offset} from the others (1 us .. 10 ms): SPS holds, the
     * history is serializable, the run commits.
     */
    @ParameterizedTest
    @ValueSource(longs = {1_000, 100_000, 10_000_000})
    void shouldKeepSpsAndSerializabilityWhateverTheInjectedOffset(final long offsetNs) throws Exception {
        final Run run = run("aurogon:sps", offsetNs, 7);
        assertThat(run.committed()).isGreaterThan(0);
        assertThat(run.pairsChecked()).as("real-time ordered pairs sharing a written record").isGreaterThan(100);
        assertThat(run.inversions()).isZero();
    }

    /**
     * The check can fail: a reader that began after a writer of its record finished, with a smaller timestamp (a stale
     * read), is an inversion, and so is a writer under an earlier reader's timestamp; two readers, or overlapping
     * transactions, are not. (Raw host clocks 10 ms apart without SPS, {@code aurogon-hostclock}, showed none in a
     * run: their slow nodes' writers are refused, unfloored, until their transactions touch only cold records.)
     */
    @Test
    void shouldCountOnlyRealTimeOrderedPairsOnOneRecordAgainstTimestampOrder() {
        final Map<Long, Touched> byTs = new HashMap<>();
        byTs.put(100L, new Touched(new String[0], new String[] {"t/1"}));  // writes 1, finishes at 10
        byTs.put(50L, new Touched(new String[] {"t/1"}, new String[0]));   // reads 1 after: stale
        byTs.put(200L, new Touched(new String[] {"t/2"}, new String[0]));  // reads 2, finishes at 10
        byTs.put(60L, new Touched(new String[] {"t/2"}, new String[0]));   // reads 2 after: two readers, fine
        byTs.put(70L, new Touched(new String[0], new String[] {"t/2"}));   // writes 2 after 200's read: inverted
        byTs.put(40L, new Touched(new String[0], new String[] {"t/1"}));   // overlaps 100: not ordered in real time
        final List<TxnRecord> finished = List.of(committed(100, 0, 10), committed(50, 20, 30),
            committed(200, 0, 10), committed(60, 20, 30), committed(70, 20, 30), committed(40, 5, 40));
        assertThat(spsInversions(finished, byTs)).containsExactly(2, 2);
    }

    private static TxnRecord committed(final long ts, final long beganNs, final long finishedNs) {
        return new TxnRecord(0, ts, "t", TxnRecord.Kind.COMMITTED, 0, ts, 1, finishedNs - beganNs, beganNs,
            finishedNs);
    }

    /** One YCSB run (θ 0.99, 8 requests, 50 % RMW) with every node's clocks spread by {@code offsetNs}. */
    static Run run(final String protocol, final long offsetNs, final long seed) throws Exception {
        final HistoryCollector recorded = new HistoryCollector(ObjectLayout.LOADED_VERSION, protocol);
        final Map<Long, Touched> byTs = new HashMap<>();
        final HistoryRecorder touches = (txnId, commitTs, accesses) -> {
            recorded.committed(txnId, commitTs, accesses);
            synchronized (byTs) {
                byTs.put(commitTs, Touched.of(accesses));
            }
        };
        final List<TxnRecord> finished = new ArrayList<>();
        final SimOptions options = new SimOptions().protocol(protocol).computeNodes(2).loopsPerComputeNode(2)
            .clientsPerComputeNode(8).memoryNodes(2).durationNs(1_000_000).seed(seed)
            .clocks(new ClockOptions().spread(new ClockDeviation(offsetNs, 0), new ClockDeviation(offsetNs, 0))
                .seed(seed));
        final SimResult r = new Simulation(options, new YcsbSpec(10_000, 0.99, 8, 0.5)).recorder(touches)
            .listener(record -> {
                if (record.kind() == TxnRecord.Kind.COMMITTED) {
                    finished.add(record);
                }
            }).run(vertx);
        final JsonObject json = r.run().toJson();
        assertThat(r.invariantsOk()).as(String.valueOf(json.getJsonObject("sim"))).isTrue();
        assertThat(json.getJsonObject("conserved").getBoolean("ok")).isTrue();
        final SerializabilityChecker.Result history = SerializabilityChecker.check(recorded.history(), 3);
        assertThat(Explorer.historyFails(history, json)).as(Explorer.verdict(history)).isFalse();
        final long[] inversions = spsInversions(finished, byTs);
        final JsonObject stats = json.getJsonObject("sim").getJsonObject("protocol_stats", new JsonObject());
        final Run run = new Run(json.getLong("committed"), inversions[0], inversions[1],
            stats.getLong("sps_stale_reads", 0L), stats.getLong("sps_refused_writes", 0L));
        System.out.println("offset " + offsetNs + " ns, " + protocol + ": " + run + ", abort rate "
            + json.getDouble("abort_rate"));
        return run;
    }

    /** The records one committed transaction read and wrote, as "table/key". */
    record Touched(String[] read, String[] written) {
        static Touched of(final List<Access> accesses) {
            final List<String> read = new ArrayList<>();
            final List<String> written = new ArrayList<>();
            for (final Access a : accesses) {
                final String record = a.table + "/" + a.key;
                if (a.dirty || a.inserted) {
                    written.add(record);
                } else if (a.fetched || a.readAbsent) {
                    read.add(record);
                }
            }
            return new Touched(read.toArray(String[]::new), written.toArray(String[]::new));
        }
    }

    /** One committed transaction's touch of one record, in virtual time. */
    private record Touch(long ts, long beganNs, long finishedNs, boolean writes) {
    }

    /**
     * SPS in virtual time: {@code [inversions, pairs checked]}. A pair is two committed transactions touching one
     * record, one of them writing it, the first finished before the second began; an inversion is such a pair whose
     * second has the smaller timestamp. Every committed transaction must be found in the history by its timestamp.
     */
    static long[] spsInversions(final List<TxnRecord> finished, final Map<Long, Touched> byTs) {
        final Map<String, List<Touch>> byRecord = new HashMap<>();
        for (final TxnRecord t : finished) {
            final Touched touched = byTs.get(t.commitTs());
            assertThat(touched).as("the history's transaction at " + t.commitTs()).isNotNull();
            for (final String k : touched.read()) {
                byRecord.computeIfAbsent(k, x -> new ArrayList<>())
                    .add(new Touch(t.commitTs(), t.beganNs(), t.finishedNs(), false));
            }
            for (final String k : touched.written()) {
                byRecord.computeIfAbsent(k, x -> new ArrayList<>())
                    .add(new Touch(t.commitTs(), t.beganNs(), t.finishedNs(), true));
            }
        }
        long inversions = 0;
        long pairs = 0;
        for (final List<Touch> touches : byRecord.values()) {
            touches.sort(Comparator.comparingLong(Touch::finishedNs));
            final int n = touches.size();
            final long[] finishedAt = new long[n];
            final long[] maxWriterTs = new long[n + 1]; // over the first i touches, by finish
            final long[] maxAnyTs = new long[n + 1];
            final long[] writers = new long[n + 1];
            for (int i = 0; i < n; i++) {
                final Touch t = touches.get(i);
                finishedAt[i] = t.finishedNs();
                maxWriterTs[i + 1] = Math.max(maxWriterTs[i], t.writes() ? t.ts() : 0);
                maxAnyTs[i + 1] = Math.max(maxAnyTs[i], t.ts());
                writers[i + 1] = writers[i] + (t.writes() ? 1 : 0);
            }
            for (final Touch later : touches) {
                int before = Arrays.binarySearch(finishedAt, later.beganNs() - 1);
                before = before >= 0 ? before + 1 : -before - 1; // touches finished before it began (ties: sorted)
                while (before < n && finishedAt[before] < later.beganNs()) {
                    before++;
                }
                while (before > 0 && finishedAt[before - 1] >= later.beganNs()) {
                    before--;
                }
                pairs += later.writes() ? before : writers[before];
                final long earlierMax = later.writes() ? maxAnyTs[before] : maxWriterTs[before];
                if (earlierMax > later.ts()) {
                    inversions++;
                }
            }
        }
        return new long[] {inversions, pairs};
    }
}
