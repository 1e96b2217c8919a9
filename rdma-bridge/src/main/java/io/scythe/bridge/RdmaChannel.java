package io.scythe.bridge;

import io.scythe.fabric.CompletionHandler;
import io.scythe.fabric.CompletionQueue;
import io.scythe.fabric.Nic;
import io.scythe.fabric.NicClockWord;
import io.scythe.fabric.Opcode;
import io.scythe.fabric.QpOptions;
import io.scythe.fabric.QpState;
import io.scythe.fabric.QueuePair;
import io.scythe.fabric.RemoteRegion;
import io.scythe.fabric.WcStatus;
import io.scythe.fabric.WorkRequest;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;
import io.vertx.core.internal.ContextInternal;
import org.agrona.BufferUtil;
import org.agrona.DirectBuffer;
import org.agrona.MutableDirectBuffer;
import org.agrona.concurrent.NanoClock;
import org.agrona.concurrent.UnsafeBuffer;

/**
 * Future-returning verbs from this event loop to one remote node, over one queue pair polled by this loop's
 * {@link Bridge}. Every Future completes on the thread that posted the verb, in posting order.
 *
 * <p>Buffers: a READ lands in {@code dst} before its Future completes; a WRITE or SEND reads {@code src} until its
 * Future completes (payloads of at most the QP's inline limit are copied at once). Atomics return the old value.
 *
 * <p>Back-pressure: a verb (or doorbell batch) that finds the send queue full waits, in posting order, in a bounded
 * list of this channel ({@link #MAX_WAITING_PER_SLOT} times the queue's depth) and is posted as completions free
 * room, without blocking the loop; only when that list is full too is it refused ({@code send queue full}), which
 * callers treat as back-pressure (nothing happened). A batch longer than the whole queue can never be posted: it is
 * refused at once, and not as back-pressure (the message does not say "send queue full", so
 * {@code Refusal.forNow} is false): a caller that retried refusals for now would otherwise retry it for ever (the
 * SELCC lease's end-of-run sweep did, stop 49). Nothing of it was posted; the caller must split it.
 *
 * <p>A failed verb fails its Future with a {@link VerbException} carrying the completion status; the verbs posted after
 * it on this channel fail with {@link WcStatus#WR_FLUSH_ERROR}, and once they are all done the channel resets its QP
 * (unless it was {@link WcStatus#REVOKED revoked}, which is final).
 */
public final class RdmaChannel implements CompletionHandler {
    private static final byte KIND_VOID = 0;
    private static final byte KIND_ATOMIC = 1;
    private static final byte KIND_NIC_CLOCK = 2;

    private final Bridge bridge;
    private final QueuePair qp;
    private final VerbStats stats;
    private final int mask;
    /** Per slot: the verb's Promise, or its {@link VerbCallback} when it was posted with one. */
    private final Object[] waiters;
    private final byte[] kinds;
    private final Opcode[] opcodes;
    private final Doorbell[] doorbells;
    private final int[] batchIndex;
    private final UnsafeBuffer atomicResults;
    private final int maxInline;
    private final WorkRequest single = new WorkRequest();
    private WorkRequest[] batchPool = new WorkRequest[0];
    private Doorbell batchPoolHolder;
    private final ContextInternal context;
    private long nextSeq;
    private long completedSeq;
    private boolean qpFailed;
    /** How many verbs may wait for room per slot of the send queue before new ones are refused. */
    public static final int MAX_WAITING_PER_SLOT = 16;
    /** Verbs refused for room, in posting order; each re-builds its request when posted (see class comment). */
    private final java.util.ArrayDeque<Waiting> waiting = new java.util.ArrayDeque<>();
    private final int maxWaiting;
    private final int sendQueueDepth;
    private boolean drainScheduled;
    /** This end's NIC, for the local side of clock reads; null for a channel wrapped without it. */
    private final Nic nic;
    /** Per slot of a clock read: this NIC's clock when it was posted. Made on the first clock read. */
    private long[] clockSentNs;

    /**
     * A post that found the send queue full: tried again, in order, when there may be room.
     *
     * @param tryPost posts it; false when the send queue is still full (nothing posted)
     * @param refuse  refuses it for good with the send-queue-full error
     */
    private record Waiting(java.util.function.BooleanSupplier tryPost, Runnable refuse) {
    }

    private RdmaChannel(final Bridge bridge, final Nic nic, final QueuePair qp) {
        this.bridge = bridge;
        this.nic = nic;
        // Futures complete on the context that created the channel; the bridge polls inside its dispatch, so
        // completing them costs no context switch.
        this.context = (ContextInternal) Vertx.currentContext();
        bridge.pollContext(context);
        this.qp = qp;
        this.stats = bridge.stats();
        final int depth = Integer.highestOneBit(Math.max(1, qp.options().sendQueueDepth() - 1)) << 1;
        this.mask = depth - 1;
        this.waiters = new Object[depth];
        this.kinds = new byte[depth];
        this.opcodes = new Opcode[depth];
        this.doorbells = new Doorbell[depth];
        this.batchIndex = new int[depth];
        this.atomicResults = new UnsafeBuffer(BufferUtil.allocateDirectAligned(depth * Long.BYTES, 64));
        this.maxInline = qp.options().maxInlineBytes();
        this.sendQueueDepth = qp.options().sendQueueDepth();
        this.maxWaiting = MAX_WAITING_PER_SLOT * sendQueueDepth;
        qp.attachment(this);
    }

    /** Connects a channel from {@code nic} to {@code remoteNode}, on the calling event loop's bridge. */
    public static Future<RdmaChannel> connect(final Nic nic, final String remoteNode, final QpOptions options) {
        return connect(Bridge.current(), nic, remoteNode, options);
    }

    /** Connects a channel polled by {@code bridge} (call on its loop; a continuation need not find it current). */
    public static Future<RdmaChannel> connect(final Bridge bridge, final Nic nic, final String remoteNode,
                                              final QpOptions options) {
        final CompletionQueue cq = bridge.completionQueue(nic);
        return nic.connect(remoteNode, cq, options).map(qp -> new RdmaChannel(bridge, nic, qp));
    }

    /**
     * Wraps an existing queue-pair end that reports to {@code bridge} (e.g. an accepted one). It cannot
     * {@link #readNicClock()}: it does not know its NIC.
     */
    public static RdmaChannel wrap(final Bridge bridge, final QueuePair qp) {
        bridge.checkThread();
        return new RdmaChannel(bridge, null, qp);
    }

    /** Wraps an existing queue-pair end of {@code nic} that reports to {@code bridge}. */
    public static RdmaChannel wrap(final Bridge bridge, final Nic nic, final QueuePair qp) {
        bridge.checkThread();
        return new RdmaChannel(bridge, nic, qp);
    }

    // -------------------------------------------------------------------------------------------------- verbs

    public Future<Void> read(final long remoteAddress, final int rkey, final MutableDirectBuffer dst,
                             final int dstOffset, final int length) {
        final Promise<Void> promise = promise();
        submit(() -> single.read(remoteAddress, rkey, dst, dstOffset, length), promise, KIND_VOID);
        return promise.future();
    }

    /** {@link #read(long, int, MutableDirectBuffer, int, int)} reporting to {@code done} instead of a Future. */
    public void read(final long remoteAddress, final int rkey, final MutableDirectBuffer dst, final int dstOffset,
                     final int length, final VerbCallback done) {
        bridge.checkThread();
        if (waiting.isEmpty() && postNow(single.read(remoteAddress, rkey, dst, dstOffset, length), done, KIND_VOID)) {
            return; // posted (or refused) at once: no request builder made
        }
        awaitRoom(() -> single.read(remoteAddress, rkey, dst, dstOffset, length), done, KIND_VOID);
    }

    /** READ of {@code length} bytes at {@code offset} into {@code region}. */
    public Future<Void> read(final RemoteRegion region, final long offset, final MutableDirectBuffer dst,
                             final int dstOffset, final int length) {
        return read(region.addressOf(offset, length), region.rkey(), dst, dstOffset, length);
    }

    public Future<Void> write(final long remoteAddress, final int rkey, final DirectBuffer src, final int srcOffset,
                              final int length) {
        final Promise<Void> promise = promise();
        submit(() -> single.write(remoteAddress, rkey, src, srcOffset, length).inline(length <= maxInline), promise,
            KIND_VOID);
        return promise.future();
    }

    public Future<Void> write(final RemoteRegion region, final long offset, final DirectBuffer src,
                              final int srcOffset, final int length) {
        return write(region.addressOf(offset, length), region.rkey(), src, srcOffset, length);
    }

    /** {@link #write(long, int, DirectBuffer, int, int)} reporting to {@code done} instead of a Future. */
    public void write(final long remoteAddress, final int rkey, final DirectBuffer src, final int srcOffset,
                      final int length, final VerbCallback done) {
        bridge.checkThread();
        if (waiting.isEmpty() && postNow(single.write(remoteAddress, rkey, src, srcOffset, length)
            .inline(length <= maxInline), done, KIND_VOID)) {
            return;
        }
        awaitRoom(() -> single.write(remoteAddress, rkey, src, srcOffset, length).inline(length <= maxInline), done,
            KIND_VOID);
    }

    /** 8-byte compare-and-swap; the Future holds the value found (the swap happened iff it equals expected). */
    public Future<Long> compareAndSwap(final long remoteAddress, final int rkey, final long expected,
                                       final long desired) {
        final Promise<Long> promise = promise();
        submit(() -> single.compareAndSwap(remoteAddress, rkey, expected, desired, atomicResults,
            atomicResultOffset(nextSeq)), promise, KIND_ATOMIC);
        return promise.future();
    }

    /** {@link #compareAndSwap(long, int, long, long)} reporting the value found to {@code done}. */
    public void compareAndSwap(final long remoteAddress, final int rkey, final long expected, final long desired,
                               final VerbCallback done) {
        bridge.checkThread();
        if (waiting.isEmpty() && postNow(single.compareAndSwap(remoteAddress, rkey, expected, desired,
            atomicResults, atomicResultOffset(nextSeq)), done, KIND_ATOMIC)) {
            return;
        }
        awaitRoom(() -> single.compareAndSwap(remoteAddress, rkey, expected, desired, atomicResults,
            atomicResultOffset(nextSeq)), done, KIND_ATOMIC);
    }

    /** 8-byte fetch-and-add; the Future holds the value before the addition. */
    public Future<Long> fetchAndAdd(final long remoteAddress, final int rkey, final long delta) {
        final Promise<Long> promise = promise();
        submit(() -> single.fetchAndAdd(remoteAddress, rkey, delta, atomicResults, atomicResultOffset(nextSeq)),
            promise, KIND_ATOMIC);
        return promise.future();
    }

    /** Two-sided SEND into the peer's next posted receive buffer. */
    public Future<Void> send(final DirectBuffer src, final int srcOffset, final int length) {
        final Promise<Void> promise = promise();
        submit(() -> single.send(src, srcOffset, length).inline(length <= maxInline), promise, KIND_VOID);
        return promise.future();
    }

    /**
     * Reads the peer's NIC clock one-sided (a READ of its {@link NicClockWord}, timed as any READ): the Future holds
     * the peer's clock as the READ executed there, between this NIC's clock when it was posted and the READ's
     * completion timestamp. Fails as a READ does, or at once when this provider has no NIC clock (disni).
     */
    public Future<NicClockReading> readNicClock() {
        final NanoClock localClock;
        try {
            if (nic == null) {
                throw new IllegalStateException("channel to " + remoteNode() + " was wrapped without its NIC: "
                    + "use RdmaChannel.wrap(bridge, nic, qp) to read clocks over it");
            }
            localClock = nic.nicClock();
        } catch (final RuntimeException e) {
            return Future.failedFuture(e);
        }
        if (clockSentNs == null) {
            clockSentNs = new long[mask + 1];
        }
        final RemoteRegion word = NicClockWord.of(remoteNode());
        final Promise<NicClockReading> promise = promise();
        submit(() -> {
            final long seq = nextSeq;
            clockSentNs[(int) (seq & mask)] = localClock.nanoTime(); // read as it is posted, after any wait for room
            return single.read(word.address(), word.rkey(), atomicResults, atomicResultOffset(seq),
                NicClockWord.LENGTH);
        }, promise, KIND_NIC_CLOCK);
        return promise.future();
    }

    /**
     * A doorbell batch: requests added to it are posted together, in order, with one doorbell, when
     * {@link Doorbell#post()} is called; only the last is signaled, and the batch has one Future.
     */
    public Doorbell doorbell() {
        return new Doorbell(this);
    }

    // ----------------------------------------------------------------------------------------------- internals

    private <T> Promise<T> promise() {
        return context != null ? context.promise() : Promise.promise();
    }

    /** Posts the request {@code build} makes (built when posted: it may wait for room first, see class comment). */
    private void submit(final java.util.function.Supplier<WorkRequest> build, final Object promise,
                        final byte kind) {
        bridge.checkThread();
        if (waiting.isEmpty() && post(build, promise, kind)) {
            return;
        }
        awaitRoom(build, promise, kind);
    }

    /** Queues a post that found the send queue full, built again by {@code build} when there is room. */
    private void awaitRoom(final java.util.function.Supplier<WorkRequest> build, final Object promise,
                           final byte kind) {
        await(new Waiting(() -> post(build, promise, kind),
            () -> refused(build.get().opcode(), QueuePair.SEND_QUEUE_FULL, promise)));
    }

    /** Posts one request; false (nothing posted) when the send queue is full. */
    private boolean post(final java.util.function.Supplier<WorkRequest> build, final Object promise,
                         final byte kind) {
        return postNow(build.get(), promise, kind);
    }

    /**
     * Posts {@code wr}, built already (with the atomic result slot of {@link #nextSeq}: nothing may be posted between
     * building and posting; {@link #prepare} changes no sequence number); {@code promise} is the verb's Promise or
     * {@link VerbCallback}. False (nothing posted) when the send queue is full.
     */
    private boolean postNow(final WorkRequest wr, final Object promise, final byte kind) {
        prepare();
        if (!roomFor(1)) {
            return false;
        }
        final long seq = nextSeq;
        wr.wrId(seq).signaled(true);
        final int code = qp.post(wr);
        if (code == QueuePair.SEND_QUEUE_FULL) {
            return false;
        }
        if (code != QueuePair.POST_OK) {
            refused(wr.opcode(), code, promise);
            return true;
        }
        track(seq, wr.opcode(), promise, kind);
        nextSeq = seq + 1;
        stats.posted(wr.opcode(), wr.length());
        stats.doorbell();
        return true;
    }

    /** Queues a post that found no room, or refuses it when the waiting list is full (the last resort). */
    private void await(final Waiting post) {
        if (waiting.size() >= maxWaiting) {
            post.refuse().run();
            return;
        }
        waiting.add(post);
        if (outstanding() == 0) {
            scheduleDrain(); // no completion of ours will come to free room: look again on the next turn
        }
    }

    /** Posts waiting requests, in order, while they fit. */
    private void drainWaiting() {
        while (!waiting.isEmpty()) {
            final Waiting next = waiting.poll();
            if (!next.tryPost().getAsBoolean()) {
                waiting.addFirst(next);
                if (outstanding() == 0) {
                    scheduleDrain();
                }
                return;
            }
        }
    }

    private void scheduleDrain() {
        if (drainScheduled) {
            return;
        }
        drainScheduled = true;
        final Runnable drain = () -> {
            drainScheduled = false;
            drainWaiting();
        };
        final java.util.concurrent.Executor deferred = bridge.deferredExecutor();
        if (deferred != null) {
            deferred.execute(drain);
        } else if (context != null) {
            context.runOnContext(v -> drain.run());
        } else {
            drainScheduled = false; // no loop to come back on: the last resort, refuse what waits
            while (!waiting.isEmpty()) {
                waiting.poll().refuse().run();
            }
        }
    }

    /** Posts the {@code count} requests of {@code doorbell} as one doorbell, only the last signaled. */
    void submitBatch(final Doorbell doorbell, final WorkRequest[] requests, final int count) {
        bridge.checkThread();
        if (count > sendQueueDepth) {
            releaseBatchPool(doorbell);
            stats.failed();
            doorbell.refused(new VerbException(requests[0].opcode(), "doorbell batch of " + count
                + " requests is longer than the queue (depth " + sendQueueDepth + "): it can never be posted, split it"));
            return;
        }
        if (waiting.isEmpty() && postBatch(doorbell, requests, count)) {
            return;
        }
        await(new Waiting(() -> postBatch(doorbell, requests, count), () -> refuseBatch(doorbell, requests, count)));
    }

    private void refuseBatch(final Doorbell doorbell, final WorkRequest[] requests, final int count) {
        releaseBatchPool(doorbell);
        stats.failed();
        doorbell.refused(new VerbException(requests[0].opcode(), refusal(QueuePair.SEND_QUEUE_FULL)
            + " (doorbell batch of " + count + ")"));
    }

    private void releaseBatchPool(final Doorbell doorbell) {
        if (batchPoolHolder == doorbell) {
            batchPoolHolder = null;
        }
    }

    /** Posts a doorbell batch; false (nothing posted, the requests kept) when the send queue lacks room for it. */
    private boolean postBatch(final Doorbell doorbell, final WorkRequest[] requests, final int count) {
        prepare();
        if (!roomFor(count)) {
            return false; // waits holding its requests, as for a full send queue
        }
        final long first = nextSeq;
        for (int i = 0; i < count; i++) {
            final WorkRequest wr = requests[i];
            if (wr.opcode() == Opcode.COMPARE_AND_SWAP) {
                wr.compareAndSwap(wr.remoteAddress(), wr.rkey(), wr.compareOrAdd(), wr.swap(), atomicResults,
                    atomicResultOffset(first + i));
            } else if (wr.opcode() == Opcode.FETCH_AND_ADD) {
                wr.fetchAndAdd(wr.remoteAddress(), wr.rkey(), wr.compareOrAdd(), atomicResults,
                    atomicResultOffset(first + i));
            }
            wr.wrId(first + i).signaled(i == count - 1);
            wr.link(i == count - 1 ? null : requests[i + 1]);
        }
        final int code = qp.post(requests[0]);
        final Opcode firstOpcode = requests[0].opcode();
        if (code == QueuePair.SEND_QUEUE_FULL) {
            return false; // waits holding its requests: another batch built meanwhile gets fresh ones
        }
        releaseBatchPool(doorbell); // the requests are posted (copied into the send queue) or refused
        if (code != QueuePair.POST_OK) {
            stats.failed();
            doorbell.refused(new VerbException(firstOpcode, refusal(code) + " (doorbell batch of " + count + ")"));
            return true;
        }
        for (int i = 0; i < count; i++) {
            final int slot = (int) ((first + i) & mask);
            final Opcode opcode = requests[i].opcode();
            waiters[slot] = null;
            kinds[slot] = opcode.isAtomic() ? KIND_ATOMIC : KIND_VOID;
            opcodes[slot] = opcode;
            doorbells[slot] = doorbell;
            batchIndex[slot] = i;
            stats.posted(opcode, requests[i].length());
        }
        nextSeq = first + count;
        stats.doorbell();
        return true;
    }

    /**
     * The channel's pooled work requests for {@code doorbell} to build in, or a fresh array when another batch under
     * construction holds them (two batches built at once must not overwrite each other's requests).
     */
    WorkRequest[] borrowBatchPool(final Doorbell doorbell) {
        if (batchPoolHolder != null) {
            return newRequests(8);
        }
        batchPoolHolder = doorbell;
        if (batchPool.length == 0) {
            batchPool = newRequests(8);
        }
        return batchPool;
    }

    /** {@code requests} of {@code doorbell}, twice as long. */
    WorkRequest[] growBatch(final Doorbell doorbell, final WorkRequest[] requests) {
        final WorkRequest[] grown = newRequests(requests.length * 2);
        System.arraycopy(requests, 0, grown, 0, requests.length);
        if (batchPoolHolder == doorbell) {
            batchPool = grown;
        }
        return grown;
    }

    private static WorkRequest[] newRequests(final int length) {
        final WorkRequest[] requests = new WorkRequest[length];
        for (int i = 0; i < length; i++) {
            requests[i] = new WorkRequest();
        }
        return requests;
    }

    /** Offset in the atomic-result buffer of the request with sequence number {@code seq}. */
    private int atomicResultOffset(final long seq) {
        return (int) (seq & mask) * Long.BYTES;
    }

    UnsafeBuffer atomicResults() {
        return atomicResults;
    }

    int maxInline() {
        return maxInline;
    }

    <T> Promise<T> newPromise() {
        return promise();
    }

    /**
     * Whether {@code count} more requests fit in this channel's own books: the requests it posted and has not seen
     * complete (up to the last signaled completion delivered) must stay within the send queue's depth, so that a
     * sequence number's slot ({@code seq & mask}) is never reused while its request may still complete. The queue pair
     * alone does not guarantee it: the emulated one frees an unsignaled request's entry as soon as that request
     * completes, before the batch's signaled completion reports it here, and then accepted posts beyond the ring; a
     * new single READ took the slot of a batch member not yet reported, the batch's completion then completed that
     * READ's promise before its data had landed, and the READ's own completion found its slot empty (a
     * NullPointerException in the completion loop, which left that completion's later requests unreported:
     * {@code bench --workload tpcc --protocols ford-occ --warehouses 2 --clients 64}, about one run in three).
     */
    private boolean roomFor(final int count) {
        return nextSeq - completedSeq + count <= sendQueueDepth;
    }

    private void prepare() {
        // A QP left in ERROR by an earlier failure is reset once its flushed requests are all done.
        if (qpFailed && completedSeq == nextSeq) {
            resetQueuePair();
        }
    }

    private void resetQueuePair() {
        if (qp.state() != QpState.ERROR || qp.reset()) {
            qpFailed = qp.state() != QpState.READY;
        }
    }

    private void track(final long seq, final Opcode opcode, final Object promise, final byte kind) {
        final int i = (int) (seq & mask);
        waiters[i] = promise;
        kinds[i] = kind;
        opcodes[i] = opcode;
        doorbells[i] = null;
    }

    private void refused(final Opcode opcode, final int code, final Object promise) {
        stats.failed();
        fail(promise, new VerbException(opcode, refusal(code)));
    }

    /** Fails a verb's Promise or calls its callback with {@code cause}. */
    private static void fail(final Object waiter, final Throwable cause) {
        if (waiter instanceof VerbCallback callback) {
            VerbCallback.call(callback, 0, cause);
        } else {
            ((Promise<?>) waiter).fail(cause);
        }
    }

    private String refusal(final int code) {
        final String why;
        switch (code) {
            case QueuePair.SEND_QUEUE_FULL:
                why = "send queue full (" + qp.options().sendQueueDepth() + " requests outstanding)";
                break;
            case QueuePair.INVALID_REQUEST:
                why = "malformed request (bad length, buffer or inline size)";
                break;
            case QueuePair.NOT_CONNECTED:
                why = "queue pair to " + qp.remoteNode() + " is closed";
                break;
            default:
                why = "post returned " + code;
        }
        return why;
    }

    @Override
    @SuppressWarnings("unchecked")
    public void onCompletion(final QueuePair from, final long wrId, final Opcode opcode, final WcStatus status,
                             final int byteLength) {
        // Completions of one QP arrive in order; a completion for wrId means all earlier unsignaled ones succeeded.
        while (completedSeq < wrId) {
            succeed(completedSeq++);
        }
        if (completedSeq == wrId) {
            completedSeq++;
            if (status == WcStatus.SUCCESS) {
                succeed(wrId);
            } else {
                final int i = (int) (wrId & mask);
                final Object promise = waiters[i];
                final Doorbell doorbell = doorbells[i];
                waiters[i] = null;
                doorbells[i] = null;
                stats.failed();
                qpFailed = true;
                final VerbException cause = new VerbException(opcodes[i], status, qp.remoteNode());
                if (doorbell != null) {
                    doorbell.failed(batchIndex[i], cause);
                } else {
                    fail(promise, cause);
                }
            }
        }
        if (qpFailed && completedSeq == nextSeq) {
            resetQueuePair();
        }
        if (!waiting.isEmpty()) {
            drainWaiting(); // completions freed room in the send queue
        }
    }

    @SuppressWarnings("unchecked")
    private void succeed(final long seq) {
        final int i = (int) (seq & mask);
        final Doorbell doorbell = doorbells[i];
        if (doorbell != null) {
            doorbells[i] = null;
            doorbell.succeeded(batchIndex[i], kinds[i] == KIND_ATOMIC ? atomicResults.getLong(i * Long.BYTES) : 0);
            return;
        }
        final Object promise = waiters[i];
        waiters[i] = null;
        if (promise instanceof VerbCallback callback) {
            VerbCallback.call(callback, kinds[i] == KIND_ATOMIC ? atomicResults.getLong(i * Long.BYTES) : 0, null);
        } else if (kinds[i] == KIND_ATOMIC) {
            ((Promise<Long>) promise).complete(atomicResults.getLong(i * Long.BYTES));
        } else if (kinds[i] == KIND_NIC_CLOCK) {
            // Signaled, so this is its own completion, whose timestamp the bridge is delivering now.
            ((Promise<NicClockReading>) promise).complete(new NicClockReading(remoteNode(), clockSentNs[i],
                atomicResults.getLong(i * Long.BYTES), bridge.completionTimestampNs()));
        } else {
            ((Promise<Void>) promise).complete(null);
        }
    }

    public QueuePair queuePair() {
        return qp;
    }

    public String remoteNode() {
        return qp.remoteNode();
    }

    /** Whether this channel's connection is gone for good ({@link QueuePair#connectionGone}): a new one is needed. */
    public boolean connectionGone() {
        return qp.connectionGone();
    }

    /** Verbs posted and not yet completed. */
    public int outstanding() {
        return (int) (nextSeq - completedSeq);
    }

    /** Verbs (or doorbell batches) waiting for room in the send queue. */
    public int waiting() {
        return waiting.size();
    }

    public void close() {
        qp.close();
        while (!waiting.isEmpty()) {
            waiting.poll().refuse().run(); // will never be posted now
        }
    }

    @Override
    public String toString() {
        return "RdmaChannel{" + qp + '}';
    }
}
