package io.scythe.txn;

import java.util.List;

/**
 * A stage of a committed attempt, as the papers break latency down (DESIGN.md: execution, lock, validate, commit).
 * The shared stages are below; a protocol module may {@linkplain #define define} its own. Each stage has an
 * {@link #index()} (its slot in {@link Txn#stageNanos()}, in the order stages were defined) and a position that
 * orders reports.
 */
public final class Stage {
    private static final Labels<Stage> DEFINED = new Labels<>("stage");

    /**
     * From the attempt's start to its commit call: the procedure's reads. FORD's execution-phase CAS locks are
     * {@link #LOCK} time ({@code StageClock#within}), so lock stages compare across protocols (Scythe Fig. 26).
     */
    public static final Stage EXECUTE = define("execute", 100);
    /** Waiting for the commit timestamp: TSO group or the physical clock's uncertainty. */
    public static final Stage TIMESTAMP = define("timestamp", 200);
    /**
     * Locking the write set at commit (Takeout Lock RPCs and their queueing, or CASes), and creating the inserted keys
     * on their memory nodes, locked (the INSERT RPCs: an insert is the lock of a key that does not exist yet).
     */
    public static final Stage LOCK = define("lock", 300);
    /** Re-reading what was read to validate it. */
    public static final Stage VALIDATE = define("validate", 400);
    /** Writing the redo record that decides the commit (one WRITE to a log region). */
    public static final Stage LOG = define("log", 500);
    /** Writing values, versions and releases back. */
    public static final Stage WRITE_BACK = define("write-back", 600);

    private final String label;
    private final int index;

    private Stage(final String label, final int index) {
        this.label = label;
        this.index = index;
    }

    /**
     * A new stage labelled {@code label}, reported at {@code position} among the others (the shared ones are at
     * 100, 200, ... 600). Modules define theirs in static fields, so each is defined once.
     *
     * @throws IllegalArgumentException when a stage of that label exists
     */
    public static Stage define(final String label, final int position) {
        return DEFINED.define(label, position, Stage::new);
    }

    /** Every stage defined so far, in report order. */
    public static List<Stage> values() {
        return DEFINED.values(Stage::index);
    }

    /** How many stages are defined: the length a stage array needs. */
    public static int count() {
        return DEFINED.count();
    }

    public String label() {
        return label;
    }

    /** Its slot in a stage array ({@link Txn#stageNanos()}). */
    public int index() {
        return index;
    }

    @Override
    public String toString() {
        return label;
    }
}
