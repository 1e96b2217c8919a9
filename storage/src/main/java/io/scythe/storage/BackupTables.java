package io.scythe.storage;

/**
 * How the backup copies of a table partition are named on a memory node. With k backups per partition (replication,
 * {@code txn.Catalog}), a memory node holds its own partition of every table (the primary, under the table's own
 * name and id) and backup {@code b} (1..k) of the partitions of the b-th memory node before it, as a table of its
 * own: id {@code id + b * }{@value #ID_STRIDE}, name {@code name.backup<b>}. So one LogDB, one RPC server and one
 * set of probes serve primaries and backups alike, and a compute node tells them apart from the descriptors a memory
 * node publishes.
 *
 * <p>A backup is written only one-sided, by the write-backs of the transactions that hold the primary's lock (and by
 * recovery finishing them): it has no locks and no version log of its own, and its objects are never reclaimed, so a
 * compute node may cache their pointers for good.
 */
public final class BackupTables {
    /** Backup numbers go up to this (k at most this). */
    public static final int MAX_BACKUPS = 15;
    /** Backup {@code b} of table id {@code id} has id {@code id + b * ID_STRIDE}; primaries' ids stay below it. */
    public static final int ID_STRIDE = 0x1000;
    private static final String SUFFIX = ".backup";

    private BackupTables() {
    }

    /**
     * The schema of backup {@code backup} (1..{@link #MAX_BACKUPS}) of {@code primary}: same values and capacity, its
     * own id and name, no version log (nothing but one-sided write-backs writes it).
     *
     * @throws IllegalArgumentException when the primary's id leaves no room for backup ids, or {@code backup} is out
     *     of range
     */
    public static TableSchema schemaOf(final TableSchema primary, final int backup) {
        if (backup < 1 || backup > MAX_BACKUPS) {
            throw new IllegalArgumentException("backup=" + backup + " must be within [1, " + MAX_BACKUPS + "]");
        }
        if (primary.id() >= ID_STRIDE || backupOf(primary) != 0) {
            throw new IllegalArgumentException("table " + primary.name() + " (id " + primary.id() + "): a replicated "
                + "table needs an id below " + ID_STRIDE + " and a name not ending in " + SUFFIX + "<n>");
        }
        return new TableSchema(primary.id() + backup * ID_STRIDE, nameOf(primary.name(), backup),
            primary.maxValueBytes(), primary.fixedSize(), primary.capacity(), primary.index(), 0, primary.readOnly());
    }

    /** The name of backup {@code backup} of the table called {@code primaryName}. */
    public static String nameOf(final String primaryName, final int backup) {
        return primaryName + SUFFIX + backup;
    }

    /** Which backup {@code schema} is (1..), or 0 for a primary (any table not named and numbered as a backup). */
    public static int backupOf(final TableSchema schema) {
        final String name = schema.name();
        final int at = name.lastIndexOf(SUFFIX);
        if (at <= 0 || at + SUFFIX.length() == name.length()) {
            return 0;
        }
        int backup = 0;
        for (int i = at + SUFFIX.length(); i < name.length(); i++) {
            final char c = name.charAt(i);
            if (c < '0' || c > '9' || backup > MAX_BACKUPS) {
                return 0;
            }
            backup = backup * 10 + (c - '0');
        }
        return backup >= 1 && backup <= MAX_BACKUPS && schema.id() / ID_STRIDE == backup ? backup : 0;
    }

    /** The name of the primary whose backup {@code schema} is ({@code schema}'s own name for a primary). */
    public static String primaryName(final TableSchema schema) {
        final int backup = backupOf(schema);
        return backup == 0 ? schema.name() : schema.name().substring(0, schema.name().length()
            - SUFFIX.length() - Integer.toString(backup).length());
    }
}
