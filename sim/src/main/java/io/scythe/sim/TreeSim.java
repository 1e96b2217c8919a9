package io.scythe.sim;

import io.scythe.bench.workload.OperationSpec;
import io.scythe.bench.workload.Zipf;
import io.scythe.storage.LogDb;
import io.scythe.storage.ObjectLayout;
import io.scythe.storage.Table;
import io.scythe.txn.TxnRuntime;
import io.scythe.txn.selcc.BLinkTree;
import io.scythe.txn.selcc.Gcl;
import io.scythe.txn.selcc.GclRegion;
import io.scythe.txn.selcc.GlobalPointer;
import io.vertx.core.Future;
import io.vertx.core.json.JsonObject;
import org.agrona.DirectBuffer;
import org.agrona.concurrent.UnsafeBuffer;

import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.TreeMap;

/**
 * SELCC's B-link tree in virtual time (SELCC §7.2, Fig. 17): a tree of {@code records} keys (0, 2, 4, ...: odd keys
 * are free for inserts) bulk-loaded into the memory nodes' GCL regions, and clients running YCSB operations through
 * it: a lookup with probability {@code readRatio}, else an update of the key's value, keys drawn by Zipf(theta) (0:
 * uniform). The tree runs on SELCC's cache ({@code selcc-2pl} chosen as the protocol: {@link Gcl#selcc}) or on the
 * SEL baseline ({@code sel-2pl}: {@link Gcl#sel}). One operation is one index operation (the figure's unit).
 */
public final class TreeSim {
    /** Values of 8 bytes: a counter (YCSB updates) or the key's model value. */
    public static final int VALUE_BYTES = 8;
    /** How full the bulk load leaves nodes. */
    public static final double FILL = 0.7;
    private static final TxnRuntime.Key<BLinkTree> TREE = new TxnRuntime.Key<>("selcc-tree-sim");
    /** A loop's timestamped tree ({@code selcc-to}: {@link BLinkTree.OrderedTxn}). */
    private static final TxnRuntime.Key<BLinkTree> TIMESTAMPED = new TxnRuntime.Key<>("selcc-tree-sim-to");

    private TreeSim() {
    }

    /** Which GCL layer a protocol name stands for: sel-2pl the SEL baseline, any other SELCC. */
    public static String kind(final String protocol) {
        return io.scythe.bench.workload.GclSpec.kind(protocol);
    }

    static BLinkTree tree(final TxnRuntime runtime, final String kind) {
        return runtime.extension(TREE, r -> new BLinkTree(Gcl.of(kind, r), VALUE_BYTES));
    }

    static BLinkTree timestampedTree(final TxnRuntime runtime, final String kind) {
        return runtime.extension(TIMESTAMPED, r -> new BLinkTree(Gcl.of(kind, r), VALUE_BYTES, true));
    }

    /** Whether {@code protocol} runs the tree's transactions by timestamp ordering ({@link BLinkTree.OrderedTxn}). */
    public static boolean ordered(final String protocol) {
        return protocol.endsWith("-to");
    }

    /** The tree loaded into the memory nodes' GCL regions; the memory nodes are kept for end-of-run checks. */
    public static class Spec extends OperationSpec {
        private final long records;
        private final int lineBytes;
        private final long lines;
        private final double fill;
        /** Bytes at each leaf's end the bulk load leaves free ({@link BLinkTree#reserve}: a TO run's timestamps). */
        private int reserve;

        /**
         * {@code records} keys in lines of {@code lineBytes} (slot bytes; the paper's 2 KB by default), leaves and
         * internal nodes filled to {@code fill}, regions of {@code lines} lines per memory node.
         */
        public Spec(final long records, final int lineBytes, final long lines, final double fill) {
            if (records < 1 || !(fill > 0 && fill <= 1)) {
                throw new IllegalArgumentException("records=" + records + " fill=" + fill);
            }
            this.records = records;
            this.lineBytes = lineBytes;
            this.lines = lines;
            this.fill = fill;
            checkLineBytes(lineBytes, false);
        }

        /**
         * Refuses {@code lineBytes} too small for the tree's nodes ({@link BLinkTree#checkRoom}; {@code timestamped}:
         * TO's leaves keep {@link BLinkTree#TIMESTAMP_BYTES} more), before anything is loaded or run.
         */
        public static void checkLineBytes(final int lineBytes, final boolean timestamped) {
            try {
                BLinkTree.checkRoom(lineBytes - ObjectLayout.HEADER_BYTES, VALUE_BYTES, timestamped);
            } catch (final IllegalArgumentException e) {
                throw new IllegalArgumentException("--line-bytes " + lineBytes + " is too small for the tree"
                    + (timestamped ? " of a TO run (selcc-to)" : "") + ": at least " + (ObjectLayout.HEADER_BYTES
                    + BLinkTree.minDataBytes(VALUE_BYTES, timestamped)) + " (" + ObjectLayout.HEADER_BYTES
                    + " bytes of line header; " + e.getMessage() + ")", e);
            }
        }

        /**
         * A tree of {@code records} keys in lines of {@code lineBytes}, nodes filled to 70 % (room to insert), regions
         * of twice the bulk-loaded nodes per memory node plus 4096 lines.
         */
        public static Spec sized(final long records, final int lineBytes, final int memoryNodes) {
            final int leaf = (lineBytes - ObjectLayout.HEADER_BYTES - 24) / (8 + VALUE_BYTES);
            final long leaves = records / Math.max(1, (long) (leaf * FILL)) + 1;
            return new Spec(records, lineBytes, 2 * (leaves + leaves / 4) / memoryNodes + 4096, FILL);
        }

        public long records() {
            return records;
        }

        /** Bulk-loads leaves with room for TO's timestamps when {@code timestamped} ({@code selcc-to}). */
        public Spec timestamped(final boolean timestamped) {
            checkLineBytes(lineBytes, timestamped);
            this.reserve = BLinkTree.reserve(timestamped);
            return this;
        }

        @Override
        protected String operations() {
            return "index operations";
        }

        @Override
        public String name() {
            return "blink";
        }


        @Override
        public JsonObject params() {
            return new JsonObject().put("records", records).put("line_bytes", lineBytes).put("lines", lines)
                .put("fill", fill);
        }

        @Override
        public void load(final LogDb db, final int part, final int parts) {
            keep(db, part);
            final Table t = GclRegion.load(db, lineBytes - ObjectLayout.HEADER_BYTES, lines, BLinkTree.FIRST_NODE_LINE);
            final long firstFree = BLinkTree.bulkLoad(t, part, parts, records, i -> 2 * i,
                i -> initialValue(2 * i), VALUE_BYTES, fill, reserve);
            t.objectMemory().putLong(GclRegion.lineOffset(t, GclRegion.HEADER_LINE) + ObjectLayout.VALUE_OFFSET,
                firstFree);
        }



        /** The tree as the memory nodes hold it (after the run: every copy flushed), checked ({@link Walk}). */
        public Walk walk() {
            return new Walk(dbs);
        }
    }

    /** The tree after a run: height, nodes, keys, invariant violations, latches left set. */
    public static JsonObject describe(final Spec spec) {
        final Walk w = spec.walk();
        return new JsonObject().put("height", w.height).put("nodes", w.nodes).put("keys", w.leaves.size())
            .put("violations", new io.vertx.core.json.JsonArray(w.violations.subList(0, Math.min(5,
                w.violations.size())))).put("latches_held", w.latchesHeld());
    }

    static DirectBuffer initialValue(final long key) {
        final UnsafeBuffer v = new UnsafeBuffer(new byte[VALUE_BYTES]);
        v.putLong(0, key * 10);
        return v;
    }

    /**
     * YCSB through the tree: lookups with probability {@code readRatio}, else updates; Zipf(theta) ranks scattered
     * over the key space ({@link Zipf#scatter}: as YCSB's scrambled Zipfian and Sherman's hashed keys, so the hot keys are
     * not all in the first leaves).
     */
    public static Simulation.Operation ycsb(final Spec spec, final String kind, final double readRatio,
                                            final double theta) {
        final Zipf zipf = theta > 0 ? new Zipf((int) spec.records(), theta) : null;
        final long records = spec.records();
        final long multiplier = Zipf.scatterMultiplier(records);
        return (runtime, random) -> {
            final BLinkTree tree = tree(runtime, kind);
            final long start = runtime.timers().nowNs();
            final long key = 2L * (zipf != null ? Zipf.scatter(zipf.next(random), records, multiplier)
                : random.nextLong(records));
            final Future<Boolean> op;
            if (random.nextDouble() < readRatio) {
                op = tree.lookup(key, new UnsafeBuffer(new byte[VALUE_BYTES]));
            } else {
                final UnsafeBuffer v = new UnsafeBuffer(new byte[VALUE_BYTES]);
                v.putLong(0, random.nextLong());
                op = tree.update(key, v);
            }
            return op.compose(found -> found ? Future.succeededFuture(runtime.timers().nowNs() - start)
                : Future.failedFuture(new IllegalStateException("YCSB key " + key + " not in the tree")));
        };
    }

    /**
     * Transactions through the tree (issue 21, {@code --blink-txn N}): each draws {@code ops} keys over the whole key
     * space {@code [0, 2 records)} (bulk-loaded even keys, absent odd ones) by Zipf(theta), in ascending order, and
     * runs on each a lookup with probability {@code readRatio}, else an insert, a delete or an update (a third each);
     * one that writes aborts itself one time in ten after its operations (its writes must leave no trace). Every
     * commit is noted in {@code ledger} at its commit point with its operations' answers, for {@link Ledger#check}.
     */
    public static Simulation.Operation transactions(final Spec spec, final String protocol, final double readRatio,
                                                    final double theta, final int ops, final Ledger ledger) {
        if (ops < 1) {
            throw new IllegalArgumentException("--blink-txn " + ops + ": a transaction needs at least one operation");
        }
        checkTransactional(List.of(protocol));
        if (ordered(protocol) && spec.reserve == 0) {
            throw new IllegalArgumentException(protocol + " runs TO through the tree: its spec must be timestamped "
                + "(Spec#timestamped), the leaves' timestamps room reserved by the bulk load");
        }
        return operations(spec, kind(protocol), Mode.of(protocol), readRatio, theta, ops, false, ledger);
    }

    /**
     * Single tree operations (no transaction: {@link BLinkTree}'s lookup, insert, delete, update), each drawn as a
     * one-key transaction of {@link #transactions} and noted in {@code ledger} as a one-operation commit at its
     * linearization point ({@link BLinkTree.Point}: its leaf latched, its answer known), answered when it completes;
     * so the serial replay checks them, and under a crash a dead node's operation noted but not answered is in doubt.
     */
    public static Simulation.Operation singleOperations(final Spec spec, final String kind, final double readRatio,
                                                        final double theta, final Ledger ledger) {
        return operations(spec, kind, Mode.TWO_PL, readRatio, theta, 1, true, ledger);
    }

    /** One operation noted at its point (see {@link #singleOperations}). */
    private static Future<Void> single(final BLinkTree tree, final long key, final int what,
                                       final java.util.SplittableRandom random, final Ledger ledger) {
        final long[] values = new long[1];
        final boolean[] answers = new boolean[1];
        final Ledger.Entry[] entry = new Ledger.Entry[1];
        final UnsafeBuffer b = new UnsafeBuffer(new byte[VALUE_BYTES]);
        final BLinkTree.Point point = answer -> {
            answers[0] = answer;
            if (what == Ledger.LOOKUP) {
                values[0] = answer ? b.getLong(0) : 0;
            }
            // a single insert of a present key replaces its value (a transaction's changes nothing): an update then
            final boolean replaced = what == Ledger.INSERT && !answer;
            answers[0] = answer || replaced;
            entry[0] = ledger.commit(new long[] {key}, new int[] {replaced ? Ledger.UPDATE : what}, values, answers);
        };
        final Future<Boolean> op;
        switch (what) {
            case Ledger.LOOKUP:
                op = tree.lookup(key, b, point);
                break;
            case Ledger.INSERT:
                b.putLong(0, values[0] = random.nextLong());
                op = tree.insert(key, b, point);
                break;
            case Ledger.DELETE:
                op = tree.delete(key, point);
                break;
            default:
                b.putLong(0, values[0] = random.nextLong());
                op = tree.update(key, b, point);
        }
        return op.transform(r -> {
            if (entry[0] != null) {
                if (r.failed() && ledger.crashes) {
                    // after its point, failed by the crash (the dead node's own, its peer messaging closed: seed 50
                    // of the selcc-2pl crash sweep): never acknowledged, so in doubt, judged all or nothing
                    return Future.failedFuture(r.cause());
                } else if (r.failed()) {
                    entry[0].failed = r.cause().toString();
                } else {
                    entry[0].answered = true;
                }
            }
            return r.failed() ? Future.failedFuture(r.cause()) : Future.succeededFuture();
        });
    }

    /** How transactions run through the tree: strict 2PL, OCC or TO on the leaves. */
    private enum Mode {
        TWO_PL, OCC, TO;

        static Mode of(final String protocol) {
            return optimistic(protocol) ? OCC : ordered(protocol) ? TO : TWO_PL;
        }
    }

    private static Simulation.Operation operations(final Spec spec, final String kind, final Mode mode,
                                                   final double readRatio, final double theta, final int ops,
                                                   final boolean single, final Ledger ledger) {
        final long space = 2 * spec.records();
        final Zipf zipf = theta > 0 ? new Zipf((int) Math.min(Integer.MAX_VALUE, space), theta) : null;
        final long multiplier = Zipf.scatterMultiplier(space);
        return (runtime, random) -> {
            final BLinkTree tree = mode == Mode.TO ? timestampedTree(runtime, kind) : tree(runtime, kind);
            final long start = runtime.timers().nowNs();
            final long[] keys = new long[ops];
            final int[] what = new int[ops];
            boolean writes = false;
            for (int i = 0; i < ops; i++) {
                keys[i] = zipf != null ? Zipf.scatter(zipf.next(random), space, multiplier) : random.nextLong(space);
            }
            java.util.Arrays.sort(keys);
            for (int i = 0; i < ops; i++) {
                what[i] = random.nextDouble() < readRatio ? Ledger.LOOKUP : 1 + random.nextInt(3);
                writes |= what[i] != Ledger.LOOKUP;
            }
            if (single) {
                return single(tree, keys[0], what[0], random, ledger).map(v -> runtime.timers().nowNs() - start);
            }
            final boolean abort = writes && random.nextInt(10) == 0;
            return attempt(tree, mode, runtime, writes, abort, keys, what, random, ledger, 1)
                .map(v -> runtime.timers().nowNs() - start);
        };
    }

    /** How many attempts an optimistic transaction through the tree gets before its run reports an error. */
    static final int MAX_ATTEMPTS = 10_000;

    /**
     * One attempt of a transaction through the tree: under 2PL ({@link BLinkTree.Txn}) it commits or fails; under OCC
     * ({@link BLinkTree.OptimisticTxn}) a failed validation is retried (same keys and kinds, fresh values), each retry
     * counted in {@link Ledger#validationAborts}.
     */
    private static Future<Void> attempt(final BLinkTree tree, final Mode mode, final TxnRuntime runtime,
                                        final boolean writes, final boolean abort, final long[] keys, final int[] what,
                                        final java.util.SplittableRandom random, final Ledger ledger,
                                        final int attempt) {
        final Attempt begun = Attempt.of(tree, mode, runtime, writes);
        final BLinkTree.Operations txn = begun.ops();
        final int ops = keys.length;
        final long[] values = new long[ops];
        final boolean[] answers = new boolean[ops];
        Future<Void> done = Future.succeededFuture();
        for (int i = 0; i < ops; i++) {
            final int at = i;
            done = done.compose(v -> {
                final UnsafeBuffer b = new UnsafeBuffer(new byte[VALUE_BYTES]);
                final Future<Boolean> op;
                switch (what[at]) {
                    case Ledger.LOOKUP:
                        op = txn.lookup(keys[at], b);
                        break;
                    case Ledger.INSERT:
                        b.putLong(0, values[at] = random.nextLong());
                        op = txn.insert(keys[at], b);
                        break;
                    case Ledger.DELETE:
                        op = txn.delete(keys[at]);
                        break;
                    default:
                        b.putLong(0, values[at] = random.nextLong());
                        op = txn.update(keys[at], b);
                }
                return op.map(found -> {
                    answers[at] = found;
                    if (what[at] == Ledger.LOOKUP) {
                        values[at] = found ? b.getLong(0) : 0;
                    }
                    return null;
                });
            });
        }
        return done.transform(ar -> {
            if (ar.failed() && mode != Mode.TWO_PL && refused(ar.cause())) { // TO refuses while it reads
                txn.abort();
                return retried(tree, mode, runtime, writes, abort, keys, what, random, ledger, attempt, ar.cause());
            }
            if (ar.failed() || abort) {
                txn.abort();
                if (ar.failed()) {
                    return Future.failedFuture(ar.cause());
                }
                ledger.aborted++;
                return Future.succeededFuture();
            }
            final Ledger.Entry[] entry = new Ledger.Entry[1];
            return begun.commit().apply(order -> { // every latch it needs held: its place in the serial order
                entry[0] = ledger.commit(keys, what, values, answers);
                entry[0].order = order;
            }).transform(c -> {
                if (c.failed() && entry[0] == null && mode != Mode.TWO_PL && refused(c.cause())) {
                    return retried(tree, mode, runtime, writes, abort, keys, what, random, ledger, attempt,
                        c.cause());
                }
                if (c.failed()) {
                    if (entry[0] != null) {
                        entry[0].failed = c.cause().toString();
                    }
                    return Future.failedFuture(c.cause());
                }
                entry[0].answered = true;
                return Future.succeededFuture();
            });
        });
    }

    private static boolean refused(final Throwable cause) {
        return cause instanceof io.scythe.txn.AbortException
            && ((io.scythe.txn.AbortException) cause).reason() == io.scythe.txn.AbortReason.VALIDATION;
    }

    /**
     * An OCC or TO attempt refused (validation, timestamp order): counted and run again after a random back-off, up
     * to a bound.
     */
    private static Future<Void> retried(final BLinkTree tree, final Mode mode, final TxnRuntime runtime,
                                        final boolean writes, final boolean abort, final long[] keys, final int[] what,
                                        final java.util.SplittableRandom random, final Ledger ledger,
                                        final int attempt, final Throwable cause) {
        ledger.validationAborts++;
        if (attempt >= MAX_ATTEMPTS) {
            return Future.failedFuture(new IllegalStateException("a B-link transaction was refused " + attempt
                + " times: " + cause.getMessage()));
        }
        // Backed off as the coordinator backs off an aborted attempt (Coordinator#backoffBoundNs), never at once:
        // under TO, read-then-write transactions of one leaf retried at once refuse each other forever (each new
        // timestamp's read raises the leaf's rts past the other's write), in a deterministic run in lockstep; selcc-to
        // seed 2 with 8 frames (BLinkTreeSimTest) ran 5 such transactions for the whole 1 s drain, a 144 us cycle.
        return runtime.timers().after(1 + random.nextLong(io.scythe.txn.Coordinator.backoffBoundNs(attempt)))
            .compose(v -> attempt(tree, mode, runtime, writes, abort, keys, what, random, ledger, attempt + 1));
    }

    /**
     * One attempt through the tree under 2PL, OCC or TO: its operations, and its commit, which tells its place in the
     * serial order once decided (the commit order under 2PL and OCC, {@link Ledger#IN_COMMIT_ORDER}; the timestamp
     * under TO).
     */
    private record Attempt(BLinkTree.Operations ops,
                           java.util.function.Function<java.util.function.LongConsumer, Future<Void>> commit) {
        static Attempt of(final BLinkTree tree, final Mode mode, final TxnRuntime runtime, final boolean writes) {
            if (mode == Mode.OCC) {
                final BLinkTree.OptimisticTxn t = tree.beginOptimistic();
                return new Attempt(t, point -> t.commit(() -> point.accept(Ledger.IN_COMMIT_ORDER)));
            }
            if (mode == Mode.TO) {
                final BLinkTree.OrderedTxn t = tree.beginOrdered(() -> runtime.tso().next());
                return new Attempt(t, point -> t.commit(() -> point.accept(t.timestampOr(Ledger.IN_COMMIT_ORDER))));
            }
            final BLinkTree.Txn t = tree.begin(writes);
            return new Attempt(t, point -> {
                point.accept(Ledger.IN_COMMIT_ORDER); // strict 2PL: every latch is held now
                return t.commit();
            });
        }
    }

    /**
     * The protocols whose transactions run through the tree: 2PL on the leaves over SELCC's cache or SEL, OCC and TO
     * over SELCC's cache. Each survives a compute-node crash in recoverable runs (a commit's redo record, ordered
     * write-throughs: issue 21).
     */
    public static final List<String> TRANSACTIONAL = List.of("selcc-2pl", "sel-2pl", "selcc-occ", "selcc-to");

    /** Whether {@code protocol} runs the tree's transactions optimistically ({@link BLinkTree.OptimisticTxn}). */
    public static boolean optimistic(final String protocol) {
        return protocol.endsWith("-occ");
    }

    /** Refuses a protocol whose transactions do not run through the tree. */
    public static void checkTransactional(final List<String> protocols) {
        for (final String p : protocols) {
            if (!TRANSACTIONAL.contains(p)) {
                throw new IllegalArgumentException("transactions through the B-link tree (--blink-txn, --explore "
                    + "--workload blink) run 2PL, OCC or TO on its leaves: protocols " + TRANSACTIONAL + ", not " + p
                    + " (issue 21: SEL's OCC and TO are not built)");
            }
        }
    }

    /** The ledger's outcome after a run: commits, self-aborts, applied operations, the serial replay's violations. */
    public static JsonObject checked(final Ledger ledger, final Spec spec) {
        final long[] applied = ledger.applied();
        return new JsonObject().put("committed", ledger.committed()).put("in_doubt", ledger.inDoubt())
            .put("aborted_by_themselves", ledger.aborted).put("validation_aborts", ledger.validationAborts)
            .put("lookups", applied[Ledger.LOOKUP]).put("inserted", applied[Ledger.INSERT])
            .put("deleted", applied[Ledger.DELETE]).put("updated", applied[Ledger.UPDATE])
            .put("violations", new io.vertx.core.json.JsonArray(ledger.check(spec)));
    }

    /** What the explorer's blink seeds run: 100 keys on 136-byte lines (3 entries a leaf), 4 keys a transaction. */
    public static final String EXPLORED = "--workload blink --records 100 --line-bytes 136 --blink-txn 4 "
        + "--write-ratio 0.7 --theta 0.9";
    /**
     * The explorer's lines under TO ({@code selcc-to}): 3 entries a leaf beside its 16 bytes of timestamps, as the
     * others' 136-byte lines hold 3 entries.
     */
    public static final int TIMESTAMPED_LINE_BYTES = 152;
    /** The explorer's keys a transaction unless {@code --blink-txn N} says otherwise. */
    public static final int EXPLORED_OPS = 4;
    /** {@link #check}'s {@code ops} for single tree operations instead of transactions ({@code --blink-single}). */
    public static final int SINGLE = 0;

    /**
     * The protocols {@code --explore --workload blink} runs: {@code protocols}, or when the command line named none
     * (the default list) the tree's ({@link #TRANSACTIONAL}); refused clearly when they cannot run transactions
     * through the tree.
     */
    public static List<String> explored(final List<String> protocols) {
        final List<String> explored = protocols.equals(List.of("scythe", "ford-occ", "farm-occ"))
            ? TRANSACTIONAL : protocols;
        checkTransactional(explored);
        return explored;
    }

    /**
     * One explorer seed of transactions through the tree ({@link #EXPLORED}, {@code ops} keys a transaction) under
     * {@code o} (the explorer's options of {@link Explorer.Workload#BLINK}, with whatever the command line changed):
     * the run's invariants and its ledger's serial replay ({@link Ledger#check}), a crash's commits in doubt judged
     * all or nothing ({@link Ledger#crashes}). Its outcome carries no history (the ledger checks it instead).
     */
    /**
     * The command that replays a blink seed: {@link Explorer#replayCommand} without its {@code --check-history}, which
     * a blink run refuses (its ledger checks it instead; before, every blink replay line was refused).
     */
    static String replayCommand(final String cliArgs, final SimOptions o) {
        return Explorer.replayCommand(cliArgs, o).replace(" --check-history", "");
    }

    public static Explorer.Outcome check(final io.vertx.core.Vertx vertx, final SimOptions o, final int ops) {
        if (ops < 0) {
            throw new IllegalArgumentException("--blink-txn " + ops + ": a transaction needs at least one operation");
        }
        final boolean ordered = ordered(o.protocol());
        final int lineBytes = ordered ? TIMESTAMPED_LINE_BYTES : 136;
        final String replayed = EXPLORED.replace("--blink-txn " + EXPLORED_OPS, ops == SINGLE ? "--blink-single"
            : "--blink-txn " + ops).replace("--line-bytes 136", "--line-bytes " + lineBytes);
        final Spec spec = Spec.sized(100, lineBytes, o.memoryNodes()).timestamped(ordered);
        final Ledger ledger = new Ledger();
        ledger.crashes = o.faults().crashCn() != Faults.NO_CRASH;
        final List<String> reasons = new ArrayList<>();
        JsonObject run = null;
        try {
            final SimResult r = new Simulation(o, spec).operation(ops == SINGLE
                ? singleOperations(spec, kind(o.protocol()), 0.3, 0.9, ledger)
                : transactions(spec, o.protocol(), 0.3, 0.9, ops, ledger)).run(vertx);
            run = r.run().toJson();
            run.getJsonObject("sim").getJsonArray("violations").forEach(v -> reasons.add((String) v));
            if (!r.invariantsOk() && reasons.isEmpty()) {
                reasons.add("invariants broken: " + run.encode());
            }
            reasons.addAll(ledger.check(spec));
            if (run.getJsonObject("sim").getValue("crash") instanceof JsonObject crash
                && crash.getValue("recovery") instanceof JsonObject recovery) {
                // The tree's commits are no table transactions the simulator's tally tracks: the explorer's "decided by
                // recovery" count is the ledger's commits in doubt that landed.
                recovery.put("committed_by_recovery", ledger.inDoubtLanded);
            }
        } catch (final Exception e) {
            reasons.add("the run failed: " + e);
        }
        final Explorer.Failure failure = reasons.isEmpty() ? null : new Explorer.Failure(o.protocol(), o.seed(),
            String.join("; ", reasons), replayCommand(replayed, o), null);
        return new Explorer.Outcome(failure, ledger.committed(), null, run, 0); // no SI reads: the tree runs 2PL
    }

    /**
     * The committed transactions through the tree in their serial order (each noted at its commit point, every latch
     * it needs held: a transaction that conflicts with it takes the latch later, so it commits later; under TO in
     * timestamp order, {@link Entry#order}), replayed one by one over a model of the bulk load: every answer must be
     * the model's at that point (lookups' values too), and the tree after the run must hold exactly the model's keys
     * and values. Strict 2PL and OCC's validation under the latches make the commit order a serial order of the
     * history, TO its timestamps' order, so a phantom, a lost or torn write or a leaked aborted write shows here.
     */
    public static final class Ledger {
        static final int LOOKUP = 0;
        static final int INSERT = 1;
        static final int DELETE = 2;
        static final int UPDATE = 3;
        private static final String[] NAMES = {"lookup", "insert", "delete", "update"};
        private final List<Entry> entries = new ArrayList<>();
        /** Transactions that aborted themselves. */
        public long aborted;
        /**
         * Of the writing commits in doubt, how many the replay that held applied (they landed: written through before
         * the crash, or rolled forward by recovery); the first choice that holds, fewest applied first.
         */
        public int inDoubtLanded;
        /** Attempts refused by OCC's validation or TO's timestamp checks (each retried). */
        public long validationAborts;
        /**
         * A compute node dies in this run: a commit never answered (its node died between its commit point and its
         * answer) is in doubt, and the replay must hold with each such commit applied whole or not at all; without a
         * crash an unanswered commit is a violation.
         */
        public boolean crashes;
        /** An entry replayed where it was noted (its commit point's order): 2PL, OCC, single operations. */
        static final long IN_COMMIT_ORDER = Long.MIN_VALUE;
        /** The most in-doubt writing commits the check tries every choice of (2^n replays). */
        static final int MAX_IN_DOUBT = 12;

        static final class Entry {
            final long[] keys;
            final int[] what;
            final long[] values;
            final boolean[] answers;
            String failed;
            /** Its commit completed: acknowledged to its client. */
            boolean answered;
            /** Its place in the serial order: its timestamp under TO, else {@link #IN_COMMIT_ORDER} (noted order). */
            long order = IN_COMMIT_ORDER;

            Entry(final long[] keys, final int[] what, final long[] values, final boolean[] answers) {
                this.keys = keys;
                this.what = what;
                this.values = values;
                this.answers = answers;
            }
        }

        Entry commit(final long[] keys, final int[] what, final long[] values, final boolean[] answers) {
            final Entry e = new Entry(keys, what, values, answers);
            entries.add(e);
            return e;
        }

        public long committed() {
            return entries.size();
        }

        /** Commits never answered (their node died after their commit point): judged all or nothing. */
        public long inDoubt() {
            return entries.stream().filter(e -> !e.answered && e.failed == null).count();
        }

        /** Operations of committed transactions by kind: lookups, inserts, deletes, updates that changed a key. */
        public long[] applied() {
            final long[] n = new long[4];
            for (final Entry e : entries) {
                for (int i = 0; i < e.keys.length; i++) {
                    if (e.what[i] == LOOKUP || e.answers[i]) {
                        n[e.what[i]]++;
                    }
                }
            }
            return n;
        }

        /** The violations (at most 10 told) of the serial replay and of the tree's keys against it ({@code spec}). */
        public List<String> check(final Spec spec) {
            // TO's serial order is its timestamps' (a reader may commit after a younger writer of what it read):
            // entries with a timestamp replay in its order; the others keep the order they were noted in.
            entries.sort(java.util.Comparator.comparingLong(e -> e.order));
            final Walk w = spec.walk();
            final List<Integer> doubt = new ArrayList<>(); // unanswered commits that wrote: all or nothing each
            final java.util.BitSet skipped = new java.util.BitSet(); // unanswered: not replayed unless chosen
            final List<String> unanswered = new ArrayList<>();
            for (int t = 0; t < entries.size(); t++) {
                final Entry e = entries.get(t);
                if (e.answered || e.failed != null) {
                    continue;
                }
                skipped.set(t); // a read-only one changed nothing: not judged (never acknowledged)
                if (!crashes) {
                    unanswered.add("commit " + t + " never answered, in a run without a crash");
                } else if (java.util.Arrays.stream(e.what).anyMatch(x -> x != LOOKUP)) {
                    doubt.add(t);
                }
            }
            if (doubt.size() > MAX_IN_DOUBT) {
                return List.of(doubt.size() + " commits in doubt, more than the " + MAX_IN_DOUBT + " whose every "
                    + "choice the check tries");
            }
            List<String> wrong = null;
            for (int choice = 0; choice < 1 << doubt.size(); choice++) {
                final java.util.BitSet skip = (java.util.BitSet) skipped.clone();
                for (int d = 0; d < doubt.size(); d++) {
                    if ((choice & 1 << d) != 0) {
                        skip.clear(doubt.get(d));
                    }
                }
                final List<String> replayed = replay(spec, w, skip);
                if (wrong == null || replayed.size() < wrong.size()) {
                    wrong = replayed;
                }
                if (wrong.isEmpty()) {
                    inDoubtLanded = Integer.bitCount(choice);
                    break;
                }
            }
            if (!wrong.isEmpty() && !doubt.isEmpty()) {
                wrong.add(0, "no choice of the " + doubt.size() + " commits in doubt (each applied whole or not at "
                    + "all) replays; the closest:");
            }
            wrong.addAll(0, unanswered);
            wrong.addAll(w.violations);
            final long held = w.latchesHeld();
            if (held > 0) {
                wrong.add(held + " latch words left set");
            }
            return wrong.size() > 10 ? new ArrayList<>(wrong.subList(0, 10)) : wrong;
        }

        /** The serial replay of the commits but {@code skip}, and the tree's keys ({@code w}) against it. */
        private List<String> replay(final Spec spec, final Walk w, final java.util.BitSet skip) {
            final List<String> wrong = new ArrayList<>();
            final TreeMap<Long, Long> model = new TreeMap<>();
            for (long i = 0; i < spec.records(); i++) {
                model.put(2 * i, initialValue(2 * i).getLong(0));
            }
            for (int t = 0; t < entries.size(); t++) {
                final Entry e = entries.get(t);
                if (skip.get(t)) {
                    continue;
                }
                if (e.failed != null) {
                    wrong.add("commit " + t + " failed: " + e.failed);
                }
                for (int i = 0; i < e.keys.length; i++) {
                    final long k = e.keys[i];
                    final Long had = model.get(k);
                    final boolean expected = e.what[i] == INSERT ? had == null : had != null;
                    if (e.answers[i] != expected || e.what[i] == LOOKUP && had != null && had != e.values[i]) {
                        wrong.add("commit " + t + " " + NAMES[e.what[i]] + " " + k + " answered " + e.answers[i]
                            + (e.what[i] == LOOKUP ? " value " + e.values[i] : "") + "; the serial replay: "
                            + expected + (had != null ? " value " + had : ""));
                    }
                    if (expected && (e.what[i] == INSERT || e.what[i] == UPDATE)) {
                        model.put(k, e.values[i]);
                    } else if (expected && e.what[i] == DELETE) {
                        model.remove(k);
                    }
                }
            }
            if (!w.leaves.equals(model)) {
                for (final Long k : new java.util.TreeSet<>(union(model.keySet(), w.leaves.keySet()))) {
                    if (!java.util.Objects.equals(model.get(k), w.leaves.get(k))) {
                        wrong.add("key " + k + ": the tree holds " + w.leaves.get(k) + ", the serial replay "
                            + model.get(k));
                    }
                }
            }
            return wrong;
        }

        private static java.util.Set<Long> union(final java.util.Set<Long> a, final java.util.Set<Long> b) {
            final java.util.Set<Long> u = new java.util.HashSet<>(a);
            u.addAll(b);
            return u;
        }
    }

    /**
     * The tree read from the memory nodes' regions (no latches: after the run), level by level along the right
     * links, with B-link's invariants checked: keys sorted and inside [low, high) of their node, each level's chain
     * ends at +inf, each internal node's separators bound its children's ranges, every leaf key found by a descent
     * from the root.
     */
    public static final class Walk {
        private final List<LogDb> dbs;
        public final TreeMap<Long, Long> leaves = new TreeMap<>();
        public final List<String> violations = new ArrayList<>();
        public int height;
        public long nodes;

        Walk(final List<LogDb> dbs) {
            this.dbs = dbs;
            final UnsafeBuffer meta = line(GlobalPointer.of(0, 0), BLinkTree.META_LINE);
            final long root = meta.getLong(0);
            height = (int) meta.getLong(8);
            long leftmost = root;
            for (int level = height; level >= 0; level--) {
                long node = leftmost;
                long low = Long.MIN_VALUE;
                long next = GlobalPointer.NONE;
                int hops = 0;
                while (node != GlobalPointer.NONE) {
                    nodes++;
                    if (++hops > 10_000_000) {
                        violations.add("level " + level + ": a right-link cycle");
                        break;
                    }
                    final UnsafeBuffer d = data(node);
                    if (d.getInt(0) != level) {
                        violations.add(GlobalPointer.toString(node) + " at level " + level + " says level "
                            + d.getInt(0));
                    }
                    final int count = d.getInt(4);
                    final long high = d.getLong(8);
                    final int entry = level == 0 ? 8 + VALUE_BYTES : 16;
                    long previous = Long.MIN_VALUE;
                    for (int i = 0; i < count; i++) {
                        final long k = d.getLong(24 + i * entry);
                        if ((i > 0 && k <= previous) || k < low || k >= high) {
                            violations.add(GlobalPointer.toString(node) + " level " + level + ": key " + k
                                + " out of order or outside [" + low + ", " + high + ")");
                        }
                        previous = k;
                        if (level == 0) {
                            if (leaves.put(k, d.getLong(24 + i * entry + 8)) != null) {
                                violations.add("key " + k + " in two leaves");
                            }
                        } else {
                            final long child = d.getLong(24 + i * entry + 8);
                            final long childHigh = data(child).getLong(8);
                            final long bound = i + 1 < count ? d.getLong(24 + (i + 1) * entry) : high;
                            if (childHigh > bound) { // a child may have split further: its high key only shrinks
                                violations.add(GlobalPointer.toString(child) + " high key " + childHigh + " above "
                                    + "its separator's bound " + bound);
                            }
                            if (i == 0 && next == GlobalPointer.NONE) {
                                next = child;
                            }
                        }
                    }
                    if (d.getLong(16) == GlobalPointer.NONE && high != Long.MAX_VALUE) {
                        violations.add(GlobalPointer.toString(node) + " ends level " + level + " with high key "
                            + high);
                    }
                    low = high;
                    node = d.getLong(16);
                }
                leftmost = next;
            }
            for (final long k : leaves.keySet()) {
                if (!reachable(root, k)) {
                    violations.add("key " + k + " not reached from the root");
                    if (violations.size() > 20) {
                        break;
                    }
                }
            }
        }

        private boolean reachable(final long root, final long key) {
            long node = root;
            for (int steps = 0; steps < 100_000; steps++) {
                final UnsafeBuffer d = data(node);
                if (key >= d.getLong(8)) {
                    node = d.getLong(16);
                    continue;
                }
                final int count = d.getInt(4);
                if (d.getInt(0) == 0) {
                    for (int i = 0; i < count; i++) {
                        if (d.getLong(24 + i * (8 + VALUE_BYTES)) == key) {
                            return true;
                        }
                    }
                    return false;
                }
                int c = 0;
                while (c + 1 < count && d.getLong(24 + (c + 1) * 16) <= key) {
                    c++;
                }
                node = d.getLong(24 + c * 16 + 8);
            }
            return false;
        }

        /** Latch words left set in the regions (none once every lease ran out). */
        public long latchesHeld() {
            long held = 0;
            for (final LogDb db : dbs) {
                final Table t = db.table(GclRegion.TABLE);
                for (long i = 0; i < t.schema().capacity(); i++) {
                    if (t.objectMemory().getLongVolatile(GclRegion.lineOffset(t, i)
                        + ObjectLayout.PROTOCOL_WORD_OFFSET) != 0) {
                        held++;
                    }
                }
            }
            return held;
        }

        private UnsafeBuffer line(final long base, final long index) {
            final Table t = dbs.get(GlobalPointer.node(base)).table(GclRegion.TABLE);
            return new UnsafeBuffer(t.objectMemory(), GclRegion.lineOffset(t, index) + ObjectLayout.VALUE_OFFSET,
                t.schema().maxValueBytes());
        }

        private UnsafeBuffer data(final long gaddr) {
            final Table t = dbs.get(GlobalPointer.node(gaddr)).table(GclRegion.TABLE);
            final long stride = t.describe().objects().length() / t.schema().capacity();
            return line(gaddr, GlobalPointer.offset(gaddr) / stride);
        }
    }
}
