package io.scythe.sim;

import io.scythe.txn.Access;
import io.scythe.txn.HistoryRecorder;
import io.scythe.txn.TxnRuntime;
import io.scythe.txn.recovery.CnRecovery;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.function.IntPredicate;

/**
 * Recovery of a crashed compute node in the simulator ({@link Faults#recover}): the cluster's recovery code, unmodified
 * ({@link CnRecovery}: fence and list on every memory node, read the logs, roll complete records forward, release what
 * the dead node held; the memory nodes' {@code RecoveryService} with its one-recoverer admission by claim, and the
 * fabric's fences), driven by deterministic stand-ins for what Hazelcast gives the cluster: failure detection (the crash
 * is seen {@link Faults#detectNs} later), the map of incarnations owed recovery, and the claim of the duty by the
 * designated live compute node (the first by name that did not crash), under a claim counter, a failed attempt retried
 * after a pause, as {@code io.scythe.cluster.RecoveryDuty} does (which keeps its claim for its own retries; here each
 * attempt claims anew, claim + 1, which the memory nodes admit all the same). What is not stood in for: the
 * Hazelcast glue itself ({@code RecoveryDuty}'s map listeners, member UUIDs, shard owners, the stall hand-over).
 *
 * <p>It also keeps what the checks need to judge the crash: every redo record a loop is about to post
 * ({@code RedoLog#onPosting}) until its transaction's client hears the outcome, so that at the crash it knows which of
 * the dead node's transactions may be committed; recovery's observer ({@link CnRecovery.Observer}) then says which
 * were (their record was complete: rolled forward, or finished and truncated) and what versions it installed. Those
 * count as committed: their result joins the conserved quantity's expected total and they join the history as
 * committed (with the accesses their record names); the others never committed. Nothing then may be left held.
 */
final class CrashRecovery {
    /** Pause before a failed recovery attempt runs again (RecoveryDuty#RETRY_MS, in virtual time). */
    static final long RETRY_NS = 100_000;
    /** Attempts before the run reports that recovery failed (a refusal while another live recoverer holds the claim,
     * {@code RECOVERY_BUSY}, is not counted: it waits for that one, up to {@link #MAX_BUSY_WAITS} rounds). */
    static final int MAX_ATTEMPTS = 20;
    /** Rounds of {@link #RETRY_NS} a recovery refused as busy waits for the live recoverer (0.1 s virtual). */
    static final int MAX_BUSY_WAITS = 1000;
    /** Epoch of every simulated CN incarnation (ids: epoch, loop and slot above bit 32, as in the cluster). */
    private static final long EPOCH = 1;

    /** One redo record a loop posted, of a transaction whose client has not heard its outcome. */
    private static final class Pending {
        final long version;
        final List<Access> writes;
        /** The recorders were told of it (committed, or in doubt): not reported again. */
        boolean recorded;
        /** Its procedure's result (the conserved quantity's change), known once its client's body ran. */
        Long result;
        /** Recovery found its record complete: it committed. */
        boolean decided;
        /** Counted as committed by recovery (once, whichever victim's recovery or later word decided it). */
        boolean settled;

        Pending(final long version, final List<Access> writes) {
            this.version = version;
            this.writes = writes;
        }
    }

    /** One crashed compute node and its recovery (several crash together with {@code --crash-cn a,b,..}). */
    private static final class Victim {
        final int cn;
        final JsonObject atCrash;
        final long crashedAtNs;
        long detectedAtNs = -1;
        long recoveredAtNs = -1;
        int attempts;
        /** Attempts refused because another live recoverer held the claim (not counted in {@link #attempts}). */
        int busy;
        long claim;
        /** This node's recovery's last error (every attempt's is in {@link #errors}); null: none. */
        String lastError;
        /** Its recovery gave up (out of attempts, or no live node to run it). */
        boolean failed;
        int recoveringCn = -1;
        CnRecovery.Report report;

        Victim(final int cn, final JsonObject atCrash, final long crashedAtNs) {
            this.cn = cn;
            this.atCrash = atCrash;
            this.crashedAtNs = crashedAtNs;
        }
    }

    private final int loopsPerCn;
    private final Map<Long, Pending> pending = new TreeMap<>();
    /** The crashed nodes' transactions that may be committed, from the crash on. */
    private final Map<Long, Pending> candidates = new TreeMap<>();
    /** The crashed nodes, in crash order. */
    private final List<Victim> victims = new ArrayList<>();
    private final List<String> errors = new ArrayList<>();
    /** How many of {@link #victims} {@link #detectLater} has scheduled the detection of. */
    private int detecting;
    private long rolledDelta;
    private int committedByRecovery;

    CrashRecovery(final int loopsPerCn) {
        this.loopsPerCn = loopsPerCn;
    }

    /** The id base of loop {@code loop} of compute node {@code cn}: as a cluster CN's (epoch, loop, slot cn + 1). */
    static long idBase(final int cn, final int loop) {
        return idBase(cn, loop, EPOCH);
    }

    /** As {@link #idBase(int, int)}, of incarnation {@code epoch} of the node (2: restarted once). */
    static long idBase(final int cn, final int loop, final long epoch) {
        return epoch << 48 | (loop + 1L) << 40 | (cn + 1L) << 32;
    }

    /** The id prefix of every transaction of compute node {@code cn} ({@code RecoveryRpc.NODE_ID_MASK}'s bits). */
    static long idPrefix(final int cn) {
        return EPOCH << 48 | (cn + 1L) << 32;
    }

    /** The compute node that ran transaction {@code txnId}, or -1. */
    static int computeNodeOf(final long txnId) {
        return (int) ((txnId >>> 32) & 0xff) - 1;
    }

    /** A loop is about to post the redo record of {@code txnId} ({@code RedoLog#onPosting}). */
    void posting(final long txnId, final long version, final List<Access> writes) {
        pending.put(txnId, new Pending(version, List.copyOf(writes)));
    }

    /** The recorders were told of {@code txnId} (committed or in doubt). */
    void recorded(final long txnId) {
        final Pending p = pending.get(txnId);
        if (p != null) {
            p.recorded = true;
        }
    }

    /** The client of attempts {@code attemptIds} heard the outcome: none of them is pending any more. */
    void heard(final List<Long> attemptIds) {
        for (final long id : attemptIds) {
            pending.remove(id);
        }
    }

    /**
     * Compute node {@code cn} crashed now; {@code inFlight} maps the last attempt of each of its clients that was
     * running a transaction to that attempt's result (null: its body had not finished).
     */
    void crashed(final int cn, final long nowNs, final Map<Long, Long> inFlight, final JsonObject census) {
        victims.add(new Victim(cn, census, nowNs));
        final int before = candidates.size();
        pending.forEach((id, p) -> {
            if (computeNodeOf(id) == cn) {
                p.result = inFlight.get(id);
                candidates.put(id, p);
            }
        });
        census.put("records_posted", candidates.size() - before);
    }

    /** Whether compute node {@code cn} crashed in this run. */
    private boolean crashed(final int cn) {
        for (final Victim v : victims) {
            if (v.cn == cn) {
                return true;
            }
        }
        return false;
    }

    /**
     * The failure detector's stand-in: {@code detectNs} after the crash, the dead incarnation is owed recovery and
     * the designated live compute node claims it; runs {@link CnRecovery} on that node's first loop.
     *
     * @param live       whether compute node {@code i} is alive
     * @param runtimes   each compute node's loops' runtimes
     * @param loops      each compute node's loops
     * @param membership the loop the failure detector runs on (a core of its own, no CPU cost)
     * @param recorders  the history's recorders, told of the dead node's commits recovery decided
     */
    void detectLater(final SimLoop membership, final long detectNs, final long staggerNs, final int computeNodes,
                     final IntPredicate live, final List<List<TxnRuntime>> runtimes, final List<List<SimLoop>> loops,
                     final java.util.function.LongSupplier now, final List<HistoryRecorder> recorders) {
        long after = detectNs;
        // Each dead incarnation is owed recovery of its own, in crash order; those crashed at an earlier time
        // (Faults#staggered) were scheduled then.
        for (final Victim v : victims.subList(detecting, victims.size())) {
            membership.schedule(() -> {
                v.detectedAtNs = now.getAsLong();
                claimAndRun(v, membership, computeNodes, live, runtimes, loops, now, recorders);
            }, after, java.util.concurrent.TimeUnit.NANOSECONDS);
            after += staggerNs; // Faults#detectStagger: 0 unless a test staggers the deaths' news
        }
        detecting = victims.size();
    }

    private void claimAndRun(final Victim v, final SimLoop membership, final int computeNodes,
                             final IntPredicate live, final List<List<TxnRuntime>> runtimes,
                             final List<List<SimLoop>> loops, final java.util.function.LongSupplier now,
                             final List<HistoryRecorder> recorders) {
        int designated = -1;
        for (int c = 0; c < computeNodes && designated < 0; c++) {
            if (!crashed(c) && live.test(c)) {
                designated = c;
            }
        }
        if (designated < 0) {
            fail(v, "no live compute node to recover cn" + v.cn);
            return;
        }
        // The claim: one more than the last (a designated CN that changed, or the same retrying, is admitted).
        v.claim++;
        v.attempts++;
        v.recoveringCn = designated;
        final TxnRuntime runtime = runtimes.get(designated).get(0);
        final long thisClaim = v.claim;
        loops.get(designated).get(0).execute(() -> new CnRecovery(runtime).observe(observer())
            .recover("cn" + v.cn, thisClaim, new long[] {idPrefix(v.cn)}).onComplete(ar -> {
                if (ar.succeeded()) {
                    v.report = ar.result();
                    v.recoveredAtNs = now.getAsLong();
                    this.recorders = recorders;
                    settle(v, recorders);
                    // The dead node is fenced on every memory node and its redo records are settled: the modules of
                    // the live nodes that asked to hear of it (run.peerDied) now take over what it left them.
                    for (final Map.Entry<Integer, java.util.function.IntConsumer> l : peerDied) {
                        final int cn = l.getKey();
                        if (!crashed(cn) && live.test(cn)) {
                            loops.get(cn).get(0).execute(() -> l.getValue().accept(v.cn));
                        }
                    }
                } else if (CnRecovery.refusedBusy(ar.cause()) && v.busy < MAX_BUSY_WAITS) {
                    // Another live recoverer holds the claim (Lotus's lease leader): wait for it, not an attempt.
                    v.attempts--;
                    v.busy++;
                    v.lastError = "attempt refused " + v.busy + " times as busy; last: " + ar.cause();
                    membership.schedule(() -> claimAndRun(v, membership, computeNodes, live, runtimes, loops, now,
                        recorders), RETRY_NS, java.util.concurrent.TimeUnit.NANOSECONDS);
                } else if (v.attempts >= MAX_ATTEMPTS || v.busy >= MAX_BUSY_WAITS) {
                    fail(v, "recovery of cn" + v.cn + " failed " + v.attempts + " times (" + v.busy
                        + " refused as busy); last: " + ar.cause());
                } else {
                    v.lastError = (victims.size() == 1 ? "" : "cn" + v.cn + " ") + "attempt " + v.attempts
                        + " (claim " + thisClaim + "): " + ar.cause();
                    errors.add(v.lastError);
                    membership.schedule(() -> claimAndRun(v, membership, computeNodes, live, runtimes, loops, now,
                        recorders), RETRY_NS, java.util.concurrent.TimeUnit.NANOSECONDS);
                }
            }));
    }

    /** {@code v}'s recovery gave up with {@code error}. */
    private void fail(final Victim v, final String error) {
        v.failed = true;
        v.lastError = error;
        errors.add(error);
    }

    /** What a recovery of a crashed node finds (the host's own, or a module's: {@code run.recoveryObserver}). */
    CnRecovery.Observer observer() {
        return new CnRecovery.Observer() {
            @Override
            public void record(final long txnId, final boolean truncated) {
                final Pending p = candidates.get(txnId);
                if (p != null) {
                    p.decided = true;
                }
            }

            @Override
            public void entry(final long txnId, final int index, final long installedVersion) {
                final Pending p = candidates.get(txnId);
                if (p != null && installedVersion >= 0 && index < p.writes.size()) {
                    final Access a = p.writes.get(index);
                    if (a.dirty || a.inserted) {
                        a.installedVersion = installedVersion; // the dead attempt's access: nobody else uses it
                    }
                }
            }
        };
    }

    /**
     * A live node's module (CALVIN's survivors, {@code run.recoveredCommit}) committed the dead node's transaction
     * {@code txnId} on its behalf after the recovery proper: counted as recovery's commits are (once, however many
     * nodes say so); an id that is not a candidate (its client heard the outcome, or it is not the dead node's) is
     * ignored.
     */
    void committedLater(final long txnId) {
        final Pending p = candidates.get(txnId);
        if (p == null || p.decided) {
            return;
        }
        p.decided = true;
        if (victimOf(txnId).report != null) {
            settleOne(p, txnId, recorders);
        }
    }

    /** The modules that hear of the dead node once it is recovered ({@code run.peerDied}: by node index). */
    void onPeerDied(final List<Map.Entry<Integer, java.util.function.IntConsumer>> listeners) {
        this.peerDied = listeners;
    }

    private List<Map.Entry<Integer, java.util.function.IntConsumer>> peerDied = List.of();
    private List<HistoryRecorder> recorders = List.of();

    /** The crashed node that ran candidate {@code txnId}. */
    private Victim victimOf(final long txnId) {
        final int cn = computeNodeOf(txnId);
        for (final Victim v : victims) {
            if (v.cn == cn) {
                return v;
            }
        }
        throw new IllegalStateException("transaction " + Long.toHexString(txnId) + " is no crashed node's");
    }

    /** Counts what {@code v}'s recovery decided: the results of the commits it rolled forward, and their history. */
    private void settle(final Victim v, final List<HistoryRecorder> recorders) {
        for (final Map.Entry<Long, Pending> e : candidates.entrySet()) {
            final Pending p = e.getValue();
            if (p.decided && computeNodeOf(e.getKey()) == v.cn) {
                settleOne(p, e.getKey(), recorders);
            }
        }
    }

    private void settleOne(final Pending p, final long txnId, final List<HistoryRecorder> recorders) {
        if (p.settled) {
            return;
        }
        p.settled = true;
        committedByRecovery++;
        if (p.result == null) {
            errors.add("transaction " + Long.toHexString(txnId) + " committed by recovery without a known result");
        } else {
            rolledDelta += p.result;
        }
        if (!p.recorded) {
            for (final HistoryRecorder r : recorders) {
                r.committed(txnId, p.version, p.writes);
            }
        }
    }

    /**
     * Without the host's recovery ({@code --crash-recover} not given): a protocol module's own recovery (Lotus's
     * leases, {@code run.moduleRecovered}) finished crashed node {@code cn}'s logs with {@code report}, having told
     * {@link #observer} what it found. Its commits count as the host's recovery's do: their results join the
     * conserved quantity's expected total and the history (once; a second report of the node is ignored).
     */
    void recoveredByModule(final int cn, final CnRecovery.Report report, final long nowNs,
                           final List<HistoryRecorder> recorders) {
        for (final Victim v : victims) {
            if (v.cn == cn && v.report == null) {
                v.report = report;
                v.recoveredAtNs = nowNs;
                this.recorders = recorders;
                settle(v, recorders);
            }
        }
    }

    /** Whether some crashed node's recovery reported (the host's, or a module's: {@link #recoveredByModule}). */
    boolean anyReport() {
        for (final Victim v : victims) {
            if (v.report != null) {
                return true;
            }
        }
        return false;
    }

    /** The conserved quantity's change from the crashed node's commits nobody heard of. */
    long rolledDelta() {
        return rolledDelta;
    }

    /** Whether recovery finished (of every crashed node). */
    boolean recovered() {
        for (final Victim v : victims) {
            if (v.report == null) {
                return false;
            }
        }
        return !victims.isEmpty();
    }

    /**
     * Where this run's recovery of compute node {@code cn} stands ({@code run.recoveryState}, Lotus's wait on it):
     * {@code "recovered"}, {@code "failed"}, {@code "recovering"} (from the crash on: detected or not yet), or null:
     * {@code cn} did not crash, this recovery never runs for it.
     */
    String state(final int cn) {
        for (final Victim v : victims) {
            if (v.cn == cn) {
                return v.report != null ? "recovered" : v.failed ? "failed" : "recovering";
            }
        }
        return null;
    }

    /** What is wrong with the recovery itself (not finished, failed, a result unknown). */
    List<String> violations() {
        final List<String> out = new ArrayList<>();
        boolean anyReport = false;
        for (final Victim v : victims) {
            if (v.report == null) {
                out.add("recovery of cn" + v.cn + " did not finish" + (v.lastError == null ? "" : ": "
                    + v.lastError));
            }
            anyReport |= v.report != null;
        }
        if (anyReport) {
            errors.stream().filter(e -> e.contains("without a known result")).forEach(out::add);
        }
        return out;
    }

    /** The crash and its recovery, for {@code sim.crash}: one node's as it always was, several as {@code nodes}. */
    JsonObject toJson() {
        if (victims.size() == 1) {
            return victimJson(victims.get(0), true);
        }
        final JsonArray nodes = new JsonArray();
        for (final Victim v : victims) {
            nodes.add(victimJson(v, false));
        }
        final JsonObject json = new JsonObject().put("nodes", nodes).put("committed_by_recovery", committedByRecovery)
            .put("rolled_delta", rolledDelta);
        if (!errors.isEmpty()) {
            json.put("errors", new JsonArray(errors));
        }
        return json;
    }

    private JsonObject victimJson(final Victim v, final boolean alone) {
        final JsonObject json = new JsonObject();
        if (!alone) {
            json.put("cn", v.cn);
        }
        json.put("at_crash", v.atCrash).put("detected_after_ns",
            v.detectedAtNs < 0 ? null : v.detectedAtNs - v.crashedAtNs).put("attempts", v.attempts)
            .put("claim", v.claim).put("recovered_by", v.recoveringCn < 0 ? null : "cn" + v.recoveringCn)
            .put("recovered_after_ns", v.recoveredAtNs < 0 ? null : v.recoveredAtNs - v.crashedAtNs);
        if (alone) {
            json.put("committed_by_recovery", committedByRecovery).put("rolled_delta", rolledDelta);
        }
        if (v.busy > 0) {
            json.put("refused_busy", v.busy);
        }
        if (v.report != null) {
            final CnRecovery.Report report = v.report;
            final JsonObject r = new JsonObject().put("log_regions", report.logRegions())
                .put("complete_records", report.committedRecords()).put("incomplete", report.incompleteRecords())
                .put("applied", report.entriesApplied()).put("already_done", report.entriesAlreadyDone())
                .put("truncated", report.truncatedRecords()).put("inserts_abandoned", report.insertsAbandoned());
            report.released().forEach(r::put);
            json.put("report", r);
        }
        if (alone && !errors.isEmpty()) {
            json.put("errors", new JsonArray(errors));
        }
        return json;
    }

    /** Which stage the crash hit, from the census at the crash (the explorer's coverage). */
    static String stage(final JsonObject census) {
        if (census.getInteger("redo_unfinished", 0) > 0) {
            return "after-redo";
        }
        if (census.getInteger("records_posted", 0) > 0) {
            return "redo-posted";
        }
        if (census.getLong("locks_held", 0L) > 0) {
            return "holding-locks";
        }
        if (census.getInteger("tickets_queued", 0) > 0) {
            return "queued";
        }
        return census.getLong("in_flight", 0L) > 0 ? "executing" : "idle";
    }

    int loopsPerCn() {
        return loopsPerCn;
    }
}
