package io.scythe.txn;

import io.scythe.bridge.RdmaChannel;
import io.scythe.hotspot.Watermarks;
import io.scythe.rrpc.RrpcClient;
import io.scythe.storage.TableDescriptor;
import io.scythe.storage.remote.RemoteTable;
import io.scythe.txn.runtime.Timers;
import io.scythe.txn.runtime.TimestampOracle;
import io.vertx.core.Future;

import java.util.IdentityHashMap;
import java.util.Map;
import java.util.function.Function;

/**
 * What transactions of one event loop run on: the catalog, RRPC and one-sided channels to memory nodes, the loop's
 * TSO group, time, and the loop's {@linkplain #extension extensions} (what one protocol module or shared part keeps
 * per loop: Scythe's Takeout Lock client, FaRM's physical clock, the redo log). Every dependency on I/O and time comes
 * through here (the sans-IO rule), so a simulator can supply its own. Loop-confined.
 */
public final class TxnRuntime {
    private final Catalog catalog;
    private final RrpcClient rrpc;
    private final Timers timers;
    private final TimestampOracle tso;
    private final Watermarks watermarks;
    private final long idBase;
    private final Map<TableDescriptor, RemoteTable> remotes = new IdentityHashMap<>();
    private long sequence;
    private final Map<Key<?>, Object> extensions = new IdentityHashMap<>();
    /** Per memory node, the catalog incarnation this loop's connections reach ({@link #replaced}). */
    private final Map<String, Integer> reached = new java.util.HashMap<>();
    /** Set from another thread between runs, read at every commit: volatile (a plain load on x86). */
    private volatile HistoryRecorder recorder;
    /** Told when this loop cannot go on safely (see {@link #onGiveUp}); null: nothing beyond the failed reply. */
    private java.util.function.Consumer<String> giveUp;
    /** Hears {@link #tookPath}: none by default. */
    private java.util.function.Consumer<String> pathTaken = name -> { };
    /** How long a lock verb in doubt on a memory node waits for a configuration that removes it (0: not at all). */
    private long failoverWaitNs;
    /** Why this loop gave up ({@link #giveUp}); null while it serves. */
    private String gaveUpFor;
    /** How a lookup that misses the address cache reaches the index: by RPC (the default) or one-sided READs. */
    private RemoteTable.LookupMode lookupMode = RemoteTable.LookupMode.RPC;
    /** This loop's CN-to-CN messaging, when its protocol uses peers ({@link #peerLoops}); null otherwise. */
    private PeerLoops peerLoops;
    /** Test fault point: runs before each write-back batch to a memory node, which fails if it fails. */
    private java.util.function.Function<String, Future<Void>> beforeWriteBack;
    /** The node's clocks for this loop, or null when its builder gave none. */
    private io.scythe.bridge.NodeClocks clocks;
    /** {@link #coordinatorIds}: the server and loop ids, or -1 to read them from {@link #idBase}. */
    private int serverId = -1;
    private int loopId = -1;

    /**
     * @param idBase distinguishes this loop's transaction ids from every other loop's in the cluster (a CN and loop
     *               number in the high bits); ids are never 0
     */
    public TxnRuntime(final Catalog catalog, final RrpcClient rrpc, final Timers timers, final TimestampOracle tso,
                      final Watermarks watermarks, final long idBase) {
        this.catalog = catalog;
        this.rrpc = rrpc;
        this.timers = timers;
        this.tso = tso;
        this.watermarks = watermarks;
        this.idBase = idBase;
    }

    /** Names one kind of per-loop extension; compared by identity, so keep one in a static field. */
    public static final class Key<T> {
        private final String name;

        public Key(final String name) {
            this.name = name;
        }

        @Override
        public String toString() {
            return name;
        }
    }

    /** This loop's extension of kind {@code key}, made by {@code factory} on first use. */
    @SuppressWarnings("unchecked")
    public <T> T extension(final Key<T> key, final Function<TxnRuntime, T> factory) {
        Object value = extensions.get(key);
        if (value == null) {
            value = factory.apply(this);
            extensions.put(key, value);
        }
        return (T) value;
    }

    /** This loop's extension of kind {@code key}, or {@code null} when none was made. */
    @SuppressWarnings("unchecked")
    public <T> T extensionOrNull(final Key<T> key) {
        return (T) extensions.get(key);
    }

    /** The high bits of this loop's transaction ids (epoch, CN slot, loop); see {@link #nextTxnId}. */
    public long idBase() {
        return idBase;
    }

    /**
     * Names this loop as loop {@code loop} of compute node {@code server}, for protocols whose timestamps carry the two
     * (Aurogon's): where {@link #idBase} numbers loops across the cluster with no CN slot (the simulator without
     * recovery, {@code ComputeNodePeers#loopNumber}), the slot cannot be read from it. Unset, both are read from
     * {@link #idBase} (slot in bits 32-39, loop in bits 40-47).
     *
     * @throws IllegalArgumentException when an id is outside [0, 255]
     */
    public TxnRuntime coordinatorIds(final int server, final int loop) {
        if (server < 0 || server > 0xff || loop < 0 || loop > 0xff) {
            throw new IllegalArgumentException("server id " + server + " and loop id " + loop
                + " must each be within [0, 255]");
        }
        this.serverId = server;
        this.loopId = loop;
        return this;
    }

    /** This loop's compute node id ({@link #coordinatorIds}, else the CN slot of {@link #idBase}, bits 32-39). */
    public int serverId() {
        return serverId >= 0 ? serverId : (int) (idBase >>> 32) & 0xff;
    }

    /** This loop's id on its node ({@link #coordinatorIds}, else the loop of {@link #idBase}, bits 40-47). */
    public int loopId() {
        return loopId >= 0 ? loopId : (int) (idBase >>> 40) & 0xff;
    }

    public Catalog catalog() {
        return catalog;
    }

    /**
     * The fabric this loop's NIC is attached to (what its memory nodes' NICs share with it: a key for state that the
     * compute and memory nodes of one simulated or embedded cluster share, e.g. SELCC's participant directory).
     */
    public io.scythe.fabric.Fabric fabric() {
        return rrpc.nic().fabric();
    }

    public Future<RdmaChannel> channel(final String node) {
        replaced(node);
        return rrpc.oneSided(node);
    }

    /**
     * When the catalog has {@code node}'s tables from a newer process than this loop last reached (a memory node that
     * rejoined as a replacement, {@link Catalog#incarnationOf}), gives up the loop's Rockets and channel to it first:
     * on a fabric without connections (shm) they would still post to the old process and wait out its transport
     * timeout. Nothing in a cluster that never replaced a node.
     */
    private void replaced(final String node) {
        final int now = catalog == null ? 0 : catalog.incarnationOf(node);
        if (now != 0 && reached.getOrDefault(node, 0) != now) {
            reached.put(node, now);
            rrpc.abandon(node, new io.scythe.rrpc.RpcException(io.scythe.rrpc.RpcException.DISCONNECTED, "memory "
                + "node " + node + " was replaced by a new process (catalog incarnation " + now + ")"));
        }
    }

    /** Drops this loop's channel to {@code node} if it is {@code broken}: the next {@link #channel} connects anew. */
    public void forgetChannel(final String node, final RdmaChannel broken) {
        rrpc.forgetOneSided(node, broken);
    }

    /**
     * How long a transaction whose lock verb is in doubt on a memory node (failed after it was posted) waits for a
     * memory-node configuration that removes that node, before this loop gives up ({@link #giveUp}): the node's lease
     * and the failover's delay (a cluster CN: Hazelcast's max-no-heartbeat and the configuration's propagation). A
     * lock on a removed memory node died with it (its backups hold no lock word), so the attempt then aborts instead.
     * 0 (the default): no wait, the loop gives up unless the node was removed already.
     */
    public TxnRuntime failoverWaitNs(final long ns) {
        if (ns < 0) {
            throw new IllegalArgumentException("failoverWaitNs=" + ns + " must not be negative");
        }
        this.failoverWaitNs = ns;
        return this;
    }

    /** {@link #failoverWaitNs(long)}. */
    public long failoverWaitNs() {
        return failoverWaitNs;
    }

    /**
     * Whether every one of {@code nodes} is removed by the memory-node configuration now, or is within
     * {@link #failoverWaitNs()} (polled on this loop's timers every 20 ms, or a hundredth of a wait shorter than 2 s:
     * {@link #removalPollNs}); answered at once without a wait.
     */
    public Future<Boolean> removedWithin(final java.util.Collection<String> nodes) {
        return removedBy(nodes, false, failoverWaitNs <= 0 ? 0 : timers.nowNs() + failoverWaitNs);
    }

    /**
     * Whether some one of {@code nodes} is removed by the memory-node configuration now, or is within
     * {@link #failoverWaitNs()} ({@link #removedWithin}'s wait): for a caller that does not know which node of those
     * its failed operation met (CALVIN's write-back and reads, issue 18).
     */
    public Future<Boolean> anyRemovedWithin(final java.util.Collection<String> nodes) {
        return removedBy(nodes, true, failoverWaitNs <= 0 ? 0 : timers.nowNs() + failoverWaitNs);
    }

    private Future<Boolean> removedBy(final java.util.Collection<String> nodes, final boolean any,
                                      final long deadlineNs) {
        boolean all = !nodes.isEmpty();
        boolean some = false;
        for (final String node : nodes) {
            final boolean removed = catalog.removed(node);
            all &= removed;
            some |= removed;
        }
        final boolean done = any ? some : all;
        if (done || deadlineNs == 0 || timers.nowNs() >= deadlineNs) {
            return Future.succeededFuture(done);
        }
        // A cluster's wait (seconds) polls every 20 ms; the simulator's (a millisecond or two) a hundred times in it.
        return timers.after(removalPollNs(failoverWaitNs, 100)).compose(v -> removedBy(nodes, any, deadlineNs));
    }

    /** The shortest and longest interval at which a loop polls the configuration for a node's removal. */
    public static final long MIN_REMOVAL_POLL_NS = 1_000;
    public static final long MAX_REMOVAL_POLL_NS = 20_000_000L;

    /**
     * How often to poll the configuration for removals within a failover wait of {@code waitNs}: {@code polls} times
     * in it, within [{@link #MIN_REMOVAL_POLL_NS}, {@link #MAX_REMOVAL_POLL_NS}] (a cluster's wait of seconds must not
     * poll its catalog every few microseconds, as a simulated wait of a millisecond needs).
     */
    public static long removalPollNs(final long waitNs, final int polls) {
        return Math.max(MIN_REMOVAL_POLL_NS, Math.min(MAX_REMOVAL_POLL_NS, waitNs / polls));
    }

    /**
     * Sets what happens when this loop cannot go on safely: a committed transaction (its redo record durable) whose
     * write-back it could not finish, or transaction ids used up. The node must give up its lease and stop serving
     * (a cluster node: {@code ScytheNode} loses its lease; another node's recovery of its incarnation finishes the
     * record) and rejoin with a new epoch. Called on the loop, possibly more than once.
     */
    public void onGiveUp(final java.util.function.Consumer<String> hook) {
        this.giveUp = hook;
    }

    /**
     * Reports that this loop cannot go on safely, for {@code why} (see {@link #onGiveUp}). From then on it begins no
     * transaction ({@link #nextTxnId} refuses), hook or not: a loop without a hook (a bare runtime, a tool) must not
     * go on serving beside a commit it gave up.
     */
    public void giveUp(final String why) {
        if (gaveUpFor == null) {
            gaveUpFor = why;
        }
        final java.util.function.Consumer<String> hook = giveUp;
        if (hook != null) {
            hook.accept(why);
        }
    }

    /**
     * Sets what hears {@link #tookPath} (the simulator counts the paths in its run's {@code sim.paths_taken}).
     */
    public void onPathTaken(final java.util.function.Consumer<String> hook) {
        this.pathTaken = hook == null ? name -> { } : hook;
    }

    /**
     * Reports that this loop took the rare path {@code name}: a failure handled in a way a test must see happen, so
     * that a replay whose timing drifted away from it fails instead of passing without testing anything (review of
     * stop 53). Changes nothing the protocol does.
     */
    public void tookPath(final String name) {
        pathTaken.accept(name);
    }

    /**
     * Test fault point: {@code hook} runs before each write-back batch with the memory node's name, and a failure it
     * returns fails that batch as a failed post would ({@code null}: none, the default).
     */
    public void beforeWriteBack(final java.util.function.Function<String, Future<Void>> hook) {
        this.beforeWriteBack = hook;
    }

    /** The fault point before a write-back batch to {@code node}: succeeded unless a test hook says otherwise. */
    public Future<Void> writeBackGate(final String node) {
        final java.util.function.Function<String, Future<Void>> hook = beforeWriteBack;
        return hook == null ? Future.succeededFuture() : hook.apply(node);
    }

    /** This loop's CN-to-CN messaging and the cluster's loops, or {@code null} when none was set up. */
    public PeerLoops peerLoops() {
        return peerLoops;
    }

    /** Gives this loop CN-to-CN messaging (before its first transaction), for protocols that use peers. */
    public void peerLoops(final PeerLoops peerLoops) {
        this.peerLoops = peerLoops;
    }

    /** The largest request payload an RRPC call carries (larger data goes by one-sided WRITE). */
    public int maxRpcPayload() {
        return rrpc.options().maxPayload();
    }

    /** This loop's RRPC Rocket to {@code node}. */
    public Future<io.scythe.rrpc.Rocket> rocket(final String node) {
        replaced(node);
        return rrpc.rocket(node);
    }

    /** This loop's address cache and lookups for one table partition. */
    public RemoteTable remote(final Catalog.Partition partition) {
        final RemoteTable known = remotes.get(partition.descriptor()); // a hit allocates no lambda for computeIfAbsent
        if (known != null) {
            return known;
        }
        return remotes.computeIfAbsent(partition.descriptor(), d -> new RemoteTable(d,
            () -> channel(partition.node()), () -> rocket(partition.node())));
    }

    /** This loop's address cache and lookups for one backup copy of a table partition. */
    public RemoteTable remote(final Catalog.Replica backup) {
        final RemoteTable known = remotes.get(backup.descriptor());
        if (known != null) {
            return known;
        }
        return remotes.computeIfAbsent(backup.descriptor(), d -> new RemoteTable(d,
            () -> channel(backup.node()), () -> rocket(backup.node()))); // replaced nodes' channels dropped (review)
    }

    /** How lookups that miss the address cache reach the index ({@link RemoteTable.LookupMode}). */
    public RemoteTable.LookupMode lookupMode() {
        return lookupMode;
    }

    /**
     * Sets how lookups that miss the address cache reach the index: by RPC (one round trip, the memory node's CPU
     * walks the index) or one-sided (READs of the index and its absent bound; the memory node's CPU is not involved).
     * Either gives the same pointer, and for a missing key the same bound ({@code Table#absentBound}).
     */
    public TxnRuntime lookupMode(final RemoteTable.LookupMode mode) {
        this.lookupMode = java.util.Objects.requireNonNull(mode, "mode");
        return this;
    }

    public Timers timers() {
        return timers;
    }

    /**
     * The node's host and NIC clocks for this loop ({@code NodeClocks.onLoop}), or {@code null} when whoever built
     * the runtime gave none (protocols that read a per-node clock then fall back to {@link #timers()}).
     */
    public io.scythe.bridge.NodeClocks clocks() {
        return clocks;
    }

    /** Gives this loop its node's clocks (see {@link #clocks()}); call on the loop before transactions run. */
    public void clocks(final io.scythe.bridge.NodeClocks clocks) {
        this.clocks = clocks;
    }

    public TimestampOracle tso() {
        return tso;
    }

    public Watermarks watermarks() {
        return watermarks;
    }

    /** Where committed transactions are reported, or {@code null} (the default: nothing recorded, nothing spent). */
    public HistoryRecorder recorder() {
        return recorder;
    }

    /** Starts ({@code recorder}) or stops ({@code null}) reporting this loop's committed transactions. */
    public void recorder(final HistoryRecorder recorder) {
        this.recorder = recorder;
    }

    /**
     * The last sequence number a loop may give out: ids are {@code idBase} (epoch, CN slot and loop in bits 32-63,
     * {@code RecoveryRpc.NODE_ID_MASK}) plus a sequence in the low 32 bits, so one more would carry into the slot.
     */
    static final long LAST_SEQUENCE = 0xffff_ffffL;

    /**
     * A transaction id unique in the cluster, never 0 (0 means "free" in a CAS lock word).
     *
     * <p>After {@link #LAST_SEQUENCE} ids the loop gives up ({@link #giveUp}) and this throws, rather than wrap: a
     * wrapped id could equal one still in a CAS lock word or redo record of this incarnation, and recovery tells
     * owners apart only by these ids. A cluster CN then loses its lease and rejoins under a new epoch (new ids);
     * at a million commits a second on one loop that is once in about 70 minutes, which a restart costs far less
     * than a proof that no id of the last round is still held.
     *
     * @throws NotServingException when this loop's ids are used up or it gave up before
     */
    public long nextTxnId() {
        if (gaveUpFor != null) {
            throw new NotServingException("this loop gave up (" + gaveUpFor + ")");
        }
        if (sequence >= LAST_SEQUENCE) {
            final String why = "transaction ids of this loop are used up (" + LAST_SEQUENCE + " under prefix "
                + Long.toHexString(idBase) + "): the node must rejoin under a new epoch";
            giveUp(why);
            throw new NotServingException(why);
        }
        return idBase + ++sequence;
    }

    /** Test hook: the next id's sequence number will be {@code next}. */
    void skipSequenceTo(final long next) {
        sequence = next - 1;
    }
}
