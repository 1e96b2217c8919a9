package io.scythe.txn;

/**
 * A transaction attempt aborted for {@link #reason()}; the coordinator may retry it. {@link #heat()} is the queue
 * length the abort saw on a Takeout Lock (0 when none), which decides Scythe's mode on retry.
 */
public final class AbortException extends RuntimeException {
    private final AbortReason reason;
    private final long heat;

    public AbortException(final AbortReason reason, final String detail) {
        this(reason, 0, detail);
    }

    public AbortException(final AbortReason reason, final long heat, final String detail) {
        super("aborted (" + reason.label() + "): " + detail, null, false, false);
        this.reason = reason;
        this.heat = heat;
    }

    public AbortReason reason() {
        return reason;
    }

    public long heat() {
        return heat;
    }
}
