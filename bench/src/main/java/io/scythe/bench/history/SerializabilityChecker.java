package io.scythe.bench.history;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * Checks a {@link History} for conflict serializability: builds Adya's direct serialization graph over the committed
 * transactions and looks for cycles in it.
 *
 * <ol>
 *   <li><b>Version order</b> per key, from the writes. In a version 2 history ({@link History#ordered}) a key's
 *       versions are ordered by value: each write is placed after the write of the next smaller version (the first
 *       after the initial version), and a read of an absent key ({@link HistoryFormat#ABSENT}) read the newest
 *       version at or below its bound, which must be a delete or the initial version (a read of a live value must not
 *       be of a delete). In a version 1 history each write names the version it made and the version it
 *       overwrote, so the versions of a key form a chain from the initial version. A version overwritten by two
 *       transactions (a fork: only possible without locks) and a version nobody made are impossible and reported.
 *       The checker then keeps only what the history states (each version follows the one it overwrote: a tree, not
 *       a guessed total order), so the cycles it reports are not artefacts of a guess.</li>
 *   <li><b>Edges</b>: ww (T made the version after U's), wr (T read a version U made), rw (T read a version whose
 *       next version U made: an anti-dependency; one to each branch of a fork). A read of a version no committed transaction made and that is not
 *       the initial one is impossible (an aborted or invented write: G1a).</li>
 *   <li><b>Cycles</b>: strongly connected components by an iterative Tarjan (no recursion, so a million transactions
 *       need no deep stack), three times: over ww edges, over ww and wr, over all. A component is G0 (write cycle)
 *       if it holds a ww-only cycle, else G1c (circular information flow) if it holds a ww/wr cycle, else G2
 *       (anti-dependency cycle: lost update, write skew); for each, a concrete cycle of that class is found by a
 *       breadth-first search inside the component (a shortest one through its first transaction).</li>
 * </ol>
 * Linear in the size of the history, apart from the searches for the cycles reported.
 */
public final class SerializabilityChecker {
    /** Kinds of dependency edge (ordinals are the bit positions of the masks). */
    public enum EdgeKind { WW, WR, RW }

    private static final int WW = 1 << EdgeKind.WW.ordinal();
    private static final int WW_WR = WW | 1 << EdgeKind.WR.ordinal();
    private static final int ALL = WW_WR | 1 << EdgeKind.RW.ordinal();
    /** Edges of one cycle printed; the rest are counted. */
    private static final int MAX_STEPS_SHOWN = 40;

    /** One edge of a reported cycle: {@code from} must precede {@code to} because of {@code detail}. */
    public record Step(long fromTxn, long toTxn, EdgeKind kind, String detail) {
        @Override
        public String toString() {
            return "T" + fromTxn + " -" + kind.name().toLowerCase(java.util.Locale.ROOT) + "-> T" + toTxn + "  ("
                + detail + ")";
        }
    }

    /** A cycle found: its class (G0, G1c, G2), how many transactions its component holds, and its edges. */
    public record Cycle(String anomaly, int componentSize, List<Step> steps) {
        public List<Long> transactions() {
            return steps.stream().map(Step::fromTxn).toList();
        }
    }

    /**
     * The verdict. {@code cycles} and {@code impossible} hold at most the reported number; the counts are complete.
     */
    public record Result(String label, int transactions, long[] edgesByKind, long components, List<Cycle> cycles,
                         long impossibleCount, List<String> impossible, int inDoubt, long snapshotIsolationCycles,
                         List<Long> snapshotIsolationWitness, int readCommitted) {
        public boolean serializable() {
            return components == 0 && impossibleCount == 0;
        }

        /**
         * Whether snapshot isolation allows the history, as far as its graph tells: nothing impossible, and every
         * cycle has two consecutive rw edges (write skew; no lost update, no ww/wr cycle).
         */
        public boolean snapshotIsolationAllowed() {
            return snapshotIsolationCycles == 0 && impossibleCount == 0;
        }

        /** Whether snapshot isolation allows the cycles, in a line: else how many components forbid it, one named. */
        public String snapshotIsolationVerdict() {
            return snapshotIsolationCycles == 0 ? "every cycle has two consecutive rw edges (snapshot isolation "
                + "allows them)" : "NOT SNAPSHOT ISOLATION either: " + snapshotIsolationCycles + " component(s) of the "
                + "graph with a cycle without two consecutive rw edges; the first holds "
                + snapshotIsolationWitness.stream().map(t -> "T" + t).toList();
        }

        /** The verdict as lines for a terminal. */
        public List<String> lines() {
            final List<String> out = new ArrayList<>();
            final String levels = (inDoubt == 0 ? "" : " (" + inDoubt + " in doubt)") + (readCommitted == 0 ? ""
                : " (" + readCommitted + " at read committed, checked at that level)");
            out.add(String.format("%s: %d transactions%s, %d edges (ww %d, wr %d, rw %d)", label, transactions,
                levels, edgesByKind[0] + edgesByKind[1] + edgesByKind[2],
                edgesByKind[0], edgesByKind[1], edgesByKind[2]));
            if (impossibleCount > 0) {
                out.add("IMPOSSIBLE HISTORY: " + impossibleCount + " problem(s)" + (impossibleCount > impossible.size()
                    ? ", the first " + impossible.size() : "") + ":");
                impossible.forEach(p -> out.add("  " + p));
            }
            if (components > 0) {
                out.add("NOT SERIALIZABLE: " + components + " cycle(s) (strongly connected components)"
                    + (components > cycles.size() ? ", the first " + cycles.size() : "") + ":");
                for (final Cycle c : cycles) {
                    out.add("  " + c.anomaly() + " cycle of " + c.steps().size() + " transactions (component of "
                        + c.componentSize() + "): " + c.transactions().stream().map(t -> "T" + t).toList());
                    final int shown = Math.min(c.steps().size(), MAX_STEPS_SHOWN);
                    c.steps().subList(0, shown).forEach(s -> out.add("    " + s));
                    if (shown < c.steps().size()) {
                        out.add("    ... " + (c.steps().size() - shown) + " more edges");
                    }
                }
            }
            if (serializable()) {
                out.add("serializable");
            } else if (components > 0) {
                out.add(snapshotIsolationVerdict());
            }
            return out;
        }
    }

    private final History h;
    private final int maxReported;
    private final int[] txnOf;
    private final int[] objectOf;
    private final long[] objectTable;
    private final long[] objectKey;
    private final List<String> impossible = new ArrayList<>();
    /** The version each write overwrote, and each read read (a version 2 history's are derived: placeVersions). */
    private long[] overwritten;
    private long[] readAt;
    private long impossibleCount;
    // Version nodes: writes 0..writes-1 (by write index), then one root (the initial version) per object.
    private int writes;
    private int[] writeAccess;
    private LongPairIntMap writerOf;
    /** The version each write overwrote (a write node, a root, or -1 when nobody made it). */
    private int[] parent;
    /** The writes that overwrote version node n: {@code children[firstChild[n] .. firstChild[n + 1]]}. */
    private int[] firstChild;
    private int[] children;
    // The graph, by source (CSR).
    private int edgeCount;
    private int[] edgeSrc = new int[1024];
    private int[] edgeDst = new int[1024];
    private int[] edgeVia = new int[1024];
    private byte[] edgeKind = new byte[1024];
    private final long[] edgesByKind = new long[3];
    private int[] offsets;

    private SerializabilityChecker(final History history, final int maxReported) {
        this.h = history;
        this.maxReported = maxReported;
        this.txnOf = new int[h.accesses];
        for (int t = 0; t < h.transactions; t++) {
            Arrays.fill(txnOf, h.firstAccess[t], h.firstAccess[t + 1], t);
        }
        this.objectOf = new int[h.accesses];
        final LongPairIntMap objects = new LongPairIntMap(h.accesses / 2 + 16);
        for (int a = 0; a < h.accesses; a++) {
            final int known = objects.putIfAbsent(h.accessTable[a], h.accessKey[a], objects.size());
            objectOf[a] = known >= 0 ? known : objects.size() - 1;
        }
        objectTable = new long[objects.size()];
        objectKey = new long[objects.size()];
        for (int a = 0; a < h.accesses; a++) {
            objectTable[objectOf[a]] = h.accessTable[a];
            objectKey[objectOf[a]] = h.accessKey[a];
        }
    }

    /** Checks {@code history}, reporting at most {@code maxReported} cycles and impossibilities in detail. */
    public static Result check(final History history, final int maxReported) {
        final SerializabilityChecker c = new SerializabilityChecker(history, maxReported);
        c.placeVersions();
        c.orderVersions();
        c.buildEdges();
        return c.findCycles();
    }

    private void impossible(final String what) {
        if (impossibleCount++ < maxReported) {
            impossible.add(what);
        }
    }

    private String key(final int object) {
        return h.tables.get((int) objectTable[object]) + ":" + objectKey[object];
    }

    private long txnIdOfWrite(final int w) {
        return h.txnIds[txnOf[writeAccess[w]]];
    }

    private boolean absent(final int access) {
        return (h.accessFlags[access] & HistoryFormat.ABSENT) != 0;
    }

    /**
     * Version 2: derives the version each write overwrote (the next smaller one of its key, or the initial one) and
     * resolves each absent read to the version it read (the newest at or below its bound), checking that an absent
     * read read a delete or the initial version and a read of a value did not read a delete.
     */
    private void placeVersions() {
        overwritten = Arrays.copyOf(h.versionOverwritten, h.accesses);
        readAt = Arrays.copyOf(h.versionRead, h.accesses);
        if (!h.ordered) {
            return;
        }
        final int objects = objectTable.length;
        final int[] first = new int[objects + 1];
        for (int a = 0; a < h.accesses; a++) {
            if ((h.accessFlags[a] & HistoryFormat.WRITE) != 0) {
                first[objectOf[a] + 1]++;
            }
        }
        for (int o = 0; o < objects; o++) {
            first[o + 1] += first[o];
        }
        final Integer[] byObject = new Integer[first[objects]];
        final int[] fill = Arrays.copyOf(first, objects);
        for (int a = 0; a < h.accesses; a++) {
            if ((h.accessFlags[a] & HistoryFormat.WRITE) != 0) {
                byObject[fill[objectOf[a]]++] = a;
            }
        }
        final java.util.Comparator<Integer> order = java.util.Comparator
            .<Integer>comparingLong(a -> h.versionMade[a]).thenComparingLong(a -> h.seqs[txnOf[a]]);
        final long[] made = new long[byObject.length];
        // Whether a key existed at the initial version, when its first write tells (it read it: a live value or its
        // absence); 0 unknown, 1 present, -1 absent.
        final byte[] initially = new byte[objects];
        for (int o = 0; o < objects; o++) {
            Arrays.sort(byObject, first[o], first[o + 1], order);
            if (first[o] < first[o + 1] && (h.accessFlags[byObject[first[o]]] & HistoryFormat.READ) != 0) {
                initially[o] = (byte) (absent(byObject[first[o]]) ? -1 : 1);
            }
            long previous = h.initialVersion;
            for (int i = first[o]; i < first[o + 1]; i++) {
                overwritten[byObject[i]] = previous;
                previous = made[i] = h.versionMade[byObject[i]];
            }
        }
        for (int a = 0; a < h.accesses; a++) {
            if ((h.accessFlags[a] & HistoryFormat.READ) == 0) {
                continue;
            }
            final int o = objectOf[a];
            if (absent(a)) {
                // The newest write at or below the bound, if any: what the absent read read.
                int i = Arrays.binarySearch(made, first[o], first[o + 1], h.versionRead[a]);
                if (i < 0) {
                    i = -i - 2;
                } else {
                    while (i + 1 < first[o + 1] && made[i + 1] == made[i]) {
                        i++;
                    }
                }
                if (i < first[o]) {
                    readAt[a] = h.initialVersion; // absent from the start (a key not loaded), if its writes agree
                    if (initially[o] > 0) {
                        impossible("T" + h.txnIds[txnOf[a]] + " found " + key(o) + " absent at the initial version, "
                            + "but T" + h.txnIds[txnOf[byObject[first[o]]]] + " read it there as a live value");
                    }
                    continue;
                }
                final int writer = byObject[i];
                readAt[a] = made[i];
                if ((h.accessFlags[writer] & HistoryFormat.TOMBSTONE) == 0 && txnOf[writer] != txnOf[a]) {
                    impossible("T" + h.txnIds[txnOf[a]] + " found " + key(o) + " absent at version " + made[i]
                        + " or below, but T" + h.txnIds[txnOf[writer]] + " made version " + made[i] + " a live value");
                }
            } else if (readAt[a] == h.initialVersion) {
                if (initially[o] < 0) {
                    impossible("T" + h.txnIds[txnOf[a]] + " read a value of " + key(o) + " at the initial version, "
                        + "but T" + h.txnIds[txnOf[byObject[first[o]]]] + " found it absent there");
                }
            } else {
                final int i = Arrays.binarySearch(made, first[o], first[o + 1], readAt[a]);
                if (i >= 0 && (h.accessFlags[byObject[i]] & HistoryFormat.TOMBSTONE) != 0) {
                    impossible("T" + h.txnIds[txnOf[a]] + " read a value of " + key(o) + " at version " + readAt[a]
                        + ", which T" + h.txnIds[txnOf[byObject[i]]] + " made a delete");
                }
            }
        }
    }

    private void orderVersions() {
        final int objects = objectTable.length;
        for (int a = 0; a < h.accesses; a++) {
            writes += (h.accessFlags[a] & HistoryFormat.WRITE) != 0 ? 1 : 0;
        }
        writeAccess = new int[writes];
        writerOf = new LongPairIntMap(writes + 16);
        int w = 0;
        for (int a = 0; a < h.accesses; a++) {
            if ((h.accessFlags[a] & HistoryFormat.WRITE) == 0) {
                continue;
            }
            writeAccess[w] = a;
            final long made = h.versionMade[a];
            if (made == h.initialVersion) {
                impossible("T" + h.txnIds[txnOf[a]] + " made version " + made + " of " + key(objectOf[a])
                    + ", the initial version");
            } else {
                final int other = writerOf.putIfAbsent(objectOf[a], made, w);
                if (other >= 0) {
                    impossible("T" + txnIdOfWrite(other) + " and T" + h.txnIds[txnOf[a]] + " both made version "
                        + made + " of " + key(objectOf[a]));
                }
            }
            w++;
        }
        // Parent of each write: the version it overwrote (a root for the initial version; -1 when nobody made it).
        final int nodes = writes + objects;
        parent = new int[writes];
        final int[] childCount = new int[nodes + 1];
        for (w = 0; w < writes; w++) {
            final int a = writeAccess[w];
            final long over = overwritten[a];
            parent[w] = over == h.initialVersion ? writes + objectOf[a] : writerOf.get(objectOf[a], over);
            if (parent[w] < 0) {
                impossible("T" + h.txnIds[txnOf[a]] + " overwrote version " + over + " of " + key(objectOf[a])
                    + ", which no committed transaction made and is not the initial one");
            } else {
                childCount[parent[w] + 1]++;
            }
        }
        for (int i = 0; i < nodes; i++) {
            childCount[i + 1] += childCount[i];
        }
        firstChild = childCount; // prefix sums
        children = new int[writes];
        final int[] fill = Arrays.copyOf(firstChild, nodes);
        for (w = 0; w < writes; w++) {
            if (parent[w] >= 0) {
                children[fill[parent[w]]++] = w;
            }
        }
        for (int n = 0; n < nodes; n++) {
            final int from = firstChild[n];
            final int to = firstChild[n + 1];
            if (to - from > 1) {
                sortBySeq(children, from, to);
                final int object = n < writes ? objectOf[writeAccess[n]] : n - writes;
                final long version = n < writes ? h.versionMade[writeAccess[n]] : h.initialVersion;
                final List<String> writers = new ArrayList<>();
                for (int i = from; i < to; i++) {
                    writers.add("T" + txnIdOfWrite(children[i]));
                }
                impossible("version " + version + " of " + key(object) + " was overwritten by " + (to - from)
                    + " transactions " + writers + ": one version has one successor (a lost update)");
            }
        }
        // What the roots (and the orphaned writes) reach; a write reached from neither lies on a cycle of overwrites.
        final boolean[] visited = new boolean[nodes];
        final int[] stack = new int[nodes];
        for (int start = 0; start < nodes; start++) {
            if (visited[start] || (start < writes && parent[start] >= 0)) {
                continue;
            }
            int top = 0;
            stack[top++] = start;
            while (top > 0) {
                final int x = stack[--top];
                visited[x] = true;
                for (int i = firstChild[x]; i < firstChild[x + 1]; i++) {
                    stack[top++] = children[i];
                }
            }
        }
        for (w = 0; w < writes; w++) {
            if (!visited[w]) {
                final int a = writeAccess[w];
                impossible("version " + h.versionMade[a] + " of " + key(objectOf[a]) + " (by T" + h.txnIds[txnOf[a]]
                    + ") lies on a cycle of overwrites: its chain never reaches the initial version");
            }
        }
    }

    private void sortBySeq(final int[] children, final int from, final int to) {
        for (int i = from + 1; i < to; i++) { // insertion sort: forks have few branches
            final int c = children[i];
            final long seq = h.seqs[txnOf[writeAccess[c]]];
            int j = i - 1;
            while (j >= from && h.seqs[txnOf[writeAccess[children[j]]]] > seq) {
                children[j + 1] = children[j];
                j--;
            }
            children[j + 1] = c;
        }
    }

    private void buildEdges() {
        int w = 0;
        for (int a = 0; a < h.accesses; a++) {
            final int t = txnOf[a];
            if ((h.accessFlags[a] & HistoryFormat.WRITE) != 0) {
                final int p = parent[w];
                if (p >= 0 && p < writes && txnOf[writeAccess[p]] != t) {
                    edge(txnOf[writeAccess[p]], t, EdgeKind.WW, a);
                }
                w++;
            }
            if ((h.accessFlags[a] & HistoryFormat.READ) == 0) {
                continue;
            }
            final long version = readAt[a];
            final int node;
            if (version == h.initialVersion) {
                node = writes + objectOf[a];
            } else {
                node = writerOf.get(objectOf[a], version);
                if (node < 0) {
                    impossible("T" + h.txnIds[t] + " read version " + version + " of " + key(objectOf[a])
                        + ", which no committed transaction made and is not the initial one (G1a)");
                    continue;
                }
                final int writer = txnOf[writeAccess[node]];
                if (writer != t) {
                    edge(writer, t, EdgeKind.WR, a);
                }
            }
            for (int i = firstChild[node]; i < firstChild[node + 1]; i++) {
                final int after = txnOf[writeAccess[children[i]]];
                if (after != t) {
                    edge(t, after, EdgeKind.RW, a);
                }
            }
        }
        // By source (counting sort), for the searches.
        offsets = new int[h.transactions + 1];
        for (int e = 0; e < edgeCount; e++) {
            offsets[edgeSrc[e] + 1]++;
        }
        for (int t = 0; t < h.transactions; t++) {
            offsets[t + 1] += offsets[t];
        }
        final int[] fill = Arrays.copyOf(offsets, h.transactions);
        final int[] src = new int[edgeCount];
        final int[] dst = new int[edgeCount];
        final int[] via = new int[edgeCount];
        final byte[] kind = new byte[edgeCount];
        for (int e = 0; e < edgeCount; e++) {
            final int at = fill[edgeSrc[e]]++;
            src[at] = edgeSrc[e];
            dst[at] = edgeDst[e];
            via[at] = edgeVia[e];
            kind[at] = edgeKind[e];
        }
        edgeSrc = src;
        edgeDst = dst;
        edgeVia = via;
        edgeKind = kind;
    }

    private void edge(final int from, final int to, final EdgeKind kind, final int via) {
        if (h.inDoubt[from] || h.inDoubt[to]) {
            return; // a transaction in doubt places its versions but is not known to have committed
        }
        if (kind == EdgeKind.RW && h.readCommitted[from]) {
            // A read committed reader (Adya's PL-2 among PL-3 transactions, his mixing-correct histories): the
            // anti-dependencies of its reads are not obligatory; its reads are still checked for committed versions
            // (G1a above), and its wr and ww edges stay (G0, G1c).
            return;
        }
        if (edgeCount == edgeSrc.length) {
            final int n = edgeCount * 2;
            edgeSrc = Arrays.copyOf(edgeSrc, n);
            edgeDst = Arrays.copyOf(edgeDst, n);
            edgeVia = Arrays.copyOf(edgeVia, n);
            edgeKind = Arrays.copyOf(edgeKind, n);
        }
        edgeSrc[edgeCount] = from;
        edgeDst[edgeCount] = to;
        edgeVia[edgeCount] = via;
        edgeKind[edgeCount] = (byte) kind.ordinal();
        edgeCount++;
        edgesByKind[kind.ordinal()]++;
    }

    private Result findCycles() {
        final int n = h.transactions;
        final int[] all = components(ALL);
        final int[] allSizes = sizes(all);
        if (Arrays.stream(allSizes).allMatch(size -> size < 2)) { // acyclic: nothing to classify
            return new Result(h.label, n, edgesByKind.clone(), 0, List.of(), impossibleCount, List.copyOf(impossible),
                inDoubtCount(), 0, List.of(), readCommittedCount());
        }
        final int[] wwWr = components(WW_WR);
        final int[] ww = components(WW);
        final int[] wwWrSizes = sizes(wwWr);
        final int[] wwSizes = sizes(ww);
        // Per component of the whole graph: a transaction on a cycle of the most severe class it holds.
        final int[] witness = new int[allSizes.length];
        final int[] witnessClass = new int[allSizes.length]; // 0 none, 1 G2, 2 G1c, 3 G0
        long components = 0;
        for (int t = 0; t < n; t++) {
            final int c = all[t];
            if (allSizes[c] < 2) {
                continue;
            }
            final int cls = wwSizes[ww[t]] > 1 ? 3 : wwWrSizes[wwWr[t]] > 1 ? 2 : 1;
            if (witnessClass[c] == 0) {
                components++;
            }
            if (cls > witnessClass[c]) {
                witnessClass[c] = cls;
                witness[c] = t;
            }
        }
        final List<Cycle> cycles = new ArrayList<>();
        final int[] seenEdge = new int[n];
        Arrays.fill(seenEdge, -1);
        for (int c = 0; c < allSizes.length && cycles.size() < maxReported; c++) {
            if (witnessClass[c] == 0) {
                continue;
            }
            final int t = witness[c];
            final String anomaly;
            final List<Step> steps;
            switch (witnessClass[c]) {
                case 3:
                    anomaly = "G0";
                    steps = cycleThrough(t, WW, ww, seenEdge);
                    break;
                case 2:
                    anomaly = "G1c";
                    steps = cycleThrough(t, WW_WR, wwWr, seenEdge);
                    break;
                default:
                    anomaly = "G2";
                    steps = cycleThrough(t, ALL, all, seenEdge);
                    break;
            }
            cycles.add(new Cycle(anomaly, allSizes[c], steps));
        }
        final List<Long> siWitness = new ArrayList<>();
        final long siCycles = snapshotIsolationCycles(all, allSizes.length, siWitness);
        return new Result(h.label, n, edgesByKind.clone(), components, List.copyOf(cycles), impossibleCount,
            List.copyOf(impossible), inDoubtCount(), siCycles, List.copyOf(siWitness), readCommittedCount());
    }

    private int readCommittedCount() {
        int count = 0;
        for (final boolean rc : h.readCommitted) {
            count += rc ? 1 : 0;
        }
        return count;
    }

    private int inDoubtCount() {
        int count = 0;
        for (final boolean d : h.inDoubt) {
            count += d ? 1 : 0;
        }
        return count;
    }

    private static int[] sizes(final int[] component) {
        int count = 0;
        for (final int c : component) {
            count = Math.max(count, c + 1);
        }
        final int[] sizes = new int[count];
        for (final int c : component) {
            sizes[c]++;
        }
        return sizes;
    }

    /** A shortest cycle through {@code start} over edges in {@code mask} inside its component (breadth first). */
    private List<Step> cycleThrough(final int start, final int mask, final int[] component, final int[] seenEdge) {
        final int[] queue = new int[h.transactions];
        int head = 0;
        int tail = 0;
        queue[tail++] = start;
        int closing = -1;
        search:
        while (head < tail) {
            final int v = queue[head++];
            for (int e = offsets[v]; e < offsets[v + 1]; e++) {
                final int w = edgeDst[e];
                if ((mask & 1 << edgeKind[e]) == 0 || component[w] != component[start]) {
                    continue;
                }
                if (w == start) {
                    closing = e;
                    break search;
                }
                if (seenEdge[w] < 0) {
                    seenEdge[w] = e;
                    queue[tail++] = w;
                }
            }
        }
        final List<Step> reversed = new ArrayList<>();
        for (int e = closing; e >= 0; e = edgeSrc[e] == start ? -1 : seenEdge[edgeSrc[e]]) {
            reversed.add(step(e));
        }
        for (int i = 0; i < tail; i++) {
            seenEdge[queue[i]] = -1;
        }
        final List<Step> steps = new ArrayList<>(reversed.size());
        for (int i = reversed.size() - 1; i >= 0; i--) {
            steps.add(reversed.get(i));
        }
        return steps;
    }

    private Step step(final int e) {
        final int a = edgeVia[e];
        final long from = h.txnIds[edgeSrc[e]];
        final long to = h.txnIds[edgeDst[e]];
        final String k = key(objectOf[a]);
        final EdgeKind kind = EdgeKind.values()[edgeKind[e]];
        final String detail;
        switch (kind) {
            case WW:
                detail = k + ": T" + to + " made version " + h.versionMade[a] + " after T" + from + "'s version";
                break;
            case WR:
                detail = k + ": T" + to + " read " + (absent(a) ? "the absence at " : "") + "version " + readAt[a]
                    + " made by T" + from;
                break;
            default:
                detail = k + ": T" + from + " read " + (absent(a) ? "the absence at " : "") + "version " + readAt[a]
                    + ", T" + to + " overwrote it";
                break;
        }
        return new Step(from, to, kind, detail);
    }

    /**
     * Strongly connected components over the edges in {@code mask}: Tarjan's algorithm with an explicit call stack.
     * Returns the component of each transaction.
     */
    private int[] components(final int mask) {
        return components(h.transactions, offsets, edgeDst, edgeKind, mask);
    }

    /**
     * Cycles an SI history cannot have (Fekete et al., "Making snapshot isolation serializable", 2005: every cycle in
     * the serialization graph of a history under snapshot isolation has two consecutive rw edges): the strongly
     * connected components of the graph whose nodes are each transaction twice, as reached by a ww or wr edge (or
     * first) and as reached by an rw edge, where an rw edge may not follow an rw edge. A cycle of that graph is a cycle
     * of the history with no two consecutive rw edges: a ww/wr cycle, a lost update (rw then ww), a cycle whose rw
     * edges alternate with others. Returns how many components of the history's graph ({@code all}, of
     * {@code allCount} components) hold one (a transaction is twice in the split graph, so one history component may
     * hold two of its components) and fills {@code witness} with the transactions of the first. A necessary condition
     * only: a start/commit order (G-SIa) is not in the history.
     */
    private long snapshotIsolationCycles(final int[] all, final int allCount, final List<Long> witness) {
        final int n = h.transactions;
        final int[] splitOffsets = new int[2 * n + 1];
        for (int e = 0; e < edgeCount; e++) {
            final int v = edgeSrc[e];
            if (edgeKind[e] == EdgeKind.RW.ordinal()) {
                splitOffsets[v + 1]++;
            } else {
                splitOffsets[v + 1]++;
                splitOffsets[n + v + 1]++;
            }
        }
        for (int v = 0; v < 2 * n; v++) {
            splitOffsets[v + 1] += splitOffsets[v];
        }
        final int[] fill = Arrays.copyOf(splitOffsets, 2 * n);
        final int[] splitDst = new int[splitOffsets[2 * n]];
        for (int e = 0; e < edgeCount; e++) {
            final int v = edgeSrc[e];
            final int w = edgeDst[e];
            if (edgeKind[e] == EdgeKind.RW.ordinal()) {
                splitDst[fill[v]++] = n + w; // reached by rw: may leave only by ww or wr
            } else {
                splitDst[fill[v]++] = w;
                splitDst[fill[n + v]++] = w;
            }
        }
        final int[] component = components(2 * n, splitOffsets, splitDst, new byte[splitDst.length], 1);
        final int[] size = sizes(component);
        final boolean[] counted = new boolean[allCount];
        long cycles = 0;
        int first = -1;
        for (int v = 0; v < 2 * n; v++) {
            final int c = component[v];
            if (size[c] > 1 && !counted[all[v % n]]) {
                counted[all[v % n]] = true;
                cycles++;
                first = first < 0 ? c : first;
            }
        }
        for (int v = 0; v < 2 * n && first >= 0 && witness.size() < MAX_STEPS_SHOWN; v++) {
            if (component[v] == first && !witness.contains(h.txnIds[v % n])) {
                witness.add(h.txnIds[v % n]);
            }
        }
        return cycles;
    }

    private static int[] components(final int n, final int[] offsets, final int[] edgeDst, final byte[] edgeKind,
                                    final int mask) {
        final int[] index = new int[n];
        final int[] low = new int[n];
        final int[] component = new int[n];
        final boolean[] onStack = new boolean[n];
        final int[] stack = new int[n];
        final int[] callNode = new int[n];
        final int[] callEdge = new int[n];
        Arrays.fill(index, -1);
        int nextIndex = 0;
        int components = 0;
        int sp = 0;
        for (int root = 0; root < n; root++) {
            if (index[root] >= 0) {
                continue;
            }
            int top = 0;
            callNode[0] = root;
            callEdge[0] = offsets[root];
            index[root] = low[root] = nextIndex++;
            stack[sp++] = root;
            onStack[root] = true;
            while (top >= 0) {
                final int v = callNode[top];
                int e = callEdge[top];
                boolean descended = false;
                while (e < offsets[v + 1]) {
                    final int w = edgeDst[e];
                    final int kind = edgeKind[e];
                    e++;
                    if ((mask & 1 << kind) == 0) {
                        continue;
                    }
                    if (index[w] < 0) {
                        callEdge[top] = e;
                        index[w] = low[w] = nextIndex++;
                        stack[sp++] = w;
                        onStack[w] = true;
                        top++;
                        callNode[top] = w;
                        callEdge[top] = offsets[w];
                        descended = true;
                        break;
                    }
                    if (onStack[w]) {
                        low[v] = Math.min(low[v], index[w]);
                    }
                }
                if (descended) {
                    continue;
                }
                if (low[v] == index[v]) {
                    int x;
                    do {
                        x = stack[--sp];
                        onStack[x] = false;
                        component[x] = components;
                    } while (x != v);
                    components++;
                }
                top--;
                if (top >= 0) {
                    final int u = callNode[top];
                    low[u] = Math.min(low[u], low[v]);
                }
            }
        }
        return component;
    }
}
