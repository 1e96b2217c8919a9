package io.scythe.txn.spi;

/**
 * Whether a protocol module's compute nodes talk to each other ({@code io.scythe.rrpc.CnPeers}), and which loops call
 * which ({@link ProtocolModule#peerMessaging}). A host builds peer messaging only for a module that asks, and then
 * calls its {@link ProtocolModule#startComputeNode} on every compute node and gives every loop's runtime its
 * {@code io.scythe.txn.PeerLoops}.
 */
public enum PeerMessaging {
    /** They do not: nothing of peer messaging is built (every protocol whose compute nodes only call memory nodes). */
    NONE,
    /** Loop i of a compute node calls loop i of every other compute node (Lotus's pairing of its lock RPCs). */
    LOOP_PAIRS,
    /**
     * Any loop calls any loop of any compute node, its own node's included (SELCC's invalidations go to the loop that
     * caches the line): every pair of loops of the cluster gets a ring.
     */
    EVERY_LOOP
}
