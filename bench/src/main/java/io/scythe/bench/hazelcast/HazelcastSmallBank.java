package io.scythe.bench.hazelcast;

import com.hazelcast.core.HazelcastInstance;
import com.hazelcast.map.IMap;
import com.hazelcast.transaction.TransactionContext;
import com.hazelcast.transaction.TransactionException;
import com.hazelcast.transaction.TransactionOptions;
import com.hazelcast.transaction.TransactionalMap;
import io.scythe.bench.report.BenchReport;
import io.scythe.bench.report.RunResult;
import io.scythe.bench.workload.SmallBank;
import io.scythe.bench.workload.Zipf;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import org.HdrHistogram.Histogram;

import java.io.PrintStream;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.LongAdder;
import java.util.concurrent.locks.LockSupport;

/**
 * {@code scythe bench --system hazelcast}: SmallBank over Hazelcast's own transactions ({@link TransactionContext},
 * {@code TWO_PHASE}), the system a Java user would otherwise pick, with the same mix, Zipf theta, accounts, seed and
 * money-conservation check as the Scythe runs, reported in the same {@code results.json} shape (protocol
 * {@code hazelcast}). The two balances are {@code IMap<Long, Long>}s on {@code --memory-nodes} embedded members,
 * without backup copies or transaction-log durability (Scythe has neither yet: the comparison favours Hazelcast).
 *
 * <p>Hazelcast's transaction API blocks, so each client is a platform thread running one transaction at a time
 * (clients = concurrent transactions). Keys a transaction writes are locked with {@code getForUpdate} in one global
 * order (no deadlocks; a careful user's choice), keys it only reads use {@code get} (read committed: weaker than
 * Scythe's serializable reads, which favours Hazelcast). A {@link TransactionException} (a lock not obtained in
 * time) aborts the attempt, which is retried after the same random back-off as the Scythe coordinator's, up to
 * {@code maxAttempts}.
 */
public final class HazelcastSmallBank {
    /** What to run. */
    public record Options(List<Integer> clients, int members, int maxAttempts, long durationMs, long warmupMs,
                          long seed, long lockTimeoutMs) {
        JsonObject toJson() {
            return new JsonObject().put("system", "hazelcast").put("clients", new JsonArray(clients))
                .put("memory_nodes", members).put("max_attempts", maxAttempts).put("duration_ms", durationMs)
                .put("warmup_ms", warmupMs).put("seed", seed).put("transaction_type", "TWO_PHASE")
                .put("durability", 0).put("map_backups", 0)
                .put("lock_timeout_ms", lockTimeoutMs);
        }
    }

    private static final int SAVINGS = 0;
    private static final int CHECKING = 1;
    private static final String[] MAPS = {SmallBank.SAVINGS, SmallBank.CHECKING};
    private static final int LOAD_BATCH = 10_000;

    private final Options options;
    private final long accounts;
    private final double theta;
    private final String mixName;
    private final List<SmallBank.Type> mix;
    private final Zipf zipf;
    private final PrintStream out;

    public HazelcastSmallBank(final Options options, final long accounts, final double theta, final String mix,
                              final PrintStream out) {
        if (accounts < 2 || accounts > Integer.MAX_VALUE) {
            throw new IllegalArgumentException("accounts=" + accounts + " must be within [2, 2^31)");
        }
        if (options.maxAttempts() < 1) {
            throw new IllegalArgumentException("maxAttempts=" + options.maxAttempts() + " must be at least 1");
        }
        this.options = options;
        this.accounts = accounts;
        this.theta = theta;
        this.mixName = mix;
        this.mix = SmallBank.mix(mix);
        this.zipf = new Zipf((int) accounts, theta);
        this.out = out;
    }

    public BenchReport run() throws Exception {
        final JsonObject params = options.toJson().put("accounts", accounts).put("theta", theta).put("mix", mixName);
        final BenchReport report = new BenchReport("smallbank", params);
        try (HazelcastMembers cluster = new HazelcastMembers(options.members())) {
            for (final int clients : options.clients()) {
                report.add(runOne(cluster.members(), clients));
            }
        }
        return report;
    }

    /**
     * One report of both systems on the same command: {@code scythe}'s runs, then Hazelcast's, each Hazelcast run
     * with {@code ratio_over_hazelcast} (committed/s of every protocol at the same clients over Hazelcast's), also
     * printed.
     */
    public static BenchReport compared(final BenchReport scythe, final BenchReport hazelcast, final PrintStream out) {
        final BenchReport both = new BenchReport(scythe.workload(), scythe.params().copy()
            .put("systems", new JsonArray().add("scythe").add("hazelcast")).put("hazelcast", hazelcast.params()));
        scythe.runs().forEach(both::add);
        for (final RunResult baseline : hazelcast.runs()) {
            final int clients = baseline.toJson().getInteger("clients");
            final double base = baseline.toJson().getDouble("committed_per_s");
            final JsonObject ratios = new JsonObject();
            for (final RunResult run : scythe.runs()) {
                if (run.toJson().getInteger("clients") == clients) {
                    ratios.put(run.toJson().getString("protocol"),
                        RunResult.round(run.toJson().getDouble("committed_per_s") / Math.max(base, 1e-9), 2));
                }
            }
            baseline.put("ratio_over_hazelcast", ratios);
            both.add(baseline);
            out.printf("clients %4d: committed/s over Hazelcast's %s%n", clients, ratios.encode());
        }
        return both;
    }

    /** What the clients of one run counted. */
    private static final class Counts {
        final LongAdder committed = new LongAdder();
        final LongAdder aborted = new LongAdder();
        final LongAdder gaveUp = new LongAdder();
        final LongAdder userRollbacks = new LongAdder();
        final LongAdder attempts = new LongAdder();
        final LongAdder delta = new LongAdder();
        final Map<String, LongAdder> byType = new ConcurrentHashMap<>();
        final List<Histogram> latencies = new ArrayList<>();
        volatile Throwable failure;
    }

    private RunResult runOne(final List<HazelcastInstance> members, final int clients) throws Exception {
        load(members.get(0));
        final long initial = total(members.get(0));
        final Counts warm = new Counts();
        if (options.warmupMs() > 0) {
            runClients(members, clients, options.warmupMs(), warm);
        }
        final Counts counts = new Counts();
        final long elapsedNs = runClients(members, clients, options.durationMs(), counts);
        final long finalSum = total(members.get(0));
        final long delta = warm.delta.sum() + counts.delta.sum();
        final boolean conserved = finalSum == initial + delta;
        final Histogram latency = new Histogram(3_600_000_000_000L, 3);
        counts.latencies.forEach(latency::add);
        final long committed = counts.committed.sum();
        final JsonObject byType = new JsonObject();
        counts.byType.forEach((t, n) -> byType.put(t, n.sum()));
        final RunResult run = new RunResult("hazelcast", clients)
            .measured(committed, counts.aborted.sum(), elapsedNs / 1e9, latency)
            .invariantsOk(conserved && counts.failure == null)
            .put("aborts_by_reason", counts.aborted.sum() == 0 ? new JsonObject()
                : new JsonObject().put("lock-timeout", counts.aborted.sum()))
            .put("committed_by_type", byType)
            .put("attempts_per_commit", RunResult.round((double) counts.attempts.sum() / Math.max(1, committed), 3))
            .put("gave_up", counts.gaveUp.sum()).put("user_rollbacks", counts.userRollbacks.sum())
            .put("conserved", new JsonObject().put("quantity", "money").put("initial", initial)
                .put("final", finalSum).put("committed_delta", delta).put("ok", conserved))
            .put("accounts", accounts).put("theta", theta).put("mix", mixName);
        if (counts.failure != null) {
            run.put("error", String.valueOf(counts.failure));
        }
        out.printf("%-10s clients %4d %10.0f txn/s  p50 %8.2f us  p99 %8.2f us  p999 %8.2f us  abort rate %5.3f"
                + "  money %s%n", "hazelcast", clients, committed * 1e9 / elapsedNs,
            latency.getValueAtPercentile(50) / 1000.0, latency.getValueAtPercentile(99) / 1000.0,
            latency.getValueAtPercentile(99.9) / 1000.0,
            (double) counts.aborted.sum() / Math.max(1, counts.aborted.sum() + committed),
            conserved ? "conserved" : "NOT CONSERVED (" + finalSum + " != " + initial + " + " + delta + ")");
        if (counts.failure != null) {
            out.printf("%-10s   a client failed: %s%n", "", counts.failure);
        }
        return run;
    }

    /** Fresh balances for every account, identical for every run. */
    private void load(final HazelcastInstance member) {
        for (final String name : MAPS) {
            final IMap<Long, Long> map = member.getMap(name);
            map.clear();
            final Map<Long, Long> batch = new HashMap<>();
            for (long a = 0; a < accounts; a++) {
                batch.put(a, SmallBank.INITIAL_BALANCE);
                if (batch.size() == LOAD_BATCH || a == accounts - 1) {
                    map.putAll(batch);
                    batch.clear();
                }
            }
        }
    }

    /** The bank's money, counted on the members. */
    static long total(final HazelcastInstance member) {
        long sum = 0;
        for (final String name : MAPS) {
            for (final Long balance : member.<Long, Long>getMap(name).values()) {
                sum += balance;
            }
        }
        return sum;
    }

    /** Runs {@code clients} threads until the deadline; returns the elapsed nanoseconds. */
    private long runClients(final List<HazelcastInstance> members, final int clients, final long durationMs,
                            final Counts counts) throws InterruptedException {
        final long start = System.nanoTime();
        final long deadline = start + TimeUnit.MILLISECONDS.toNanos(durationMs);
        final List<Thread> threads = new ArrayList<>(clients);
        for (int c = 0; c < clients; c++) {
            final Histogram latency = new Histogram(3_600_000_000_000L, 3);
            counts.latencies.add(latency);
            final HazelcastInstance member = members.get(c % members.size());
            final SplittableRandom random = new SplittableRandom(options.seed() * 31 + c + 1);
            final Thread t = new Thread(() -> client(member, random, deadline, latency, counts),
                "hazelcast-client-" + c);
            t.setDaemon(true);
            threads.add(t);
            t.start();
        }
        for (final Thread t : threads) {
            t.join(durationMs + TimeUnit.SECONDS.toMillis(120));
        }
        return System.nanoTime() - start;
    }

    private void client(final HazelcastInstance member, final SplittableRandom random, final long deadline,
                        final Histogram latency, final Counts counts) {
        final TransactionOptions txOptions = new TransactionOptions()
            .setTransactionType(TransactionOptions.TransactionType.TWO_PHASE)
            .setDurability(0) // no transaction-log backup: Scythe has no redo log yet either
            .setTimeout(options.lockTimeoutMs(), TimeUnit.MILLISECONDS);
        try {
            while (System.nanoTime() - deadline < 0) {
                final SmallBank.Type type = SmallBank.pick(mix, random);
                final long[] args = SmallBank.drawArgs(zipf, random);
                final long issued = System.nanoTime();
                for (int attempt = 1; ; attempt++) {
                    counts.attempts.increment();
                    final TransactionContext ctx = member.newTransactionContext(txOptions);
                    ctx.beginTransaction();
                    try {
                        final long delta = procedure(ctx, type.name(), args[0], args[1], args[2]);
                        ctx.commitTransaction();
                        counts.delta.add(delta);
                        counts.committed.increment();
                        counts.byType.computeIfAbsent(type.name(), t -> new LongAdder()).increment();
                        latency.recordValue(System.nanoTime() - issued);
                        break;
                    } catch (final UserRollback e) {
                        ctx.rollbackTransaction();
                        counts.userRollbacks.increment(); // completed: the procedure rolled itself back
                        counts.committed.increment();
                        latency.recordValue(System.nanoTime() - issued);
                        break;
                    } catch (final TransactionException e) {
                        rollbackQuietly(ctx);
                        counts.aborted.increment();
                        if (attempt >= options.maxAttempts()) {
                            counts.gaveUp.increment();
                            break;
                        }
                        // The coordinator's back-off: random, below a bound doubling from 1 us to 128 us.
                        LockSupport.parkNanos(1 + random.nextLong(Math.min(128_000L, 1_000L << Math.min(attempt - 1,
                            20))));
                    } catch (final RuntimeException e) {
                        rollbackQuietly(ctx);
                        throw e;
                    }
                }
            }
        } catch (final RuntimeException e) {
            counts.failure = e;
        }
    }

    private static void rollbackQuietly(final TransactionContext ctx) {
        try {
            ctx.rollbackTransaction();
        } catch (final RuntimeException ignored) {
            // a transaction that failed in commit may be rolled back already
        }
    }

    /** SendPayment without funds: the procedure rolls back (a completed transaction, as for Scythe). */
    private static final class UserRollback extends RuntimeException {
        UserRollback() {
            super("insufficient funds", null, false, false);
        }
    }

    /**
     * SmallBank's procedure {@code type} on Hazelcast maps, with {@link SmallBank}'s semantics; returns the money it
     * added to the bank.
     */
    static long procedure(final TransactionContext ctx, final String type, final long a, final long b,
                          final long amount) {
        final TransactionalMap<Long, Long> savings = ctx.getMap(SmallBank.SAVINGS);
        final TransactionalMap<Long, Long> checking = ctx.getMap(SmallBank.CHECKING);
        switch (type) {
            case "Amalgamate": {
                final long[] v = locked(ctx, SAVINGS, a, CHECKING, a, CHECKING, b);
                savings.put(a, 0L);
                checking.put(a, 0L);
                checking.put(b, v[2] + v[0] + v[1]);
                return 0;
            }
            case "Balance":
                savings.get(a);
                checking.get(a);
                return 0;
            case "DepositChecking": {
                final long[] v = locked(ctx, CHECKING, a);
                checking.put(a, v[0] + amount);
                return amount;
            }
            case "SendPayment": {
                final long[] v = locked(ctx, CHECKING, a, CHECKING, b);
                if (v[0] < amount) {
                    throw new UserRollback();
                }
                checking.put(a, v[0] - amount);
                checking.put(b, v[1] + amount);
                return 0;
            }
            case "TransactSavings": {
                final long[] v = locked(ctx, SAVINGS, a);
                savings.put(a, v[0] + amount);
                return amount;
            }
            case "WriteCheck": {
                final long s = savings.get(a);
                final long c = locked(ctx, CHECKING, a)[0];
                final long debit = s + c < amount ? amount + 1 : amount;
                checking.put(a, c - debit);
                return -debit;
            }
            default:
                throw new IllegalArgumentException("unknown SmallBank procedure '" + type + "'");
        }
    }

    /**
     * {@code getForUpdate} of each (map, key) pair, in one global order (key, then map) so that no two transactions
     * wait for each other in a cycle; the values in the order asked.
     */
    static long[] locked(final TransactionContext ctx, final long... mapAndKey) {
        final int n = mapAndKey.length / 2;
        final Integer[] order = new Integer[n];
        for (int i = 0; i < n; i++) {
            order[i] = i;
        }
        java.util.Arrays.sort(order, (x, y) -> {
            final int byKey = Long.compare(mapAndKey[2 * x + 1], mapAndKey[2 * y + 1]);
            return byKey != 0 ? byKey : Long.compare(mapAndKey[2 * x], mapAndKey[2 * y]);
        });
        final long[] values = new long[n];
        for (final int i : order) {
            final TransactionalMap<Long, Long> map = ctx.getMap(MAPS[(int) mapAndKey[2 * i]]);
            final Long v = map.getForUpdate(mapAndKey[2 * i + 1]);
            if (v == null) {
                throw new IllegalStateException("no account " + mapAndKey[2 * i + 1] + " in " + MAPS[(int) mapAndKey[2 * i]]);
            }
            values[i] = v;
        }
        return values;
    }
}
