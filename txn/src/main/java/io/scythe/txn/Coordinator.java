package io.scythe.txn;

import io.vertx.core.Future;
import io.vertx.core.Promise;

import java.util.EnumMap;
import java.util.Map;
import java.util.function.Function;

/**
 * Runs transactions of one event loop to an outcome: attempts a procedure under a protocol, and retries an attempt
 * that aborted, up to a limit, choosing Scythe's mode from the heat the last abort saw (HOT once an object's queue
 * exceeded the cold watermark, §4.2.1 (1)). Latency is measured from the first attempt to the commit, as the papers
 * measure it. A bad request (unknown table or key) is not retried. Before a retry it waits a random time below a
 * bound that doubles with each abort (1 us, 2 us, ... up to 128 us), as DBx1000's abort penalty does: without it,
 * clients that abort on a lock retry in lock-step and a hot key livelocks (FORD at 20 accounts and 16 clients
 * committed 380 of 1.5 M attempts in 6 s). Loop-confined.
 */
public final class Coordinator {
    private final TxnRuntime runtime;
    private final Protocol protocol;
    private final int maxAttempts;
    private final Map<AbortReason, long[]> aborts = new EnumMap<>(AbortReason.class);
    private final long[] stageNanos = new long[Stage.values().length];
    private final io.scythe.hotspot.AdaptiveWatermarks adaptive;
    private long stagedCommits;
    private long lastHotObject;
    private final java.util.SplittableRandom random;
    /** Largest back-off before a retry. */
    public static final long MAX_BACKOFF_NS = 128_000;
    private static final long BASE_BACKOFF_NS = 1_000;

    public Coordinator(final TxnRuntime runtime, final Protocol protocol, final int maxAttempts) {
        this(runtime, protocol, maxAttempts, null);
    }

    /**
     * @param adaptive per-object cold watermarks that follow aborts (beyond the paper, its §6 future work), or
     *                 {@code null} for the fixed watermark of {@link TxnRuntime#watermarks()}
     */
    public Coordinator(final TxnRuntime runtime, final Protocol protocol, final int maxAttempts,
                       final io.scythe.hotspot.AdaptiveWatermarks adaptive) {
        this.adaptive = adaptive;
        if (maxAttempts < 1) {
            throw new IllegalArgumentException("maxAttempts=" + maxAttempts + " must be at least 1");
        }
        this.runtime = runtime;
        this.protocol = protocol;
        this.maxAttempts = maxAttempts;
        this.random = new java.util.SplittableRandom(runtime.nextTxnId());
        for (final AbortReason r : AbortReason.values()) {
            aborts.put(r, new long[1]);
        }
    }

    /** How a transaction ended. */
    public record Outcome<R>(R result, long commitTs, int attempts, long latencyNs, String mode) {
    }

    /**
     * Runs {@code procedure} until it commits; fails with the last {@link AbortException} after {@code maxAttempts}
     * aborted attempts, or with the procedure's own error (not retried).
     */
    public <R> Future<Outcome<R>> run(final Function<Txn, Future<R>> procedure) {
        final Promise<Outcome<R>> done = Promise.promise();
        attempt(procedure, 1, false, runtime.timers().nowNs(), done);
        return done.future();
    }

    private <R> void attempt(final Function<Txn, Future<R>> procedure, final int attempt, final boolean hot,
                             final long start, final Promise<Outcome<R>> done) {
        final Txn txn;
        try {
            txn = protocol.begin(runtime, hot);
        } catch (final RuntimeException e) { // NotServingException (TxnRuntime#nextTxnId): nothing was done
            done.fail(e);
            return;
        }
        final Future<R> body;
        try {
            body = procedure.apply(txn);
        } catch (final RuntimeException e) {
            txn.abort().onComplete(aborted -> done.fail(aborted.failed() ? aborted.cause() : e));
            return;
        }
        body.compose(result -> txn.commit().map(ts -> new Outcome<>(result, ts, attempt,
            runtime.timers().nowNs() - start, txn.mode()))).onComplete(ar -> {
                if (ar.succeeded()) {
                    if (adaptive != null && attempt > 1 && lastHotObject != 0) {
                        adaptive.committed(lastHotObject);
                    }
                    final long[] stages = txn.stageNanos();
                    if (stages != null) {
                        for (int i = 0; i < stages.length; i++) {
                            stageNanos[i] += stages[i];
                        }
                        stagedCommits++;
                    }
                    done.complete(ar.result());
                    return;
                }
                if (ar.cause() instanceof OutcomeUnknownException) {
                    done.fail(ar.cause()); // past its point of no return: never aborted, never retried
                    return;
                }
                // A request refused for now (send queue or RRPC ring full) did nothing: an abort, retried after the
                // back-off, rather than a failure of the transaction.
                final Throwable cause = OneSidedTxn.refusedForNow(ar.cause())
                    ? new AbortException(AbortReason.BACK_PRESSURE, ar.cause().getMessage()) : ar.cause();
                txn.abort().onComplete(aborted -> {
                    if (aborted.failed()) {
                        // Its locks could not be released: the loop gave up (OneSidedTxn#lockVerbInDoubt). Nothing
                        // committed, and nothing is retried on a loop that stopped serving.
                        done.fail(aborted.cause());
                        return;
                    }
                    if (!(cause instanceof AbortException abort)) {
                        done.fail(cause);
                        return;
                    }
                    aborts.get(abort.reason())[0]++;
                    if (attempt >= maxAttempts || abort.reason() == AbortReason.USER
                        || abort.reason() == AbortReason.DUPLICATE_KEY) {
                        done.fail(cause);
                        return;
                    }
                    final int cold;
                    if (adaptive != null && abort.object() != 0) {
                        adaptive.aborted(abort.object());
                        cold = adaptive.cold(abort.object());
                    } else {
                        cold = runtime.watermarks().cold();
                    }
                    final boolean nextHot = hot || abort.reason() == AbortReason.HOT_OBJECT || abort.heat() > cold
                        || (adaptive != null && cold == 0 && abort.object() != 0);
                    if (nextHot) {
                        lastHotObject = abort.object();
                    }
                    final long bound = Math.min(MAX_BACKOFF_NS, BASE_BACKOFF_NS << Math.min(attempt - 1, 20));
                    // The next attempt starts once the reads the aborted one left in flight are done (OneSidedTxn).
                    final Future<Void> quiet = txn instanceof OneSidedTxn oneSided ? oneSided.quiesced()
                        : Future.succeededFuture();
                    quiet.compose(q -> runtime.timers().after(random.nextLong(bound))).onComplete(w ->
                        attempt(procedure, attempt + 1, nextHot, start, done));
                });
            });
    }

    /** Nanoseconds the committed attempts spent in each stage, summed (by {@link Stage} ordinal). */
    public long[] stageNanos() {
        return stageNanos.clone();
    }

    /** Committed attempts whose stages were measured. */
    public long stagedCommits() {
        return stagedCommits;
    }

    /** Aborted attempts so far, by reason. */
    public long aborts(final AbortReason reason) {
        return aborts.get(reason)[0];
    }

    /** The runtime its attempts run on (e.g. to install a {@link HistoryRecorder}). */
    public TxnRuntime runtime() {
        return runtime;
    }

    public Protocol protocol() {
        return protocol;
    }
}
