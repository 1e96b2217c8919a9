package io.scythe.sim;

import io.scythe.bench.workload.Zipf;
import io.scythe.storage.LogDb;
import io.scythe.storage.ObjectLayout;
import io.scythe.storage.Table;
import io.scythe.txn.selcc.Gcl;
import io.scythe.txn.selcc.GclRegion;
import io.scythe.txn.selcc.LineCache;
import io.vertx.core.Future;
import io.vertx.core.json.JsonObject;

import java.util.ArrayList;
import java.util.IdentityHashMap;
import java.util.Map;
import java.util.SplittableRandom;

/**
 * GAM's micro-benchmark as SELCC §7.1 runs it (Figs. 12-15; issue 21's {@code --workload gcl}): clients access global
 * cache lines by address, no index: a read takes the line Shared ({@code SELCC_SLock}), reads its counter and lets it
 * go; a write takes it Exclusive, adds one to the counter and lets it go ({@code SELCC_XUnlock}: lazily on SELCC,
 * written back and released at once on SEL). The knobs are the paper's:
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
 * memory nodes' counters (every cached copy flushed by the drain's lease) must add up to exactly that count: a lost
 * or doubled write fails the run.
 */
public final class GclSim {
    /** A line's counter: its first data word. */
    static final int COUNTER = 0;

    private GclSim() {
    }

    /** Memory nodes' regions of lines, all of them taken (the allocator hands none out), counters zero. */
    public static final class Spec extends OperationSpec {
        private final long linesPerNode;
        private final int lineBytes;
        /** Writes completed (each added one to its line's counter), and accesses begun. */
        long writes;
        long accesses;
        /** Accesses completed by compute node (fairness, SELCC Fig. 15a). */
        final java.util.TreeMap<Integer, Long> byNode = new java.util.TreeMap<>();
        private long[] before;
        private long[] after;

        /** {@code lines} lines in all (split evenly over the memory nodes) of {@code lineBytes} each, header included. */
        public Spec(final long lines, final int lineBytes, final int memoryNodes) {
            if (lines < memoryNodes || memoryNodes < 1) {
                throw new IllegalArgumentException("--records " + lines + ": the gcl workload needs at least one line "
                    + "per memory node (" + memoryNodes + ")");
            }
            this.linesPerNode = (lines + memoryNodes - 1) / memoryNodes + 1; // + the allocator's header line
            this.lineBytes = lineBytes;
        }

        /** Lines in all, the header lines not counted. */
        long lines(final int memoryNodes) {
            return (linesPerNode - 1) * memoryNodes;
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



        /** The sum of every line's counter as the memory nodes hold it (after the run: every copy flushed). */
        public long counted() {
            long sum = 0;
            for (final LogDb db : dbs) {
                final Table t = db.table(GclRegion.TABLE);
                for (long line = 1; line < linesPerNode; line++) {
                    sum += t.objectMemory().getLong(GclRegion.lineOffset(t, line) + ObjectLayout.VALUE_OFFSET
                        + COUNTER);
                }
            }
            return sum;
        }

        /**
         * The run's outcome: writes completed against the memory nodes' counters, hit ratio (SELCC: accesses whose
         * lock the frame's memo allowed with no global step), global acquisitions (latch verbs, retries included) and
         * invalidation messages (resends included) per access.
         */
        public JsonObject checked() {
            after = LineCache.totals();
            final long hits = after[0] - before[0];
            final long acquires = after[1] - before[1];
            final long sent = after[2] - before[2];
            final long counted = counted();
            final JsonObject o = new JsonObject().put("writes", writes).put("counters_sum", counted)
                .put("hit_ratio", round(hits / (double) Math.max(1, accesses)))
                .put("acquisitions_per_access", round(acquires / (double) Math.max(1, accesses)))
                .put("invalidations_per_access", round(sent / (double) Math.max(1, accesses)));
            if (!byNode.isEmpty()) {
                double sum = 0;
                double squares = 0;
                for (final long n : byNode.values()) {
                    sum += n;
                    squares += (double) n * n;
                }
                o.put("accesses_by_node", new io.vertx.core.json.JsonArray(new ArrayList<>(byNode.values())))
                    .put("jain", round(sum * sum / (byNode.size() * squares)));
            }
            if (counted != writes) {
                o.put("violations", new io.vertx.core.json.JsonArray().add("the memory nodes' counters add up to "
                    + counted + ", " + writes + " writes completed"));
            }
            return o;
        }

        private static double round(final double v) {
            return Math.round(v * 1000) / 1000.0;
        }
    }

    /** A client's last line (locality). */
    private static final class Client {
        long last = -1;
    }

    /**
     * The accesses of {@code cns} compute nodes of {@code loopsPerCn} loops on {@code spec}'s lines, by the knobs in
     * the class doc; {@code kind} is the GCL layer ({@code selcc} or {@code sel}, {@link TreeSim#kind}).
     */
    public static Simulation.Operation accesses(final Spec spec, final String kind, final int cns, final int loopsPerCn,
                                                final int memoryNodes, final double readRatio, final double theta,
                                                final double sharing, final double locality, final long holdNs) {
        if (!(sharing >= 0 && sharing <= 1) || !(locality >= 0 && locality <= 1) || !(readRatio >= 0
            && readRatio <= 1)) {
            throw new IllegalArgumentException("--sharing-ratio " + sharing + ", --locality " + locality
                + ", read ratio " + readRatio + ": each must be in [0, 1]");
        }
        final long lines = spec.lines(memoryNodes);
        final long shared = Math.round(sharing * lines);
        final long privatePerCn = (lines - shared) / cns;
        if (sharing > 0 && shared < 1) {
            throw new IllegalArgumentException("--sharing-ratio " + sharing + " of " + lines + " lines shares none: "
                + "give more lines or a larger ratio (or 0)");
        }
        if (sharing < 1 && privatePerCn < 1) {
            throw new IllegalArgumentException("--sharing-ratio " + sharing + " leaves " + (lines - shared)
                + " private lines for " + cns + " compute nodes: give --records more lines");
        }
        final Zipf sharedZipf = theta > 0 && shared > 0 ? new Zipf((int) Math.min(Integer.MAX_VALUE, shared), theta)
            : null;
        final Zipf privateZipf = theta > 0 && privatePerCn > 0 ? new Zipf((int) Math.min(Integer.MAX_VALUE,
            privatePerCn), theta) : null;
        final long sharedMultiplier = TreeSim.scatterMultiplier(Math.max(1, shared));
        final long privateMultiplier = TreeSim.scatterMultiplier(Math.max(1, privatePerCn));
        final Map<SplittableRandom, Client> clients = new IdentityHashMap<>();
        return (runtime, random) -> {
            final Gcl gcl = Gcl.of(kind, runtime);
            final Client c = clients.computeIfAbsent(random, r -> new Client());
            spec.accesses++;
            final int cn = (runtime.peerLoops().number() - 1) / loopsPerCn;
            final long start = runtime.timers().nowNs();
            final long line;
            if (c.last >= 0 && random.nextDouble() < locality) {
                line = c.last;
            } else if (privatePerCn < 1 || random.nextDouble() < sharing) {
                line = pick(random, sharedZipf, shared, sharedMultiplier);
            } else {
                line = shared + (long) cn * privatePerCn + pick(random, privateZipf, privatePerCn, privateMultiplier);
            }
            c.last = line;
            // line g of all: memory node g % MNs, its line 1 + g / MNs (line 0 is the allocator's header)
            final long gaddr = gcl.region().pointer((int) (line % memoryNodes), 1 + line / memoryNodes);
            if (random.nextDouble() < readRatio) {
                return gcl.sLock(gaddr).compose(h -> held(runtime, holdNs, h)).map(h -> {
                    h.data().getLong(COUNTER);
                    gcl.unlock(h);
                    spec.byNode.merge(cn, 1L, Long::sum);
                    return runtime.timers().nowNs() - start;
                });
            }
            return gcl.xLock(gaddr).compose(h -> held(runtime, holdNs, h)).compose(h -> {
                h.data().putLong(COUNTER, h.data().getLong(COUNTER) + 1);
                h.written(COUNTER, 8);
                return gcl.unlockWritten(h);
            }).map(v -> {
                spec.writes++;
                spec.byNode.merge(cn, 1L, Long::sum);
                return runtime.timers().nowNs() - start;
            });
        };
    }

    /** {@code h} once it was held {@code holdNs} (at once when 0). */
    private static Future<Gcl.Handle> held(final io.scythe.txn.TxnRuntime runtime, final long holdNs,
                                           final Gcl.Handle h) {
        return holdNs <= 0 ? Future.succeededFuture(h) : runtime.timers().after(holdNs).map(h);
    }

    private static long pick(final SplittableRandom random, final Zipf zipf, final long n, final long multiplier) {
        return zipf != null ? TreeSim.scatter(zipf.next(random), n, multiplier) : random.nextLong(n);
    }
}
