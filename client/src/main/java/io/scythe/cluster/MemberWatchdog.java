package io.scythe.cluster;

import com.hazelcast.cluster.Address;
import com.hazelcast.cluster.Member;
import com.hazelcast.core.HazelcastInstance;
import com.hazelcast.core.HazelcastInstanceAware;
import com.hazelcast.core.LifecycleEvent;
import com.hazelcast.core.LifecycleListener;
import com.hazelcast.instance.impl.HazelcastInstanceImpl;
import com.hazelcast.instance.impl.HazelcastInstanceProxy;
import com.hazelcast.instance.impl.Node;
import com.hazelcast.internal.cluster.impl.AbstractJoiner;
import com.hazelcast.internal.cluster.impl.SplitBrainJoinMessage;
import com.hazelcast.internal.cluster.impl.SplitBrainJoinMessage.SplitBrainMergeCheckResult;
import com.hazelcast.instance.EndpointQualifier;
import com.hazelcast.internal.server.ServerConnection;
import com.hazelcast.internal.server.ServerConnectionManager;
import com.hazelcast.internal.server.tcp.TcpServerConnection;

import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.LongSupplier;
import java.util.logging.Logger;

/**
 * Two watchdogs over this process's Hazelcast member, for the residues of issue 23 §1's retention fix, each on a
 * thread of this class (never an event loop): (b) a member connection stuck in the protocol handshake (a paused peer) is
 * closed ({@link #closeStuckHandshakes()}); (a) a cluster side without any seed merges into the seeds' cluster:
 *
 * <p>Why: conf/cluster.xml keeps no removed member's address for the split-brain search (retention 0), so the seeds'
 * master dials only the seeds, never a compute node or proxy. Hazelcast merges only the smaller side into the larger
 * (data members; a tie goes by address), and only the smaller side's master acts: the larger side answers its search
 * and waits to be joined ({@code ClusterJoinManager#shouldMerge}, {@code TcpIpJoiner#searchForOtherClusters} act on
 * {@code LOCAL_NODE_SHOULD_MERGE} only). If every seed dropped out together while compute nodes and proxies
 * outnumbered them, the restarted seeds form a smaller cluster whose master never dials the non-seeds, and the sides
 * never merge.
 *
 * <p>What: every Hazelcast member built from {@link ClusterAccess#hazelcastConfig()} runs this on a thread of its own
 * (never an event loop: the check below blocks for up to Hazelcast's split-brain connect timeout). A member whose
 * cluster has had no seed member (a configured TCP {@code members} address) for {@link #seedlessMs} (3x the heartbeat
 * timeout) and that is its side's master asks each seed address, as Hazelcast's own search does, whether that seed is
 * the master of a cluster it could merge with. Where Hazelcast would have the seed's side merge into ours
 * ({@code REMOTE_NODE_SHOULD_MERGE}: the seeds are the smaller side, so nobody ever would), it starts the merge of its
 * own side into the seeds' cluster instead, by the same path as Hazelcast's search ({@code
 * AbstractJoiner#startClusterMerge}: every member of this side leaves, rejoins through that seed and merges its entries
 * by the maps' merge policies). Into the seeds', not the other way round, whatever the sizes: the seeds are the TSO
 * and the memory nodes, whose state (timestamps, regions) the compute nodes follow. Where Hazelcast's own search
 * decides to merge this side ({@code LOCAL_NODE_SHOULD_MERGE}) it is left to do so. The sides' sizes are Hazelcast's
 * business; this only breaks the case where nobody would act.
 *
 * <p>What a merge costs (review stop58 #1): every member of the merging side fires MERGING, leaves and rejoins, so
 * each compute node there gives up its lease ({@code ScytheNode#watchMembers}: "split from the cluster and is merging
 * back") and restarts under a new epoch, as after any merge of its side; the side's map entries are offered to the
 * seeds' cluster under each map's merge policy, so for put-if-absent maps the restarted seeds' entries win. That is the
 * intent: the seeds did restart, and their state is what the CNs must follow. Untested at node level (only with bare
 * Hazelcast members, MemberWatchdogTest). Client-library members ({@code ScytheClient}, lite members) run the watchdog
 * too: a client is a non-seed and may, as its side's master, start the merge (review #5). Like Hazelcast's own search
 * it waits while a member joins its side ({@code ClusterJoinManager#isJoinInProgress}, reached by reflection).
 *
 * <p>Seeds are compared by resolved socket address (review #4): a seed configured by a name that does not resolve
 * (a container not up yet) is left out until it does, and a seed whose configured name resolves to another address
 * than its Hazelcast member address is never seen as a seed (its side would look seedless and, after 3 heartbeat
 * timeouts, ask the seeds to merge: harmless where it finds no other cluster). Configure seeds by the address they
 * bind.
 *
 * <p>Hazelcast offers no public API for this ({@code Cluster#changeClusterState} cannot join another cluster; a
 * {@code LifecycleService} restart would replace the instance under Vert.x's cluster manager): the two calls are
 * {@code AbstractJoiner}'s protected {@code sendSplitBrainJoinMessageAndCheckResponse} and {@code startClusterMerge}
 * (5.6.0), reached by reflection and checked when this class loads ({@link #checkAvailable()}), so a Hazelcast upgrade
 * that renames them fails every member's start with a clear error rather than silently dropping the watchdog.
 */
final class MemberWatchdog implements LifecycleListener, HazelcastInstanceAware {
    private static final Logger LOG = Logger.getLogger(MemberWatchdog.class.getName());
    /** How often the watchdog looks at the member list. */
    static final long TICK_MS = 1_000;
    /** How often it looks for member connections stuck in the protocol handshake. */
    static final long HANDSHAKE_TICK_MS = 100;

    private static final Method CHECK_MERGE;
    private static final Method START_MERGE;
    private static final Method JOIN_IN_PROGRESS;
    private static final String MISSING;

    static {
        Method check = null;
        Method start = null;
        Method joining = null;
        String missing = null;
        try {
            check = AbstractJoiner.class.getDeclaredMethod("sendSplitBrainJoinMessageAndCheckResponse", Address.class,
                SplitBrainJoinMessage.class);
            start = AbstractJoiner.class.getDeclaredMethod("startClusterMerge", Address.class, int.class);
            joining = com.hazelcast.internal.cluster.impl.ClusterJoinManager.class.getDeclaredMethod(
                "isJoinInProgress");
            check.setAccessible(true);
            start.setAccessible(true);
            joining.setAccessible(true);
        } catch (final NoSuchMethodException | RuntimeException e) {
            missing = e.toString();
        }
        CHECK_MERGE = check;
        START_MERGE = start;
        JOIN_IN_PROGRESS = joining;
        MISSING = missing;
    }

    /** Fails unless this Hazelcast has the joiner methods the watchdog calls (Hazelcast 5.6). */
    static void checkAvailable() {
        if (MISSING != null) {
            throw new IllegalStateException("this Hazelcast lacks AbstractJoiner's split-brain methods the seed "
                + "watchdog uses (written for 5.6.0): " + MISSING);
        }
    }

    private final List<String> seeds;
    private final long seedlessMs;
    private final long handshakeMs;
    private final LongSupplier clock;
    private volatile HazelcastInstance hazelcast;
    private volatile ScheduledExecutorService timer;
    private long lastSeedMs;
    private long lastAttemptMs = Long.MIN_VALUE / 2;
    /** How many merges into a seed's cluster this watchdog started (tests). */
    volatile int mergesStarted;
    /** How many connections stuck in the handshake it closed (tests). */
    final AtomicInteger handshakesClosed = new AtomicInteger();

    /**
     * @param seeds       the configured TCP members, {@code host:port}
     * @param seedlessMs  how long this member's cluster may have no seed before its master looks for the seeds'
     * @param handshakeMs how long a member connection this member opened may go without a byte from the peer before
     *                    it is closed
     */
    MemberWatchdog(final List<String> seeds, final long seedlessMs, final long handshakeMs) {
        checkAvailable();
        this.seeds = List.copyOf(seeds);
        this.seedlessMs = seedlessMs;
        this.handshakeMs = handshakeMs;
        this.clock = () -> TimeUnit.NANOSECONDS.toMillis(System.nanoTime());
        this.lastSeedMs = clock.getAsLong();
    }

    @Override
    public void setHazelcastInstance(final HazelcastInstance instance) {
        this.hazelcast = instance;
    }

    @Override
    public synchronized void stateChanged(final LifecycleEvent event) {
        switch (event.getState()) {
            case STARTED -> {
                if (timer == null) {
                    // Two threads: a merge check blocks for seconds (a dial), the handshake check must not wait on it.
                    timer = Executors.newScheduledThreadPool(2, r -> {
                        final Thread t = new Thread(r, "scythe-member-watchdog");
                        t.setDaemon(true);
                        return t;
                    });
                    timer.scheduleWithFixedDelay(() -> guarded(this::checkSeeds), TICK_MS, TICK_MS,
                        TimeUnit.MILLISECONDS);
                    timer.scheduleWithFixedDelay(() -> guarded(this::closeStuckHandshakes), HANDSHAKE_TICK_MS,
                        HANDSHAKE_TICK_MS, TimeUnit.MILLISECONDS);
                }
            }
            case SHUTTING_DOWN, SHUTDOWN -> {
                if (timer != null) {
                    timer.shutdownNow();
                    timer = null;
                }
            }
            default -> {
            }
        }
    }

    private static void guarded(final Runnable check) {
        try {
            check.run();
        } catch (final RuntimeException e) { // never let one failure end the periodic task
            LOG.warning("member watchdog: " + e);
        }
    }

    /**
     * Closes every member connection this joined member opened to an address that is not a current member and whose
     * peer has sent nothing (not even Hazelcast's protocol bytes) for {@link #handshakeMs}: a paused process (SIGSTOP:
     * its kernel accepts, nobody reads). While such a
     * connection lives, its outbound pipeline (SingleProtocolEncoder BLOCKED on the peer's protocol bytes) is put back
     * on its output I/O thread's task queue again and again, the thread never returns to select() and every other
     * connection it serves starves (UPSTREAM.md). Closing it ends that; Hazelcast dials again when it needs to (the
     * split-brain search, every 5 s, dials a paused seed), so the spin is cut to about {@link #handshakeMs} in every
     * 5 s, not ended (issue 23 §1 residue (b);
     * PausedPeerIoSpinTest#shouldCloseAConnectionToAPausedSeedStuckInTheHandshake).
     */
    private void closeStuckHandshakes() {
        final HazelcastInstance hz = hazelcast;
        final Node node = hz == null ? null : node(hz);
        if (node == null || !node.isRunning()) {
            return;
        }
        final ServerConnectionManager manager = node.getServer().getConnectionManager(EndpointQualifier.MEMBER);
        if (manager == null) {
            return;
        }
        if (!node.getClusterService().isJoined()) {
            return; // a join's dials are left alone
        }
        // Wall clock, as TcpServerConnection's start time: a clock step can close a young connection early (it is
        // dialled again) or keep a stuck one longer (review stop58 #9).
        final long now = System.currentTimeMillis();
        for (final ServerConnection connection : manager.getConnections()) {
            // Only dials to an address that is not a current member (the split-brain search's, to a removed seed):
            // a reconnect to a live member that is slow to answer at load is left alone (review stop58 #7).
            if (connection instanceof TcpServerConnection c && c.isAlive() && !c.isAcceptorSide()
                && c.lastReadTimeMillis() < 0 && now - c.getStartTime() > handshakeMs
                && (c.getRemoteAddress() == null || node.getClusterService().getMember(c.getRemoteAddress()) == null)) {
                handshakesClosed.incrementAndGet();
                LOG.warning("closing member connection to " + c.getRemoteSocketAddress() + ": nothing from the peer in "
                    + (now - c.getStartTime()) + " ms (paused? issue 23 §1)");
                c.close("no protocol bytes from the peer in " + handshakeMs + " ms", null);
            }
        }
    }

    private void checkSeeds() {
        final HazelcastInstance hz = hazelcast;
        final Node node = hz == null ? null : node(hz);
        final long now = clock.getAsLong();
        if (node == null || !node.isRunning() || !node.getClusterService().isJoined()) {
            lastSeedMs = now; // joining or merging: counted from when it has a cluster again
            return;
        }
        final List<InetSocketAddress> seedAddresses = resolvedSeeds();
        for (final Member m : hz.getCluster().getMembers()) {
            if (seedAddresses.contains(m.getSocketAddress())) {
                lastSeedMs = now;
                return;
            }
        }
        if (now - lastSeedMs < seedlessMs || !node.isMaster()
            || now - lastAttemptMs < TimeUnit.SECONDS.toMillis(Long.parseLong(ClusterAccess.MERGE_DELAY_SECONDS))) {
            return;
        }
        if (!hz.getCluster().getClusterState().isJoinAllowed()) {
            return; // frozen or passive: a merge (Hazelcast's own, say) or a shutdown is under way
        }
        if (joinInProgress(node)) {
            // A member joining this side now (stop 58): Hazelcast's own search waits for it too (SplitBrainHandler);
            // a merge started meanwhile would take this side apart under the join. Looked at again next tick.
            return;
        }
        lastAttemptMs = now;
        final AbstractJoiner joiner = (AbstractJoiner) node.getJoiner();
        // Every seed is asked first (review stop58 #2): where one answers that this side should merge into it,
        // Hazelcast's own search will do so (toward that seed); only where none does, and one would have to merge into
        // this side (which it never will), does this side merge into that one.
        Address target = null;
        int version = 0;
        for (final InetSocketAddress seed : seedAddresses) {
            final SplitBrainJoinMessage ours = node.createSplitBrainJoinMessage();
            final Object result = call(CHECK_MERGE, joiner, new Address(seed), ours);
            if (result == SplitBrainMergeCheckResult.LOCAL_NODE_SHOULD_MERGE) {
                return;
            }
            if (result == SplitBrainMergeCheckResult.REMOTE_NODE_SHOULD_MERGE && target == null) {
                target = new Address(seed);
                version = ours.getMemberListVersion();
            }
        }
        if (target != null) {
            LOG.warning("no seed member in this cluster for " + (now - lastSeedMs) + " ms; seed " + target
                + " is the master of another cluster, which will not look for this one: this cluster merges into it "
                + "(issue 23 §1; every member of this side leaves and rejoins through it: a CN gives up its lease and "
                + "restarts)");
            mergesStarted++;
            call(START_MERGE, joiner, target, version);
        }
    }

    /** Whether {@code node}, as its cluster's master, is letting a member join now ({@code ClusterJoinManager}). */
    static boolean joinInProgress(final Node node) {
        return (Boolean) call(JOIN_IN_PROGRESS, node.getClusterService().getClusterJoinManager());
    }

    /** The seeds' socket addresses; a name that does not resolve now (a container not up yet) is left out. */
    private List<InetSocketAddress> resolvedSeeds() {
        final List<InetSocketAddress> out = new ArrayList<>(seeds.size());
        for (final String s : seeds) {
            final InetSocketAddress a = ClusterAccess.memberAddress(s);
            if (!a.isUnresolved()) {
                out.add(a);
            }
        }
        return out;
    }

    private static Node node(final HazelcastInstance hz) {
        if (hz instanceof HazelcastInstanceImpl impl) {
            return impl.node;
        }
        if (hz instanceof HazelcastInstanceProxy proxy) {
            return proxy.getOriginal().node;
        }
        return null;
    }

    private static Object call(final Method method, final Object target, final Object... args) {
        try {
            return method.invoke(target, args);
        } catch (final IllegalAccessException e) {
            throw new IllegalStateException(e);
        } catch (final InvocationTargetException e) {
            throw e.getCause() instanceof RuntimeException r ? r : new IllegalStateException(e.getCause());
        }
    }
}
