package io.scythe.txn;

/** The stages of a committed attempt, as the papers break latency down (DESIGN.md: execution, lock, validate, commit). */
public enum Stage {
    /** From the attempt's start to its commit call: the procedure's reads (and FORD's execution-phase locks). */
    EXECUTE("execute"),
    /** Waiting for the commit timestamp: TSO group or the physical clock's uncertainty. */
    TIMESTAMP("timestamp"),
    /**
     * Locking the write set at commit (Takeout Lock RPCs and their queueing, or CASes), and creating the inserted keys
     * on their memory nodes, locked (the INSERT RPCs: an insert is the lock of a key that does not exist yet).
     */
    LOCK("lock"),
    /** Re-reading what was read to validate it. */
    VALIDATE("validate"),
    /** Writing the redo record that decides the commit (one WRITE to a log region). */
    LOG("log"),
    /** Writing values, versions and releases back. */
    WRITE_BACK("write-back");

    private final String label;

    Stage(final String label) {
        this.label = label;
    }

    public String label() {
        return label;
    }
}
