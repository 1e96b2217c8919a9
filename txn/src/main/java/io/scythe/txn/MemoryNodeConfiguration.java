package io.scythe.txn;

import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;

/**
 * Which copies of each partition serve, and which of them is the primary, in one epoch (FaRM's configuration: a new
 * one is made when a memory node's lease expires, with a backup of each partition it was the primary of promoted).
 * Sans-IO and immutable: the cluster keeps the current one in a shared map, CNs apply it to their {@link Catalog}.
 *
 * <p>Copies are numbered as {@link Catalog}'s placement does: copy 0 of partition {@code p} is the primary it was
 * loaded as (on memory node {@code p}), copy {@code b} its backup {@code b} (on memory node {@code (p + b) mod n}).
 * {@link #copies()} lists, per partition, the copies that serve, in order: the first is the primary now, the rest
 * its backups, which every commit writes. A memory node removed ({@link #without}) is in {@link #removed()} for good
 * in this configuration's line until it rejoins: it holds no serving copy, and what it held (locks included) counts
 * for nothing.
 *
 * <p><b>Rejoin.</b> {@link #rejoin} adds a removed node's copies back, as backups at the end of each partition's list:
 * from that epoch on every commit writes them, while a re-replicator ({@code recovery.ReReplicator}) copies what
 * they missed. Until {@link #rejoined} they are in {@link #rejoining()}: written, but no full copy, so never promoted
 * and not counted as one of the k backups ({@link #fullCopies}).
 *
 * @param epoch     0 for the configuration a cluster starts with, one more for each change
 * @param copies    per partition, the serving copies' numbers, primary first (each list non-empty)
 * @param removed   the memory nodes (by partition number) removed and not rejoined
 * <p><b>Terms.</b> {@link #primarySince()} names, per partition, the epoch from which its primary now has served
 * without a break: its term as primary. A copy primary twice (promoted, removed, rejoined as a backup, promoted again;
 * or copy 0 primary again after its replacement rejoined) starts a new term each time, with lock words and Takeout
 * counters started afresh, so a redo record written in an earlier term must not be read against them: recovery
 * compares the record's epoch with the term ({@code recovery.CnRecovery}). Only {@link #without} starts a term (the
 * only change of a primary); {@link #rejoin} and {@link #rejoined} keep them.
 *
 * @param rejoining the memory nodes (by partition number) whose copies serve as backups being re-replicated
 * @param primarySince per partition, the epoch its primary's term began (0: primary since the cluster started)
 */
public record MemoryNodeConfiguration(long epoch, List<List<Integer>> copies, Set<Integer> removed,
                                      Set<Integer> rejoining, List<Long> primarySince) {
    /** A configuration with no node rejoining, every primary's term from epoch 0. */
    public MemoryNodeConfiguration(final long epoch, final List<List<Integer>> copies, final Set<Integer> removed) {
        this(epoch, copies, removed, Set.of());
    }

    /** A configuration whose every primary has served since epoch 0 (the cluster's start). */
    public MemoryNodeConfiguration(final long epoch, final List<List<Integer>> copies, final Set<Integer> removed,
                                   final Set<Integer> rejoining) {
        this(epoch, copies, removed, rejoining, java.util.Collections.nCopies(copies.size(), 0L));
    }

    public MemoryNodeConfiguration {
        if (epoch < 0) {
            throw new IllegalArgumentException("epoch=" + epoch + " must not be negative");
        }
        final List<List<Integer>> frozen = new ArrayList<>(copies.size());
        for (int p = 0; p < copies.size(); p++) {
            final List<Integer> c = copies.get(p);
            if (c.isEmpty()) {
                throw new IllegalArgumentException("partition " + p + " has no serving copy");
            }
            if (new TreeSet<>(c).size() != c.size()) {
                throw new IllegalArgumentException("partition " + p + " names a copy twice: " + c);
            }
            frozen.add(List.copyOf(c));
        }
        copies = List.copyOf(frozen);
        primarySince = List.copyOf(primarySince);
        if (primarySince.size() != copies.size()) {
            throw new IllegalArgumentException("primarySince names " + primarySince.size() + " partitions, copies "
                + copies.size());
        }
        for (final long since : primarySince) {
            if (since < 0 || since > epoch) {
                throw new IllegalArgumentException("primarySince " + primarySince + " must lie in [0, epoch " + epoch
                    + "]");
            }
        }
        removed = Set.copyOf(removed);
        rejoining = Set.copyOf(rejoining);
        for (final int r : rejoining) {
            if (removed.contains(r)) {
                throw new IllegalArgumentException("memory node " + r + " is both removed and rejoining");
            }
        }
    }

    /** The configuration a cluster of {@code nodes} memory nodes with {@code backups} backups starts with. */
    public static MemoryNodeConfiguration initial(final int nodes, final int backups) {
        if (nodes < 1 || backups < 0 || backups >= nodes) {
            throw new IllegalArgumentException("nodes=" + nodes + ", backups=" + backups + ": need nodes >= 1 and "
                + "0 <= backups < nodes");
        }
        final List<List<Integer>> copies = new ArrayList<>(nodes);
        for (int p = 0; p < nodes; p++) {
            final List<Integer> c = new ArrayList<>(backups + 1);
            for (int b = 0; b <= backups; b++) {
                c.add(b);
            }
            copies.add(c);
        }
        return new MemoryNodeConfiguration(0, copies, Set.of());
    }

    /** The memory node (by partition number) holding copy {@code copy} of partition {@code partition}. */
    public int nodeOf(final int partition, final int copy) {
        return Math.floorMod(partition + copy, copies.size());
    }

    /** The copy number of partition {@code partition}'s primary now. */
    public int primaryCopy(final int partition) {
        return copies.get(partition).get(0);
    }

    /** The epoch from which partition {@code partition}'s primary now has served without a break (its term). */
    public long primarySince(final int partition) {
        return primarySince.get(partition);
    }

    /**
     * The next configuration without memory node {@code node} (by partition number): every copy on it stops serving;
     * a partition whose primary it held gets its first serving backup as primary (promoted). This one when the node
     * was removed already.
     *
     * @throws IllegalStateException when a partition would have no serving copy left (its data is lost: every copy
     *     was on removed nodes), naming it
     */
    public MemoryNodeConfiguration without(final int node) {
        final int n = copies.size();
        if (node < 0 || node >= n) {
            throw new IllegalArgumentException("memory node " + node + " is not one of the " + n);
        }
        if (removed.contains(node)) {
            return this;
        }
        final List<List<Integer>> next = new ArrayList<>(n);
        final List<Long> since = new ArrayList<>(primarySince);
        for (int p = 0; p < n; p++) {
            final List<Integer> kept = new ArrayList<>();
            final List<Integer> partial = new ArrayList<>();
            for (final int copy : copies.get(p)) {
                if (nodeOf(p, copy) != node) {
                    (rejoining.contains(nodeOf(p, copy)) ? partial : kept).add(copy);
                }
            }
            // A rejoining copy is never promoted: it may still lack what the re-replicator has not copied yet.
            kept.addAll(partial);
            if (kept.isEmpty() || rejoining.contains(nodeOf(p, kept.get(0)))) {
                throw new IllegalStateException("partition " + p + " has no serving copy left without memory node "
                    + node + " (its copies were on " + copiesOn(p) + (partial.isEmpty() ? "" : "; those rejoining "
                    + "are not re-replicated yet") + "): its data is lost; no configuration can serve it");
            }
            if (!kept.get(0).equals(primaryCopy(p))) {
                since.set(p, epoch + 1); // a backup promoted: a new term, its lock words start afresh
            }
            next.add(kept);
        }
        final Set<Integer> gone = new TreeSet<>(removed);
        gone.add(node);
        final Set<Integer> still = new TreeSet<>(rejoining);
        still.remove(node);
        return new MemoryNodeConfiguration(epoch + 1, next, gone, still, since);
    }

    /**
     * The next configuration with removed memory node {@code node} back (a replacement, or the node restarted): each
     * copy the placement of {@code backups} backups puts on it ({@link #nodeOf}) serves again, as the last backup of
     * its partition, and the node is {@link #rejoining()} until {@link #rejoined}: commits write its copies from this
     * epoch on, the re-replicator copies the rest.
     *
     * @throws IllegalStateException when {@code node} is not removed (naming what it is)
     */
    public MemoryNodeConfiguration rejoin(final int node, final int backups) {
        final int n = copies.size();
        if (node < 0 || node >= n) {
            throw new IllegalArgumentException("memory node " + node + " is not one of the " + n);
        }
        if (backups < 0 || backups >= n) {
            throw new IllegalArgumentException("backups=" + backups + ": need 0 <= backups < " + n);
        }
        if (!removed.contains(node)) {
            throw new IllegalStateException("memory node " + node + " cannot rejoin: it was not removed"
                + (rejoining.contains(node) ? " (it is rejoining already)" : " (it serves)"));
        }
        final List<List<Integer>> next = new ArrayList<>(n);
        for (int p = 0; p < n; p++) {
            final List<Integer> c = new ArrayList<>(copies.get(p));
            for (int copy = 0; copy <= backups; copy++) {
                if (nodeOf(p, copy) == node && !c.contains(copy)) {
                    c.add(copy);
                }
            }
            next.add(c);
        }
        final Set<Integer> gone = new TreeSet<>(removed);
        gone.remove(node);
        final Set<Integer> back = new TreeSet<>(rejoining);
        back.add(node);
        return new MemoryNodeConfiguration(epoch + 1, next, gone, back, primarySince);
    }

    /**
     * The next configuration with rejoining memory node {@code node}'s copies counted as full copies: its
     * re-replication finished. This one when it is not rejoining (it finished already, or was removed again).
     */
    public MemoryNodeConfiguration rejoined(final int node) {
        if (!rejoining.contains(node)) {
            return this;
        }
        final Set<Integer> back = new TreeSet<>(rejoining);
        back.remove(node);
        return new MemoryNodeConfiguration(epoch + 1, copies, removed, back, primarySince);
    }

    /** Partition {@code partition}'s serving copies that are full copies (not rejoining), primary first. */
    public int fullCopies(final int partition) {
        int full = 0;
        for (final int copy : copies.get(partition)) {
            full += rejoining.contains(nodeOf(partition, copy)) ? 0 : 1;
        }
        return full;
    }

    /** Partitions whose primary differs between this configuration and {@code older}. */
    public List<Integer> promotedSince(final MemoryNodeConfiguration older) {
        final List<Integer> moved = new ArrayList<>();
        for (int p = 0; p < copies.size(); p++) {
            if (older.primaryCopy(p) != primaryCopy(p)) {
                moved.add(p);
            }
        }
        return moved;
    }

    private List<Integer> copiesOn(final int partition) {
        final List<Integer> nodes = new ArrayList<>();
        for (final int copy : copies.get(partition)) {
            nodes.add(nodeOf(partition, copy));
        }
        return nodes;
    }

    /** One line: the epoch and each partition's serving copies as memory nodes, primary first. */
    public String describe(final List<String> nodeNames) {
        final StringBuilder s = new StringBuilder("epoch ").append(epoch).append(':');
        for (int p = 0; p < copies.size(); p++) {
            s.append(" p").append(p).append('=');
            final List<Integer> on = copiesOn(p);
            for (int i = 0; i < on.size(); i++) {
                s.append(i == 0 ? "" : ",").append(nodeNames.get(on.get(i)));
            }
        }
        if (!removed.isEmpty()) {
            s.append(" removed=");
            final List<String> names = new ArrayList<>();
            for (final int r : new TreeSet<>(removed)) {
                names.add(nodeNames.get(r));
            }
            s.append(names);
        }
        if (!rejoining.isEmpty()) {
            final List<String> names = new ArrayList<>();
            for (final int r : new TreeSet<>(rejoining)) {
                names.add(nodeNames.get(r));
            }
            s.append(" rejoining=").append(names);
        }
        return s.toString();
    }
}
