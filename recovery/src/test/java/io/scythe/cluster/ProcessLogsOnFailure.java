package io.scythe.cluster;

import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.BeforeEachCallback;
import org.junit.jupiter.api.extension.ExtensionContext;
import org.junit.jupiter.api.extension.LifecycleMethodExecutionExceptionHandler;
import org.junit.jupiter.api.extension.TestExecutionExceptionHandler;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Pattern;

/**
 * When a test (or a test class's {@code @BeforeAll}/{@code @AfterEach}/...) fails, adds to its failure the tail of
 * every node log of every {@link LocalCluster} its class made, naming the log files (issue 23 §1: CI clones are
 * deleted with the logs, and three process-test flakes could not be read). It is attached as a suppressed
 * {@link ProcessLogs} (no stack of its own), so it lands where surefire prints the failure: the console, hence the CI
 * log (the tests' own output goes to {@code target/surefire-reports/*-output.txt}, which goes with the clone), and the
 * XML report. A passing test prints nothing.
 *
 * <p>Registered for every test class of this module by JUnit's extension autodetection
 * ({@code src/test/resources/junit-platform.properties} and its service file): a class that makes no cluster is not
 * affected. Per node: its process (running, or its exit code), its log's path and length, every WARN/ERROR line
 * before the tail (with the line above it: java.util.logging writes the time and logger there; at most
 * {@value #MAX_FLAGGED} of them), any thread dump the node logged itself ({@link ThreadDump}), its last
 * {@value #TAIL_LINES} lines, then the last {@value #GC_TAIL_LINES} lines of its GC log
 * ({@link LocalCluster#gcLogOption}).
 *
 * <p>Then the thread dumps of every node process still running (issue 23 §1: the wedge of CI 193/195 was read from
 * logs alone): {@code jcmd <pid> Thread.print -l}, every node at once, each bounded at {@value #DUMP_MS} ms; a
 * SIGSTOPped process is named, not asked. They are taken when {@link ProcessClusters#eventually} gives up
 * ({@link #snapshot}: before the test's own clean-up, which may wake or restart a node), else when the failure is
 * handled.
 */
public final class ProcessLogsOnFailure implements BeforeAllCallback, BeforeEachCallback, TestExecutionExceptionHandler,
    LifecycleMethodExecutionExceptionHandler {
    static final int TAIL_LINES = 150;
    static final int MAX_FLAGGED = 200;
    static final int GC_TAIL_LINES = 30;
    static final long DUMP_MS = 10_000;
    /** At most this many lines of the thread dumps a node logged itself. */
    static final int MAX_LOGGED_DUMP_LINES = 4_000;
    private static final int MAX_LINE = 600;
    private static final Pattern FLAGGED = Pattern.compile(
        "^(WARNING|SEVERE|WARN|ERROR)\\b.*|.*\\b(WARN|ERROR)\\b.*|.*\\bException\\b.*");

    /** Every cluster made in this JVM, in order (a test JVM runs its classes one after the other). */
    private static final List<LocalCluster> MADE = new ArrayList<>();

    static {
        LocalCluster.observe(c -> {
            synchronized (MADE) {
                MADE.add(c);
            }
        });
    }

    /** The thread dumps {@link #snapshot} took, in order. */
    private static final List<String> SNAPSHOTS = new ArrayList<>();

    private static final ExtensionContext.Namespace NS = ExtensionContext.Namespace.create(ProcessLogsOnFailure.class);

    /** The failure's attachment: the nodes' logs as its message, no stack trace. */
    static final class ProcessLogs extends Exception {
        ProcessLogs(final String logs) {
            super(logs, null, false, false);
        }
    }

    @Override
    public void beforeAll(final ExtensionContext context) {
        synchronized (MADE) {
            context.getStore(NS).put("first", MADE.size());
        }
        synchronized (SNAPSHOTS) {
            context.getStore(NS).put("firstSnapshot", SNAPSHOTS.size());
        }
    }

    /** A test's own failure carries the snapshots taken from its start (its class's carry those from the class's). */
    @Override
    public void beforeEach(final ExtensionContext context) {
        synchronized (SNAPSHOTS) {
            context.getStore(NS).put("firstSnapshot", SNAPSHOTS.size());
        }
    }

    @Override
    public void handleTestExecutionException(final ExtensionContext context, final Throwable throwable)
        throws Throwable {
        throw attached(context, throwable);
    }

    @Override
    public void handleBeforeAllMethodExecutionException(final ExtensionContext context, final Throwable throwable)
        throws Throwable {
        throw attached(context, throwable);
    }

    @Override
    public void handleBeforeEachMethodExecutionException(final ExtensionContext context, final Throwable throwable)
        throws Throwable {
        throw attached(context, throwable);
    }

    @Override
    public void handleAfterEachMethodExecutionException(final ExtensionContext context, final Throwable throwable)
        throws Throwable {
        throw attached(context, throwable);
    }

    @Override
    public void handleAfterAllMethodExecutionException(final ExtensionContext context, final Throwable throwable)
        throws Throwable {
        throw attached(context, throwable);
    }

    /** {@code throwable} with the logs of the clusters made since its class started attached (once). */
    private static Throwable attached(final ExtensionContext context, final Throwable throwable) {
        final Integer first = context.getStore(NS).get("first", Integer.class); // the class's, found from a method's
        final List<LocalCluster> clusters;
        synchronized (MADE) {
            clusters = first == null ? List.of() : List.copyOf(MADE.subList(Math.min(first, MADE.size()),
                MADE.size()));
        }
        for (final Throwable s : throwable.getSuppressed()) {
            if (s instanceof ProcessLogs) {
                return throwable;
            }
        }
        if (!clusters.isEmpty()) {
            final Integer firstSnapshot = context.getStore(NS).get("firstSnapshot", Integer.class);
            final List<String> snapshots;
            synchronized (SNAPSHOTS) {
                snapshots = firstSnapshot == null ? List.of() : List.copyOf(SNAPSHOTS.subList(
                    Math.min(firstSnapshot, SNAPSHOTS.size()), SNAPSHOTS.size()));
            }
            final StringBuilder out = new StringBuilder(report(clusters, context.getDisplayName()));
            if (snapshots.isEmpty()) {
                final String dumps = threadDumps(clusters);
                if (!dumps.isEmpty()) {
                    out.append("\n==== thread dumps of the running node processes at the failure:").append(dumps);
                }
            } else {
                snapshots.forEach(d -> out.append('\n').append(d));
            }
            throwable.addSuppressed(new ProcessLogs(out.toString()));
        }
        return throwable;
    }

    /**
     * Takes the thread dumps of every running node process of every cluster made in this JVM, to be attached to the
     * failure being made ({@code why}): called where a wait gives up, before the test's clean-up changes the picture.
     * Nothing when no node runs.
     */
    static void snapshot(final String why) {
        final List<LocalCluster> clusters;
        synchronized (MADE) {
            clusters = List.copyOf(MADE);
        }
        final String dumps = threadDumps(clusters);
        if (!dumps.isEmpty()) {
            synchronized (SNAPSHOTS) {
                SNAPSHOTS.add("==== thread dumps of the running node processes at " + java.time.Instant.now() + " ("
                    + why + "):" + dumps);
            }
        }
    }

    /**
     * The thread dumps of {@code clusters}' running node processes ({@code jcmd PID Thread.print -l}, all asked at
     * once, each waited for at most {@link #DUMP_MS}); empty when none runs. A stopped process (SIGSTOP) cannot answer:
     * it is named instead.
     */
    static String threadDumps(final List<LocalCluster> clusters) {
        final List<LocalCluster.Node> running = new ArrayList<>();
        for (final LocalCluster cluster : clusters) {
            for (final LocalCluster.Node n : cluster.nodes().values()) {
                if (n.process() != null && n.process().isAlive()) {
                    running.add(n);
                }
            }
        }
        if (running.isEmpty()) {
            return "";
        }
        final java.nio.file.Path jcmd = java.nio.file.Path.of(ProcessHandle.current().info().command().orElse("java"))
            .resolveSibling("jcmd");
        final List<Object[]> asked = new ArrayList<>(); // node, its output file or the reason it has none, jcmd
        for (final LocalCluster.Node n : running) {
            final long pid = n.process().pid();
            if (stopped(pid)) {
                asked.add(new Object[] {n, "stopped (SIGSTOP): not asked", null});
                continue;
            }
            try {
                final java.nio.file.Path file = Files.createTempFile("scythe-jcmd-" + pid + "-", ".txt");
                final Process p = new ProcessBuilder(Files.isExecutable(jcmd) ? jcmd.toString() : "jcmd",
                    Long.toString(pid), "Thread.print", "-l").redirectErrorStream(true)
                    .redirectOutput(file.toFile()).start();
                asked.add(new Object[] {n, file, p});
            } catch (final IOException e) {
                asked.add(new Object[] {n, "jcmd could not be started: " + e, null});
            }
        }
        final long deadline = System.nanoTime() + java.util.concurrent.TimeUnit.MILLISECONDS.toNanos(DUMP_MS);
        final StringBuilder out = new StringBuilder();
        for (final Object[] a : asked) {
            final LocalCluster.Node n = (LocalCluster.Node) a[0];
            out.append("\n---- threads of ").append(n.name()).append(" (pid ").append(n.process().pid()).append(")");
            if (!(a[1] instanceof java.nio.file.Path file)) {
                out.append(": ").append(a[1]);
                continue;
            }
            final Process p = (Process) a[2];
            try {
                final boolean done = p.waitFor(Math.max(0, deadline - System.nanoTime()),
                    java.util.concurrent.TimeUnit.NANOSECONDS);
                if (!done) {
                    p.destroyForcibly().waitFor(2, java.util.concurrent.TimeUnit.SECONDS);
                    out.append(": jcmd did not answer within ").append(DUMP_MS).append(" ms");
                }
                out.append(done ? " at " + java.time.Instant.now() + ":\n" : "; what it printed:\n")
                    .append(Files.readString(file, StandardCharsets.UTF_8)
                        .replace("\n   Locked ownable synchronizers:\n\t- None\n", ""));
            } catch (final InterruptedException e) {
                Thread.currentThread().interrupt();
                p.destroyForcibly();
                out.append(": interrupted");
            } catch (final IOException e) {
                out.append(": its dump could not be read: ").append(e);
            } finally {
                try {
                    Files.deleteIfExists(file);
                } catch (final IOException e) {
                    // a temporary file left behind
                }
            }
        }
        return out.toString();
    }

    /** Whether process {@code pid} is stopped (state T in /proc/PID/stat); false where that cannot be read. */
    private static boolean stopped(final long pid) {
        try {
            final String stat = Files.readString(java.nio.file.Path.of("/proc", Long.toString(pid), "stat"));
            final int end = stat.lastIndexOf(')');
            return end > 0 && end + 2 < stat.length() && (stat.charAt(end + 2) == 'T' || stat.charAt(end + 2) == 't');
        } catch (final IOException | RuntimeException e) {
            return false;
        }
    }

    /** The report of {@code clusters}' node logs, for a failure of {@code what}. */
    static String report(final List<LocalCluster> clusters, final String what) {
        final StringBuilder out = new StringBuilder("the node processes' logs at the failure of " + what + ":");
        for (final LocalCluster cluster : clusters) {
            out.append("\n==== cluster ").append(cluster.cluster());
            for (final LocalCluster.Node n : cluster.nodes().values()) {
                out.append('\n').append(node(n));
            }
        }
        return out.toString();
    }

    private static String node(final LocalCluster.Node n) {
        final Process p = n.process();
        final String process = p == null ? "never started" : p.isAlive() ? "pid " + p.pid() + " running"
            : "pid " + p.pid() + " exited with " + p.exitValue();
        if (!Files.exists(n.log())) {
            return "---- " + n.name() + " (" + process + "): log " + n.log() + ": no such file"
                + (p == null ? "" : " (removed with its test's directory?)");
        }
        final List<String> lines;
        try {
            lines = Files.readAllLines(n.log(), StandardCharsets.UTF_8);
        } catch (final IOException e) {
            return "---- " + n.name() + " (" + process + "): its log " + n.log() + " could not be read: " + e;
        }
        final StringBuilder out = new StringBuilder("---- ").append(n.name()).append(" (").append(process)
            .append("): log ").append(n.log()).append(", ").append(lines.size()).append(" lines");
        final int tail = Math.max(0, lines.size() - TAIL_LINES);
        final List<Integer> flagged = new ArrayList<>();
        final List<Integer> dumped = new ArrayList<>(); // the lines of the thread dumps the node logged
        boolean inDump = false;
        for (int i = 0; i < lines.size(); i++) {
            final String line = lines.get(i);
            if (line.startsWith(ThreadDump.BEGIN)) {
                inDump = true;
            }
            if (inDump) {
                if (dumped.size() < MAX_LOGGED_DUMP_LINES) {
                    dumped.add(i);
                }
                inDump = !line.startsWith(ThreadDump.END);
            } else if (i < tail && FLAGGED.matcher(line).matches()) {
                flagged.add(i);
            }
        }
        if (!flagged.isEmpty()) {
            out.append("\n  its ").append(flagged.size()).append(" WARN/ERROR/Exception line(s) before the last ")
                .append(TAIL_LINES).append(flagged.size() > MAX_FLAGGED ? " (the last " + MAX_FLAGGED + ")" : "")
                .append(':');
            int shown = -1;
            for (final int i : flagged.subList(Math.max(0, flagged.size() - MAX_FLAGGED), flagged.size())) {
                for (int j = Math.max(i - 1, shown + 1); j <= i; j++) {
                    out.append("\n  ").append(j + 1).append(": ").append(clipped(lines.get(j)));
                }
                shown = i;
            }
        }
        if (!dumped.isEmpty()) {
            out.append("\n  the thread dumps it logged (").append(dumped.size()).append(" lines")
                .append(dumped.size() == MAX_LOGGED_DUMP_LINES ? ", the first " + MAX_LOGGED_DUMP_LINES : "")
                .append("):");
            for (final int i : dumped) {
                out.append("\n  ").append(i + 1).append(": ").append(clipped(lines.get(i)));
            }
        }
        out.append(tail == 0 ? "\n  all of it:" : "\n  its last " + TAIL_LINES + " lines:");
        for (int i = tail; i < lines.size(); i++) {
            out.append("\n  ").append(i + 1).append(": ").append(clipped(lines.get(i)));
        }
        return out.append(gcTail(n)).toString();
    }

    /** The last {@value #GC_TAIL_LINES} lines of {@code n}'s GC log, where it has one. */
    private static String gcTail(final LocalCluster.Node n) {
        final java.nio.file.Path gc = n.gcLog();
        if (gc == null || !Files.exists(gc)) {
            return "";
        }
        try {
            final List<String> lines = Files.readAllLines(gc, StandardCharsets.UTF_8);
            final StringBuilder out = new StringBuilder("\n  its GC log ").append(gc).append(", ").append(lines.size())
                .append(" lines; the last ").append(Math.min(GC_TAIL_LINES, lines.size())).append(':');
            for (final String line : lines.subList(Math.max(0, lines.size() - GC_TAIL_LINES), lines.size())) {
                out.append("\n  ").append(clipped(line));
            }
            return out.toString();
        } catch (final IOException e) {
            return "\n  its GC log " + gc + " could not be read: " + e;
        }
    }

    private static String clipped(final String line) {
        return line.length() <= MAX_LINE ? line : line.substring(0, MAX_LINE) + " ... (" + line.length() + " chars)";
    }
}
