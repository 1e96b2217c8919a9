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

    private static Access readWrite(final long key, final long read, final long made) {
        final Access a = new Access("checking", key, null);
        a.fetched = true;
        a.readVersion = read;
        a.dirty = true;
        a.installedVersion = made;
        return a;
    }

    private Path history(final String name, final long secondReads) throws Exception {
        final Path file = dir.resolve(name);
        try (HistoryWriter writer = new HistoryWriter(file, 0, name)) {
            writer.committed(11, 1, List.of(readWrite(5, 0, 1)));
            writer.committed(12, 2, List.of(readWrite(5, secondReads, 2)));
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
            .contains("NOT SERIALIZABLE: 1 cycle(s)")
            .contains("G2 cycle of 2 transactions")
            .contains("T11 -ww-> T12")
            .contains("T12 -rw-> T11  (checking:5: T12 read version 0, T11 overwrote it)");
    }

    /** A format version 1 file, byte by byte: both T11 and T12 overwrote version 0 of checking:5. */
    private Path versionOneLostUpdate() throws Exception {
        final java.io.ByteArrayOutputStream b = new java.io.ByteArrayOutputStream();
        b.write("SCYHIST\u0001".getBytes(java.nio.charset.StandardCharsets.US_ASCII));
        b.write(new byte[] {1, 0, 2, 'v', '1'}); // HEADER initialVersion 0, label "v1"
        b.write(new byte[] {2, 0, 8});
        b.write("checking".getBytes(java.nio.charset.StandardCharsets.US_ASCII)); // TABLE 0 "checking"
        // TXN seq txnId ts count, access (table 0 << 2 | READ | WRITE) key 5, read 0, made, overwritten 0
        b.write(new byte[] {3, 1, 11, 1, 1, 3, 5, 0, 1, 0});
        b.write(new byte[] {3, 2, 12, 2, 1, 3, 5, 0, 2, 0});
        b.write(new byte[] {4, 2}); // END: 2 transactions
        return Files.write(dir.resolve("v1.history"), b.toByteArray());
    }

    @Test
    void shouldReadAVersionOneFileAndFindItsFork() throws Exception {
        final StringWriter out = new StringWriter();
        assertThat(run(out, new StringWriter(), "check", versionOneLostUpdate().toString())).isEqualTo(1);
        assertThat(out.toString())
            .contains("version 0 of checking:5 was overwritten by 2 transactions [T11, T12]")
            .contains("G2 cycle of 2 transactions");
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
