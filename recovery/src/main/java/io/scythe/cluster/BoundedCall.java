package io.scythe.cluster;

import java.util.concurrent.Callable;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.FutureTask;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Consumer;

/**
 * A blocking Hazelcast call of a node's start, run with a bound (issue 23 §1, CI 212 at load ~40: a restarted CN's main
 * thread waited over 55 s in {@code IMap#addEntryListener}; a registration goes to every member in turn and starts
 * again whenever the member list changes, {@code EventServiceImpl#invokeOnStableClusterSerial}, with no timeout of its
 * own). The call runs on a thread of its own while the caller waits: every {@link #REPORT_EVERY_MS} it logs where the
 * call waits (that thread's top frames), and once the bound has passed the start fails with one line naming the step
 * ({@link IllegalStateException}: the launcher prints it and exits 1, a chaos harness restarts the node), never an
 * unbounded hang. Not retried here: Hazelcast already starts a registration again on each member change, so a second
 * one beside it would only add load; a fresh start is the retry. The abandoned call is interrupted and ends with the
 * node's close (Hazelcast shut down under it).
 */
final class BoundedCall {
    /** How often a step still waiting is logged with where it waits. */
    static final long REPORT_EVERY_MS = 5_000;
    private static final int FRAMES = 6;

    /** A blocking step with no result. */
    @FunctionalInterface
    interface Step {
        void run() throws Exception;
    }

    private BoundedCall() {
    }

    /** {@link #call} for a step with no result. */
    static void run(final String step, final long boundMs, final Consumer<String> log, final Step body)
        throws Exception {
        call(step, boundMs, REPORT_EVERY_MS, log, () -> {
            body.run();
            return null;
        });
    }

    /**
     * Runs {@code body} on a thread of its own and returns its result, or throws what it threw; logs on {@code log}
     * every {@code reportEveryMs} it waits, and throws {@link IllegalStateException} naming {@code step} once
     * {@code boundMs} passed without an answer.
     *
     * @throws IllegalArgumentException when {@code boundMs} or {@code reportEveryMs} is not positive
     */
    static <T> T call(final String step, final long boundMs, final long reportEveryMs, final Consumer<String> log,
                      final Callable<T> body) throws Exception {
        if (boundMs <= 0 || reportEveryMs <= 0) {
            throw new IllegalArgumentException("a start step's bound (" + boundMs + " ms) and report interval ("
                + reportEveryMs + " ms) must be positive");
        }
        final FutureTask<T> task = new FutureTask<>(body);
        final Thread thread = new Thread(task, "scythe-start-step");
        thread.setDaemon(true);
        thread.start();
        final long startNs = System.nanoTime();
        while (true) {
            final long waitedMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - startNs);
            final long leftMs = boundMs - waitedMs;
            try {
                return task.get(Math.max(1, Math.min(reportEveryMs, leftMs)), TimeUnit.MILLISECONDS);
            } catch (final ExecutionException e) {
                if (e.getCause() instanceof Exception cause) {
                    throw cause;
                }
                if (e.getCause() instanceof Error error) {
                    throw error;
                }
                throw e;
            } catch (final InterruptedException e) {
                thread.interrupt();
                throw e;
            } catch (final TimeoutException e) {
                final long nowMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - startNs);
                final String where = where(thread);
                if (nowMs >= boundMs) {
                    thread.interrupt();
                    throw new IllegalStateException(step + " did not finish within " + boundMs + " ms (it waits in "
                        + where + "); giving the start up");
                }
                log.accept("WARN " + step + " has not finished after " + nowMs + " ms (bound " + boundMs
                    + " ms); it waits in " + where);
            }
        }
    }

    /**
     * The top frames of {@code thread} outside the JDK (its parking and futures say nothing), innermost first: where a
     * step waits, e.g. {@code EventServiceImpl.invokeOnStableClusterSerial}.
     */
    static String where(final Thread thread) {
        final StringBuilder out = new StringBuilder();
        int frames = 0;
        for (final StackTraceElement frame : thread.getStackTrace()) {
            final String cls = frame.getClassName();
            if (frames == FRAMES) {
                break;
            }
            if (cls.startsWith("java.") || cls.startsWith("jdk.") || cls.startsWith("sun.")) {
                continue;
            }
            out.append(frames++ == 0 ? "" : " < ").append(cls.substring(cls.lastIndexOf('.') + 1)).append('.')
                .append(frame.getMethodName()).append(':').append(frame.getLineNumber());
        }
        if (out.isEmpty()) {
            return thread.getState() == Thread.State.NEW ? "(not started yet: a starved machine)"
                : "(no frames of its own: it just finished, or waits in the JDK)";
        }
        return out.toString();
    }
}
