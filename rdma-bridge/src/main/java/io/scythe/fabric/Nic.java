package io.scythe.fabric;

import io.vertx.core.Future;
import org.agrona.concurrent.NanoClock;

import java.util.Collection;

/**
 * A node's attachment to the fabric (its RDMA NIC, virtual or real): the memory it registers for peers, the
 * completion queues its threads poll, and its queue pairs to other nodes. In the local provider one JVM holds many
 * NICs (an embedded cluster); elsewhere a process usually holds one.
 */
public interface Nic extends AutoCloseable {
    String node();

    Fabric fabric();

    /**
     * This node's NIC clock: the hardware clock of its RDMA NIC, in which its completions are timestamped
     * ({@link CompletionQueue#completionTimestampNs()}) and which peers read one-sided ({@link NicClockWord}). It
     * deviates from true time as {@link FabricOptions#clocks()} says for this node.
     *
     * @throws FabricException when this provider cannot read a NIC clock (the message says what it would need)
     */
    default NanoClock nicClock() {
        throw new FabricException(getClass().getSimpleName() + " of node " + node() + " has no NIC clock");
    }

    /**
     * This node's host clock: what its CPUs read (the fabric's clock, virtual in the simulator), deviating from true
     * time as {@link FabricOptions#clocks()} says for this node.
     */
    default NanoClock hostClock() {
        throw new FabricException(getClass().getSimpleName() + " of node " + node() + " has no host clock");
    }

    /** {@link #nicClock()} read now. */
    default long nicClockNs() {
        return nicClock().nanoTime();
    }

    /** {@link #hostClock()} read now. */
    default long hostClockNs() {
        return hostClock().nanoTime();
    }

    /**
     * Registers {@code length} bytes of this node's memory (zeroed) for remote access.
     *
     * @throws FabricException if the name is taken, the length is not positive or above 2 GiB, or device memory is
     *     exhausted
     */
    MemoryRegion register(String name, long length, MemoryKind kind);

    /** A region of this node by name, or {@code null}. */
    MemoryRegion region(String name);

    Collection<MemoryRegion> regions();

    /** Deregisters a region: every later verb that targets it fails with {@link WcStatus#REMOTE_ACCESS_ERROR}. */
    void deregister(MemoryRegion region);

    /** A completion queue owned by the calling thread: only that thread may poll it and post on its QPs. */
    CompletionQueue createCompletionQueue(int capacity);

    /**
     * Connects a queue pair from this node to {@code remoteNode}; this end reports to {@code cq}. The remote end is
     * offered to the remote NIC's {@link #acceptor(QpAcceptor) acceptor}.
     *
     * <p>Fails with a {@link FabricException} when the remote node is unknown or unreachable, or has fenced this one.
     */
    Future<QueuePair> connect(String remoteNode, CompletionQueue cq, QpOptions options);

    /**
     * Decides which completion queue the remote ends of incoming connections report to. Without an acceptor, or when
     * it returns {@code null}, an incoming end is passive: it serves the peer's one-sided verbs but cannot post.
     */
    void acceptor(QpAcceptor acceptor);

    /**
     * Fences {@code peerNode}: revokes every queue pair between this node and it, in both directions, and refuses
     * its new connections until {@link #readmit} (it must rejoin under a new identity or epoch).
     *
     * @return the number of queue pairs revoked
     */
    int fence(String peerNode);

    /**
     * Completes once no verb {@code peerNode} started against this node's memory before the {@link #fence} can still
     * land: what recovery waits for before it reads or repairs what the fenced node left. Providers whose responder
     * executes every verb itself after the fence (a real NIC's queue pair in the error state) have nothing to wait
     * for; where the fenced node's own process writes into this node's memory (shm), a verb already past its
     * revocation check is waited out.
     */
    default Future<Void> fenceBarrier(final String peerNode) {
        return Future.succeededFuture();
    }

    /** Whether {@code peerNode} is fenced by this node (and not readmitted since). */
    boolean isFenced(String peerNode);

    /** Lets a fenced node connect again (its old queue pairs stay revoked). */
    void readmit(String peerNode);

    /** Queue-pair ends of this node that are not closed. */
    Collection<QueuePair> queuePairs();

    /** Deregisters every region and closes every queue pair of this node. */
    @Override
    void close();

    /** Decides how this node takes the ends of incoming connections; may be called on any thread. */
    interface QpAcceptor {
        /** @return the completion queue the end of a new connection from {@code peerNode} reports to, or
         *     {@code null} to keep that end passive */
        CompletionQueue completionQueueFor(String peerNode);

        /** Called once the incoming end exists (before the connecting side sees its own end). */
        default void accepted(final QueuePair incoming) {
        }
    }
}
