package io.scythe.cli;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;

import static org.assertj.core.api.Assertions.assertThat;

/** {@code scythe reproduce} (a quick run of the cheapest figures): the paper's numbers beside ours, and the command. */
class ReproduceCommandTest {
    @TempDir
    Path dir;

    @Test
    void shouldWriteThePapersNumbersBesideOursWithTheCommands() throws Exception {
        final int code = ScytheCommand.commandLine().execute("reproduce", "table1", "fig27", "--quick", "--out",
            dir.toString());
        assertThat(code).isZero();
        final String md = Files.readString(dir.resolve("reproduce.md"));
        assertThat(md).contains("## Scythe Table 1", "Paper: uniform 1.76 Mops", "| uniform | Mops |",
            "| Zipf / uniform | throughput ratio (paper 0.24) |", "## Scythe Fig. 27", "| θ 0.99 | Takeout P99 vs CAS lock |",
            "`scythe sim --workload cas", "Shapes that hold: ");
        assertThat(md).containsPattern("Shape: .* — \\*\\*(holds|does not hold)\\*\\*");
        assertThat(dir.resolve("table1/results.json")).exists();
        assertThat(dir.resolve("fig27/results.json")).exists();
    }

    @Test
    void shouldRefuseAnUnknownFigureInOneLine() {
        final StringWriter err = new StringWriter();
        final var cli = ScytheCommand.commandLine();
        cli.setErr(new PrintWriter(err));
        assertThat(cli.execute("reproduce", "fig99", "--out", dir.toString())).isEqualTo(2);
        assertThat(err.toString()).contains("no figure fig99").contains("table1").doesNotContain("Exception");
    }
}
