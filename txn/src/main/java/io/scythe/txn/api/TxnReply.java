package io.scythe.txn.api;

/**
 * The answer to a {@link TxnRequest}: {@code committed} (with the procedure's result, commit timestamp, attempts and
 * latency from the first attempt), {@code aborted} (gave up after the retry limit, or the procedure rolled back; the
 * reason says which), or {@code error} (a bad request: unknown procedure, wrong arguments, malformed message; or a
 * failure whose outcome is unknown). A client that gets no reply in time must treat the outcome as unknown.
 */
public record TxnReply(String status, long result, long commitTs, int attempts, long latencyNs, String reason) {
    public static final String COMMITTED = "committed";
    public static final String ABORTED = "aborted";
    public static final String ERROR = "error";

    public static TxnReply error(final String reason) {
        return new TxnReply(ERROR, 0, 0, 0, 0, reason);
    }

    public boolean committed() {
        return COMMITTED.equals(status);
    }
}
