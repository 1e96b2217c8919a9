package io.scythe.cluster;

import io.vertx.core.json.JsonObject;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.platform.engine.TestExecutionResult;
import org.junit.platform.launcher.TestExecutionListener;
import org.junit.platform.launcher.TestIdentifier;
import org.junit.platform.launcher.core.LauncherDiscoveryRequestBuilder;
import org.junit.platform.launcher.core.LauncherFactory;

import java.nio.file.Path;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.platform.engine.discovery.DiscoverySelectors.selectClass;

/**
 * A process test that fails carries its nodes' logs in its failure ({@link ProcessLogsOnFailure}, registered by
 * autodetection): two deliberately failing classes (nested, so surefire does not run them; they also skip unless this
 * test runs them) are run through the JUnit Platform, and their failures read. The "nodes" are shells that print lines
 * and exit: no JVM, no Hazelcast.
 */
class ProcessLogsOnFailureTest {
    /** The test-only switch: the failing classes below run only while this test runs them. */
    static volatile boolean onPurpose;

    /** A node that logs a warning early, 200 filler lines, then its ready line, and exits. */
    private static final String TALKATIVE = "echo boot; echo 'Nov 29, 2026 5:31:27 AM com.example.Logger'; "
        + "echo 'WARNING: an early warning'; i=1; while [ $i -le 200 ]; do echo \"filler $i\"; i=$((i+1)); done; "
        + "echo pid $$";

    private static LocalCluster fake(final String name, final Path dir, final String script) throws Exception {
        return new LocalCluster(name + ProcessHandle.current().pid(), "s3cret-for-a-test-only", 1, 1, 0,
            new JsonObject().put("name", "smallbank"), new JsonObject().put("provider", "shm"), "scythe", dir,
            new LocalCluster.Launcher(List.of("sh", "-c", script)));
    }

    /** A test that starts a cluster (local to it, closed in its finally) and then fails an assertion. */
    static class FailingTest {
        @Test
        void failsAfterItsNodesLogged(@TempDir final Path dir) throws Exception {
            Assumptions.assumeTrue(onPurpose, "run only by ProcessLogsOnFailureTest");
            final LocalCluster cluster = fake("logs-test-", dir, TALKATIVE);
            try {
                cluster.start(20_000);
                cluster.node("cn0").process().waitFor();
            } finally {
                cluster.close();
            }
            assertThat(1).as("on purpose").isEqualTo(2);
        }
    }

    /** A class whose {@code @BeforeAll} fails to start its cluster: every node exits before it is ready. */
    static class FailingStart {
        static LocalCluster cluster;

        @BeforeAll
        static void start(@TempDir final Path dir) throws Exception {
            Assumptions.assumeTrue(onPurpose, "run only by ProcessLogsOnFailureTest");
            cluster = fake("logs-start-", dir, "echo 'SEVERE: cannot start on purpose'; exit 3");
            cluster.start(20_000);
        }

        @AfterAll
        static void stop() {
            if (cluster != null) {
                cluster.close();
            }
        }

        @Test
        void neverRuns() {
        }
    }

    /**
     * A test whose wait gives up while its nodes, real (small) JVMs, run: one of them paused (SIGSTOP). Its cluster is
     * closed only after the test (as a class's cluster is in its {@code @AfterAll}).
     */
    static class FailingWhileRunning {
        static LocalCluster cluster;

        @Test
        void waitsInVain(@TempDir final Path dir) throws Exception {
            Assumptions.assumeTrue(onPurpose, "run only by ProcessLogsOnFailureTest");
            // -classpath, not -cp: LocalCluster gives a "-cp" launch the node class archive's options, when on.
            cluster = new LocalCluster("logs-jvm-" + ProcessHandle.current().pid(), "s3cret-for-a-test-only", 1, 1, 0,
                new JsonObject().put("name", "smallbank"), new JsonObject().put("provider", "shm"), "scythe", dir,
                new LocalCluster.Launcher(List.of(ProcessHandle.current().info().command().orElseThrow(), "-Xmx32m",
                    "-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC", "-classpath", System.getProperty("java.class.path"),
                    ThreadDumpProbeMain.class.getName())));
            cluster.start(60_000);
            cluster.signal("cn0", "STOP");
            ProcessClusters.eventually("something that never happens", 1_500, 300, () -> false);
        }

        @AfterAll
        static void stop() {
            if (cluster != null) {
                cluster.close();
            }
        }
    }

    /** The failures of running {@code test}, by the display name of what failed. */
    private static Map<String, Throwable> failuresOf(final Class<?> test) {
        final Map<String, Throwable> failures = new java.util.concurrent.ConcurrentHashMap<>();
        onPurpose = true;
        try {
            LauncherFactory.create().execute(LauncherDiscoveryRequestBuilder.request().selectors(selectClass(test))
                .build(), new TestExecutionListener() {
                    @Override
                    public void executionFinished(final TestIdentifier id, final TestExecutionResult result) {
                        result.getThrowable().ifPresent(t -> failures.put(id.getDisplayName(), t));
                    }
                });
        } finally {
            onPurpose = false;
        }
        return failures;
    }

    private static Throwable failure(final Map<String, Throwable> failures, final String name) {
        return failures.entrySet().stream().filter(e -> e.getKey().endsWith(name)).map(Map.Entry::getValue)
            .findFirst().orElse(null);
    }

    private static String logs(final Throwable failure) {
        assertThat(failure.getSuppressed()).as("what is attached to %s", failure.toString())
            .hasAtLeastOneElementOfType(ProcessLogsOnFailure.ProcessLogs.class);
        return java.util.Arrays.stream(failure.getSuppressed()).filter(ProcessLogsOnFailure.ProcessLogs.class::isInstance)
            .findFirst().orElseThrow().getMessage();
    }

    @Test
    void shouldAttachTheTailAndTheEarlierWarningsOfEveryNodesLogToAFailedTest() {
        final Map<String, Throwable> failures = failuresOf(FailingTest.class);
        final Throwable failure = failure(failures, "failsAfterItsNodesLogged(Path)");
        assertThat(failure).as("failures %s", failures).isInstanceOf(AssertionError.class);
        assertThat(failure.getMessage()).contains("on purpose");
        final String logs = logs(failure);
        for (final String node : List.of("tso", "mn0", "cn0")) {
            // Named, with its file and its process's end; 204 lines: a warning at 3 (and the line above it), the
            // tail from 55.
            assertThat(logs).containsPattern("---- " + node + " \\(pid \\d+ exited with 0\\): log \\S+node-" + node
                + "\\.log, 204 lines");
        }
        assertThat(logs).contains("\n  2: Nov 29, 2026 5:31:27 AM com.example.Logger\n  3: WARNING: an early warning")
            .contains("\n  55: filler 52\n").contains("\n  204: pid ")
            .doesNotContain("\n  1: boot").doesNotContain("\n  54: filler 51\n");
        // Once per node: the tails are not repeated.
        assertThat(logs.split("WARNING: an early warning", -1)).hasSize(4);
    }

    @Test
    void shouldAttachTheLogsToAFailedStartInBeforeAll() {
        final Map<String, Throwable> failures = failuresOf(FailingStart.class);
        final Throwable failure = failure(failures, "FailingStart");
        assertThat(failure).as("failures %s", failures).hasMessageContaining("node tso exited with 3");
        final String logs = logs(failure);
        assertThat(logs).containsPattern("---- tso \\(pid \\d+ exited with 3\\): log \\S+node-tso\\.log, 1 lines")
            .contains("\n  1: SEVERE: cannot start on purpose").contains("---- mn0 (never started): log ")
            .contains("node-mn0.log: no such file");
    }

    @Test
    void shouldAttachTheRunningNodesThreadsTheirOwnDumpsAndTheirGcLogsToAFailedWait() {
        final Map<String, Throwable> failures = failuresOf(FailingWhileRunning.class);
        final Throwable failure = failure(failures, "waitsInVain(Path)");
        assertThat(failure).as("failures %s", failures).hasMessageContaining("not within 1500 ms: something");
        final String logs = logs(failure);
        // Taken while the wait went on and as it gave up (the cluster still ran), every running node asked, the paused
        // one named.
        assertThat(logs).contains("==== thread dumps of the running node processes at ")
            .contains(" (still waiting after 300 ms: something that never happens):")
            .contains(" (not within 1500 ms: something that never happens):")
            .containsPattern("---- threads of cn0 \\(pid \\d+\\): stopped \\(SIGSTOP\\): not asked");
        for (final String node : List.of("tso", "mn0")) {
            final String threads = section(logs, "---- threads of " + node + " (pid");
            // Its JVM's SIGQUIT dump, whole: the main thread in the probe's own method, below Thread.sleep.
            assertThat(threads).containsPattern("\\(pid \\d+\\):\\n\\S+ \\S+\\nFull thread dump ")
                .contains("\"main\"").contains("ThreadDumpProbeMain.waitingForTheTest").contains("JNI global refs");
            // In the node's log section it is one line.
            assertThat(section(logs, "---- " + node + " (pid")).containsPattern(
                "\\n  \\d+-\\d+: a thread dump it printed on SIGQUIT \\(with the thread dumps below\\)")
                .doesNotContain("ThreadDumpProbeMain.waitingForTheTest");
        }
        for (final String node : List.of("tso", "mn0", "cn0")) {
            final String section = section(logs, "---- " + node + " (pid");
            // The dump the node logged itself, whole, between its markers; then its GC log's tail (the System.gc).
            assertThat(section).contains("the thread dumps it logged (")
                .contains(ThreadDump.BEGIN + " of the probe (").contains("ThreadDumpProbeMain.main")
                .contains(ThreadDump.END)
                .containsPattern("its GC log \\S+node-" + node + "-gc-\\d+\\.log, \\d+ lines; the last \\d+:")
                .contains("Pause Full (System.gc())");
        }
        // Taken twice in the wait: not again when the failure was handled.
        assertThat(logs.split("==== thread dumps of the running node processes", -1)).hasSize(3);
    }

    /** The part of {@code logs} from {@code header} to the next section's. */
    private static String section(final String logs, final String header) {
        final int start = logs.indexOf(header);
        assertThat(start).as("%s in %s", header, logs).isNotNegative();
        final int end = logs.indexOf("\n---- ", start + 1);
        return end < 0 ? logs.substring(start) : logs.substring(start, end);
    }
}
