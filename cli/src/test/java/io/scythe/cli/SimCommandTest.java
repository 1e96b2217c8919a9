package io.scythe.cli;

import io.vertx.core.json.JsonObject;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;

import static org.assertj.core.api.Assertions.assertThat;

class SimCommandTest {
    private static int run(final StringWriter out, final StringWriter err, final String... args) {
        final CommandLine cli = ScytheCommand.commandLine();
        cli.setOut(new PrintWriter(out, true));
        cli.setErr(new PrintWriter(err, true));
        return cli.execute(args);
    }

    @Test
    void shouldWriteTheBenchSchemaWithASimObjectInVirtualTime(@TempDir final Path dir) throws Exception {
        final int code = run(new StringWriter(), new StringWriter(), "sim", "--workload", "smallbank", "--accounts",
            "1000", "--protocols", "scythe,ford-occ", "--cns", "2", "--loops", "2", "--clients", "4", "--mns", "3",
            "--tso-proxies", "2", "--duration", "300us", "--seed", "5", "--check-history", "--out", dir.toString());
        assertThat(code).isZero();
        final JsonObject results = new JsonObject(Files.readString(dir.resolve("results.json")));
        assertThat(results.getString("workload")).isEqualTo("smallbank");
        assertThat(results.getJsonArray("runs")).hasSize(2);
        for (int i = 0; i < 2; i++) {
            final JsonObject run = results.getJsonArray("runs").getJsonObject(i);
            assertThat(run.fieldNames()).contains("protocol", "clients", "committed", "committed_per_s",
                "abort_rate", "latency_us", "invariants_ok", "stages_us", "conserved", "locks_left_held", "sim");
            assertThat(run.getInteger("clients")).isEqualTo(8); // 2 CNs x 4
            assertThat(run.getBoolean("invariants_ok")).isTrue();
            final JsonObject verdict = run.getJsonObject("serializability");
            assertThat(verdict.getBoolean("serializable")).isTrue();
            assertThat(verdict.getLong("transactions")).isPositive();
            assertThat(verdict.getLong("cycles_found")).isZero();
            assertThat(verdict.getJsonObject("edges").getLong("rw")).isPositive();
            assertThat(run.getJsonObject("sim").getInteger("seed")).isEqualTo(5);
        }
    }

    @Test
    void shouldRunTatpWithItsSubscribersAndKeepItsConservedRows(@TempDir final Path dir) throws Exception {
        final StringWriter out = new StringWriter();
        final int code = run(out, new StringWriter(), "sim", "--workload", "tatp", "--subscribers", "500",
            "--protocols", "ford-occ", "--cns", "1", "--loops", "1", "--clients", "2", "--mns", "2", "--duration",
            "100us", "--seed", "3", "--out", dir.toString());
        assertThat(code).as(out.toString()).isZero();
        final JsonObject results = new JsonObject(Files.readString(dir.resolve("results.json")));
        assertThat(results.getString("workload")).isEqualTo("tatp");
        final JsonObject run = results.getJsonArray("runs").getJsonObject(0);
        assertThat(run.getLong("subscribers")).isEqualTo(500);
        assertThat(run.getLong("committed")).isPositive();
        assertThat(run.getBoolean("invariants_ok")).isTrue();
        assertThat(run.getJsonObject("conserved").getString("quantity")).isEqualTo("call_forwarding_rows");
    }

    @Test
    void shouldRunReplicasSideBySideWithOneSidedLookupsAndCompareEveryBackup(@TempDir final Path dir)
        throws Exception {
        final StringWriter out = new StringWriter();
        final int code = run(out, new StringWriter(), "sim", "--workload", "smallbank", "--accounts", "1000",
            "--protocols", "ford-occ", "--cns", "1", "--loops", "2", "--clients", "4", "--mns", "3", "--duration",
            "200us", "--replicas", "0,2", "--lookup", "onesided", "--redo-log", "--seed", "2", "--out",
            dir.toString());
        assertThat(code).as(out.toString()).isZero();
        final JsonObject results = new JsonObject(Files.readString(dir.resolve("results.json")));
        assertThat(results.getJsonArray("runs")).hasSize(2);
        final JsonObject none = results.getJsonArray("runs").getJsonObject(0);
        final JsonObject threeWay = results.getJsonArray("runs").getJsonObject(1);
        assertThat(none.getInteger("replicas")).isZero();
        assertThat(none.containsKey("replica_differences")).isFalse();
        assertThat(threeWay.getInteger("replicas")).isEqualTo(2);
        assertThat(threeWay.getString("lookup")).isEqualTo("onesided");
        assertThat(threeWay.getBoolean("redo_log")).isTrue();
        assertThat(threeWay.getInteger("replica_differences")).isZero();
        assertThat(threeWay.getBoolean("invariants_ok")).isTrue();
        assertThat(threeWay.getLong("committed")).isPositive();
    }

    @Test
    void shouldLoadTheCalibratedProfileFromConfFabric() throws Exception {
        // The documented YAML and the named profile are the same model (the file's comments carry the derivation).
        final Path yaml = Path.of(System.getProperty("user.dir")).getParent().resolve("conf/fabric/cx5-table1.yaml");
        assertThat(BenchCommand.readCostModel(yaml).toJson())
            .isEqualTo(io.scythe.fabric.CostModel.profile("cx5-table1").toJson());
    }

    @Test
    void shouldLoadTheQueueProfileFromConfFabric() throws Exception {
        final Path yaml = Path.of(System.getProperty("user.dir")).getParent().resolve("conf/fabric/cx5-queue.yaml");
        assertThat(BenchCommand.readCostModel(yaml).toJson())
            .isEqualTo(io.scythe.fabric.CostModel.profile("cx5-queue").toJson());
    }

    @Test
    void shouldPrintTable1NextToOurCasNumbers(@TempDir final Path dir) throws Exception {
        final StringWriter out = new StringWriter();
        final java.io.PrintStream stdout = System.out;
        final java.io.ByteArrayOutputStream printed = new java.io.ByteArrayOutputStream();
        System.setOut(new java.io.PrintStream(printed, true));
        final int code;
        try {
            code = run(out, new StringWriter(), "sim", "--workload", "cas", "--profile", "cx5-table1", "--locks",
                "1000", "--thetas", "0,0.99", "--loops", "8", "--clients", "16", "--mns", "1", "--duration", "300us",
                "--out", dir.toString());
        } finally {
            System.setOut(stdout);
        }
        assertThat(code).isZero();
        assertThat(printed.toString()).contains("Scythe Table 1 (uniform): p50 8.4 us  p90 16.3 us  1.76 Mops")
            .contains("Scythe Table 1 (Zipfian): p50 11.7 us  p90 72.9 us  0.42 Mops");
        final JsonObject results = new JsonObject(Files.readString(dir.resolve("results.json")));
        assertThat(results.getString("workload")).isEqualTo("cas");
        assertThat(results.getJsonArray("runs").getJsonObject(0).getJsonObject("latency_us").fieldNames())
            .contains("p50", "p90");
    }

    @Test
    void shouldReportTheUnsafeProtocolsCycleWithTheReplayAndWriteAHistoryScytheCheckReads(@TempDir final Path dir)
        throws Exception {
        final Path file = dir.resolve("unsafe.history");
        final String[] args = {"sim", "--accounts", "50", "--mix", "scythe", "--protocols", "unsafe", "--loops", "2",
            "--clients", "6", "--duration", "150us", "--jitter", "2us", "--seed", "3", "--check-history", "--history",
            file.toString(), "--out", dir.toString()};
        final java.io.PrintStream saved = System.out;
        final java.io.PrintStream savedErr = System.err;
        final java.io.ByteArrayOutputStream bytes = new java.io.ByteArrayOutputStream();
        final java.io.ByteArrayOutputStream errBytes = new java.io.ByteArrayOutputStream();
        System.setOut(new java.io.PrintStream(bytes, true));
        System.setErr(new java.io.PrintStream(errBytes, true));
        final int code;
        try {
            code = run(new StringWriter(), new StringWriter(), args);
        } finally {
            System.setOut(saved);
            System.setErr(savedErr);
        }
        assertThat(code).isEqualTo(1);
        assertThat(bytes.toString()).contains("history NOT SERIALIZABLE").contains("G2 cycle of");
        assertThat(errBytes.toString()).contains("replay: scythe sim " + String.join(" ", args).substring(4));
        final JsonObject run = new JsonObject(Files.readString(dir.resolve("results.json")))
            .getJsonArray("runs").getJsonObject(0);
        assertThat(run.getBoolean("invariants_ok")).isFalse();
        final JsonObject verdict = run.getJsonObject("serializability");
        assertThat(verdict.getBoolean("serializable")).isFalse();
        assertThat(verdict.getLong("cycles_found")).isPositive();
        assertThat(verdict.getJsonArray("cycles").getJsonObject(0).getString("anomaly")).isEqualTo("G2");
        assertThat(run.getJsonObject("history").getLong("transactions")).isEqualTo(verdict.getLong("transactions"));
        // The file holds the same history: scythe check finds the same cycles.
        final StringWriter checked = new StringWriter();
        assertThat(run(checked, new StringWriter(), "check", file.toString())).isEqualTo(1);
        assertThat(checked.toString()).contains(verdict.getLong("transactions") + " transactions")
            .contains("NOT SERIALIZABLE: " + verdict.getLong("cycles_found") + " cycle(s)");
    }

    @Test
    void shouldRefuseBadInputWithOneClearLine() {
        final StringWriter err = new StringWriter();
        assertThat(run(new StringWriter(), err, "sim", "--workload", "nosuch")).isEqualTo(2);
        assertThat(err.toString()).contains("--workload nosuch: accepts one of smallbank, ycsb, tatp, tpcc, phantom, churn, lock, cas, blink, gcl, tso, all").doesNotContain("\tat ");
        final StringWriter errBlink = new StringWriter(); // not crash-safe without a redo log: no write-through
        assertThat(run(new StringWriter(), errBlink, "sim", "--workload", "blink", "--protocols", "selcc-2pl",
            "--crash-cn", "0")).isEqualTo(2);
        assertThat(errBlink.toString()).contains("--crash-cn with the blink workload needs --redo-log");
        final StringWriter errSingle = new StringWriter(); // single tree operations: the blink workload's
        assertThat(run(new StringWriter(), errSingle, "sim", "--workload", "smallbank", "--blink-single"))
            .isEqualTo(2);
        assertThat(errSingle.toString()).contains("--blink-single goes with --workload blink and without --blink-txn");
        // The blink explorer is an Explorer workload: the topology, --duration and --redo-log are carried into its
        // seeds (one seed runs), what fixes its size is refused by the explorer's own rule.
        final StringWriter errBlinkCarried = new StringWriter();
        assertThat(run(new StringWriter(), errBlinkCarried, "sim", "--explore", "1", "--workload", "blink",
            "--protocols", "selcc-2pl", "--cns", "3", "--duration", "100us", "--redo-log", "--seed", "4"))
            .as(errBlinkCarried.toString()).isEqualTo(0);
        final StringWriter errBlinkSeeds = new StringWriter();
        assertThat(run(new StringWriter(), errBlinkSeeds, "sim", "--explore", "1", "--workload", "blink",
            "--protocols", "selcc-2pl", "--records", "50", "--blink-txn", "2")).isEqualTo(2);
        assertThat(errBlinkSeeds.toString()).contains("it does not take --records (it fixes each explored "
            + "workload's size").doesNotContain("--blink-txn").doesNotContain("\tat ");
        final StringWriter errBlinkRouted = new StringWriter(); // refused once, not a failed seed each
        assertThat(run(new StringWriter(), errBlinkRouted, "sim", "--explore", "2", "--workload", "blink",
            "--protocols", "selcc-2pl", "--routing", "shard")).isEqualTo(2);
        assertThat(errBlinkRouted.toString()).contains("--explore --workload blink runs local routing");
        final StringWriter errTo = new StringWriter();
        assertThat(run(new StringWriter(), errTo, "sim", "--workload", "blink", "--protocols", "scythe-occ",
            "--blink-txn", "4")).isEqualTo(2);
        assertThat(errTo.toString()).contains("run 2PL, OCC or TO on its leaves: protocols [selcc-2pl, sel-2pl, "
            + "selcc-occ, selcc-to], not scythe-occ");
        final StringWriter errGcl = new StringWriter();
        assertThat(run(new StringWriter(), errGcl, "sim", "--workload", "gcl", "--protocols", "ford-occ")).isEqualTo(2);
        assertThat(errGcl.toString()).contains("the gcl workload accesses lines through SELCC (selcc-2pl) or SEL "
            + "(sel-2pl), not ford-occ").doesNotContain("\tat ");
        final StringWriter errBenchGcl = new StringWriter(); // the bench's gcl refuses it alike, before any cluster
        assertThat(run(new StringWriter(), errBenchGcl, "bench", "--workload", "gcl", "--protocols", "scythe"))
            .isEqualTo(2);
        assertThat(errBenchGcl.toString()).contains("the gcl workload accesses lines through SELCC (selcc-2pl) or SEL "
            + "(sel-2pl), not scythe (it has no global cache lines)").doesNotContain("\tat ");
        final StringWriter errLoops = new StringWriter(); // one reader bit a loop: refused, not a run that stalls
        assertThat(run(new StringWriter(), errLoops, "sim", "--protocols", "selcc-2pl", "--cns", "8", "--loops", "8"))
            .isEqualTo(2);
        assertThat(errLoops.toString()).contains("--cns 8 x --loops 8 = 64 compute-node loops: selcc-2pl takes at "
            + "most 58");
        // Issue 21: lines too small for TO's leaf timestamps, refused before any run (selcc-2pl's, first, included);
        // before, selcc-2pl ran and selcc-to started no transaction and ended "not quiescent".
        final StringWriter outLine = new StringWriter();
        final StringWriter errLine = new StringWriter();
        assertThat(run(outLine, errLine, "sim", "--workload", "blink", "--protocols", "selcc-2pl,selcc-to",
            "--blink-txn", "4", "--line-bytes", "136", "--duration", "100us")).isEqualTo(2);
        assertThat(errLine.toString()).contains("--line-bytes 136 is too small for the tree of a TO run (selcc-to): "
            + "at least 152").doesNotContain("\tat ");
        assertThat(outLine.toString()).as("no run started").doesNotContain("selcc-2pl").doesNotContain("txn/s");
        final StringWriter errLine2pl = new StringWriter();
        assertThat(run(new StringWriter(), errLine2pl, "sim", "--workload", "blink", "--protocols", "selcc-2pl",
            "--line-bytes", "100")).isEqualTo(2);
        assertThat(errLine2pl.toString()).contains("--line-bytes 100 is too small for the tree: at least 136");
        final StringWriter errNotBlink = new StringWriter();
        assertThat(run(new StringWriter(), errNotBlink, "sim", "--blink-txn", "4")).isEqualTo(2);
        assertThat(errNotBlink.toString()).contains("--blink-txn goes with --workload blink");
        final StringWriter err2 = new StringWriter();
        assertThat(run(new StringWriter(), err2, "sim", "--watermarks", "3")).isEqualTo(2);
        assertThat(err2.toString()).contains("COLD,HOT");
        final StringWriter err3 = new StringWriter();
        assertThat(run(new StringWriter(), err3, "sim", "--cns", "2", "--crash-cn", "5")).isEqualTo(2);
        assertThat(err3.toString()).contains("crash-cn=5");
        final StringWriter errRestart = new StringWriter(); // seeds without --crashes would drop it silently
        assertThat(run(new StringWriter(), errRestart, "sim", "--explore", "2", "--protocols", "lotus",
            "--crash-restart-after", "1ms")).isEqualTo(2);
        assertThat(errRestart.toString()).contains("--explore takes --crash-restart-after with --crashes only");
        for (final String[] dropped : new String[][] {{"--crash-at", "50us"}, {"--crash-cn", "1"}}) {
            final StringWriter errDropped = new StringWriter(); // its seeds would drop it silently: refused
            assertThat(run(new StringWriter(), errDropped, "sim", "--explore", "2", "--cns", "2", dropped[0],
                dropped[1])).isEqualTo(2);
            assertThat(errDropped.toString()).contains("it takes --crash-at only as one time per CN of several with --crashes").contains("--crash-cn only with --crashes");
        }
        final StringWriter errStagger = new StringWriter(); // it would do nothing: refused, not ignored
        assertThat(run(new StringWriter(), errStagger, "sim", "--cns", "3", "--redo-log", "--crash-cn", "0",
            "--crash-recover", "--crash-stagger", "50us")).isEqualTo(2);
        assertThat(errStagger.toString()).contains("--crash-stagger staggers the detection of several crashed CNs");
        final StringWriter errStagger2 = new StringWriter();
        assertThat(run(new StringWriter(), errStagger2, "sim", "--cns", "3", "--redo-log", "--protocols", "lotus",
            "--crash-cn", "0,1", "--crash-stagger", "50us")).isEqualTo(2);
        assertThat(errStagger2.toString()).contains("give several --crash-cn and --crash-recover");
        final StringWriter errTimes = new StringWriter(); // one time per crashed CN, or one for all
        assertThat(run(new StringWriter(), errTimes, "sim", "--cns", "3", "--crash-cn", "0,2", "--crash-at",
            "10us,20us,30us")).isEqualTo(2);
        assertThat(errTimes.toString()).contains("--crash-at gives 3 times for 2 --crash-cn");
        final StringWriter errOrder = new StringWriter();
        assertThat(run(new StringWriter(), errOrder, "sim", "--cns", "3", "--crash-cn", "0,2", "--crash-at",
            "30us,20us")).isEqualTo(2);
        assertThat(errOrder.toString()).contains("each later than the one before");
        final StringWriter err3b = new StringWriter(); // several CNs crash together, each once
        assertThat(run(new StringWriter(), err3b, "sim", "--cns", "3", "--crash-cn", "1,1")).isEqualTo(2);
        assertThat(err3b.toString()).contains("names cn1 twice");
        final StringWriter err4 = new StringWriter();
        assertThat(run(new StringWriter(), err4, "sim", "--protocols", "nope")).isEqualTo(2);
        assertThat(err4.toString()).contains("unknown protocol 'nope'");
        final StringWriter err5 = new StringWriter();
        assertThat(run(new StringWriter(), err5, "sim", "--workload", "lock", "--check-history")).isEqualTo(2);
        assertThat(err5.toString()).contains("the lock, cas and tso workloads have none");
        final StringWriter err5b = new StringWriter();
        assertThat(run(new StringWriter(), err5b, "sim", "--workload", "tso", "--protocols", "scythe")).isEqualTo(2);
        assertThat(err5b.toString()).contains("the tso workload takes timestamps from tso or physical-clock, not "
            + "'scythe'").doesNotContain("\tat ");
        final StringWriter err6 = new StringWriter();
        assertThat(run(new StringWriter(), err6, "sim", "--verb-fail-rate", "1.5")).isEqualTo(2);
        assertThat(err6.toString()).contains("--verb-fail-rate 1.5: accepts a number from 0 to 1");
        final StringWriter err7 = new StringWriter();
        assertThat(run(new StringWriter(), err7, "sim", "--verb-fail-kinds", "faa,send")).isEqualTo(2);
        assertThat(err7.toString()).contains("--verb-fail-kinds send: accepts one of read, write, cas, faa");
        final StringWriter err8 = new StringWriter();
        assertThat(run(new StringWriter(), err8, "sim", "--replicas", "2")).isEqualTo(2);
        assertThat(err8.toString()).contains("--replicas 2: must be within [0, 1] with --memory-nodes 2")
            .doesNotContain("\tat ");
        final StringWriter err9 = new StringWriter();
        assertThat(run(new StringWriter(), err9, "sim", "--lookup", "rdma")).isEqualTo(2);
        assertThat(err9.toString()).contains("--lookup rdma: accepts one of rpc, onesided").doesNotContain("\tat ");
        final StringWriter err9b = new StringWriter();
        assertThat(run(new StringWriter(), err9b, "sim", "--on-abort", "redraw")).isEqualTo(2);
        assertThat(err9b.toString()).contains("--on-abort redraw: accepts one of retry, new").doesNotContain("\tat ");
        final StringWriter err10 = new StringWriter();
        assertThat(run(new StringWriter(), err10, "sim", "--workload", "lock", "--replicas", "1")).isEqualTo(2);
        assertThat(err10.toString()).contains("--replicas, --lookup and --redo-log apply to transactions");
    }

    @Test
    void shouldRouteTransactionsOverComputeNodesAndRefuseWhatRoutingDoesNotModel(@TempDir final Path dir)
        throws Exception {
        final int code = run(new StringWriter(), new StringWriter(), "sim", "--workload", "smallbank", "--accounts",
            "1000", "--protocols", "scythe-occ", "--cns", "4", "--loops", "2", "--clients", "4", "--duration", "200us",
            "--routing", "shard", "--shards", "16", "--move-shard-every", "10us", "--check-history", "--out",
            dir.toString());
        assertThat(code).isZero();
        final JsonObject results = new JsonObject(Files.readString(dir.resolve("results.json")));
        assertThat(results.getJsonObject("params").getString("routing")).isEqualTo("shard");
        final JsonObject run = results.getJsonArray("runs").getJsonObject(0);
        assertThat(run.getBoolean("invariants_ok")).isTrue();
        assertThat(run.getJsonObject("serializability").getBoolean("serializable")).isTrue();
        final JsonObject routing = run.getJsonObject("sim").getJsonObject("routing");
        assertThat(routing.getInteger("shards")).isEqualTo(16);
        assertThat(routing.getJsonArray("committed_by_cn")).hasSize(4);
        assertThat(routing.getLong("shard_map_epoch")).isGreaterThan(10);
        final StringWriter err = new StringWriter();
        assertThat(run(new StringWriter(), err, "sim", "--routing", "owner")).isEqualTo(2);
        assertThat(err.toString()).contains("--routing owner: accepts one of local, shard, random, hybrid");
        final StringWriter err2 = new StringWriter();
        assertThat(run(new StringWriter(), err2, "sim", "--cns", "2", "--routing", "shard", "--crash-cn", "1"))
            .isEqualTo(2);
        assertThat(err2.toString()).contains("not modelled with crash or verb faults");
        final StringWriter err3 = new StringWriter();
        assertThat(run(new StringWriter(), err3, "sim", "--cns", "2", "--move-shard-every", "5us")).isEqualTo(2);
        assertThat(err3.toString()).contains("needs routing shard, random or hybrid");
    }

    @Test
    void shouldRefuseMoreYcsbKeysPerTransactionThanRecordsAndRunBarelyEnough() {
        final StringWriter err = new StringWriter();
        assertThat(run(new StringWriter(), err, "sim", "--workload", "ycsb", "--records", "3", "--ops", "4"))
            .isEqualTo(2);
        assertThat(err.toString().strip()).isEqualTo("scythe sim: --ops 4 is more than --records 3: a transaction's "
            + "keys are distinct");
        // 4 distinct keys of 5: this never returned (the scrambled Zipf ranks reach only some keys).
        org.junit.jupiter.api.Assertions.assertTimeoutPreemptively(java.time.Duration.ofSeconds(60), () ->
            assertThat(quietly(() -> run(new StringWriter(), new StringWriter(), "sim", "--workload", "ycsb",
                "--records", "5", "--ops", "4", "--protocols", "scythe", "--loops", "1", "--clients", "2",
                "--duration", "50us"))).isZero());
    }

    /** Runs {@code command} with standard output (the sim's table) discarded. */
    private static int quietly(final java.util.function.IntSupplier command) {
        final java.io.PrintStream saved = System.out;
        System.setOut(new java.io.PrintStream(java.io.OutputStream.nullOutputStream()));
        try {
            return command.getAsInt();
        } finally {
            System.setOut(saved);
        }
    }

    @Test
    void shouldExploreSeedsWithVerbFailuresAndCountTheLoopsThatGaveUp() {
        final java.io.PrintStream saved = System.out;
        final java.io.ByteArrayOutputStream bytes = new java.io.ByteArrayOutputStream();
        System.setOut(new java.io.PrintStream(bytes, true));
        final int code;
        try {
            code = run(new StringWriter(), new StringWriter(), "sim", "--explore", "10", "--protocols", "ford-occ",
                "--verb-fail-rate", "0.05", "--verb-fail-kinds", "write,cas");
        } finally {
            System.setOut(saved);
        }
        assertThat(code).as(bytes.toString()).isZero();
        assertThat(bytes.toString()).containsPattern("ford-occ   smallbank 10 seeds, 0 failed, .* [1-9]\\d* seeds gave a loop up")
            .contains("no failing seed");
    }

    @Test
    void shouldExploreSeedsAndSayNoneFailed() {
        final StringWriter out = new StringWriter();
        final java.io.PrintStream saved = System.out;
        final java.io.ByteArrayOutputStream bytes = new java.io.ByteArrayOutputStream();
        System.setOut(new java.io.PrintStream(bytes, true));
        final int code;
        try {
            code = run(out, new StringWriter(), "sim", "--explore", "3", "--protocols", "scythe", "--workload", "all");
        } finally {
            System.setOut(saved);
        }
        assertThat(code).isZero();
        assertThat(bytes.toString()).contains("scythe     smallbank 3 seeds, 0 failed")
            .contains("scythe     phantom   3 seeds, 0 failed").contains("scythe     churn     3 seeds, 0 failed")
            .contains("scythe     tpcc      3 seeds, 0 failed").contains("no failing seed");
    }

    /**
     * An explored seed and its printed replay line run the same schedule: the same commits and the same history.
     * selcc-to phantom seed 1 (no crash: 15 commits, the replay 10 while it left the TSO group to the CLI's default)
     * and seed 3 with a crash; selcc-to takes timestamps, so a different TSO group changes its run.
     */
    @Test
    void shouldReplayAnExploredSeedExactly(@TempDir final Path dir) throws Exception {
        assertReplaysExactly(dir, io.scythe.sim.Explorer.Workload.PHANTOM, io.scythe.sim.Explorer.options("selcc-to", 1),
            "--workload", "phantom", "--protocols", "selcc-to");
        assertReplaysExactly(dir, io.scythe.sim.Explorer.Workload.PHANTOM,
            io.scythe.sim.Explorer.crash(io.scythe.sim.Explorer.crashOptions("selcc-to", 3)),
            "--workload", "phantom", "--protocols", "selcc-to", "--crashes");
    }

    /**
     * {@code --explore} refuses, by name in one line, the options its seeds would run without (each was dropped
     * silently before: {@code --explore 1 --accounts 50} explored the explorer's own 50 accounts whatever was given,
     * {@code --cn-work-ns} its default CPU time), an alias by the option's name, and --crash-detect with no crash to
     * detect; nothing runs. So are, explored or not, the options that qualify one left out (--mn-slow-to without
     * --mn-slow, --shards without routing, --verb-fail-kinds without --verb-fail-rate).
     */
    @Test
    void shouldRefuseTheOptionsTheExploredSeedsWouldIgnore() {
        final StringWriter out = new StringWriter();
        final StringWriter err = new StringWriter();
        assertThat(run(out, err, "sim", "--explore", "1", "--accounts", "50", "--cn-work-ns", "100", "--rmw-ratio",
            "0.5", "--out", "/tmp/nowhere")).isEqualTo(2);
        assertThat(err.toString()).contains("--explore runs each seed with options the explorer fixes or draws, so it "
            + "does not take --accounts, --write-ratio (it fixes each explored workload's size, skew and mix); "
            + "--cn-work-ns (it fixes the cost model: the cx5 profile, the default CPU times); --out (it checks each "
            + "whole run and writes no results: give them to a seed's replay line); run one simulation without "
            + "--explore for those").doesNotContain("\tat ");
        assertThat(out.toString()).doesNotContain("seeds");
        final StringWriter errDetect = new StringWriter();
        assertThat(run(new StringWriter(), errDetect, "sim", "--explore", "1", "--crash-detect", "5us", "--clients",
            "2,4")).isEqualTo(2);
        assertThat(errDetect.toString()).contains("--crash-detect without --crashes or --crash-mn")
            .contains("a list of --clients [2, 4]");
        final StringWriter errRecover = new StringWriter();
        assertThat(run(new StringWriter(), errRecover, "sim", "--explore", "1", "--crashes", "--crash-recover"))
            .isEqualTo(2);
        assertThat(errRecover.toString()).contains("--crash-recover (it recovers every --crashes seed's crash itself");
        // Options that qualify one left out: read by no run, explored or not.
        for (final String[] unread : new String[][] {
            {"--mn-slow-to", "50us", "--mn-slow-from and --mn-slow-to bound when --mn-slow slows"},
            {"--shards", "8", "--shards maps the shards routed transactions go by"},
            {"--verb-fail-kinds", "write", "--verb-fail-kinds picks the verbs --verb-fail-rate fails"}}) {
            final StringWriter errUnread = new StringWriter();
            assertThat(run(new StringWriter(), errUnread, "sim", "--explore", "1", unread[0], unread[1]))
                .isEqualTo(2);
            assertThat(errUnread.toString()).contains(unread[2]).doesNotContain("\tat ");
        }
    }

    /**
     * What the explorer carries into its seeds runs there and is in the replay line, which replays the seed exactly:
     * the topology (--cns), --duration and --jitter to the nanosecond, --max-attempts, --drain, --drain-max and
     * --watermarks (before, the last four were dropped silently, and the replay line cut the first two to whole
     * microseconds). Scythe smallbank seed 2 on 2 CNs with lower heat watermarks.
     */
    @Test
    void shouldCarryTheGivenOptionsIntoTheSeedsAndTheirReplay(@TempDir final Path dir) throws Exception {
        final io.scythe.sim.SimOptions options = io.scythe.sim.Explorer.options("scythe", 2).computeNodes(2)
            .durationNs(120_500).maxAttempts(500).drainNs(20_000_000).drainMaxNs(2_000_000_000L)
            .watermarks(new io.scythe.hotspot.Watermarks(1, 4));
        options.faults().jitterNs(1_500);
        assertReplaysExactly(dir, io.scythe.sim.Explorer.Workload.SMALLBANK, options,
            "--protocols", "scythe", "--cns", "2", "--duration", "120.5us", "--jitter", "1.5us", "--max-attempts",
            "500", "--drain", "20ms", "--drain-max", "2s", "--watermarks", "1,4");
        assertThat(io.scythe.sim.Explorer.replayCommand(io.scythe.sim.Explorer.Workload.SMALLBANK, options))
            .contains(" --cns 2 ").contains(" --duration 120.500us --jitter 1.500us ")
            .contains(" --max-attempts 500 --drain 20000us --drain-max 2000000us --watermarks 1,4 ");
    }

    /**
     * The explorer crashes the memory node {@code --crash-mn} names in every seed, at a time drawn from the seed, and
     * its replay line says so (the sweep of this stop found the explorer ran its seeds without it, silently: the
     * replay of the explored seed then committed another count). Aurogon smallbank seed 2, one backup a partition.
     */
    @Test
    void shouldExploreAMemoryNodeCrashAndReplayIt(@TempDir final Path dir) throws Exception {
        final io.scythe.sim.SimOptions options = io.scythe.sim.Explorer.crashMemoryNode(
            io.scythe.sim.Explorer.options("aurogon", 2).replicas(1), 1, io.scythe.sim.Faults.DEFAULT_DETECT_NS);
        final JsonObject replayed = assertReplaysExactly(dir, io.scythe.sim.Explorer.Workload.SMALLBANK, options,
            "--protocols", "aurogon", "--crash-mn", "1", "--replicas", "1");
        assertThat(replayed.getJsonObject("sim").getJsonObject("faults").getInteger("crash_mn")).isEqualTo(1);
        assertThat(io.scythe.sim.Explorer.replayCommand(io.scythe.sim.Explorer.Workload.SMALLBANK, options))
            .contains(" --crash-mn 1 --crash-at " + options.faults().crashMnAtNs() / 1000 + ".");
    }

    /**
     * Explores seed {@code options.seed()} with {@code exploreArgs}, replays {@code options}' replay line, and checks
     * both committed and checked the same transactions; returns the replayed run.
     */
    private static JsonObject assertReplaysExactly(final Path dir, final io.scythe.sim.Explorer.Workload workload,
                                                   final io.scythe.sim.SimOptions options, final String... exploreArgs)
        throws Exception {
        final java.io.PrintStream saved = System.out;
        final java.io.ByteArrayOutputStream bytes = new java.io.ByteArrayOutputStream();
        System.setOut(new java.io.PrintStream(bytes, true));
        try {
            final java.util.List<String> explore = new java.util.ArrayList<>(java.util.List.of("sim", "--explore",
                "1", "--seed", "" + options.seed()));
            explore.addAll(java.util.List.of(exploreArgs));
            assertThat(run(new StringWriter(), new StringWriter(), explore.toArray(String[]::new))).isZero();
        } finally {
            System.setOut(saved);
        }
        final java.util.regex.Matcher explored = java.util.regex.Pattern.compile(
            "1 seeds, 0 failed, (\\d+) transactions committed, (\\d+) checked").matcher(bytes.toString());
        assertThat(explored.find()).as(bytes.toString()).isTrue();
        final String replay = io.scythe.sim.Explorer.replayCommand(workload, options);
        final Path out = dir.resolve("replay-" + options.protocol() + "-" + options.seed());
        final java.util.List<String> args = new java.util.ArrayList<>(java.util.List.of(
            replay.substring("scythe ".length()).split(" ")));
        args.addAll(java.util.List.of("--out", out.toString()));
        System.setOut(new java.io.PrintStream(java.io.OutputStream.nullOutputStream(), true));
        try {
            assertThat(run(new StringWriter(), new StringWriter(), args.toArray(String[]::new))).as(replay).isZero();
        } finally {
            System.setOut(saved);
        }
        final JsonObject replayed = new JsonObject(Files.readString(out.resolve("results.json")))
            .getJsonArray("runs").getJsonObject(0);
        assertThat(replayed.getLong("committed")).as(replay).isEqualTo(Long.parseLong(explored.group(1)));
        assertThat(replayed.getJsonObject("serializability").getLong("transactions")).as(replay)
            .isEqualTo(Long.parseLong(explored.group(2)));
        return replayed;
    }
}
