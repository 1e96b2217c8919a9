package io.scythe.txn.lotus;

import io.scythe.rrpc.CnPeers;
import io.scythe.rrpc.RpcException;
import io.scythe.rrpc.RpcRequest;
import io.scythe.rrpc.RpcResponder;
import io.scythe.txn.TxnRuntime;
import io.scythe.txn.spi.ComputeNodeContext;
import org.agrona.DirectBuffer;
import org.agrona.concurrent.UnsafeBuffer;

import java.lang.ref.WeakReference;
import java.util.List;
import java.util.Map;
import java.util.WeakHashMap;
import java.util.concurrent.Executor;
import java.util.concurrent.atomic.LongAdder;

/**
 * One compute node's Lotus state: its lock table for the shards it owns, the shard owners as it knows them, and the
 * lock RPC handlers its peers call (run on the loop that receives them: Lotus has no RPC threads; loop {@code i} of
 * a peer calls loop {@code i} here). A key of a shard this node does not own is answered with
 * {@link LockRpc#OUT_OF_RANGE}.
 */
public final class LotusNode {
    /** Each loop's view of its node ({@link Loop}), a runtime extension set by the host. */
    static final TxnRuntime.Key<Loop> LOOP = new TxnRuntime.Key<>("lotus.loop");
    /**
     * The node of each CnPeers, for tests and end-of-run checks. Both weak: a node references its CnPeers, so a strong
     * value would keep every simulated cluster alive (the explorer runs hundreds).
     */
    private static final Map<CnPeers, WeakReference<LotusNode>> BY_PEERS = new WeakHashMap<>();

    private final int index;
    private final List<String> computeNodes;
    private final CnPeers peers;
    private final LockTable locks;
    private final CriticalFields fields;
    private final LotusCluster cluster;
    /** The shards whose locks this node serves now (1) or not (0): changed only by handoffs. */
    private final java.util.concurrent.atomic.AtomicIntegerArray serving =
        new java.util.concurrent.atomic.AtomicIntegerArray(LotusKey.SHARDS);
    /** Lock requests served per shard since the last interval (the hottest shard is the one to hand off). */
    private final java.util.concurrent.atomic.AtomicLongArray shardHits =
        new java.util.concurrent.atomic.AtomicLongArray(LotusKey.SHARDS);
    /** Attempts of this node's coordinators not finished yet, by transaction id (a handoff may abort them). */
    private final Map<Long, LotusTxn> live = new java.util.concurrent.ConcurrentHashMap<>();
    /** Latency of the transactions committed here in the current interval. */
    private final LongAdder latencySumNs = new LongAdder();
    private final LongAdder latencyCount = new LongAdder();
    private int overloadedIntervals;
    private boolean handingOff;
    /**
     * Keys one lock message carries at most: what fits one RRPC bucket ({@code RrpcOptions#maxPayload}). The paper
     * sends one message per destination; a transaction with more keys for one node than fit sends several (a
     * release of more keys than fit was refused whole, and its locks were left held).
     */
    private final int keysPerMessage;
    /** Locks taken or refused in this node's table for its own transactions (a CPU CAS, no message). */
    final LongAdder localAcquires = new LongAdder();
    /** Lock messages this node's transactions sent (one per destination and lock phase) and the keys in them. */
    final LongAdder acquireMessages = new LongAdder();
    final LongAdder acquireKeys = new LongAdder();
    /** Lock messages this node served for its peers. */
    final LongAdder served = new LongAdder();
    /**
     * Releases this node's transactions gave up on after {@code LotusTxn#RELEASE_GIVE_UP_NS} of failed tries (their
     * owner never answered: dead, or a lock may be left held there).
     */
    final LongAdder releasesGivenUp = new LongAdder();

    LotusNode(final ComputeNodeContext node, final LockTable locks, final CriticalFields fields) {
        this(node.index(), node.computeNodes(), node.peers(), LotusCluster.of(node.shared(), node.computeNodes()
            .size(), node.separateProcesses()), locks, fields);
        if (node.awaitsOwnRecovery()) {
            for (int s = 0; s < LotusKey.SHARDS; s++) {
                serving.set(s, 0); // its earlier incarnation's commits may not be in memory yet
            }
            awaitingOwnRecovery = true;
            restartedInProcess = !node.separateProcesses();
        }
        node.onPeerRecovered(this::peerRecovered);
        this.hostShared = node.shared();
        if (node.separateProcesses()) {
            // Cluster nodes: /health shows the locks held here (scythe chaos checks none is left at the end).
            node.shared().put(ComputeNodeContext.MODULE_HEALTH, (java.util.function.Supplier<Map<String, Object>>)
                this::health);
        }
    }

    /**
     * What this node holds, for a cluster node's health: {@code locksHeld} (keys with a holder in its lock table),
     * {@code lockInvariant} (the slot words against the lock state: null when they agree), {@code liveAttempts}
     * (its coordinators' attempts not finished), {@code recoveredReleased} (locks of recovered dead incarnations
     * freed here), {@code releasesGivenUp} (lock releases of its transactions whose owner never answered). Racy
     * while transactions run; exact when idle.
     */
    Map<String, Object> health() {
        final Map<String, Object> h = new java.util.LinkedHashMap<>();
        final Map<Long, List<LockTable.Hold>> held = locks.held();
        h.put("locksHeld", held.size());
        if (!held.isEmpty()) {
            final Map.Entry<Long, List<LockTable.Hold>> first = held.entrySet().iterator().next();
            h.put("firstHeld", Long.toHexString(first.getKey()) + " by " + first.getValue());
        }
        h.put("lockInvariant", locks.checkInvariant());
        h.put("liveAttempts", live.size());
        h.put("recoveredReleased", recoveredReleased.sum());
        h.put("releasesGivenUp", releasesGivenUp.sum());
        h.put("awaitingOwnRecovery", awaitingOwnRecovery);
        return h;
    }

    /** A restarted node whose earlier incarnations are not all recovered yet: it serves no shard meanwhile. */
    private volatile boolean awaitingOwnRecovery;

    /**
     * A simulator restart still waiting for its earlier incarnation's recovery: its attempts commit nothing until it
     * rejoins, since the survivors free the locks of its node index once the old incarnation is recovered, and could
     * free a lock of the new one's attempt mid-commit (review of lotusrestart).
     */
    boolean restartAwaitingOldIncarnation() {
        return awaitingOwnRecovery && restartedInProcess;
    }
    /**
     * A restarted incarnation in the process of the others (the simulator's {@code --crash-restart-after}): it waits
     * on the shared cluster's record of its old incarnation's recovery ({@link #start}), not on the host's word.
     */
    private boolean restartedInProcess;
    /** When a restarted node began to serve and renew its lease (its timers' ns), or -1: not restarted, or not yet. */
    private volatile long servingSinceNs = -1;

    /** When this restarted incarnation began to serve (its timers' ns), or -1 (not restarted in process, or waiting). */
    public long servingSinceNs() {
        return servingSinceNs;
    }

    /**
     * A dead incarnation of compute node {@code name} was recovered by the host (cluster nodes: its redo records are
     * finished): frees the locks its transactions (ids with {@code (id & mask) == prefix}) still hold in this node's
     * table, as a survivor does once a dead node's logs are done (lotus.md §2.7). Until then they stay held: a key
     * it locked is not read before its commit is in memory. Named this node itself (a restarted node that awaited
     * its own recovery): starts serving its shards. What it did, for the host's log. Any thread.
     */
    String peerRecovered(final String name, final long prefix, final long mask) {
        final int cn = computeNodes.indexOf(name);
        if (cn < 0) {
            return null;
        }
        if (cn == index) {
            if (!awaitingOwnRecovery) {
                return null;
            }
            // Every earlier incarnation of this node is recovered: its commits are in memory, and no lock it held
            // anywhere is left (the others freed them); this node serves its shards now, from its empty table.
            return "its earlier incarnations are recovered: serves its " + serveOwnShardsAgain() + " shards again";
        }
        recoveredIncarnations.add(new long[] {prefix, mask}); // first: a request checked after this is refused
        final int released = locks.releaseAll(h -> h.cn() == cn && (h.txn() & mask) == prefix);
        recoveredReleased.add(released);
        return "freed " + released + " lock(s) of " + name + " here";
    }

    /**
     * A restarted node whose earlier incarnations are recovered: serves the shards the map names it for (from its
     * empty table), forgets what an earlier incarnation's view cached, and stops awaiting. How many shards.
     */
    private int serveOwnShardsAgain() {
        final ShardOwners owners = cluster.owners();
        int shards = 0;
        for (int s = 0; s < LotusKey.SHARDS; s++) {
            if (owners.ownerOf(s) == index) {
                startServing(s);
                shards++;
            }
        }
        awaitingOwnRecovery = false;
        vtCache.clear(); // nothing cached by an earlier incarnation's view is kept
        return shards;
    }

    /** Locks of recovered dead incarnations freed here ({@link #peerRecovered}). */
    final LongAdder recoveredReleased = new LongAdder();

    /** @param peers its CN-to-CN messaging, whose lock handlers it registers; {@code null}: none (unit tests) */
    LotusNode(final int index, final List<String> computeNodes, final CnPeers peers, final LotusCluster cluster,
              final LockTable locks, final CriticalFields fields) {
        this.index = index;
        this.computeNodes = List.copyOf(computeNodes);
        this.peers = peers;
        this.cluster = cluster;
        final ShardOwners start = cluster.owners();
        for (int s = 0; s < LotusKey.SHARDS; s++) {
            serving.set(s, start.ownerOf(s) == index ? 1 : 0);
        }
        cluster.join(this);
        this.locks = locks;
        this.fields = fields;
        this.keysPerMessage = peers == null ? 0xffff
            : Math.max(1, Math.min(0xffff, (peers.options().maxPayload() - LockRpc.HEADER) / LockRpc.ENTRY));
        if (peers != null) {
            peers.handle(LockRpc.ACQUIRE, this::onAcquire).handle(LockRpc.RELEASE, this::onRelease)
                .handle(LockRpc.HANDOFF, this::onHandoff).handle(LockRpc.DOOM, this::onDoom)
                .handle(LockRpc.GIVE_BACK, this::onGiveBack);
            synchronized (BY_PEERS) {
                BY_PEERS.put(peers, new WeakReference<>(this));
            }
        }
    }

    /** The Lotus node served by {@code peers} (tests, end-of-run checks), or {@code null}. */
    public static LotusNode of(final CnPeers peers) {
        synchronized (BY_PEERS) {
            final WeakReference<LotusNode> node = BY_PEERS.get(peers);
            return node == null ? null : node.get();
        }
    }

    /** The Lotus node whose loop {@code runtime} is (tests), or {@code null}. */
    public static LotusNode of(final io.scythe.txn.TxnRuntime runtime) {
        final Loop loop = runtime.extensionOrNull(LOOP);
        return loop == null ? null : loop.node();
    }

    public int index() {
        return index;
    }

    public LockTable locks() {
        return locks;
    }

    /** Lock messages sent to peers, keys in them, local acquires, and lock messages served for peers. */
    public long[] counts() {
        return new long[] {acquireMessages.sum(), acquireKeys.sum(), localAcquires.sum(), served.sum()};
    }

    /**
     * What is wrong with this node's lock table once every transaction ended (a lock left held, a slot word that
     * disagrees with the lock state), or {@code null}: the simulator's end-of-run check.
     */
    public String endOfRunViolation() {
        if (restartAwaitingOldIncarnation()) {
            final LotusCluster.Recovery old;
            synchronized (cluster) {
                old = cluster.recovery(index);
            }
            return "restarted cn" + index + " never served: " + (old == null
                ? "its old incarnation was never declared dead" : old.failure != null
                ? "the Lotus recovery of its old incarnation failed (" + old.failure + ")"
                : "the Lotus recovery of its old incarnation did not finish");
        }
        final Map<Long, List<LockTable.Hold>> left = locks.held();
        if (!left.isEmpty()) {
            final Map.Entry<Long, List<LockTable.Hold>> first = left.entrySet().iterator().next();
            return left.size() + " lotus locks left held (first: key " + Long.toHexString(first.getKey()) + " by "
                + first.getValue() + ")";
        }
        return locks.checkInvariant();
    }

    /** The routing layer's current map: where a lock request goes (asked again there when refused). */
    ShardOwners owners() {
        return cluster.owners();
    }

    LotusCluster cluster() {
        return cluster;
    }

    /** Whether this node serves {@code shard}'s locks now. */
    public boolean serves(final int shard) {
        return serving.get(shard) == 1;
    }

    CriticalFields fields() {
        return fields;
    }

    /**
     * This node's version-table cache ({@link VtCache}): {@code -Dscythe.lotus.vtCacheEntries} CVTs (default the
     * paper's 64K; 0 turns it off).
     */
    private final VtCache vtCache = new VtCache(Integer.getInteger("scythe.lotus.vtCacheEntries",
        VtCache.DEFAULT_ENTRIES));

    /** This node's object slots for one-sided inserts ({@link SlotPool}). */
    private final SlotPool slots = new SlotPool();

    SlotPool slots() {
        return slots;
    }

    public VtCache vtCache() {
        return vtCache;
    }

    /** Versions (CVT cells) per record on the memory nodes ({@link Cvt}). */
    int versions() {
        return Cvt.DEFAULT_VERSIONS;
    }

    int keysPerMessage() {
        return keysPerMessage;
    }

    CnPeers peers() {
        return peers;
    }

    String name(final int cn) {
        final String address = cluster.address(cn);
        return address != null ? address : computeNodes.get(cn);
    }

    boolean owns(final long lotusKey) {
        final int shard = LotusKey.shard(lotusKey);
        if (serving.get(shard) != 1) {
            return false;
        }
        shardHits.incrementAndGet(shard);
        return true;
    }

    /**
     * Locks {@code key} in this node's table for its own transaction {@code txn}; {@code null} when this node does not
     * serve the key's shard (the attempt aborts and its retry asks the owner it knows then).
     */
    LockTable.Result acquireLocal(final long key, final boolean write, final long txn) {
        return owns(key) ? locks.acquire(key, write, index, txn) : null;
    }

    private void onAcquire(final RpcRequest request, final RpcResponder responder) {
        final DirectBuffer p = request.payload();
        final int at = request.payloadOffset();
        final int n = LockRpc.count(p, at, request.payloadLength());
        if (n < 0) {
            responder.fail(RpcException.FIRST_APPLICATION_CODE, "malformed lotus lock request of "
                + request.payloadLength() + " bytes");
            return;
        }
        served.increment();
        responder.reply(acquire(p, at, n), 0, n);
    }

    /**
     * Serves an acquire message of {@code n} keys: one result byte per key, {@link LockRpc#OUT_OF_RANGE} for a key
     * of a shard this node does not own (the requester aborts and its retry asks the owner it knows then).
     */
    UnsafeBuffer acquire(final DirectBuffer p, final int at, final int n) {
        final long txn = LockRpc.txn(p, at);
        final int from = LockRpc.cn(p, at);
        final UnsafeBuffer reply = new UnsafeBuffer(new byte[n]);
        if (recovered(txn) || releasedEarly.contains(txn)) {
            for (int i = 0; i < n; i++) {
                reply.putByte(i, recovered(txn) ? LockRpc.OUT_OF_RANGE : LockRpc.code(LockTable.Result.CONFLICT));
            }
            return reply;
        }
        for (int i = 0; i < n; i++) {
            final long key = LockRpc.key(p, at, i);
            if (!owns(key)) {
                reply.putByte(i, LockRpc.OUT_OF_RANGE);
                continue;
            }
            final boolean write = LockRpc.write(p, at, i);
            final LockTable.Result r = locks.acquire(key, write, from, txn);
            if (write && r.granted()) {
                vtCache.invalidate(key); // Algorithm 1 line 15: the remote writer updates the memory-pool CVT only
            }
            reply.putByte(i, LockRpc.code(r));
        }
        if (recovered(txn) || releasedEarly.contains(txn)) {
            // Its incarnation's recovery was told meanwhile (it may have freed its locks before these were taken), or
            // its release came meanwhile on another loop: nothing would free these.
            for (int i = 0; i < n; i++) {
                locks.release(LockRpc.key(p, at, i), txn);
                reply.putByte(i, recovered(txn) ? LockRpc.OUT_OF_RANGE : LockRpc.code(LockTable.Result.CONFLICT));
            }
        }
        return reply;
    }

    /**
     * Whether {@code txn} is of a dead incarnation whose recovery this node was told of: a late request of it (the
     * node was paused, fenced and recovered, then woke before it found it lost its lease) is refused, as no recovery
     * would free what it took.
     */
    private boolean recovered(final long txn) {
        for (final long[] pm : recoveredIncarnations) {
            if ((txn & pm[1]) == pm[0]) {
                return true;
            }
        }
        return false;
    }

    /** Id prefix and mask of each recovered dead incarnation of another node ({@link #peerRecovered}). */
    private final List<long[]> recoveredIncarnations = new java.util.concurrent.CopyOnWriteArrayList<>();

    private void onRelease(final RpcRequest request, final RpcResponder responder) {
        final DirectBuffer p = request.payload();
        final int at = request.payloadOffset();
        final int n = LockRpc.count(p, at, request.payloadLength());
        if (n < 0) {
            responder.fail(RpcException.FIRST_APPLICATION_CODE, "malformed lotus unlock request of "
                + request.payloadLength() + " bytes");
            return;
        }
        served.increment();
        release(p, at, n);
        responder.reply();
    }

    /**
     * Serves a release message of {@code n} keys. A transaction sends its releases once its attempt is over (committed
     * or aborted), for every key it asked, granted or not; a key it does not hold here (refused, or its acquire not
     * served yet: a call that failed at the requester may still be served after it) marks it
     * {@link #releasedEarly}, so that an acquire of it served later is refused rather than granted to nobody.
     */
    void release(final DirectBuffer p, final int at, final int n) {
        final long txn = LockRpc.txn(p, at);
        // Marked before its keys are released, unmarked after if it held them all: an acquire of it served on another
        // loop takes a key either before the release frees it, or after the mark, where its post-check sees the mark
        // (marked only after a release that missed, the acquire could take the key and pass its check in between).
        final boolean marked = releasedEarly.add(txn);
        boolean early = false;
        for (int i = 0; i < n; i++) {
            early |= !locks.release(LockRpc.key(p, at, i), txn); // a key it does not hold (any more): nothing happens
        }
        if (marked && !early) {
            releasedEarly.remove(txn);
        } else if (marked) {
            releasedEarlyOrder.add(txn);
            if (releasedEarlyCount.incrementAndGet() > RELEASED_EARLY_KEPT) {
                final Long oldest = releasedEarlyOrder.poll();
                if (oldest != null) {
                    releasedEarly.remove(oldest);
                    releasedEarlyCount.decrementAndGet();
                }
            }
        }
    }

    /** How many transactions {@link #releasedEarly} remembers (the oldest forgotten first). */
    static final int RELEASED_EARLY_KEPT = 65_536;
    /**
     * Transactions whose release named a key they did not hold here: over, so any acquire of theirs served after is
     * refused (and what it took released again). Issue 19's chaos run: a lock left held on a live node, its holder
     * never identified; an acquire served after its requester's release is one way (the other, releases given up
     * after four tries, {@code LotusTxn#untilReleased}).
     */
    private final java.util.Set<Long> releasedEarly = java.util.concurrent.ConcurrentHashMap.newKeySet();
    private final java.util.Queue<Long> releasedEarlyOrder = new java.util.concurrent.ConcurrentLinkedQueue<>();
    private final java.util.concurrent.atomic.AtomicInteger releasedEarlyCount =
        new java.util.concurrent.atomic.AtomicInteger();

    // ------------------------------------------------------------------------------------- live transactions

    void began(final LotusTxn txn) {
        live.put(txn.id(), txn);
    }

    void ended(final LotusTxn txn, final long committedLatencyNs) {
        live.remove(txn.id());
        if (committedLatencyNs >= 0) {
            latencySumNs.add(committedLatencyNs);
            latencyCount.increment();
        }
    }

    /** Aborts this node's transaction {@code txn} unless it is past its point of no return (then it ends soon). */
    private void doom(final long txn) {
        final LotusTxn t = live.get(txn);
        if (t != null) {
            t.doom("a handoff of a shard it holds locks of aborted it");
        }
    }

    private void onDoom(final RpcRequest request, final RpcResponder responder) {
        final DirectBuffer p = request.payload();
        final int at = request.payloadOffset();
        final int n = LockRpc.count(p, at, request.payloadLength());
        if (n < 0) {
            responder.fail(RpcException.FIRST_APPLICATION_CODE, "malformed lotus doom request");
            return;
        }
        for (int i = 0; i < n; i++) {
            doom(LockRpc.key(p, at, i)); // the entries carry transaction ids
        }
        responder.reply();
    }

    // ------------------------------------------------------------------------------------------- resharding

    /**
     * Starts this node's latency publication and overload check (lotus.md §2.2) on the loop {@code timers} belong to,
     * every {@link LotusOptions#reshardEveryNs} (never when 0), until the host says the run is over.
     */
    void startResharding(final io.scythe.txn.runtime.Timers timers) {
        final long every = cluster.options().reshardEveryNs();
        if (every > 0 && peers != null) {
            timers.afterIdle(every).onSuccess(v -> interval(timers));
        }
    }

    private void interval(final io.scythe.txn.runtime.Timers timers) {
        if (cluster.over()) {
            return;
        }
        final long n = latencyCount.sumThenReset();
        final long sum = latencySumNs.sumThenReset();
        final long mine = n == 0 ? 0 : sum / n;
        cluster.publish(index, mine);
        final long[] all = cluster.published();
        long total = 0;
        int with = 0;
        int fastest = -1;
        for (int cn = 0; cn < all.length; cn++) {
            if (all[cn] > 0) {
                total += all[cn];
                with++;
                if (cn != index && !(cluster.restarted(cn) && cluster.address(cn) == null)
                    && (fastest < 0 || all[cn] < all[fastest])) {
                    fastest = cn;
                }
            }
        }
        final double mean = with == 0 ? 0 : (double) total / with;
        overloadedIntervals = mine > 0 && with > 1 && mine > cluster.options().overload() * mean
            ? overloadedIntervals + 1 : 0;
        if (overloadedIntervals >= cluster.options().overloadedIntervals() && fastest >= 0 && !handingOff) {
            final int hottest = hottestShard();
            if (hottest >= 0) {
                overloadedIntervals = 0;
                handOff(hottest, fastest, timers);
            }
        }
        for (int s = 0; s < LotusKey.SHARDS; s++) {
            shardHits.set(s, 0);
        }
        timers.afterIdle(cluster.options().reshardEveryNs()).onSuccess(v -> interval(timers));
    }

    /** The shard this node serves that took the most lock requests this interval, or -1. */
    private int hottestShard() {
        int best = -1;
        long most = 0;
        for (int s = 0; s < LotusKey.SHARDS; s++) {
            final long hits = shardHits.get(s);
            if (serving.get(s) == 1 && hits > most) {
                most = hits;
                best = s;
            }
        }
        return best;
    }

    /**
     * Hands {@code shard} to node {@code to} in the paper's order (lotus.md §2.2): (1) stop serving it; (2) wait
     * until its locks are released, aborting the holders (their nodes are told, by the transaction and compute node
     * ids in the lock state) once {@link LotusOptions#forceAbortAfterNs} has passed; (3) drop its version-table cache
     * entries; (4) message the receiver, which (5) starts serving it; (6) update the
     * routing layer. Completes with the pause: the time from (1) until the receiver served. Runs on the loop whose
     * {@code timers} these are.
     */
    public io.vertx.core.Future<Long> handOff(final int shard, final int to, final io.scythe.txn.runtime.Timers timers) {
        if (serving.get(shard) != 1 || to == index || to < 0 || to >= computeNodes.size()) {
            return io.vertx.core.Future.failedFuture(new IllegalArgumentException("cn" + index + " cannot hand shard "
                + shard + " to cn" + to + (serving.get(shard) != 1 ? ": it does not serve it" : "")));
        }
        handingOff = true;
        final long start = timers.nowNs();
        serving.set(shard, 0); // (1)
        final int[] aborted = new int[1];
        return drained(shard, start, timers, aborted) // (2)
            .map(v -> {
                vtCache.dropShard(shard); // (3)
                return v;
            })
            .compose(v -> peers.call(name(to), LockRpc.HANDOFF, LockRpc.request(0, index, new long[] {shard}, null,
                1))) // (4), (5)
            .map(reply -> {
                final long pause = timers.nowNs() - start;
                cluster.moved(shard, to); // (6)
                cluster.recorded(new LotusCluster.Handoff(shard, index, to, start, pause, aborted[0]));
                handingOff = false;
                return pause;
            }).onFailure(e -> {
                // The receiver did not take it: serve it again (nobody else does; the map still names this node).
                serving.set(shard, 1);
                handingOff = false;
            });
    }

    /** Completes once no lock of {@code shard} is held here; after the force-abort time, dooms the holders. */
    private io.vertx.core.Future<Void> drained(final int shard, final long start, final io.scythe.txn.runtime.Timers timers,
                                              final int[] aborted) {
        final Map<Long, List<LockTable.Hold>> holders = locks.heldInShard(shard);
        if (holders.isEmpty()) {
            return io.vertx.core.Future.succeededFuture();
        }
        if (timers.nowNs() - start >= cluster.options().forceAbortAfterNs()) {
            final Map<Integer, java.util.Set<Long>> byCn = new java.util.TreeMap<>();
            holders.values().forEach(hs -> hs.forEach(h -> byCn.computeIfAbsent(h.cn(),
                c -> new java.util.TreeSet<>()).add(h.txn())));
            byCn.forEach((cn, txns) -> {
                aborted[0] += txns.size();
                if (cn == index) {
                    txns.forEach(this::doom);
                } else {
                    final long[] ids = txns.stream().mapToLong(Long::longValue).toArray();
                    peers.call(name(cn), LockRpc.DOOM, LockRpc.request(0, index, ids, null, ids.length));
                }
            });
        }
        return timers.after(cluster.options().drainPollNs()).compose(v -> drained(shard, start, timers, aborted));
    }

    private void onHandoff(final RpcRequest request, final RpcResponder responder) {
        final DirectBuffer p = request.payload();
        final int at = request.payloadOffset();
        if (LockRpc.count(p, at, request.payloadLength()) != 1) {
            responder.fail(RpcException.FIRST_APPLICATION_CODE, "malformed lotus handoff");
            return;
        }
        final int shard = (int) LockRpc.key(p, at, 0);
        if (shard < 0 || shard >= LotusKey.SHARDS) {
            responder.fail(RpcException.FIRST_APPLICATION_CODE, "lotus handoff of shard " + shard + ": no such shard");
            return;
        }
        startServing(shard); // (5): its lock table has no lock of it (nobody served it since the sender drained)
        responder.reply();
    }

    /** A handoff's step 5: this node serves {@code shard} from now on. */
    void startServing(final int shard) {
        serving.set(shard, 1);
        cluster.checkSingleServer(shard);
    }

    // ------------------------------------------------------------------------------------ leases and recovery

    /** The runtime of this node's loop 0, where its periodic tasks and the recoveries it leads run. */
    private io.scythe.txn.TxnRuntime home;
    /** Dead nodes this node has let go of (calls failed, its own attempts on them aborted) and whose locks it freed. */
    private final java.util.Set<Integer> noticed = new java.util.TreeSet<>();
    private final java.util.Set<Integer> freed = new java.util.TreeSet<>();

    /** Starts resharding and the membership lease on loop 0 ({@code runtime} is its). */
    void start(final io.scythe.txn.TxnRuntime runtime) {
        this.home = runtime;
        if (restartedInProcess) {
            awaitOldIncarnation(runtime);
            return;
        }
        startServices(runtime);
    }

    /**
     * A restarted incarnation (lotus.md §2.7, 3): it neither serves lock requests nor renews its lease until its old
     * incarnation was declared dead, its logs finished and its locks freed on every survivor, and its shards served
     * again ({@link #serveAgain}: handed to the survivors, as the simulator's recovery does; the restarted node keeps
     * none, and neither resharding nor another recovery hands it one: the survivors' peers reach the old incarnation's
     * address only). Renewing before would keep the old incarnation's lease alive, and it would never be recovered.
     * Meanwhile its coordinators' attempts abort from the start ({@code LotusTxn#unlessDoomed}: {@link
     * #restartAwaitingOldIncarnation}, before its old incarnation is even declared dead) and requests for its old
     * shards abort (nobody serves them until handed on); it lets go of every other node gone ({@link #letGo}). If that
     * recovery fails it stays so for good, and the run reports it ({@link #endOfRunViolation}).
     */
    private void awaitOldIncarnation(final io.scythe.txn.TxnRuntime runtime) {
        final boolean over;
        synchronized (cluster) {
            final LotusCluster.Recovery old = cluster.recovery(index);
            if (old != null && old.failure != null) {
                // Its old incarnation's commits may not be finished nor its locks freed everywhere, and its shards
                // may be served by nobody: serving would risk lost updates. It stays dormant (its attempts doomed);
                // the run reports it (endOfRunViolation) (review of lotusrestart: it served after a failed recovery).
                return;
            }
            over = old != null && old.servedAgainNs >= 0;
        }
        if (!over) {
            // Its attempts (aborted while its old incarnation is dead) may wait on another dead node's address: let go
            // of every node gone, as a survivor's membership does (none runs here yet).
            for (int cn = 0; cn < computeNodes.size(); cn++) {
                if (cn != index && cluster.gone(cn)) {
                    letGo(cn);
                }
            }
            runtime.timers().afterIdle(cluster.options().drainPollNs()).onSuccess(v -> awaitOldIncarnation(runtime));
            return;
        }
        final long now = runtime.timers().nowNs();
        cluster.rejoin(index, now, peers.node());
        serveOwnShardsAgain(); // none after the old incarnation's recovery handed them on
        servingSinceNs = now;
        startServices(runtime);
        askShardsBack();
    }

    /**
     * A rejoined incarnation asks each survivor for the shards its old incarnation's recovery handed it (lotus.md
     * §2.7, 3: the restarted node serves its shards again with its empty table), one message per survivor; each
     * survivor hands them back one by one in the handoff order ({@link #handOff}: stop serving, wait for holders and
     * abort them after {@link LotusOptions#forceAbortAfterNs}, drop the cache entries, message this node, update the
     * routing), so no shard ever has two servers. An explicit give-back rather than resharding's latency-driven one:
     * resharding moves one shard per overloaded node per three intervals, and a node that lost its shards is not
     * overloaded, so load would come back over seconds, not at the rejoin. A shard resharding moved on since (its
     * map names another node) stays where it is; a survivor that fails a handoff keeps serving that shard.
     */
    private void askShardsBack() {
        final Map<Integer, List<Long>> byHolder = new java.util.TreeMap<>();
        final ShardOwners map = cluster.owners();
        cluster.handedOn(index).forEach((shard, to) -> {
            if (to != index && map.ownerOf(shard) == to && !cluster.gone(to)) {
                byHolder.computeIfAbsent(to, k -> new java.util.ArrayList<>()).add((long) shard);
            }
        });
        byHolder.forEach((to, shards) -> {
            for (int from = 0; from < shards.size(); from += keysPerMessage) {
                final long[] part = shards.subList(from, Math.min(shards.size(), from + keysPerMessage)).stream()
                    .mapToLong(Long::longValue).toArray();
                peers.call(name(to), LockRpc.GIVE_BACK, LockRpc.request(0, index, part, null, part.length));
            }
        });
    }

    /**
     * A rejoined node asks its shards back ({@link #askShardsBack}): hands each listed shard this node still serves to
     * it, one after another, in the handoff order; answers when all are done. Runs on loop 0 (asked from the
     * requester's loop 0), where this node's timers are.
     */
    private void onGiveBack(final RpcRequest request, final RpcResponder responder) {
        final DirectBuffer p = request.payload();
        final int at = request.payloadOffset();
        final int n = LockRpc.count(p, at, request.payloadLength());
        final int to = LockRpc.cn(p, at);
        if (n < 0 || to < 0 || to >= computeNodes.size() || to == index || home == null) {
            responder.fail(RpcException.FIRST_APPLICATION_CODE, "malformed lotus give-back");
            return;
        }
        io.vertx.core.Future<?> chain = io.vertx.core.Future.succeededFuture();
        for (int i = 0; i < n; i++) {
            final int shard = (int) LockRpc.key(p, at, i);
            if (shard < 0 || shard >= LotusKey.SHARDS) {
                responder.fail(RpcException.FIRST_APPLICATION_CODE, "lotus give-back of shard " + shard
                    + ": no such shard");
                return;
            }
            chain = chain.transform(x -> serves(shard) && !cluster.gone(to)
                ? handOff(shard, to, home.timers()).<Void>mapEmpty().otherwiseEmpty()
                : io.vertx.core.Future.<Void>succeededFuture());
        }
        chain.onComplete(x -> responder.reply());
    }

    private void startServices(final io.scythe.txn.TxnRuntime runtime) {
        startResharding(runtime.timers());
        final long lease = cluster.options().leaseNs();
        if (lease > 0 && peers != null) {
            cluster.renew(index, runtime.timers().nowNs());
            runtime.timers().afterIdle(Math.max(1, lease / 4)).onSuccess(v -> membership(runtime.timers(), lease));
        }
    }

    /**
     * Every quarter lease: renews this node's lease, and acts on every other node whose lease ran out (lotus.md
     * §2.7): lets go of it (calls to it fail at once, this node's attempts that asked it for locks abort unless past
     * their point of no return); the first survivor to notice leads its recovery ({@link #recover}); once the dead
     * node's logged commits are finished, frees the locks it held in this node's table (from the lock state).
     */
    private void membership(final io.scythe.txn.runtime.Timers timers, final long lease) {
        if (cluster.dead(index)) {
            return;
        }

        final long now = timers.nowNs();
        cluster.renew(index, now);
        for (int cn = 0; cn < computeNodes.size(); cn++) {
            if (cn != index && cluster.restarted(cn)) {
                letGo(cn); // its old incarnation, if this node did not see it dead (it was restarted meanwhile)
            }
            if (cn == index || !cluster.expired(cn, now, lease)) {
                continue;
            }
            final LotusCluster.Recovery leading = cluster.declareDead(cn, now);
            letGo(cn);
            if (leading != null) {
                recover(leading);
            }
            final LotusCluster.Recovery r = cluster.recovery(cn);
            if (r.logsDoneNs >= 0 && freed.add(cn)) {
                final int released = locks.releaseAllOf(cn);
                synchronized (cluster) {
                    r.locksReleased += released;
                    r.released.add(index);
                }
            }
        }
        if (cluster.over()) {
            overSinceNs = overSinceNs < 0 ? now : overSinceNs;
            // Judged for a lease past the end, not less: a node that crashed before the end stopped renewing then and
            // its lease runs out within it, in the run's drain (this task stopped at the end once, before any
            // recovery was under way: the survivors' attempts that asked the dead node waited on it for ever and its
            // locks stayed held in their tables). A retired node's lease never runs out for the others after.
            if (now - overSinceNs > lease && cluster.settled(index, freed, now, lease)) {
                cluster.retire(index);
                return;
            }
        }
        timers.afterIdle(Math.max(1, lease / 4)).onSuccess(v -> membership(timers, lease));
    }

    /**
     * Lets go of dead (or restarted: its old incarnation's) node {@code cn} once: calls to its address fail at once,
     * and this node's attempts that asked it for locks abort unless past their point of no return.
     */
    private void letGo(final int cn) {
        if (!noticed.add(cn)) {
            return;
        }
        peers.peerLeft(computeNodes.get(cn), "its Lotus lease ran out"); // the old incarnation's address
        int doomed = 0;
        for (final LotusTxn t : live.values()) {
            doomed += t.askedDead(cn) ? 1 : 0;
        }
        if (restartAwaitingOldIncarnation()) {
            return; // not a survivor: its attempts are doomed anyway, and are not the recovery's survivors' aborts
        }
        synchronized (cluster) {
            final LotusCluster.Recovery r = cluster.recovery(cn);
            if (r != null) {
                r.survivorsAborted += doomed;
            }
        }
    }

    /** What the host's nodes share ({@code run.recoveryState}: see {@link #hostState}), or null. */
    private java.util.Map<String, Object> hostShared;

    /**
     * Where the host's own recovery of dead node {@code cn} stands, if it runs one beside the leases (the simulator's
     * {@code --crash-recover}, {@code run.recoveryState}): {@code "recovering"}, {@code "recovered"}, {@code "failed"};
     * null when it does not recover {@code cn} (no such recovery, or a node Lotus declared dead that did not crash).
     * Its recoverer holds the memory nodes' claim on the dead node, and may be this very node (the same NIC name): so
     * this node's own recovery of a node the host recovers never runs (two at once would both be admitted, and the
     * first done would serve the shards while the other's writes are in flight); the host's stands for the log scan,
     * as the cluster's recovery duty does.
     */
    private String hostState(final int cn) {
        return hostShared != null && hostShared.get("run.recoveryState")
            instanceof java.util.function.IntFunction<?> f && f.apply(cn) instanceof String s ? s : null;
    }

    /** Waits for the host's recovery of {@code r.cn} ({@link #hostState}), then serves its shards again. */
    private void awaitHost(final LotusCluster.Recovery r) {
        final String state = hostState(r.cn);
        if ("recovering".equals(state)) {
            home.timers().afterIdle(cluster.options().drainPollNs()).onSuccess(v -> awaitHost(r));
            return;
        }
        synchronized (cluster) {
            if ("recovered".equals(state)) {
                r.logsDoneNs = home.timers().nowNs();
                r.byHost = true;
            } else {
                r.failure = "the host's recovery of cn" + r.cn + (state == null ? " stopped" : " " + state);
                return;
            }
        }
        reclaimSlots(r);
        serveAgain(r);
    }

    /**
     * Once dead node {@code r.cn}'s redo records are settled (by this recovery or the host's): every object slot granted
     * to its dead incarnation that no index entry names goes back to its memory node (TODO lotusins-return, the
     * dead-node half; {@link SlotPool#reclaim}): its pool's unused ones, and those of its attempts undone or never
     * finished. Its shards wait for none of it: a reclaim that fails (a memory node gone) leaks those slots only
     * ({@code slotsReclaimFailure}). A dead incarnation not in this process (cluster nodes in processes of their own)
     * is not reclaimed for: its holder id is not known here (TODO lotusins-return, the host's recovery).
     */
    private void reclaimSlots(final LotusCluster.Recovery r) {
        final LotusNode dead = cluster.deadIncarnation(r.cn);
        if (dead == null || dead == this) {
            return;
        }
        SlotPool.reclaim(home, dead.slots().holder()).onComplete(rc -> {
            synchronized (cluster) {
                if (rc.succeeded()) {
                    r.slotsReclaimed = rc.result();
                } else {
                    r.slotsReclaimFailure = String.valueOf(rc.cause());
                }
            }
        });
    }

    /** When this node's membership task first saw the run over (-1: not yet). */
    private long overSinceNs = -1;

    /**
     * Leads the recovery of dead node {@code r.cn}: its memory (lock table, version cache, serving set) is gone; its
     * logs are scanned and its complete commits finished, its incomplete ones dropped ({@code CnRecovery}: each redo
     * record is finished only where the object's version is still below the record's, see {@link LotusLockKind});
     * then, once every survivor freed the dead node's locks and no attempt that asked it is left, its shards are
     * served again. They are handed to the survivors (round-robin, one handoff message each) instead of to the
     * restarted node with its empty table: a deviation from the paper (a node the simulator restarts keeps none,
     * {@link #awaitOldIncarnation}).
     */
    private void recover(final LotusCluster.Recovery r) {
        final LotusNode dead = cluster.deadIncarnation(r.cn); // not the restarted one join() put in its place
        for (int s = 0; s < LotusKey.SHARDS; s++) {
            dead.serving.set(s, 0); // its lock table went with it
        }
        if (io.scythe.txn.recovery.RedoLog.of(home) == null) {
            r.failure = "lotus recovery finishes a dead node's commits from their redo records: run with the redo log "
                + "(--redo-log)";
            return;
        }
        if (hostState(r.cn) != null) {
            awaitHost(r); // the host recovers it (its recoverer may be this node): its recovery stands for this one
            return;
        }
        final io.scythe.txn.recovery.CnRecovery logs = new io.scythe.txn.recovery.CnRecovery(home);
        if (hostShared != null && hostShared.get("run.recoveryObserver")
            instanceof io.scythe.txn.recovery.CnRecovery.Observer o) {
            logs.observe(o); // the host's checks hear which of the dead node's commits this recovery finished
        }
        logs.recover(name(r.cn)).onComplete(ar -> {
            synchronized (cluster) {
                if (ar.succeeded()) {
                    r.committedRecords = ar.result().committedRecords();
                    r.incompleteRecords = ar.result().incompleteRecords();
                    r.undoneRecords = ar.result().undoneRecords();
                    r.logsDoneNs = home.timers().nowNs();
                } else if (!io.scythe.txn.recovery.CnRecovery.refusedBusy(ar.cause()) || hostState(r.cn) == null) {
                    r.failure = "log recovery failed: " + ar.cause();
                }
            }
            if (ar.succeeded() && hostShared != null
                && hostShared.get("run.moduleRecovered") instanceof java.util.function.BiConsumer<?, ?> told) {
                @SuppressWarnings("unchecked")
                final java.util.function.BiConsumer<Integer, io.scythe.txn.recovery.CnRecovery.Report> tell =
                    (java.util.function.BiConsumer<Integer, io.scythe.txn.recovery.CnRecovery.Report>) told;
                tell.accept(r.cn, ar.result()); // those commits count as committed in the host's checks
            }
            if (ar.succeeded()) {
                reclaimSlots(r);
                serveAgain(r);
            } else if (r.failure == null) {
                awaitHost(r); // refused: the host's recoverer holds the claim, its recovery stands for this one
            }
        });
    }

    /**
     * Once every survivor freed the dead node's locks, none still runs an attempt that asked it, and every dead node's
     * logs are done (or its recovery failed): its shards. A complete redo record of another dead node on a key of
     * these shards was protected by this node's lock table only; served before that record is rolled forward, a
     * survivor could commit there first (a lost update, or copies left differing).
     */
    private void serveAgain(final LotusCluster.Recovery r) {
        final List<Integer> survivors = new java.util.ArrayList<>();
        boolean drained = true;
        for (int cn = 0; cn < computeNodes.size(); cn++) {
            if (cluster.dead(cn)) {
                synchronized (cluster) {
                    final LotusCluster.Recovery other = cluster.recovery(cn);
                    drained &= other.logsDoneNs >= 0 || other.failure != null;
                }
            } else if (cluster.gone(cn)) {
                continue; // a restarted incarnation not reachable at its own address: it holds no lock, takes no shard
            } else {
                survivors.add(cn);
                synchronized (cluster) {
                    drained &= r.released.contains(cn);
                }
                drained &= cluster.node(cn).liveAsking(r.cn) == 0;
            }
        }
        if (!drained) {
            home.timers().after(cluster.options().drainPollNs()).onSuccess(v -> serveAgain(r));
            return;
        }
        final ShardOwners map = cluster.owners();
        final List<io.vertx.core.Future<?>> moved = new java.util.ArrayList<>();
        int next = 0;
        for (int s = 0; s < LotusKey.SHARDS; s++) {
            if (map.ownerOf(s) != r.cn) {
                continue;
            }
            final int shard = s;
            final int to = survivors.get(next++ % survivors.size());
            synchronized (cluster) {
                r.handedOn.put(shard, to); // what its restarted incarnation asks back (askShardsBack)
            }
            if (to == index) {
                startServing(shard);
                cluster.moved(shard, to);
            } else {
                moved.add(peers.call(name(to), LockRpc.HANDOFF, LockRpc.request(0, index, new long[] {shard}, null, 1))
                    .onSuccess(x -> cluster.moved(shard, to)));
            }
        }
        io.vertx.core.Future.all(moved).onComplete(ar -> {
            synchronized (cluster) {
                r.servedAgainNs = home.timers().nowNs();
                if (ar.failed()) {
                    r.failure = "its shards were not all served again: " + ar.cause();
                }
            }
        });
    }

    /** This node's attempts not finished that asked {@code cn} for locks. */
    int liveAsking(final int cn) {
        int n = 0;
        for (final LotusTxn t : live.values()) {
            n += t.asked(cn) ? 1 : 0;
        }
        return n;
    }

    /** One loop's view: its node, its index (the peer loop it calls), and how to defer a batch's flush. */
    record Loop(LotusNode node, int index, Executor deferred) {
    }
}
