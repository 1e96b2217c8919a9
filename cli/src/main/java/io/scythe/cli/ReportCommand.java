package io.scythe.cli;

import io.scythe.bench.report.Comparison;
import io.scythe.bench.report.HtmlReport;
import io.vertx.core.json.DecodeException;
import io.vertx.core.json.JsonObject;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.Callable;

/**
 * {@code scythe report DIR}: (re)builds DIR/report.html from DIR/results.json; {@code scythe report A B}: the two
 * results side by side with ratios.
 */
@Command(name = "report", mixinStandardHelpOptions = true,
    description = {"scythe report DIR: (re)builds DIR/report.html from DIR/results.json written by scythe bench: a "
        + "self-contained page (inline SVG, nothing fetched) with throughput and P99 vs clients, latency CDFs, the "
        + "stage breakdown, transaction types, aborts, verbs and CPU per transaction, invariants and parameters.",
        "scythe report A B: A's and B's results side by side (before/after, or protocol vs protocol) as Markdown "
            + "tables with B/A for throughput, abort rate, latency percentiles, attempts and every per-transaction "
            + "cost; runs pair by protocol and clients, or by clients alone when each side ran one protocol. "
            + "A and B are directories holding results.json, or results.json files."})
public final class ReportCommand implements Callable<Integer> {
    @Parameters(paramLabel = "DIR", arity = "1..2", description = "One results directory (report.html), or two "
        + "(A the baseline, B compared against it).")
    List<Path> dirs;

    @Accepts(value = "a file to write")
    @Option(names = "--out", paramLabel = "FILE", description = "With A B: also write the comparison to FILE.")
    Path out;

    @Override
    public Integer call() throws Exception {
        if (dirs.size() == 1) {
            if (out != null) {
                throw new picocli.CommandLine.ParameterException(new picocli.CommandLine(this),
                    "--out is for scythe report A B (one directory writes DIR/report.html)");
            }
            System.out.println("wrote " + HtmlReport.rebuild(dirs.get(0)));
            return 0;
        }
        final Comparison c = Comparison.of(results(dirs.get(0)), results(dirs.get(1)));
        final String markdown = c.markdown(dirs.get(0).toString(), dirs.get(1).toString());
        System.out.print(markdown);
        if (out != null) {
            Files.writeString(out, markdown);
            System.out.println("wrote " + out);
        }
        return c.pairs().isEmpty() ? 1 : 0;
    }

    private static JsonObject results(final Path dirOrFile) throws Exception {
        final Path file = Files.isDirectory(dirOrFile) ? dirOrFile.resolve("results.json") : dirOrFile;
        if (!Files.isRegularFile(file)) {
            throw new IllegalArgumentException(file + " does not exist: give a directory written by scythe bench, "
                + "or its results.json");
        }
        try {
            return new JsonObject(Files.readString(file));
        } catch (final DecodeException e) {
            throw new IllegalArgumentException(file + " is not JSON: " + e.getMessage());
        }
    }
}
