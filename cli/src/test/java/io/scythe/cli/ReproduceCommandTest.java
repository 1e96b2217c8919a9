package io.scythe.cli;

import io.vertx.core.json.JsonObject;
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
    void shouldReproduceTable2Fig26AndFig28BesideThePapersNumbers() throws Exception {
        final int code = ScytheCommand.commandLine().execute("reproduce", "table2", "fig26", "fig28", "--quick",
            "--out", dir.toString());
        assertThat(code).isZero();
        final String md = Files.readString(dir.resolve("reproduce.md"));
        assertThat(md).contains("## Scythe Table 2", "Paper: longest queue 6 / 10 / 13 / 31",
            "| θ 1.2 | longest queue |",
            "| θ 0.9 | highest access rate (share of lock grants) |", "`scythe sim --workload ycsb --records 100000",
            "--watermarks 3,128", "## Scythe Fig. 26", "| ford-occ | lock µs |", "| farm-occ | validate µs |",
            "| scythe | total without execute µs |", "## Scythe Fig. 28", "| 16 clients | TSO P50 µs |",
            "| 16 clients | physical clock P50 µs |", "`scythe sim --workload tso", "Shapes that hold: ");
        // Above HotWatermark 10 a queue used to stop at 11 whatever θ: lifted, θ 1.2 queues past it.
        final JsonObject t2 = new JsonObject(
            Files.readString(dir.resolve("table2/results.json")));
        long longestAtHighTheta = 0;
        for (final Object o : t2.getJsonArray("runs")) {
            final JsonObject run = (JsonObject) o;
            if (run.getDouble("theta") == 1.2) {
                longestAtHighTheta = run.getJsonObject("queues").getLong("longest");
                assertThat(run.getJsonObject("queues").getDouble("highest_grant_share")).isBetween(0.01, 1.0);
            }
        }
        assertThat(longestAtHighTheta).isGreaterThan(11);
        // FORD's execution-phase CAS locks are lock time now, not execution.
        final JsonObject f26 = new JsonObject(
            Files.readString(dir.resolve("fig26/results.json")));
        for (final Object o : f26.getJsonArray("runs")) {
            final JsonObject run = (JsonObject) o;
            assertThat(run.getJsonObject("stages_us").getDouble("lock")).as(run.getString("protocol")).isPositive();
        }
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
