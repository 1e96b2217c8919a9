package io.scythe.cli;

import io.scythe.bench.report.HtmlReport;
import picocli.CommandLine.Command;
import picocli.CommandLine.Parameters;

import java.nio.file.Path;
import java.util.concurrent.Callable;

/** {@code scythe report DIR}: (re)builds DIR/report.html from DIR/results.json. */
@Command(name = "report", mixinStandardHelpOptions = true,
    description = "(Re)builds DIR/report.html from DIR/results.json written by scythe bench: a self-contained page "
        + "(inline SVG, nothing fetched) with throughput and P99 vs clients, latency CDFs, the stage breakdown, "
        + "transaction types, aborts, verbs and CPU per transaction, invariants and parameters.")
public final class ReportCommand implements Callable<Integer> {
    @Parameters(paramLabel = "DIR", description = "A directory holding results.json.")
    Path dir;

    @Override
    public Integer call() throws Exception {
        System.out.println("wrote " + HtmlReport.rebuild(dir));
        return 0;
    }
}
