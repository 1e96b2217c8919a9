package io.scythe.cli;

import io.scythe.fabric.CostModel;
import picocli.CommandLine;
import picocli.CommandLine.Model.OptionSpec;
import picocli.CommandLine.ParameterException;

import java.lang.reflect.Field;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Locale;

/**
 * Checks every option of the command about to run against its {@link Accepts} before it runs (an execution strategy,
 * so one mechanism serves every command): out of range, unknown name, missing file → a {@link ParameterException}
 * naming the option and what it accepts, which {@link ScytheCommand} prints as one line with exit code 2.
 */
final class OptionChecks implements CommandLine.IExecutionStrategy {
    private final CommandLine.IExecutionStrategy then = new CommandLine.RunLast();

    @Override
    public int execute(final CommandLine.ParseResult parseResult) {
        for (CommandLine.ParseResult r = parseResult; r != null; r = r.subcommand()) {
            for (final OptionSpec option : r.commandSpec().options()) {
                check(r.commandSpec().commandLine(), option);
            }
        }
        return then.execute(parseResult);
    }

    /** The {@link Accepts} of an option declared on a field, or null. */
    static Accepts accepts(final OptionSpec option) {
        return option.userObject() instanceof Field f ? f.getAnnotation(Accepts.class) : null;
    }

    /** The type of the option's values (the element type of a list). */
    static Class<?> valueType(final OptionSpec option) {
        return Collection.class.isAssignableFrom(option.type()) ? option.auxiliaryTypes()[0] : option.type();
    }

    private static void check(final CommandLine command, final OptionSpec option) {
        final Accepts accepts = accepts(option);
        final Object value = option.getValue();
        if (accepts == null || value == null) {
            return;
        }
        final Collection<?> values = value instanceof Collection<?> c ? c : List.of(value);
        for (final Object v : values) {
            final String problem = problem(accepts, valueType(option), v);
            if (problem != null) {
                throw new ParameterException(command, option.longestName() + " " + text(v) + ": " + problem);
            }
        }
    }

    /** Why {@code v} is refused, naming what is accepted; null when it is accepted. */
    static String problem(final Accepts accepts, final Class<?> type, final Object v) {
        if (!accepts.min().isEmpty() || !accepts.max().isEmpty()) {
            final double x = magnitude(type, v);
            final boolean low = !accepts.min().isEmpty() && x < magnitude(type, parse(type, accepts.min()));
            final boolean high = !accepts.max().isEmpty() && x > magnitude(type, parse(type, accepts.max()));
            if (low || high) {
                return "accepts " + range(accepts, type);
            }
        }
        if (accepts.names() != Accepts.Any.class) {
            final List<String> names = names(accepts);
            if (!names.contains(String.valueOf(v).toLowerCase(Locale.ROOT)) && !configuredProtocol(accepts, v)) {
                return "accepts one of " + String.join(", ", names);
            }
        }
        if (accepts.exists() && !Files.exists(Path.of(String.valueOf(v)))) {
            return "accepts an existing file; this one does not exist";
        }
        return null;
    }

    /** The accepted range in words: "an integer from 1 to 64", "a duration of at least 1ms", "a number from 0 to 1". */
    static String range(final Accepts accepts, final Class<?> type) {
        final String what = type == Duration.class ? "a duration" : floating(type) ? "a number" : "an integer";
        if (accepts.max().isEmpty()) {
            return what + (type == Duration.class ? " of" : "") + " at least " + accepts.min();
        }
        if (accepts.min().isEmpty()) {
            return what + (type == Duration.class ? " of" : "") + " at most " + accepts.max();
        }
        return what + " from " + accepts.min() + " to " + accepts.max();
    }

    /** The accepted names, lower-case. */
    /**
     * A registered protocol with options ({@code scythe:exclusive}, {@code rcc-nowait:primitive=rpc}) where the
     * registered protocols are accepted: the registry resolves it (its options checked there).
     */
    private static boolean configuredProtocol(final Accepts accepts, final Object v) {
        final String name = String.valueOf(v);
        if (accepts.names() != RegisteredProtocols.class || name.indexOf(':') < 1) {
            return false;
        }
        try {
            io.scythe.txn.spi.ProtocolRegistry.protocol(name);
            return true;
        } catch (final IllegalArgumentException | io.scythe.txn.UnknownKeyException refused) {
            return false;
        }
    }

    static List<String> names(final Accepts accepts) {
        final List<String> names = new ArrayList<>();
        try {
            for (final String n : accepts.names().getDeclaredConstructor().newInstance()) {
                final int note = n.indexOf(" (");
                names.add((note < 0 ? n : n.substring(0, note)).toLowerCase(Locale.ROOT));
            }
        } catch (final ReflectiveOperationException e) {
            throw new IllegalStateException(accepts.names() + " cannot list names", e);
        }
        return names;
    }

    static boolean floating(final Class<?> type) {
        return type == double.class || type == Double.class || type == float.class || type == Float.class;
    }

    /** A bound written as on the command line, as a value of the option's type. */
    static Object parse(final Class<?> type, final String text) {
        if (type == Duration.class) {
            return Durations.parse(text);
        }
        return floating(type) ? (Object) Double.parseDouble(text) : (Object) Long.parseLong(text);
    }

    private static double magnitude(final Class<?> type, final Object v) {
        if (v instanceof Duration d) {
            return d.toNanos();
        }
        if (v instanceof Number n) {
            return n.doubleValue();
        }
        throw new IllegalStateException("a range on a " + type.getSimpleName() + " option");
    }

    private static String text(final Object v) {
        if (v instanceof Duration d) {
            final long ns = d.toNanos();
            return ns % 1_000_000 == 0 ? ns / 1_000_000 + "ms" : ns % 1000 == 0 ? ns / 1000 + "us" : ns + "ns";
        }
        return String.valueOf(v);
    }

    /** A fixed list of names for {@link Accepts#names}: a subclass per option kind names them in its constructor. */
    abstract static class Names implements Iterable<String> {
        private final List<String> names;

        Names(final String... names) {
            this.names = List.of(names);
        }

        @Override
        public java.util.Iterator<String> iterator() {
            return names.iterator();
        }
    }

    static final class Profiles extends Names {
        Profiles() {
            super(CostModel.PROFILE_CX5, CostModel.PROFILE_CX5_PCIE, CostModel.PROFILE_CX5_QUEUE, CostModel.PROFILE_CX5_TABLE1,
                CostModel.PROFILE_ZERO);
        }
    }

    static final class Routings extends Names {
        Routings() {
            super("local", "shard", "random", "hybrid");
        }
    }

    static final class Verbs extends Names {
        Verbs() {
            super("read", "write", "cas", "faa");
        }
    }

    static final class TpccMixes extends Names {
        TpccMixes() {
            super("standard", "n", "np", "ro", "rw");
        }
    }

    static final class TpccHomes extends Names {
        TpccHomes() {
            super("random", "server", "loop");
        }
    }

    /** {@code --on-abort}'s help, the same in {@code scythe sim} and {@code scythe bench}. */
    static final String ON_ABORT_HELP = "What a client does when its transaction aborts, the same for every protocol: "
        + "retry it (same keys) until it commits, latency from its first attempt to the commit, as Scythe's paper "
        + "measured; new: count the abort and draw a new transaction, latency per attempt, as FORD's worker does; "
        + "scythe: as retry, but TPC-C's types other than NewOrder run once, as Scythe's own harness does "
        + "(default: ${DEFAULT-VALUE}).";

    static final class OnAborts extends Names {
        OnAborts() {
            super(java.util.Arrays.stream(io.scythe.txn.OnAbort.values()).map(io.scythe.txn.OnAbort::label)
                .toArray(String[]::new));
        }
    }

    static final class Lookups extends Names {
        Lookups() {
            super("rpc", "onesided");
        }
    }

    /** The protocols chaos runs (with a redo log, so a killed CN can be recovered). */
    static final class RedoProtocols extends Names {
        RedoProtocols() {
            super("scythe", "scythe:exclusive", "scythe-occ", "ford-occ", "farm-occ");
        }
    }

    /**
     * What {@code scythe chaos} runs: the redo-log protocols, Lotus (its locks on compute nodes, issue 19), its Motor
     * baseline (FORD's CAS words, a dead node's commits rolled into the CVTs by its lock kind), and RCC's
     * five lock-based protocols (their coordinator logs and dead-node step, issue 18; CALVIN has no input log).
     */
    static final class ChaosProtocols extends Names {
        ChaosProtocols() {
            super("scythe", "scythe:exclusive", "scythe-occ", "ford-occ", "farm-occ", "lotus", "motor", "rcc-waitdie",
                "rcc-mvcc", "rcc-nowait", "rcc-occ", "rcc-sundial", "selcc-2pl", "selcc-occ", "selcc-to", "sel-2pl",
                "aurogon", "rcc-calvin"); // rcc-calvin: refused by ChaosCommand naming what cluster nodes lack for it
        }
    }

    static final class Providers extends Names {
        Providers() {
            super("local", "shm", "tcp", "disni");
        }
    }

    static final class Systems extends Names {
        Systems() {
            super("scythe", "hazelcast");
        }
    }

    static final class YcsbProfiles extends Names {
        YcsbProfiles() {
            super(io.scythe.bench.workload.YcsbSpec.PROFILES.toArray(String[]::new));
        }
    }

    static final class Peers extends Names {
        Peers() {
            super("mn", "cn");
        }
    }

    static final class OnOff extends Names {
        OnOff() {
            super("on", "off");
        }
    }

    static final class IdlePolicies extends Names {
        IdlePolicies() {
            super("busy-spin", "backoff");
        }
    }

    static final class SimWorkloads extends Names {
        SimWorkloads() {
            super("smallbank", "ycsb", "tatp", "tpcc", "phantom", "churn", "lock", "cas", "blink", "gcl", "tso",
                "all");
        }
    }

    static final class CasVerbs extends Names {
        CasVerbs() {
            super("cas", "write");
        }
    }

    static final class TsoGroups extends Names {
        TsoGroups() {
            super("loop", "cn");
        }
    }

    static final class Fabrics extends Names {
        Fabrics() {
            super("shm", "tcp");
        }
    }

    static final class ClusterWorkloadNames extends Names {
        ClusterWorkloadNames() {
            super("smallbank", "counters");
        }
    }
}
