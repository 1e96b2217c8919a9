package io.scythe.bench.workload;

import io.scythe.storage.LogDb;
import io.scythe.storage.ObjectLayout;
import io.scythe.storage.Table;
import io.scythe.txn.TxnRuntime;
import io.scythe.txn.selcc.Gcl;
import io.scythe.txn.selcc.GclRegion;
import io.scythe.txn.selcc.LatchWord;
import io.scythe.txn.selcc.LineCache;
import io.vertx.core.Future;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.concurrent.ConcurrentSkipListMap;
import java.util.concurrent.atomic.AtomicLong;

/**
 * GAM's micro-benchmark as SELCC §7.1 runs it (Figs. 12-15; issue 21's {@code --workload gcl}), one piece of code for
 * the simulator ({@code sim --workload gcl}, {@code GclSim}) and the embedded cluster ({@code bench --workload gcl},
 * {@code GclWorkload}): clients access global cache lines by address, no index: a read takes the line Shared
 * ({@code SELCC_SLock}), reads its counter and lets it go; a write takes it Exclusive, adds one to the counter and
 * lets it go ({@code SELCC_XUnlock}: lazily on SELCC, written back and released at once on SEL). The knobs are the
 * paper's:
 * <ul>
 *   <li><b>sharing ratio</b> {@code sr}: the first {@code sr} of all lines are shared by every compute node, the rest
 *       split evenly into each compute node's private lines; an access goes to the shared lines with probability
 *       {@code sr}, else to its node's own (the paper defines the ratio over data, not accesses, and is silent on
 *       how accesses pick between the parts: picking by the same ratio keeps the accessed data's split equal to the
 *       stored one's);</li>
 *   <li><b>hold</b>: how long an access keeps its latch (the work under it; 0 by default);</li>
 *   <li><b>read ratio</b>, <b>skew</b> (Zipf theta over the part's lines, ranks scattered so the hot lines are not
 *       neighbours; 0: uniform) and <b>locality</b> (the probability that an access goes to the line the client
 *       accessed last, the paper's 50 %).</li>
 * </ul>
 * One operation is one access (the figures' unit, ops/s). Every write is counted when it completes; after the run the
 * memory nodes' counters (every cached copy flushed: the simulator's drain, the bench's wait of the module's settle
 * time) must add up to exactly that count: a lost or doubled write fails the run. The counts are safe to update from
 * several event loops (the bench's).
 */
public class GclSpec extends OperationSpec {
    /** A line's counter: its first data word. */
    public static final int COUNTER = 0;
    /** The protocols whose lines this workload accesses: SELCC's cache and SEL. */
    public static final List<String> PROTOCOLS = List.of("selcc-2pl", "sel-2pl");

    private final long linesPerNode;
    private final int lineBytes;
    /** Writes completed (each added one to its line's counter), and accesses begun. */
    private final AtomicLong writes = new AtomicLong();
    private final AtomicLong accesses = new AtomicLong();
    /** Accesses completed by compute node (fairness, SELCC Fig. 15a). */
    private final Map<Integer, Long> byNode = new ConcurrentSkipListMap<>();
    private long[] before;

    /** {@code lines} lines in all (split evenly over the memory nodes) of {@code lineBytes} each, header included. */
    public GclSpec(final long lines, final int lineBytes, final int memoryNodes) {
        if (lines < memoryNodes || memoryNodes < 1) {
            throw new IllegalArgumentException("--records " + lines + ": the gcl workload needs at least one line "
                + "per memory node (" + memoryNodes + ")");
        }
        this.linesPerNode = (lines + memoryNodes - 1) / memoryNodes + 1; // + the allocator's header line
        this.lineBytes = lineBytes;
    }

    /**
     * Refuses, with a message naming them, protocols without global cache lines (only {@link #PROTOCOLS} have them)
     * and more compute-node loops than a latch word has participants ({@code cns x loops}, each loop its own cache).
     */
    public static void check(final List<String> protocols, final long loops) {
        for (final String p : protocols) {
            if (!PROTOCOLS.contains(p)) {
                throw new IllegalArgumentException("the gcl workload accesses lines through SELCC (selcc-2pl) or "
                    + "SEL (sel-2pl), not " + p + " (it has no global cache lines)");
            }
            if (loops > LatchWord.MAX_PARTICIPANTS) {
                throw new IllegalArgumentException(loops + " compute-node loops: " + p + " takes at most "
                    + LatchWord.MAX_PARTICIPANTS + " (each loop is a participant of the latch words: a 6-bit holder, "
                    + "58 reader bits); run fewer loops, and more clients a loop");
            }
        }
    }

    /** "sel" for SEL's protocols, else "selcc" ({@link Gcl#of}). */
    public static String kind(final String protocol) {
        return protocol.startsWith("sel-") ? "sel" : "selcc";
    }

    /** Lines in all, the header lines not counted. */
    public long lines(final int memoryNodes) {
        return (linesPerNode - 1) * memoryNodes;
    }

    /** Writes completed so far. */
    public long writes() {
        return writes.get();
    }

    @Override
    protected String operations() {
        return "line accesses";
    }

    @Override
    public String name() {
        return "gcl";
    }

    @Override
    public JsonObject params() {
        return new JsonObject().put("lines_per_node", linesPerNode - 1).put("line_bytes", lineBytes);
    }

    @Override
    public void load(final LogDb db, final int part, final int parts) {
        keep(db, part);
        GclRegion.load(db, lineBytes - ObjectLayout.HEADER_BYTES, linesPerNode, linesPerNode);
        before = LineCache.totals();
    }

    /** The memory nodes as loaded (the bench's tests tamper with a counter through them). */
    public List<LogDb> memoryNodes() {
        return List.copyOf(dbs);
    }

    /** The sum of every line's counter as the memory nodes hold it (after the run: every copy flushed). */
    public long counted() {
        long sum = 0;
        for (final LogDb db : dbs) {
            final Table t = db.table(GclRegion.TABLE);
            for (long line = 1; line < linesPerNode; line++) {
                sum += t.objectMemory().getLong(counterOffset(t, line));
            }
        }
        return sum;
    }

    /** Where line {@code line}'s counter is in {@code t}'s object memory. */
    public static int counterOffset(final Table t, final long line) {
        return GclRegion.lineOffset(t, line) + ObjectLayout.VALUE_OFFSET + COUNTER;
    }

    /**
     * The run's outcome: writes completed against the memory nodes' counters, hit ratio (SELCC: accesses whose
     * lock the frame's memo allowed with no global step), global acquisitions (latch verbs, retries included) and
     * invalidation messages (resends included) per access, accesses by node and Jain's index over them; a
     * {@code violations} array when the counters do not add up.
     */
    public JsonObject checked() {
        final long[] after = LineCache.totals();
        final long hits = after[0] - before[0];
        final long acquires = after[1] - before[1];
        final long sent = after[2] - before[2];
        final long counted = counted();
        final long accessed = accesses.get();
        final long written = writes.get();
        final JsonObject o = new JsonObject().put("writes", written).put("counters_sum", counted)
            .put("hit_ratio", round(hits / (double) Math.max(1, accessed)))
            .put("acquisitions_per_access", round(acquires / (double) Math.max(1, accessed)))
            .put("invalidations_per_access", round(sent / (double) Math.max(1, accessed)));
        if (!byNode.isEmpty()) {
            double sum = 0;
            double squares = 0;
            for (final long n : byNode.values()) {
                sum += n;
                squares += (double) n * n;
            }
            o.put("accesses_by_node", new JsonArray(new ArrayList<>(byNode.values())))
                .put("jain", round(sum * sum / (byNode.size() * squares)));
        }
        if (counted != written) {
            o.put("violations", new JsonArray().add("the memory nodes' counters add up to " + counted + ", "
                + written + " writes completed"));
        }
        return o;
    }

    private static double round(final double v) {
        return Math.round(v * 1000) / 1000.0;
    }

    /** A client's access stream: its last line (locality). Confined to the client's loop. */
    public static final class Client {
        private long last = -1;
    }

    /**
     * The accesses of {@code cns} compute nodes of {@code loopsPerCn} loops on this spec's lines by the knobs in the
     * class doc, through {@code kind}'s GCL layer ({@code selcc} or {@code sel}, {@link #kind}).
     */
    public Accesses accesses(final String kind, final int cns, final int loopsPerCn, final int memoryNodes,
                             final double readRatio, final double theta, final double sharing, final double locality,
                             final long holdNs) {
        return new Accesses(kind, cns, loopsPerCn, memoryNodes, readRatio, theta, sharing, locality, holdNs);
    }

    /** How accesses are drawn and run (immutable once made: shared by every client and loop). */
    public final class Accesses {
        private final String kind;
        private final int loopsPerCn;
        private final int memoryNodes;
        private final double readRatio;
        private final double sharing;
        private final double locality;
        private final long holdNs;
        private final long shared;
        private final long privatePerCn;
        private final Zipf sharedZipf;
        private final Zipf privateZipf;
        private final long sharedMultiplier;
        private final long privateMultiplier;

        private Accesses(final String kind, final int cns, final int loopsPerCn, final int memoryNodes,
                         final double readRatio, final double theta, final double sharing, final double locality,
                         final long holdNs) {
            if (!(sharing >= 0 && sharing <= 1) || !(locality >= 0 && locality <= 1) || !(readRatio >= 0
                && readRatio <= 1)) {
                throw new IllegalArgumentException("--sharing-ratio " + sharing + ", --locality " + locality
                    + ", read ratio " + readRatio + ": each must be in [0, 1]");
            }
            this.kind = kind;
            this.loopsPerCn = loopsPerCn;
            this.memoryNodes = memoryNodes;
            this.readRatio = readRatio;
            this.sharing = sharing;
            this.locality = locality;
            this.holdNs = holdNs;
            final long lines = lines(memoryNodes);
            this.shared = Math.round(sharing * lines);
            this.privatePerCn = (lines - shared) / cns;
            if (sharing > 0 && shared < 1) {
                throw new IllegalArgumentException("--sharing-ratio " + sharing + " of " + lines + " lines shares "
                    + "none: give more lines or a larger ratio (or 0)");
            }
            if (sharing < 1 && privatePerCn < 1) {
                throw new IllegalArgumentException("--sharing-ratio " + sharing + " leaves " + (lines - shared)
                    + " private lines for " + cns + " compute nodes: give --records more lines");
            }
            this.sharedZipf = theta > 0 && shared > 0 ? new Zipf((int) Math.min(Integer.MAX_VALUE, shared), theta)
                : null;
            this.privateZipf = theta > 0 && privatePerCn > 0 ? new Zipf((int) Math.min(Integer.MAX_VALUE,
                privatePerCn), theta) : null;
            this.sharedMultiplier = Zipf.scatterMultiplier(Math.max(1, shared));
            this.privateMultiplier = Zipf.scatterMultiplier(Math.max(1, privatePerCn));
        }

        /**
         * Client {@code c}'s next access on {@code runtime}'s loop (its compute node from the loop's number), drawn
         * from {@code random}; completes with its latency in {@code runtime}'s time.
         */
        public Future<Long> next(final Client c, final TxnRuntime runtime, final SplittableRandom random) {
            final Gcl gcl = Gcl.of(kind, runtime);
            accesses.incrementAndGet();
            final int cn = (runtime.peerLoops().number() - 1) / loopsPerCn;
            final long start = runtime.timers().nowNs();
            final long line;
            if (c.last >= 0 && random.nextDouble() < locality) {
                line = c.last;
            } else if (privatePerCn < 1 || random.nextDouble() < sharing) {
                line = pick(random, sharedZipf, shared, sharedMultiplier);
            } else {
                line = shared + (long) cn * privatePerCn + pick(random, privateZipf, privatePerCn,
                    privateMultiplier);
            }
            c.last = line;
            // line g of all: memory node g % MNs, its line 1 + g / MNs (line 0 is the allocator's header)
            final long gaddr = gcl.region().pointer((int) (line % memoryNodes), 1 + line / memoryNodes);
            if (random.nextDouble() < readRatio) {
                return gcl.sLock(gaddr).compose(h -> held(runtime, h)).map(h -> {
                    h.data().getLong(COUNTER);
                    gcl.unlock(h);
                    byNode.merge(cn, 1L, Long::sum);
                    return runtime.timers().nowNs() - start;
                });
            }
            return gcl.xLock(gaddr).compose(h -> held(runtime, h)).compose(h -> {
                h.data().putLong(COUNTER, h.data().getLong(COUNTER) + 1);
                h.written(COUNTER, 8);
                return gcl.unlockWritten(h);
            }).map(v -> {
                writes.incrementAndGet();
                byNode.merge(cn, 1L, Long::sum);
                return runtime.timers().nowNs() - start;
            });
        }

        /** {@code h} once it was held {@code holdNs} (at once when 0). */
        private Future<Gcl.Handle> held(final TxnRuntime runtime, final Gcl.Handle h) {
            return holdNs <= 0 ? Future.succeededFuture(h) : runtime.timers().after(holdNs).map(h);
        }
    }

    private static long pick(final SplittableRandom random, final Zipf zipf, final long n, final long multiplier) {
        return zipf != null ? Zipf.scatter(zipf.next(random), n, multiplier) : random.nextLong(n);
    }
}
