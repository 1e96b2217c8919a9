package io.scythe.txn.spi;

import io.scythe.hotspot.Watermarks;
import io.scythe.rrpc.RpcServer;
import io.scythe.storage.LogDb;
import io.scythe.storage.remote.LogDbService;

/**
 * What a protocol module's memory-node services start on: the node's LogDB, its RPC server (with the LogDB service
 * registered), configuration, and the hooks into the node's CN-failure recovery. Given to
 * {@link ProtocolModule#startMemoryNode}, on the thread that sets the node up (before its server starts).
 */
public interface MemoryNodeContext {
    LogDb db();

    RpcServer server();

    LogDbService logDb();

    /** The heat watermarks the node's lock services apply. */
    Watermarks watermarks();

    /** When a dead compute node's locks are released, relative to abandoning the inserts it left locked. */
    enum Phase {
        /** Before: e.g. cancel the queue tickets it holds or waits for. */
        BEFORE_INSERTS,
        /** After (an insert's own lock word must still show its owner when it is abandoned): e.g. free CAS words. */
        AFTER_INSERTS
    }

    /** One step of releasing what a dead compute node held on this memory node. */
    @FunctionalInterface
    interface DeadNodeStep {
        /**
         * Releases what {@code deadNode} (fenced: nothing of it can land any more) held of this module's locks;
         * {@code idPrefixes} are its transaction-id prefixes ({@code RecoveryRpc.NODE_ID_MASK}).
         *
         * @return how many locks it released
         */
        int release(String deadNode, long[] idPrefixes);
    }

    /**
     * Adds a step to the release of a dead compute node on this memory node, run in {@code phase}; its count is
     * reported as {@code counted} (e.g. {@code tickets}).
     */
    void onDeadNode(Phase phase, String counted, DeadNodeStep step);

    /**
     * The loop numbers ({@code ComputeNodePeers#loopNumber}) the compute node of transaction-id prefix
     * {@code idPrefix} ({@code RecoveryRpc.NODE_ID_MASK}) gave its loops, on hosts that number them by configuration
     * (cluster nodes: its index in the configured compute nodes and the loop count its registry entry gives); empty
     * when this host does not know them (the simulator and the embedded cluster, whose modules see every compute node
     * in this process, and a prefix of no known compute node).
     */
    default int[] loopNumbers(final long idPrefix) {
        return new int[0];
    }

    /** A module's part in cluster mode's memory-node failover on this node ({@link #onPromotion}). */
    interface Promotion {
        /**
         * This node's copies {@code tables} (table ids here) serve as primaries of their partitions from now on: a
         * configuration promoted them (their primary died) and every live compute node applied it. Runs on this node's
         * RPC loop, before this node serves them. {@code protocol}: the protocol the cluster runs.
         *
         * @return null, or why the module refuses to promote them (they then stay unserved, said in the node's log)
         */
        String promote(String protocol, java.util.Set<Integer> tables);

        /**
         * This node is a replacement process rejoining a cluster: its copies come back as backups, and none serves
         * as a primary until a configuration promotes it. Called before it serves, and again (on its RPC loop) when
         * it merges back after a split and asks to rejoin again: a module raises what it was born at, never lowers
         * it (transactions may have committed meanwhile without it). {@code protocol}: the
         * protocol the cluster runs (a module whose protocol it is not serves nothing, and must not refuse it).
         */
        default void replacement(String protocol) {
        }

        /**
         * This replacement process rejoined: a configuration lists none of its copies as rejoining any more (their
         * re-replication finished). Called at most once, after {@link #replacement}, on the host's configuration
         * watcher (any thread).
         */
        default void rejoined() {
        }
    }

    /**
     * Adds {@code promotion} to what cluster mode's memory-node failover runs on this node. Nothing on hosts that run
     * no such failover (the simulator promotes through {@link ProtocolModule#promoted}).
     */
    default void onPromotion(final Promotion promotion) {
    }

    /** Makes {@code service} findable by its type on this node (tests, probes, workloads that drive it directly). */
    <T> void publish(Class<T> type, T service);
}
