package io.scythe.fabric;

/** The states of a reliable-connected queue pair that matter to its users. */
public enum QpState {
    /** Ready to send: work requests are accepted. */
    READY,
    /** A work request failed; the rest were flushed. {@link QueuePair#reset()} brings it back to READY. */
    ERROR,
    /** Revoked by the responder (fencing): every verb fails with {@link WcStatus#REVOKED}, forever. */
    REVOKED,
    /** Closed by its owner. */
    CLOSED
}
