package io.scythe.txn.rcc.calvin;

import io.scythe.txn.Protocol;
import io.scythe.txn.spi.ComputeNodeContext;
import io.scythe.txn.spi.ProtocolModule;

import java.util.List;

/**
 * RCC's CALVIN as its own module ({@code rcc-calvin}): CALVIN keeps no per-tuple metadata (Fig. 3) and needs its
 * compute nodes wired to each other, so it is apart from {@link io.scythe.txn.rcc.RccModule}'s five shared-everything
 * protocols. Each compute node gets a {@link CalvinNode}. Asked for by name only; in the simulator, the embedded
 * cluster ({@code scythe bench}) and on cluster nodes, through one compute-node fault per run
 * ({@link #clusterComputeNodeFaultLimit}).
 */
public final class CalvinModule implements ProtocolModule {
    public static final CalvinProtocol CALVIN = CalvinProtocol.base();
    /**
     * The key, in a run's compute-node shared map, of the count (an {@code AtomicLong}) of executors' deaths a dead
     * owner's successor was told of after it rebuilt the take-over's input ({@code CalvinNode#executorDiedDuringTakeover}
     * with its rebuilt parts: a node dying after it contributed); absent until one is.
     */
    public static final String DIED_AFTER_REBUILD = "calvin.diedAfterRebuild";
    /**
     * Test hook: with {@code Boolean.TRUE} at this key of a run's compute-node shared map, {@code
     * CalvinNode#deadDecidedAfterRebuild} counts nothing as known here nor below the frontier, so it fires at the first
     * decision of the dead executor writing the dead owner's partitions (tests check that its firing is a violation
     * of the run, {@code run.violations}, not only a loop given up).
     */
    public static final String FORCE_DEAD_DECIDED_CHECK = "calvin.test.forceDeadDecidedCheck";
    /**
     * Test hook: with a map at this key of a run's compute-node shared map (transaction id to a set of places), each
     * node's scheduler adds where in the total order it queued a part of a transaction ({@code orderTs(epoch, sender,
     * 0)}): one total order means one place per transaction, whichever nodes queued parts of it.
     */
    public static final String SCHEDULED_AT = "calvin.scheduledAt";
    /**
     * Test hook: with an {@code AtomicInteger} n at this key of a run's compute-node shared map, a restarted node drops
     * the first n answers to its {@code JOIN}s (across the nodes it asks) and asks again, as when an answer is lost
     * (the call timed out): a survivor must answer a repeated JOIN as it did the first.
     */
    public static final String LOSE_JOIN_ANSWERS = "calvin.test.loseJoinAnswers";
    /**
     * {@code sim.paths_taken} (issue 18, memory-node failover): a participant's read met a memory node the
     * configuration removed and was done again where the key serves now ({@code CalvinNode#readRecord}).
     */
    public static final String READ_AGAIN_ON_FAILOVER = "calvin_read_again_on_failover";
    /** {@code sim.paths_taken}: an active participant's write-back done again on the serving copies ({@code CalvinNode#installAgain}). */
    public static final String WRITE_BACK_AGAIN_ON_FAILOVER = "calvin_write_back_again_on_failover";
    /** {@code sim.paths_taken}: an input-log record's WRITE failed on a removed copy, counted for nothing ({@code CalvinInputLog#writeAt}). */
    public static final String LOG_COPY_ON_REMOVED_NODE = "calvin_log_copy_on_removed_node";
    /** The key, in a run's compute-node shared map, of the epoch each restarted node rejoined at (a map by node). */
    public static final String JOINED_AT = "calvin.joinedAt";
    /**
     * OLLP's restart: a record a transaction's reconnaissance read had changed when its sequenced run got its locks
     * (nothing written; retried, reconnoitred again).
     */
    public static final io.scythe.txn.AbortReason OLLP_RESTART = io.scythe.txn.AbortReason.define("ollp-restart",
        950);

    @Override
    public String name() {
        return "rcc-calvin";
    }

    @Override
    public List<Protocol> protocols() {
        return List.of(CALVIN);
    }

    @Override
    public boolean listed() {
        return false;
    }

    @Override
    public io.scythe.txn.spi.PeerMessaging peerMessaging(final io.scythe.txn.Protocol protocol) {
        return io.scythe.txn.spi.PeerMessaging.LOOP_PAIRS; // sequencers and schedulers talk loop i to loop i
    }

    /**
     * What cluster nodes lack to survive compute-node faults under CALVIN (issue 18), named where one is refused: one
     * death is taken over as in the simulator (the death word from {@code ComputeNodeContext#onPeerRecovered}, the
     * dead incarnation's input log found on the memory nodes by its name), and the dead node, restarted, rejoins the
     * total order ({@code CalvinNode#join} once the host says its old incarnation is recovered); what chaos brings
     * beyond that is not.
     */
    static final String CLUSTER_DEATH_MISSING = "every node waits for every node's batch of each epoch; on cluster "
        + "nodes survivors take one dead node's epochs, decisions and lock queues over (the death word from "
        + "onPeerRecovered, its input log found on the memory nodes by its incarnation's name), and its restarted "
        + "incarnation rejoins the total order at an epoch every survivor agrees on (JOIN), its old partitions staying "
        + "with their successor. Missing: a second compute-node death in a run: the take-over of a rejoined "
        + "incarnation, of a dead owner's successor, or of a second owner is not built and gives the survivors up "
        + "naming it; so is a rejoin while another node is dead (several compute nodes killed together) (issue 18)";

    /**
     * Runs on cluster nodes: the CN peers work across processes (the one-sided form's inboxes are registered regions
     * another process WRITEs, found by one RPC; the RPC form's calls), the input log is opened on the memory nodes as in
     * the simulator, and each node learns nothing of another's state but through its messages. One compute node's
     * death is taken over there, and the node restarted rejoins; a second fault in the run is not survived
     * ({@link #clusterComputeNodeFaultLimit}).
     */
    @Override
    public String clusterRefusal(final Protocol protocol) {
        return null;
    }

    /**
     * None: {@code scythe chaos} runs, with one compute-node fault per run ({@link #clusterComputeNodeFaultLimit}).
     * With {@code log=off} no death is survived (as {@link #crashRefusal}).
     */
    @Override
    public String clusterComputeNodeFaultRefusal(final Protocol protocol) {
        final String noLog = crashRefusal(protocol);
        return noLog == null ? null : "a compute node's death is not survived: " + noLog;
    }

    /** One: a killed node taken over and, restarted, rejoining; a second death is not survived ({@link #CLUSTER_DEATH_MISSING}). */
    @Override
    public int clusterComputeNodeFaultLimit(final Protocol protocol) {
        return 1;
    }

    @Override
    public String clusterComputeNodeFaultLimitReason(final Protocol protocol) {
        return CLUSTER_DEATH_MISSING;
    }

    /**
     * True: a node taken over has left the total order for good (the survivors run its partitions), so its restart
     * JOINs however late it comes; started as an original member after the host's grace scope, it waited for inputs
     * nobody would send it.
     */
    @Override
    public boolean restartAlwaysRejoins(final Protocol protocol) {
        return true;
    }

    /**
     * Where the host does not say which node crashes: refused with {@code log=off} (see the other overload); else
     * any compute node may crash (issue 18 parts 2-5).
     */
    @Override
    public String crashRefusal(final Protocol protocol) {
        return crashRefusal(protocol, 0, 2, 1);
    }

    /**
     * 4: in the explorer's 150 us a TPC-C transaction under CALVIN is rarely over (one client alone: p50 78 us, a
     * StockLevel 440 us; its 9 clients over 3 nodes: p50 387 us, as NewOrder and Payment by name are sequenced twice
     * (OLLP) and a transaction holds the warehouse and district locks across its executor's round trip, decision
     * record and write-back), so 100 crash seeds committed 15 (RPC: 8) in the window. At 600 us: 75 over 10 seeds.
     */
    @Override
    public int explorerTpccRunScale(final Protocol protocol) {
        return 4;
    }

    /**
     * With {@code log=off}: no input log says what the dead node's sequencer dispatched. Else none: survivors complete
     * a dead node's epochs from its input log, decide its transactions from its decision records (issue 18 parts 2-4),
     * and a dead owner's successor takes over its lock queues, the other survivors routing to it (part 5; one death per
     * run, and any number of deaths of nodes that only sequence and execute, before, during or after it: a second
     * death of a node scheduling partitions gives the run up, naming it, {@link Takeover#secondDeathRefusal}).
     */
    @Override
    public String crashRefusal(final Protocol protocol, final int crashed, final int computeNodes,
                               final int partitions) {
        if (protocol instanceof CalvinProtocol c && !c.inputLog()) {
            return "with log=off no input log says what the dead node's sequencer dispatched, so survivors cannot "
                + "agree on its epochs (issue 18)";
        }
        return null;
    }

    /**
     * Several nodes crashing at one time: each as it would alone, and at most one that schedules partitions (an owner,
     * or a dead owner's successor, {@link Takeover#secondDeathRefusal}) in any order the deaths may be told in: no
     * owner with another owner, nor with a node it could hand its partitions to (one between it and its successor
     * among the live nodes, in index order).
     */
    @Override
    public String severalCrashesRefusal(final Protocol protocol, final int[] crashed, final int computeNodes,
                                        final int partitions) {
        final java.util.Set<Integer> set = new java.util.TreeSet<>();
        for (final int c : crashed) {
            final String alone = crashRefusal(protocol, c, computeNodes, partitions);
            if (alone != null) {
                return alone;
            }
            set.add(c);
        }
        final int owners = Math.min(partitions, computeNodes); // nodes 0 to owners - 1 own a partition
        if (set.stream().filter(c -> c < owners).count() > 1) {
            return "several of them own partitions: the take-over of a second node scheduling partitions (an owner, "
                + "or a dead owner's successor) is not built (issue 18 part 5)";
        }
        for (final int o : set) {
            if (o >= owners) {
                continue; // owns no partition
            }
            // Its successor is the next live node in index order: if the next one crashed too, it may be told dead only
            // after it took the partitions over (any later crashed node in a row is reached only through it).
            final int next = (o + 1) % computeNodes;
            if (next != o && set.contains(next)) {
                return "cn" + o + " owns partitions and cn" + next + " may be told dead after taking them over: "
                    + "the take-over of a second node scheduling partitions (an owner, or a dead owner's "
                    + "successor) is not built (issue 18 part 5)";
            }
        }
        return null;
    }

    /**
     * The simulator restarts a crashed node ({@code --crash-restart-after}): its new incarnation rejoins the total order
     * ({@code CalvinNode#join}: every survivor took its old one over, agrees on its first epoch and drains its old
     * rings), owns no partition (its old ones stay with their successor) and sequences its clients' transactions from
     * its first epoch on. With {@code log=off} no crash is survived at all ({@link #crashRefusal}). Cluster nodes
     * do the same: the restarted process joins once the host tells it its old incarnation is recovered; one fault per
     * run ({@link #clusterComputeNodeFaultLimit}).
     */
    @Override
    public String restartRefusal(final Protocol protocol) {
        return crashRefusal(protocol);
    }

    @Override
    public ComputeNodeContext.LoopSetUp startComputeNode(final ComputeNodeContext context) {
        final CalvinNode node = new CalvinNode(context);
        return node::startLoop;
    }

    @Override
    public List<io.scythe.txn.AbortReason> abortReasons() {
        return List.of(OLLP_RESTART);
    }

    @Override
    public List<String> configKeys() {
        return List.of("primitive=onesided|rpc, epoch=<n>ns|us|ms (default 10us) and log=on|off (the input log "
            + "under --redo-log; default on), after 'rcc-calvin:', joined by '+'");
    }

    /**
     * Handled in the simulator, every form (issue 18): a participant's read that meets the dead memory node reads the
     * key again where it serves once the configuration removes it, an active participant's write-back that failed so
     * is done again on the serving copies ({@code CalvinNode#installAgain}: what landed on a removed node counts for
     * nothing, as for the other RCC protocols), and an input-log or decision record is durable once every serving copy
     * has it ({@code CalvinInputLog#writeAt}). Nothing else of CALVIN's lives on memory nodes: its locks, sequencer and
     * scheduler are on the compute nodes, so a memory node's death leaves no sequencer or scheduler state to recover.
     */
    @Override
    public String memoryNodeCrashRefusal(final Protocol protocol) {
        return null;
    }

    /**
     * True: CALVIN's locks are its schedulers' on the compute nodes, held by an active participant until its write-back
     * is over on every serving copy (backups first, then primaries; again in the new configuration after a failover:
     * {@code CalvinNode#installAgain}), so no commit in flight can write a promoted copy under a later holder of the
     * key: there is no stale writer to fence, and the promoted copies serve at once (as Lotus's, whose locks are on
     * compute nodes too). With the blocking settle ({@code simulatorSettlesPromotedCopies}) they would wait for
     * {@code Catalog#inFlightBefore}, which CALVIN's write-backs do not count in.
     */
    @Override
    public boolean promotedCopiesServeAtOnce(final Protocol protocol) {
        return true;
    }

    /**
     * True (issue 18): CALVIN's write-back writes every backup copy before the primary ({@code CalvinNode#install}), so
     * cluster nodes keep backups for it ({@code NodeConfig#backups}: 2, or one per other memory node). It said false
     * (the default) until its cluster failover was built, so cluster nodes ran CALVIN with no backup at all.
     */
    @Override
    public boolean replicates() {
        return true;
    }

    /**
     * True on cluster nodes too (issue 18): {@link #promotedCopiesServeAtOnce}'s reason holds there, and a dead compute
     * node holds no lock on a memory node either: its schedulers' locks died with it and its successor rebuilds them
     * ({@code Takeover}), installing the dead node's logged decisions on the copies serving then. Blocked until every
     * compute node drained, a promoted partition would fail CALVIN's reads ({@code CalvinNode#readRecord} takes a
     * settling abort for a failed read, which fails its participant and gives the loop up), where the other protocols
     * abort and retry. No {@code clusterMemoryNodeFailoverRefusal} any more: the simulator's steps (reads and
     * write-backs done again where the keys serve, input-log and decision records durable on the serving copies) are
     * the catalog's and the runtime's, which cluster nodes share; {@code CalvinClusterProcessTest} kills a memory node.
     */
    @Override
    public boolean clusterPromotedCopiesServeAtOnce(final Protocol protocol) {
        return true;
    }
}
