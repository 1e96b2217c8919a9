package io.scythe.txn.onesided;

import io.scythe.txn.Refusal;
import io.scythe.txn.runtime.Timers;
import io.vertx.core.Completable;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.impl.future.FutureImpl;

import java.util.List;
import java.util.function.Supplier;

/** Waiting for what an attempt has in flight, and posting again what was refused for now. */
public final class Reposts {
    /** Pauses before posting again what was refused for now: 20 us, doubling up to 640 us. */
    private static final long REPOST_PAUSE_NS = 20_000;
    /** How often a refused write-back or release is posted again (about 6 s of pauses) before it fails. */
    private static final int MAX_REPOSTS = 10_000;

    private Reposts() {
    }

    /**
     * {@code request} (which builds and posts its verbs or RPC afresh each time), made again after a growing pause
     * while it is refused for now: for what must not be dropped once decided, the write-back and the releases (a
     * dropped release would leave a lock held forever, a dropped write-back batch half a commit).
     */
    public static <T> Future<T> untilAccepted(final Timers timers, final Supplier<Future<T>> request) {
        return untilAccepted(timers, request, 0);
    }

    private static <T> Future<T> untilAccepted(final Timers timers, final Supplier<Future<T>> request,
                                               final int tries) {
        final Future<T> first = request.get();
        if (first.succeeded()) {
            return first; // accepted: recover would only wrap it
        }
        // recover, with one listener and one promise (recover builds a composition, its listener and a result)
        final Promise<T> accepted = Promise.promise();
        first.onComplete((value, failure) -> {
            if (failure == null) {
                accepted.complete(value);
            } else if (Refusal.forNow(failure) && tries < MAX_REPOSTS) {
                timers.after(REPOST_PAUSE_NS << Math.min(tries, 5)).compose(v -> untilAccepted(timers, request,
                    tries + 1)).onComplete(accepted);
            } else {
                accepted.fail(failure);
            }
        });
        return accepted.future();
    }

    /**
     * Waits for every future (so nothing of the attempt is left in flight), then fails with the first failure that is
     * not a refusal for now, else the first refusal.
     */
    public static Future<Void> settle(final List<? extends Future<?>> futures) {
        boolean allComplete = true;
        for (int i = 0; i < futures.size(); i++) {
            allComplete &= futures.get(i).isComplete();
        }
        if (allComplete) { // nothing to wait for (no keys to check, checks answered inline): no future built to wait
            return settled(futures);
        }
        if (futures.size() == 1) { // the common write-back to one memory node: no composite future for one
            return futures.get(0).mapEmpty();
        }
        return new Settling(futures).listening();
    }

    /** The outcome of {@code futures}, all complete: the first failure that is not a refusal, else the first refusal. */
    private static Future<Void> settled(final List<? extends Future<?>> futures) {
        final Throwable failure = failureOf(futures);
        return failure == null ? Future.succeededFuture() : Future.failedFuture(failure);
    }

    /** {@link #settled}'s failure, or null when every one of {@code futures} succeeded. */
    private static Throwable failureOf(final List<? extends Future<?>> futures) {
        Throwable refusal = null;
        for (int i = 0; i < futures.size(); i++) {
            final Future<?> f = futures.get(i);
            if (f.failed()) {
                if (!Refusal.forNow(f.cause())) {
                    return f.cause(); // a real failure outweighs a refusal (nothing done)
                }
                refusal = refusal == null ? f.cause() : refusal;
            }
        }
        return refusal;
    }

    /**
     * {@code Future.join(futures).transform(ar -> settled(futures))} as one object: the listener of every future and
     * the future that completes, once the last of them has, with their {@link #settled} outcome (join builds an array,
     * a composite, a transformation, its lambda and a result). Without a context, as join's composite: its listeners
     * run inline on completion. Its count of futures still pending is a plain int: every future it waits for must
     * complete on the transaction's loop (join's composite tolerated other threads). It extends Vert.x's internal
     * {@code FutureImpl}, as {@code Futures.Relay} does: a Vert.x upgrade may break it.
     */
    private static final class Settling extends FutureImpl<Void> implements Completable<Object> {
        private final List<? extends Future<?>> futures;
        private int pending;

        Settling(final List<? extends Future<?>> futures) {
            this.futures = futures;
            this.pending = futures.size();
        }

        @SuppressWarnings("unchecked")
        Future<Void> listening() {
            for (int i = 0; i < futures.size(); i++) {
                ((Future<Object>) futures.get(i)).onComplete(this);
            }
            return this;
        }

        @Override
        public void complete(final Object value, final Throwable failure) {
            if (--pending > 0) {
                return;
            }
            final Throwable settled = failureOf(futures);
            if (settled == null) {
                tryComplete(null);
            } else {
                tryFail(settled);
            }
        }
    }
}
