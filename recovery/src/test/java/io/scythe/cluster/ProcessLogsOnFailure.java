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
 * logs alone): SIGQUIT to every node at once, each dump read from its log, {@value #DUMP_MS} ms at most in all; a
 * SIGSTOPped process is named, not asked. In the node's log section such a dump is one line saying so. They are taken when {@link ProcessClusters#eventually} gives up
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
     * The thread dumps of {@code clusters}' running node processes, empty when none runs: each is sent SIGQUIT (all at
     * once), on which its JVM prints its threads (whole stacks, locks, deadlocks found) to its standard output, its log;
     * each is read from there, waited for at most {@link #DUMP_MS} in all. Not jcmd: a run at load 32-43 had jcmd time
     * out at 10 s on every node (each jcmd is a JVM of its own to start). A stopped process (SIGSTOP) cannot answer: it
     * is named instead.
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
        final java.util.Map<LocalCluster.Node, Object> asked = new java.util.LinkedHashMap<>(); // log offset or why not
        for (final LocalCluster.Node n : running) {
            final long pid = n.process().pid();
            if (stopped(pid)) {
                asked.put(n, "stopped (SIGSTOP): not asked");
                continue;
            }
            try {
                final long offset = Files.size(n.log());
                final Process kill = new ProcessBuilder("kill", "-QUIT", Long.toString(pid)).redirectErrorStream(true)
                    .start();
                asked.put(n, kill.waitFor(5, java.util.concurrent.TimeUnit.SECONDS) && kill.exitValue() == 0 ? offset
                    : "kill -QUIT failed: " + new String(kill.getInputStream().readAllBytes(), StandardCharsets.UTF_8));
            } catch (final IOException e) {
                asked.put(n, "not asked: " + e);
            } catch (final InterruptedException e) {
                Thread.currentThread().interrupt();
                asked.put(n, "not asked: interrupted");
            }
        }
        final long deadline = System.nanoTime() + java.util.concurrent.TimeUnit.MILLISECONDS.toNanos(DUMP_MS);
        final java.util.Map<LocalCluster.Node, String> dumps = new java.util.LinkedHashMap<>();
        while (true) {
            for (final java.util.Map.Entry<LocalCluster.Node, Object> a : asked.entrySet()) {
                if (a.getValue() instanceof Long offset && !dumps.containsKey(a.getKey())) {
                    final String dump = dumpIn(a.getKey().log(), offset, false);
                    if (dump != null) {
                        dumps.put(a.getKey(), dump);
                    }
                }
            }
            if (dumps.size() == asked.values().stream().filter(Long.class::isInstance).count()
                || System.nanoTime() > deadline || Thread.currentThread().isInterrupted()) {
                break;
            }
            try {
                Thread.sleep(100);
            } catch (final InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
        final StringBuilder out = new StringBuilder();
        for (final java.util.Map.Entry<LocalCluster.Node, Object> a : asked.entrySet()) {
            final LocalCluster.Node n = a.getKey();
            out.append("\n---- threads of ").append(n.name()).append(" (pid ").append(n.process().pid()).append(")");
            if (!(a.getValue() instanceof Long offset)) {
                out.append(": ").append(a.getValue());
            } else if (dumps.containsKey(n)) {
                out.append(":\n").append(dumps.get(n));
            } else {
                final String part = dumpIn(n.log(), offset, true);
                out.append(": its dump did not end within ").append(DUMP_MS).append(" ms")
                    .append(part == null ? " (nothing of it in its log)" : "; what it printed:\n" + part);
            }
        }
        return out.toString();
    }

    /** The first line of a JVM's SIGQUIT thread dump, and the line that ends its threads. */
    static final String DUMP_FIRST = "Full thread dump ";
    static final String DUMP_LAST = "JNI global refs";

    /**
     * The SIGQUIT thread dump in {@code log} after byte {@code offset} (its date line, up to its {@link #DUMP_LAST}
     * line; other lines the node logged meanwhile stay in), or null if it has not ended yet ({@code partial}: what
     * there is of it, null if nothing).
     */
    private static String dumpIn(final java.nio.file.Path log, final long offset, final boolean partial) {
        final String text;
        try (java.io.RandomAccessFile f = new java.io.RandomAccessFile(log.toFile(), "r")) {
            final long length = f.length();
            if (length <= offset) {
                return null;
            }
            final byte[] bytes = new byte[(int) Math.min(Integer.MAX_VALUE - 8, length - offset)];
            f.seek(offset);
            f.readFully(bytes);
            text = new String(bytes, StandardCharsets.UTF_8);
        } catch (final IOException e) {
            return null;
        }
        final int first = text.indexOf(DUMP_FIRST);
        if (first < 0) {
            return null;
        }
        final int from = text.lastIndexOf('\n', Math.max(0, text.lastIndexOf('\n', first) - 1)) + 1; // its date line
        final int last = text.indexOf(DUMP_LAST, first);
        if (last < 0) {
            return partial ? text.substring(from).replace(NO_SYNCHRONIZERS, "") : null;
        }
        int end = text.indexOf('\n', last);
        final int heap = text.indexOf("\nHeap\n", last);
        if (text.indexOf("Java-level deadlock", last) >= 0) { // printed after the threads, before the heap
            end = heap >= 0 ? heap : text.length();
        }
        return text.substring(from, end < 0 ? text.length() : end).replace(NO_SYNCHRONIZERS, "");
    }

    /** What a SIGQUIT dump says of every thread that holds no lock object (ReentrantLock...): left out. */
    private static final String NO_SYNCHRONIZERS = "\n   Locked ownable synchronizers:\n\t- None\n";

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
        final List<Integer> flagged = new ArrayList<>();
        final List<Integer> dumped = new ArrayList<>(); // the lines of the thread dumps the node logged
        boolean inDump = false;
        // The SIGQUIT dumps (threadDumps) are printed with the dumps: here one line each.
        final boolean[] quit = new boolean[lines.size()];
        for (int i = 0, from = -1; i < lines.size(); i++) {
            if (lines.get(i).startsWith(DUMP_FIRST)) {
                from = i;
            } else if (from >= 0 && lines.get(i).startsWith(DUMP_LAST)) {
                java.util.Arrays.fill(quit, from, i + 1, true);
                from = -1;
            }
        }
        int tail = lines.size(); // from where TAIL_LINES lines not of such a dump follow
        for (int shown = 0; tail > 0 && shown < TAIL_LINES; tail--) {
            shown += quit[tail - 1] ? 0 : 1;
        }
        for (int i = 0; i < lines.size(); i++) {
            final String line = lines.get(i);
            if (quit[i]) {
                continue;
            }
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
            if (!quit[i]) {
                out.append("\n  ").append(i + 1).append(": ").append(clipped(lines.get(i)));
            } else if (i == tail || !quit[i - 1]) {
                int j = i;
                while (j + 1 < lines.size() && quit[j + 1]) {
                    j++;
                }
                out.append("\n  ").append(i + 1).append("-").append(j + 1)
                    .append(": a thread dump it printed on SIGQUIT (with the thread dumps below)");
            }
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
