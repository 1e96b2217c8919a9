package io.scythe.bench.report;

import io.scythe.bridge.VerbStats;
import io.scythe.fabric.Opcode;
import io.vertx.core.json.JsonArray;
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
            .put("latency_us", latency(latencyNs))
            .put("latency_cdf_us", cdf(latencyNs));
        return this;
    }

    /**
     * Percentiles at which {@code latency_cdf_us} samples the distribution: a few below the median, then log-spaced
     * towards the tail (each step a quarter of a nine: 90, 94.4, 96.8, 98.2, 99, ...), then the maximum.
     */
    public static final double[] CDF_PERCENTILES = cdfPercentiles();

    private static double[] cdfPercentiles() {
        final double[] low = {1, 5, 10, 25, 50, 75};
        final double[] all = new double[low.length + 17 + 1];
        System.arraycopy(low, 0, all, 0, low.length);
        for (int k = 0; k <= 16; k++) {
            all[low.length + k] = round(100 * (1 - Math.pow(10, -1 - k / 4.0)), 4);
        }
        all[all.length - 1] = 100;
        return all;
    }

    /** {@code [[percentile, us], ...]} at {@link #CDF_PERCENTILES}; empty when nothing was recorded. */
    public static JsonArray cdf(final Histogram ns) {
        final JsonArray points = new JsonArray();
        if (ns.getTotalCount() == 0) {
            return points;
        }
        for (final double p : CDF_PERCENTILES) {
            final long value = p >= 100 ? ns.getMaxValue() : ns.getValueAtPercentile(p);
            points.add(new JsonArray().add(p).add(round(value / 1000.0, 3)));
        }
        return points;
    }

    /**
     * Adds {@code verbs_per_txn} and {@code bytes_per_txn} (by kind: one-sided {@code read}, {@code write},
     * {@code cas}, {@code faa}, two-sided {@code send}, their {@code total}, {@code doorbells}, and the RRPC
     * {@code rpc} calls and the {@code rpc_buckets} that carried them) per committed transaction, and the counts
     * themselves as {@code verbs}.
     */
    public RunResult verbs(final VerbStats posted, final long committed) {
        final double per = Math.max(1, committed);
        final JsonObject counts = new JsonObject();
        final JsonObject verbs = new JsonObject();
        final JsonObject bytes = new JsonObject();
        for (final Opcode op : new Opcode[] {Opcode.READ, Opcode.WRITE, Opcode.COMPARE_AND_SWAP,
            Opcode.FETCH_AND_ADD, Opcode.SEND}) {
            final String kind = kindOf(op);
            counts.put(kind, posted.verbs(op));
            verbs.put(kind, round(posted.verbs(op) / per, 3));
            bytes.put(kind, round(posted.bytes(op) / per, 1));
        }
        counts.put("total", posted.totalVerbs()).put("doorbells", posted.doorbells())
            .put("rpc", posted.rpcCalls()).put("rpc_buckets", posted.rpcBuckets());
        verbs.put("total", round(posted.totalVerbs() / per, 3)).put("doorbells", round(posted.doorbells() / per, 3))
            .put("rpc", round(posted.rpcCalls() / per, 3)).put("rpc_buckets", round(posted.rpcBuckets() / per, 3));
        bytes.put("total", round(posted.totalBytes() / per, 1)).put("rpc", round(posted.rpcBytes() / per, 1))
            .put("rpc_buckets", round(posted.rpcBucketBytes() / per, 1));
        final JsonObject byService = new JsonObject();
        for (int service = 0; service < 256; service++) {
            final long calls = posted.rpcCalls(service);
            if (calls != 0) {
                byService.put(RPC_SERVICES.getOrDefault(service, String.format("0x%02x", service)),
                    round(calls / per, 3));
            }
        }
        verbs.put("rpc_by_service", byService);
        json.put("verbs", counts).put("verbs_per_txn", verbs).put("bytes_per_txn", bytes);
        return this;
    }

    /** Names of the RRPC services in {@code rpc_by_service}, by the high byte of their RPC ids. */
    private static final java.util.Map<Integer, String> RPC_SERVICES = java.util.Map.of(
        io.scythe.storage.remote.LogDbRpc.LOOKUP >>> 8, "logdb",
        io.scythe.txn.scythe.LockRpc.LOCK >>> 8, "takeout-lock",
        io.scythe.tso.TsoLayout.RPC_FETCH >>> 8, "tso");

    /** The name of {@code op} in {@code verbs_per_txn}. */
    public static String kindOf(final Opcode op) {
        switch (op) {
            case COMPARE_AND_SWAP:
                return "cas";
            case FETCH_AND_ADD:
                return "faa";
            default:
                return op.name().toLowerCase(java.util.Locale.ROOT);
        }
    }

    public static JsonObject latency(final Histogram ns) {
        return new JsonObject()
            .put("p50", round(ns.getValueAtPercentile(50) / 1000.0, 3))
            .put("p90", round(ns.getValueAtPercentile(90) / 1000.0, 3))
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
