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

    /** Makes {@code service} findable by its type on this node (tests, probes, workloads that drive it directly). */
    <T> void publish(Class<T> type, T service);
}
