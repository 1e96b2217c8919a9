package io.scythe.txn.spi;

import io.scythe.storage.ObjectFormat;
import io.scythe.storage.TableSchema;
import io.scythe.txn.AbortReason;
import io.scythe.txn.Protocol;
import io.scythe.txn.Stage;

import java.util.List;

/**
 * A concurrency-control protocol as one package brings it (DESIGN.md, "A protocol is a module"): its CN-side
 * transactions, its memory-node services, its locks (for recovery and end-of-run probes), its stages, abort reasons
 * and configuration keys. Registered with one line in {@code META-INF/services/io.scythe.txn.spi.ProtocolModule} and
 * found in the {@link ProtocolRegistry}; nothing shared names a module.
 *
 * <p>Storage format: objects have one header ({@code ObjectLayout}, 64 bytes); its shared words are the version, the
 * chain, the value length, flags and incarnation, and each module declares the protocol words it keeps there
 * ({@link #headerWords()}; the registry refuses overlaps) and supplies each table's format ({@link #objectFormat}: the
 * words its objects carry, and only those). Storage still lays every format out in the 64-byte header (a word a
 * format leaves out keeps its bytes, zero); sizing the header per format is the storage's next step.
 */
public interface ProtocolModule {
    /** The module's name, e.g. {@code scythe} (its package's name). */
    String name();

    /** The protocols it registers, by the names {@code --protocols} takes (a module may register several). */
    List<Protocol> protocols();

    /**
     * Whether its protocols are in the default lists ({@code ProtocolRegistry.listed()}): false for one that exists
     * only to be asked for by name (the unsafe proof of the history checker).
     */
    default boolean listed() {
        return true;
    }

    /** Starts its services on one memory node (RPC handlers, pollers, recovery steps); none by default. */
    default void startMemoryNode(final MemoryNodeContext node) {
    }

    /**
     * Whether the compute nodes of a run of {@code protocol} (one of its {@link #protocols}) talk to each other
     * ({@link io.scythe.rrpc.CnPeers}) and which loops call which (one hook for SELCC's invalidations, every loop to
     * every loop, and Lotus's lock RPCs, loop i to loop i). For such a run a host gives every compute node peer
     * messaging, calls {@link #startComputeNode} on each before its loops serve, and gives every loop's runtime its
     * peers ({@code TxnRuntime#peerLoops}). The simulator, the embedded cluster ({@code scythe bench}) and cluster
     * nodes are such hosts (cluster nodes only where {@link #clusterRefusal} says nothing).
     * {@link PeerMessaging#NONE} by default: nothing of it is built.
     */
    default PeerMessaging peerMessaging(final Protocol protocol) {
        return PeerMessaging.NONE;
    }

    /**
     * Why cluster nodes (one process per compute node, which dies and rejoins on its own) cannot run {@code protocol}
     * yet, naming what is missing; {@code null} when they can. A protocol whose compute nodes talk to each other is
     * refused by default: its peers work across processes, but what a compute node dying leaves on the others (locks,
     * latch bits, a sequencer's epoch) must be recovered by the module, through
     * {@link ComputeNodeContext#onPeerRecovered}, before it may run there.
     */
    default String clusterRefusal(final Protocol protocol) {
        return peerMessaging(protocol) == PeerMessaging.NONE ? null : "its compute nodes message each other ("
            + peerMessaging(protocol) + ") and module " + name() + " does not say how it recovers from a compute "
            + "node's death in another process";
    }

    /**
     * Why cluster nodes that run {@code protocol} ({@link #clusterRefusal} says nothing) cannot survive a compute node's
     * fault yet (a process SIGKILLed, or paused past its lease, and restarted under a new epoch: what
     * {@code scythe chaos} injects), naming what is missing; {@code null} (the default) when they can. Chaos refuses
     * such a protocol before any process starts; the nodes themselves fail loudly when it happens.
     */
    default String clusterComputeNodeFaultRefusal(final Protocol protocol) {
        return null;
    }

    /**
     * How many compute-node faults (each a node SIGKILLed, and restarted under a new epoch) cluster nodes running
     * {@code protocol} survive in one run, where {@link #clusterComputeNodeFaultRefusal} refuses none: chaos injects no
     * more than that, one at a time, and says so ({@link Integer#MAX_VALUE}, the default: no bound).
     */
    default int clusterComputeNodeFaultLimit(final Protocol protocol) {
        return Integer.MAX_VALUE;
    }

    /** Why {@link #clusterComputeNodeFaultLimit} is what it is, named where chaos stops at it (null: no bound). */
    default String clusterComputeNodeFaultLimitReason(final Protocol protocol) {
        return null;
    }

    /**
     * Whether a compute node of {@code protocol} restarted on cluster nodes must be started as a restart
     * ({@link ComputeNodeContext#awaitsOwnRecovery}, its recovered incarnations named) however long ago its earlier
     * incarnation's recovery finished. False by default: the host tells only restarts within its grace scope (ten
     * minutes), an older one being a fresh start to every module that only needs survivors' take-backs acknowledged.
     * A module whose membership outlives recovery (CALVIN: a node taken over must JOIN the total order again, else it
     * starts as an original member and hangs) says true.
     */
    default boolean restartAlwaysRejoins(final Protocol protocol) {
        return false;
    }

    /**
     * Why a host must not crash a compute node in a run of {@code protocol} (the simulator's {@code --crash-cn}): what a
     * dead compute node leaves (latch bits, the only copy of a line) is not recovered yet, so the run would hang or
     * lose writes; {@code null} (the default) when it may.
     */
    default String crashRefusal(final Protocol protocol) {
        return null;
    }

    /**
     * Why a host must not restart a crashed compute node of {@code protocol} as a new incarnation (the simulator's
     * {@code --crash-restart-after}: empty state, fresh caches, its clients resumed; the module's
     * {@link #startComputeNode} is called again for it with {@link ComputeNodeContext#awaitsOwnRecovery}, and must not
     * let it serve before its old incarnation's recovery is over); {@code null} when it may. Refused by default: a
     * module says that it handles a second incarnation in one process.
     */
    default String restartRefusal(final Protocol protocol) {
        return "restarting a crashed compute node (--crash-restart-after) is not built for " + protocol.name();
    }

    /**
     * {@link #crashRefusal(Protocol)} for a crash of compute node {@code crashed} of {@code computeNodes}, the tables
     * partitioned over {@code partitions} memory nodes: a module whose recovery covers some nodes' deaths only says
     * which. That of any node by default.
     */
    default String crashRefusal(final Protocol protocol, final int crashed, final int computeNodes,
                                final int partitions) {
        return crashRefusal(protocol);
    }

    /** {@link #severalCrashesRefusal}'s default: several crashed compute nodes are not tested for the module. */
    String SEVERAL_CRASHES_UNTESTED = "several crashed compute nodes are not tested for it";

    /**
     * Why a host must not crash compute nodes {@code crashed} (more than one, at one time) in a run of
     * {@code protocol}, the tables partitioned over {@code partitions} memory nodes, or {@code null} when it may:
     * each is recovered as one alone ({@link #crashRefusal(Protocol, int, int, int)}), and the module says which
     * sets it takes over together. {@link #SEVERAL_CRASHES_UNTESTED} by default (the host may know better, from its
     * own tests).
     */
    default String severalCrashesRefusal(final Protocol protocol, final int[] crashed, final int computeNodes,
                                         final int partitions) {
        return SEVERAL_CRASHES_UNTESTED;
    }

    /**
     * How {@code protocol} resolves a dead compute node's transactions itself, or null (the default) when it relies
     * on the host's shared recovery ({@code --crash-recover}: the crashed node's redo log rolled forward, its locks
     * freed). One hook for what the simulator's crash settings need to know (review finding 8: two hooks before,
     * {@code ownCrashRecoveryReplicas} and {@code recoversDeadComputeNodesItself}).
     */
    default OwnCrashRecovery ownCrashRecovery(final Protocol protocol) {
        return null;
    }

    /**
     * A protocol's own recovery of a dead compute node ({@link #ownCrashRecovery}).
     *
     * @param replicas     the backups per partition it needs, 0 if none: Aurogon (§4.5) resolves through its backups,
     *                     and the explorer's {@code --crashes} runs its crash with that many backups on at least
     *                     replicas + 2 memory nodes, no redo log and no shared recovery
     * @param besideShared whether it runs beside the host's shared recovery (Lotus's leases, which take the host's
     *                     log scan when one runs, {@code --crash-recover}); false: it refuses the shared one (Aurogon:
     *                     the shared one does not know its pending versions). Either way a run with a memory-node
     *                     crash, where the host's recovery is not modelled, crashes a compute node with this one only
     */
    record OwnCrashRecovery(int replicas, boolean besideShared) {
        public OwnCrashRecovery {
            if (replicas < 0) {
                throw new IllegalArgumentException("replicas " + replicas + " < 0");
            }
        }
    }

    /**
     * Whether copies the simulator's memory-node failover promotes serve {@code protocol} at once, unblocked
     * ({@code Catalog#settled}), rather than blocked until the commits in flight at the failover are settled (which
     * the simulator does not model: they stayed blocked to the end). True where the protocol's own locks keep every
     * key a commit in flight wrote until its write-back finished on the live copies or its recovery resolved it
     * (Lotus: locks on compute nodes, backups written first). False by default.
     */
    default boolean promotedCopiesServeAtOnce(final Protocol protocol) {
        return false;
    }

    /**
     * Whether compute nodes serve the copies cluster mode's memory-node failover promoted ({@code Catalog#settled}) as
     * soon as they apply the configuration, rather than once every live compute node drained it and every dead one was
     * recovered ({@code cluster.MemoryNodeFailover#settle}, the stale writer's fence). The cluster's counterpart of
     * {@link #promotedCopiesServeAtOnce}, asked apart because a module may need the fence on cluster nodes only (a dead
     * compute node's locks, which the simulator's memory-node crash never combines with). False by default.
     */
    default boolean clusterPromotedCopiesServeAtOnce(final Protocol protocol) {
        return false;
    }

    /**
     * Whether the simulator settles the copies its memory-node failover promoted ({@code Catalog#settled}) once no
     * commit begun in an older configuration is past its point of no return and unfinished
     * ({@code Catalog#inFlightBefore} is 0: finished on the serving copies, or given up), as cluster mode's
     * {@code MemoryNodeFailover} settles them once every compute node drained. Until then the promoted partitions
     * refuse reads, locks and inserts: the fence of a commit still writing the promoted copy as a backup, under a
     * lock it took on the dead primary (RCC, issue 18). False by default (the copies stay blocked to the run's end
     * unless {@link #promotedCopiesServeAtOnce}).
     */
    default boolean simulatorSettlesPromotedCopies(final Protocol protocol) {
        return false;
    }

    /**
     * How many times the seed explorer's default run ({@code Explorer.options}, 150 us virtual) its TPC-C seeds of
     * {@code protocol} run: 1 (the default) for a protocol that commits TPC-C transactions within that window. A
     * protocol whose transactions wait for epochs and sequencing (CALVIN) commits almost none there, so its explored
     * TPC-C seeds would prove nothing; it runs them this many times longer (and its crash times are drawn over that).
     */
    default int explorerTpccRunScale(final Protocol protocol) {
        return 1;
    }

    /**
     * The options of its compute nodes' peers, from the host's {@code defaults} (e.g. buckets large enough for what
     * its handlers reply); only for a run whose {@link #peerMessaging} is not NONE. The defaults unchanged by default.
     */
    default io.scythe.rrpc.RrpcOptions peerOptions(final io.scythe.rrpc.RrpcOptions defaults) {
        return defaults;
    }

    /**
     * Starts its services on one compute node (CN-to-CN handlers, per-node state such as a lock table) and says how
     * to equip each of the node's loops; called only in a run of a protocol whose {@link #peerMessaging} is not NONE.
     * None by default.
     */
    default ComputeNodeContext.LoopSetUp startComputeNode(final ComputeNodeContext node) {
        return ComputeNodeContext.LoopSetUp.NONE;
    }

    /** The lock kinds its redo records name (recovery finds them here by id); none: its commits log nothing. */
    default List<LockKind> lockKinds() {
        return List.of();
    }

    /** The words it keeps in every object's header (the same word, declared alike, when modules share a lock). */
    default List<HeaderWord> headerWords() {
        return List.of();
    }

    /**
     * The storage format of a table of {@code schema} in a run of {@code protocol} (one of its {@link #protocols}):
     * the header words its objects carry, and only those ({@link ObjectFormat}; hosts give it to the memory nodes,
     * {@code LogDb#objectFormat}). By default the words it declares ({@link #headerWords}); the simulator checks at
     * the end of a run that nothing wrote a word outside it.
     */
    default ObjectFormat objectFormat(final Protocol protocol, final TableSchema schema) {
        return new ObjectFormat(name(), headerWords().stream().map(HeaderWord::word).toList());
    }

    /** What its locks leave held in objects, for end-of-run checks. */
    default ObjectProbe probe() {
        return ObjectProbe.NONE;
    }

    /** Stages of its own (beyond {@link Stage}'s shared ones), defined in its package. */
    default List<Stage> stages() {
        return List.of();
    }

    /** Abort reasons of its own (beyond {@link AbortReason}'s shared ones), defined in its package. */
    default List<AbortReason> abortReasons() {
        return List.of();
    }

    /**
     * Whether its protocols write every backup copy of what they commit (replication: {@code onesided.Replicas},
     * through the shared write set, redo step and inserts) and are checked to leave every backup identical to its
     * primary. False by default: a cluster refuses to run such a protocol with backups rather than keep copies it
     * never writes.
     */
    default boolean replicates() {
        return false;
    }

    /** Its configuration keys (given to {@code Protocol.retryPolicy} as protocol options), with what each means. */
    default List<String> configKeys() {
        return List.of();
    }

    /**
     * Why a run of {@code protocol} may not have a memory node crash in the simulator ({@code sim --crash-mn}), or
     * null when the module handles one: its transactions treat the dead node as gone once the configuration removes
     * it, and {@link #promoted} makes a backup copy the primary. Refused by default.
     */
    default String memoryNodeCrashRefusal(final Protocol protocol) {
        return "a memory-node crash in the simulator is handled by no protocol of module " + name() + " yet (its "
            + "transactions, and what the dead node held of theirs, would need the steps cluster mode's MN failover "
            + "runs: issue 20 built them for Aurogon only)";
    }

    /**
     * How a rejoining copy's re-replication writes a key for {@code protocol} when its commits lock no object header
     * ({@link ReplicaWrite}); null (the default): the one-sided image write, refused unless the protocol is one of
     * {@code ReReplicator.HEADER_LOCKED}.
     */
    default ReplicaWrite replicaWrite(final Protocol protocol) {
        return null;
    }

    /**
     * Why cluster nodes running {@code protocol} must not fail a memory node over (cluster mode's MN failover: a
     * backup promoted when its primary's member leaves, {@code io.scythe.cluster.MemoryNodeFailover}), or null when
     * they may. Null by default: a module that replicates through the shared write-back needs no step of its own.
     * A module whose promotion needs its own step runs it on cluster nodes through
     * {@link MemoryNodeContext#onPromotion} (Aurogon); one whose step cluster nodes cannot run says so here:
     * the memory node's death is then logged as not failed over (its partitions unavailable), never served from a
     * copy promoted without that step, and {@code scythe chaos --mn-faults} refuses the protocol.
     */
    default String clusterMemoryNodeFailoverRefusal(final Protocol protocol) {
        return null;
    }

    /**
     * Virtual time a run whose transactions all finished gives the module to let go of what it holds lazily with no
     * transaction running (SELCC's cached latches, released when their idle lease ends), before the end-of-run checks
     * read the lock words; 0 (none) by default. The simulator waits it only where its drain stopped the moment the last
     * client finished (a run still busy after {@code --drain}).
     */
    default long settleNs() {
        return 0;
    }

    /**
     * Writes memory node {@code db} holds undecided in the module's own state (not in object words, which
     * {@link ObjectProbe#unsettled} looks at): e.g. Aurogon's pending versions and held replications. Read from a
     * thread other than the node's loop while it may run (a cluster node's health), so racy; 0 by default.
     */
    default long unsettledState(final io.scythe.storage.LogDb db) {
        return 0;
    }

    /**
     * Up to {@code max} of what {@link #unsettledState} counts on {@code db}, each described (table, key, timestamp):
     * which record a run left undecided. The simulator lists them for a run not quiescent after its drain. None by
     * default.
     */
    default java.util.List<String> unsettledDescribed(final io.scythe.storage.LogDb db, final int max) {
        return java.util.List.of();
    }

    /**
     * Why a run of {@code protocol} may not have a compute node and a memory node crash in one run ({@code sim
     * --crash-cn} with {@code --crash-mn}) with {@code replicas} backups a partition, or null. Refused by default.
     */
    default String combinedCrashRefusal(final Protocol protocol, final int replicas) {
        return "a compute node and a memory node crashing in one run is handled by no protocol of module " + name()
            + " (issue 20 built it for Aurogon only)";
    }

    /**
     * Why a run of {@code protocol} may not have memory node {@code memoryNode} (its index, {@code mnN}) crash in the
     * simulator, or null: {@link #memoryNodeCrashRefusal(Protocol)} unless a module refuses a particular node (one
     * its protocol depends on alone, e.g. a clock reference).
     */
    default String memoryNodeCrashRefusal(final Protocol protocol, final int memoryNode) {
        return memoryNodeCrashRefusal(protocol);
    }

    /**
     * The simulator's memory-node failover: memory node {@code node} serves, from now on, the tables (their ids on
     * it) {@code tables}, backup copies promoted because their primary died with its memory and its services' state.
     * {@code coordinators}: every live compute-node loop's runtime (the configuration change asks them, as a
     * consensus among coordinators would). Runs on {@code node}'s loop, before any compute node's catalog names the
     * promoted copies. Nothing by default.
     */
    default void promoted(final io.scythe.storage.LogDb node, final java.util.Set<Integer> tables,
                          final List<io.scythe.txn.TxnRuntime> coordinators) {
    }

    /**
     * The simulator's settling of copies it promoted ({@link #simulatorSettlesPromotedCopies}): memory node
     * {@code node}'s promoted {@code tables} (as in {@link #promoted}) are about to serve reads, locks and inserts, no
     * commit of an older configuration being in flight any more (none will write them as a backup again).
     * {@code coordinators}: every live compute-node loop's runtime. Runs on {@code node}'s loop, just before
     * {@code Catalog#settled}. Nothing by default (RCC's MVCC and SUNDIAL floor their rts here: RccModule).
     */
    default void promotedSettling(final io.scythe.storage.LogDb node, final java.util.Set<Integer> tables,
                                  final List<io.scythe.txn.TxnRuntime> coordinators) {
    }

    /**
     * Whether cluster mode's memory-node failover runs {@link #promotedSettling(io.scythe.storage.LogDb,
     * java.util.Set, long)} for {@code protocol} (issue 18): the memory node holding a promoted copy runs it once the
     * configuration is settled (every live compute node drained it, every dead one recovered), and no compute node
     * serves the copy before it ran ({@code io.scythe.cluster.MemoryNodeFailover}). False by default.
     */
    default boolean clusterSettlesPromotedCopies(final Protocol protocol) {
        return false;
    }

    /**
     * A compute-node loop's clock reading for {@link #promotedSettling(io.scythe.storage.LogDb, java.util.Set,
     * long)}, read on {@code runtime}'s loop (cluster mode gathers it from every loop of every live compute node when
     * the node drains a configuration). 0 by default.
     */
    default long settlingClock(final io.scythe.txn.TxnRuntime runtime) {
        return 0;
    }

    /**
     * A new bound on the clock of a compute node running {@code protocol}, for the node to publish ahead of its use
     * ({@link ClockBound}; cluster mode keeps it in {@code io.scythe.cluster.MemoryNodeFailover}'s map and a memory
     * node settling a promoted copy floors above the last one a compute node that is down published, issue 18 R1),
     * or null when its commits carry no timestamp of a clock {@link #settlingClock} reads (the default): then a
     * compute node that is down holds the settling until it is back. {@code nowNs} is the clock the node's loops read
     * (protocol code reads no clock of its own).
     */
    default ClockBound clockBound(final Protocol protocol, final java.util.function.LongSupplier nowNs) {
        return null;
    }

    /** Makes the loop of {@code runtime} commit no timestamp above {@code bound} ({@link #clockBound}). */
    default void useClockBound(final io.scythe.txn.TxnRuntime runtime, final ClockBound bound) {
        throw new UnsupportedOperationException(getClass().getSimpleName() + " keeps no clock to bound");
    }

    /**
     * Cluster mode's {@link #promotedSettling(io.scythe.storage.LogDb, java.util.Set, List)}: {@code clock} is the
     * largest {@link #settlingClock} of every loop of every live compute node, each read after its node applied the
     * configuration, instead of the coordinators themselves (another process's). Runs on the memory node's RPC loop.
     * Nothing by default.
     */
    default void promotedSettling(final io.scythe.storage.LogDb node, final java.util.Set<Integer> tables,
                                  final long clock) {
    }

    /**
     * {@link #promotedSettling(io.scythe.storage.LogDb, java.util.Set, long)} in steps, so that the memory node's RPC
     * loop serves its other requests between them (issue 18, review R3: a floor walking every slot of a large table
     * in one task holds the loop that long): each call of the step does the next part and says whether any is left.
     * Run on that loop, one step per task, until it says none. By default one step doing all of it.
     */
    default java.util.function.BooleanSupplier promotedSettlingSteps(final io.scythe.storage.LogDb node,
                                                                     final java.util.Set<Integer> tables,
                                                                     final long clock) {
        return () -> {
            promotedSettling(node, tables, clock);
            return false;
        };
    }

    /**
     * The module's own statistics of a finished simulator run over {@code memoryNodes} (e.g. Aurogon's read
     * deferrals, Fig. 11), reported beside the run's results as {@code sim.protocol_stats}; null (none) by default.
     */
    default io.vertx.core.json.JsonObject runStats(final List<io.scythe.storage.LogDb> memoryNodes) {
        return null;
    }
}
