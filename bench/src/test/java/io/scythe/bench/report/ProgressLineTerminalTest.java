package io.scythe.bench.report;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/** The progress line is rewritten in place only when stderr itself is a terminal (not when only stdout is one). */
class ProgressLineTerminalTest {
    @Test
    void shouldTellTerminalsFromFilesAndPipes() {
        assertThat(ProgressLine.isTerminalDevice("/dev/pts/3")).isTrue();
        assertThat(ProgressLine.isTerminalDevice("/dev/tty1")).isTrue();
        assertThat(ProgressLine.isTerminalDevice("/dev/console")).isTrue();
        assertThat(ProgressLine.isTerminalDevice("pipe:[123456]")).isFalse();
        assertThat(ProgressLine.isTerminalDevice("/tmp/bench.log")).isFalse();
        assertThat(ProgressLine.isTerminalDevice("/dev/null")).isFalse();
    }

    @Test
    void shouldSeeThatThisTestsStderrIsNoTerminal() {
        // Surefire forks this JVM with stderr on a pipe (or a file): no terminal, whatever stdin and stdout are.
        assertThat(ProgressLine.stderrIsTerminal()).isFalse();
    }
}
