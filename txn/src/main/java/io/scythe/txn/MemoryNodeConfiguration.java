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
 * in this configuration's line: it holds no serving copy, and what it held (locks included) counts for nothing.
 *
 * @param epoch   0 for the configuration a cluster starts with, one more for each change
 * @param copies  per partition, the serving copies' numbers, primary first (each list non-empty)
 * @param removed the memory nodes (by partition number) removed so far
 */
public record MemoryNodeConfiguration(long epoch, List<List<Integer>> copies, Set<Integer> removed) {
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
        removed = Set.copyOf(removed);
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
        for (int p = 0; p < n; p++) {
            final List<Integer> kept = new ArrayList<>();
            for (final int copy : copies.get(p)) {
                if (nodeOf(p, copy) != node) {
                    kept.add(copy);
                }
            }
            if (kept.isEmpty()) {
                throw new IllegalStateException("partition " + p + " has no serving copy left without memory node "
                    + node + " (its copies were on " + copiesOn(p) + "): its data is lost; no configuration can "
                    + "serve it");
            }
            next.add(kept);
        }
        final Set<Integer> gone = new TreeSet<>(removed);
        gone.add(node);
        return new MemoryNodeConfiguration(epoch + 1, next, gone);
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
        return s.toString();
    }
}
