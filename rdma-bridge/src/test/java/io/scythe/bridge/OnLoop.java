package io.scythe.bridge;

import io.vertx.core.Context;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.junit5.VertxTestContext;

import java.util.concurrent.TimeUnit;
import java.util.function.Function;

import static org.assertj.core.api.Assertions.assertThat;

/** Runs a test's body on an event loop, where verbs may be posted, and waits for its Future. */
final class OnLoop {
    private OnLoop() {
    }

    /** Runs {@code body} on a fresh event-loop context of {@code vertx}; returns its result or fails with its cause. */
    static <T> T run(final Vertx vertx, final Function<Context, Future<T>> body) throws Exception {
        final Context context = vertx.getOrCreateContext();
        final VertxTestContext test = new VertxTestContext();
        final Object[] result = new Object[1];
        context.runOnContext(v -> {
            final Future<T> f;
            try {
                f = body.apply(context);
            } catch (final RuntimeException e) { // thrown by the body itself: fail now, not after the wait
                test.failNow(e);
                return;
            }
            f.onComplete(ar -> {
                if (ar.succeeded()) {
                    result[0] = ar.result();
                    test.completeNow();
                } else {
                    test.failNow(ar.cause());
                }
            });
        });
        assertThat(test.awaitCompletion(10, TimeUnit.SECONDS)).isTrue();
        if (test.failed()) {
            throw new AssertionError(test.causeOfFailure());
        }
        @SuppressWarnings("unchecked") final T t = (T) result[0];
        return t;
    }
}
