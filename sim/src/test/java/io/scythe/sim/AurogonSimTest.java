package io.scythe.sim;

import io.scythe.bench.history.HistoryCollector;
import io.scythe.bench.history.SerializabilityChecker;
import io.scythe.bench.workload.OltpSpec;
import io.scythe.storage.LogDb;
import io.scythe.storage.ObjectLayout;
import io.scythe.storage.Table;
import io.scythe.storage.TableSchema;
import io.scythe.txn.Txn;
import io.vertx.core.json.JsonObject;
import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.util.List;
import java.util.SplittableRandom;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** Aurogon (issue 20) in the simulator: serializable and conserving over many seeds, and its techniques' shape. */
class AurogonSimTest extends SimVertxTest {
    @ParameterizedTest
    @ValueSource(strings = {"aurogon", "aurogon-2l", "aurogon-pre", "aurogon-base", "dst-to"})
    void shouldKeepSmallBanksMoneyAndSerializabilityOverManySeeds(final String protocol) throws Exception {
        sweep(protocol, Explorer::options);
    }

    /** Keys that appear and disappear (inserts, deletes, reads of absent keys) under contention. */
    @ParameterizedTest
    @org.junit.jupiter.params.provider.CsvSource({"PHANTOM,aurogon", "PHANTOM,aurogon-base", "CHURN,aurogon",
        "CHURN,aurogon-base"})
    void shouldStaySerializableWhenKeysAppearAndDisappear(final Explorer.Workload workload, final String protocol)
        throws Exception {
        final ByteArrayOutputStream printed = new ByteArrayOutputStream();
        final List<Explorer.Failure> failures = Explorer.explore(vertx, workload, List.of(protocol), 1,
            SeedSweepTest.SEEDS, Explorer::options, new PrintStream(printed, true));
        System.out.print(printed);
        assertThat(failures).isEmpty();
    }

    /**
     * TPC-C (1 warehouse, 30 customers a district, 100 items, Zipf 0.99) over 25 seeds (more: {@code scythe sim
     * --explore N --workload tpcc --protocols aurogon}): rows of 504-680 bytes, more
     * than one RRPC bucket, are read in parts (READ, READ_MORE) and committed in parts (STAGE, COMMIT); every run
     * ends with no transaction left unfinished, no error, TPC-C's consistency conditions and a serializable history
     * (the explorer checks them all).
     */
    @ParameterizedTest
    @ValueSource(strings = {"aurogon", "aurogon-base", "dst-to"})
    void shouldRunTpccWithRowsLongerThanOneBucketOverManySeeds(final String protocol) throws Exception {
        final ByteArrayOutputStream printed = new ByteArrayOutputStream();
        final List<Explorer.Failure> failures = Explorer.explore(vertx, Explorer.Workload.TPCC, List.of(protocol), 1,
            TPCC_SEEDS, Explorer::options, new PrintStream(printed, true));
        System.out.print(printed);
        assertThat(failures).isEmpty();
        final java.util.regex.Matcher m = java.util.regex.Pattern.compile(
            "(\\d+) transactions committed, (\\d+) checked for serializability").matcher(printed.toString());
        assertThat(m.find()).as(printed.toString()).isTrue();
        assertThat(Long.parseLong(m.group(1))).isGreaterThan(TPCC_SEEDS * 2L); // without pre-attaching most RMWs abort
        assertThat(Long.parseLong(m.group(2))).isGreaterThan(TPCC_SEEDS * 5L);
    }

    private static final int TPCC_SEEDS = 25;

    /**
     * Aurogon's TPC-C/N and TPC-C/NP (§6.1) at high contention (one warehouse per server: 2 CNs, 2 warehouses, each
     * CN's clients on its own) with every order line remote ({@code local_item_ratio} 0) and medium contention (one
     * per loop): TPC-C's consistency conditions, W_YTD grown by exactly the committed payments, a serializable
     * history.
     */
    @ParameterizedTest
    @org.junit.jupiter.params.provider.CsvSource({"aurogon,N,SERVER,0", "aurogon,NP,SERVER,0", "dst-to,NP,SERVER,0",
        "aurogon,NP,LOOP,0.99"})
    void shouldRunAurogonsTpccMixes(final String protocol, final io.scythe.bench.workload.TpccSpec.Mix mix,
                                    final io.scythe.bench.workload.TpccSpec.Home home, final double localItemRatio)
        throws Exception {
        final int warehouses = home == io.scythe.bench.workload.TpccSpec.Home.SERVER ? 2 : 4;
        final HistoryCollector recorded = new HistoryCollector(ObjectLayout.LOADED_VERSION, "tpcc " + protocol);
        final SimResult r = new Simulation(new SimOptions().protocol(protocol).computeNodes(2).loopsPerComputeNode(2)
            .clientsPerComputeNode(4).memoryNodes(2).durationNs(600_000).seed(3),
            new io.scythe.bench.workload.TpccSpec(new io.scythe.bench.workload.Tpcc.Scale(warehouses, 30, 100,
                io.scythe.bench.workload.TpccSpec.headroomFor(0)), 0.99, 3, mix, localItemRatio, home))
            .recorder(recorded).run(vertx);
        final JsonObject run = checkedTpccRun(r, recorded);
        System.out.println("TPC-C/" + mix + " home " + home + " local items " + localItemRatio + ", " + protocol
            + ": committed " + run.getLong("committed") + ", abort rate " + run.getDouble("abort_rate"));
    }

    /**
     * A simulated CN's timestamps carry §4.1's fields: the clock, then the server id (CN c is server c + 1, as a
     * recovery run's ids name it) and the loop id (loop l is l + 1). Before, the simulator left the server id 0 and
     * put the cluster-wide loop number ({@code c * loops + l + 1}) in the loop field. Every (server, loop) pair of 2
     * CNs x 2 loops commits, no other pair appears, and the clock fields span no more than the run.
     */
    @Test
    void shouldPackTheServerAndLoopIdsIntoASimulatedCnsTimestamps() throws Exception {
        final java.util.Map<Integer, Long> byCoordinator = new java.util.TreeMap<>();
        final long[] clockRange = {Long.MAX_VALUE, Long.MIN_VALUE};
        final io.scythe.txn.HistoryRecorder timestamps = new io.scythe.txn.HistoryRecorder() {
            @Override
            public synchronized void committed(final long txnId, final long commitTs,
                                               final List<io.scythe.txn.Access> accesses) {
                final int server = io.scythe.txn.aurogon.AurogonTimestamp.server(commitTs);
                final int loop = io.scythe.txn.aurogon.AurogonTimestamp.loop(commitTs);
                byCoordinator.merge(server << 8 | loop, 1L, Long::sum);
                final long clock = io.scythe.txn.aurogon.AurogonTimestamp.clockNs(commitTs);
                clockRange[0] = Math.min(clockRange[0], clock);
                clockRange[1] = Math.max(clockRange[1], clock);
            }

            @Override
            public void inDoubt(final long txnId, final List<io.scythe.txn.Access> accesses) {
            }
        };
        final SimResult r = new Simulation(Explorer.options("aurogon", 1).computeNodes(2).loopsPerComputeNode(2)
            .clientsPerComputeNode(4).durationNs(300_000), Explorer.Workload.SMALLBANK.spec(1))
            .recorder(timestamps).run(vertx);
        assertThat(r.invariantsOk()).isTrue();
        assertThat(byCoordinator.keySet()).as("server << 8 | loop of every commit: " + byCoordinator)
            .containsExactly(1 << 8 | 1, 1 << 8 | 2, 2 << 8 | 1, 2 << 8 | 2);
        // The simulator's clocks start near 1 s; the commits' clock readings span the 300 us run (and its warm-up).
        assertThat(clockRange[0]).isPositive();
        assertThat(clockRange[1] - clockRange[0]).isBetween(1L, 2_000_000L);
    }

    /**
     * Skewed and drifting clocks change throughput, never correctness: two CNs, every host clock off by up to 100 us
     * and 100 ppm, every NIC's by up to 10 us and 20 ppm (drawn per seed).
     */
    @ParameterizedTest
    @ValueSource(strings = {"aurogon", "dst-to"})
    void shouldStaySerializableUnderSkewedAndDriftingClocks(final String protocol) throws Exception {
        sweep(protocol, (p, seed) -> Explorer.options(p, seed).computeNodes(2).clientsPerComputeNode(4)
            .clocks(new io.scythe.fabric.ClockOptions().spread(new io.scythe.fabric.ClockDeviation(10_000, 20),
                new io.scythe.fabric.ClockDeviation(100_000, 100)).seed(seed)));
    }

    private static void sweep(final String protocol,
                              final java.util.function.BiFunction<String, Long, SimOptions> options)
        throws Exception {
        final ByteArrayOutputStream printed = new ByteArrayOutputStream();
        final List<Explorer.Failure> failures = Explorer.explore(vertx, Explorer.Workload.SMALLBANK,
            List.of(protocol), 1, SeedSweepTest.SEEDS, options, new PrintStream(printed, true));
        System.out.print(printed);
        assertThat(failures).isEmpty();
        final java.util.regex.Matcher m = java.util.regex.Pattern.compile("(\\d+) checked for serializability")
            .matcher(printed.toString());
        assertThat(m.find()).isTrue();
        assertThat(Long.parseLong(m.group(1))).isGreaterThan(SeedSweepTest.SEEDS * 5L);
    }

    /**
     * Co-located servers (the paper's symmetric servers, {@code sim --colocate}): CN i and MN i on server i, TPC-C
     * homed by warehouse ({@code Tpcc.byWarehouse}) with each server's home warehouse on it. The run stays
     * serializable and consistent (TPC-C's checks read the rows where the placement put them), and a transaction's
     * accesses to its home warehouse take the local path: its median latency drops against the same run on split CNs
     * and MNs. {@code dst-to-eager} (installs at the write) runs co-located too, checked the same way. The measured
     * sweep: {@code ./scythe sim --workload tpcc --tpcc-mix np --tpcc-home server --warehouses 5
     * --protocols aurogon,dst-to --cns 5 --mns 5 --loops 2 --clients 8 --duration 2ms --colocate} (the note).
     */
    @Test
    void shouldRunTpccOnColocatedServersWithItsWarehousesHomed() throws Exception {
        final JsonObject colocated = homedTpcc("aurogon", true);
        final JsonObject split = homedTpcc("aurogon", false);
        homedTpcc("dst-to-eager", true);
        assertThat(colocated.getJsonObject("latency_us").getDouble("p50"))
            .isLessThan(split.getJsonObject("latency_us").getDouble("p50"));
        // 4 warehouses on 2 servers: 1 and 2 on server 0, 3 and 4 on server 1 (home loop: loop g's is g + 1).
        final io.scythe.txn.Placement byWarehouse = io.scythe.bench.workload.Tpcc.byWarehouse(4);
        assertThat(byWarehouse.partitionOf(io.scythe.bench.workload.Tpcc.STOCK,
            io.scythe.bench.workload.Tpcc.stockKey(2, 7), 2)).isEqualTo(0);
        assertThat(byWarehouse.partitionOf(io.scythe.bench.workload.Tpcc.ORDER_LINE,
            io.scythe.bench.workload.Tpcc.orderLineKey(3, 9, 3001, 15), 2)).isEqualTo(1);
        assertThatThrownBy(() -> new SimOptions().computeNodes(2).memoryNodes(3).colocate(true).validate())
            .hasMessageContaining("needs as many compute nodes as memory nodes, not cns=2 and mns=3");
    }

    /** A TPC-C run's checks: invariants, conservation, a serializable history and more than 10 commits. */
    private static JsonObject checkedTpccRun(final SimResult r, final HistoryCollector recorded) {
        final JsonObject run = r.run().toJson();
        assertThat(r.invariantsOk()).as(String.valueOf(run)).isTrue();
        assertThat(run.getJsonObject("conserved").getBoolean("ok")).isTrue();
        final SerializabilityChecker.Result history = SerializabilityChecker.check(recorded.history(), 3);
        assertThat(Explorer.historyFails(history, run)).as(Explorer.verdict(history)).isFalse();
        assertThat(run.getLong("committed")).isGreaterThan(10);
        return run;
    }

    private static JsonObject homedTpcc(final String protocol, final boolean colocate) throws Exception {
        final HistoryCollector recorded = new HistoryCollector(ObjectLayout.LOADED_VERSION, "tpcc " + protocol);
        final io.scythe.bench.workload.TpccSpec spec = new io.scythe.bench.workload.TpccSpec(
            new io.scythe.bench.workload.Tpcc.Scale(2, 30, 100, io.scythe.bench.workload.TpccSpec.headroomFor(0)),
            0.99, 3, io.scythe.bench.workload.TpccSpec.Mix.NP, 1.0, io.scythe.bench.workload.TpccSpec.Home.SERVER);
        final SimResult r = new Simulation(new SimOptions().protocol(protocol).computeNodes(2).loopsPerComputeNode(2)
            .clientsPerComputeNode(4).memoryNodes(2).durationNs(400_000).seed(3).colocate(colocate),
            colocate ? spec.placedByWarehouse() : spec).recorder(recorded).run(vertx);
        final JsonObject run = checkedTpccRun(r, recorded);
        System.out.println("TPC-C/NP homed, " + protocol + (colocate ? " co-located" : " split") + ": committed "
            + run.getLong("committed") + ", p50 " + run.getJsonObject("latency_us").getDouble("p50") + " us");
        return run;
    }

    /**
     * A hot counter: every transaction increments one of four counters (key 0 nine times in ten) with a
     * read-modify-write. The counters' sum must equal the committed increments (the run's conserved quantity) and
     * the history must be serializable, with pre-attaching on and off; pre-attaching closes the RMW's vulnerable
     * interval (§4.3), so it aborts far less.
     */
    @Test
    void shouldCountEveryCommittedIncrementOfAHotCounterWithAndWithoutPreattaching() throws Exception {
        final JsonObject with = hotCounter("aurogon-pre");
        final JsonObject without = hotCounter("aurogon-base");
        final double abortsWith = with.getDouble("abort_rate");
        final double abortsWithout = without.getDouble("abort_rate");
        assertThat(abortsWithout).isGreaterThan(0.3);
        assertThat(abortsWith).isLessThan(abortsWithout / 2);
        assertThat(with.getLong("committed")).isGreaterThan(without.getLong("committed"));
    }

    private static JsonObject hotCounter(final String protocol) throws Exception {
        final HistoryCollector recorded = new HistoryCollector(ObjectLayout.LOADED_VERSION, "counter " + protocol);
        final SimResult r = new Simulation(new SimOptions().protocol(protocol).computeNodes(2).loopsPerComputeNode(2)
            .clientsPerComputeNode(8).memoryNodes(2).durationNs(500_000).seed(5), new HotCounter()).recorder(recorded)
            .run(vertx);
        final JsonObject run = r.run().toJson();
        assertThat(r.invariantsOk()).as(protocol + ": " + run.getJsonObject("sim").getJsonArray("violations"))
            .isTrue();
        assertThat(run.getJsonObject("conserved").getBoolean("ok")).isTrue();
        final SerializabilityChecker.Result history = SerializabilityChecker.check(recorded.history(), 3);
        assertThat(Explorer.historyFails(history, run)).as(Explorer.verdict(history)).isFalse();
        assertThat(run.getLong("committed")).isGreaterThan(20);
        System.out.println("hot counter " + protocol + ": committed " + run.getLong("committed") + ", abort rate "
            + run.getDouble("abort_rate") + ", final " + run.getJsonObject("conserved").getLong("final"));
        return run;
    }

    /**
     * Four 8-byte counters, key 0 hot; each transaction adds 1 to one of them, read for update, or (plain) read and
     * then written (a lock protocol takes it Shared first and upgrades it at the write or the commit).
     */
    static final class HotCounter implements OltpSpec {
        static final String TABLE = "counter";
        static final long KEYS = 4;
        private final boolean plainRead;

        HotCounter() {
            this(false);
        }

        HotCounter(final boolean plainRead) {
            this.plainRead = plainRead;
        }

        @Override
        public String name() {
            return "hot-counter";
        }

        @Override
        public String quantity() {
            return "increments";
        }

        @Override
        public JsonObject params() {
            return new JsonObject().put("keys", KEYS);
        }

        @Override
        public void load(final LogDb db, final int part, final int parts) {
            final Table t = db.create(TableSchema.fixed(61, TABLE, 8, KEYS));
            final UnsafeBuffer zero = new UnsafeBuffer(new byte[8]);
            for (long k = part; k < KEYS; k += parts) {
                if (t.insert(k, zero, 0, 8, ObjectLayout.LOADED_VERSION) <= 0) {
                    throw new IllegalStateException("loading counter " + k + " failed");
                }
            }
        }

        @Override
        public Drawn draw(final SplittableRandom random) {
            final long key = random.nextInt(10) == 0 ? 1 + random.nextLong(KEYS - 1) : 0;
            return new Drawn("Increment", (Txn txn) -> (plainRead ? txn.read(TABLE, key)
                : txn.readForUpdate(TABLE, key)).map(v -> {
                final UnsafeBuffer next = new UnsafeBuffer(new byte[8]);
                next.putLong(0, v.getLong(0) + 1);
                txn.write(TABLE, key, next, 0, 8);
                return 1L;
            }));
        }

        @Override
        public long total(final List<LogDb> dbs) {
            long sum = 0;
            for (int p = 0; p < dbs.size(); p++) {
                final Table t = dbs.get(p).table(TABLE);
                for (long k = p; k < KEYS; k += dbs.size()) {
                    sum += io.scythe.txn.spi.ObjectProbe.committedLong(t, k);
                }
            }
            return sum;
        }
    }
}
