package io.scythe.bench.report;

import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;

/**
 * The results of one {@code scythe bench} invocation: {@code {"workload", "params", "runs": [...]}}, written as
 * {@code DIR/results.json}.
 */
public final class BenchReport {
    public static final String RESULTS_FILE = "results.json";

    private final String workload;
    private final JsonObject params;
    private final List<RunResult> runs = new ArrayList<>();

    public BenchReport(final String workload, final JsonObject params) {
        this.workload = workload;
        this.params = params;
    }

    public BenchReport add(final RunResult run) {
        runs.add(run);
        return this;
    }

    public List<RunResult> runs() {
        return runs;
    }

    public String workload() {
        return workload;
    }

    public JsonObject params() {
        return params;
    }

    public JsonObject toJson() {
        final JsonArray array = new JsonArray();
        runs.forEach(r -> array.add(r.toJson()));
        return new JsonObject()
            .put("workload", workload)
            .put("params", params)
            .put("runs", array)
            .put("created", Instant.now().toString())
            .put("host", new JsonObject()
                .put("cpus", Runtime.getRuntime().availableProcessors())
                .put("java", System.getProperty("java.version"))
                .put("os", System.getProperty("os.name") + " " + System.getProperty("os.arch")));
    }

    /**
     * Writes {@code dir/results.json} and {@code dir/report.html} ({@link HtmlReport}), creating {@code dir}.
     * @return the results file written
     */
    public Path write(final Path dir) throws IOException {
        Files.createDirectories(dir);
        final Path file = dir.resolve(RESULTS_FILE);
        final JsonObject json = toJson();
        Files.writeString(file, json.encodePrettily() + "\n", StandardCharsets.UTF_8);
        HtmlReport.write(dir, json);
        return file;
    }
}
