package io.scythe.storage;

import org.agrona.concurrent.AtomicBuffer;

import java.util.ArrayList;
import java.util.List;

/**
 * How the backup copies of a table partition are named on a memory node. With k backups per partition (replication,
 * {@code txn.Catalog}), a memory node holds its own partition of every table (the primary, under the table's own
 * name and id) and backup {@code b} (1..k) of the partitions of the b-th memory node before it, as a table of its
 * own ({@link #backupNode}): id {@code id + b * }{@value #ID_STRIDE}, name {@code name.backup<b>}. So one LogDB, one RPC server and one
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

    /** The memory node of backup {@code backup} (1..) of partition {@code partition} of {@code nodes} memory nodes. */
    public static int backupNode(final int partition, final int backup, final int nodes) {
        return (partition + backup) % nodes;
    }

    /**
     * Checks {@code backups} (k) for a cluster of {@code nodes} memory nodes: every copy of a partition on its own
     * node, so k is below the number of nodes.
     *
     * @throws IllegalArgumentException naming what k may be
     */
    public static void check(final int backups, final int nodes) {
        if (backups < 0 || backups > MAX_BACKUPS || backups > 0 && backups >= nodes) {
            throw new IllegalArgumentException("replicas=" + backups + " backups per partition must be within [0, "
                + Math.min(MAX_BACKUPS, nodes - 1) + "] with " + nodes + " memory node(s): each copy of a partition "
                + "needs a memory node of its own");
        }
    }

    /**
     * Gives every partition {@code backups} backup copies: the primary tables of {@code nodes.get(p)} copied, object
     * by object ({@link Table#copyObject}), into backup b (1..k) on {@code nodes.get(backupNode(p, b, n))}. Call once,
     * after the loaders filled the primaries and before any transaction runs.
     *
     * @throws IllegalArgumentException for a k the cluster cannot hold ({@link #check})
     * @throws IllegalStateException when a copy does not fit
     */
    public static void replicate(final List<LogDb> nodes, final int backups) {
        check(backups, nodes.size());
        final int n = nodes.size();
        for (int p = 0; p < n; p++) {
            final List<Table> primaries = nodes.get(p).tables().stream().filter(t -> backupOf(t.schema()) == 0)
                .toList();
            for (int b = 1; b <= backups; b++) {
                final int backup = b;
                final LogDb view = nodes.get(backupNode(p, b, n)).backupView(b);
                for (final Table primary : primaries) {
                    final Table copy = view.create(primary.schema());
                    primary.forEachKey((key, pointer) -> {
                        final long made = copy.copyObject(key, primary, pointer);
                        if (made < 0) {
                            throw new IllegalStateException("copy of key " + key + " of " + primary.schema().name()
                                + " to backup " + backup + " failed: status " + made);
                        }
                    });
                }
            }
        }
    }

    /**
     * What differs between each partition's primary and its {@code backups} copies ({@link #replicate}'s placement),
     * as one line per difference (empty: identical). Per key of the primary: the backup has it, with the same
     * version, flags, value length and value bytes (lock words and version-log links are the primary's own and not
     * compared). A primary's object the memory node's CPU deleted and will reclaim (an abandoned insert) never
     * committed and is skipped; a key only a backup has must read as deleted there (a placeholder whose insert was
     * abandoned, or one the primary reclaimed). Call when no transaction runs.
     */
    public static List<String> compare(final List<LogDb> nodes, final int backups) {
        return compare(nodes, backups, node -> false);
    }

    /**
     * As {@link #compare(List, int)}, after memory-node failover: copies on the nodes {@code removed} names are no
     * copies any more (their node died); each partition's first copy on a live node (its primary, or the backup
     * promoted) is compared with its other live copies.
     */
    public static List<String> compare(final List<LogDb> nodes, final int backups,
                                       final java.util.function.IntPredicate removed) {
        final List<String> differences = new ArrayList<>();
        final int n = nodes.size();
        for (int p = 0; p < n; p++) {
            for (final Table primary : nodes.get(p).tables()) {
                if (backupOf(primary.schema()) != 0) {
                    continue;
                }
                final String name = primary.schema().name();
                Table serving = null;
                String servingWhere = null;
                for (int b = 0; b <= backups; b++) {
                    final int node = b == 0 ? p : backupNode(p, b, n);
                    if (removed.test(node)) {
                        continue;
                    }
                    final Table copy = b == 0 ? primary : nodes.get(node).backupView(b).table(name);
                    final String where = (b == 0 ? "primary" : "backup " + b) + " on node " + node;
                    if (copy == null) {
                        differences.add(name + " of mn" + p + ": no " + where);
                    } else if (serving == null) {
                        serving = copy;
                        servingWhere = where;
                    } else {
                        compare(serving, copy, servingWhere.startsWith("primary") ? where
                            : where + " (against the " + servingWhere + ")", differences);
                    }
                }
            }
        }
        return differences;
    }

    private static void compare(final Table primary, final Table copy, final String where,
                                final List<String> differences) {
        final String name = primary.schema().name();
        primary.forEachKey((key, pointer) -> {
            if (primary.awaitsReclamation(pointer)) {
                return;
            }
            final long there = copy.lookup(key);
            if (there == 0) {
                differences.add(name + " key " + key + ": missing on " + where);
                return;
            }
            final String differs = differs(primary.objectMemory(), primary.offsetOf(pointer), copy.objectMemory(),
                copy.offsetOf(there));
            if (differs != null) {
                differences.add(name + " key " + key + ": " + differs + " on " + where);
            }
        });
        copy.forEachKey((key, pointer) -> {
            final int at = copy.offsetOf(pointer);
            if (primary.lookup(key) == 0 && (copy.objectMemory().getShort(at + ObjectLayout.FLAGS_OFFSET)
                & ObjectLayout.FLAG_DELETED) == 0) {
                differences.add(name + " key " + key + ": live on " + where + ", absent on the primary");
            }
        });
    }

    /** How the object at {@code a} of {@code am} differs from the one at {@code b} of {@code bm}, or null. */
    private static String differs(final AtomicBuffer am, final int a, final AtomicBuffer bm, final int b) {
        if (a < 0 || b < 0) {
            return "stale pointer";
        }
        final long versionA = am.getLongVolatile(a + ObjectLayout.VERSION_OFFSET);
        final long versionB = bm.getLongVolatile(b + ObjectLayout.VERSION_OFFSET);
        if (versionA != versionB) {
            return "version " + versionA + " vs " + versionB;
        }
        final short flagsA = am.getShort(a + ObjectLayout.FLAGS_OFFSET);
        final short flagsB = bm.getShort(b + ObjectLayout.FLAGS_OFFSET);
        if (flagsA != flagsB) {
            return "flags " + flagsA + " vs " + flagsB;
        }
        final int length = am.getInt(a + ObjectLayout.VALUE_LENGTH_OFFSET);
        if (length != bm.getInt(b + ObjectLayout.VALUE_LENGTH_OFFSET)) {
            return "value length " + length + " vs " + bm.getInt(b + ObjectLayout.VALUE_LENGTH_OFFSET);
        }
        for (int i = 0; i < length; i++) {
            if (am.getByte(a + ObjectLayout.VALUE_OFFSET + i) != bm.getByte(b + ObjectLayout.VALUE_OFFSET + i)) {
                return "value byte " + i;
            }
        }
        return null;
    }

    /**
     * A digest of {@code table}'s committed objects, to compare copies held by different processes (a cluster's
     * memory nodes): {@code [objects, digest]}, the digest a sum (so independent of where each object sits) of a hash
     * of each live object's key, version, flags, value length and value bytes, as {@link #compare} compares them. A
     * primary's object awaiting reclamation and any object marked deleted count as absent, as there. Call when no
     * transaction runs.
     */
    public static long[] digest(final Table table) {
        final long[] sum = new long[2];
        final AtomicBuffer m = table.objectMemory();
        table.forEachKey((key, pointer) -> {
            final int at = table.offsetOf(pointer);
            if (at < 0 || table.awaitsReclamation(pointer)
                || (m.getShort(at + ObjectLayout.FLAGS_OFFSET) & ObjectLayout.FLAG_DELETED) != 0) {
                return;
            }
            long h = mix(key);
            h = mix(h ^ m.getLongVolatile(at + ObjectLayout.VERSION_OFFSET));
            h = mix(h ^ m.getShort(at + ObjectLayout.FLAGS_OFFSET));
            final int length = m.getInt(at + ObjectLayout.VALUE_LENGTH_OFFSET);
            h = mix(h ^ length);
            for (int i = 0; i < length; i++) {
                h = mix(h ^ m.getByte(at + ObjectLayout.VALUE_OFFSET + i));
            }
            sum[0]++;
            sum[1] += h;
        });
        return sum;
    }

    /** SplitMix64's finaliser. */
    private static long mix(final long x) {
        long z = x + 0x9E3779B97F4A7C15L;
        z = (z ^ (z >>> 30)) * 0xBF58476D1CE4E5B9L;
        z = (z ^ (z >>> 27)) * 0x94D049BB133111EBL;
        return z ^ (z >>> 31);
    }
}
