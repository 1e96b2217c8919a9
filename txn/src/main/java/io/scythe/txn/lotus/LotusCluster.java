package io.scythe.txn.lotus;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.function.BiConsumer;
import java.util.function.BooleanSupplier;

/**
 * What the compute nodes of one Lotus cluster share, standing for the paper's external services: the routing layer's
 * shard-to-node map (lotus.md §1.1: external, fault-tolerant; here the current map, which every requester reads when
 * it retries an out-of-range key), the latency metrics each node publishes every interval (the paper writes them to a
 * metrics region in the memory pool; here they are published in memory), and the record of handoffs. One per cluster:
 * the host puts it in the map every compute node's context shares ({@code ComputeNodeContext#shared}).
 *
 * <p>Which node <em>serves</em> a shard is each node's own state ({@link LotusNode#serves}), changed only by a
 * handoff: the sender stops serving before the receiver starts, so no shard ever has two servers; the map here is
 * updated last (the handoff's step 6), and a requester that asked a node no longer serving the shard is answered
 * out of range and asks again by the map.
 */
public final class LotusCluster {
    /** The key of the cluster in the compute nodes' shared map. */
    public static final String KEY = "lotus.cluster";
    /** The key of the options in the shared map, if the host sets any (else {@link LotusOptions#PAPER}). */
    public static final String OPTIONS = "lotus.options";
    /** The key of the host's routing layer in the shared map: told {@code (shard, to)} at each handoff's end. */
    public static final String ROUTING = "routing.moved";
    /**
     * The key of what says the host's timers run on wall-clock time (Boolean), if it sets it: the embedded cluster,
     * whose loops a loaded machine stalls for milliseconds (then the paper-less 1 ms lease would declare live nodes
     * dead), so its leases are {@link LotusOptions#WALL_CLOCK_LEASE_NS} unless {@link #OPTIONS} says otherwise.
     */
    public static final String WALL_CLOCK = "clock.wall";
    /** The key of what says the run is over (periodic tasks stop), if the host sets one. */
    public static final String OVER = "run.over";
    /** The key of the host's routing layer's shard count in the shared map, if it routes: Lotus's lock shards. */
    public static final String ROUTING_SHARDS = "routing.shards";
    /** The key of how often (ns) the host's routing layer moves shards at random, if it routes: never, for Lotus. */
    public static final String ROUTING_MOVE_EVERY = "routing.moveShardEveryNs";

    private final int[] owners = new int[LotusKey.SHARDS];
    private long epoch = 1;
    private final LotusNode[] nodes;
    private final long[] publishedLatencyNs;
    private final LotusOptions options;
    private final BiConsumer<Integer, Integer> routing;
    private final BooleanSupplier over;
    private final List<Handoff> handoffs = new ArrayList<>();
    private final List<String> violations = new ArrayList<>();
    /** When each node last renewed its lease (virtual or wall ns of its loop's timers); -1: not yet. */
    private final long[] renewedNs;
    /** Nodes declared dead (their lease ran out), by index: the recovery of each. */
    private final java.util.Map<Integer, Recovery> recoveries = new java.util.TreeMap<>();

    /**
     * One dead node's recovery (lotus.md §2.7): when it was declared dead, when the survivors had finished its logged
     * commits ({@code CnRecovery}), when its shards were served again; -1 while not yet.
     */
    public static final class Recovery {
        final int cn;
        final long detectedNs;
        long logsDoneNs = -1;
        long servedAgainNs = -1;
        int committedRecords;
        int incompleteRecords;
        /** Records logged before T_commit that no copy showed committed: undone ({@code CnRecovery.Report}). */
        int undoneRecords;
        int locksReleased;
        int survivorsAborted;
        /** Object slots granted to it that its recovery gave back ({@code SlotPool#reclaim}); -1 while not yet. */
        long slotsReclaimed = -1;
        /** Why that give-back failed, or {@code null}. */
        String slotsReclaimFailure;
        String failure;
        /** Its logs were settled by the host's own recovery, not this one ({@code LotusNode#awaitHost}). */
        boolean byHost;
        final java.util.Set<Integer> released = new java.util.TreeSet<>();
        /** The dead node's shards as served again: shard to the survivor that took it ({@code LotusNode#serveAgain}). */
        final java.util.Map<Integer, Integer> handedOn = new java.util.TreeMap<>();

        Recovery(final int cn, final long detectedNs) {
            this.cn = cn;
            this.detectedNs = detectedNs;
        }

        public int cn() {
            return cn;
        }

        public long detectedNs() {
            return detectedNs;
        }

        public long logsDoneNs() {
            return logsDoneNs;
        }

        public long servedAgainNs() {
            return servedAgainNs;
        }

        public int committedRecords() {
            return committedRecords;
        }

        public int incompleteRecords() {
            return incompleteRecords;
        }

        public int undoneRecords() {
            return undoneRecords;
        }

        public int locksReleased() {
            return locksReleased;
        }

        public int survivorsAborted() {
            return survivorsAborted;
        }

        public long slotsReclaimed() {
            return slotsReclaimed;
        }

        public String slotsReclaimFailure() {
            return slotsReclaimFailure;
        }

        /** Whether the host's own recovery settled its logs (this one's was refused the claim). */
        public boolean byHost() {
            return byHost;
        }

        /** Why the recovery failed, or {@code null}. */
        public String failure() {
            return failure;
        }
    }

    /** One handoff: the shard, from and to, when it began and how long the shard was served by nobody. */
    public record Handoff(int shard, int from, int to, long startNs, long pauseNs, int holdersAborted) {
    }

    @SuppressWarnings("unchecked")
    private LotusCluster(final int cns, final Map<String, Object> shared, final boolean separate) {
        this.nodes = new LotusNode[cns];
        this.replaced = new LotusNode[cns];
        this.addresses = new String[cns];
        this.renewedNs = new long[cns];
        java.util.Arrays.fill(renewedNs, -1);
        this.publishedLatencyNs = new long[cns];
        final Object shards = shared.get(ROUTING_SHARDS);
        if (shards != null && ((Number) shards).intValue() != LotusKey.SHARDS) {
            throw new IllegalArgumentException("routing with lotus maps its " + LotusKey.SHARDS + " lock shards: "
                + "--shards must be " + LotusKey.SHARDS + ", not " + shards);
        }
        final Object moveEvery = shared.get(ROUTING_MOVE_EVERY);
        if (moveEvery != null && ((Number) moveEvery).longValue() > 0) {
            throw new IllegalArgumentException("--move-shard-every moves shards at random; lotus moves shards itself "
                + "(resharding): leave it at 0");
        }
        final Object o = shared.get(OPTIONS);
        final LotusOptions inProcess = Boolean.TRUE.equals(shared.get(WALL_CLOCK))
            ? LotusOptions.PAPER.lease(LotusOptions.WALL_CLOCK_LEASE_NS) : LotusOptions.PAPER;
        // Nodes in processes of their own (cluster nodes) see only themselves here: no lease of another node is ever
        // renewed in this object, and no other node's latency published, so the in-memory leases and resharding are
        // off. The host's membership (its Hazelcast leases) and recovery duty stand for the leases; a recovered
        // incarnation's locks are freed on its word (LotusNode#peerRecovered). Resharding across processes (a
        // routing layer and latency metrics outside the nodes) is not built.
        this.options = o instanceof LotusOptions lo ? lo : separate ? inProcess.lease(0).reshardEvery(0) : inProcess;
        this.routing = (BiConsumer<Integer, Integer>) shared.get(ROUTING);
        final Object over = shared.get(OVER);
        this.over = over instanceof BooleanSupplier b ? b : () -> false;
        final ShardOwners even = ShardOwners.even(cns);
        for (int s = 0; s < owners.length; s++) {
            owners[s] = even.ownerOf(s);
        }
    }

    /**
     * The cluster of {@code shared} (made by its first compute node); {@code separate}: every node in a process of its
     * own, so this object holds one node only ({@code ComputeNodeContext#separateProcesses}).
     */
    static LotusCluster of(final Map<String, Object> shared, final int cns, final boolean separate) {
        synchronized (shared) {
            final Object c = shared.computeIfAbsent(KEY, k -> new LotusCluster(cns, shared, separate));
            if (!(c instanceof LotusCluster cluster) || cluster.nodes.length != cns) {
                throw new IllegalStateException("the shared map's " + KEY + " is no Lotus cluster of " + cns
                    + " compute nodes: " + c);
            }
            return cluster;
        }
    }

    /** A cluster of {@code cns} nodes outside any host (unit tests). */
    static LotusCluster standalone(final int cns) {
        return new LotusCluster(cns, new java.util.HashMap<>(), false);
    }

    synchronized void join(final LotusNode node) {
        final LotusNode before = nodes[node.index()];
        if (before != null && before != node && replaced[node.index()] != null) {
            // A restarted incarnation replaced before it rejoined: its own crash's recovery would be taken for the
            // first's (deadIncarnation names the first), and the simulator skips a crashed node's end checks once.
            // Not built; the simulator crashes each CN once (Faults#validate), so only another host could get here.
            throw new IllegalStateException("cn" + node.index() + " restarted again before its restarted incarnation "
                + "rejoined (its first incarnation's recovery not over): a second crash of a restarted Lotus node "
                + "before it rejoins is not built");
        }
        if (before != null && before != node) {
            replaced[node.index()] = before; // a restart: the dead incarnation, whose recovery may be still to come
        }
        nodes[node.index()] = node;
    }

    /** Incarnations a restart put a new one in place of, until it rejoins ({@link #join}, {@link #rejoin}). */
    private final LotusNode[] replaced;

    /** The incarnation of {@code cn} a recovery is of: the one a restart replaced, else the current one. */
    synchronized LotusNode deadIncarnation(final int cn) {
        return replaced[cn] != null ? replaced[cn] : nodes[cn];
    }

    LotusOptions options() {
        return options;
    }

    boolean over() {
        return over.getAsBoolean();
    }

    /** The routing layer's current map (read at each use: a retry asks by the newest). */
    ShardOwners owners() {
        return shard -> {
            synchronized (this) {
                return owners[shard];
            }
        };
    }

    public synchronized long epoch() {
        return epoch;
    }

    /** Handoff step 6: the routing layer maps {@code shard} to {@code to}, and the host's router learns it. */
    void moved(final int shard, final int to) {
        synchronized (this) {
            owners[shard] = to;
            epoch++;
        }
        if (routing != null) {
            routing.accept(shard, to);
        }
    }

    synchronized void publish(final int cn, final long latencyNs) {
        publishedLatencyNs[cn] = latencyNs;
    }

    /** Every node's last published mean latency (0: it committed nothing in its last interval). */
    synchronized long[] published() {
        return publishedLatencyNs.clone();
    }

    LotusNode node(final int cn) {
        return nodes[cn];
    }

    int size() {
        return nodes.length;
    }

    synchronized void recorded(final Handoff h) {
        handoffs.add(h);
    }

    /** The handoffs so far. */
    public synchronized List<Handoff> handoffs() {
        return List.copyOf(handoffs);
    }

    /**
     * Checks that no shard is served by two nodes now (lotus.md §6, 3); a violation is kept for
     * {@link #violations}. Called at every change of who serves.
     */
    synchronized void checkSingleServer(final int shard) {
        int servers = 0;
        for (int cn = 0; cn < nodes.length; cn++) {
            final LotusNode n = nodes[cn];
            if (n != null && !recoveries.containsKey(cn) && n.serves(shard)) {
                servers++;
            }
        }
        if (servers > 1) {
            violations.add("shard " + shard + " served by " + servers + " nodes");
        }
    }

    /** What went wrong with shard ownership (two servers of one shard at some moment), empty when nothing. */
    public synchronized List<String> violations() {
        return List.copyOf(violations);
    }

    synchronized void renew(final int cn, final long nowNs) {
        if (!recoveries.containsKey(cn) && renewedNs[cn] != RETIRED) {
            renewedNs[cn] = nowNs;
        }
    }

    /** What {@link #renewedNs} holds for a node that stopped renewing because the run is over ({@link #retire}). */
    private static final long RETIRED = Long.MAX_VALUE;

    /**
     * {@code cn} stops renewing its lease because the run is over and it has nothing left to do: its lease never runs
     * out after. A crashed node never retires, so the survivors still judge its lease in the run's drain.
     */
    synchronized void retire(final int cn) {
        if (!recoveries.containsKey(cn)) {
            renewedNs[cn] = RETIRED;
        }
    }

    /**
     * Whether nothing is left for {@code cn}'s membership task to do at {@code nowNs}: every other node retired, or
     * holds its lease, or is dead with its recovery over and its locks freed here ({@code freedHere}).
     */
    synchronized boolean settled(final int cn, final java.util.Set<Integer> freedHere, final long nowNs,
                                 final long leaseNs) {
        for (int other = 0; other < nodes.length; other++) {
            final Recovery r = recoveries.get(other);
            if (other != cn && (r == null ? expired(other, nowNs, leaseNs)
                : !freedHere.contains(other) || r.servedAgainNs < 0 && r.failure == null)) {
                return false;
            }
        }
        return true;
    }

    /** Whether {@code cn}'s lease ran out at {@code nowNs} ({@code leaseNs} after its last renewal). */
    synchronized boolean expired(final int cn, final long nowNs, final long leaseNs) {
        return recoveries.containsKey(cn) || renewedNs[cn] >= 0 && renewedNs[cn] != RETIRED
            && nowNs - renewedNs[cn] > leaseNs;
    }

    public synchronized boolean dead(final int cn) {
        return recoveries.containsKey(cn);
    }

    /** Declares {@code cn} dead; its recovery when the caller is the first to, else {@code null}. */
    synchronized Recovery declareDead(final int cn, final long nowNs) {
        if (recoveries.containsKey(cn)) {
            return null;
        }
        final Recovery r = new Recovery(cn, nowNs);
        recoveries.put(cn, r);
        return r;
    }

    synchronized Recovery recovery(final int cn) {
        return recoveries.get(cn);
    }

    /** Every dead node's recovery so far (those of restarted nodes' old incarnations first). */
    public synchronized List<Recovery> recoveries() {
        final List<Recovery> all = new ArrayList<>(rejoined);
        all.addAll(recoveries.values());
        return List.copyOf(all);
    }

    /** Recoveries of old incarnations whose node was restarted in process ({@link #rejoin}). */
    private final List<Recovery> rejoined = new ArrayList<>();
    /** Nodes restarted in process: live again, but serving no shard (see {@code LotusNode#awaitOldIncarnation}). */
    private final java.util.Set<Integer> restarted = new java.util.TreeSet<>();

    /**
     * {@code cn}'s restarted incarnation (in this process) serves from {@code nowNs}: its old incarnation's recovery
     * is over, so it is live again and its lease runs from now.
     */
    synchronized void rejoin(final int cn, final long nowNs, final String address) {
        final Recovery old = recoveries.remove(cn);
        if (old == null) {
            throw new IllegalStateException("cn" + cn + " rejoins, but no recovery of it is recorded");
        }
        rejoined.add(old);
        restarted.add(cn);
        replaced[cn] = null; // recovered: a later crash is the current incarnation's
        renewedNs[cn] = nowNs;
        addresses[cn] = address;
    }

    /** Where each node's current incarnation answers, when not its name in the node list (a restart's); else null. */
    private final String[] addresses;

    /** The fabric name of {@code cn}'s current incarnation, or {@code null}: its name in the node list. */
    synchronized String address(final int cn) {
        return addresses[cn];
    }

    /**
     * The shards {@code cn}'s old incarnation had when it died, as its recovery handed them on (shard to survivor):
     * what its rejoined incarnation asks back ({@code LotusNode#askShardsBack}). Empty when none recorded.
     */
    synchronized java.util.Map<Integer, Integer> handedOn(final int cn) {
        for (int i = rejoined.size() - 1; i >= 0; i--) {
            if (rejoined.get(i).cn == cn) {
                return new java.util.TreeMap<>(rejoined.get(i).handedOn);
            }
        }
        return java.util.Map.of();
    }

    /**
     * Whether the incarnation of {@code cn} whose lock table a transaction asked is gone: {@code cn} is dead, or was
     * restarted in process and is not reachable at its own address (a host that gave it none): then every lock held
     * "at" it was its old one's, and a call to the old one's address would never be answered. A rejoined incarnation
     * with its address is not gone: the map names it only for the shards handed back to it, after it rejoined, so a
     * request sent there asks the new incarnation.
     */
    synchronized boolean gone(final int cn) {
        return recoveries.containsKey(cn) || restarted.contains(cn) && addresses[cn] == null;
    }

    /** Whether {@code cn} is a restarted incarnation in this process ({@link #rejoin}). */
    synchronized boolean restarted(final int cn) {
        return restarted.contains(cn);
    }

    /** The cluster of the compute node served by {@code peers}, or {@code null}. */
    public static LotusCluster of(final io.scythe.rrpc.CnPeers peers) {
        final LotusNode node = LotusNode.of(peers);
        return node == null ? null : node.cluster();
    }
}
