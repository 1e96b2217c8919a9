package io.scythe.txn.api;

import java.util.Objects;

/**
 * The answer to a {@link TxnRequest}. What a program does with it depends on {@link #status()} alone:
 * <ul>
 *   <li>{@link Status#COMMITTED}: done; {@link #result()} is the procedure's result, {@link #commitTs()} its commit
 *       timestamp (or version, as the protocol orders writes), {@link #attempts()} how many attempts it took,
 *       {@link #latencyNs()} the time from its first attempt to the commit, {@link #mode()} the protocol mode that
 *       committed it (e.g. {@code scythe/occ}).</li>
 *   <li>{@link Status#ABORTED}: it did not commit and never will: the procedure rolled back ({@link #abortReason()}
 *       {@code user}), or every attempt aborted up to the retry limit ({@link #attempts()} of them, the last one's
 *       reason). Sending it again is a new transaction.</li>
 *   <li>{@link Status#REJECTED}: refused before it ran, nothing changed; {@link #rejection()} says why. A
 *       {@link Rejection#WRONG_OWNER} or {@link Rejection#NOT_SERVING} request may be sent again (to the owner, whose
 *       shard map's epoch is {@link #ownerEpoch()}, or to another node); the others are bad requests to fix.</li>
 *   <li>{@link Status#FAILED}: it ran and failed before its point of no return (the procedure threw, a verb failed):
 *       nothing of it committed.</li>
 *   <li>{@link Status#UNKNOWN}: given up past its point of no return: it may have committed; the recovery of its
 *       node settles it. Not safe to send again unless the procedure is idempotent.</li>
 * </ul>
 * A client that gets no reply in time must also treat the outcome as unknown. {@link #reason()} is for people (logs).
 *
 * @param rejection   why it was refused ({@link Status#REJECTED} only, else {@code null})
 * @param abortReason the label of the last attempt's {@code AbortReason} ({@link Status#ABORTED} only, else
 *                    {@code null})
 * @param result      the procedure's result; of a {@link Rejection#WRONG_OWNER} refusal, the epoch of the refusing
 *                    node's shard map
 * @param mode        the protocol mode of the committing attempt ({@link Status#COMMITTED} only, else {@code null})
 */
public record TxnReply(Status status, Rejection rejection, String abortReason, long result, long commitTs,
                       int attempts, long latencyNs, String mode, String reason) {
    /** How a transaction ended, as far as this node can tell. */
    public enum Status {
        COMMITTED, ABORTED, REJECTED, FAILED, UNKNOWN;

        /** The lower-case name used in metrics and logs ({@code committed}, ...). */
        public String label() {
            return name().toLowerCase(java.util.Locale.ROOT);
        }
    }

    /** Why a request was refused before it ran. */
    public enum Rejection {
        /** No procedure of that name is registered. */
        UNKNOWN_PROCEDURE,
        /** The wrong number of arguments, or an argument naming a key or table that does not exist. */
        BAD_ARGUMENTS,
        /** The message was not a readable {@link TxnRequest}. */
        MALFORMED,
        /** The coordinator's loop stopped serving (its node is being fenced or recovered): send it elsewhere. */
        NOT_SERVING,
        /** Routed by a shard this node does not own: route it again ({@link TxnReply#ownerEpoch()}). */
        WRONG_OWNER
    }

    public TxnReply {
        Objects.requireNonNull(status, "status");
        if ((status == Status.REJECTED) != (rejection != null)) {
            throw new IllegalArgumentException("a rejection kind goes with, and only with, status REJECTED: "
                + status + "/" + rejection);
        }
    }

    /** Committed by {@code mode} after {@code attempts} attempts. */
    public static TxnReply committed(final long result, final long commitTs, final int attempts, final long latencyNs,
                                     final String mode) {
        return new TxnReply(Status.COMMITTED, null, null, result, commitTs, attempts, latencyNs, mode, null);
    }

    /** Aborted for good after {@code attempts} attempts, the last for {@code abortReason}. */
    public static TxnReply aborted(final String abortReason, final int attempts, final String reason) {
        return new TxnReply(Status.ABORTED, null, abortReason, 0, 0, attempts, 0, null, reason);
    }

    /** Refused before it ran. */
    public static TxnReply rejected(final Rejection why, final String reason) {
        return new TxnReply(Status.REJECTED, why, null, 0, 0, 0, 0, null, reason);
    }

    /** Refused: routed by a shard the node does not own, as of its map's {@code epoch}. */
    public static TxnReply wrongOwner(final long epoch, final String reason) {
        return new TxnReply(Status.REJECTED, Rejection.WRONG_OWNER, null, epoch, 0, 0, 0, null, reason);
    }

    /** Failed before its point of no return: nothing committed. */
    public static TxnReply failed(final String reason) {
        return new TxnReply(Status.FAILED, null, null, 0, 0, 0, 0, null, reason);
    }

    /** Given up past its point of no return: it may have committed. */
    public static TxnReply unknown(final String reason) {
        return new TxnReply(Status.UNKNOWN, null, null, 0, 0, 0, 0, null, reason);
    }

    public boolean committed() {
        return status == Status.COMMITTED;
    }

    public boolean wrongOwner() {
        return rejection == Rejection.WRONG_OWNER;
    }

    /** The epoch of the refusing node's shard map (of a {@link #wrongOwner()} reply). */
    public long ownerEpoch() {
        return result;
    }

    /** The types a codec must know to carry requests and replies (register them all, e.g. with Kryo). */
    public static java.util.List<Class<?>> wireTypes() {
        return java.util.List.of(TxnRequest.class, TxnReply.class, Status.class, Rejection.class);
    }
}
