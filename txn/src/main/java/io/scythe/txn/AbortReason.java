package io.scythe.txn;

import java.util.List;

/**
 * Why a transaction attempt aborted; counted per reason by the coordinator and the benchmark. The shared reasons are
 * below; a protocol module {@linkplain #define defines} its own (Scythe's Takeout Lock refusals live in its package).
 * Reports list reasons by position.
 */
public final class AbortReason {
    private static final Labels<AbortReason> DEFINED = new Labels<>("abort reason");

    /** An object it read was locked or queued on by another transaction (early abort). */
    public static final AbortReason LOCKED = define("locked", 100);
    /** Validation found an object of its read set changed or locked. */
    public static final AbortReason VALIDATION = define("validation", 200);
    /** An insert found its key present: retrying would find it again, so it is not retried. */
    public static final AbortReason DUPLICATE_KEY = define("duplicate-key", 600);
    /**
     * A verb or RPC of the attempt was refused for now (the loop's send queue to a memory node or its RRPC ring was
     * full): nothing of it happened, so the attempt is given up and retried after the back-off, as flow control.
     */
    public static final AbortReason BACK_PRESSURE = define("back-pressure", 700);
    /**
     * No timestamp source answered (the TSO service restarting, every proxy lost): nothing was written yet, so it is
     * retried after the back-off.
     */
    public static final AbortReason TSO_UNAVAILABLE = define("tso-unavailable", 800);
    /** The procedure itself decided to abort (e.g. insufficient funds in a workload that aborts then). */
    public static final AbortReason USER = define("user", 900);

    private final String label;
    private final int index;

    private AbortReason(final String label, final int index) {
        this.label = label;
        this.index = index;
    }

    /**
     * A new reason labelled {@code label}, reported at {@code position} among the others (the shared ones are at
     * 100, 200, 600, ... 900). Modules define theirs in static fields, so each is defined once.
     *
     * @throws IllegalArgumentException when a reason of that label exists
     */
    public static AbortReason define(final String label, final int position) {
        return DEFINED.define(label, position, AbortReason::new);
    }

    /**
     * Every reason defined so far, in report order. A module's reasons are defined once its class is loaded: reports
     * ask {@code ProtocolRegistry.abortReasons()}, which loads every registered module first.
     */
    public static List<AbortReason> values() {
        return DEFINED.values(AbortReason::index);
    }

    public String label() {
        return label;
    }

    /** The order it was defined in (stable within a process). */
    public int index() {
        return index;
    }

    @Override
    public String toString() {
        return label;
    }
}
