package io.scythe.storage.mv;

/**
 * Outcomes of multi-version operations, the same on both sides and on the wire ({@link MvRpc}): a non-negative
 * result (a value length, a slot) or one of these codes. Expected outcomes of timestamp ordering are codes, not
 * exceptions; exceptions are for caller bugs.
 */
public final class MvStatus {
    public static final int OK = 0;
    /** The pointer is not an object of this table. */
    public static final int STALE = -1;
    /** No version is visible at the timestamp (the object did not exist yet). */
    public static final int NOT_VISIBLE = -2;
    /** The version a read would return is pending: wait for its commit or rollback (Aurogon) or abort (RCC R2). */
    public static final int PENDING = -3;
    /** Another installer holds the object's latch: try again. */
    public static final int LATCHED = -4;
    /** A read at or above the install's timestamp already happened ({@code ts <= rts}). */
    public static final int TOO_LATE = -5;
    /** A committed version at or above the install's timestamp exists. */
    public static final int SUPERSEDED = -6;
    /** A pending or committed version with the same timestamp exists. */
    public static final int DUPLICATE = -7;
    /** An exclusive install found another pending version (RCC MVCC's W2: one writer at a time). */
    public static final int PENDING_EXISTS = -8;
    /** No free inline slot and none can be moved out (the oldest is pending, or the only committed one). */
    public static final int FULL = -9;
    /** The version log has no room for a version moved out of its slot (reclamation is behind). */
    public static final int VERSION_SPACE_FULL = -10;
    /** Commit or rollback of a slot that is not that pending version (already decided, or never installed). */
    public static final int NOT_PENDING = -11;
    /** A value longer than the table's maximum, of the wrong size for a fixed-size table, or missing at commit. */
    public static final int BAD_LENGTH = -12;

    private MvStatus() {
    }

    /** A readable name of {@code status}: {@code OK}, a length or slot, or the code's name. */
    public static String name(final int status) {
        switch (status) {
            case OK: return "OK";
            case STALE: return "STALE";
            case NOT_VISIBLE: return "NOT_VISIBLE";
            case PENDING: return "PENDING";
            case LATCHED: return "LATCHED";
            case TOO_LATE: return "TOO_LATE";
            case SUPERSEDED: return "SUPERSEDED";
            case DUPLICATE: return "DUPLICATE";
            case PENDING_EXISTS: return "PENDING_EXISTS";
            case FULL: return "FULL";
            case VERSION_SPACE_FULL: return "VERSION_SPACE_FULL";
            case NOT_PENDING: return "NOT_PENDING";
            case BAD_LENGTH: return "BAD_LENGTH";
            default: return status > 0 ? Integer.toString(status) : "UNKNOWN(" + status + ")";
        }
    }
}
