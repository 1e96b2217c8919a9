package io.scythe.cli;

import io.vertx.core.json.JsonObject;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;

import static org.assertj.core.api.Assertions.assertThat;

class ScytheCommandTest {

    private static int run(final StringWriter out, final StringWriter err, final String... args) {
        final CommandLine cli = ScytheCommand.commandLine();
        cli.setOut(new PrintWriter(out, true));
        cli.setErr(new PrintWriter(err, true));
        return cli.execute(args);
    }

    @Test
    void shouldShowHelpForEverySubcommand() {
        final CommandLine cli = ScytheCommand.commandLine();
        assertThat(cli.getSubcommands()).containsKeys("bench", "report", "fabric");
        // picocli's own warnings (a description it cannot format: "90 % of" in sim's --timeline) go to System.err.
        final java.io.PrintStream stderr = System.err;
        final java.io.ByteArrayOutputStream warnings = new java.io.ByteArrayOutputStream();
        System.setErr(new java.io.PrintStream(warnings, true));
        try {
            for (final String sub : cli.getSubcommands().keySet()) {
                if ("help".equals(sub)) {
                    continue;
                }
                final StringWriter out = new StringWriter();
                assertThat(run(out, new StringWriter(), sub, "--help")).as(sub).isZero();
                assertThat(out.toString()).as(sub).contains("Usage: scythe " + sub);
            }
        } finally {
            System.setErr(stderr);
        }
        assertThat(warnings.toString()).as("picocli's warnings while rendering help").doesNotContain("picocli WARN");
    }

    @Test
    void shouldSayInChaosHelpThatKilledMemoryNodesAreReplacedAndRefuseMemoryNodeFaultsWithoutABackup() {
        final StringWriter out = new StringWriter();
        assertThat(run(out, new StringWriter(), "chaos", "--help")).isZero();
        assertThat(out.toString().replaceAll("\\s+", " ")).contains("a killed memory node's replacement process "
            + "starts 2 s after its failover settled and rejoins").contains("each within 120 s");
        final StringWriter err = new StringWriter();
        assertThat(run(new StringWriter(), err, "chaos", "--mn-faults", "--mns", "1", "--duration", "1s"))
            .isEqualTo(2);
        assertThat(err.toString()).contains("--mn-faults needs --mns >= 2").doesNotContain("\tat ");
        // Aurogon's variants without 2LClock (no clock bound for a promotion's read floor, so cluster nodes do not
        // fail their memory nodes over, AurogonPromotionTest) are not chaos protocols: refused before any start.
        final StringWriter aurogon = new StringWriter();
        assertThat(run(new StringWriter(), aurogon, "chaos", "--protocol", "dst-to", "--mn-faults", "--mns", "3",
            "--duration", "1s")).isEqualTo(2);
        assertThat(aurogon.toString()).contains("--protocol dst-to").doesNotContain("\tat ");
    }

    /**
     * CALVIN in chaos (issue 18): cluster nodes survive one compute-node fault per run (the death taken over, the node
     * restarted rejoining the total order), so chaos runs it with one fault; what it cannot survive is refused before
     * any process starts, naming why: several compute nodes killed together (a second death in the run); a run
     * without the input log survives no death (the module refuses it; chaos takes no protocol configuration). Failed
     * before: every chaos run of rcc-calvin was refused.
     */
    @Test
    void shouldRefuseCalvinInChaosOnlyWhereClusterNodesCannotSurviveTheFaults() {
        final StringWriter together = new StringWriter();
        assertThat(run(new StringWriter(), together, "chaos", "--protocol", "rcc-calvin", "--together", "2",
            "--duration", "1s")).isEqualTo(2);
        assertThat(together.toString().replaceAll("\\s+", " ")).contains("chaos --protocol rcc-calvin --together 2: "
            + "cluster nodes survive at most 1 compute-node fault(s) per run").contains("a second compute-node death")
            .doesNotContain("\tat ");
        final io.scythe.txn.Protocol calvin = io.scythe.txn.spi.ProtocolRegistry.protocol("rcc-calvin");
        final io.scythe.txn.spi.ProtocolModule module = io.scythe.txn.spi.ProtocolRegistry.moduleOf("rcc-calvin");
        assertThat(module.clusterComputeNodeFaultRefusal(calvin)).as("chaos runs rcc-calvin").isNull();
        // chaos takes no protocol configuration, so the input log is on there; without it no death is survived
        assertThat(module.clusterComputeNodeFaultRefusal(io.scythe.txn.spi.ProtocolRegistry.protocol(
            "rcc-calvin:log=off"))).contains("with log=off no input log");
        assertThat(module.clusterComputeNodeFaultLimit(calvin)).as("faults per run").isEqualTo(1);
    }

    /**
     * The memory-node fault plan of {@code scythe chaos --mn-faults} (the run itself spawns a cluster of processes: a
     * CLI command, not a suite test): a pause first, then kills alternate with pauses while fewer memory nodes than
     * the k backups are lost, counting a pause the cluster failed over; pauses only after that.
     */
    @Test
    void shouldKillAtMostKMemoryNodesInChaosAndAlternateWithPauses() {
        final java.util.List<JsonObject> faults = new java.util.ArrayList<>();
        assertThat(ChaosCommand.mnKillTurn(faults, 0, 2)).as("first MN fault").isFalse();
        faults.add(new JsonObject().put("fault", "SIGSTOP").put("cn", "mn1").put("mn", true));
        faults.add(new JsonObject().put("fault", "SIGKILL").put("cn", "cn0"));
        assertThat(ChaosCommand.mnKillTurn(faults, 0, 2)).as("after a pause, CN faults between").isTrue();
        faults.add(new JsonObject().put("fault", "SIGKILL").put("cn", "mn1").put("mn", true));
        assertThat(ChaosCommand.mnKillTurn(faults, 1, 2)).as("after a kill").isFalse();
        faults.add(new JsonObject().put("fault", "lost (unplanned, exit 3)").put("cn", "mn0").put("mn", true)
            .put("unplanned", true));
        assertThat(ChaosCommand.mnKillTurn(faults, 2, 2)).as("k = 2 lost: an unplanned loss counts").isFalse();
        faults.add(new JsonObject().put("fault", "SIGSTOP").put("cn", "mn2").put("mn", true));
        assertThat(ChaosCommand.mnKillTurn(faults, 2, 2)).as("no backup left to lose").isFalse();
        assertThat(ChaosCommand.mnKillTurn(faults, 1, 2)).as("after a pause, one backup left").isTrue();
        faults.add(new JsonObject().put("fault", "SIGSTOP, failed over: a kill").put("cn", "mn2").put("mn", true));
        assertThat(ChaosCommand.mnKillTurn(faults, 1, 2)).as("a pause failed over is still a pause in the "
            + "alternation; it counts in lost").isTrue();
        assertThat(ChaosCommand.mnKillTurn(faults, 1, 1)).as("k = 1, one lost").isFalse();
        assertThat(ChaosCommand.MN_PAUSE_MS).as("an MN pause stays under the lease")
            .isLessThan(io.scythe.cluster.ScytheNode.LEASE_MS / 2);
    }

    @Test
    void shouldRefuseBadInputWithOneClearLine() {
        final StringWriter err = new StringWriter();
        assertThat(run(new StringWriter(), err, "bench", "--workload", "nope")).isEqualTo(2);
        final StringWriter err2 = new StringWriter();
        assertThat(run(new StringWriter(), err2, "bench", "--fabric-config", "/definitely/not/here.yaml"))
            .isEqualTo(2);
        assertThat(err2.toString()).contains("--fabric-config /definitely/not/here.yaml: accepts an existing file")
            .doesNotContain("\tat ");
        final StringWriter err3 = new StringWriter();
        assertThat(run(new StringWriter(), err3, "bench", "--workload", "ycsb", "--ycsb-profile", "hot"))
            .isEqualTo(2);
        assertThat(err3.toString()).contains("--ycsb-profile hot: accepts one of standard, write-only, hot-area").doesNotContain("\tat ");
        final StringWriter err4 = new StringWriter();
        assertThat(run(new StringWriter(), err4, "bench", "--workload", "tatp", "--mix", "scythe")).isEqualTo(2);
        assertThat(err4.toString()).contains("unknown TATP mix 'scythe'");
        assertThat(run(new StringWriter(), new StringWriter(), "bench", "--system", "hazelcast", "--workload",
            "ycsb")).isEqualTo(2);
        assertThat(run(new StringWriter(), new StringWriter(), "bench", "--system", "scythe,redis")).isEqualTo(2);
        final StringWriter err5 = new StringWriter();
        assertThat(run(new StringWriter(), err5, "bench", "--workload", "smallbank", "--memory-nodes", "3",
            "--replicas", "3")).isEqualTo(2);
        assertThat(err5.toString()).contains("--replicas 3: must be within [0, 2] with --memory-nodes 3")
            .doesNotContain("\tat ");
        final StringWriter err6 = new StringWriter();
        assertThat(run(new StringWriter(), err6, "bench", "--workload", "smallbank", "--lookup", "x")).isEqualTo(2);
        assertThat(err6.toString()).contains("--lookup x: accepts one of rpc, onesided");
        final StringWriter err6b = new StringWriter();
        assertThat(run(new StringWriter(), err6b, "bench", "--workload", "smallbank", "--on-abort", "again"))
            .isEqualTo(2);
        assertThat(err6b.toString()).contains("--on-abort again: accepts one of retry, new").doesNotContain("\tat ");
        final StringWriter err7 = new StringWriter();
        assertThat(run(new StringWriter(), err7, "bench", "--workload", "lock", "--cns", "2")).isEqualTo(2);
        assertThat(err7.toString()).contains("--cns runs transactions on several compute nodes");
        final StringWriter err8 = new StringWriter();
        assertThat(run(new StringWriter(), err8, "bench", "--cns", "4", "--routing", "local")).isEqualTo(2);
        assertThat(err8.toString()).contains("bench clients belong to no compute node");
        final StringWriter err9 = new StringWriter();
        assertThat(run(new StringWriter(), err9, "bench", "--cns", "0")).isEqualTo(2);
        assertThat(err9.toString()).contains("--cns 0: accepts an integer from 1 to 64");
        final StringWriter err10 = new StringWriter();
        assertThat(run(new StringWriter(), err10, "bench", "--move-shard-every", "5ms")).isEqualTo(2);
        assertThat(err10.toString()).contains("give --cns 2 or more");
    }

    /**
     * Every option of every command that takes a typed value (numbers, durations, enumerations), given one that does
     * not convert, is refused before anything runs: one line naming the option, exit code 2, no usage dump, no Java
     * class name, no stack trace. So is an unknown option.
     */
    @Test
    void shouldRefuseEveryMalformedOptionValueWithOneLineAndExitCode2() {
        int checked = 0;
        for (final java.util.Map.Entry<String, CommandLine> sub : ScytheCommand.commandLine().getSubcommands()
            .entrySet()) {
            for (final CommandLine.Model.OptionSpec option : sub.getValue().getCommandSpec().options()) {
                final Class<?> type = option.type();
                if (option.arity().max() == 0 || type == String.class || type == java.nio.file.Path.class
                    || type == java.io.File.class || type == java.util.List.class && option.auxiliaryTypes()[0]
                    == String.class) {
                    continue;
                }
                final StringWriter out = new StringWriter();
                final StringWriter err = new StringWriter();
                final int code = run(out, err, sub.getKey(), option.longestName(), "x!");
                final String line = err.toString().strip();
                assertThat(code).as("%s %s x!", sub.getKey(), option.longestName()).isEqualTo(2);
                assertThat(line).as("%s %s", sub.getKey(), option.longestName()).contains(option.longestName())
                    .doesNotContain("\n").doesNotContain("Usage").doesNotContain("java.").doesNotContain("\tat ")
                    .doesNotContain("Exception");
                assertThat(out.toString()).isEmpty();
                checked++;
            }
            if ("help".equals(sub.getKey())) {
                continue;
            }
            final StringWriter err = new StringWriter();
            assertThat(run(new StringWriter(), err, sub.getKey(), "--no-such-option")).as(sub.getKey()).isEqualTo(2);
            assertThat(err.toString().strip()).as(sub.getKey()).startsWith("scythe " + sub.getKey() + ": ")
                .doesNotContain("\n").doesNotContain("Usage");
        }
        assertThat(checked).as("typed options checked").isGreaterThan(50);
    }

    /**
     * Every option of every command that takes a value declares what it accepts ({@link Accepts}), and a value that
     * converts but is out of range (below the minimum, above the maximum), a name not among the accepted ones, or an
     * input file that does not exist is refused before anything runs: one line naming the option and what it accepts,
     * exit code 2. Generated from the picocli model, so a new option is covered (or this fails naming it).
     */
    @Test
    void shouldRefuseEveryOutOfRangeOptionValueWithOneLineAndExitCode2() {
        final java.util.List<String> undeclared = new java.util.ArrayList<>();
        int checked = 0;
        for (final java.util.Map.Entry<String, CommandLine> sub : ScytheCommand.commandLine().getSubcommands()
            .entrySet()) {
            for (final CommandLine.Model.OptionSpec option : sub.getValue().getCommandSpec().options()) {
                if (option.arity().max() == 0 || option.usageHelp() || option.versionHelp()) {
                    continue;
                }
                final Accepts accepts = OptionChecks.accepts(option);
                if (accepts == null) {
                    undeclared.add(sub.getKey() + " " + option.longestName());
                    continue;
                }
                final Class<?> type = OptionChecks.valueType(option);
                final boolean numeric = type != String.class && type != java.nio.file.Path.class;
                assertThat(!numeric || !accepts.min().isEmpty() || !accepts.value().isEmpty())
                    .as("%s %s: a number or duration states its range", sub.getKey(), option.longestName()).isTrue();
                final java.util.List<String> bad = new java.util.ArrayList<>();
                if (!accepts.min().isEmpty()) {
                    final String below = beyond(type, accepts.min(), -1);
                    if (below != null) {
                        bad.add(below);
                    }
                }
                if (!accepts.max().isEmpty()) {
                    bad.add(beyond(type, accepts.max(), +1));
                }
                if (accepts.names() != Accepts.Any.class) {
                    bad.add("no-such-name");
                }
                if (accepts.exists()) {
                    bad.add("/definitely/not/here.yaml");
                }
                for (final String value : bad) {
                    final StringWriter out = new StringWriter();
                    final StringWriter err = new StringWriter();
                    final java.util.List<String> args = new java.util.ArrayList<>(
                        java.util.List.of(sub.getKey(), option.longestName(), value));
                    for (final CommandLine.Model.OptionSpec other : sub.getValue().getCommandSpec().options()) {
                        if (other.required() && other != option) { // node --role, --config: valid, or checked later
                            final Accepts a = OptionChecks.accepts(other);
                            args.addAll(java.util.List.of(other.longestName(),
                                a.names() != Accepts.Any.class ? OptionChecks.names(a).get(0) : "x.yaml"));
                        }
                    }
                    for (final CommandLine.Model.PositionalParamSpec p
                        : sub.getValue().getCommandSpec().positionalParameters()) {
                        if (p.required()) {
                            args.add("somewhere");
                        }
                    }
                    final int code = run(out, err, args.toArray(String[]::new));
                    final String line = err.toString().strip();
                    assertThat(code).as("%s %s %s: %s", sub.getKey(), option.longestName(), value, line).isEqualTo(2);
                    assertThat(line).as("%s %s %s", sub.getKey(), option.longestName(), value)
                        .startsWith("scythe " + sub.getKey() + ": " + option.longestName() + " ")
                        .contains("accepts").doesNotContain("\n").doesNotContain("Usage").doesNotContain("java.")
                        .doesNotContain("\tat ").doesNotContain("Exception");
                    assertThat(out.toString()).isEmpty();
                    checked++;
                }
            }
        }
        assertThat(undeclared).as("options without @Accepts").isEmpty();
        assertThat(checked).as("out-of-range values tried").isGreaterThan(100);
    }

    /** A value just past a bound, written as on the command line; null when none converts (a duration below 0s). */
    private static String beyond(final Class<?> type, final String bound, final int direction) {
        if (type == Duration.class) {
            final long us = Durations.parse(bound).toNanos() / 1000 + direction;
            return us < 0 ? null : us + "us";
        }
        if (OptionChecks.floating(type)) {
            return String.valueOf(Double.parseDouble(bound) + direction * (Double.parseDouble(bound) == 0 ? 0.5
                : Math.abs(Double.parseDouble(bound)) / 2));
        }
        return String.valueOf(Long.parseLong(bound) + direction);
    }

    @Test
    void shouldRefuseABadClusterOrNodeBeforeStartingAnything() {
        final StringWriter err = new StringWriter();
        assertThat(run(new StringWriter(), err, "cluster", "--tso", "0")).isEqualTo(2);
        assertThat(err.toString()).contains("--tso 0: accepts an integer from 1 to 64").doesNotContain("\tat ");
        final StringWriter err2 = new StringWriter();
        assertThat(run(new StringWriter(), err2, "node", "--role", "gpu", "--config", "x.yaml")).isEqualTo(2);
        assertThat(err2.toString()).contains("--role gpu: accepts one of mn, cn, tso, proxy");
        final StringWriter err3 = new StringWriter();
        assertThat(run(new StringWriter(), err3, "node", "--role", "mn", "--config", "/definitely/not/here.yaml"))
            .isEqualTo(2);
        assertThat(err3.toString()).contains("--config /definitely/not/here.yaml: accepts an existing file");
    }

    @Test
    void shouldParseHumanDurations() {
        assertThat(Durations.parse("500ms")).isEqualTo(Duration.ofMillis(500));
        assertThat(Durations.parse("2s")).isEqualTo(Duration.ofSeconds(2));
        assertThat(Durations.parse("1.5m")).isEqualTo(Duration.ofSeconds(90));
        assertThat(Durations.parse("3")).isEqualTo(Duration.ofSeconds(3));
        assertThat(Durations.parse("25us")).isEqualTo(Duration.ofNanos(25_000));
    }

    @Test
    void shouldWriteResultsJsonWithTheDocumentedFields(@TempDir final Path dir) throws Exception {
        final int code = run(new StringWriter(), new StringWriter(), "bench", "--workload", "verbs", "--providers",
            "local", "--verbs", "read,faa", "--batch", "4", "--window", "8", "--duration", "200ms", "--warmup",
            "100ms", "--out", dir.toString());
        assertThat(code).isZero();
        final JsonObject results = new JsonObject(Files.readString(dir.resolve("results.json")));
        assertThat(results.getString("workload")).isEqualTo("verbs");
        assertThat(results.getJsonObject("params").getInteger("window")).isEqualTo(8);
        assertThat(results.getJsonArray("runs")).hasSize(4);
        for (int i = 0; i < 4; i++) {
            final JsonObject run = results.getJsonArray("runs").getJsonObject(i);
            assertThat(run.fieldNames()).contains("protocol", "clients", "committed", "committed_per_s",
                "abort_rate", "latency_us", "invariants_ok", "raw_ns_per_op", "ratio_fabric_to_raw");
            assertThat(run.getLong("committed")).isPositive();
            assertThat(run.getBoolean("invariants_ok")).isTrue();
            assertThat(run.getJsonObject("latency_us").fieldNames()).contains("p50", "p99", "p999");
        }
        // report.html beside it, drawn from a micro workload's fields; `scythe report DIR` rebuilds it.
        final Path page = dir.resolve("report.html");
        assertThat(Files.readString(page)).contains("<section id=\"throughput\">", "<svg", "local/read/single");
        Files.delete(page);
        final StringWriter out = new StringWriter();
        assertThat(run(out, new StringWriter(), "report", dir.toString())).isZero();
        assertThat(Files.readString(page)).contains("<section id=\"cdf\">", "<svg");
        final StringWriter err = new StringWriter();
        assertThat(run(new StringWriter(), err, "report", dir.resolve("nothing-here").toString())).isEqualTo(2);
        assertThat(err.toString()).contains("no results.json").doesNotContain("\tat ");
    }

    @Test
    void shouldWriteToATimestampedDirectoryByDefault() {
        assertThat(BenchCommand.defaultOut("SmallBank", java.time.LocalDateTime.of(2026, 11, 23, 9, 5, 7)))
            .isEqualTo(Path.of("results", "smallbank-20261123-090507"));
    }

    /** Each micro workload runs end to end, briefly, and says its invariants held. */
    @Test
    void shouldRunTheLockTsoAndLogDbWorkloadsBriefly(@TempDir final Path dir) throws Exception {
        final String[][] runs = {
            {"lock", "--clients", "8", "--locks", "50", "--thetas", "0.99"},
            {"tso", "--clients", "2"},
            {"logdb", "--records", "20000", "--clients", "4"},
        };
        for (final String[] workload : runs) {
            final Path out = dir.resolve(workload[0]);
            final String[] args = new String[workload.length + 8];
            args[0] = "bench";
            args[1] = "--workload";
            System.arraycopy(workload, 0, args, 2, workload.length);
            System.arraycopy(new String[] {"--duration", "150ms", "--warmup", "50ms", "--out", out.toString()}, 0,
                args, workload.length + 2, 6);
            final StringWriter err = new StringWriter();
            assertThat(run(new StringWriter(), err, args)).as(workload[0] + ": " + err).isZero();
            final JsonObject results = new JsonObject(Files.readString(out.resolve("results.json")));
            assertThat(results.getString("workload")).isEqualTo(workload[0]);
            assertThat(results.getJsonArray("runs")).isNotEmpty();
            for (int i = 0; i < results.getJsonArray("runs").size(); i++) {
                final JsonObject r = results.getJsonArray("runs").getJsonObject(i);
                assertThat(r.getBoolean("invariants_ok")).as(workload[0] + " " + r.getString("protocol")).isTrue();
            }
        }
        final JsonObject lock = new JsonObject(Files.readString(dir.resolve("lock").resolve("results.json")));
        assertThat(lock.getJsonArray("runs").stream().map(o -> ((JsonObject) o).getString("protocol")))
            .containsExactly("takeout", "cas-lock");
    }
}
