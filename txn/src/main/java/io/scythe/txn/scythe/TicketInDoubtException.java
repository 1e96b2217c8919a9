package io.scythe.txn.scythe;

/**
 * A Takeout ticket was taken, but its memory node stayed unreachable while it waited for its turn: the ticket is
 * still queued (or held, once {@code upper} reaches it), and only its holder's unlock or recovery can move
 * {@code upper} past it. The caller must give its loop up, so that recovery cancels the ticket; dropping it would
 * leave every later ticket of the object waiting forever.
 */
public final class TicketInDoubtException extends RuntimeException {
    public TicketInDoubtException(final String message, final Throwable cause) {
        super(message, cause, false, false);
    }
}
