package io.scythe.txn;

/**
 * A transaction attempt aborted for {@link #reason()}; the coordinator may retry it. {@link #heat()} is the queue
 * length the abort saw on a Takeout Lock (0 when none), which decides Scythe's mode on retry.
 */
public final class AbortException extends RuntimeException {
    private final AbortReason reason;
    private final long heat;
    private final long object;
    private final int attempts;

    public AbortException(final AbortReason reason, final String detail) {
        this(reason, 0, detail);
    }

    public AbortException(final AbortReason reason, final long heat, final String detail) {
        this(reason, heat, 0, detail);
    }

    /** @param object the object the conflict was on ({@link #objectOf}), 0 when none */
    public AbortException(final AbortReason reason, final long heat, final long object, final String detail) {
        this("aborted (" + reason.label() + "): " + detail, reason, heat, object, 1);
    }

    private AbortException(final String message, final AbortReason reason, final long heat, final long object,
                           final int attempts) {
        super(message, null, false, false);
        this.reason = reason;
        this.heat = heat;
        this.object = object;
        this.attempts = attempts;
    }

    /**
     * This abort as the end of a transaction that aborted {@code attempts} times ({@link Coordinator#run} fails with
     * it when it gives up).
     */
    public AbortException afterAttempts(final int attempts) {
        return new AbortException(getMessage(), reason, heat, object, attempts);
    }

    /** How many attempts aborted, this one the last: 1 for one attempt's abort. */
    public int attempts() {
        return attempts;
    }

    /** An identifier of {@code key} of {@code table} for per-object statistics (collisions are harmless). */
    public static long objectOf(final String table, final long key) {
        final long id = table.hashCode() * 0x9E3779B97F4A7C15L + key;
        return id == 0 ? 1 : id;
    }

    /** The object the conflict was on, or 0. */
    public long object() {
        return object;
    }

    public AbortReason reason() {
        return reason;
    }

    public long heat() {
        return heat;
    }
}
