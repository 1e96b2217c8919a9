package io.scythe.bridge;

/**
 * What a verb posted with a callback instead of a Future ({@link RdmaChannel#read(long, int,
 * org.agrona.MutableDirectBuffer, int, int, VerbCallback)} and its siblings) calls once it is done: exactly once, on
 * the channel's event loop, in posting order, at the moment its Future would have completed (a refusal at post
 * calls it before the post returns, as a refused Future is failed before it is returned). The one-sided hot path
 * uses it to run the transaction's next step straight from the completion, without a promise, a future and a
 * listener per verb.
 */
@FunctionalInterface
public interface VerbCallback {
    /**
     * @param value   an atomic's old value (0 for other verbs)
     * @param failure null on success, else the {@link VerbException} (or refusal) the verb's Future would fail with
     */
    void done(long value, Throwable failure);

    /**
     * Calls {@code callback} as the channel and the doorbell do: a callback that throws is contained and logged, as a
     * Promise contains a throwing listener, so the completions after it are still delivered (a throw must not leave
     * later verbs uncalled, their attempts hanging).
     */
    static void call(final VerbCallback callback, final long value, final Throwable failure) {
        try {
            callback.done(value, failure);
        } catch (final RuntimeException e) {
            io.vertx.core.internal.logging.LoggerFactory.getLogger(VerbCallback.class)
                .error("a verb's callback threw (contained; the callback must not throw)", e);
        }
    }
}
