package io.scythe.cluster;

import com.hazelcast.cluster.Member;
import com.hazelcast.cluster.MembershipEvent;
import com.hazelcast.cluster.MembershipListener;
import com.hazelcast.core.EntryEvent;
import com.hazelcast.core.HazelcastInstance;
import com.hazelcast.map.IMap;
import com.hazelcast.map.listener.EntryAddedListener;
import com.hazelcast.map.listener.EntryUpdatedListener;
import com.hazelcast.map.listener.MapListener;
import io.scythe.txn.TxnRuntime;
import io.scythe.txn.recovery.CnRecovery;
import io.vertx.core.AsyncResult;
import io.vertx.core.Context;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonObject;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Consumer;
import java.util.function.Supplier;
import java.util.stream.Collectors;

/**
 * A CN's recovery duty: the dead CN incarnations it recovers, taken from the map of incarnations owed recovery
 * ({@value #OWED}, key {@code NODE.eEPOCH}).
 *
 * <p><b>Owed.</b> An incarnation is owed as soon as it is known dead: by its successor before the successor registers
 * (so a CN restarting twice before anyone recovered it leaves both incarnations owed, not only the last one seen), by
 * every non-CN node that sees its member leave, and by the oldest member's shard rebalance (all idempotent
 * {@code putIfAbsent}s, skipped once its registry entry says it was recovered). The entry keeps the incarnation's id
 * prefix ({@code epoch << 48 | slot << 32}), so its CAS lock words are freed even when it never wrote a log region
 * and the registry has moved on to a newer epoch. It is removed only when a recovery of it reports success, which
 * first records the incarnation in {@value #RECOVERED} for good.
 *
 * <p><b>Owed again.</b> An owe decides on a registry entry it read earlier (a member-left scan, the shard rebalance,
 * a successor's registration), so its {@code putIfAbsent} can land just after a recovery that finished removed the
 * entry, re-owing an incarnation already recovered (a chaos run: the shard rebalance owed cn0.e1 again from a
 * registry entry read before its recovery finished, the put landing while the recovering CN still counted it as
 * running; that CN ignored the mark's event, and the memory-node configuration's settlement waited 61 s for it until
 * a shard change made the duty look again; the recovery it then ran found nothing to do). Such a mark is never acted
 * on: {@link #owe} takes it back when {@value #RECOVERED} names the incarnation after its put, the duty drops one it
 * finds (and looks again when a recovery finishes, for a mark raised while it ran), and the memory-node settlement
 * does not wait for it.
 *
 * <p><b>Who.</b> The owner of the dead CN's shard ({@value ScytheNode#SHARDS}); if that owner is not a live member
 * under the epoch the shard map names, the first live CN by name. It claims the entry by a compare-and-set
 * ({@code claimedBy} its member, {@code claim} + 1) and keeps the claim until it succeeds (retrying every
 * {@value #RETRY_MS} ms); an entry claimed by a member that left is claimed anew by the then designated CN, whose
 * larger claim lets the memory nodes admit it as the new recoverer ({@link io.scythe.txn.recovery.RecoveryRpc}).
 * A recovery is idempotent, so one interrupted half-way is simply run again. One that has not finished within {@link
 * #STALLED_MS} (a call or verb that never completes), or that failed with a verb that may still execute (a transport
 * timeout: {@link io.scythe.txn.recovery.CnRecovery#mayStillLand}; run again on a new connection, its roll-forward
 * could release a lock before that verb lands over a later writer), is handed over: this CN gives up its lease and
 * releases its claim ({@code claimedBy} dropped, its member added to the entry's {@code handedOverBy}, never
 * designated for it again), so that the next designated CN claims the entry anew at once, even while this member stays
 * in the cluster (an {@code onLeaseLost} that never completes, or an embedder's that does nothing); the memory nodes
 * admit that larger claim only once they fenced this CN (its fabric lease expired, or its member left), so nothing of
 * its attempt can land under the next one, whose attempts fail and are retried until then. The reason, with what the
 * attempt was waiting for, is logged. One that meets a redo record of a format this build does not read
 * ({@link io.scythe.txn.recovery.RedoRecordDescriptor#checkFormat}) applied nothing and is not run again (it would
 * read the same record): the incarnation stays owed, claimed by this CN, for an operator, and the failure
 * ({@code leftForOperator}) is listed among this node's recoveries in its health. Nothing is recovered while this member does not see every registered memory node
 * (it is cut off: its view of who died is not the one that counts), nor an incarnation that is a live member in its
 * view (an entry written by the other side of a split and merged back): a recovery fences the incarnation it recovers.
 *
 * <p><b>When.</b> On a change of an owed entry (listener), and a scan of the (small) owed map at start, whenever the
 * shard map changes and whenever a member leaves; not periodically while scans succeed. A scan that fails, or a map
 * operation that fails while an entry is handled or a recovery recorded, brings another scan on a timer ({@value
 * #RESCAN_MIN_MS} ms, doubled per failure up to {@value #RESCAN_MAX_MS} ms, one timer at a time) until a scan
 * succeeds: under load a scan blocked 120 s in Hazelcast's retries against partitions a SIGSTOPped member still owned,
 * failed, and the duty waited for the next membership event (issue 23, stop 44). conf/cluster.xml bounds those retries,
 * so such a scan now fails within seconds and is run again. Map operations run on worker threads, never on an event
 * loop or a Hazelcast event thread.
 *
 * <p><b>Bounded waits</b> (issue 23 §1: CI 193's cn0 logged "has the recovery duty for cn1.e1" and then nothing for
 * 20 s, across a membership split). Every Hazelcast call of the duty (the scan, the look-ups before a claim, the claim,
 * the four writes that record a recovery, a release) runs on a thread of the duty's and is waited for at most {@link
 * #CALL_MS}: one that takes longer is logged ({@code WARN recovery duty: STEP did not finish within ...}) and given up,
 * and the rescan it brings tries again (a recovery whose record was given up is run again: idempotent, under the same
 * claim; unless the write given up landed meanwhile, when the record it finds, under this CN's claim, counts as this
 * CN's success: {@link #recordedLate}; a removal of the owed entry given up after the record was written is left to
 * that next look, the success counted already). A recovery attempt logs each step as it starts ({@code recovering NODE.eN (claim C): LOG_LIST of ... on
 * mn0}, the log READs, the roll-forward, RELEASE_NODE, then each write of its record), warns every {@link
 * #STEP_WARN_MS} while it waits on one (what, since when, from a thread of its own) and is handed over at {@link
 * #STALLED_MS}. So a recovery that waits on anything says what within {@link #STEP_WARN_MS}, and one that cannot finish
 * is retried or handed over within {@link #STALLED_MS} plus a call bound.
 */
public final class RecoveryDuty {
    /** Incarnations owed recovery: {@code NODE.eEPOCH} to JSON (see {@link #owe}). */
    public static final String OWED = "scythe.owed";
    /**
     * Incarnations whose recovery reported success: {@code NODE.eEPOCH} to JSON ({@code claimant}, {@code atMs}).
     * Written before the owed entry is removed and never removed (one small entry per dead incarnation), so a mark
     * raised from a stale read afterwards is known for what it is, even once the registry names a newer epoch.
     */
    public static final String RECOVERED = "scythe.recovered";
    /**
     * {@value #RECOVERED} indexed by transaction-id prefix (a Long) to incarnation, written with it: what
     * {@link #recoveredWithPrefix} reads by one get instead of scanning the map (issue 21).
     */
    public static final String RECOVERED_BY_PREFIX = "scythe.recovered.byPrefix";
    /** Pause before a failed recovery is run again. */
    public static final long RETRY_MS = 1_000;
    /** Pause before the owed map is scanned again after a failed map operation; doubled per failure in a row... */
    public static final long RESCAN_MIN_MS = 1_000;
    /** ...up to this. */
    public static final long RESCAN_MAX_MS = 5_000;
    /**
     * How long a recovery attempt may take before it is handed over. One takes well under a second even on a loaded
     * machine; what is still unfinished after this waits on something that never completes, and running it again
     * here could race its own late verbs (only fencing this CN stops those).
     */
    public static final long STALLED_MS = 20_000;
    /**
     * How long one Hazelcast call of the duty (a scan, a claim, a record of a recovery, ...) is waited for before it is
     * given up and tried again (a rescan, or the recovery run again: every step is idempotent). Hazelcast's own bound
     * is its call timeout (60 s) times its retries: CI 193's fence scenario saw cn0 take the duty for cn1.e1 and then log
     * nothing for 20 s while its member had lost the master's heartbeats (issue 23 §1). A fresh call asks the partition
     * table again, so a response lost on a connection torn by a split costs this, not the call timeout.
     */
    public static final long CALL_MS = 10_000;
    /** A recovery attempt still waiting on one step this long is logged (WARN, what it waits for), and again as often. */
    public static final long STEP_WARN_MS = 5_000;
    /** Recoveries (and failed attempts) kept for {@link #recoveries()}, the latest. */
    static final int MAX_RECOVERIES_KEPT = 1_000;

    /** Starts one recovery. */
    @FunctionalInterface
    public interface Recoverer {
        Attempt recover(String incarnation, long claim, long[] idPrefixes);

        /** The same, telling {@code steps} each step of the recovery as it starts (on any thread). */
        default Attempt recover(final String incarnation, final long claim, final long[] idPrefixes,
                                final Consumer<String> steps) {
            return recover(incarnation, claim, idPrefixes);
        }
    }

    /** A Hazelcast call of the duty that did not finish within its bound ({@link #CALL_MS}): given up, tried again. */
    static final class CallTimedOut extends RuntimeException {
        CallTimedOut(final String step, final long ms) {
            super(step + " did not finish within " + ms + " ms", null, false, false);
        }
    }

    /**
     * A recovery under way: {@code outcome} completes with what it did (JSON fields for the node's health) once every
     * MN released; {@code waitingFor} says, at any time and from any thread, which step it is waiting on.
     */
    public record Attempt(Future<JsonObject> outcome, Supplier<String> waitingFor) {
    }

    /** The recoverer that runs {@link CnRecovery} on {@code loop} through {@code runtime}, that loop's runtime. */
    public static Recoverer onLoop(final Context loop, final TxnRuntime runtime) {
        return new Recoverer() {
            @Override
            public Attempt recover(final String incarnation, final long claim, final long[] idPrefixes) {
                return recover(incarnation, claim, idPrefixes, what -> { });
            }

            @Override
            public Attempt recover(final String incarnation, final long claim, final long[] idPrefixes,
                                   final Consumer<String> steps) {
                final Promise<JsonObject> done = Promise.promise();
                final CnRecovery recovery = new CnRecovery(runtime).onStep(steps);
                loop.runOnContext(v -> recovery.recover(incarnation, claim, idPrefixes).map(RecoveryDuty::describe)
                    .onComplete(done));
                return new Attempt(done.future(), recovery::waitingFor);
            }
        };
    }

    private final Vertx vertx;
    private final HazelcastInstance hazelcast;
    private final String node;
    private final long epoch;
    private final List<String> memoryNodes;
    private final Recoverer recoverer;
    private final Consumer<String> log;
    private final Consumer<String> handOver;
    private long stalledMs = STALLED_MS;
    private long callMs = CALL_MS;
    private long stepWarnMs = STEP_WARN_MS;
    /** Runs the duty's Hazelcast calls, each waited for at most {@link #callMs} (a call given up runs on here). */
    private final java.util.concurrent.ExecutorService calls;
    /** Warns of a recovery attempt that waits long on one step: a thread of its own, so a busy loop cannot hide it. */
    private final java.util.concurrent.ScheduledExecutorService watch;
    /** Whether this duty logged its thread dump (at the first call it gave up: {@link #await}). */
    private final java.util.concurrent.atomic.AtomicBoolean dumped = new java.util.concurrent.atomic.AtomicBoolean();
    /** The latest scan of the owed map, under way or done ({@link #scanOwed()}). */
    private java.util.concurrent.Future<Set<Map.Entry<String, String>>> scanning;
    /** Scans of the owed map under way (given up ones included). */
    private final java.util.concurrent.atomic.AtomicInteger scansUnderWay = new java.util.concurrent.atomic.AtomicInteger();
    /** At most this many scans under way at once ({@link #scanOwed()}). */
    static final int MAX_PARKED_SCANS = 3;
    /** Told the step of each Hazelcast call as it runs, on the thread that runs it (tests: a call that hangs). */
    private volatile Consumer<String> callHook = step -> { };
    private long retryMs = RETRY_MS;
    private long rescanMinMs = RESCAN_MIN_MS;
    private long rescanMaxMs = RESCAN_MAX_MS;
    /** How the owed map is scanned (tests make it fail). */
    private java.util.function.Function<IMap<String, String>, Set<Map.Entry<String, String>>> scanOwed = IMap::entrySet;
    /** The pause before the next rescan: 0 while the last scan succeeded, else grown per failure in a row. */
    private final java.util.concurrent.atomic.AtomicLong rescanDelayMs = new java.util.concurrent.atomic.AtomicLong();
    /** A rescan timer is set: it covers every failure before it fires. */
    private final AtomicBoolean rescanSet = new AtomicBoolean();
    /** Owed incarnations this CN is recovering now (one recovery of each at a time). */
    private final Set<String> running = ConcurrentHashMap.newKeySet();
    /**
     * Incarnations whose recovery this CN handed over (stalled, or a verb that may still execute): never run here
     * again, though still owed (its claim released for another CN, {@link #releaseClaim}); a scan or an entry event in between would
     * otherwise run it beside the verbs that may still land (CI run 132: run again once {@link #running} let go).
     */
    private final Set<String> handedOver = ConcurrentHashMap.newKeySet();
    /**
     * Incarnations whose recovery met a redo record of a format this build does not read: left owed for an operator,
     * never run here again (an entry event or a scan would otherwise read the same record again and again).
     */
    private final Set<String> leftForOperator = ConcurrentHashMap.newKeySet();
    private final List<JsonObject> recoveries = new CopyOnWriteArrayList<>();
    /**
     * Recoveries that succeeded here but whose record ({@value #RECOVERED}, or a write before it) was given up
     * ({@link #callMs}): the write runs on and may land later. Taken as this CN's success ({@link #recoveries}) when a
     * later look finds the record written under this CN's claim ({@link #recordedLate}); cleared when a rerun records
     * it. Before (issue 23 §1, dutyd1b), a given-up write that landed made the rescan drop the entry as recovered
     * already and the success was never counted: CI 194's RecoveryDutyTest waited 20 s for it under load.
     */
    private final Map<String, JsonObject> unrecorded = new ConcurrentHashMap<>();
    /** Told of every recovery and failed attempt as it is recorded (the node's metrics). */
    private volatile java.util.function.Consumer<JsonObject> onRecorded = r -> { };
    /** Memory nodes failed over (removed by the memory-node configuration): not waited for. */
    private volatile java.util.function.Predicate<String> memoryNodeRemoved = mn -> false;
    private final AtomicBoolean scanQueued = new AtomicBoolean();
    private volatile boolean stopped;
    private volatile UUID self;
    private UUID owedListener;
    private UUID shardListener;
    private UUID membershipListener;

    /**
     * @param node      this CN's name
     * @param epoch       its epoch (it recovers as {@code node.eEPOCH})
     * @param memoryNodes the memory nodes: it recovers only while it sees every one of them that registered
     * @param recoverer   what runs a recovery (on a loop of this CN)
     * @param log         where a line about each recovery goes
     * @param handOver    gives up this CN's lease, for the reason it is given: a recovery it started is stuck
     */
    public RecoveryDuty(final Vertx vertx, final HazelcastInstance hazelcast, final String node, final long epoch,
                        final List<String> memoryNodes, final Recoverer recoverer, final Consumer<String> log,
                        final Consumer<String> handOver) {
        this.vertx = vertx;
        this.hazelcast = hazelcast;
        this.node = node;
        this.epoch = epoch;
        this.memoryNodes = List.copyOf(memoryNodes);
        this.recoverer = recoverer;
        this.log = log;
        this.handOver = handOver;
        this.calls = java.util.concurrent.Executors.newCachedThreadPool(daemons("scythe-duty-call-" + node));
        this.watch = java.util.concurrent.Executors.newSingleThreadScheduledExecutor(daemons("scythe-duty-watch-" + node));
    }

    private static java.util.concurrent.ThreadFactory daemons(final String name) {
        final java.util.concurrent.atomic.AtomicInteger n = new java.util.concurrent.atomic.AtomicInteger();
        return r -> {
            final Thread t = new Thread(r, name + "-" + n.incrementAndGet());
            t.setDaemon(true);
            return t;
        };
    }

    /**
     * Tells which memory nodes were failed over (removed by the memory-node configuration): recovery then runs
     * without seeing them, as the CN's catalog no longer names them.
     */
    public RecoveryDuty memoryNodeRemoved(final java.util.function.Predicate<String> removed) {
        this.memoryNodeRemoved = removed;
        return this;
    }

    /** Hands a recovery over after {@code ms} instead of {@link #STALLED_MS} (tests). */
    RecoveryDuty stalledAfterMs(final long ms) {
        this.stalledMs = ms;
        return this;
    }

    /**
     * Gives a Hazelcast call up after {@code callMs} instead of {@link #CALL_MS}, warns of an attempt waiting on a step
     * every {@code stepWarnMs} instead of {@link #STEP_WARN_MS}, and tells {@code hook} the step of each call on the
     * thread that runs it (tests: one that hangs).
     */
    RecoveryDuty bounding(final long callMs, final long stepWarnMs, final Consumer<String> hook) {
        this.callMs = callMs;
        this.stepWarnMs = stepWarnMs;
        this.callHook = hook;
        return this;
    }

    /**
     * Runs {@code call} (Hazelcast calls: {@code step} says what it does) on a thread of the duty's and waits for it
     * at most {@link #callMs}: then a WARN names the step, and {@link CallTimedOut} tells the caller to try again
     * later (the call runs on until Hazelcast's own bound, and every step is idempotent). Blocks; on a worker thread.
     */
    private <T> T call(final String step, final java.util.concurrent.Callable<T> call) {
        final java.util.concurrent.Future<T> f;
        try {
            f = submit(step, call);
        } catch (final java.util.concurrent.RejectedExecutionException closed) {
            // Closed (the node exits): stop()'s release of its claims may still be on its way here; run it as before.
            try {
                return call.call();
            } catch (final RuntimeException e) {
                throw e;
            } catch (final Exception e) {
                throw new IllegalStateException(step + " failed", e);
            }
        }
        return await(step, f);
    }

    private <T> java.util.concurrent.Future<T> submit(final String step, final java.util.concurrent.Callable<T> call) {
        return calls.submit(() -> {
            callHook.accept(step);
            return call.call();
        });
    }

    /**
     * The scan of the owed map, waited for as {@link #call}. A scan given up runs on (to Hazelcast's own bound); while
     * {@value #MAX_PARKED_SCANS} such are under way the latest is waited for again rather than a new one started, so
     * that a long split does not park a thread per rescan (review, stop 55), while a fresh scan still gets its chance
     * after one that hangs (a fresh call asks the partition table again).
     */
    private Set<Map.Entry<String, String>> scanOwed() {
        final String step = "a scan of " + OWED;
        java.util.concurrent.Future<Set<Map.Entry<String, String>>> f;
        synchronized (this) {
            f = scanning;
            if (f == null || f.isDone() || scansUnderWay.get() < MAX_PARKED_SCANS) {
                try {
                    scansUnderWay.incrementAndGet();
                    f = submit(step, () -> {
                        try {
                            return scanOwed.apply(owed());
                        } finally {
                            scansUnderWay.decrementAndGet();
                        }
                    });
                } catch (final java.util.concurrent.RejectedExecutionException closed) {
                    scansUnderWay.decrementAndGet();
                    throw new IllegalStateException("the recovery duty is closed: " + step + " not run", closed);
                }
                scanning = f;
            }
        }
        return await(step, f);
    }

    private <T> T await(final String step, final java.util.concurrent.Future<T> f) {
        try {
            return f.get(callMs, java.util.concurrent.TimeUnit.MILLISECONDS);
        } catch (final java.util.concurrent.TimeoutException e) {
            log.accept("WARN recovery duty: " + step + " did not finish within " + callMs + " ms (a Hazelcast "
                + "call); given up, tried again");
            if (dumped.compareAndSet(false, true)) {
                // Once per node (issue 23 §1: CI 193/195's wedge was read from logs alone): what every thread of this
                // JVM, Hazelcast's included, is doing while its call hangs. On this worker thread, not an event loop.
                log.accept("WARN recovery duty: the first Hazelcast call given up in this node; its threads:\n"
                    + ThreadDump.now("of " + node + " at its first given-up Hazelcast call (" + step + ")"));
            }
            throw new CallTimedOut(step, callMs);
        } catch (final java.util.concurrent.ExecutionException e) {
            if (e.getCause() instanceof RuntimeException r) {
                throw r;
            }
            if (e.getCause() instanceof Error r) {
                throw r;
            }
            // A checked failure of a Hazelcast call (MemberLeftException is one, a member leaving mid-call): a map
            // operation that failed, looked at again by a rescan (considerSafely), not an entry left as unreadable
            // (issue 23 §1, dutyd1b: as an IllegalStateException it was logged "not handled" and never looked at again).
            throw new com.hazelcast.core.HazelcastException(step + " failed", e.getCause());
        } catch (final InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(step + " interrupted", e);
        }
    }

    /** {@link #call}, logging the step first: one of the record of {@code incarnation}'s recovery. */
    private <T> T recording(final String incarnation, final long claim, final String step,
                            final java.util.concurrent.Callable<T> body) {
        log.accept("recovering " + incarnation + " (claim " + claim + "): " + step);
        return call(step + " for " + incarnation, body);
    }

    /** Runs a failed recovery again after {@code ms} instead of {@link #RETRY_MS} (tests). */
    RecoveryDuty retryAfterMs(final long ms) {
        this.retryMs = ms;
        return this;
    }

    /**
     * Scans the owed map again after {@code minMs} instead of {@link #RESCAN_MIN_MS} when a map operation failed, up to
     * {@code maxMs} instead of {@link #RESCAN_MAX_MS}, and scans it with {@code scan} (tests: a scan that fails).
     */
    RecoveryDuty rescanning(final long minMs, final long maxMs,
                            final java.util.function.Function<IMap<String, String>, Set<Map.Entry<String, String>>> scan) {
        this.rescanMinMs = minMs;
        this.rescanMaxMs = maxMs;
        this.scanOwed = scan;
        return this;
    }

    /** The fabric identity of {@code node}'s incarnation {@code epoch}: the key of its owed entry. */
    public static String incarnation(final String node, final long epoch) {
        return node + ".e" + epoch;
    }

    /**
     * Bits of a CN's epoch that tell its incarnations apart everywhere: RCC's timestamps carry only the epoch's low 8
     * ({@code RccClock}: WAIT-DIE's and MVCC's {@code tts} words), so a memory node's dead-node step frees every word
     * whose slot and low 8 epoch bits are a dead incarnation's ({@code rcc.DeadWords}).
     */
    public static final int EPOCH_TELL_APART_BITS = 8;

    /**
     * The epoch of a CN's next incarnation after {@code last}: the next one whose low {@value #EPOCH_TELL_APART_BITS}
     * bits are none of {@code owed}'s (the epochs of its incarnations still owed recovery, or not yet known dead), so
     * that a dead incarnation's recovery never takes the new one's words for its own (RCC's 8-bit incarnation, and
     * the 16-bit epoch of transaction ids, {@link #idPrefix}), however many times the node restarted meanwhile.
     *
     * @throws IllegalStateException when every value of those bits is owed (256 incarnations waiting for recovery)
     */
    public static long nextEpoch(final long last, final java.util.Collection<Long> owed) {
        final long mask = (1L << EPOCH_TELL_APART_BITS) - 1;
        final Set<Long> taken = new java.util.HashSet<>();
        for (final long e : owed) {
            taken.add(e & mask);
        }
        for (long next = last + 1; next <= last + mask + 1; next++) {
            if (!taken.contains(next & mask)) {
                return next;
            }
        }
        throw new IllegalStateException(owed.size() + " incarnations of this compute node are still owed recovery: "
            + "no epoch is left whose low " + EPOCH_TELL_APART_BITS + " bits tell the next one apart from them; "
            + "restart it once a live compute node recovered them");
    }

    /**
     * The epochs of CN {@code cn}'s incarnations that a new one must be told apart from: those owed recovery
     * ({@value #OWED}) and the one the registry names ({@code registryEntry}, null: none), unless it was recovered.
     * Blocks (map operations).
     */
    static List<Long> unrecoveredEpochs(final HazelcastInstance hazelcast, final String cn,
                                        final JsonObject registryEntry) {
        final List<Long> epochs = new ArrayList<>();
        for (final String owed : hazelcast.<String, String>getMap(OWED).values()) {
            final JsonObject o = new JsonObject(owed);
            if (cn.equals(o.getString("cn")) && o.getLong("epoch") != null) {
                epochs.add(o.getLong("epoch"));
            }
        }
        if (registryEntry != null && registryEntry.getLong("epoch") != null
            && !registryEntry.getBoolean("recovered", false)
            && !wasRecovered(hazelcast, incarnation(cn, registryEntry.getLong("epoch")))) {
            epochs.add(registryEntry.getLong("epoch"));
        }
        return epochs;
    }

    /** The node bits of the transaction ids of incarnation {@code epoch} of the CN with {@code slot}. */
    public static long idPrefix(final long epoch, final long slot) {
        return ((epoch & 0xffff) << 48) | (slot << 32);
    }

    /**
     * Records that the incarnation of CN {@code cn} that {@code registryEntry} (its {@value ScytheNode#NODES} entry)
     * describes is owed recovery, unless it is already owed or was recovered. Blocks (a map operation).
     *
     * @return whether it was newly owed
     */
    public static boolean owe(final HazelcastInstance hazelcast, final String cn, final JsonObject registryEntry,
                              final String why) {
        return owe(hazelcast, cn, registryEntry, why, false);
    }

    /**
     * The same; {@code leaseExpired} when a memory node fenced the incarnation because its lease on the fabric expired
     * ({@code FabricLease}): it is then recovered although its member may still be in the cluster (paused, not yet
     * dropped by Hazelcast's heartbeat), since the fence, not the membership, is what keeps it from writing.
     */
    static boolean owe(final HazelcastInstance hazelcast, final String cn, final JsonObject registryEntry,
                       final String why, final boolean leaseExpired) {
        if (!NodeRole.CN.label().equals(registryEntry.getString("role"))
            || registryEntry.getBoolean("recovered", false) || registryEntry.getLong("epoch") == null) {
            return false;
        }
        final long epoch = registryEntry.getLong("epoch");
        final long slot = registryEntry.getLong("slot", 0L);
        final String incarnation = incarnation(cn, epoch);
        final IMap<String, String> recovered = hazelcast.getMap(RECOVERED);
        if (recovered.containsKey(incarnation)) {
            return false;
        }
        final String owed = new JsonObject().put("cn", cn).put("epoch", epoch).put("slot", slot)
            .put("prefix", idPrefix(epoch, slot)).put("owedAtMs", System.currentTimeMillis()).put("why", why)
            .put("leaseExpired", leaseExpired).put("claim", 0L).encode();
        final IMap<String, String> owedMap = hazelcast.getMap(OWED);
        if (owedMap.putIfAbsent(incarnation, owed) != null) {
            return false;
        }
        // registryEntry was read before: a recovery may have finished since (recorded, then its entry removed, which
        // is why this put found none). Looked up after the put, the record is there if so: take the mark back.
        if (recovered.containsKey(incarnation)) {
            owedMap.remove(incarnation, owed);
            return false;
        }
        return true;
    }

    /**
     * The incarnation whose transaction ids have node bits {@code idPrefix} if its recovery reported success
     * ({@value #RECOVERED}: its entry's {@code prefix}), else null: what a cluster node asks when it missed a memory
     * node's release of it ({@code ComputeNodeContext#recoveryRecord}). One get of {@value #RECOVERED_BY_PREFIX},
     * written with the record (a recovery recorded by a build before it is not found by prefix: its survivors still
     * hear it by incarnation). Blocks.
     */
    public static String recoveredWithPrefix(final HazelcastInstance hazelcast, final long idPrefix) {
        final String incarnation = hazelcast.<Long, String>getMap(RECOVERED_BY_PREFIX).get(idPrefix);
        // The index is written before the record (finish): an entry counts once the record confirms it.
        return incarnation != null && wasRecovered(hazelcast, incarnation) ? incarnation : null;
    }

    /**
     * Puts {@code incarnation}'s entry of {@value #RECOVERED_BY_PREFIX} from its record's prefix if it is missing
     * (a recovery whose index put did not happen; issue 21 review): true if it put it. Blocks.
     */
    static boolean indexByPrefix(final HazelcastInstance hazelcast, final String incarnation) {
        final String record = hazelcast.<String, String>getMap(RECOVERED).get(incarnation);
        final Long prefix = record == null ? null : new JsonObject(record).getLong("prefix");
        return prefix != null
            && hazelcast.<Long, String>getMap(RECOVERED_BY_PREFIX).putIfAbsent(prefix, incarnation) == null;
    }

    /**
     * Whether compute node {@code cn} cannot hold anything any more: the registry ({@value ScytheNode#NODES}) never
     * named it, or the incarnation it names was recorded recovered ({@value #RECOVERED}: fenced on every memory node
     * and recovered). A member that left, or calls that fail, prove neither (a paused node resumes): SELCC's recovery
     * barrier drops a survivor from its wait only on this (issue 21 review, finding 1). Blocks.
     */
    public static boolean recoveredOrNeverRegistered(final HazelcastInstance hazelcast, final String cn) {
        final String entry = hazelcast.<String, String>getMap(ScytheNode.NODES).get(cn);
        if (entry == null) {
            return true;
        }
        final Long epoch = new JsonObject(entry).getLong("epoch");
        return epoch != null && wasRecovered(hazelcast, incarnation(cn, epoch));
    }

    /**
     * The earlier incarnations of compute node {@code cn} whose recovery was recorded at or after {@code sinceMs}
     * ({@value #RECOVERED}, keys {@code cn.eEPOCH}), to their id prefixes, and the latest {@code atMs} among all of
     * them in {@code latestMs[0]} (-1: none). Blocks; scans the map (once, at a node's start).
     */
    public static Map<String, Long> recoveredOf(final HazelcastInstance hazelcast, final String cn,
                                                final long sinceMs, final long[] latestMs) {
        final Map<String, Long> found = new java.util.TreeMap<>();
        latestMs[0] = -1;
        for (final Map.Entry<String, String> e : hazelcast.<String, String>getMap(RECOVERED).entrySet()) {
            if (e.getKey().startsWith(cn + ".e")) {
                final JsonObject record = new JsonObject(e.getValue());
                final long at = record.getLong("atMs", 0L);
                latestMs[0] = Math.max(latestMs[0], at);
                if (at >= sinceMs) {
                    found.put(e.getKey(), record.getLong("prefix", 0L));
                }
            }
        }
        return found;
    }

    /**
     * The latest {@code atMs} of a recovery of an earlier incarnation of compute node {@code cn} ({@value #RECOVERED},
     * keys {@code cn.eEPOCH}), or -1 when none was recorded: a restarted node whose old incarnation's recovery finished
     * before it started still lets survivors finish their take-backs first (issue 21). Blocks; scans the map.
     */
    public static long lastRecoveredAtMs(final HazelcastInstance hazelcast, final String cn) {
        final long[] last = new long[1];
        recoveredOf(hazelcast, cn, Long.MAX_VALUE, last);
        return last[0];
    }

    /** Whether a recovery of {@code incarnation} reported success ({@value #RECOVERED}). Blocks. */
    public static boolean wasRecovered(final HazelcastInstance hazelcast, final String incarnation) {
        return hazelcast.<String, String>getMap(RECOVERED).containsKey(incarnation);
    }

    /**
     * Registers CN {@code cn}'s new incarnation ({@code entry}, its {@value ScytheNode#NODES} entry) after owing
     * recovery of the incarnation it supersedes: nobody may have seen that one die (it restarted quickly, or twice),
     * and once overwritten the registry no longer names it. Blocks.
     *
     * @return the superseded incarnation if it was newly owed, else {@code null}
     */
    public static String register(final HazelcastInstance hazelcast, final String cn, final JsonObject entry) {
        final IMap<String, String> nodes = hazelcast.getMap(ScytheNode.NODES);
        final String previous = nodes.get(cn);
        String owed = null;
        if (previous != null) {
            final JsonObject before = new JsonObject(previous);
            if (before.getLong("epoch", -1L) != entry.getLong("epoch").longValue()
                && owe(hazelcast, cn, before, "superseded by epoch " + entry.getLong("epoch"))) {
                owed = incarnation(cn, before.getLong("epoch"));
            }
        }
        nodes.put(cn, entry.encode());
        return owed;
    }

    /** The fields of a recovery report that a node's health lists. */
    public static JsonObject describe(final CnRecovery.Report r) {
        final JsonObject described = new JsonObject().put("completeRecords", r.committedRecords())
            .put("incomplete", r.incompleteRecords()).put("applied", r.entriesApplied());
        r.released().forEach(described::put); // each protocol module's release step: tickets, casWords
        return described.put("inserts", r.insertsAbandoned()).put("truncated", r.truncatedRecords())
            // Its own time, split: fence and list on every memory node, read the logs, roll forward, release.
            .put("recoverMs", millis(r.nanos())).put("listedMs", millis(r.listedNanos()))
            .put("scannedMs", millis(r.scannedNanos())).put("rolledMs", millis(r.rolledNanos()));
    }

    private static double millis(final long nanos) {
        return Math.round(nanos / 1e4) / 100.0;
    }

    /** Listens and scans once. Blocks (registers listeners); call off the event loops. */
    public void start() {
        self = hazelcast.getCluster().getLocalMember().getUuid();
        final class OwedChanges implements EntryAddedListener<String, String>, EntryUpdatedListener<String, String> {
            @Override
            public void entryAdded(final EntryEvent<String, String> event) {
                considerLater(event.getKey(), event.getValue());
            }

            @Override
            public void entryUpdated(final EntryEvent<String, String> event) {
                considerLater(event.getKey(), event.getValue());
            }
        }
        final class ShardChanges implements EntryAddedListener<String, String>,
            EntryUpdatedListener<String, String> {
            @Override
            public void entryAdded(final EntryEvent<String, String> event) {
                scanLater();
            }

            @Override
            public void entryUpdated(final EntryEvent<String, String> event) {
                scanLater();
            }
        }
        owedListener = owed().addEntryListener((MapListener) new OwedChanges(), true);
        shardListener = hazelcast.<String, String>getMap(ScytheNode.SHARDS)
            .addEntryListener((MapListener) new ShardChanges(), false);
        membershipListener = hazelcast.getCluster().addMembershipListener(new MembershipListener() {
            @Override
            public void memberAdded(final MembershipEvent event) {
            }

            @Override
            public void memberRemoved(final MembershipEvent event) {
                scanLater(); // a claimant may have left
            }
        });
        scanLater();
    }

    /**
     * Takes no more work (a recovery under way finishes) and releases every claim this member holds ({@link
     * #releaseClaim}: each owed entry {@code claimedBy} it, a recovery under way or left for an operator included), so
     * that the next compute node claims them while this member lives on (its CN lost its lease: issue 23 review;
     * before, only a handed-over claim was released, and the others held every CN off until this member left). The
     * memory nodes admit the next claimant once they fenced this CN. Does not block; idempotent.
     */
    public void stop() {
        stopped = true;
        if (self == null) {
            return; // never started: claims nothing
        }
        vertx.executeBlocking(() -> {
            if (hazelcast.getLifecycleService().isRunning()) {
                releaseEveryClaim();
            }
            return null;
        }, false).onFailure(e -> log.accept("releasing its claims on stopping: " + e));
    }

    /** {@link #releaseClaim} of every owed entry this member claims. Blocks (map operations). */
    void releaseEveryClaim() {
        for (final Map.Entry<String, String> e : call("a scan of " + OWED + " for its claims", () -> owed().entrySet())) {
            if (self.toString().equals(new JsonObject(e.getValue()).getString("claimedBy"))) {
                releaseClaim(e.getKey());
            }
        }
    }

    /** Stops and removes its listeners (its claims pass on as its member leaves). Blocks; idempotent. */
    public void close() {
        stopped = true;
        watch.shutdownNow();
        calls.shutdown(); // a call under way runs on to Hazelcast's bound; nothing waits for it
        try {
            if (hazelcast.getLifecycleService().isRunning()) {
                if (owedListener != null) {
                    owed().removeEntryListener(owedListener);
                }
                if (shardListener != null) {
                    hazelcast.getMap(ScytheNode.SHARDS).removeEntryListener(shardListener);
                }
                if (membershipListener != null) {
                    hazelcast.getCluster().removeMembershipListener(membershipListener);
                }
            }
        } catch (final RuntimeException shuttingDown) {
            // the member is leaving anyway
        }
    }

    /** Recoveries this CN ran: {@code {"cn", "claim", "ms", "ok", ...}} each. */
    public List<JsonObject> recoveries() {
        return List.copyOf(recoveries);
    }

    private IMap<String, String> owed() {
        return hazelcast.getMap(OWED);
    }

    private void scanLater() {
        if (stopped || !scanQueued.compareAndSet(false, true)) {
            return; // one scan queued covers every change before it runs
        }
        blocking(() -> {
            scanQueued.set(false);
            final Set<Map.Entry<String, String>> entries;
            try {
                entries = scanOwed();
            } catch (final RuntimeException e) {
                rescanLater(e);
                return;
            }
            boolean handled = true;
            for (final Map.Entry<String, String> e : entries) {
                handled &= considerSafely(e.getKey(), e.getValue());
            }
            if (handled) {
                rescanDelayMs.set(0);
            }
        });
    }

    /**
     * Scans the owed map again after a pause, {@link #rescanMinMs} doubled per failure in a row up to {@link
     * #rescanMaxMs}: a map operation failed ({@code why}), and no event may come to look again (the stop 44 soak: a
     * scan failed after 120 s of Hazelcast retries and the next came with the next membership event). Does not block.
     */
    private void rescanLater(final Throwable why) {
        if (stopped) {
            return;
        }
        if (!rescanSet.compareAndSet(false, true)) {
            log.accept("recovery duty: " + why + "; a scan of " + OWED + " is due already");
            return;
        }
        final long delay = rescanDelayMs.updateAndGet(d -> d == 0 ? rescanMinMs : Math.min(2 * d, rescanMaxMs));
        log.accept("recovery duty: " + why + "; scans " + OWED + " again in " + delay + " ms");
        vertx.setTimer(delay, t -> {
            rescanSet.set(false);
            scanLater();
        });
    }

    private void considerLater(final String incarnation, final String value) {
        blocking(() -> considerSafely(incarnation, value));
    }

    /**
     * An entry that cannot be read is reported and left as it is; the others are still looked at. One whose map
     * operations failed (Hazelcast's) is looked at again by a rescan ({@link #rescanLater}). Returns whether it was
     * handled without a map operation failing.
     */
    private boolean considerSafely(final String incarnation, final String value) {
        try {
            consider(incarnation, value);
            return true;
        } catch (final com.hazelcast.core.HazelcastException | CallTimedOut e) {
            log.accept("owed entry " + incarnation + " not handled: " + e);
            rescanLater(e);
            return false;
        } catch (final RuntimeException e) {
            log.accept("owed entry " + incarnation + "=" + value + " not handled: " + e);
            return true;
        }
    }

    /** Map operations block: off Hazelcast's event threads and off the event loops. */
    private void blocking(final Runnable body) {
        if (stopped) {
            return;
        }
        vertx.executeBlocking(() -> {
            if (!stopped && hazelcast.getLifecycleService().isRunning()) {
                body.run();
            }
            return null;
        }, false).onFailure(this::rescanLater); // a failed retry or map read looked at again by a scan
    }

    /** Claims and runs the recovery of {@code incarnation} if it falls to this CN. On a worker thread. */
    private void consider(final String incarnation, final String value) {
        if (stopped || running.contains(incarnation) || handedOver.contains(incarnation)
            || leftForOperator.contains(incarnation)) {
            return; // looked at again once its recovery finished (run) or on its retry (finish); never once handed over
        }
        final String record = call("whether " + incarnation + " was recovered (" + RECOVERED + ")",
            () -> hazelcast.<String, String>getMap(RECOVERED).get(incarnation));
        if (record != null) {
            recordedLate(incarnation, record);
            call("dropping the owed entry of " + incarnation + " (recovered already)", () -> {
                dropRecovered(incarnation, value);
                return null;
            });
            return;
        }
        final JsonObject entry = new JsonObject(value);
        final Set<UUID> live = hazelcast.getCluster().getMembers().stream().map(Member::getUuid)
            .collect(Collectors.toSet());
        final IMap<String, String> nodes = hazelcast.getMap(ScytheNode.NODES);
        if (call("whether " + incarnation + " is to be recovered from here (" + ScytheNode.NODES + ")",
            () -> !seesEveryMemoryNode(nodes, live) || !entry.getBoolean("leaseExpired", false)
                && liveCn(nodes.get(entry.getString("cn")), entry.getLong("epoch", -1L), live))) {
            // Cut off, or the incarnation is alive here: left owed until it really dies (then recovered). One whose
            // fabric lease expired was fenced by a memory node for it: recovered at once, member or not.
            return;
        }
        final String claimedBy = entry.getString("claimedBy");
        String claimed = value;
        if (!self.toString().equals(claimedBy)) {
            if (claimedBy != null && live.contains(UUID.fromString(claimedBy))) {
                return; // a live CN is on it
            }
            final Set<UUID> eligible = new java.util.HashSet<>(live);
            entry.getJsonArray("handedOverBy", new io.vertx.core.json.JsonArray())
                .forEach(m -> eligible.remove(UUID.fromString((String) m)));
            if (!incarnation(node, epoch).equals(call("the CN designated for " + incarnation + " ("
                + ScytheNode.SHARDS + ", " + ScytheNode.NODES + ", " + OWED + ")",
                () -> designated(entry.getString("cn"), eligible)))) {
                return; // another CN's, or this member handed it over before (never designated for it again)
            }
            final String claim = entry.copy().put("claimedBy", self.toString()).put("claimant", incarnation(node, epoch))
                .put("claim", entry.getLong("claim", 0L) + 1).encode();
            // A claim given up here that lands later comes back as its update event: claimed by this member, run.
            if (!call("claiming " + incarnation + " (a replace on " + OWED + ")",
                () -> owed().replace(incarnation, value, claim))) {
                return; // changed meanwhile: its update event brings it here again
            }
            claimed = claim;
        }
        if (!running.add(incarnation)) {
            return;
        }
        // Still owed under this claim (a recovery that just finished removed it; a scan may have read it before), and
        // not handed over or stopped since the entry check above: finish marks a hand-over before it lets go of
        // running, so looking again after taking running closes the window a slow scan had (review, stop 41).
        final String mine = claimed;
        try {
            if (stopped || handedOver.contains(incarnation) || leftForOperator.contains(incarnation)
                || !mine.equals(call("the owed entry of " + incarnation + " it claimed", () -> owed().get(incarnation)))) {
                running.remove(incarnation);
                if (stopped && !mine.equals(value)) {
                    // Claimed just now, after stop()'s release may have scanned the map: let it go too, or it stays
                    // held until this member leaves (review, stop 42).
                    releaseClaim(incarnation);
                }
                return;
            }
        } catch (final RuntimeException e) {
            running.remove(incarnation); // a call given up: the rescan it brings looks again
            throw e;
        }
        run(incarnation, new JsonObject(mine), mine);
    }

    /**
     * {@code incarnation} was found recorded ({@code record}, its {@value #RECOVERED} value): if this CN's recovery of it
     * succeeded and its record write was given up ({@link #unrecorded}), and the record is that write's (this
     * incarnation the claimant, under its claim), the write landed late: the success counts here, once.
     */
    private void recordedLate(final String incarnation, final String record) {
        final JsonObject pending = unrecorded.get(incarnation);
        if (pending == null) {
            return;
        }
        final JsonObject written = new JsonObject(record);
        if (!unrecorded.remove(incarnation, pending)) {
            return; // counted meanwhile
        }
        if (incarnation(node, epoch).equals(written.getString("claimant"))
            && java.util.Objects.equals(pending.getLong("claim"), written.getLong("claim"))) {
            record(pending);
            log.accept("recovery of " + incarnation + " recorded by a write given up that landed later: "
                + pending.encode());
        }
    }

    /** Drops the owed entry {@code value} of {@code incarnation}, which was recovered. Blocks (map operations). */
    private void dropRecovered(final String incarnation, final String value) {
        // Owed again from a stale read after its recovery succeeded (see the class comment): nothing to recover,
        // and a mark left would hold up whatever waits for it (settlement, a restarted CN of a peer protocol).
        // Its index by prefix first: a recovery that wrote the record and crashed before removing the owed entry
        // by an older build (the record before the index) may have left it missing.
        if (indexByPrefix(hazelcast, incarnation)) {
            log.accept("recovered " + incarnation + ": its entry of " + RECOVERED_BY_PREFIX + " was missing, put");
        }
        if (owed().remove(incarnation, value)) {
            log.accept("owed entry of " + incarnation + " dropped: it was recovered already (owed again as "
                + new JsonObject(value).getString("why") + ")");
        }
    }

    /**
     * The CN whose duty it is to recover incarnations of {@code cn} ({@code NODE.eEPOCH}): its shard's owner while that
     * is a live member under the epoch the shard map names, else the first live CN by name; {@code null} if none.
     */
    private String designated(final String cn, final Set<UUID> live) {
        final IMap<String, String> nodes = hazelcast.getMap(ScytheNode.NODES);
        // An incarnation whose fabric lease expired (fenced by a memory node) recovers nothing: never designated, so
        // that its duty passes on while its member lives on (issue 23 review). Only those: one owed for another reason
        // while live (a split's merge, left owed until it dies) still recovers others, else with two CNs nobody would
        // be designated (review, stop 42); one superseded or whose member left is not live anyway.
        final Set<String> owedNow = new java.util.HashSet<>();
        owed().forEach((k, v) -> {
            if (new JsonObject(v).getBoolean("leaseExpired", false)) {
                owedNow.add(k);
            }
        });
        final String shardValue = hazelcast.<String, String>getMap(ScytheNode.SHARDS).get(cn);
        if (shardValue != null) {
            final JsonObject shard = new JsonObject(shardValue);
            final String owner = shard.getString("owner");
            final Long ownerEpoch = shard.getLong("ownerEpoch");
            if (owner != null && ownerEpoch != null && liveCn(nodes.get(owner), ownerEpoch, live)
                && !owedNow.contains(incarnation(owner, ownerEpoch))) {
                return incarnation(owner, ownerEpoch);
            }
        }
        final Map<String, JsonObject> liveCns = new TreeMap<>();
        for (final Map.Entry<String, String> e : nodes.entrySet()) {
            final JsonObject registered = new JsonObject(e.getValue());
            if (liveCn(e.getValue(), registered.getLong("epoch", -1L), live)
                && !owedNow.contains(incarnation(e.getKey(), registered.getLong("epoch", -1L)))) {
                liveCns.put(e.getKey(), registered);
            }
        }
        return liveCns.isEmpty() ? null : liveCns.entrySet().stream().findFirst()
            .map(e -> incarnation(e.getKey(), e.getValue().getLong("epoch"))).orElse(null);
    }

    private boolean seesEveryMemoryNode(final IMap<String, String> nodes, final Set<UUID> live) {
        final Set<String> serving = new java.util.HashSet<>();
        for (final String mn : memoryNodes) {
            if (!memoryNodeRemoved.test(mn)) {
                serving.add(mn);
            }
        }
        for (final String mn : nodes.getAll(serving).values()) {
            final String member = new JsonObject(mn).getString("member");
            if (member == null || !live.contains(UUID.fromString(member))) {
                return false;
            }
        }
        return true;
    }

    private static boolean liveCn(final String registryValue, final long epoch, final Set<UUID> live) {
        if (registryValue == null) {
            return false;
        }
        final JsonObject entry = new JsonObject(registryValue);
        final String member = entry.getString("member");
        return NodeRole.CN.label().equals(entry.getString("role")) && entry.getLong("epoch", -1L) == epoch
            && member != null && live.contains(UUID.fromString(member));
    }

    private void run(final String incarnation, final JsonObject owed, final String claimedValue) {
        final long claim = owed.getLong("claim");
        final long startNs = System.nanoTime();
        log.accept("has the recovery duty for " + incarnation + " (claim " + claim + "; owed as "
            + owed.getString("why") + ")");
        final String recovering = "recovering " + incarnation + " (claim " + claim + ")";
        final java.util.concurrent.atomic.AtomicLong stepNs = new java.util.concurrent.atomic.AtomicLong(startNs);
        Attempt attempt;
        try {
            attempt = recoverer.recover(incarnation, claim, new long[] {owed.getLong("prefix", 0L)}, what -> {
                stepNs.set(System.nanoTime());
                log.accept(recovering + ": " + what);
            });
        } catch (final RuntimeException e) {
            attempt = new Attempt(Future.failedFuture(e), () -> "nothing (it did not start)");
        }
        final Future<JsonObject> recovery = attempt.outcome();
        handOverIfStalled(incarnation, claim, attempt, startNs);
        warnWhileWaiting(incarnation, recovering, attempt, startNs, stepNs);
        recovery.onComplete(ar -> vertx.executeBlocking(() -> {
            try {
                finish(incarnation, owed, claimedValue, ar, startNs);
            } finally {
                running.remove(incarnation);
            }
            if (ar.succeeded()) {
                // A mark raised while this recovery ran (its change event came here while running held it, and was
                // dropped) would otherwise wait for the next scan, which a shard change or a member leaving may bring
                // only much later: look once more now that running no longer holds it.
                final String now;
                try {
                    now = call("the owed entry of " + incarnation + " after its recovery",
                        () -> owed().get(incarnation));
                } catch (final CallTimedOut e) {
                    // Recorded already: only the look for a mark raised meanwhile is left, to the rescan.
                    rescanLater(e);
                    return null;
                }
                if (now != null) {
                    considerSafely(incarnation, now);
                }
            }
            return null;
        }, false).onFailure(e -> {
            running.remove(incarnation);
            log.accept("recovery of " + incarnation + " not recorded: " + e);
            // Still owed and claimed by this CN: nothing else brings it back here before the next event.
            rescanLater(e);
        }));
    }

    /**
     * Logs (WARN) every {@link #stepWarnMs} while {@code attempt} has not finished, what it waits for and since when:
     * on the duty's own thread, so that a loop held by something else cannot hide a stalled recovery.
     */
    private void warnWhileWaiting(final String incarnation, final String recovering, final Attempt attempt,
                                  final long startNs, final java.util.concurrent.atomic.AtomicLong stepNs) {
        final java.util.concurrent.ScheduledFuture<?> warning;
        try {
            warning = watch.scheduleWithFixedDelay(() -> {
                // Handed over: said once by the hand-over (the attempt may never end; nothing waits for it here).
                if (!attempt.outcome().isComplete() && !handedOver.contains(incarnation)) {
                    final long now = System.nanoTime();
                    log.accept("WARN " + recovering + ": waiting for " + attempt.waitingFor().get() + " for "
                        + (now - stepNs.get()) / 1_000_000 + " ms (" + (now - startNs) / 1_000_000
                        + " ms since it started; handed over at " + stalledMs + " ms)");
                }
            }, stepWarnMs, stepWarnMs, java.util.concurrent.TimeUnit.MILLISECONDS);
        } catch (final java.util.concurrent.RejectedExecutionException closed) {
            return;
        }
        attempt.outcome().onComplete(ar -> warning.cancel(false));
    }

    /**
     * Gives up this CN's lease if {@code attempt} has not finished within {@link #stalledMs}: retried here, it could
     * race its own verbs still in flight; once this CN is fenced, the next designated CN claims it and the memory
     * nodes admit that larger claim.
     */
    private void handOverIfStalled(final String incarnation, final long claim, final Attempt attempt,
                                   final long startNs) {
        final long timer = vertx.setTimer(stalledMs, t -> {
            if (attempt.outcome().isComplete()) {
                return;
            }
            final String why = "its recovery of " + incarnation + " (claim " + claim + ") did not finish within "
                + stalledMs + " ms, waiting for " + attempt.waitingFor().get();
            record(new JsonObject().put("cn", incarnation).put("claim", claim)
                .put("ms", (System.nanoTime() - startNs) / 1e6).put("ok", false).put("error", why));
            handOver(incarnation, why);
        });
        attempt.outcome().onComplete(ar -> vertx.cancelTimer(timer));
    }

    /**
     * Hands the duty for {@code incarnation} over, once (a stalled attempt that fails in doubt later is not again): gives
     * up this CN's lease and releases its claim on the owed entry for the next designated CN, which never is this
     * member again ({@link #releaseClaim}).
     */
    private void handOver(final String incarnation, final String why) {
        if (handedOver.add(incarnation)) {
            log.accept("hands the recovery duty for " + incarnation + " over: " + why);
            // Not through blocking(): the hand-over stops this duty (the lease lost), and the release must still run.
            vertx.executeBlocking(() -> {
                if (hazelcast.getLifecycleService().isRunning()) {
                    releaseClaim(incarnation);
                }
                return null;
            }, false).onFailure(e -> log.accept("releasing its claim on " + incarnation + ": " + e));
            handOver.accept(why);
        }
    }

    /**
     * Releases this CN's claim on {@code incarnation}'s owed entry: drops {@code claimedBy} and adds this member to
     * {@code handedOverBy} (the members never designated for it again), keeping {@code claim}, so that the next CN
     * claims it with a larger one. Held while this member is live, the claim would keep every other CN off it for as
     * long as this member stays (an {@code onLeaseLost} that never completes its undeploy, or an embedder's that does
     * nothing). The memory nodes admit the next claimant only once they fenced this CN ({@link
     * io.scythe.txn.recovery.RecoveryRpc}: its fabric lease expired, its renewals stopped by the hand-over, or its
     * member left), so nothing of this CN's attempt can land under the next one; until then the next one's attempts
     * fail, are logged and retried. Blocks (map operations).
     */
    void releaseClaim(final String incarnation) {
        final IMap<String, String> owedMap = owed();
        for (int tries = 0; tries < 10; tries++) {
            final String value = call("the owed entry of " + incarnation + " to release", () -> owedMap.get(incarnation));
            if (value == null) {
                return; // recovered meanwhile
            }
            final JsonObject entry = new JsonObject(value);
            if (!self.toString().equals(entry.getString("claimedBy"))) {
                return; // claimed anew by another CN already
            }
            final io.vertx.core.json.JsonArray by = entry.getJsonArray("handedOverBy", new io.vertx.core.json.JsonArray())
                .copy();
            if (!by.contains(self.toString())) {
                by.add(self.toString());
            }
            final JsonObject released = entry.copy().put("handedOverBy", by);
            released.remove("claimedBy");
            released.remove("claimant");
            if (call("releasing its claim on " + incarnation + " (a replace on " + OWED + ")",
                () -> owedMap.replace(incarnation, value, released.encode()))) {
                log.accept("released its claim " + entry.getLong("claim") + " on " + incarnation
                    + " for the next compute node");
                return;
            }
        }
        log.accept("could not release its claim on " + incarnation + " (the entry kept changing); it passes on when "
            + "this member leaves");
    }

    private void finish(final String incarnation, final JsonObject owed, final String claimedValue,
                        final AsyncResult<JsonObject> ar, final long startNs) {
        final JsonObject done = new JsonObject().put("cn", incarnation).put("claim", owed.getLong("claim"))
            .put("ms", (System.nanoTime() - startNs) / 1e6);
        if (ar.succeeded()) {
            done.mergeIn(ar.result() == null ? new JsonObject() : ar.result()).put("ok", true)
                .put("owedMs", System.currentTimeMillis() - owed.getLong("owedAtMs", System.currentTimeMillis()));
            // Each call bounded (CALL_MS): one given up fails this finish, "not recorded", and the rescan that brings
            // runs the recovery again (idempotent) and records it then; a call that lands late writes what a retry
            // writes. Logged one by one: CI 193's stall (issue 23 §1) could have been any of them.
            final long claim = owed.getLong("claim");
            // A write given up may still land (it runs on): remembered, so that a later look that finds the record
            // written under this claim counts this success (recordedLate) instead of dropping the entry silently.
            unrecorded.put(incarnation, done);
            recording(incarnation, claim, "marking " + owed.getString("cn") + "'s registry entry recovered ("
                + ScytheNode.NODES + ")", () -> {
                    markRecovered(owed);
                    return null;
                });
            // The index first (read only with the record, recoveredWithPrefix), then the record: a crash between them
            // leaves an index entry the record does not confirm yet, never a record without its index (the owed entry
            // stays, so the next claimant finds the record and repairs the index: consider).
            if (owed.getLong("prefix") != null) {
                recording(incarnation, claim, "its index by prefix (" + RECOVERED_BY_PREFIX + ")",
                    () -> hazelcast.<Long, String>getMap(RECOVERED_BY_PREFIX).put(owed.getLong("prefix"), incarnation));
            }
            // Recorded for good before the owed entry goes: an owe that finds no entry then finds this (see owe).
            final String record = new JsonObject()
                .put("claimant", incarnation(node, epoch)).put("claim", claim)
                .put("prefix", owed.getLong("prefix", 0L)).put("atMs", System.currentTimeMillis()).encode();
            recording(incarnation, claim, "its record (" + RECOVERED + ")",
                () -> hazelcast.<String, String>getMap(RECOVERED).put(incarnation, record));
            unrecorded.remove(incarnation, done);
            // Recorded for good: the owed entry's removal, if given up, is left to the next look (consider finds the
            // record and drops the entry; run looks once more right after this), and the success counts now. Before,
            // a removal given up failed the finish ("not recorded") and, once it landed, nothing counted the success.
            try {
                if (!recording(incarnation, claim, "removing its owed entry (" + OWED + ")",
                    () -> owed().remove(incarnation, claimedValue))) {
                    log.accept("owed entry of " + incarnation + " changed during its recovery; left in place");
                }
            } catch (final CallTimedOut e) {
                rescanLater(e);
            }
        } else if (io.scythe.txn.recovery.CnRecovery.writesInDoubt(ar.cause())) {
            // A verb of the attempt may still execute (a transport timeout): retried here on a new connection, the
            // roll-forward could release a lock and let another writer commit before that verb lands over it. As a
            // stalled attempt: hand over, so that the memory nodes fence this CN before the next one recovers.
            final String why = "its recovery of " + incarnation + " (claim " + owed.getLong("claim")
                + ") failed with a verb that may still execute: " + ar.cause();
            done.put("ok", false).put("error", why);
            record(done);
            handOver(incarnation, why);
            return;
        } else if (handedOver.contains(incarnation)) {
            done.put("ok", false).put("error", ar.cause() + " (after it was handed over: not retried here)");
        } else if (unreadable(ar.cause()) != null) {
            // A redo record of a format this build does not read: nothing was applied, and running it again (here or
            // on another CN of this build) reads the same record. Left owed, and claimed by this CN, for an operator;
            // the node's health lists it among its recoveries.
            leftForOperator.add(incarnation); // before running lets go of it: no event runs it again
            done.put("ok", false).put("leftForOperator", true).put("error", unreadable(ar.cause()).getMessage());
        } else {
            done.put("ok", false).put("error", String.valueOf(ar.cause()));
            // Still claimed by this CN: it tries again (idempotent), and nobody else takes it while it is live.
            vertx.setTimer(retryMs, t -> blocking(() -> {
                final String now = call("the owed entry of " + incarnation + " for its retry",
                    () -> owed().get(incarnation));
                if (now != null) {
                    considerSafely(incarnation, now);
                }
            }));
        }
        record(done);
        log.accept("recovery of " + done.encode());
    }

    /** The unreadable redo record {@code failure} was caused by, or {@code null}. */
    private static io.scythe.txn.recovery.RedoRecordDescriptor.UnreadableRedoRecordException unreadable(
        final Throwable failure) {
        for (Throwable t = failure; t != null; t = t.getCause() == t ? null : t.getCause()) {
            if (t instanceof io.scythe.txn.recovery.RedoRecordDescriptor.UnreadableRedoRecordException u) {
                return u;
            }
        }
        return null;
    }

    private void record(final JsonObject recovery) {
        recoveries.add(recovery);
        while (recoveries.size() > MAX_RECOVERIES_KEPT) {
            recoveries.remove(0); // a recovery failing for long adds one a second
        }
        onRecorded.accept(recovery);
    }

    /** Calls {@code listener} with every recovery or failed attempt recorded from now on ({@code cn, ms, ok}). */
    public void onRecorded(final java.util.function.Consumer<JsonObject> listener) {
        onRecorded = listener;
    }

    /** Marks the CN's registry entry recovered while it is still this incarnation's: nobody owes it again. */
    private void markRecovered(final JsonObject owed) {
        final IMap<String, String> nodes = hazelcast.getMap(ScytheNode.NODES);
        final String cn = owed.getString("cn");
        final String value = nodes.get(cn);
        if (value == null) {
            return;
        }
        final JsonObject entry = new JsonObject(value);
        if (entry.getLong("epoch", -1L) == owed.getLong("epoch").longValue() && !entry.getBoolean("recovered", false)) {
            nodes.replace(cn, value, entry.copy().put("recovered", true).encode());
        }
    }
}
