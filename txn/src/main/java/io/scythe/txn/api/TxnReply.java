package io.scythe.txn.api;

/**
 * The answer to a {@link TxnRequest}: {@code committed} (with the procedure's result, commit timestamp, attempts and
 * latency from the first attempt), {@code aborted} (gave up after the retry limit, or the procedure rolled back; the
 * reason says which), {@code wrong-owner} (routed by a shard this compute node does not own: nothing ran; the reason
 * names the owner and {@link #result} is the epoch of the node's shard map, so the client routes it again), or
 * {@code error} (a bad request: unknown procedure, wrong arguments, malformed message; or a failure whose outcome is
 * unknown). A client that gets no reply in time must treat the outcome as unknown.
 */
public record TxnReply(String status, long result, long commitTs, int attempts, long latencyNs, String reason) {
    public static final String COMMITTED = "committed";
    public static final String ABORTED = "aborted";
    public static final String ERROR = "error";
    public static final String WRONG_OWNER = "wrong-owner";

    public static TxnReply error(final String reason) {
        return new TxnReply(ERROR, 0, 0, 0, 0, reason);
    }

    /** Refused: routed by a shard the node does not own, as of its map's {@code epoch}. */
    public static TxnReply wrongOwner(final long epoch, final String reason) {
        return new TxnReply(WRONG_OWNER, epoch, 0, 0, 0, reason);
    }

    public boolean committed() {
        return COMMITTED.equals(status);
    }

    public boolean wrongOwner() {
        return WRONG_OWNER.equals(status);
    }

    /** The epoch of the refusing node's shard map (of a {@link #wrongOwner()} reply). */
    public long ownerEpoch() {
        return result;
    }
}
