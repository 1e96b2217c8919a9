package io.scythe.txn.rcc.calvin;

import io.scythe.txn.rcc.calvin.CalvinWire.Decl;
import io.scythe.txn.rcc.calvin.CalvinWire.Key;
import io.scythe.txn.rcc.calvin.CalvinWire.Write;

import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;

/**
 * Issue 18 part 5's rules for taking over a dead partition owner, sans-IO, wired by {@link CalvinNode} (one owner's
 * death per run, any number of other deaths, {@link #secondDeathRefusal}; with more than 2 compute
 * nodes the other survivors route to the successor and contribute to its
 * input): which survivor takes the dead node's partitions over ({@link #successor}, and {@link #owner} for a key's home), the successor's input from before the death in the
 * total order ({@link #input}), and whether a write decided for one of them is already installed there, read under
 * the new owner's lock ({@link #installed}).
 * What the wiring does, and what it still lacks, is in the package doc.
 */
final class Takeover {
    private Takeover() {
    }

    /**
     * The survivor that takes over node {@code dead}'s partitions among {@code nodes} nodes of which {@code deadNodes}
     * died ({@code dead} among them or not): the first live node after it in index order, wrapping. A function of the
     * dead set only, so every survivor that knows the same deaths names the same node, and a successor that dies in
     * turn hands them on to the next (its own partitions with them).
     */
    static int successor(final int dead, final Set<Integer> deadNodes, final int nodes) {
        if (dead < 0 || dead >= nodes) {
            throw new IllegalArgumentException("CALVIN node " + dead + " of " + nodes);
        }
        for (int step = 1; step < nodes; step++) {
            final int next = (dead + step) % nodes;
            if (next != dead && !deadNodes.contains(next)) {
                return next;
            }
        }
        throw new IllegalStateException("CALVIN node " + dead + " died with no live node to take its partitions over");
    }

    /**
     * The live node that schedules node {@code home}'s partitions (a key's home is its partition's index modulo the
     * nodes, {@link CalvinNode#owner}) once the nodes {@code deadNodes} died: {@code home} itself while it lives, else
     * its {@link #successor}, which skips every dead node; so a successor's death hands both its own partitions and
     * those it took over to the same next node. Part 5's wiring (4): the owner function for transactions declared
     * after the death.
     */
    static int owner(final int home, final Set<Integer> deadNodes, final int nodes) {
        return deadNodes.contains(home) ? successor(home, deadNodes, nodes) : home;
    }

    /**
     * Why the death of node {@code dead} is not taken over, or null: it is. {@code gone} are the nodes that died or are
     * dying before it (their logs read or being read), {@code owners} the nodes owning a partition. A node that
     * schedules partitions (it owns one, or it is the {@link #successor} of a dead owner, running its second
     * scheduler) may die while no owner has died; any other node (one that only sequences and executes) may die at
     * any time, before, during or after an owner's take-over, as often as nodes are left. Not built: a second death
     * of a scheduling node (an owner after an owner, or the successor of a dead owner): the successor of a successor
     * would rebuild two schedulers' queues, one of them lost with a survivor's second scheduler.
     */
    static String secondDeathRefusal(final int dead, final Set<Integer> gone, final Set<Integer> owners,
                                     final int nodes) {
        Integer ownerGone = null;
        for (final int g : gone) {
            if (owners.contains(g)) {
                ownerGone = g;
                break;
            }
        }
        if (ownerGone == null) {
            return null;
        }
        if (owners.contains(dead)) {
            return "it owns partitions and node " + ownerGone + ", an owner, died before it: the take-over of a second "
                + "owner is not built (issue 18 part 5)";
        }
        if (successor(ownerGone, gone, nodes) == dead) {
            return "it took over (or takes over) dead owner " + ownerGone + "'s partitions: the successor of a "
                + "successor is not built (issue 18 part 5)";
        }
        return null;
    }

    /**
     * The part at node {@code home} of dead executor decision {@code d}, as a successor schedules it: its keys
     * written there locked exclusive (null: it writes nothing there).
     */
    static Decl decided(final int home, final CalvinInputLog.Decision d) {
        final List<Write> writes = d.writes().getOrDefault(home, List.of());
        if (writes.isEmpty()) {
            return null;
        }
        final List<Key> keys = new ArrayList<>(writes.size());
        final List<Boolean> exclusive = new ArrayList<>(writes.size());
        for (final Write w : writes) {
            keys.add(w.key());
            exclusive.add(Boolean.TRUE);
        }
        return new Decl(d.id(), d.from(), keys, exclusive);
    }

    /** A transaction of a dead owner's partitions still to schedule at its successor, at its place in the order. */
    record Pending(long orderTs, Decl decl) {
    }

    /**
     * The input of the successor's second scheduler for dead owner {@code dead}'s partitions from before the death
     * (part 5's wiring (2)), in the total order: the transactions the dead owner had not finished, which only it
     * received (each sequencer dispatched it only its part), rebuilt from who still knows them:
     * <ul>
     *   <li>{@code live}: what live executors (every survivor's, each contributing its own) still wait for from {@code dead} ({@code CalvinTxn#declFor} of it, at
     *       the transaction's order timestamp): not yet forwarded, or forwarded and active, waiting for or sending its
     *       writes; taken as declared (the successor locks the same keys in the same modes).</li>
     *   <li>{@code decisions}: dead executors' decision records ({@link CalvinInputLog.Decision}: a dead executor's
     *       transaction not decided wrote nothing anywhere and is not rescheduled); each with writes at {@code dead}
     *       becomes a transaction locking exactly its written keys exclusive, at its commit timestamp (its order
     *       timestamp), whose writes the successor applies where {@link #installed} says they are not.</li>
     * </ul>
     * A decision of a transaction also in {@code live} at the same order timestamp (its commit timestamp) goes in
     * once, as contributed: its executor contributed it, then died too (a node that only executes may die during the
     * take-over). Fails when one transaction comes twice otherwise (by id, also one id at two order timestamps, or by
     * order timestamp): the callers mixed up their sources.
     */
    static List<Pending> input(final int dead, final Collection<Pending> live,
                               final Collection<CalvinInputLog.Decision> decisions) {
        final TreeMap<Long, Decl> byOrder = new TreeMap<>();
        final Set<Long> ids = new java.util.HashSet<>();
        for (final Pending p : live) {
            if (p.decl().keys().isEmpty()) {
                continue; // nothing of it at the dead owner
            }
            add(byOrder, ids, p.orderTs(), p.decl());
        }
        final Map<Long, Long> contributed = new java.util.HashMap<>(); // id -> order timestamp contributed
        for (final Map.Entry<Long, Decl> e : byOrder.entrySet()) {
            contributed.put(e.getValue().id(), e.getKey());
        }
        for (final CalvinInputLog.Decision d : decisions) {
            final Decl decl = decided(dead, d);
            if (decl == null) {
                continue;
            }
            final Long contributedAt = contributed.get(d.id());
            if (contributedAt != null && contributedAt == d.commitTs()) {
                continue; // its executor contributed it live, then died too: its declared keys cover its writes
            } // same id at another place in the order: add fails below, the sources are mixed up
            add(byOrder, ids, d.commitTs(), decl);
        }
        final List<Pending> out = new ArrayList<>(byOrder.size());
        for (final Map.Entry<Long, Decl> e : byOrder.entrySet()) {
            out.add(new Pending(e.getKey(), e.getValue()));
        }
        return out;
    }

    private static void add(final TreeMap<Long, Decl> byOrder, final Set<Long> ids, final long orderTs,
                            final Decl decl) {
        if (!ids.add(decl.id()) || byOrder.putIfAbsent(orderTs, decl) != null) {
            throw new IllegalStateException("CALVIN transaction " + Long.toHexString(decl.id()) + " at order "
                + Long.toHexString(orderTs) + " comes twice into a dead owner's take-over");
        }
    }

    /**
     * Whether a write a transaction decided at commit timestamp {@code commitTs} (its order timestamp,
     * {@link CalvinProtocol#orderTs}) is installed already in the record read under the lock at {@code version}: the
     * dead owner may have written it (or part of its doorbells) before it died. A write installs
     * {@code max(commitTs, version + 1)} ({@link io.scythe.storage.ObjectLayout#versionAfter}); under CALVIN a key's
     * writes are installed in the total order, whose timestamps increase and lie above every loaded version, so every
     * version installed before this write lies below {@code commitTs} and this write's, or any later one's, at or above
     * it (a tombstone included). A key never created reads as version 0: not installed. Fails on a negative version.
     */
    static boolean installed(final long version, final long commitTs) {
        if (version < 0 || commitTs <= 0) {
            throw new IllegalArgumentException("CALVIN version " + version + " at commit " + commitTs);
        }
        return version >= commitTs;
    }
}
