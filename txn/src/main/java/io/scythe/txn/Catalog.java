package io.scythe.txn;

import io.scythe.storage.BackupTables;
import io.scythe.storage.TableDescriptor;

import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Where each table lives: a table is split by key over partitions, one per memory node ({@code key mod n}), each
 * a LogDB table described by its {@link TableDescriptor}. Shared by every loop of a compute node; immutable entries.
 *
 * <p><b>Replica placement.</b> With replication (k backups, {@link #fromMemoryNodes}), partition {@code p} has its
 * primary on memory node {@code p} and backup {@code b} (1..k) on memory node {@code (p + b) mod n}, as the table
 * {@code BackupTables.nameOf(name, b)} there; so every memory node is the primary of one partition and a backup of k
 * others, and k must be below n. Reads, locks, Takeout tickets, index lookups and inserts go to the primary; the
 * write-back and the redo record go to every copy ({@code onesided.WriteSet}, {@code recovery.RedoLog}).
 */
public final class Catalog {
    /** A copy of a partition: the memory node holding it and where its data is there. */
    public record Replica(String node, TableDescriptor descriptor) {
    }

    /**
     * One partition of a table: the memory node holding its primary and where its data is there, and its backup
     * copies in backup order (none without replication).
     */
    public record Partition(String node, TableDescriptor descriptor, List<Replica> backups) {
        public Partition {
            backups = List.copyOf(backups);
        }

        /** A partition without backups. */
        public Partition(final String node, final TableDescriptor descriptor) {
            this(node, descriptor, List.of());
        }
    }

    /** A table and its partitions. */
    public record Table(String name, List<Partition> partitions) {
        public Table {
            if (partitions.isEmpty()) {
                throw new IllegalArgumentException("table " + name + " has no partition");
            }
            partitions = List.copyOf(partitions);
        }

        public Partition partitionOf(final long key) {
            return partitions.get((int) Long.remainderUnsigned(key, partitions.size()));
        }
    }

    private final Map<String, Table> tables = new ConcurrentHashMap<>();

    public Catalog add(final String name, final List<Partition> partitions) {
        if (tables.putIfAbsent(name, new Table(name, partitions)) != null) {
            throw new IllegalArgumentException("table " + name + " is already in the catalog");
        }
        return this;
    }

    /** Every table (recovery walks their partitions). */
    public java.util.Collection<Table> tables() {
        return java.util.List.copyOf(tables.values());
    }

    /** @throws UnknownKeyException for a table not in the catalog */
    public Table table(final String name) {
        final Table t = tables.get(name);
        if (t == null) {
            throw new UnknownKeyException("unknown table '" + name + "'; known: " + tables.keySet());
        }
        return t;
    }

    /** The memory node of backup {@code backup} (1..) of partition {@code partition} of {@code nodes} memory nodes. */
    public static int backupNode(final int partition, final int backup, final int nodes) {
        return BackupTables.backupNode(partition, backup, nodes);
    }

    /**
     * The catalog of what memory nodes {@code nodes} (in partition order) hold, {@code tablesOf} each: every table's
     * primary on every node, and with replication its backups where the placement puts them (see the class comment).
     * The number of backups is what the nodes hold; it must be the same for every partition of every table.
     *
     * @throws IllegalStateException naming the table, node or backup that is missing or misplaced
     */
    public static Catalog fromMemoryNodes(final List<String> nodes,
                                          final Map<String, ? extends Collection<TableDescriptor>> tablesOf) {
        final int n = nodes.size();
        final Map<String, TableDescriptor[]> primaries = new LinkedHashMap<>();
        final Map<String, TableDescriptor[][]> backups = new LinkedHashMap<>();
        int copies = 0;
        for (int node = 0; node < n; node++) {
            final Collection<TableDescriptor> held = tablesOf.get(nodes.get(node));
            for (final TableDescriptor d : held == null ? List.<TableDescriptor>of() : held) {
                final int backup = BackupTables.backupOf(d.schema());
                final String name = BackupTables.primaryName(d.schema());
                if (backup == 0) {
                    primaries.computeIfAbsent(name, x -> new TableDescriptor[n])[node] = d;
                    continue;
                }
                if (backup >= n) {
                    throw new IllegalStateException("memory node " + nodes.get(node) + " holds backup " + backup
                        + " of table " + name + ", but " + n + " memory nodes hold at most " + (n - 1) + " backups");
                }
                copies = Math.max(copies, backup);
                final int partition = Math.floorMod(node - backup, n);
                backups.computeIfAbsent(name, x -> new TableDescriptor[n][BackupTables.MAX_BACKUPS + 1])
                    [partition][backup] = d;
            }
        }
        final Catalog catalog = new Catalog();
        for (final Map.Entry<String, TableDescriptor[]> e : primaries.entrySet()) {
            final String name = e.getKey();
            final List<Partition> partitions = new ArrayList<>(n);
            int found = 0;
            for (final TableDescriptor d : e.getValue()) {
                found += d == null ? 0 : 1;
            }
            if (found != n) {
                throw new IllegalStateException("table " + name + " is on " + found + " of " + n + " memory nodes: the "
                    + "loader must create every table on every node (keys split key mod nodes)");
            }
            final TableDescriptor[][] copiesOf = backups.get(name);
            for (int p = 0; p < n; p++) {
                final List<Replica> replicas = new ArrayList<>(copies);
                for (int b = 1; b <= copies; b++) {
                    final TableDescriptor d = copiesOf == null ? null : copiesOf[p][b];
                    final String holder = nodes.get(backupNode(p, b, n));
                    if (d == null) {
                        throw new IllegalStateException("backup " + b + " of partition " + p + " of table " + name
                            + " is missing: memory node " + holder + " must hold it (" + copies + " backups per "
                            + "partition)");
                    }
                    replicas.add(new Replica(holder, d));
                }
                partitions.add(new Partition(nodes.get(p), e.getValue()[p], replicas));
            }
            catalog.add(name, partitions);
        }
        for (final String name : backups.keySet()) {
            if (!primaries.containsKey(name)) {
                throw new IllegalStateException("memory nodes hold backups of table " + name + " but no primary");
            }
        }
        return catalog;
    }
}
