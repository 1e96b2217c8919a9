package io.scythe.bench.micro;

import io.scythe.bench.report.RunResult;
import io.vertx.core.json.JsonObject;
import org.HdrHistogram.Histogram;

import java.util.Arrays;
import java.util.Map;
import java.util.TreeMap;

/**
 * Per transaction type counts and latencies of one event loop's clients: plain fields, loop-confined while the run
 * goes; {@link #merge} sums the loops' after it. Latency is the coordinator's, from the first attempt to the commit.
 */
final class TxnTypeStats {
    /** Longer latencies are recorded as this (a minute). */
    static final long MAX_LATENCY_NS = 60_000_000_000L;
    /** One type's numbers. */
    static final class Type {
        final Histogram latencyNs = new Histogram(MAX_LATENCY_NS, 3); // 1 ns units: zero-cost runs are a few us
        long committed;
        /** Attempts of the committed transactions, the committing one included. */
        long committedAttempts;
        long gaveUp;
        long gaveUpAttempts;
        long userRollbacks;

        /** Aborted attempts of the transactions that committed or gave up. */
        long aborted() {
            return committedAttempts - committed + gaveUpAttempts;
        }

        void add(final Type other) {
            latencyNs.add(other.latencyNs);
            committed += other.committed;
            committedAttempts += other.committedAttempts;
            gaveUp += other.gaveUp;
            gaveUpAttempts += other.gaveUpAttempts;
            userRollbacks += other.userRollbacks;
        }
    }

    /**
     * The types seen so far, in two parallel arrays scanned by identity first: a workload has a handful of types and
     * draws them as the same String constants, so a scan beats a hash lookup (which was 2 % of the loop's CPU).
     */
    private String[] names = new String[0];
    private Type[] types = new Type[0];

    Type of(final String type) {
        for (int i = 0; i < names.length; i++) {
            if (names[i] == type) {
                return types[i];
            }
        }
        for (int i = 0; i < names.length; i++) {
            if (names[i].equals(type)) {
                return types[i];
            }
        }
        names = Arrays.copyOf(names, names.length + 1);
        types = Arrays.copyOf(types, types.length + 1);
        names[names.length - 1] = type;
        types[types.length - 1] = new Type();
        return types[types.length - 1];
    }

    /** A committed transaction of {@code type} after {@code attempts} attempts. */
    void committed(final String type, final int attempts, final long latencyNs) {
        final Type t = of(type);
        t.committed++;
        t.committedAttempts += attempts;
        t.latencyNs.recordValue(Math.min(Math.max(latencyNs, 0), MAX_LATENCY_NS));
    }

    /** A transaction of {@code type} that aborted {@code attempts} times and was given up. */
    void gaveUp(final String type, final int attempts) {
        final Type t = of(type);
        t.gaveUp++;
        t.gaveUpAttempts += attempts;
    }

    /** A transaction of {@code type} that its procedure rolled back (SmallBank's SendPayment without funds). */
    void userRollback(final String type) {
        of(type).userRollbacks++;
    }

    /** Aborted attempts by the table they aborted on ({@code AbortException#table}, or unnamed), then reason. */
    private final Map<String, Map<String, long[]>> abortsByTable = new TreeMap<>();

    /** An attempt aborted on {@code table} (null: the abort names none) for {@code reason}. */
    void aborted(final String table, final String reason) {
        abortsByTable.computeIfAbsent(table == null ? "unnamed" : table, t -> new TreeMap<>())
            .computeIfAbsent(reason, r -> new long[1])[0]++;
    }

    /** {@code aborts_by_table} of results.json: the loops' aborts summed, by table then reason. */
    static JsonObject abortsByTable(final Iterable<TxnTypeStats> loops) {
        final Map<String, Map<String, Long>> sum = new TreeMap<>();
        for (final TxnTypeStats loop : loops) {
            loop.abortsByTable.forEach((table, reasons) -> reasons.forEach((reason, n) ->
                sum.computeIfAbsent(table, t -> new TreeMap<>()).merge(reason, n[0], Long::sum)));
        }
        final JsonObject json = new JsonObject();
        sum.forEach((table, reasons) -> json.put(table, new JsonObject(new java.util.LinkedHashMap<>(reasons))));
        return json;
    }

    /** The sum of {@code loops}, by type name (sorted). */
    static Map<String, Type> merge(final Iterable<TxnTypeStats> loops) {
        final Map<String, Type> sum = new TreeMap<>();
        for (final TxnTypeStats loop : loops) {
            for (int i = 0; i < loop.names.length; i++) {
                sum.computeIfAbsent(loop.names[i], n -> new Type()).add(loop.types[i]);
            }
        }
        return sum;
    }

    /** {@code by_type} of results.json. */
    static JsonObject toJson(final Map<String, Type> byType, final double seconds) {
        final JsonObject json = new JsonObject();
        byType.forEach((name, t) -> json.put(name, new JsonObject()
            .put("committed", t.committed)
            .put("committed_per_s", RunResult.round(t.committed / seconds, 1))
            .put("aborted", t.aborted())
            .put("abort_rate", t.committed + t.aborted() == 0 ? 0.0
                : RunResult.round((double) t.aborted() / (t.committed + t.aborted()), 6))
            .put("gave_up", t.gaveUp)
            .put("user_rollbacks", t.userRollbacks)
            .put("latency_us", RunResult.latency(t.latencyNs))));
        return json;
    }
}
