package io.scythe.bench.report;

import io.vertx.core.json.JsonObject;
import org.HdrHistogram.Histogram;

/**
 * One run of a benchmark: one protocol (or, for micro workloads, one configuration) at one client count. Its JSON
 * form is an element of {@code runs} in {@code results.json}; the README documents every field.
 */
public final class RunResult {
    private final JsonObject json = new JsonObject();

    public RunResult(final String protocol, final int clients) {
        json.put("protocol", protocol).put("clients", clients);
    }

    /** Fills committed, committed_per_s and latency_us from the committed count, the run's length and latencies. */
    public RunResult measured(final long committed, final long aborted, final double seconds,
                              final Histogram latencyNs) {
        json.put("committed", committed)
            .put("aborted", aborted)
            .put("seconds", round(seconds, 3))
            .put("committed_per_s", round(committed / seconds, 1))
            .put("abort_rate", committed + aborted == 0 ? 0.0 : round((double) aborted / (committed + aborted), 6))
            .put("latency_us", latency(latencyNs));
        return this;
    }

    public static JsonObject latency(final Histogram ns) {
        return new JsonObject()
            .put("p50", round(ns.getValueAtPercentile(50) / 1000.0, 3))
            .put("p99", round(ns.getValueAtPercentile(99) / 1000.0, 3))
            .put("p999", round(ns.getValueAtPercentile(99.9) / 1000.0, 3))
            .put("mean", round(ns.getMean() / 1000.0, 3))
            .put("max", round(ns.getMaxValue() / 1000.0, 3));
    }

    public RunResult invariantsOk(final boolean ok) {
        json.put("invariants_ok", ok);
        return this;
    }

    public RunResult put(final String key, final Object value) {
        json.put(key, value);
        return this;
    }

    public JsonObject toJson() {
        return json;
    }

    public static double round(final double value, final int digits) {
        final double scale = Math.pow(10, digits);
        return Math.round(value * scale) / scale;
    }
}
