package io.scythe.bench.micro;

import io.netty.util.concurrent.FastThreadLocal;
import io.scythe.txn.AbortException;
import io.scythe.txn.AbortReason;
import io.scythe.txn.Coordinator;
import io.vertx.core.Completable;
import io.vertx.core.Future;
import io.vertx.core.impl.future.FutureImpl;

import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.Predicate;

/**
 * What the OLTP bench does with one transaction's outcome, as one object that is both the listener of the
 * coordinator's future and the future {@link ClosedLoop} listens to: the transaction is counted (while measuring) in
 * its compute node's completions, the quantity it moved is added up and its outcome counted by type; a rollback that
 * is its outcome passes on as a success, an abort given up on or an error as a failure. It replaces a listener
 * ({@code onComplete}), a {@code map} and a {@code recover}: a listener array, two transformations, their futures and
 * three lambdas per transaction.
 */
final class Settled extends FutureImpl<Object> implements Completable<Coordinator.Outcome<Long>> {
    private final Tally tally;
    private final String type;
    /** The compute node's completions, or null when the caller counts them (a routed transaction). */
    private final LongAdder completed;

    /** What every transaction of one run reports to. */
    record Tally(AtomicBoolean measuring, LongAdder delta, FastThreadLocal<TxnTypeStats> typeStats, LongAdder errors,
                 AtomicReference<Throwable> firstError, Predicate<AbortReason> isOutcome) {
        /** {@code ran}, a transaction of {@code type}, settled; counted in {@code completed} unless it is null. */
        Future<Object> settle(final Future<Coordinator.Outcome<Long>> ran, final String type,
                              final LongAdder completed) {
            final Settled settled = new Settled(this, type, completed);
            ran.onComplete(settled);
            return settled;
        }

        /** Whether {@code failure} is an abort that is the transaction's outcome (a rollback it asked for). */
        boolean isOutcome(final Throwable failure) {
            return failure instanceof AbortException a && isOutcome.test(a.reason());
        }
    }

    private Settled(final Tally tally, final String type, final LongAdder completed) {
        this.tally = tally;
        this.type = type;
        this.completed = completed;
    }

    @Override
    public void complete(final Coordinator.Outcome<Long> outcome, final Throwable ran) {
        if (completed != null && tally.measuring.get() && (ran == null || tally.isOutcome(ran))) {
            completed.increment();
        }
        Throwable failure = ran;
        if (failure == null) {
            try {
                tally.delta.add(outcome.result());
                if (tally.measuring.get()) {
                    tally.typeStats.get().committed(type, outcome.attempts(), outcome.latencyNs());
                }
            } catch (final RuntimeException e) { // as map: a throw fails the step
                failure = e;
            }
            if (failure == null) {
                tryComplete(outcome);
                return;
            }
        }
        if (tally.isOutcome(failure)) {
            if (tally.measuring.get()) {
                tally.typeStats.get().userRollback(type); // rolled back: a completed transaction
            }
            tryComplete(null);
            return;
        }
        if (tally.measuring.get() && failure instanceof AbortException given) {
            // The attempts it was given (the harness's rule may give each type its own, OnAbort#SCYTHE).
            tally.typeStats.get().gaveUp(type, Math.max(1, given.attempts()));
        }
        if (!(failure instanceof AbortException)) {
            tally.errors.increment();
            tally.firstError.compareAndSet(null, failure);
        }
        tryFail(failure); // gave up: counted by ClosedLoop as failed
    }
}
