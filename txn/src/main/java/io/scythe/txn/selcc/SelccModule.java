package io.scythe.txn.selcc;

import io.scythe.storage.ObjectLayout;
import io.scythe.txn.Protocol;
import io.scythe.txn.spi.ComputeNodeContext;
import io.scythe.txn.spi.HeaderWord;
import io.scythe.txn.spi.ObjectProbe;
import io.scythe.txn.spi.PeerMessaging;
import io.scythe.txn.spi.ProtocolModule;

import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * SELCC as a protocol module (package doc): 2PL (no wait), TO and OCC on SELCC's coherent cache ({@code selcc-2pl},
 * {@code selcc-to}, {@code selcc-occ}) and on SEL's latches released eagerly ({@code sel-2pl}, {@code sel-to},
 * {@code sel-occ}). The latch word is the objects' protocol word ({@code selcc_latch}); an object is held while it is not 0.
 */
public final class SelccModule implements ProtocolModule {
    /**
     * Frames per participant's cache (lines held lazily); beyond it the least recently used idle ones are evicted.
     * Configured by the system property {@code scythe.selcc.cacheFrames}, read when a loop's cache is made.
     */
    public static final int DEFAULT_CACHE_FRAMES = 1 << 16;
    /**
     * Frames evicted at once at most (one doorbell per memory node) when a miss finds the cache full;
     * {@code scythe.selcc.evictBatch}. A batch is also at most {@code 1/evictFraction} of the frames (LineCache).
     */
    public static final int DEFAULT_EVICT_BATCH = 16;
    /**
     * A batch of victims is at most this fraction of the frames ({@code scythe.selcc.evictFraction}): 32 frames, 2
     * at once; 256 frames, 16 (LineCache#evictionCap).
     */
    public static final int DEFAULT_EVICT_FRACTION = 16;

    static int evictFraction() {
        return positive("scythe.selcc.evictFraction", Integer.getInteger("scythe.selcc.evictFraction",
            DEFAULT_EVICT_FRACTION));
    }
    /**
     * A frame idle this long is released (flushed if dirty); also what flushes every copy once a run stops;
     * {@code scythe.selcc.leaseNs}.
     */
    public static final long DEFAULT_LEASE_NS = 1_000_000L;

    /**
     * Latch rounds (each after invalidations) before an acquisition by a transaction that holds nothing gives up;
     * {@code scythe.selcc.rounds}. Two (one resend): on skewed SmallBank at 8 CNs, 6 rounds kept first accesses
     * waiting up to 250 us on lines in use elsewhere, while their loop's other transactions queued behind them
     * (136 k txn/s against 211 k with 2; 3 gave 190 k).
     */
    public static final int DEFAULT_ROUNDS = 2;
    /**
     * Rounds an acquisition may take in all, as a multiple of {@link #rounds} (LineCache: the chase bound). 1: on
     * skewed SmallBank at 8 CNs, 4 gave 180 k txn/s against 211 k (1 loop per CN) and 112 k against 165 k (4 loops),
     * though 1.94 M against 1.60 M at θ = 10 write-only YCSB.
     */
    public static final int DEFAULT_CHASE_ROUNDS = 1;

    static int chaseRounds() {
        return positive("scythe.selcc.chaseRounds", Integer.getInteger("scythe.selcc.chaseRounds",
            DEFAULT_CHASE_ROUNDS));
    }

    /**
     * {@code C·RTT} of the resend interval after a dropped invalidation (divided by the round number):
     * {@code scythe.selcc.resendNs}; C = 4 times a 2 us round trip.
     */
    public static final long DEFAULT_RESEND_NS = 8_000L;

    /**
     * How long a frame in use by local transactions keeps an invalidation from a sender that may wait (one holding no
     * other line) before answering it dropped; it is served as soon as the local transactions let go (§5.3.2's
     * remembered messages, highest priority first): {@code scythe.selcc.deferNs}; 0 drops every such message at
     * once (the sender resends after {@code C·RTT/N_r}). Default: one resend interval ({@code C·RTT}); four kept
     * senders waiting on lines whose local transactions did not let go in time (107 k txn/s on skewed SmallBank at
     * 8 CNs against 211 k).
     */
    public static final long DEFAULT_DEFER_NS = DEFAULT_RESEND_NS;

    /**
     * A remembered invalidation waits {@link #deferNs} times its sender's priority (its retries of the line, aged
     * across attempts), at most this many times: {@code scythe.selcc.deferCap}. 8: on skewed SmallBank at 4 CNs
     * (20 ms) 50.3 k txn/s, p999 9.8 ms against 47.0 k, 14.5 ms with 1 (no scaling).
     */
    public static final int DEFAULT_DEFER_PRIORITY_CAP = 8;

    static int deferPriorityCap() {
        return positive("scythe.selcc.deferCap", Integer.getInteger("scythe.selcc.deferCap",
            DEFAULT_DEFER_PRIORITY_CAP));
    }

    /**
     * Priority matching (§5.3.2): a writer that took a line Exclusive after retrying records its priority in the frame,
     * and global readers' PeerRd of lower priority are dropped (they retry and age); {@code
     * scythe.selcc.priorityMatching}, off by default (not yet measured in the paper's single-writer setup).
     */
    static boolean priorityMatching() {
        return Boolean.parseBoolean(System.getProperty("scythe.selcc.priorityMatching", "false"));
    }

    /**
     * The Fig. 18 ablation's switches (YCSB uniform), each on by default and each turning one feature off from the
     * whole system (the paper adds them one at a time, cumulatively), read once per cache: {@code
     * scythe.selcc.forwarding} (off: a case-1 holder flushes its dirty range to the memory node with the handover FAA,
     * a case-2 holder sends no copy with its flush, and the requester READs the line from the memory node), {@code
     * scythe.selcc.batchedEviction} (off: a miss that finds the cache full evicts one victim, one doorbell, and waits
     * for its release to land), {@code scythe.selcc.dirtyBounds} (off: a flush WRITEs the
     * whole value of a dirty line, not its dirty range).
     */
    static boolean feature(final String name) {
        return Boolean.parseBoolean(System.getProperty("scythe.selcc." + name, "true"));
    }

    /**
     * Registered receive slots per participant (§4.4.1's forwarding by one-sided WRITE): an invalidation that may be
     * answered with a copy (PeerRd, PeerWr to the X holder) names a free slot of its sender's, and the holder WRITEs
     * its copy there; {@code scythe.selcc.receiveSlots}. An acquisition uses one at a time while its invalidation is
     * in flight, so a loop needs about as many as it runs transactions at once; with none free (or 0 slots, or a line
     * longer than a slot) the copy rides in the RRPC reply instead (counted).
     */
    public static final int DEFAULT_RECEIVE_SLOTS = 32;

    static int receiveSlots() {
        final int slots = Integer.getInteger("scythe.selcc.receiveSlots", DEFAULT_RECEIVE_SLOTS);
        if (slots < 0) {
            throw new IllegalArgumentException("scythe.selcc.receiveSlots=" + slots + " must be at least 0");
        }
        return slots;
    }

    /** The longest line a receive slot holds ({@code scythe.selcc.slotLineBytes}): the paper's 2 KB and a header. */
    static int slotLineBytes() {
        return positive("scythe.selcc.slotLineBytes", Integer.getInteger("scythe.selcc.slotLineBytes",
            DEFAULT_PEER_BUCKET_BYTES));
    }

    /**
     * Cluster nodes: how long a requester whose invalidation to an X holder failed waits for the word to settle
     * ({@code scythe.selcc.deadHolderWaitNs}; {@code LineCache#deadHolder}): past a dead node's recovery (the member
     * leaves after the heartbeat timeout, then the recovery runs: about 10 s in the chaos runs).
     */
    public static final long DEFAULT_DEAD_HOLDER_WAIT_NS = 120_000_000_000L;

    static long deadHolderWaitNs() {
        return positive("scythe.selcc.deadHolderWaitNs", Long.getLong("scythe.selcc.deadHolderWaitNs",
            DEFAULT_DEAD_HOLDER_WAIT_NS)).longValue();
    }

    static long deferNs() {
        final long defer = Long.getLong("scythe.selcc.deferNs", DEFAULT_DEFER_NS);
        if (defer < 0) {
            throw new IllegalArgumentException("scythe.selcc.deferNs=" + defer + " must be at least 0");
        }
        return defer;
    }

    /**
     * The reader spin flag's unit (§5.3.2): a reader participant that received a writer's invalidation of priority
     * p (at least {@link #SPIN_MIN_PRIORITY}: the writer tried before) makes its own global Shared acquisitions of that
     * line wait p times this long first; {@code scythe.selcc.spinNs}, 0 turns the flag off. Default: a quarter of
     * {@code C·RTT} (2 us), so a writer at its third try gets a 6 us window.
     */
    public static final long DEFAULT_SPIN_NS = DEFAULT_RESEND_NS / 4;
    /** The lowest writer priority that sets a reader's spin flag: a writer's second round. */
    static final int SPIN_MIN_PRIORITY = 2;

    static long spinNs() {
        final long spin = Long.getLong("scythe.selcc.spinNs", DEFAULT_SPIN_NS);
        if (spin < 0) {
            throw new IllegalArgumentException("scythe.selcc.spinNs=" + spin + " must be at least 0");
        }
        return spin;
    }

    /**
     * γ of the lease (§5.3.1): once another participant's invalidation was dropped because local transactions held a
     * line, they take it at most this many more times before the loop lets it go; {@code scythe.selcc.gamma}
     * (0: at once; {@link Integer#MAX_VALUE}: never, the paper's γ = ∞).
     */
    public static final int DEFAULT_GAMMA = 256;

    static int gamma() {
        final int gamma = Integer.getInteger("scythe.selcc.gamma", DEFAULT_GAMMA);
        if (gamma < 0) {
            throw new IllegalArgumentException("scythe.selcc.gamma=" + gamma + " must be at least 0");
        }
        return gamma;
    }

    static int rounds() {
        return positive("scythe.selcc.rounds", Integer.getInteger("scythe.selcc.rounds", DEFAULT_ROUNDS));
    }

    static long resendNs() {
        return positive("scythe.selcc.resendNs", Long.getLong("scythe.selcc.resendNs", DEFAULT_RESEND_NS));
    }

    static int cacheFrames() {
        return positive("scythe.selcc.cacheFrames", Integer.getInteger("scythe.selcc.cacheFrames",
            DEFAULT_CACHE_FRAMES));
    }

    static int evictBatch() {
        return positive("scythe.selcc.evictBatch", Integer.getInteger("scythe.selcc.evictBatch",
            DEFAULT_EVICT_BATCH));
    }

    static long leaseNs() {
        return positive("scythe.selcc.leaseNs", Long.getLong("scythe.selcc.leaseNs", DEFAULT_LEASE_NS));
    }

    private static <N extends Number> N positive(final String name, final N value) {
        if (value.longValue() <= 0) {
            throw new IllegalArgumentException(name + "=" + value + " must be positive");
        }
        return value;
    }

    /** 2PL, no wait, on SELCC's coherent cache (lazy release, invalidations, handover with the copy forwarded). */
    public static final Protocol SELCC_2PL = Protocol.of("selcc-2pl", (runtime, hint) -> new SelccTxn(runtime));
    /** Timestamp ordering on SELCC's cache (§6.4): {@code rts}/{@code wts} in 16 bytes of room after each value. */
    public static final Protocol SELCC_TO = timestamped("selcc-to", runtime -> new SelccTxn(runtime,
        SelccTxn.Mode.TO));
    /** Optimistic concurrency control on SELCC's cache (§6.4): latched at the read and again at validation. */
    public static final Protocol SELCC_OCC = Protocol.of("selcc-occ", (runtime, hint) -> new SelccTxn(runtime,
        SelccTxn.Mode.OCC));
    /** 2PL, no wait, on the SEL baseline's latches (eager release, no cache). */
    public static final Protocol SEL_2PL = Protocol.of("sel-2pl", (runtime, hint) -> new Sel2plTxn(runtime));
    /** OCC on SEL's latches (Fig. 19a): Shared for the moment of each read and of its validation, no cache. */
    public static final Protocol SEL_OCC = Protocol.of("sel-occ", (runtime, hint) -> new Sel2plTxn(runtime,
        Sel2plTxn.Mode.OCC));
    /** TO on SEL's latches (Fig. 19a): {@code rts}/{@code wts} in the object's room as {@code selcc-to}'s, no cache. */
    public static final Protocol SEL_TO = timestamped("sel-to", runtime -> new Sel2plTxn(runtime,
        Sel2plTxn.Mode.TO));

    /** A TO protocol: its transactions from {@code begin}, {@code rts}/{@code wts} in room after each value. */
    private static Protocol timestamped(final String name,
                                        final java.util.function.Function<io.scythe.txn.TxnRuntime, io.scythe.txn.Txn> begin) {
        return new Protocol() {
            @Override
            public String name() {
                return name;
            }

            @Override
            public io.scythe.txn.Txn begin(final io.scythe.txn.TxnRuntime runtime, final boolean hint) {
                return begin.apply(runtime);
            }

            @Override
            public int objectRoom(final io.scythe.storage.TableSchema schema) {
                return SelccTxn.TO_ROOM;
            }
        };
    }

    @Override
    public String name() {
        return "selcc";
    }

    /**
     * {@code sel-occ} and {@code sel-to} run the explorer's TPC-C seeds 4x longer (600 us): with no cache every read
     * is a round trip, and OCC's validation latches each read again, so a NewOrder outlasted the 150 us run and not
     * one of 100 seeds committed a transaction (sel-occ; sel-to 12), leaving the serializability check nothing to
     * check. Every other protocol's seeds as they were.
     */
    @Override
    public int explorerTpccRunScale(final Protocol protocol) {
        return protocol.name().equals(SEL_OCC.name()) || protocol.name().equals(SEL_TO.name()) ? 4 : 1;
    }

    @Override
    public List<Protocol> protocols() {
        return List.of(SELCC_2PL, SELCC_TO, SELCC_OCC, SEL_2PL, SEL_OCC, SEL_TO);
    }

    /**
     * Not in the default lists: none takes more than 58 loops; asked for by name
     * ({@code --protocols selcc-2pl,selcc-to,selcc-occ,sel-2pl,sel-occ,sel-to}).
     */
    @Override
    public boolean listed() {
        return false;
    }

    /**
     * Refused for every protocol of this module (issue 23 review): their redo records carry commit version 0 (each
     * object installs its read version + 1, no one commit version), so a record of an earlier term that names a
     * promoted primary cannot be settled by versions ({@code CnRecovery#settlePromoted} refuses version 0) and its
     * recovery would be retried every second for ever. A memory node's death is then logged as not failed over.
     */
    @Override
    public String clusterMemoryNodeFailoverRefusal(final Protocol protocol) {
        return protocols().stream().anyMatch(p -> p.name().equals(protocol.name())) ? protocol.name() + "'s redo "
            + "records carry commit version 0, so recovery cannot settle one of an earlier term on a promoted copy by "
            + "versions: SELCC (selcc-2pl, selcc-to, selcc-occ, sel-2pl, sel-occ, sel-to) has no memory-node failover "
            + "in cluster mode"
            : null;
    }

    /**
     * SELCC's invalidations go from any loop to the loop that caches the line, on any compute node (its own included).
     * The SEL baseline (no cache) calls no other compute node, but keeps the peers its runs had: without them its
     * compute nodes' loops poll no peer rings, which changes its simulated results (sel-2pl, smallbank, 2 CNs, seed
     * 1: 87 committed and 6,896 events with them, 83 and 11,982 without). NONE for it is a deliberate change to make
     * with its numbers, not in a refactor.
     */
    @Override
    public PeerMessaging peerMessaging(final Protocol protocol) {
        return PeerMessaging.EVERY_LOOP;
    }

    /**
     * Bytes of the peers' RRPC buckets: a handover forwards the line in its reply, so a bucket must hold a whole line
     * and the reply's header ({@code scythe.selcc.peerBucketBytes}; default for the paper's 2 KB lines, object header
     * included: 2 KB + 256).
     */
    public static final int DEFAULT_PEER_BUCKET_BYTES = 2048 + 256;

    @Override
    public io.scythe.rrpc.RrpcOptions peerOptions(final io.scythe.rrpc.RrpcOptions defaults) {
        return defaults.bucketBytes(Integer.getInteger("scythe.selcc.peerBucketBytes", DEFAULT_PEER_BUCKET_BYTES));
    }

    /**
     * Cluster nodes run every SELCC protocol (issue 21): their loops are numbered by configuration
     * ({@code ComputeNodePeers#loopNumber}, the same on every node), which are the participants ({@link Participants});
     * a dead node's bits are found by the memory nodes from its registry entry ({@code MemoryNodeContext#loopNumbers})
     * and cleared by the dead-node step, inside its recovery; a restarted node, whose loops take the same numbers,
     * serves no transaction before its earlier incarnations are recovered ({@link #startComputeNode}). Package doc
     * "Cluster nodes" for what is left.
     */
    @Override
    public String clusterRefusal(final Protocol protocol) {
        return null;
    }

    /**
     * A dead compute node is recovered under every SELCC protocol in runs whose commits write redo records (the
     * simulator's {@code --redo-log}, which {@code --crash-recover} needs; package doc "Dead compute nodes"):
     * {@code selcc-2pl}, {@code selcc-occ} and {@code selcc-to} log and write through (TO also its reads' {@code rts}
     * raises), {@code sel-2pl} logs before its write-back; the survivor's recovery rolls the dead node's records
     * forward ({@link SelccRecovery#LOCK_KIND}, {@link SelccRecovery#TO_LOCK_KIND}), the memory nodes bury its
     * CAS-locked inserts and clear its participants' bits ({@link #startMemoryNode}).
     * So no {@code crashRefusal}. What SELCC's redo records name as their lock.
     */
    @Override
    public List<io.scythe.txn.spi.LockKind> lockKinds() {
        return List.of(SelccRecovery.LOCK_KIND, SelccRecovery.TO_LOCK_KIND);
    }

    /**
     * The memory node's steps of a dead compute node's recovery: after its records were rolled forward, its inserts
     * left CAS-locked are buried in place ({@link SelccRecovery#buryDead}), then every latch word
     * loses its participants' bits ({@link SelccRecovery#clearDead}; nothing when no SELCC participant of it is known,
     * as in every run of another protocol).
     */
    @Override
    public void startMemoryNode(final io.scythe.txn.spi.MemoryNodeContext node) {
        node.onDeadNode(io.scythe.txn.spi.MemoryNodeContext.Phase.BEFORE_INSERTS, SelccRecovery.BURIED,
            (dead, idPrefixes) -> SelccRecovery.buryDead(node.db(), idPrefixes, node::loopNumbers));
        node.onDeadNode(io.scythe.txn.spi.MemoryNodeContext.Phase.AFTER_INSERTS, SelccRecovery.COUNTED,
            (dead, idPrefixes) -> SelccRecovery.clearDead(node.db(), idPrefixes, node::loopNumbers));
    }

    /**
     * Serves invalidations on the node's peers; each loop's cache is made on first use (from its PeerLoops). A
     * restarted cluster node whose earlier incarnations are still owed recovery ({@code awaitsOwnRecovery}) takes no
     * latch until the host says they are recovered: its loops reuse their participant numbers, so a latch it took
     * before the memory nodes' dead-node step of the old incarnation ran would lose its bits to that step, and the old
     * incarnation's bits would read as its own ({@link #awaitingOwnRecovery}).
     */
    @Override
    public ComputeNodeContext.LoopSetUp startComputeNode(final ComputeNodeContext node) {
        hearReleases(node, node.peers());
        countRecoveries(node, node.peers()); // before any loop's cache exists: each asks at use, never captures it
        LineCache.serve(node.peers());
        if (node.separateProcesses()) {
            LineCache.serveBarrier(node.peers());
        }
        awaitOwnRecovery(node, node.peers());
        return ComputeNodeContext.LoopSetUp.NONE;
    }

    /**
     * When {@code node} awaits its own recovery, holds back the latches of its loops (known by {@code key}, their
     * peers) until the host names this node recovered and then every live survivor acknowledged its earlier
     * incarnations ({@link RecoveryBarrier}, asked over the node's peers).
     */
    static void awaitOwnRecovery(final ComputeNodeContext node, final Object key) {
        if (!node.awaitsOwnRecovery()) {
            return;
        }
        final ComputeNodeContext.RecoveryRecord record = node.recoveryRecord();
        awaitOwnRecovery(node, key, node.peers().loops(), RecoveryBarrier.over(node.peers()),
            peer -> record == null ? io.vertx.core.Future.succeededFuture(false)
                : record.recoveredOrNeverRegistered(peer),
            TimeUnit.MILLISECONDS.toNanos(RecoveryBarrier.waitMs()));
    }

    /**
     * As above, asking each of {@code loops} loops of every other compute node by {@code ask}, dropping one whose calls
     * fail only once {@code gone} (the host's record) says it holds nothing any more; past {@code waitNs} it is flagged
     * overdue (standard error with the time, and the node's health, {@link #barrier}) and goes on asking: the node
     * takes no latch until every live survivor acknowledged (never a silent proceed, never a refusal for good).
     */
    static void awaitOwnRecovery(final ComputeNodeContext node, final Object key, final int loops,
                                 final RecoveryBarrier.Ask ask,
                                 final java.util.function.Function<String, io.vertx.core.Future<Boolean>> gone,
                                 final long waitNs) {
        if (!node.awaitsOwnRecovery()) {
            return;
        }
        final String self = node.computeNodes().get(node.index());
        synchronized (AWAITING) {
            awaitingNow(key, "awaiting the recovery of its earlier incarnations");
        }
        node.onPeerRecovered((name, prefix, mask) -> {
            if (!self.equals(name)) {
                return null;
            }
            final java.util.Map<String, Long> earlier = node.earlierIncarnations();
            final List<String> survivors = node.computeNodes().stream().filter(n -> !n.equals(self)).toList();
            synchronized (AWAITING) {
                awaitingNow(key, "awaiting the survivors' acknowledgements of " + earlier.keySet());
            }
            RecoveryBarrier.await(survivors, loops, earlier, ask, gone, SelccModule::sleep, System::nanoTime, waitNs,
                why -> {
                    synchronized (AWAITING) {
                        if (AWAITING.containsKey(key)) {
                            awaitingNow(key, "overdue: " + why);
                        }
                    }
                    System.err.println(java.time.Instant.now() + " SELCC recovery barrier OVERDUE: " + why);
                }, () -> node.peers() != null && node.peers().closed()).onComplete(ar -> {
                    if (ar.failed()) { // the node closed: its gate stays shut, its health says why
                        synchronized (AWAITING) {
                            awaitingNow(key, "stopped: " + ar.cause().getMessage());
                        }
                        System.err.println(java.time.Instant.now() + " SELCC " + ar.cause().getMessage());
                        return;
                    }
                    synchronized (AWAITING) {
                        awaitingNow(key, null);
                    }
                    System.err.println(java.time.Instant.now() + " SELCC recovery barrier passed (" + ar.result()
                        + "): latches taken from now on");
                });
            return "SELCC: earlier incarnations " + earlier.keySet() + " recovered; latches taken once every live "
                + "survivor's loop acknowledged them (" + survivors + " x " + loops + " loops)";
        });
    }

    /** A future completed {@code ns} from now, on no event loop (the barrier's pacing). */
    private static io.vertx.core.Future<Void> sleep(final long ns) {
        final io.vertx.core.Promise<Void> p = io.vertx.core.Promise.promise();
        java.util.concurrent.CompletableFuture.delayedExecutor(ns, TimeUnit.NANOSECONDS).execute(p::complete);
        return p.future();
    }

    /**
     * Where the recovery barrier of the compute node known by {@code key} stands: null once passed (or never
     * awaited), else what it waits for, and since when it is overdue (health, tests).
     */
    static String barrier(final Object key) {
        synchronized (AWAITING) {
            return AWAITING.isEmpty() ? null : AWAITING.get(key);
        }
    }

    /**
     * Compute nodes (by their peers) in processes of their own (cluster nodes), each with the recoveries of other
     * compute nodes' dead incarnations its host told it of, counted by node name ({@link #countRecoveries}).
     */
    private static final java.util.Map<Object, java.util.Map<String, Long>> RECOVERIES = new java.util.WeakHashMap<>();

    /**
     * On a cluster node, counts the recoveries of other nodes' dead incarnations the host tells of
     * ({@code ComputeNodeContext#onPeerRecovered}: the incarnation stopped being owed, so every memory node's dead-node
     * step cleared its participants' bits): survivors learn so that a number the step cleared stays cleared, which
     * they cannot ask the memory nodes' view ({@link SelccRecovery#cleared}, in their processes). {@code key}: the
     * node's peers.
     */
    static void countRecoveries(final ComputeNodeContext node, final Object key) {
        if (!node.separateProcesses()) {
            return;
        }
        final String self = node.computeNodes().get(node.index());
        final java.util.Map<String, Long> counts = new java.util.concurrent.ConcurrentHashMap<>();
        final ReleasesHeard heard = releases(key);
        synchronized (AWAITING) {
            RECOVERIES.put(key, counts);
        }
        node.onPeerRecovered(new ComputeNodeContext.PeerRecovered() {
            @Override
            public String recovered(final String name, final long prefix, final long mask) {
                return recovered(null, name, prefix, mask);
            }

            @Override
            public String recovered(final String incarnation, final String name, final long prefix, final long mask) {
                if (self.equals(name)) {
                    return null;
                }
                counts.merge(name, 1L, Long::sum);
                if (heard != null && incarnation != null) { // per incarnation: the handover path decides by it
                    heard.recordedRecovered(incarnation, prefix);
                }
                return "SELCC: " + name + "'s latch bits cleared on every memory node (recovery " + counts.get(name)
                    + " of it seen here)";
            }
        });
    }

    /** Per cluster node (by its peers), the memory nodes' releases of dead incarnations it heard of. */
    private static final java.util.Map<Object, ReleasesHeard> RELEASES = new java.util.WeakHashMap<>();

    /**
     * On a cluster node, records each memory node's release of another node's dead incarnation the host tells of
     * ({@code ComputeNodeContext#onPeerReleased}: that memory node's dead-node step ran, before the whole recovery is
     * over): {@link ReleasesHeard}, asked by the node's caches ({@link #releases}). {@code key}: the node's peers.
     */
    static void hearReleases(final ComputeNodeContext node, final Object key) {
        if (!node.separateProcesses()) {
            return;
        }
        final ReleasesHeard heard = new ReleasesHeard(node.recoveryRecord(), System::nanoTime);
        // Cluster nodes: /health shows the watched take-backs dropped (each may leave a dead participant's bit set).
        try {
            node.shared().put(ComputeNodeContext.MODULE_HEALTH,
                (java.util.function.Supplier<java.util.Map<String, Object>>)
                    () -> {
                        final java.util.Map<String, Object> h = new java.util.LinkedHashMap<>();
                        h.put("lateTakeBacksDropped", LineCache.LATE_DROPPED.get());
                        final String barrier = barrier(key);
                        h.put("recoveryBarrier", barrier == null ? "passed or not awaited" : barrier);
                        return h;
                    });
        } catch (final UnsupportedOperationException none) { // a host that shares no state (tests): no health to show
        }
        synchronized (AWAITING) {
            RELEASES.put(key, heard);
        }
        node.onPeerReleased((incarnation, idPrefixes, memoryNode) -> {
            final boolean news = !heard.released(incarnation);
            heard.heard(incarnation, idPrefixes, memoryNode);
            return news ? "SELCC: " + incarnation + " released on " + memoryNode + " (first memory node heard of): its "
                + "messages are dropped, handovers to it taken back" : null;
        });
    }

    /** What the cluster node of {@code peers} heard of the memory nodes' releases, or null (other hosts). */
    static ReleasesHeard releases(final Object peers) {
        synchronized (AWAITING) {
            return RELEASES.isEmpty() ? null : RELEASES.get(peers);
        }
    }

    /** Whether the compute node of {@code peers} runs in a process of its own ({@code ComputeNodeContext}). */
    static boolean separateProcesses(final Object peers) {
        return recoveries(peers) != null;
    }

    /**
     * The recoveries of dead incarnations told to the cluster node of {@code peers}, by compute node name (read
     * only; any thread), or null when it is not a cluster node (the simulator and the embedded cluster ask
     * {@link SelccRecovery#cleared}).
     */
    static java.util.Map<String, Long> recoveries(final Object peers) {
        synchronized (AWAITING) {
            return RECOVERIES.isEmpty() ? null : RECOVERIES.get(peers);
        }
    }

    /**
     * Restarted compute nodes (by their peers) that take no latch yet: what each waits for (its earlier incarnations'
     * recovery, then the survivors' acknowledgements, {@link RecoveryBarrier}), and whether it is overdue.
     */
    private static final java.util.Map<Object, String> AWAITING = new java.util.WeakHashMap<>();
    /**
     * False while no node of this process awaits its barrier: the fast path of {@link #awaiting}, asked on every line
     * cache miss of every loop, without the lock (issue 21 review). Set under AWAITING's lock after each change; a
     * key the weak map dropped leaves it true, which only sends the check to the lock.
     */
    private static volatile boolean anyAwaiting;

    /** Records where {@code key}'s barrier stands ({@code null}: passed). Under AWAITING's lock. */
    private static void awaitingNow(final Object key, final String what) {
        if (what == null) {
            AWAITING.remove(key);
        } else {
            AWAITING.put(key, what);
        }
        anyAwaiting = !AWAITING.isEmpty();
    }

    /** Whether the compute node whose loops are known by {@code key} takes no latch yet ({@link #awaitOwnRecovery}). */
    static boolean awaiting(final Object key) {
        if (!anyAwaiting) {
            return false;
        }
        synchronized (AWAITING) {
            return !AWAITING.isEmpty() && AWAITING.containsKey(key);
        }
    }

    /** Whether {@code runtime}'s compute node must take no latch yet ({@link #startComputeNode}). */
    static boolean awaitingOwnRecovery(final io.scythe.txn.TxnRuntime runtime) {
        final io.scythe.txn.PeerLoops loops = runtime.peerLoops();
        return loops != null && awaiting(loops.peers());
    }

    /**
     * Null when {@code runtime}'s compute node may take latches, else the abort of an access that would take one
     * before its recovery barrier passed ({@link #awaitOwnRecovery}): retried by the coordinator after its back-off.
     * Checked where every latch is taken ({@code LineCache}'s acquisitions, {@code LatchTxn}'s reads and inserts), so
     * no path (a read, an insert's latch, a B-link node) takes one early (issue 21 review, finding 2).
     */
    static <T> io.vertx.core.Future<T> notYet(final io.scythe.txn.TxnRuntime runtime) {
        if (!awaitingOwnRecovery(runtime)) {
            return null;
        }
        return io.vertx.core.Future.failedFuture(new io.scythe.txn.AbortException(io.scythe.txn.AbortReason.LOCKED,
            "this restarted compute node takes no SELCC latch yet (its earlier incarnations' participant numbers are "
            + "its own): " + barrier(runtime.peerLoops().peers())));
    }

    @Override
    public List<HeaderWord> headerWords() {
        return List.of(HeaderWord.PROTOCOL_WORD); // the latch word
    }

    /**
     * A cache's idle frames are released within one and a half leases (swept every half lease) and their FAAs land
     * microseconds later: two leases let a run that stopped as its last client finished see no latch cached.
     */
    @Override
    public long settleNs() {
        return 2 * leaseNs();
    }

    @Override
    public ObjectProbe probe() {
        return (table, header) -> table.objectMemory().getLongVolatile(header + ObjectLayout.PROTOCOL_WORD_OFFSET)
            != LatchWord.FREE;
    }
}
