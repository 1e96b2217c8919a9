package io.scythe.sim;

import io.scythe.rrpc.RpcServer;

import java.util.function.LongUnaryOperator;

/**
 * The participant cores of a co-located server ({@code --colocate}): each of the server's loops polls a queue of its
 * own, as each Aurogon thread polls the RDMA QPs connected to it (FAST'22 §4.2: requests reordered by "the network
 * queuing on transmitting links", uneven queues included). A ring opened by a coordinator's loop {@code j} belongs to
 * queue {@code j mod queues}, the thread-to-thread QP mesh of RDMA transaction systems (FaSST, DrTM+H) on which the
 * paper builds: a coordinator thread reaches each server through the one thread its QPs connect to. A queue's core
 * serves its requests one after another at {@code requestNs} each; the queues of a server run in parallel, so one
 * queue's backlog does not delay another's (a single first-come queue for the server would, and would also keep
 * requests in the order they arrived, hiding the reordering Aurogon's deferral exists for).
 */
final class QueueCores implements RpcServer.RingQueues {
    private final long[] busyUntilNs;
    /** The cost of one request taken at a time (a slowed node's factor applied). */
    private final LongUnaryOperator requestNsAt;
    private long busyNs;

    QueueCores(final int queues, final LongUnaryOperator requestNsAt) {
        if (queues < 1) {
            throw new IllegalArgumentException("a server needs at least one participant queue, not " + queues);
        }
        this.busyUntilNs = new long[queues];
        this.requestNsAt = requestNsAt;
    }

    int queues() {
        return busyUntilNs.length;
    }

    @Override
    public int queueOf(final String client, final int loop) {
        return Math.floorMod(loop, busyUntilNs.length);
    }

    @Override
    public long freeAtNs(final int queue, final long nowNs) {
        return busyUntilNs[queue];
    }

    @Override
    public void served(final int queue, final long nowNs, final long requests) {
        final long ns = requests * requestNsAt.applyAsLong(nowNs);
        busyUntilNs[queue] = Math.max(busyUntilNs[queue], nowNs) + ns;
        busyNs += ns;
    }

    /** CPU time the queues' cores spent serving requests, summed over the cores. */
    long busyNs() {
        return busyNs;
    }
}
