package io.scythe.txn;

/** A key, table or procedure that does not exist: a bad request, not a conflict; never retried. */
public final class UnknownKeyException extends RuntimeException {
    public UnknownKeyException(final String message) {
        super(message, null, false, false);
    }
}
