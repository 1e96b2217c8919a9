package io.scythe.txn;

import io.vertx.core.VertxException;

/**
 * A transaction whose outcome this compute node cannot tell: it is (or may be) past its point of no return (its redo
 * record durable; with nothing written, no record, its lock releases posted), so it is not aborted and never retried,
 * but its write-back or releases could not be finished here. The loop gave it up
 * ({@link TxnRuntime#onGiveUp}): the node stops serving, and the recovery of its incarnation by another node settles
 * it from the record (rolled forward when the record is whole). Clients get an error reply, never "aborted".
 */
public final class OutcomeUnknownException extends VertxException {
    public OutcomeUnknownException(final String message, final Throwable cause) {
        super("outcome unknown: " + message, cause, true);
    }
}
