package io.scythe.fabric.tcp;

import io.scythe.fabric.CompletionHandler;
import io.scythe.fabric.CompletionQueue;
import io.scythe.fabric.Opcode;
import io.scythe.fabric.QueuePair;
import io.scythe.fabric.WcStatus;
import org.agrona.concurrent.ManyToOneConcurrentLinkedQueue;
import org.agrona.concurrent.NanoClock;

import java.util.concurrent.atomic.AtomicInteger;

/**
 * Completion queue of the tcp provider: completions arrive on the sockets' event loops and wait in a lock-free inbox
 * for the owner's poll (on the same loop in production, so with no hop; from any thread in tests).
 */
final class TcpCompletionQueue implements CompletionQueue {
    private final Thread owner = Thread.currentThread();
    private final NanoClock nicClock;
    /** NIC-clock time the completion being delivered arrived at. */
    private long deliveringStampNs;

    /** @param nicClock the clock of this queue's NIC: a completion is stamped when its response arrives */
    TcpCompletionQueue(final NanoClock nicClock) {
        this.nicClock = nicClock;
    }

    private final ManyToOneConcurrentLinkedQueue<Entry> inbox = new ManyToOneConcurrentLinkedQueue<>();
    private final AtomicInteger outstanding = new AtomicInteger();
    private volatile Runnable wake;

    @Override
    public int poll(final long nowNs, final CompletionHandler handler, final int maxCompletions) {
        if (Thread.currentThread() != owner) {
            throw new IllegalStateException("completion queue owned by thread '" + owner.getName()
                + "' used from thread '" + Thread.currentThread().getName() + "'");
        }
        int delivered = 0;
        Entry e;
        while (delivered < maxCompletions && (e = inbox.poll()) != null) {
            delivered++;
            if (e.opcode != Opcode.RECV) {
                outstanding.decrementAndGet(); // a posted request counts until its completion is delivered
                ((TcpQueuePair) e.qp).delivered(e.retires);
            }
            deliveringStampNs = e.stampNs;
            handler.onCompletion(e.qp, e.wrId, e.opcode, e.status, e.bytes);
        }
        return delivered;
    }

    @Override
    public long completionTimestampNs() {
        return deliveringStampNs;
    }

    @Override
    public long nextEventNs() {
        return inbox.isEmpty() ? NO_EVENT : 0;
    }

    @Override
    public int outstanding() {
        return outstanding.get();
    }

    @Override
    public void wakeHandler(final Runnable wake) {
        this.wake = wake;
    }

    @Override
    public Thread owner() {
        return owner;
    }

    @Override
    public void close() {
    }

    void posted(final int count) {
        outstanding.addAndGet(count);
    }

    /**
     * A request finished; {@code report} when its completion must be delivered (signaled, or failed), which retires
     * {@code retires} requests of its queue pair (it and the unsignaled ones before it).
     */
    void finished(final TcpQueuePair qp, final long wrId, final Opcode opcode, final WcStatus status, final int bytes,
                  final boolean report, final int retires) {
        if (report) {
            inbox.offer(new Entry(qp, wrId, opcode, status, bytes, retires, nicClock.nanoTime()));
        } else {
            outstanding.decrementAndGet();
        }
        final Runnable w = wake;
        if (w != null) {
            w.run();
        }
    }

    /** A RECV landed (not counted as outstanding: receives are not posted requests). */
    void received(final QueuePair qp, final long wrId, final int bytes, final WcStatus status) {
        inbox.offer(new Entry(qp, wrId, Opcode.RECV, status, bytes, 0, nicClock.nanoTime()));
        final Runnable w = wake;
        if (w != null) {
            w.run();
        }
    }

    private record Entry(QueuePair qp, long wrId, Opcode opcode, WcStatus status, int bytes, int retires,
                         long stampNs) {
    }
}
