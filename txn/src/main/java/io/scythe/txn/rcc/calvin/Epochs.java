package io.scythe.txn.rcc.calvin;

import java.util.ArrayList;
import java.util.List;
import java.util.TreeMap;

/**
 * CALVIN's sequencing layer on one of {@code nodes} nodes (sans-IO): the node batches the transactions it received
 * during an epoch, sends every node its batch of each epoch (possibly empty: it says the epoch is over here), and an
 * epoch is complete at a node once it holds every node's batch of it. Complete epochs come out in epoch order, each
 * as its batches in node order: the one total order every node agrees on (epoch, sending node, place in its batch).
 *
 * <p>Epochs run on demand: a node opens a window (a timer of one epoch) when it has transactions to batch or learns of
 * an epoch it has not sent yet; closing it sends every epoch up to the newest it knows of, so idle nodes catch up
 * with busy ones and a quiet cluster sends nothing. Loop-confined.
 *
 * @param <B> a batch
 */
final class Epochs<B> {
    private final int nodes;
    /** The next epoch this node sends a batch of. */
    private long nextToSend;
    /** The newest epoch any node sent a batch of (-1: none yet). */
    private long newestSeen = -1;
    private boolean windowOpen;
    /** The newest epoch handed out as complete. */
    private long completed = -1;
    private final TreeMap<Long, List<B>> received = new TreeMap<>();
    private final TreeMap<Long, int[]> counts = new TreeMap<>();
    /** Nodes that died ({@link #nodeDied}), each with its empty batch, which stands for every batch it did not log. */
    private final java.util.Map<Integer, B> dead = new java.util.TreeMap<>();
    /**
     * Dead nodes whose new incarnation asked to rejoin ({@link #rejoinFloor}), each with its floor: the dead
     * incarnation's empty batch stands in up to the floor only; every later epoch waits for the new incarnation's batch.
     */
    private final java.util.Map<Integer, Long> floors = new java.util.TreeMap<>();
    /** On a rejoining incarnation ({@link #joinAt}): batches of epochs below this are dropped (-1: not rejoining). */
    private long joinedAt = -1;
    /** This node's index when it is a rejoined incarnation, else -1. */
    private int rejoiner = -1;
    /** On a rejoined incarnation: each node's floor (its own: none below its first epoch), else null. */
    private long[] joinFloors;
    /** The newest epoch each node said was complete there ({@link #reported}; -1: none yet). */
    private final long[] completeAt;

    Epochs(final int nodes) {
        if (nodes < 1) {
            throw new IllegalArgumentException("CALVIN needs at least one node, got " + nodes);
        }
        this.nodes = nodes;
        this.completeAt = new long[nodes];
        java.util.Arrays.fill(completeAt, -1);
    }

    /** Node {@code from} said (with a batch) that every epoch up to {@code completedThere} is complete there. */
    void reported(final int from, final long completedThere) {
        completeAt[from] = Math.max(completeAt[from], completedThere);
    }

    /**
     * The newest epoch complete at every live node as far as node {@code self} knows (its own {@link #completed}, the
     * others' as last {@link #reported}): a survivor of a node's death may need that node's input-log record of any
     * later epoch (to complete it the way the others did), so only a record of this epoch or an earlier one may be
     * overwritten. A dead node needs nothing.
     */
    long lowWater(final int self) {
        long low = completed;
        for (int i = 0; i < nodes; i++) {
            if (i != self && (!dead.containsKey(i) || floors.containsKey(i))) {
                low = Math.min(low, completeAt[i]);
            }
        }
        return low;
    }

    /** Whether a window should open now ({@code pending}: this node holds transactions not sent yet); it opens. */
    boolean openWindow(final boolean pending) {
        if (windowOpen || !pending && newestSeen < nextToSend) {
            return false;
        }
        windowOpen = true;
        return true;
    }

    /**
     * Whether another node already sent an epoch this node has not: then this node closes its window at once (epochs
     * end when the first node ends them, so the nodes' epochs stay aligned instead of each waiting a window more).
     */
    boolean behind() {
        return newestSeen >= nextToSend;
    }

    /**
     * Closes the window (opening it first when none is open): the epochs this node sends batches of now,
     * {@code [first, last]} as two longs (the first carries what was pending; the others are empty, catching up with
     * an epoch another node sent).
     */
    long[] closeWindow() {
        windowOpen = false;
        final long first = nextToSend;
        final long last = Math.max(first, newestSeen);
        nextToSend = last + 1;
        newestSeen = Math.max(newestSeen, last);
        return new long[] {first, last};
    }

    /** Node {@code from}'s batch of {@code epoch} arrived (this node's own included). */
    void receive(final int from, final long epoch, final B batch) {
        if (from < 0 || from >= nodes) {
            throw new IllegalArgumentException("CALVIN batch from node " + from + " of " + nodes);
        }
        if (epoch < joinedAt) { // a rejoining incarnation: this node's batch stands empty there, every node agrees
            if (from == rejoiner) {
                throw new IllegalStateException("CALVIN batch of epoch " + epoch + " from rejoining node " + from);
            }
            return;
        }
        final Long floor = floors.get(from);
        if (floor != null && epoch <= floor) {
            throw new IllegalStateException("CALVIN batch of epoch " + epoch + " from node " + from + "'s new "
                + "incarnation, at or below its rejoin floor " + floor + " here (its dead incarnation's stands there)");
        }
        store(from, epoch, batch);
    }

    /** Keeps node {@code from}'s batch of {@code epoch} (checked: not complete here, the first of it). */
    private void store(final int from, final long epoch, final B batch) {
        if (epoch <= completed) {
            throw new IllegalStateException("CALVIN batch of epoch " + epoch + " from node " + from + " after the "
                + "epoch completed here");
        }
        @SuppressWarnings("unchecked")
        final List<B> batches = received.computeIfAbsent(epoch, e -> {
            final List<B> l = new ArrayList<>(nodes);
            for (int i = 0; i < nodes; i++) {
                l.add(null);
            }
            return l;
        });
        if (batches.get(from) != null) {
            throw new IllegalStateException("a second CALVIN batch of epoch " + epoch + " from node " + from);
        }
        batches.set(from, batch);
        counts.computeIfAbsent(epoch, e -> new int[1])[0]++;
        newestSeen = Math.max(newestSeen, epoch);
    }

    /**
     * Node {@code node} died, and nothing more of it can land (fenced): each epoch not complete here takes its batch
     * from {@code logged}, its input log as read after the fence ({@link CalvinInputLog}), and an epoch it logged no
     * batch of is {@code empty} (a node logs every non-empty batch before dispatching it, so only an empty one is
     * missing), up to its last logged epoch and every later one. Every survivor reads the same log, so every survivor
     * completes the same epochs with the same batches: the total order stays one. A batch of it already received here
     * must be the logged one (it was logged before it was dispatched), and a non-empty one received here of an epoch
     * not complete here must be in the log (its record was overwritten too early: issue 18); else this throws.
     */
    void nodeDied(final int node, final java.util.NavigableMap<Long, B> logged, final B empty) {
        if (node < 0 || node >= nodes || dead.containsKey(node)) {
            throw new IllegalArgumentException("CALVIN node " + node + " of " + nodes + " cannot die here"
                + (dead.containsKey(node) ? ": it died already" : ""));
        }
        for (final java.util.Map.Entry<Long, List<B>> r : received.entrySet()) {
            final B had = r.getValue().get(node);
            if (had != null && !had.equals(empty) && !logged.containsKey(r.getKey())) {
                throw new IllegalStateException("CALVIN node " + node + "'s batch of epoch " + r.getKey() + " received "
                    + "here, not complete here, is missing from its input log: overwritten before every node "
                    + "completed the epoch (issue 18)");
            }
        }
        dead.put(node, empty);
        for (final java.util.Map.Entry<Long, B> e : logged.tailMap(completed, false).entrySet()) {
            final List<B> batches = received.get(e.getKey());
            final B had = batches == null ? null : batches.get(node);
            if (had == null) {
                receive(node, e.getKey(), e.getValue());
            } else if (!had.equals(e.getValue())) {
                throw new IllegalStateException("CALVIN node " + node + "'s batch of epoch " + e.getKey() + " received "
                    + "here differs from its logged one: it was dispatched before it was logged");
            }
        }
    }

    /** The next epoch in order once every node's batch of it arrived (its batches by node), else {@code null}. */
    List<B> nextComplete() {
        final long next = completed + 1;
        final int[] count = counts.get(next);
        if (count != null && count[0] < nodes) { // a dead node's batch it did not log: empty
            for (final java.util.Map.Entry<Integer, B> d : dead.entrySet()) {
                final Long floor = floors.get(d.getKey());
                if ((floor == null || next <= floor) && received.get(next).get(d.getKey()) == null) {
                    store(d.getKey(), next, d.getValue());
                }
            }
        }
        if (count == null || count[0] < nodes) {
            return null;
        }
        counts.remove(next);
        completed = next;
        return received.remove(next);
    }

    /**
     * Dead node {@code node}'s new incarnation asks to rejoin the total order (issue 18, restart): returns this node's
     * floor, the newest epoch it sent, saw or completed, and from now on treats {@code node} as live for every later
     * epoch: an epoch above the floor completes here only with the new incarnation's batch, one at or below it with the
     * dead incarnation's (logged or empty) as before. No epoch at or below the floor can be waiting here for the new
     * incarnation, and none above it completed here yet (its own batch of it was not sent), so the switch is sharp.
     * The new incarnation sends this node empty batches of every epoch above the floor below its first epoch
     * ({@link #joinAt}): an epoch's batches are then the same at every node, whichever floor each node gave.
     */
    long rejoinFloor(final int node) {
        if (!dead.containsKey(node) || floors.containsKey(node)) {
            throw new IllegalArgumentException("CALVIN node " + node + " cannot rejoin here: "
                + (floors.containsKey(node) ? "it rejoined already" : "it is not dead here"));
        }
        if (dead.size() > 1) {
            throw new IllegalStateException("CALVIN node " + node + " rejoining while " + (dead.size() - 1)
                + " other node(s) are dead: not built (issue 18)");
        }
        final long floor = Math.max(Math.max(nextToSend - 1, newestSeen), completed);
        floors.put(node, floor);
        completeAt[node] = Math.max(completeAt[node], floor);
        return floor;
    }

    /**
     * On node {@code self}'s new incarnation, once every live node's {@link #rejoinFloor} is in ({@code floors} by node;
     * {@code self}'s ignored): its first epoch is one above the largest floor, the same wherever it is asked, and the
     * batches of every earlier epoch, dropped here (they are not its business: it owns no partition and executed
     * nothing before), stand empty for it everywhere. Returns the range {@code [first, last]} of the empty batches it
     * must send now, node {@code j} getting those above {@code floors[j]} ({@link #sendsTo}); empty when
     * {@code first > last}. Its windows then carry transactions from the first epoch on.
     */
    long[] joinAt(final int self, final long[] nodeFloors) {
        if (nodeFloors.length != nodes || completed >= 0 || nextToSend != 0) {
            throw new IllegalStateException("CALVIN node " + self + " joins the total order once, before it sent "
                + "or completed anything");
        }
        long min = Long.MAX_VALUE;
        long max = -1;
        for (int i = 0; i < nodes; i++) {
            if (i != self) {
                min = Math.min(min, nodeFloors[i]);
                max = Math.max(max, nodeFloors[i]);
                completeAt[i] = Math.max(completeAt[i], nodeFloors[i]);
            }
        }
        rejoiner = self;
        joinedAt = max + 1;
        this.joinFloors = nodeFloors.clone();
        joinFloors[self] = Long.MAX_VALUE; // its own catch-up batches stand empty here: not sent to itself
        received.headMap(joinedAt, false).clear();
        counts.headMap(joinedAt, false).clear();
        completed = max;
        nextToSend = joinedAt;
        newestSeen = Math.max(newestSeen, max);
        return new long[] {min + 1, max};
    }

    /** Whether this rejoined incarnation sends node {@code node} its (empty) batch of {@code epoch} before its first. */
    boolean sendsTo(final int node, final long epoch) {
        return joinFloors == null || epoch >= joinedAt || epoch > joinFloors[node];
    }

    /** The first epoch this rejoined incarnation's batches count in (-1: not a rejoined incarnation). */
    long joinedAt() {
        return joinedAt;
    }

    /** The newest epoch complete here (-1: none). */
    long completed() {
        return completed;
    }
}
