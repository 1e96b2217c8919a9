package io.scythe.cluster;

import org.junit.jupiter.api.extension.BeforeAllCallback;
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
 * {@value #MAX_FLAGGED} of them), then its last {@value #TAIL_LINES} lines.
 */
public final class ProcessLogsOnFailure implements BeforeAllCallback, TestExecutionExceptionHandler,
    LifecycleMethodExecutionExceptionHandler {
    static final int TAIL_LINES = 150;
    static final int MAX_FLAGGED = 200;
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
            throwable.addSuppressed(new ProcessLogs(report(clusters, context.getDisplayName())));
        }
        return throwable;
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
        for (int i = 0; i < tail; i++) {
            if (FLAGGED.matcher(lines.get(i)).matches()) {
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
        out.append(tail == 0 ? "\n  all of it:" : "\n  its last " + TAIL_LINES + " lines:");
        for (int i = tail; i < lines.size(); i++) {
            out.append("\n  ").append(i + 1).append(": ").append(clipped(lines.get(i)));
        }
        return out.toString();
    }

    private static String clipped(final String line) {
        return line.length() <= MAX_LINE ? line : line.substring(0, MAX_LINE) + " ... (" + line.length() + " chars)";
    }
}
