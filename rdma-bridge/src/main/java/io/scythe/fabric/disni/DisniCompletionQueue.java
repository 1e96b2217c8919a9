package io.scythe.fabric.disni;

import com.ibm.disni.verbs.IbvCQ;
import com.ibm.disni.verbs.IbvWC;
import com.ibm.disni.verbs.SVCPollCq;
import io.scythe.fabric.CompletionHandler;
import io.scythe.fabric.CompletionQueue;
import io.scythe.fabric.FabricException;
import org.agrona.collections.Int2ObjectHashMap;

import java.io.IOException;
import java.util.concurrent.atomic.AtomicInteger;

/** A device completion queue polled by its owner thread with {@code ibv_poll_cq} (non-blocking, no event channel). */
final class DisniCompletionQueue implements CompletionQueue {
    private final Thread owner = Thread.currentThread();
    private final IbvCQ cq;
    private final IbvWC[] completions;
    private final SVCPollCq poll;
    private final Int2ObjectHashMap<DisniQueuePair> queuePairs = new Int2ObjectHashMap<>();
    private final AtomicInteger outstanding = new AtomicInteger();

    DisniCompletionQueue(final IbvCQ cq, final int capacity) throws IOException {
        this.cq = cq;
        this.completions = new IbvWC[Math.min(capacity, 256)];
        for (int i = 0; i < completions.length; i++) {
            completions[i] = new IbvWC();
        }
        this.poll = cq.poll(completions, completions.length);
    }

    IbvCQ device() {
        return cq;
    }

    synchronized void add(final DisniQueuePair qp, final int qpNumber) {
        queuePairs.put(qpNumber, qp);
    }

    void posted(final int count) {
        outstanding.addAndGet(count);
    }

    void completed(final int count) {
        outstanding.addAndGet(-count);
    }

    @Override
    public int poll(final long nowNs, final CompletionHandler handler, final int maxCompletions) {
        if (Thread.currentThread() != owner) {
            throw new IllegalStateException("completion queue owned by '" + owner.getName() + "' used from '"
                + Thread.currentThread().getName() + "'");
        }
        final int polled;
        try {
            polled = poll.execute().getPolls();
        } catch (final IOException e) {
            throw new FabricException("ibv_poll_cq failed: " + e.getMessage(), e);
        }
        for (int i = 0; i < polled; i++) {
            final IbvWC wc = completions[i];
            final DisniQueuePair qp;
            synchronized (this) {
                qp = queuePairs.get(wc.getQp_num());
            }
            if (qp != null) {
                qp.completed(wc, handler);
            }
        }
        return polled;
    }

    /** @throws FabricException always: {@link DisniSupport#NO_NIC_CLOCK} */
    @Override
    public long completionTimestampNs() {
        throw new FabricException(DisniSupport.NO_NIC_CLOCK);
    }

    @Override
    public long nextEventNs() {
        return NO_EVENT; // the device says when: keep polling while anything is outstanding
    }

    @Override
    public int outstanding() {
        return outstanding.get();
    }

    @Override
    public void wakeHandler(final Runnable wake) {
        // Completions appear in device memory; the bridge polls while verbs are outstanding.
    }

    @Override
    public Thread owner() {
        return owner;
    }

    @Override
    public void close() {
        poll.free();
    }
}
