package io.scythe.txn.spi;

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
 * <p>Storage format: objects have one header ({@code ObjectLayout}, 64 bytes) on every table; its shared words are
 * the version, the chain, the value length, flags and incarnation, and each module declares the protocol words it
 * keeps there ({@link #headerWords()}; the registry refuses overlaps). Sizing the header per table, so that a module
 * declaring fewer words gets a smaller one, is the storage's to do.
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
     * Whether its compute nodes talk to each other ({@code io.scythe.rrpc.CnPeers}): the runtime then gives every
     * compute-node loop its peers ({@code TxnRuntime#peerLoops}) and calls {@link #servePeers} on each node's. False
     * by default: nothing of it is set up.
     */
    default boolean usesPeers() {
        return false;
    }

    /**
     * The options of its compute nodes' peers, from the host's {@code defaults} (e.g. buckets large enough for what
     * its handlers reply); only if usesPeers. The defaults unchanged by default.
     */
    default io.scythe.rrpc.RrpcOptions peerOptions(final io.scythe.rrpc.RrpcOptions defaults) {
        return defaults;
    }

    /** Registers its CN-to-CN handlers on one compute node's peers (before any loop serves); only if usesPeers. */
    default void servePeers(final io.scythe.rrpc.CnPeers peers) {
    }

    /**
     * Whether its transactions call other compute nodes (Lotus's hook; SELCC's is {@link #usesPeers}: two shapes of
     * one need, to be folded into one) ({@link io.scythe.rrpc.CnPeers}): hosts then give every compute
     * node peer messaging and call {@link #startComputeNode}. False by default (no peer messaging is built for it).
     */
    default boolean usesComputeNodePeers() {
        return false;
    }

    /**
     * Starts its services on one compute node (CN-to-CN handlers, per-node state such as a lock table) and says how
     * to equip each of the node's loops; only for a module that {@link #usesComputeNodePeers}. None by default.
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
}
