package io.scythe.txn.aurogon;

import java.util.ArrayList;
import java.util.List;
import java.util.PriorityQueue;
import java.util.SplittableRandom;

/**
 * 2LClock's NIC tree (§5.2.2, §5.3, Fig. 6(b), Fig. 7) as a deterministic discrete-event model: N NICs, each with its
 * own offset and drift from true time, in a K-ary tree (K = {@value #K}) rooted at the reference NIC; every child
 * probes its parent and maps its NIC clock onto the root's through its parent's mapping. Time runs in true
 * nanoseconds on the model's own event queue, with one-way delays drawn from a seed; it does not run on the fabric
 * simulator's NICs (whose runs last milliseconds, where a failover takes seconds in the paper and slices of the
 * mapping hundreds of microseconds).
 *
 * <ul>
 *   <li><b>Probes</b> (Fig. 6(b)): the child's UD send leaves at {@code T_AS} (child NIC) and reaches the parent at
 *       {@code T_BR}; the RC request's ACK leaves the parent at {@code T_BS} and reaches the child at {@code T_AR};
 *       {@code offset = ((T_BR - T_AS) - (T_AR - T_BS)) / 2} and the pair {@code <T_AS, T_AS + offset>} goes into a
 *       {@link PiecewiseMapping} with the probe's round trip as its quality (a UD probe lost is dropped).</li>
 *   <li><b>Batched asynchronous parent replies</b>: a parent stamps nothing on its CPU's path; every
 *       {@code batchNs} it ships the {@code T_BR, T_BS} stamps its CQ collected, with its current mapping, to each
 *       child in one message; the child pairs them with its own {@code T_AS, T_AR} then.</li>
 *   <li><b>Composition</b>: a node's raw time is {@code raw_parent(F_child→parent(nic))}; the root's is its
 *       NIC's.</li>
 *   <li><b>Root failover</b> (§5.3, Fig. 7): the root's children notice its batches stop (heartbeat: none for
 *       {@code heartbeatNs}); the lowest-numbered becomes the root, and every orphaned node takes as parent the
 *       shallowest node with fewer than K children. Every node then serves, through the <i>virtual phase</i>
 *       ({@code virtualNs}), {@code V}: its old mapping extrapolated, while its new mapping warms up; at the switch it
 *       adds a <i>correction</i> {@code c = V(x) - raw(x)} so time does not jump; through the <i>smoothing phase</i>
 *       the correction decays linearly to 0 over {@code max(smoothNs, 4|c|)} (a slope change of at most 1/4, so
 *       served time never runs backwards); then it serves raw time.</li>
 * </ul>
 * The paper leaves the decay and negative corrections open: ours decays either sign alike.
 */
public final class ClockTree {
    public static final int K = 10;

    /** Settings of the model. */
    public record Options(int nodes, long probeNs, long batchNs, long sliceNs, long oneWayNs, long jitterNs,
                          double udLoss, long heartbeatNs, long virtualNs, long smoothNs, long maxOffsetNs,
                          double maxDriftPpm, long seed) {
        public Options {
            if (nodes < 2 || probeNs <= 0 || batchNs <= 0 || sliceNs <= 0 || oneWayNs <= 0 || jitterNs < 0
                || udLoss < 0 || udLoss >= 1 || heartbeatNs <= batchNs || virtualNs < 2 * sliceNs || smoothNs <= 0) {
                throw new IllegalArgumentException("bad 2LClock tree settings: " + this);
            }
        }

        /** Defaults scaled from the paper: probes every 50 us, replies batched every 200 us, slices of 1 ms. */
        public static Options defaults(final int nodes, final long seed) {
            return new Options(nodes, 50_000, 200_000, 1_000_000, 1_000, 200, 0.01, 2_000_000, 8_000_000,
                20_000_000, 10_000_000, 50, seed);
        }
    }

    /** Phases of a node's clock around a failover. */
    public enum Phase { NORMAL, VIRTUAL, SMOOTHING }

    private final Options o;
    private final SplittableRandom random;
    private final Node[] nodes;
    private final PriorityQueue<Event> events = new PriorityQueue<>();
    private long now;
    private long sequence;
    private int root;
    private long failovers;

    private record Event(long at, long seq, Runnable action) implements Comparable<Event> {
        @Override
        public int compareTo(final Event e) {
            return at != e.at ? Long.compare(at, e.at) : Long.compare(seq, e.seq);
        }
    }

    private final class Node {
        final int id;
        final long offsetNs;
        final double drift;
        int parent;
        int depth;
        final List<Integer> children = new ArrayList<>();
        boolean dead;
        PiecewiseMapping toParent;
        /** Stamps this node's CQ collected as a parent, per child: {probe id, T_BR, T_BS}. */
        final List<long[]>[] collected;
        /** Probes this node sent as a child and not yet paired: {probe id, T_AS, T_AR or -1}. */
        final List<long[]> sent = new ArrayList<>();
        long probeIds;
        long lastBatchFromParent;
        Phase phase = Phase.NORMAL;
        /** Frozen old mapping of the virtual phase (the old parent's raw time composed with the old F). */
        PiecewiseMapping oldToParent;
        Node oldParent;
        long switchNic;
        double correction;
        long smoothNs;
        long epoch;

        @SuppressWarnings("unchecked")
        Node(final int id) {
            this.id = id;
            this.offsetNs = id == 0 ? 0 : random.nextLong(2 * o.maxOffsetNs() + 1) - o.maxOffsetNs();
            this.drift = (random.nextDouble() * 2 - 1) * o.maxDriftPpm() / 1e6;
            this.collected = new List[nodesCount()];
        }

        long nic(final long t) {
            return t + Math.round(t * drift) + offsetNs;
        }
    }

    private int nodesCount() {
        return o.nodes();
    }

    public ClockTree(final Options options) {
        this.o = options;
        this.random = new SplittableRandom(options.seed());
        this.nodes = new Node[options.nodes()];
        for (int i = 0; i < nodes.length; i++) {
            nodes[i] = new Node(i);
        }
        for (int i = 1; i < nodes.length; i++) {
            attach(i, (i - 1) / K);
        }
        for (int i = 1; i < nodes.length; i++) {
            final int child = i;
            at(random.nextLong(o.probeNs()), () -> probe(child));
        }
        for (int i = 0; i < nodes.length; i++) {
            final int parent = i;
            at(random.nextLong(o.batchNs()), () -> batch(parent));
        }
    }

    private void attach(final int child, final int parent) {
        final Node c = nodes[child];
        c.parent = parent;
        c.depth = nodes[parent].depth + 1;
        c.toParent = new PiecewiseMapping(o.sliceNs(), 2 * o.jitterNs());
        c.lastBatchFromParent = now;
        c.sent.clear();
        nodes[parent].children.add(child);
    }

    private void at(final long t, final Runnable action) {
        events.add(new Event(t, sequence++, action));
    }

    private long delay() {
        return o.oneWayNs() + (o.jitterNs() == 0 ? 0 : random.nextLong(o.jitterNs()));
    }

    /** A child's UD probe and RC request to its parent; it probes again after {@code probeNs}. */
    private void probe(final int child) {
        final Node c = nodes[child];
        if (c.dead) {
            return;
        }
        at(now + o.probeNs(), () -> probe(child));
        if (c.parent == child) {
            return; // the root probes nobody
        }
        final Node p = nodes[c.parent];
        final long id = ++c.probeIds;
        final long[] mine = {id, c.nic(now), -1};
        c.sent.add(mine);
        if (c.sent.size() > 64) {
            c.sent.remove(0);
        }
        final boolean lost = random.nextDouble() < o.udLoss();
        final long arrive = now + delay();
        final long ackArrive = arrive + 200 + delay(); // the NIC answers the RC request itself
        final int parentId = c.parent;
        final long epoch = c.epoch;
        at(arrive, () -> {
            if (!p.dead && !lost && c.parent == parentId && c.epoch == epoch) {
                if (p.collected[child] == null) {
                    p.collected[child] = new ArrayList<>();
                }
                p.collected[child].add(new long[] {id, p.nic(arrive), p.nic(arrive + 200)});
            }
        });
        at(ackArrive, () -> {
            if (!p.dead) {
                mine[2] = c.nic(ackArrive);
            }
        });
    }

    /** A parent ships the stamps its CQ collected to each child, one message per child (asynchronously). */
    private void batch(final int parent) {
        final Node p = nodes[parent];
        if (p.dead) {
            return;
        }
        at(now + o.batchNs(), () -> batch(parent));
        for (final int child : p.children) {
            final List<long[]> stamps = p.collected[child] == null ? List.of() : p.collected[child];
            p.collected[child] = null;
            final long arrive = now + delay();
            at(arrive, () -> received(child, parent, stamps));
        }
    }

    private void received(final int child, final int parent, final List<long[]> stamps) {
        final Node c = nodes[child];
        if (c.dead || c.parent != parent) {
            return;
        }
        c.lastBatchFromParent = now;
        for (final long[] s : stamps) {
            for (final long[] mine : c.sent) {
                if (mine[0] == s[0] && mine[2] >= 0) {
                    final long tAs = mine[1];
                    final long tAr = mine[2];
                    final long offset = ((s[1] - tAs) - (tAr - s[2])) / 2;
                    c.toParent.add(tAs, tAs + offset, (tAr - tAs) - (s[2] - s[1]));
                    break;
                }
            }
        }
        c.sent.removeIf(m -> m[2] >= 0 && m[0] <= lastPaired(stamps));
    }

    private static long lastPaired(final List<long[]> stamps) {
        long last = -1;
        for (final long[] s : stamps) {
            last = Math.max(last, s[0]);
        }
        return last;
    }

    /** Heartbeat check of the root's children: run every batch interval once {@link #failRoot} was called. */
    private void watch() {
        boolean noticed = false;
        for (final int child : new ArrayList<>(nodes[root].children)) {
            if (now - nodes[child].lastBatchFromParent >= o.heartbeatNs()) {
                noticed = true;
            }
        }
        if (noticed) {
            failover();
        } else {
            at(now + o.batchNs(), this::watch);
        }
    }

    /** The root's NIC fails now: its children notice by heartbeat and the tree re-forms (§5.3). */
    public void failRoot() {
        nodes[root].dead = true;
        at(now + o.batchNs(), this::watch);
    }

    private void failover() {
        failovers++;
        final Node old = nodes[root];
        final List<Integer> orphans = new ArrayList<>(old.children);
        old.children.clear();
        final int newRoot = orphans.remove(0);
        // Every live node starts its virtual phase: it serves its old mapping extrapolated.
        for (final Node n : nodes) {
            if (!n.dead) {
                n.phase = Phase.VIRTUAL;
                n.oldToParent = n.toParent;
                n.oldParent = snapshot(n.parent);
                n.epoch++;
            }
        }
        final Node r = nodes[newRoot];
        r.parent = newRoot;
        r.depth = 0;
        root = newRoot;
        reDepth(newRoot);
        for (final int orphan : orphans) {
            attach(orphan, shallowestWithRoom(orphan));
            reDepth(orphan);
        }
        at(now + o.virtualNs(), this::switchOver); // re-attached nodes' mappings (attach) warm up meanwhile
    }

    /** The old raw mapping of a node, frozen: the same node object keeps serving V through {@link #virtual}. */
    private Node snapshot(final int parent) {
        return nodes[parent];
    }

    private void reDepth(final int from) {
        for (final int c : nodes[from].children) {
            nodes[c].depth = nodes[from].depth + 1;
            reDepth(c);
        }
    }

    private int shallowestWithRoom(final int except) {
        int best = -1;
        for (final Node n : nodes) {
            if (!n.dead && n.id != except && n.children.size() < K && !inSubtree(n.id, except)
                && (best < 0 || n.depth < nodes[best].depth)) {
                best = n.id;
            }
        }
        return best;
    }

    private boolean inSubtree(final int node, final int top) {
        int n = node;
        while (n != root && nodes[n].parent != n) {
            if (n == top) {
                return true;
            }
            n = nodes[n].parent;
        }
        return n == top;
    }

    /** End of the virtual phase: every node switches with a correction and starts smoothing. */
    private void switchOver() {
        for (final Node n : nodes) {
            if (!n.dead && n.phase == Phase.VIRTUAL) {
                final long x = n.nic(now);
                n.correction = virtual(n, x) - raw(n, x);
                n.switchNic = x;
                n.smoothNs = Math.max(o.smoothNs(), (long) (4 * Math.abs(n.correction)));
                n.phase = Phase.SMOOTHING;
            }
        }
    }

    // ------------------------------------------------------------------------------------------------ time

    /** A node's raw estimate of the root's NIC clock at its NIC reading {@code x}. */
    private double raw(final Node n, final long x) {
        if (n.id == root) {
            return x;
        }
        return raw(nodes[n.parent], n.toParent.map(x));
    }

    /** Through the virtual phase: the old mappings (frozen at the failover) extrapolated, down to the old root. */
    private double virtual(final Node n, final long x) {
        if (n.oldToParent == null) {
            return x; // the old root
        }
        final Node parent = n.oldParent;
        final long y = n.oldToParent.map(x);
        return parent.oldToParent == null ? y : virtual(parent, y);
    }

    /** What node {@code i} serves as time at its NIC reading {@code x}. */
    private double served(final Node n, final long x) {
        switch (n.phase) {
            case VIRTUAL:
                return virtual(n, x);
            case SMOOTHING: {
                final double left = 1 - (double) (x - n.switchNic) / n.smoothNs;
                if (left <= 0) {
                    n.phase = Phase.NORMAL;
                    n.oldToParent = null;
                    return raw(n, x);
                }
                return raw(n, x) + n.correction * left;
            }
            default:
                return raw(n, x);
        }
    }

    /** Runs the model until true time {@code t}. */
    public void runUntil(final long t) {
        while (!events.isEmpty() && events.peek().at <= t) {
            final Event e = events.poll();
            now = e.at;
            e.action.run();
        }
        now = t;
    }

    public long now() {
        return now;
    }

    /** Node {@code i}'s clock now (its NIC read now, mapped as its phase says). */
    public long time(final int i) {
        final Node n = nodes[i];
        if (n.dead) {
            throw new IllegalStateException("node " + i + " of the clock tree is dead");
        }
        return Math.round(served(n, n.nic(now)));
    }

    /** The current root's NIC clock now: the reference. */
    public long reference() {
        return nodes[root].nic(now);
    }

    /** Node {@code i}'s NIC clock now, whether alive or not (the old root's, continued, for comparisons). */
    public long nic(final int i) {
        return nodes[i].nic(now);
    }

    public int root() {
        return root;
    }

    public Phase phase(final int i) {
        return nodes[i].phase;
    }

    public boolean dead(final int i) {
        return nodes[i].dead;
    }

    public int depth(final int i) {
        return nodes[i].depth;
    }

    public int children(final int i) {
        return nodes[i].children.size();
    }

    public long failovers() {
        return failovers;
    }

    public int size() {
        return nodes.length;
    }
}
