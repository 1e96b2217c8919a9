package io.scythe.tso;

import io.vertx.core.Context;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;
import io.vertx.core.internal.ContextInternal;

import java.util.concurrent.TimeoutException;
import java.util.function.Supplier;

/**
 * A time limit on a timestamp source's answer, completed on the caller's event loop (a TSO group is loop-confined).
 * A source whose peer went silent (paused, cut off) leaves no verb or call to fail: without a limit its group, and
 * every transaction of its loop, would wait for ever.
 */
final class Deadline {
    private Deadline() {
    }

    /**
     * {@code call}, or a {@link TimeoutException} saying {@code what} did not answer if it is not complete within
     * {@code timeoutMs} (0: no limit). A late outcome is dropped: a range nobody uses, a gap.
     */
    static <T> Future<T> within(final Future<T> call, final long timeoutMs, final Supplier<String> what) {
        final Context context = Vertx.currentContext();
        if (timeoutMs <= 0 || context == null || call.isComplete()) {
            return call;
        }
        final Promise<T> outcome = ((ContextInternal) context).promise();
        final long timer = context.owner().setTimer(timeoutMs, t -> outcome.tryFail(new TimeoutException(what.get()
            + " did not answer within " + timeoutMs + " ms")));
        call.onComplete(ar -> {
            context.owner().cancelTimer(timer);
            if (ar.succeeded()) {
                outcome.tryComplete(ar.result());
            } else {
                outcome.tryFail(ar.cause());
            }
        });
        return outcome.future();
    }
}
