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

    /** A table, its partitions and which of them holds a key. */
    public record Table(String name, List<Partition> partitions, Placement placement) {
        public Table {
            if (partitions.isEmpty()) {
                throw new IllegalArgumentException("table " + name + " has no partition");
            }
            partitions = List.copyOf(partitions);
            java.util.Objects.requireNonNull(placement, "placement");
        }

        /** A table placed {@code key mod partitions} ({@link Placement#MOD}). */
        public Table(final String name, final List<Partition> partitions) {
            this(name, partitions, Placement.MOD);
        }

        public Partition partitionOf(final long key) {
            return partitions.get(placement == Placement.MOD ? (int) Long.remainderUnsigned(key, partitions.size())
                : placement.partitionOf(name, key, partitions.size()));
        }
    }

    private final Map<String, Table> tables = new ConcurrentHashMap<>();
    /** Every table as it was added (the placement it was loaded with: configuration epoch 0). */
    private final Map<String, Table> loaded = new ConcurrentHashMap<>();
    /** The memory-node configuration applied last ({@link #reconfigure}); null: none, the tables as loaded. */
    private volatile MemoryNodeConfiguration configuration;
    /** The memory nodes the configuration removed: what they held serves no more. */
    private volatile java.util.Set<String> removed = java.util.Set.of();
    /**
     * Partitions (as they serve now) whose primary was promoted and whose in-flight commits are not settled yet
     * ({@link #settled}): blocked for reads, locks and inserts, as FaRM blocks a promoted region during recovery.
     */
    private volatile java.util.Set<Partition> blocked = java.util.Set.of();
    /** {@link #servePromotedAtOnce}: no partition is ever blocked. */
    private volatile boolean promotedServeAtOnce;
    /** The epoch that blocked partitions last; {@link #settled} of it (or later) unblocks them. */
    private volatile long blockedBy;
    /** Per memory node, how many times a new process's tables replaced its copies ({@link #incarnationOf}). */
    private final Map<String, Integer> incarnations = new ConcurrentHashMap<>();
    /** Commits past their point of no return, by the epoch they began in ({@link #decided}, {@link #finished}). */
    private final Map<Long, java.util.concurrent.atomic.LongAdder> decided = new ConcurrentHashMap<>();

    /**
     * Places every table by {@code placement} from now on (a workload that homes its data: the loader must have put
     * every key where {@code placement} says). Before any reconfiguration only.
     */
    public synchronized Catalog placement(final Placement placement) {
        if (configuration != null) {
            throw new IllegalStateException("the placement is set before any memory-node reconfiguration");
        }
        for (final Table t : List.copyOf(loaded.values())) {
            final Table placed = new Table(t.name(), t.partitions(), placement);
            loaded.put(t.name(), placed);
            tables.put(t.name(), placed);
        }
        return this;
    }

    public Catalog add(final String name, final List<Partition> partitions) {
        final Table table = new Table(name, partitions);
        if (tables.putIfAbsent(name, table) != null) {
            throw new IllegalArgumentException("table " + name + " is already in the catalog");
        }
        loaded.put(name, table);
        return this;
    }

    /** The epoch of the memory-node configuration applied last; 0 for the tables as loaded. */
    public long epoch() {
        final MemoryNodeConfiguration c = configuration;
        return c == null ? 0 : c.epoch();
    }

    /** The configuration applied last, or {@code null} when none was (the tables serve as loaded). */
    public MemoryNodeConfiguration configuration() {
        return configuration;
    }

    /** Whether the configuration removed memory node {@code node}: nothing on it serves (its locks count for nothing). */
    public boolean removed(final String node) {
        return removed.contains(node);
    }

    /**
     * Applies memory-node configuration {@code next} (MN failover): each table's partition {@code p} gets, as primary
     * and backups, the copies {@code next} lists for it (a backup promoted where the primary's node was removed).
     * Every loop sees the new partitions from its next lookup; an attempt holding the old ones aborts before its point
     * of no return ({@code onesided.RedoStep}). Ignored (false) unless {@code next} is newer than what was applied.
     *
     * @throws IllegalArgumentException when {@code next} does not fit the tables (partitions, copies held)
     */
    public synchronized boolean reconfigure(final MemoryNodeConfiguration next) {
        return reconfigure(next, node -> null);
    }

    /**
     * {@link #reconfigure(MemoryNodeConfiguration)}, first taking for each memory node that the configuration applied
     * removed and {@code next} has back (a replacement process rejoining, {@link MemoryNodeConfiguration#rejoin}) the
     * tables {@code replacement} gives for it (its new regions: every copy it holds, primaries and backups, by name),
     * unless that gives {@code null} (the same tables as before). Its {@link #incarnationOf} then goes up, so what a
     * loop cached of the node's old life (a redo log region) is opened anew.
     *
     * <p>{@code replacement} runs under the catalog's lock, which {@link #settled} (an event loop) takes too: it must
     * not block (read the published tables before, as {@code ScytheNode} does, review 41).
     *
     * @throws IllegalArgumentException when the replacement lacks a copy the catalog places on the node
     */
    public synchronized boolean reconfigure(final MemoryNodeConfiguration next,
                                            final java.util.function.Function<String, Collection<TableDescriptor>>
                                                replacement) {
        if (next.epoch() <= epoch()) {
            return false;
        }
        // All or nothing (review, stop 40): a configuration that does not fit, or a replacement whose tables do
        // not, leaves the tables and the nodes' incarnations as they were.
        final Map<String, Table> loadedBefore = new LinkedHashMap<>(loaded);
        final List<String> replacedNodes = new ArrayList<>();
        try {
            final MemoryNodeConfiguration applied = configuration;
            if (applied != null) {
                for (final int r : applied.removed()) {
                    if (next.removed().contains(r) || loaded.isEmpty()) {
                        continue;
                    }
                    final String node = loaded.values().iterator().next().partitions().get(r).node();
                    final Collection<TableDescriptor> tablesNow = replacement.apply(node);
                    if (tablesNow != null) {
                        if (replaceNode(node, tablesNow)) {
                            replacedNodes.add(node);
                        }
                    }
                }
            }
            final Map<String, Table> moved = new LinkedHashMap<>();
            final java.util.Set<String> gone = new java.util.TreeSet<>();
            for (final Table t : loaded.values()) {
                final int n = t.partitions().size();
                if (next.copies().size() != n) {
                    throw new IllegalArgumentException("configuration epoch " + next.epoch() + " has "
                        + next.copies().size() + " partitions, table " + t.name() + " " + n);
                }
                final List<Partition> partitions = new ArrayList<>(n);
                for (int p = 0; p < n; p++) {
                    final Partition as = t.partitions().get(p);
                    for (final int copy : next.copies().get(p)) {
                        if (copy > as.backups().size()) {
                            throw new IllegalArgumentException("configuration epoch " + next.epoch() + " names copy "
                                + copy + " of partition " + p + " of table " + t.name() + ", which has "
                                + as.backups().size() + " backup(s)");
                        }
                    }
                    partitions.add(serving(as, next.copies().get(p)));
                }
                moved.put(t.name(), new Table(t.name(), partitions, t.placement()));
                for (final int r : next.removed()) {
                    gone.add(t.partitions().get(r).node());
                }
            }
            final MemoryNodeConfiguration before = configuration;
            final List<Integer> promoted = before == null ? next.promotedSince(initialOf(next)) : next.promotedSince(before);
            final java.util.Set<Partition> blocking = new java.util.HashSet<>();
            if (!promoted.isEmpty() && !promotedServeAtOnce) {
                // Still-blocked partitions stay blocked (as they serve now: a second failover may have moved them again).
                final java.util.Set<Partition> still = blocked;
                for (final Table t : moved.values()) {
                    final Table was = tables.get(t.name());
                    for (int p = 0; p < t.partitions().size(); p++) {
                        if (promoted.contains(p) || was != null && still.contains(was.partitions().get(p))) {
                            blocking.add(t.partitions().get(p));
                        }
                    }
                }
                blockedBy = next.epoch();
            } else {
                blocking.addAll(blocked);
            }
            // A node coming back (a replacement rejoining) is no longer removed before the tables serve it: a loop
            // that finds it in the tables never reads it as removed (review of rcc18, R2). New removals wait for the
            // end (below).
            final java.util.Set<String> stillRemoved = new java.util.TreeSet<>(removed);
            stillRemoved.retainAll(gone);
            removed = java.util.Set.copyOf(stillRemoved);
            // Blocked before the new partitions serve: no lookup finds a promoted copy unblocked.
            blocked = java.util.Set.copyOf(blocking);
            tables.putAll(moved);
            for (final String node : replacedNodes) {
                incarnations.merge(node, 1, Integer::sum); // loops drop their old channels only once it applies
            }
            configuration = next;
            // Published last (issue 18, CI 192): a loop that sees a node removed (RedoStep#finishIfRemoved's
            // removedWithin, polled on the loop while this runs on a worker thread) then finishes a decided commit
            // on the copies serving now (servingOf, table): it must find this configuration and its partitions, not
            // the ones that still name the removed node. Set first, as it was, a poll landing between this write and
            // `configuration` finished the commit on the old copies, connected to the dead node and gave the loop
            // up. The simulator applies a configuration on its one thread, between two steps of the loops, so no
            // loop there ever saw a configuration half applied.
            removed = java.util.Set.copyOf(gone);
            return true;
        } catch (final RuntimeException e) {
            loaded.putAll(loadedBefore); // the same names: each put back as it was
            throw e;
        }
    }

    /**
     * Memory node {@code node}'s copies as loaded, each with its descriptor in {@code tablesNow} (same name); whether
     * any changed (its incarnation then goes up once the configuration applies).
     */
    private boolean replaceNode(final String node, final Collection<TableDescriptor> tablesNow) {
        final Map<String, TableDescriptor> byName = new java.util.HashMap<>();
        for (final TableDescriptor d : tablesNow) {
            byName.put(d.schema().name(), d);
        }
        boolean changed = false;
        for (final Table t : List.copyOf(loaded.values())) {
            final List<Partition> partitions = new ArrayList<>(t.partitions().size());
            for (final Partition as : t.partitions()) {
                TableDescriptor primary = as.descriptor();
                if (as.node().equals(node)) {
                    primary = descriptorNamed(byName, primary, node);
                }
                final List<Replica> backups = new ArrayList<>(as.backups().size());
                for (final Replica r : as.backups()) {
                    backups.add(r.node().equals(node) ? new Replica(node, descriptorNamed(byName, r.descriptor(), node))
                        : r);
                }
                final Partition now = new Partition(as.node(), primary, backups);
                changed |= !now.equals(as);
                partitions.add(now);
            }
            loaded.put(t.name(), new Table(t.name(), partitions, t.placement()));
        }
        return changed;
    }

    private static TableDescriptor descriptorNamed(final Map<String, TableDescriptor> byName,
                                                   final TableDescriptor was, final String node) {
        final TableDescriptor d = byName.get(was.schema().name());
        if (d == null || d.schema().id() != was.schema().id()) {
            throw new IllegalArgumentException("memory node " + node + " rejoined without table "
                + was.schema().name() + " (id " + was.schema().id() + "), which the catalog places there; it holds "
                + byName.keySet());
        }
        return d;
    }

    /**
     * How many times memory node {@code node}'s tables were replaced by those of a new process ({@link
     * #reconfigure(MemoryNodeConfiguration, java.util.function.Function)}); 0 for the tables as loaded.
     */
    public int incarnationOf(final String node) {
        return incarnations.getOrDefault(node, 0);
    }

    /** The configuration a cluster of {@code like}'s shape starts with (every partition's copies in load order). */
    private MemoryNodeConfiguration initialOf(final MemoryNodeConfiguration like) {
        final int backups = loaded.isEmpty() ? 0 : loaded.values().iterator().next().partitions().get(0).backups()
            .size();
        return MemoryNodeConfiguration.initial(like.copies().size(), backups);
    }

    /**
     * Whether {@code partition} (as it serves now) is blocked: its primary was promoted by a configuration whose
     * in-flight commits are not settled yet ({@link #settled}). A transaction must not read, lock or insert there
     * meanwhile: the promoted copy may still lack a decided commit's write-back, which recovery rolls forward.
     */
    public boolean blocked(final Partition partition) {
        final java.util.Set<Partition> b = blocked;
        return !b.isEmpty() && b.contains(partition);
    }

    /** Whether any partition is blocked ({@link #blocked(Partition)}). */
    public boolean settling() {
        return !blocked.isEmpty();
    }

    /**
     * From now on a configuration that promotes a copy blocks nothing: the promoted partitions serve as soon as it is
     * applied (cluster nodes whose module says so, {@code ProtocolModule#clusterPromotedCopiesServeAtOnce}: CALVIN,
     * whose locks are on the compute nodes, so there is no stale writer to fence). Set before any configuration is
     * applied, else a copy promoted before stays blocked until {@link #settled}.
     */
    public void servePromotedAtOnce() {
        promotedServeAtOnce = true;
    }

    /**
     * The commits that were in flight when configuration {@code epoch} was made are settled (finished, or rolled
     * forward onto the promoted copies by recovery, or aborted): the partitions it blocked serve again. Ignored for
     * an epoch older than the one that blocked them last (a later failover blocked more).
     *
     * @return whether it unblocked anything
     */
    public synchronized boolean settled(final long epoch) {
        if (blocked.isEmpty() || epoch < blockedBy) {
            return false;
        }
        blocked = java.util.Set.of();
        return true;
    }

    /** A commit begun in configuration {@code epoch} passed its point of no return (its redo record goes out). */
    public void decided(final long epoch) {
        decided.computeIfAbsent(epoch, e -> new java.util.concurrent.atomic.LongAdder()).increment();
    }

    /** A commit {@link #decided} in {@code epoch} finished its write-back, or gave up to recovery. */
    public void finished(final long epoch) {
        decided.get(epoch).decrement();
    }

    /**
     * Commits past their point of no return, begun in a configuration older than {@code epoch}, still writing back:
     * what a compute node waits out (drains) before it tells that it has nothing in flight from before {@code epoch}.
     */
    public long inFlightBefore(final long epoch) {
        long n = 0;
        for (final Map.Entry<Long, java.util.concurrent.atomic.LongAdder> e : decided.entrySet()) {
            if (e.getKey() < epoch) {
                n += e.getValue().sum();
            }
        }
        return n;
    }

    /**
     * The partition serving now what was loaded as table {@code tableId}'s primary on {@code node} (what a redo entry
     * names: the copy it was written for), with the copy number of its primary now; null when no table was loaded so.
     */
    public Serving servingOf(final String node, final int tableId) {
        for (final Table t : loaded.values()) {
            for (int p = 0; p < t.partitions().size(); p++) {
                final Partition as = t.partitions().get(p);
                if (as.node().equals(node) && as.descriptor().schema().id() == tableId) {
                    final MemoryNodeConfiguration c = configuration;
                    final List<Integer> copies = new ArrayList<>();
                    final long since = c == null ? 0 : c.primarySince(p);
                    if (c == null) {
                        for (int copy = 0; copy <= as.backups().size(); copy++) {
                            copies.add(copy);
                        }
                    } else {
                        copies.addAll(c.copies().get(p));
                    }
                    // The partition from the same configuration as its copy numbers, not from the tables (which a
                    // reconfiguration on another thread replaces before it sets the configuration: the two read apart
                    // could name the copies of one configuration with the partition of the other); the tables' own
                    // object when they agree, as they do but while a reconfiguration is under way.
                    final Partition now = table(t.name()).partitions().get(p);
                    final Partition of = serving(as, copies);
                    return new Serving(now.equals(of) ? now : of, copies, as.backups().size(), since);
                }
            }
        }
        return null;
    }

    /** Loaded partition {@code as} served by its loaded copies {@code copies} (0: its primary), primary first. */
    private static Partition serving(final Partition as, final List<Integer> copies) {
        final List<Replica> replicas = new ArrayList<>(copies.size());
        for (final int copy : copies) {
            replicas.add(copy == 0 ? new Replica(as.node(), as.descriptor()) : as.backups().get(copy - 1));
        }
        return new Partition(replicas.get(0).node(), replicas.get(0).descriptor(),
            replicas.subList(1, replicas.size()));
    }

    /**
     * A partition as it serves now, and which of its loaded copies serve (primary first; copy 0 is the one loaded as
     * primary, copy b its backup b) of the {@code loadedBackups} it was loaded with; {@code primarySince}: the epoch
     * its primary's term began ({@link MemoryNodeConfiguration#primarySince}; 0 without a configuration).
     */
    public record Serving(Partition partition, List<Integer> copies, int loadedBackups, long primarySince) {
        public Serving {
            copies = List.copyOf(copies);
        }

        /** The copy number of the primary now (0: the one loaded as primary). */
        public int primaryCopy() {
            return copies.get(0);
        }

        /**
         * Of {@code loadedBackupPointers} (where an object is on each loaded backup, backup 1 first: what a redo
         * entry names), those on the backups serving now, in {@link Partition#backups()} order.
         */
        public long[] servingBackupPointers(final long[] loadedBackupPointers) {
            final long[] serving = new long[copies.size() - 1];
            for (int i = 1; i < copies.size(); i++) {
                serving[i - 1] = loadedBackupPointers[copies.get(i) - 1];
            }
            return serving;
        }

        /**
         * Where the object of a redo entry is on each copy serving now, primary first, then the backups in
         * {@link Partition#backups()} order: {@code loadedPrimaryPointer} on copy 0, {@code loadedBackupPointers[b - 1]}
         * on copy b. 0 for a copy that did not serve when the entry was written (its pointer was not known then).
         */
        public long[] servingPointers(final long loadedPrimaryPointer, final long[] loadedBackupPointers) {
            final long[] serving = new long[copies.size()];
            for (int i = 0; i < copies.size(); i++) {
                final int copy = copies.get(i);
                serving[i] = copy == 0 ? loadedPrimaryPointer : loadedBackupPointers[copy - 1];
            }
            return serving;
        }
    }

    /**
     * Which loaded partition of table {@code table} the serving partition {@code serving} (of this or an earlier
     * configuration: what an attempt's accesses hold) is, and which loaded copy each of its copies is: what a redo
     * entry names ({@code recovery.RedoLog}). Copies are matched by memory node and descriptor, so the answer does not
     * depend on the configuration applied now.
     *
     * @throws IllegalStateException when {@code serving}'s copies are not copies of one loaded partition of the table
     */
    public LoadedAs loadedAs(final String table, final Partition serving) {
        final Table t = loaded.get(table);
        if (t != null) {
            for (final Partition as : t.partitions()) {
                final int primary = copyOf(as, serving.node(), serving.descriptor());
                if (primary < 0) {
                    continue;
                }
                final int[] copies = new int[1 + serving.backups().size()];
                copies[0] = primary;
                for (int b = 0; b < serving.backups().size(); b++) {
                    final Replica r = serving.backups().get(b);
                    copies[b + 1] = copyOf(as, r.node(), r.descriptor());
                    if (copies[b + 1] < 0) {
                        throw new IllegalStateException("backup " + (b + 1) + " on " + r.node() + " of the partition"
                            + " of table " + table + " served by " + serving.node() + " is no copy of the partition "
                            + "loaded on " + as.node());
                    }
                }
                return new LoadedAs(as, copies);
            }
        }
        throw new IllegalStateException("the partition of table " + table + " served by " + serving.node() + " ("
            + serving.descriptor().schema().name() + ") is no copy of a partition the catalog loaded");
    }

    /** The copy number (0: primary, b: backup b) of {@code loadedAs} held by {@code node} as {@code d}, or -1. */
    private static int copyOf(final Partition loadedAs, final String node, final TableDescriptor d) {
        if (loadedAs.node().equals(node) && loadedAs.descriptor().equals(d)) {
            return 0;
        }
        for (int b = 0; b < loadedAs.backups().size(); b++) {
            final Replica r = loadedAs.backups().get(b);
            if (r.node().equals(node) && r.descriptor().equals(d)) {
                return b + 1;
            }
        }
        return -1;
    }

    /**
     * A serving partition's loaded identity ({@link #loadedAs}): the partition as loaded, and the loaded copy number of
     * each serving copy, primary first ({@code copies[0]}), then its backups in {@link Partition#backups()} order.
     */
    public record LoadedAs(Partition loaded, int[] copies) {
        /**
         * Of the serving copies' pointers ({@code primaryPointer}, then {@code backupPointers} in backup order), the
         * one of loaded copy {@code copy}; 0 when that copy does not serve.
         */
        public long pointerOf(final int copy, final long primaryPointer, final long[] backupPointers) {
            for (int i = 0; i < copies.length; i++) {
                if (copies[i] == copy) {
                    return i == 0 ? primaryPointer : backupPointers[i - 1];
                }
            }
            return 0;
        }
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
