package io.scythe.sim;

import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;

/**
 * A run's throughput over virtual time ({@code scythe sim --timeline 10us}): commits counted by the bucket of virtual
 * time their client heard them in, from the run's start (warm-up included) to its end. With a compute-node crash it
 * gives Lotus Fig. 15's two figures: the <b>dip</b>, the lowest bucket of the dip (from the first bucket after the
 * crash below {@link #BACK_FRACTION} of the pre-crash rate, the mean rate of the whole buckets between the warm-up and
 * the crash, until the dip is over) against that rate, and the time <b>back</b>, from the crash to the end of the first
 * bucket after the dip's start that starts {@link #BACK_BUCKETS} whole buckets in a row at {@link #BACK_FRACTION} of
 * the pre-crash rate or more (null: never within the run; a run that ends sooner does not count; 0: no bucket after
 * the crash fell below); a partial last bucket's rate is over its real width; and the mean rate of the run's last fifth against the pre-crash one (a crashed
 * node stays down unless {@code --crash-restart-after} restarts it, Lotus only: where its clients were the bound, the
 * rate stays lower).
 */
public final class Timeline {
    /** The share of the pre-crash rate a bucket must reach to count as back (the paper's figure shows it recovered). */
    static final double BACK_FRACTION = 0.9;
    /** Consecutive buckets at {@link #BACK_FRACTION} that count as back (the run's end too soon after: not back). */
    static final int BACK_BUCKETS = 3;

    private final long bucketNs;
    private final long spanNs;
    private final long[] commits;

    /** Buckets of {@code bucketNs} covering {@code spanNs} of virtual time from the start. */
    Timeline(final long bucketNs, final long spanNs) {
        if (bucketNs < 1) {
            throw new IllegalArgumentException("timeline bucket must be at least 1 ns, not " + bucketNs);
        }
        this.bucketNs = bucketNs;
        this.spanNs = spanNs;
        this.commits = new long[(int) Math.min(Integer.MAX_VALUE - 8, (spanNs + bucketNs - 1) / bucketNs)];
    }

    /** A commit heard {@code sinceStartNs} after the run's start; outside the span it is not counted. */
    void committed(final long sinceStartNs) {
        if (sinceStartNs >= 0 && sinceStartNs / bucketNs < commits.length) {
            commits[(int) (sinceStartNs / bucketNs)]++;
        }
    }

    long[] commits() {
        return commits.clone();
    }

    /** A bucket's commits as transactions per second of virtual time (over the span's part of a partial last one). */
    private double rate(final int bucket) {
        return commits[bucket] * 1e9 / Math.max(1, Math.min(bucketNs, spanNs - (long) bucket * bucketNs));
    }

    /**
     * The series and, for a crash {@code crashAtNs} after the start (negative: none), its dip and time back; the
     * pre-crash rate is the mean of the whole buckets from {@code warmupNs} to the crash (none: not judged).
     */
    JsonObject toJson(final long warmupNs, final long crashAtNs) {
        final JsonObject json = new JsonObject().put("bucket_ns", bucketNs)
            .put("commits", new JsonArray(java.util.Arrays.stream(commits).boxed().toList()));
        if (crashAtNs < 0) {
            return json;
        }
        final int firstBefore = (int) ((warmupNs + bucketNs - 1) / bucketNs);
        final int endBefore = (int) Math.min(commits.length, crashAtNs / bucketNs); // buckets wholly before the crash
        final int crashBucket = (int) Math.min(commits.length, crashAtNs / bucketNs);
        json.put("crash_at_ns", crashAtNs);
        if (endBefore <= firstBefore || crashBucket >= commits.length) {
            return json.put("judged", "no whole bucket between the warm-up and the crash, or none after it: give a "
                + "smaller --timeline or a later --crash-at");
        }
        double before = 0;
        for (int b = firstBefore; b < endBefore; b++) {
            before += rate(b);
        }
        before /= endBefore - firstBefore;
        if (before == 0) {
            return json.put("judged", "no commit between the warm-up and the crash: no rate to judge the dip against");
        }
        int dip = crashBucket; // the dip's first bucket: the first after the crash below BACK_FRACTION of before
        while (dip < commits.length && rate(dip) >= BACK_FRACTION * before) {
            dip++;
        }
        final boolean fell = dip < commits.length;
        int back = -1;
        for (int b = dip + 1; fell && b + BACK_BUCKETS <= commits.length && back < 0; b++) {
            boolean held = true; // this bucket and the next BACK_BUCKETS - 1: not a lone spike
            for (int k = b; k < b + BACK_BUCKETS && held; k++) {
                held = rate(k) >= BACK_FRACTION * before;
            }
            back = held ? b : -1;
        }
        int trough = fell ? dip : crashBucket; // the dip's lowest bucket (the crash's own when it never fell)
        for (int b = dip; b < (back < 0 ? commits.length : back); b++) {
            trough = rate(b) < rate(trough) ? b : trough;
        }
        final int lastFifth = Math.max(crashBucket, commits.length - Math.max(1, commits.length / 5));
        double end = 0;
        for (int b = lastFifth; b < commits.length; b++) {
            end += rate(b);
        }
        end /= commits.length - lastFifth;
        double after = 0;
        final int from = fell ? back : crashBucket;
        if (from >= 0) {
            for (int b = from; b < commits.length; b++) {
                after += rate(b);
            }
            after /= commits.length - from;
        }
        return json.put("pre_crash_txn_s", Math.round(before)).put("trough_txn_s", Math.round(rate(trough)))
            .put("trough_at_ns", (long) trough * bucketNs).put("dip_pct", Math.round(1000 * (1 - rate(trough) / before)) / 10.0)
            .put("back_fraction", BACK_FRACTION)
            .put("back_after_crash_ns", !fell ? Long.valueOf(0) : back < 0 ? null : (back + 1L) * bucketNs - crashAtNs)
            .put("after_back_txn_s", from < 0 ? null : Math.round(after)).put("last_fifth_txn_s", Math.round(end))
            .put("last_fifth_vs_pre_crash", Math.round(1000 * end / before) / 1000.0);
    }

    /** One line for the command's output: the figures of {@link #toJson}, or the series' mean without a crash. */
    public static String summary(final JsonObject json) {
        final long bucket = json.getLong("bucket_ns");
        if (!json.containsKey("pre_crash_txn_s")) {
            final JsonArray c = json.getJsonArray("commits");
            long sum = 0;
            for (int i = 0; i < c.size(); i++) {
                sum += c.getLong(i);
            }
            return "timeline: " + c.size() + " buckets of " + bucket + " ns, mean " + (c.isEmpty() ? 0
                : Math.round(sum * 1e9 / bucket / c.size())) + " txn/s" + (json.containsKey("judged") ? " ("
                + json.getString("judged") + ")" : "");
        }
        final Long back = json.getLong("back_after_crash_ns");
        return "timeline: buckets of " + bucket + " ns; before the crash " + json.getLong("pre_crash_txn_s")
            + " txn/s, trough " + json.getLong("trough_txn_s") + " txn/s at " + json.getLong("trough_at_ns")
            + " ns (dip " + json.getValue("dip_pct") + " %), back to " + Math.round(100 * BACK_FRACTION)
            + " % " + (back == null ? "never within the run" : back + " ns after the crash (then "
            + json.getLong("after_back_txn_s") + " txn/s)") + "; last fifth " + json.getLong("last_fifth_txn_s")
            + " txn/s (" + json.getValue("last_fifth_vs_pre_crash") + " of before)";
    }
}
