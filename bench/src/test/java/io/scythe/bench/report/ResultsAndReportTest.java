package io.scythe.bench.report;

import io.scythe.bench.micro.OltpWorkload;
import io.scythe.bench.workload.SmallBankSpec;
import io.scythe.fabric.CostModel;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * results.json of a tiny SmallBank run has every documented field with the right type and consistent values, and
 * report.html drawn from it (and from a micro workload's results, which lack most OLTP fields) has every section,
 * each with its plot, and fetches nothing.
 */
class ResultsAndReportTest {
    private static JsonObject results;

    @BeforeAll
    static void tinyRun() throws Exception {
        // At least 200 commits a run, so each of the six types shows (LongEnoughRun: longer again on a starved CPU).
        results = io.scythe.bench.LongEnoughRun.run(200, 300, (durationMs, attempt) -> new OltpWorkload(
            new OltpWorkload.Options(List.of("ford-occ", "scythe"), List.of(2, 4), 2, 1000, CostModel.profile("zero"),
                durationMs, 100, 5), new SmallBankSpec(1000, 0.5, "standard"),
            new PrintStream(java.io.OutputStream.nullOutputStream())).run().toJson());
    }

    @Test
    void shouldWriteEveryDocumentedFieldWithItsType() {
        assertThat(results.getString("workload")).isEqualTo("smallbank");
        assertThat(results.getJsonObject("params")).isNotNull();
        final JsonArray runs = results.getJsonArray("runs");
        assertThat(runs).hasSize(4);
        for (int i = 0; i < runs.size(); i++) {
            final JsonObject run = runs.getJsonObject(i);
            assertThat(run.getValue("protocol")).isInstanceOf(String.class);
            assertThat(run.getValue("clients")).isInstanceOf(Integer.class);
            assertThat(run.getLong("committed")).isPositive();
            assertThat(run.getValue("committed_per_s")).isInstanceOf(Double.class);
            assertThat(run.getValue("abort_rate")).isInstanceOf(Double.class);
            assertThat(run.getBoolean("invariants_ok")).isTrue();
            final JsonObject latency = run.getJsonObject("latency_us");
            assertThat(latency.getDouble("p50")).isPositive().isLessThanOrEqualTo(latency.getDouble("p99"));
            assertThat(latency.getDouble("p99")).isLessThanOrEqualTo(latency.getDouble("p999"));

            // by_type: the six types; their commits and rollbacks add up to the run's completed transactions.
            final JsonObject byType = run.getJsonObject("by_type");
            assertThat(byType.fieldNames()).containsExactlyInAnyOrder("Amalgamate", "Balance", "DepositChecking",
                "SendPayment", "TransactSavings", "WriteCheck");
            long committed = 0;
            for (final String type : byType.fieldNames()) {
                final JsonObject t = byType.getJsonObject(type);
                assertThat(t.getLong("committed")).as(type).isPositive();
                assertThat(t.getValue("committed_per_s")).isInstanceOf(Double.class);
                assertThat(t.getDouble("abort_rate")).isBetween(0.0, 1.0);
                assertThat(t.getLong("gave_up")).isZero();
                assertThat(t.getJsonObject("latency_us").getDouble("p99")).isPositive();
                assertThat(t.getJsonObject("latency_us").fieldNames()).contains("p50", "p99", "p999");
                committed += t.getLong("committed") + t.getLong("user_rollbacks");
                assertThat(run.getJsonObject("committed_by_type").getLong(type)).isEqualTo(t.getLong("committed"));
            }
            assertThat(committed).isEqualTo(run.getLong("committed"));

            // verbs and bytes per transaction: kinds sum to the total; counts / committed are the per-txn values.
            final JsonObject verbs = run.getJsonObject("verbs_per_txn");
            assertThat(verbs.fieldNames()).contains("read", "write", "cas", "faa", "send", "total", "doorbells",
                "rpc", "rpc_buckets");
            final JsonObject counts = run.getJsonObject("verbs");
            assertThat(counts.getLong("read") + counts.getLong("write") + counts.getLong("cas")
                + counts.getLong("faa") + counts.getLong("send")).isEqualTo(counts.getLong("total"));
            assertThat(verbs.getDouble("read")).isCloseTo((double) counts.getLong("read") / run.getLong("committed"),
                org.assertj.core.data.Offset.offset(0.001));
            assertThat(verbs.getDouble("read")).isGreaterThanOrEqualTo(1.0); // every SmallBank type reads
            assertThat(run.getJsonObject("bytes_per_txn").getDouble("total")).isPositive();
            final JsonObject services = verbs.getJsonObject("rpc_by_service");
            double rpc = 0;
            for (final String service : services.fieldNames()) {
                rpc += services.getDouble(service);
            }
            assertThat(rpc).isCloseTo(verbs.getDouble("rpc"), org.assertj.core.data.Offset.offset(0.01));
            if ("ford-occ".equals(run.getString("protocol"))) {
                assertThat(verbs.getDouble("cas")).isPositive(); // FORD's CAS locks
                assertThat(verbs.getDouble("faa")).isZero();
                // address lookups only (none once the warm-up cached every address), never lock RPCs
                assertThat(services.fieldNames()).isSubsetOf("logdb");
            } else {
                assertThat(verbs.getDouble("faa")).isPositive(); // Takeout Lock releases, timestamps
                assertThat(services.getDouble("takeout-lock")).isPositive(); // Lock RPCs
            }
            assertThat(run.getDouble("cpu_us_per_txn")).isPositive();
            assertThat(run.getDouble("loop_cpu_us_per_txn")).isPositive();
            assertThat(run.getLong("loop_alloc_bytes_per_txn")).isPositive(); // a transaction allocates something
            assertThat(run.getDouble("cpu_cores")).isPositive();

            // latency_cdf_us: [percentile, us] pairs, both rising, ending at the maximum.
            final JsonArray cdf = run.getJsonArray("latency_cdf_us");
            assertThat(cdf.size()).isEqualTo(RunResult.CDF_PERCENTILES.length);
            double lastP = -1;
            double lastUs = 0;
            for (int k = 0; k < cdf.size(); k++) {
                final double p = cdf.getJsonArray(k).getDouble(0);
                final double us = cdf.getJsonArray(k).getDouble(1);
                assertThat(p).isGreaterThan(lastP);
                assertThat(us).isGreaterThanOrEqualTo(lastUs);
                lastP = p;
                lastUs = us;
            }
            assertThat(lastP).isEqualTo(100.0);
            assertThat(lastUs).isEqualTo(latency.getDouble("max"));
        }
    }

    @Test
    void shouldDrawEverySectionOfAnOltpRun(@TempDir final Path dir) throws Exception {
        final String html = Files.readString(HtmlReport.write(dir, results));
        for (final String section : HtmlReport.SECTIONS) {
            final String body = section(html, section);
            if (!section.equals("params") && !section.equals("runs")) {
                assertThat(body).as(section).contains("<svg").doesNotContain("class=\"none\"");
            } else {
                assertThat(body).as(section).contains("<table");
            }
        }
        // Series are the protocols; CDFs one chart per client count; per-type rows for each run.
        assertThat(section(html, "throughput")).contains(">ford-occ</text>", ">scythe</text>");
        assertThat(section(html, "cdf")).contains("2 clients", "4 clients");
        assertThat(section(html, "types")).contains("SendPayment", "ford-occ @4");
        assertThat(section(html, "invariants")).contains("fill=\"#2a2\"").doesNotContain("VIOLATED");
        assertSelfContained(html);
    }

    @Test
    void shouldDegradeGracefullyOnMicroWorkloadResults(@TempDir final Path dir) throws Exception {
        // A lock-workload-shaped result: no by_type, stages, aborts or verbs; latency from RunResult.measured.
        final org.HdrHistogram.Histogram h = new org.HdrHistogram.Histogram(3);
        for (int i = 1; i <= 1000; i++) {
            h.recordValue(i * 1000L);
        }
        final BenchReport micro = new BenchReport("lock", new JsonObject().put("theta", 0.99))
            .add(new RunResult("takeout", 64).measured(1000, 0, 1.0, h).invariantsOk(true).put("theta", 0.99))
            .add(new RunResult("cas-lock", 64).measured(900, 5, 1.0, h).invariantsOk(false));
        micro.write(dir);
        final String html = Files.readString(dir.resolve(HtmlReport.REPORT_FILE));
        assertThat(section(html, "throughput")).contains("<svg", ">takeout</text>", ">cas-lock</text>");
        assertThat(section(html, "p99")).contains("<svg");
        assertThat(section(html, "cdf")).contains("<svg", "64 clients");
        assertThat(section(html, "stages")).contains("no stages_us").doesNotContain("<svg");
        assertThat(section(html, "types")).contains("no by_type");
        assertThat(section(html, "verbs")).contains("no verbs_per_txn");
        assertThat(section(html, "invariants")).contains("VIOLATED", "fill=\"#c22\"");
        assertSelfContained(html);
    }

    @Test
    void shouldRebuildTheReportFromResultsJsonAndRefuseWhatIsNot(@TempDir final Path dir) throws Exception {
        Files.writeString(dir.resolve(BenchReport.RESULTS_FILE), results.encode());
        final Path page = HtmlReport.rebuild(dir);
        assertThat(Files.readString(page)).contains("<section id=\"throughput\">");
        assertThatThrownBy(() -> HtmlReport.rebuild(dir.resolve("missing")))
            .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("no results.json");
        Files.writeString(dir.resolve(BenchReport.RESULTS_FILE), "{\"workload\": \"x\"}");
        assertThatThrownBy(() -> HtmlReport.rebuild(dir)).isInstanceOf(IllegalArgumentException.class)
            .hasMessageContaining("no \"runs\"");
        Files.writeString(dir.resolve(BenchReport.RESULTS_FILE), "{not json");
        assertThatThrownBy(() -> HtmlReport.rebuild(dir)).isInstanceOf(IllegalArgumentException.class)
            .hasMessageContaining("not valid JSON");
    }

    @Test
    void shouldEscapeWhatResultsContain() {
        final JsonObject evil = new JsonObject().put("workload", "<script>x</script>").put("params", new JsonObject())
            .put("runs", new JsonArray().add(new JsonObject().put("protocol", "a<b").put("clients", 1)
                .put("committed_per_s", 1.0)));
        final String html = HtmlReport.render(evil);
        assertThat(html).doesNotContain("<script>", "a<b").contains("&lt;script&gt;", "a&lt;b");
    }

    /** No script, no stylesheet or image from elsewhere. */
    private static void assertSelfContained(final String html) {
        // The SVG namespace is a name, not a fetch.
        assertThat(html.replace("xmlns=\"http://www.w3.org/2000/svg\"", ""))
            .doesNotContain("<script", "http://", "https://", "<link", "<img", "@import", "url(");
    }

    static String section(final String html, final String id) {
        final int start = html.indexOf("<section id=\"" + id + "\">");
        assertThat(start).as("section " + id).isNotNegative();
        return html.substring(start, html.indexOf("</section>", start));
    }
}
