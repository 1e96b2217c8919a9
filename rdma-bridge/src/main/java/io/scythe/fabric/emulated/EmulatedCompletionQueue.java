package io.scythe.fabric.emulated;

import io.scythe.fabric.CompletionHandler;
import io.scythe.fabric.CompletionQueue;
import io.scythe.fabric.DriftingClock;
import io.scythe.fabric.Opcode;
import io.scythe.fabric.WcStatus;
import org.agrona.concurrent.ManyToOneConcurrentLinkedQueue;

import java.util.Arrays;

/**
 * Completion queue of the emulated providers. Polling it drives its queue pairs' virtual NICs: each active QP
 * executes the requests whose modelled execution time has passed and delivers the completions whose modelled
 * completion time has passed. RECV completions, produced on the sender's thread, arrive through a lock-free inbox.
 */
public final class EmulatedCompletionQueue implements CompletionQueue {
    private final Thread owner;
    private final int capacity;
    private final ManyToOneConcurrentLinkedQueue<RecvCompletion> inbox = new ManyToOneConcurrentLinkedQueue<>();
    /** Shared QPs that other threads posted on, to be made active by the owner. */
    private final ManyToOneConcurrentLinkedQueue<EmulatedQueuePair> activations =
        new ManyToOneConcurrentLinkedQueue<>();
    private final java.util.concurrent.atomic.AtomicInteger postedElsewhere =
        new java.util.concurrent.atomic.AtomicInteger();
    private EmulatedQueuePair[] active = new EmulatedQueuePair[8];
    /** Ends whose receive queues must be polled (their senders are in other processes). */
    private final java.util.ArrayList<EmulatedQueuePair> receiving = new java.util.ArrayList<>();
    private int activeCount;
    private int outstanding;
    private long nextEventNs = NO_EVENT;
    private volatile Runnable wake;
    private boolean closed;
    private final DriftingClock nicClock;
    /** True time the completion being delivered completed at; stamped on the NIC clock only when asked for. */
    private long completingAtNs;

    /** @param nicClock the clock of the NIC this queue belongs to, in which its completions are timestamped */
    public EmulatedCompletionQueue(final int capacity, final DriftingClock nicClock) {
        if (capacity <= 0) {
            throw new IllegalArgumentException("completion queue capacity=" + capacity + " must be positive");
        }
        this.capacity = capacity;
        this.nicClock = nicClock;
        this.owner = Thread.currentThread();
    }

    @Override
    public int poll(final long nowNs, final CompletionHandler handler, final int maxCompletions) {
        checkOwner();
        EmulatedQueuePair activated;
        while ((activated = activations.poll()) != null) {
            activate(activated);
        }
        outstanding += postedElsewhere.getAndSet(0);
        int work = 0;
        int budget = Math.min(maxCompletions, capacity);
        RecvCompletion recv;
        completingAtNs = nowNs; // receives are stamped when delivered
        while (budget > 0 && (recv = inbox.poll()) != null) {
            handler.onCompletion(recv.qp, recv.wrId, Opcode.RECV, recv.status, recv.length);
            budget--;
            work++;
        }
        for (int r = receiving.size() - 1; r >= 0; r--) {
            final EmulatedQueuePair qp = receiving.get(r);
            final int got = qp.drainReceives(handler, budget);
            budget -= got;
            work += got;
            if (!qp.receiving()) {
                receiving.remove(r);
            }
        }
        long next = receiving.isEmpty() ? NO_EVENT : nowNs;
        int i = 0;
        while (i < activeCount) {
            final EmulatedQueuePair qp = active[i];
            final int before = work;
            work += qp.progress(nowNs, handler, budget);
            budget -= qp.lastDelivered();
            if (qp.outstanding() == 0) {
                qp.active = false;
                active[i] = active[--activeCount];
                active[activeCount] = null;
                continue;
            }
            next = Math.min(next, qp.nextEventNs());
            if (budget <= 0 && work > before) {
                next = nowNs;
            }
            i++;
        }
        nextEventNs = inbox.isEmpty() && activations.isEmpty() ? next : nowNs;
        return work;
    }

    @Override
    public long completionTimestampNs() {
        return nicClock.at(completingAtNs);
    }

    /** The completion about to be delivered completed at true time {@code trueNs}. Owner thread only. */
    void completing(final long trueNs) {
        completingAtNs = trueNs;
    }

    @Override
    public long nextEventNs() {
        return nextEventNs;
    }

    @Override
    public int outstanding() {
        return outstanding + postedElsewhere.get() + receiving.size();
    }

    /** {@code qp} posted a receive buffer on a polled receive queue. Owner thread only. */
    void receiving(final EmulatedQueuePair qp) {
        if (!receiving.contains(qp)) {
            receiving.add(qp);
            final Runnable w = wake;
            if (w != null) {
                w.run();
            }
        }
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
        closed = true;
    }

    public boolean isClosed() {
        return closed;
    }

    /** A QP of this queue posted {@code count} requests; from another thread only for a shared QP. */
    void posted(final EmulatedQueuePair qp, final int count, final long firstEventNs) {
        if (Thread.currentThread() != owner) {
            postedElsewhere.addAndGet(count);
            activations.offer(qp);
            final Runnable w = wake;
            if (w != null) {
                w.run();
            }
            return;
        }
        final boolean wasIdle = outstanding == 0;
        final boolean sooner = firstEventNs - nextEventNs < 0;
        outstanding += count;
        activate(qp);
        nextEventNs = Math.min(nextEventNs, firstEventNs);
        if (wasIdle || sooner) { // a poller asleep until a later event must learn of this earlier one
            final Runnable w = wake;
            if (w != null) {
                w.run();
            }
        }
    }

    private void activate(final EmulatedQueuePair qp) {
        if (!qp.active) {
            qp.active = true;
            if (activeCount == active.length) {
                active = Arrays.copyOf(active, activeCount * 2);
            }
            active[activeCount++] = qp;
        }
    }

    /** A QP of this queue completed {@code count} requests. Owner thread only. */
    void completed(final int count) {
        outstanding -= count;
    }

    /** A SEND landed in a receive buffer of {@code qp}; called on the sender's thread. */
    void received(final EmulatedQueuePair qp, final long wrId, final int length, final WcStatus status) {
        inbox.offer(new RecvCompletion(qp, wrId, length, status));
        final Runnable w = wake;
        if (w != null) {
            w.run();
        }
    }

    void checkOwner() {
        if (Thread.currentThread() != owner) {
            throw new IllegalStateException("completion queue owned by thread '" + owner.getName()
                + "' used from thread '" + Thread.currentThread().getName() + "'");
        }
    }

    private record RecvCompletion(EmulatedQueuePair qp, long wrId, int length, WcStatus status) {
    }
}
