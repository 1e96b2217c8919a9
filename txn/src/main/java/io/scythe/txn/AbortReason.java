package io.scythe.txn;

/** Why a transaction attempt aborted; counted per reason by the coordinator and the benchmark. */
public enum AbortReason {
    /** An object it read was locked or queued on by another transaction (early abort). */
    LOCKED("locked"),
    /** Validation found an object of its read set changed or locked. */
    VALIDATION("validation"),
    /** A COLD (OCC) lock request found the object hot: retried in HOT mode (TOCC). */
    HOT_OBJECT("hot-object"),
    /** The Takeout Lock refused it: an older timestamp than one queued. */
    TIMESTAMP_ORDER("timestamp-order"),
    /** The Takeout Lock refused it: more queued than the hot watermark. */
    QUEUE_FULL("queue-full"),
    /** An insert found its key present: retrying would find it again, so it is not retried. */
    DUPLICATE_KEY("duplicate-key"),
    /**
     * A verb or RPC of the attempt was refused for now (the loop's send queue to a memory node or its RRPC ring was
     * full): nothing of it happened, so the attempt is given up and retried after the back-off, as flow control.
     */
    BACK_PRESSURE("back-pressure"),
    /**
     * No timestamp source answered (the TSO service restarting, every proxy lost): nothing was written yet, so it is
     * retried after the back-off.
     */
    TSO_UNAVAILABLE("tso-unavailable"),
    /** The procedure itself decided to abort (e.g. insufficient funds in a workload that aborts then). */
    USER("user");

    private final String label;

    AbortReason(final String label) {
        this.label = label;
    }

    public String label() {
        return label;
    }
}
