package io.scythe.fabric;

import org.agrona.MutableDirectBuffer;

/**
 * One end of a reliable-connected queue pair between two nodes. Work requests posted on one QP execute in posting
 * order and complete in posting order. Only the owner thread of the QP's {@link CompletionQueue} may post.
 *
 * <p>Both ends can post: a CN's end carries its one-sided verbs to an MN, and the MN's end of the same QP can WRITE
 * into the CN's registered memory (RRPC replies) or SEND to it.
 */
public interface QueuePair extends AutoCloseable {
    /** {@link #post} accepted the whole batch. */
    int POST_OK = 0;
    /** {@link #post} refused the batch: the send queue has no room for all of it (back-pressure; nothing posted). */
    int SEND_QUEUE_FULL = -1;
    /** {@link #post} refused the batch: a request in it is malformed (nothing posted). */
    int INVALID_REQUEST = -2;
    /** {@link #post} refused the batch: this end was closed, or has no completion queue to report to. */
    int NOT_CONNECTED = -3;

    /** Number of this QP, unique on its node. */
    int qpNumber();

    /** Node this end belongs to. */
    String localNode();

    /** Node at the other end. */
    String remoteNode();

    QpState state();

    /**
     * Posts a doorbell batch: {@code first} and every request linked after it, in order, with one doorbell. A QP in
     * {@link QpState#ERROR} accepts the batch and completes every request with {@link WcStatus#WR_FLUSH_ERROR}; a
     * revoked one completes them with {@link WcStatus#REVOKED}.
     *
     * @return {@link #POST_OK} or a negative code ({@link #SEND_QUEUE_FULL}, {@link #INVALID_REQUEST},
     *     {@link #NOT_CONNECTED}); nothing of the batch was posted when the code is negative
     */
    int post(WorkRequest first);

    /**
     * Posts a receive buffer for the peer's next SEND; its arrival completes as {@link Opcode#RECV} with
     * {@code wrId} on this end's completion queue.
     *
     * @return {@link #POST_OK}, {@link #SEND_QUEUE_FULL} when the receive queue is full, or {@link #NOT_CONNECTED}
     */
    int postRecv(MutableDirectBuffer buffer, int offset, int length, long wrId);

    /** Brings a QP in {@link QpState#ERROR} back to {@link QpState#READY} once nothing is outstanding on it. */
    boolean reset();

    /**
     * Revokes this queue pair for good, as a responder fencing a dead peer does: every verb posted on it afterwards,
     * from either end, fails with {@link WcStatus#REVOKED}.
     */
    void revoke();

    /** Requests posted and not yet completed. */
    int outstanding();

    /**
     * Whether this end's connection is gone for good (its peer stopped answering past the transport timeout, or the
     * connection closed): every verb posted on it fails, and only a new queue pair reaches the peer again. A closed
     * end is gone too; by default only that (providers whose queue pairs cannot lose their connection).
     */
    default boolean connectionGone() {
        return state() == QpState.CLOSED;
    }

    QpOptions options();

    /** Whoever owns this end: the {@code BridgeVerticle} dispatches completions to it when it is a handler. */
    Object attachment();

    void attachment(Object attachment);

    @Override
    void close();
}
