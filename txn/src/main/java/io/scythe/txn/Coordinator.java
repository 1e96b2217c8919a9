package io.scythe.txn;

import io.vertx.core.Future;
import io.vertx.core.Promise;

import io.vertx.core.json.JsonObject;

import java.util.HashMap;
import java.util.Map;
import java.util.function.Function;

/**
 * Runs transactions of one event loop to an outcome: attempts a procedure under a protocol, and retries an attempt
 * that aborted, up to a limit, beginning the next attempt with the hint the protocol's {@link RetryPolicy} picks from
 * the abort (Scythe's: HOT once an object's queue exceeded the cold watermark, §4.2.1 (1)). Latency is measured from the first attempt to the commit, as the papers
 * measure it. A bad request (unknown table or key) is not retried. Before a retry it waits a random time below a
 * bound that doubles with each abort (1 us, 2 us, ... up to 128 us), as DBx1000's abort penalty does: without it,
 * clients that abort on a lock retry in lock-step and a hot key livelocks (FORD at 20 accounts and 16 clients
 * committed 380 of 1.5 M attempts in 6 s). Loop-confined.
 */
public final class Coordinator {
    private final TxnRuntime runtime;
    private final Protocol protocol;
    private final int maxAttempts;
    private final Map<AbortReason, long[]> aborts = new HashMap<>();
    /** Told of every aborted attempt with the procedure it ran (a harness's breakdown by type), or null. */
    private java.util.function.BiConsumer<Object, AbortException> abortListener;
    private long[] stageNanos = new long[Stage.count()];
    private final RetryPolicy retryPolicy;
    private long stagedCommits;
    private final java.util.SplittableRandom random;
    /** Largest back-off before a retry. */
    public static final long MAX_BACKOFF_NS = 128_000;
    private static final long BASE_BACKOFF_NS = 1_000;

    /**
     * The bound of the random back-off after the {@code attempt}-th (1-based) aborted attempt: {@code 1 us} doubled
     * per attempt, at most {@link #MAX_BACKOFF_NS}. The next attempt waits a uniform draw below it: aborted attempts
     * that refused each other (timestamp order, validation) would otherwise start again in lockstep.
     */
    public static long backoffBoundNs(final int attempt) {
        if (attempt < 1) {
            throw new IllegalArgumentException("attempt " + attempt + " must be at least 1");
        }
        return Math.min(MAX_BACKOFF_NS, BASE_BACKOFF_NS << Math.min(attempt - 1, 20));
    }

    public Coordinator(final TxnRuntime runtime, final Protocol protocol, final int maxAttempts) {
        this(runtime, protocol, maxAttempts, new JsonObject());
    }

    /** @param protocolOptions the protocol's own configuration keys, given to its {@link Protocol#retryPolicy} */
    public Coordinator(final TxnRuntime runtime, final Protocol protocol, final int maxAttempts,
                       final JsonObject protocolOptions) {
        if (maxAttempts < 1) {
            throw new IllegalArgumentException("maxAttempts=" + maxAttempts + " must be at least 1");
        }
        this.runtime = runtime;
        this.protocol = protocol;
        this.maxAttempts = maxAttempts;
        this.random = new java.util.SplittableRandom(runtime.nextTxnId());
        this.retryPolicy = protocol.retryPolicy(runtime, protocolOptions);
    }

    /** How a transaction ended. */
    public record Outcome<R>(R result, long commitTs, int attempts, long latencyNs, String mode) {
    }

    /**
     * Runs {@code procedure} until it commits; fails with the last {@link AbortException} (its
     * {@link AbortException#attempts()} the number of attempts) after {@code maxAttempts} aborted attempts or one that
     * is not retried (user, duplicate key), or with the procedure's own error (not retried).
     */
    public <R> Future<Outcome<R>> run(final Function<Txn, Future<R>> procedure) {
        return run(procedure, maxAttempts);
    }

    /**
     * {@link #run(Function)} with at most {@code attempts} attempts for this transaction (a harness rule that retries
     * some transaction types and not others, {@link OnAbort#SCYTHE}).
     */
    public <R> Future<Outcome<R>> run(final Function<Txn, Future<R>> procedure, final int attempts) {
        if (attempts < 1) {
            throw new IllegalArgumentException("attempts=" + attempts + " must be at least 1");
        }
        final Promise<Outcome<R>> done = Promise.promise();
        attempt(procedure, 1, attempts, false, runtime.timers().nowNs(), done);
        return done.future();
    }

    private <R> void attempt(final Function<Txn, Future<R>> procedure, final int attempt, final int limit,
                             final boolean hint, final long start, final Promise<Outcome<R>> done) {
        final Txn txn;
        try {
            txn = protocol.begin(runtime, hint);
        } catch (final RuntimeException e) { // NotServingException (TxnRuntime#nextTxnId): nothing was done
            done.fail(e);
            return;
        }
        final Future<R> body;
        try {
            body = txn.run(procedure);
        } catch (final RuntimeException e) {
            txn.abort().onComplete(aborted -> done.fail(aborted.failed() ? aborted.cause() : e));
            return;
        }
        // body.compose(result -> txn.commit().map(ts -> outcome)).onComplete(ended) without the composition, the
        // mapping and their functions: the same steps at the same moments (a throw of commit() fails the attempt).
        @SuppressWarnings("unchecked") final Future<Object> bodyOf = (Future<Object>) (Future<?>) body;
        bodyOf.onComplete(new Attempt<>(procedure, attempt, limit, hint, start, done, txn));
    }

    /**
     * One attempt's steps after its body: the listener of the body, then of the commit ({@code committing}), where a
     * lambda each were two objects per attempt.
     */
    private final class Attempt<R> implements io.vertx.core.Completable<Object> {
        private final Function<Txn, Future<R>> procedure;
        private final int attempt;
        private final int limit;
        private final boolean hint;
        private final long start;
        private final Promise<Outcome<R>> done;
        private final Txn txn;
        private boolean committing;
        private R result;

        Attempt(final Function<Txn, Future<R>> procedure, final int attempt, final int limit, final boolean hint,
                final long start, final Promise<Outcome<R>> done, final Txn txn) {
            this.procedure = procedure;
            this.attempt = attempt;
            this.limit = limit;
            this.hint = hint;
            this.start = start;
            this.done = done;
            this.txn = txn;
        }

        @Override
        @SuppressWarnings("unchecked")
        public void complete(final Object value, final Throwable failure) {
            if (committing) {
                ended(procedure, attempt, limit, hint, start, done, txn, failure == null ? new Outcome<>(result, (Long) value,
                    attempt, runtime.timers().nowNs() - start, txn.mode()) : null, failure);
                return;
            }
            if (failure != null) {
                ended(procedure, attempt, limit, hint, start, done, txn, null, failure);
                return;
            }
            result = (R) value;
            final Future<Long> commit;
            try {
                commit = txn.commit();
            } catch (final Throwable e) {
                ended(procedure, attempt, limit, hint, start, done, txn, null, e);
                return;
            }
            committing = true;
            ((Future<Object>) (Future<?>) commit).onComplete(this);
        }
    }

    /** What follows an attempt's end: its outcome counted and passed on, or its abort and perhaps a retry. */
    private <R> void ended(final Function<Txn, Future<R>> procedure, final int attempt, final int limit,
                           final boolean hint, final long start, final Promise<Outcome<R>> done, final Txn txn, final Outcome<R> outcome,
                           final Throwable failure) {
        if (failure == null) {
            retryPolicy.committed(attempt);
            final long[] stages = txn.stageNanos();
            if (stages != null) {
                if (stages.length > stageNanos.length) { // a stage defined since this coordinator began
                    stageNanos = java.util.Arrays.copyOf(stageNanos, stages.length);
                }
                for (int i = 0; i < stages.length; i++) {
                    stageNanos[i] += stages[i];
                }
                stagedCommits++;
            }
            done.complete(outcome);
            return;
        }
        if (failure instanceof OutcomeUnknownException) {
            done.fail(failure); // past its point of no return: never aborted, never retried
            return;
        }
        // A request refused for now (send queue or RRPC ring full) did nothing: an abort, retried after the
        // back-off, rather than a failure of the transaction.
        final Throwable cause = Refusal.forNow(failure)
            ? new AbortException(AbortReason.BACK_PRESSURE, failure.getMessage()) : failure;
        txn.abort().onComplete(aborted -> {
            if (aborted.failed()) {
                // Its locks could not be released: the loop gave up (a lock verb in doubt). Nothing
                // committed, and nothing is retried on a loop that stopped serving.
                done.fail(aborted.cause());
                return;
            }
            if (!(cause instanceof AbortException abort)) {
                done.fail(cause);
                return;
            }
            aborts.computeIfAbsent(abort.reason(), r -> new long[1])[0]++;
            if (abortListener != null) {
                abortListener.accept(procedure, abort);
            }
            if (attempt >= limit || abort.reason() == AbortReason.USER
                || abort.reason() == AbortReason.DUPLICATE_KEY) {
                done.fail(abort.afterAttempts(attempt));
                return;
            }
            final boolean nextHint = retryPolicy.nextHint(hint, abort);
            final long bound = backoffBoundNs(attempt);
            // The next attempt starts once the reads the aborted one left in flight are done.
            txn.quiesced().compose(q -> runtime.timers().after(random.nextLong(bound))).onComplete(w ->
                attempt(procedure, attempt + 1, limit, nextHint, start, done));
        });
    }

    /** Nanoseconds the committed attempts spent in each stage, summed (by {@link Stage#index()}; every stage). */
    public long[] stageNanos() {
        return java.util.Arrays.copyOf(stageNanos, Math.max(stageNanos.length, Stage.count()));
    }

    /** Committed attempts whose stages were measured. */
    public long stagedCommits() {
        return stagedCommits;
    }

    /**
     * Tells {@code listener} of every aborted attempt from now on, with the procedure given to {@link #run} (the same
     * object: a harness that knows what each one is can break the aborts down by transaction type).
     */
    public void onAbort(final java.util.function.BiConsumer<Object, AbortException> listener) {
        this.abortListener = listener;
    }

    /** Aborted attempts so far, by reason. */
    public long aborts(final AbortReason reason) {
        final long[] n = aborts.get(reason);
        return n == null ? 0 : n[0];
    }

    /** The runtime its attempts run on (e.g. to install a {@link HistoryRecorder}). */
    public TxnRuntime runtime() {
        return runtime;
    }

    public Protocol protocol() {
        return protocol;
    }
}
