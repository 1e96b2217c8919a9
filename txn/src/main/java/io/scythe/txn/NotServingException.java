package io.scythe.txn;

import io.vertx.core.VertxException;

/**
 * A transaction this loop did not commit and will not retry because the loop stopped serving
 * ({@link TxnRuntime#giveUp}): refused before doing anything (the loop gave up before, or its transaction ids are
 * used up), or aborted when a release or lock verb of its attempt failed and the loop gave up for it
 * ({@code onesided.OneSidedTxn#lockVerbInDoubt}). Either way it can never have committed, so a client may send it again
 * elsewhere; unlike {@link OutcomeUnknownException}.
 */
public final class NotServingException extends VertxException {
    public NotServingException(final String message) {
        super("not serving: " + message, true);
    }

    public NotServingException(final String message, final Throwable cause) {
        super("not serving: " + message, cause, true);
    }
}
