package io.scythe.cli;

import io.scythe.bench.history.HistoryWriter;
import io.scythe.txn.Access;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/** {@code scythe check}: its verdict and exit code on a serializable history, a lost update, and a broken file. */
class CheckCommandTest {
    @TempDir
    Path dir;

    private static int run(final StringWriter out, final StringWriter err, final String... args) {
        final CommandLine cli = ScytheCommand.commandLine();
        cli.setOut(new PrintWriter(out, true));
        cli.setErr(new PrintWriter(err, true));
        return cli.execute(args);
    }

    private static Access readWrite(final long key, final long read) {
        final Access a = new Access("checking", key, null);
        a.fetched = true;
        a.readVersion = read;
        a.dirty = true;
        return a;
    }

    private Path history(final String name, final long secondReads) throws Exception {
        final Path file = dir.resolve(name);
        try (HistoryWriter writer = new HistoryWriter(file, 0, name)) {
            writer.committed(11, 1, 1, List.of(readWrite(5, 0)));
            writer.committed(12, 2, 2, List.of(readWrite(5, secondReads)));
        }
        return file;
    }

    @Test
    void shouldPassASerialHistoryAndExitZero() throws Exception {
        final StringWriter out = new StringWriter();
        assertThat(run(out, new StringWriter(), "check", history("serial.history", 1).toString())).isZero();
        assertThat(out.toString()).contains("2 transactions, 2 edges (ww 1, wr 1, rw 0)").contains("serializable")
            .doesNotContain("NOT");
    }

    @Test
    void shouldReportALostUpdateAndExitOne() throws Exception {
        history("serial.history", 1);
        history("lost.history", 0);
        final StringWriter out = new StringWriter();
        assertThat(run(out, new StringWriter(), "check", dir.toString())).isEqualTo(1);
        assertThat(out.toString())
            .contains("version 0 of checking:5 was overwritten by 2 transactions [T11, T12]")
            .contains("NOT SERIALIZABLE: 1 cycle(s)")
            .contains("G2 cycle of 2 transactions")
            .contains("T11 -rw-> T12");
    }

    @Test
    void shouldRefuseAFileThatIsNotAHistoryWithExitTwo() throws Exception {
        final Path junk = Files.writeString(dir.resolve("junk.history"), "hello");
        final StringWriter err = new StringWriter();
        assertThat(run(new StringWriter(), err, "check", junk.toString())).isEqualTo(2);
        assertThat(err.toString()).contains("not a history file").doesNotContain("\tat ");
        assertThat(run(new StringWriter(), new StringWriter(), "check", dir.resolve("missing").toString()))
            .isEqualTo(2);
    }
}
