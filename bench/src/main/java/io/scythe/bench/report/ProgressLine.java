package io.scythe.bench.report;

import java.io.PrintStream;
import java.util.Locale;

/**
 * The live progress line of a run: elapsed time, committed/s, abort rate and P99 so far, once a second on stderr.
 * On a terminal each update overwrites the previous one in place ({@code \r} and erase-line) and {@link #done()}
 * clears it, so the table that follows stays clean; to a file or pipe every update is a plain line.
 */
public final class ProgressLine {
    private static final String ERASE_LINE = "\u001b[K";

    private final PrintStream err;
    private final boolean terminal;
    private boolean shown;

    /** @param terminal overwrite in place (a TTY) rather than print one line per update */
    public ProgressLine(final PrintStream err, final boolean terminal) {
        this.err = err;
        this.terminal = terminal;
    }

    /** To {@code System.err}, in place only when stderr itself is a terminal. */
    public static ProgressLine toStderr() {
        return new ProgressLine(System.err, stderrIsTerminal());
    }

    /**
     * Whether this process's stderr is a terminal: on Linux, what {@code /proc/self/fd/2} points to. Elsewhere, the
     * JVM's console (stdin and stdout both terminals), the nearest Java 17 can tell.
     */
    static boolean stderrIsTerminal() {
        try {
            return isTerminalDevice(java.nio.file.Files.readSymbolicLink(java.nio.file.Path.of("/proc/self/fd/2"))
                .toString());
        } catch (final java.io.IOException | UnsupportedOperationException | SecurityException noProc) {
            return System.console() != null;
        }
    }

    /** Whether {@code device} (where a file descriptor points) is a terminal: a pseudo-terminal, a tty, the console. */
    static boolean isTerminalDevice(final String device) {
        return device.startsWith("/dev/pts/") || device.startsWith("/dev/tty") || device.equals("/dev/console");
    }

    /** One update: {@code label} names the run (protocol and clients). */
    public void update(final String label, final double elapsedS, final double committedPerS,
                       final double abortRate, final double p99Us) {
        final String text = String.format(Locale.ROOT, "%s  %5.1f s  %,10.0f committed/s  abort rate %5.3f  p99 %,9.1f us",
            label, elapsedS, committedPerS, abortRate, p99Us);
        if (terminal) {
            err.print("\r" + text + ERASE_LINE);
        } else {
            err.println(text);
        }
        err.flush();
        shown = true;
    }

    /** The run is over: clears the line on a terminal. */
    public void done() {
        if (terminal && shown) {
            err.print("\r" + ERASE_LINE);
            err.flush();
        }
        shown = false;
    }
}
