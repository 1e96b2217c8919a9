package io.scythe.txn.spi;

import io.scythe.rrpc.CnPeers;
import io.scythe.txn.TxnRuntime;

import java.util.List;
import java.util.concurrent.Executor;

/**
 * What a protocol module's compute-node services start on ({@link ProtocolModule#startComputeNode}, for a module
 * whose {@link ProtocolModule#peerMessaging} is not NONE): the node's place among the compute nodes and its CN-to-CN
 * messaging. Given once per compute node, before its loops serve; each loop's runtime has its
 * {@code TxnRuntime#peerLoops} before the module's {@link LoopSetUp} equips it.
 */
public interface ComputeNodeContext {
    /** The {@link #shared()} key of a cluster node's module health (see there). */
    String MODULE_HEALTH = "node.health";

    /** This compute node's index among {@link #computeNodes()}. */
    int index();

    /** Every compute node's name (what {@link CnPeers#call} takes), by index. */
    List<String> computeNodes();

    /** This node's CN-to-CN messaging (handlers may be added until its loops serve, and after). */
    CnPeers peers();

    /**
     * State the cluster's compute nodes share (one map per cluster, the same for every node of it): what stands for
     * services outside the nodes, such as a routing layer. The simulator puts {@code run.over} (a BooleanSupplier:
     * periodic tasks stop), {@code run.endChecks} (a {@code List<Map.Entry<Integer, Supplier<String>>>}: a module adds
     * a node's check of what it still holds once every transaction finished, by node index; a non-null answer is a
     * violation of the run), in a run that crashes and recovers a compute node {@code run.peerDied} (a {@code
     * List<Map.Entry<Integer, IntConsumer>>}: a module adds a node's listener by node index, run on that node's first
     * loop with the dead node's index once the dead node is fenced on every memory node and its redo records settled)
     * and {@code run.recoveredCommit} (a LongConsumer: the id of a dead node's transaction a live node committed on its
     * behalf, for the run's checks) and {@code run.recoveryState} (an {@code IntFunction<String>}: where the run's own
     * recovery of node i stands, "recovering", "recovered" or "failed", null if it does not recover node i; Lotus
     * waits for it instead of recovering a node itself that the run recovers); in a run that crashes
     * compute nodes without its own recovery, {@code run.recoveryObserver} (a {@code CnRecovery.Observer}) and {@code
     * run.moduleRecovered} (a {@code BiConsumer<Integer, CnRecovery.Report>}: a module's own recovery of dead node i
     * finished, having told that observer what it found; Lotus's lease recovery), so the run's checks count the
     * commits that recovery decided; and, when it routes, {@code routing.shards} (its shard count), {@code
     * routing.moveShardEveryNs} (how often it moves shards at random, 0: never) and {@code routing.moved} (a
     * BiConsumer of shard and compute node a module that moves shards itself tells). The embedded cluster puts
     * {@code run.over}, {@code routing.shards}, {@code routing.moved} and {@code clock.wall} (true: its loops' timers
     * run on wall-clock time, which a loaded machine stalls). A host that has none fails
     * clearly. On cluster nodes ({@link #separateProcesses}) a module may put {@value #MODULE_HEALTH} there: a
     * {@code Supplier<Map<String, Object>>} of what the node's health shows of it (what it holds on the node).
     */
    default java.util.Map<String, Object> shared() {
        throw new UnsupportedOperationException("this host shares no state between its compute nodes");
    }

    /**
     * Whether each compute node runs in a process of its own (cluster nodes): then {@link #shared()} holds this node's
     * state only, and a module must not read another node's state from it (Lotus's in-memory leases and latency
     * metrics); membership and recovery are the host's ({@link #onPeerRecovered}). {@code false}: every node of the
     * cluster is in this process (the simulator, the embedded cluster).
     */
    default boolean separateProcesses() {
        return false;
    }

    /**
     * Registers what runs once a dead incarnation of another compute node has been recovered (the host finished its
     * redo records, so what it committed is in memory): a module frees what that incarnation held on this node. With
     * {@link #awaitsOwnRecovery}, it runs once more, naming this node, when every earlier incarnation of this node is
     * recovered. Only hosts whose nodes die apart from the others call it (cluster nodes); any thread.
     */
    default void onPeerRecovered(final PeerRecovered listener) {
    }

    /**
     * Registers what runs each time one memory node has released what a dead incarnation of another compute node held
     * there (the modules' dead-node steps, {@link MemoryNodeContext#onDeadNode}, ran on {@code memoryNode} for it),
     * before the whole recovery is over ({@link #onPeerRecovered}): per memory node, as soon as its step ran. Only
     * hosts whose nodes die apart from the others call it (cluster nodes: the memory node publishes it); any thread;
     * told again when a recovery is run again, and possibly after {@link #onPeerRecovered} of the same incarnation.
     */
    default void onPeerReleased(final PeerReleased listener) {
    }

    /**
     * The key of {@link #shared()} under which a cluster host puts its {@link RecoveryRecord} (read by
     * {@link #recoveryRecord}).
     */
    String RECOVERY_RECORD = "recovery.record";

    /**
     * The host's record of finished recoveries, for a module that missed the news of one
     * ({@link #onPeerReleased}, {@link #onPeerRecovered}: messages and listeners, told at most once): null when the
     * host keeps none (every node in this process: the simulator, the embedded cluster).
     */
    default RecoveryRecord recoveryRecord() {
        return null;
    }

    /**
     * What a cluster host's record says of dead compute-node incarnations whose recovery finished (every memory
     * node released them): Hazelcast's {@code scythe.recovered}, an in-memory map (it survives as far as its backups do,
     * not durable), written before a recovery's owed entry is removed and
     * never removed. Each question blocks nothing (answered on a worker); any thread.
     */
    interface RecoveryRecord {
        /** Whether the recovery of {@code incarnation} (a fabric identity, {@code node.eEPOCH}) finished. */
        io.vertx.core.Future<Boolean> recovered(String incarnation);

        /**
         * The incarnation whose transaction ids have node bits {@code idPrefix} ({@code RecoveryRpc.NODE_ID_MASK}) if
         * its recovery finished, else null.
         */
        io.vertx.core.Future<String> recoveredWithPrefix(long idPrefix);

        /**
         * Whether compute node {@code node} (a configured name) holds nothing any more: never registered, or its
         * current incarnation recorded recovered (fenced on every memory node, then recovered). Its member leaving or
         * its calls failing prove neither: a paused node resumes (issue 21 review: SELCC's recovery barrier drops a
         * survivor from its wait only on this). A host that cannot tell answers false.
         */
        default io.vertx.core.Future<Boolean> recoveredOrNeverRegistered(final String node) {
            return io.vertx.core.Future.succeededFuture(false);
        }
    }

    /**
     * One memory node released a dead incarnation of a compute node: {@code incarnation} is its fabric identity (what
     * its peers' requests name as their client), {@code idPrefixes} its transaction-id prefixes
     * ({@code RecoveryRpc.NODE_ID_MASK}), {@code memoryNode} the memory node's fabric name (the {@code node} of the
     * catalog's partitions it holds). Returns what the module did (for the host's log), or {@code null}.
     */
    @FunctionalInterface
    interface PeerReleased {
        String released(String incarnation, long[] idPrefixes, String memoryNode);
    }

    /**
     * Whether earlier incarnations of this node were still owed recovery when it started (a restarted cluster node):
     * until {@link #onPeerRecovered} names this node, it must serve nothing they may have held, since their commits
     * may not be in memory yet (Lotus: its shards' locks, lotus.md §2.7 "serves only after the drain").
     */
    default boolean awaitsOwnRecovery() {
        return false;
    }

    /**
     * With {@link #awaitsOwnRecovery}: the earlier incarnations of this node it awaits, by fabric identity
     * ({@code node.eEPOCH}, what its peers' requests named as their client) to transaction-id prefix
     * ({@code RecoveryRpc.NODE_ID_MASK}): those still owed recovery when it started and those recovered lately. A
     * module whose new incarnation reuses what the old ones held (SELCC's participant numbers) asks its live peers
     * to acknowledge each before it serves (issue 21: the recovery barrier). Empty by default.
     */
    default java.util.Map<String, Long> earlierIncarnations() {
        return java.util.Map.of();
    }

    /**
     * A dead incarnation of compute node {@code name}, recovered: its transaction ids are those with
     * {@code (id & mask) == prefix}. Returns what the module did (for the host's log), or {@code null}.
     */
    @FunctionalInterface
    interface PeerRecovered {
        String recovered(String name, long prefix, long mask);

        /**
         * The same, naming the recovered incarnation ({@code node.eEPOCH}; what the host calls): a module that decides
         * per incarnation overrides it (a node's restarted incarnation is never confused with the dead one).
         */
        default String recovered(final String incarnation, final String name, final long prefix, final long mask) {
            return recovered(name, prefix, mask);
        }
    }

    /** How a module equips each loop of a compute node, once the loop's runtime exists. */
    @FunctionalInterface
    interface LoopSetUp {
        LoopSetUp NONE = (loop, runtime, deferred) -> { };

        /**
         * Equips loop {@code loop} (its index on the node), e.g. with a runtime extension; {@code deferred} runs a task
         * later on that loop, after what runs now (a batch's flush).
         */
        void startLoop(int loop, TxnRuntime runtime, Executor deferred);
    }
}
