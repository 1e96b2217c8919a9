package io.scythe.txn;

import io.vertx.core.VertxException;

/**
 * A transaction this loop refused before doing anything: the loop gave up ({@link TxnRuntime#giveUp}) or its
 * transaction ids are used up. Nothing of it ran, so a client may send it again elsewhere; unlike
 * {@link OutcomeUnknownException} it can never have committed.
 */
public final class NotServingException extends VertxException {
    public NotServingException(final String message) {
        super("not serving: " + message, true);
    }
}
