package io.scythe.txn;

/**
 * A transaction attempt aborted for {@link #reason()}; the coordinator may retry it. {@link #heat()} is the queue
 * length the abort saw on a Takeout Lock (0 when none), which decides Scythe's mode on retry.
 */
public final class AbortException extends RuntimeException {
    private final AbortReason reason;
    private final long heat;
    private final long object;
    /** The table of the object the conflict was on, or null when unknown. */
    private final String table;
    private final int attempts;

    public AbortException(final AbortReason reason, final String detail) {
        this(reason, 0, detail);
    }

    public AbortException(final AbortReason reason, final long heat, final String detail) {
        this(reason, heat, 0, detail);
    }

    /** @param object the object the conflict was on ({@link #objectOf}), 0 when none */
    public AbortException(final AbortReason reason, final long heat, final long object, final String detail) {
        this("aborted (" + reason.label() + "): " + detail, reason, heat, object, null, 1);
    }

    /** A conflict on {@code key} of {@code table}: its object is {@link #objectOf}, its table {@link #table()}. */
    public AbortException(final AbortReason reason, final long heat, final String table, final long key,
                          final String detail) {
        this("aborted (" + reason.label() + "): " + detail, reason, heat, objectOf(table, key), table, 1);
    }

    private AbortException(final String message, final AbortReason reason, final long heat, final long object,
                           final String table, final int attempts) {
        super(message, null, false, false);
        this.reason = reason;
        this.heat = heat;
        this.object = object;
        this.table = table;
        this.attempts = attempts;
    }

    /**
     * This abort as the end of a transaction that aborted {@code attempts} times ({@link Coordinator#run} fails with
     * it when it gives up).
     */
    public AbortException afterAttempts(final int attempts) {
        return new AbortException(getMessage(), reason, heat, object, table, attempts);
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

    /** The table of the object the conflict was on, or null when the abort names none. */
    public String table() {
        return table;
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
