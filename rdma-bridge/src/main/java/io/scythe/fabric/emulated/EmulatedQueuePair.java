package io.scythe.fabric.emulated;

import io.scythe.fabric.CompletionHandler;
import io.scythe.fabric.CostModel;
import io.scythe.fabric.MemoryKind;
import io.scythe.fabric.NicClockWord;
import io.scythe.fabric.Opcode;
import io.scythe.fabric.QpOptions;
import io.scythe.fabric.QpState;
import io.scythe.fabric.QueuePair;
import io.scythe.fabric.WcStatus;
import io.scythe.fabric.WorkRequest;
import io.scythe.fabric.WorkRequests;
import org.agrona.DirectBuffer;
import org.agrona.MutableDirectBuffer;
import org.agrona.concurrent.NanoClock;
import org.agrona.concurrent.UnsafeBuffer;

/**
 * One end of an emulated RC queue pair: a send queue of work requests, each timed by the {@link CostModel} when it is
 * posted (see the timeline there) and then executed and completed, in posting order, by the owner's
 * {@link EmulatedCompletionQueue#poll polls} once the clock passes the modelled times. Executing at the modelled
 * arrival rather than at post keeps what peers observe honest: a WRITE into an RPC ring becomes visible to the
 * receiver one one-way latency after it was posted, not at once.
 *
 * <p>With a {@link CostModel#isFree() free} model a request executes inside {@code post} and completes at the next
 * poll: the pure software cost.
 *
 * <p>Owner-thread only, except {@link #revoke()} and the receive side, which peers reach from their threads.
 */
public final class EmulatedQueuePair implements QueuePair {
    private final int qpNumber;
    /** Number of the other end on the responder's NIC: the key of its QP context there. */
    private final long peerQpId;
    private final boolean shared;
    private final String localNode;
    private final String remoteNode;
    private final QpOptions options;
    private final CostModel model;
    private final boolean free;
    private final NanoClock clock;
    private final NicTimeline localTimeline;
    private final EmulatedPeer peer;
    private final Connection connection;
    private final ReceiveQueue peerReceiveQueue;
    private final ReceiveQueue receiveQueue;
    private final EmulatedCompletionQueue cq;

    /** One send-queue entry; preallocated, so posting allocates nothing. */
    private static final class Slot {
        Opcode opcode;
        long wrId;
        boolean signaled;
        boolean payloadDma;
        DirectBuffer local;
        int localOffset;
        int length;
        long remoteAddress;
        int rkey;
        long compareOrAdd;
        long swap;
        RegionView region;
        UnsafeBuffer inlineCopy;
        long executeAt;
        long completeAt;
        WcStatus status;
    }

    // The send queue: a ring of slots indexed by sequence & mask.
    private final int mask;
    private final Slot[] slots;
    private long head;
    private long executed;
    private long tail;
    private long lastPipelineAt;
    private long lastExecuteAt;
    private long lastCompleteAt;
    private int lastDelivered;

    private io.scythe.fabric.DelayInjector delayInjector;
    private io.scythe.fabric.VerbFaultInjector verbFaultInjector;
    /** One-way cost of a request on a local path ({@link #localPath}); negative: the NIC path of the cost model. */
    private long localPathNs = -1;
    private QpState state = QpState.READY;
    private volatile boolean revokedLocally;
    private Object attachment;
    boolean active;

    /**
     * @param cq               where this end reports; {@code null} for a passive end that only serves its peer
     * @param receiveQueue     this end's receive queue; {@code null} when it cannot receive
     * @param peerReceiveQueue the other end's receive queue, for SEND; {@code null} when the peer cannot receive
     */
    public EmulatedQueuePair(final int qpNumber, final long peerQpId, final String localNode, final String remoteNode,
                             final QpOptions options, final CostModel model, final NanoClock clock,
                             final NicTimeline localTimeline, final EmulatedPeer peer, final Connection connection,
                             final ReceiveQueue receiveQueue, final ReceiveQueue peerReceiveQueue,
                             final EmulatedCompletionQueue cq) {
        this.qpNumber = qpNumber;
        this.peerQpId = peerQpId;
        this.shared = options.shared();
        this.localNode = localNode;
        this.remoteNode = remoteNode;
        this.options = new QpOptions(options).validate();
        this.model = model;
        this.free = model.isFree();
        this.clock = clock;
        this.localTimeline = localTimeline;
        this.peer = peer;
        this.connection = connection;
        this.receiveQueue = receiveQueue;
        this.peerReceiveQueue = peerReceiveQueue;
        this.cq = cq;
        final int capacity = Integer.highestOneBit(Math.max(1, options.sendQueueDepth() - 1)) << 1;
        this.mask = capacity - 1;
        this.slots = new Slot[capacity];
        for (int i = 0; i < capacity; i++) {
            slots[i] = new Slot();
        }
    }

    // ------------------------------------------------------------------------------------------------ posting

    @Override
    public int post(final WorkRequest first) {
        if (cq == null || state == QpState.CLOSED) {
            return NOT_CONNECTED;
        }
        if (shared) {
            synchronized (this) {
                return postLocked(first);
            }
        }
        cq.checkOwner();
        return postLocked(first);
    }

    private int postLocked(final WorkRequest first) {
        int count = 0;
        for (WorkRequest wr = first; wr != null; wr = wr.next()) {
            if (!WorkRequests.valid(wr, options)) {
                return INVALID_REQUEST;
            }
            count++;
        }
        if (count == 0) {
            return POST_OK;
        }
        if (tail - head + count > options.sendQueueDepth()) {
            return SEND_QUEUE_FULL;
        }
        final long firstSeq = tail;
        for (WorkRequest wr = first; wr != null; wr = wr.next()) {
            enqueue(slots[(int) (tail++ & mask)], wr);
        }
        if (free) {
            while (executed < tail) {
                execute(slots[(int) (executed++ & mask)]);
            }
        } else {
            schedule(firstSeq, clock.nanoTime());
        }
        cq.posted(this, count, free ? 0 : slots[(int) (firstSeq & mask)].executeAt);
        return POST_OK;
    }

    private void enqueue(final Slot slot, final WorkRequest wr) {
        final Opcode op = wr.opcode();
        slot.opcode = op;
        slot.wrId = wr.wrId();
        slot.signaled = wr.signaled();
        slot.length = wr.length();
        slot.remoteAddress = wr.remoteAddress();
        slot.rkey = wr.rkey();
        slot.compareOrAdd = wr.compareOrAdd();
        slot.swap = wr.swap();
        slot.status = null;
        slot.region = op == Opcode.SEND ? null
            : NicClockWord.addressedBy(wr.rkey()) ? NicClockView.INSTANCE : peer.region(wr.rkey());
        if (wr.inline() && wr.length() > 0) {
            UnsafeBuffer copy = slot.inlineCopy;
            if (copy == null) {
                copy = new UnsafeBuffer(new byte[options.maxInlineBytes()]);
                slot.inlineCopy = copy;
            }
            copy.putBytes(0, wr.localBuffer(), wr.localOffset(), wr.length());
            slot.local = copy;
            slot.localOffset = 0;
        } else {
            slot.local = wr.localBuffer();
            slot.localOffset = wr.localOffset();
        }
        // The NIC must DMA-read a payload that was not inlined before it can send it.
        slot.payloadDma = !wr.inline() && (op == Opcode.WRITE || op == Opcode.SEND) && wr.length() > 0;
    }

    /** Adds {@code injector}'s delay to every batch posted from now on (the simulator's fault injection). */
    public void delayInjector(final io.scythe.fabric.DelayInjector injector) {
        this.delayInjector = injector;
    }

    /** Asks {@code injector} whether each one-sided request that takes effect from now on reports failure. */
    public void verbFaultInjector(final io.scythe.fabric.VerbFaultInjector injector) {
        this.verbFaultInjector = injector;
    }

    /**
     * Makes this end a local path: its peer lives on the same server (co-located nodes,
     * {@code FabricOptions#colocate}), so a request is a memory access between two cores of one host, not a verb: it
     * takes effect {@code oneWayNs} after it is posted (its bytes at {@code FabricOptions#LOCAL_NS_PER_BYTE}),
     * completes {@code oneWayNs} later, and books neither NIC's ports, units or QP caches. Order is kept as on a QP.
     */
    public void localPath(final long oneWayNs) {
        if (oneWayNs < 0) {
            throw new IllegalArgumentException("a local path's one-way cost must be >= 0 ns, not " + oneWayNs);
        }
        this.localPathNs = oneWayNs;
    }

    /** The requests from {@code firstSeq} to the tail on a local path ({@link #localPath}). */
    private void scheduleLocal(final long firstSeq, final long nowNs) {
        long ordered = Math.max(lastExecuteAt, nowNs);
        long complete = lastCompleteAt;
        for (long s = firstSeq; s < tail; s++) {
            final Slot slot = slots[(int) (s & mask)];
            final long bytes = requestPayload(slot) + responsePayload(slot);
            ordered = Math.max(ordered, nowNs + localPathNs
                + Math.round(bytes * io.scythe.fabric.FabricOptions.LOCAL_NS_PER_BYTE));
            slot.executeAt = ordered;
            complete = Math.max(complete, ordered + localPathNs);
            slot.completeAt = complete;
        }
        lastExecuteAt = ordered;
        lastCompleteAt = complete;
    }

    /** Times the requests from {@code firstSeq} to the tail: the timeline documented on {@link CostModel}. */
    private void schedule(final long firstSeq, final long nowNs) {
        if (localPathNs >= 0) {
            scheduleLocal(firstSeq, nowNs);
            return;
        }
        // Requester: the doorbell, then the whole batch leaves the TX port back to back.
        double txDuration = 0;
        for (long s = firstSeq; s < tail; s++) {
            txDuration += issueNs(slots[(int) (s & mask)]);
        }
        final long txStart = localTimeline.reserve(NicTimeline.TX_PORT, nowNs + model.doorbellNs(),
            Math.round(txDuration));
        // Arrival of each request at the responder (kept in executeAt until the responder pass below); a QP whose
        // context the responder NIC does not hold waits for it to be fetched over PCIe.
        final NicTimeline remote = peer.timeline();
        final long injectedNs = delayInjector == null ? 0 : delayInjector.extraNs(localNode, remoteNode, qpNumber);
        final long heldNs = delayInjector == null ? 0 : delayInjector.heldNs(localNode, remoteNode, qpNumber);
        double departed = txStart + (remote.qpContextMiss(peerQpId) ? model.pcieRoundTripNs() : 0);
        for (long s = firstSeq; s < tail; s++) {
            final Slot slot = slots[(int) (s & mask)];
            departed += issueNs(slot);
            slot.executeAt = (long) departed + model.oneWayLatencyNs() + injectedNs + heldNs
                + (slot.payloadDma ? model.pcieRoundTripNs() : 0);
        }
        // Responder: requests of a QP enter its pipeline in order (pipelined: the next one starts once this one has
        // left the processing unit), and take effect in order (executeAt never decreases). Runs of READ/WRITE/SEND
        // share one booking of the processing unit. An atomic holds the atomic unit for its slot and its address for
        // the same-address hold; only a later atomic on the same address waits for that hold, as on the NIC.
        long pipeline = lastPipelineAt;
        long ordered = lastExecuteAt;
        long s = firstSeq;
        while (s < tail) {
            final Slot slot = slots[(int) (s & mask)];
            if (slot.opcode.isAtomic()) {
                final MemoryKind kind = kindOf(slot);
                final long unitNs = Math.round(model.atomicOpNs(kind));
                final long unitStart = remote.reserve(NicTimeline.atomicUnit(kind),
                    Math.max(slot.executeAt, pipeline), unitNs);
                final long hold = model.atomicSameAddressNs(kind);
                final long conflictHold = model.atomicConflictHoldNs(kind);
                final long perQueued = model.atomicQueuedHoldNs(kind);
                final long addressEnd;
                if (perQueued == 0) {
                    final long addressStart = remote.reserveInTurn(remote.bucketOffset(slot.remoteAddress), unitStart,
                        hold, conflictHold);
                    addressEnd = addressStart + (addressStart > unitStart ? conflictHold : hold);
                } else {
                    addressEnd = remote.reserveInTurnUntil(remote.bucketOffset(slot.remoteAddress), unitStart,
                        hold, conflictHold, perQueued);
                }
                pipeline = unitStart + unitNs;
                ordered = Math.max(ordered, Math.max(unitStart + unitNs, addressEnd + model.atomicPipelineNs(kind)));
                slot.executeAt = ordered;
                s++;
                continue;
            }
            long runEnd = s;
            while (runEnd < tail && !slots[(int) (runEnd & mask)].opcode.isAtomic()) {
                runEnd++;
            }
            final long unitStart = remote.reserve(NicTimeline.RESPONDER_UNIT,
                Math.max(slot.executeAt, pipeline), Math.round((runEnd - s) * model.responderOpNs()));
            double served = unitStart;
            for (; s < runEnd; s++) {
                final Slot run = slots[(int) (s & mask)];
                served = Math.max(served, run.executeAt) + model.responderOpNs();
                long done = (long) served;
                if (run.opcode == Opcode.READ && kindOf(run) == MemoryKind.HOST) {
                    done += model.pcieRoundTripNs(); // DMA read of host memory before the response can leave
                }
                ordered = Math.max(ordered, done);
                run.executeAt = ordered;
            }
            pipeline = Math.max(pipeline, (long) served);
        }
        // Responses leave the responder's TX port, then cross the wire back; completions stay in order.
        double responseDuration = 0;
        for (long r = firstSeq; r < tail; r++) {
            responseDuration += model.serializationNs(responsePayload(slots[(int) (r & mask)]));
        }
        final long responseStart = remote.reserve(NicTimeline.TX_PORT,
            slots[(int) (firstSeq & mask)].executeAt, Math.round(responseDuration));
        double responded = responseStart;
        long previousComplete = lastCompleteAt;
        for (long r = firstSeq; r < tail; r++) {
            final Slot slot = slots[(int) (r & mask)];
            responded = Math.max(responded, slot.executeAt) + model.serializationNs(responsePayload(slot));
            previousComplete = Math.max(previousComplete, (long) responded + model.oneWayLatencyNs() + injectedNs);
            slot.completeAt = previousComplete;
        }
        lastPipelineAt = pipeline;
        lastExecuteAt = ordered;
        lastCompleteAt = previousComplete;
    }

    /** Time a request occupies the requester's TX port: issue slot plus serialization. */
    private double issueNs(final Slot slot) {
        // The NIC's message rate and the link's bandwidth limit it at once, not one after the other.
        return Math.max(model.requesterOpNs(), model.serializationNs(requestPayload(slot)));
    }

    private static MemoryKind kindOf(final Slot slot) {
        final RegionView r = slot.region;
        return r == null ? MemoryKind.HOST : r.kind();
    }

    private static int requestPayload(final Slot slot) {
        final Opcode op = slot.opcode;
        if (op == Opcode.WRITE || op == Opcode.SEND) {
            return slot.length;
        }
        return op.isAtomic() ? 2 * Long.BYTES : 0;
    }

    private static int responsePayload(final Slot slot) {
        final Opcode op = slot.opcode;
        return op == Opcode.READ ? slot.length : op.isAtomic() ? Long.BYTES : 0;
    }

    // ------------------------------------------------------------------------------------------------ progress

    /** Executes and completes what is due at {@code nowNs}; called by the completion queue's poll. */
    int progress(final long nowNs, final CompletionHandler handler, final int maxCompletions) {
        if (shared) {
            // Completions are delivered with the lock held: a handler posting on this QP re-enters it.
            synchronized (this) {
                return progressLocked(nowNs, handler, maxCompletions);
            }
        }
        return progressLocked(nowNs, handler, maxCompletions);
    }

    private int progressLocked(final long nowNs, final CompletionHandler handler, final int maxCompletions) {
        int work = 0;
        while (executed < tail) {
            final Slot slot = slots[(int) (executed & mask)];
            if (!free && slot.executeAt - nowNs > 0) {
                break;
            }
            executed++;
            execute(slot);
            work++;
        }
        int delivered = 0;
        while (head < executed && delivered < maxCompletions) {
            final Slot slot = slots[(int) (head & mask)];
            if (!free && slot.completeAt - nowNs > 0) {
                break;
            }
            head++;
            cq.completing(free ? nowNs : slot.completeAt);
            final WcStatus st = slot.status;
            final boolean report = slot.signaled || st != WcStatus.SUCCESS;
            final Opcode op = slot.opcode;
            final int bytes = st == WcStatus.SUCCESS ? (op == Opcode.WRITE || op == Opcode.SEND ? 0 : slot.length) : 0;
            slot.local = null;
            slot.region = null;
            cq.completed(1);
            work++;
            if (report) {
                delivered++;
                handler.onCompletion(this, slot.wrId, op, st, bytes);
            }
        }
        lastDelivered = delivered;
        return work;
    }

    int lastDelivered() {
        return lastDelivered;
    }

    /** When this QP next has work: its next execution or its next completion. */
    long nextEventNs() {
        if (head == tail) {
            return Long.MAX_VALUE;
        }
        if (free) {
            return 0;
        }
        final long complete = slots[(int) (head & mask)].completeAt;
        return executed < tail ? Math.min(complete, slots[(int) (executed & mask)].executeAt) : complete;
    }

    private void execute(final Slot slot) {
        connection.beginExecution();
        try {
            executeChecked(slot);
        } finally {
            connection.endExecution();
        }
    }

    private void executeChecked(final Slot slot) {
        WcStatus result;
        if (revokedLocally || connection.isRevoked()) {
            state = QpState.REVOKED;
            result = WcStatus.REVOKED;
        } else if (state != QpState.READY) {
            result = state == QpState.REVOKED ? WcStatus.REVOKED : WcStatus.WR_FLUSH_ERROR;
        } else if (connection.isClosed()) {
            result = WcStatus.TRANSPORT_RETRY_EXCEEDED;
        } else if (slot.opcode == Opcode.SEND) {
            result = peerReceiveQueue == null
                ? WcStatus.RNR_RETRY_EXCEEDED
                : peerReceiveQueue.deliver(slot.local, slot.localOffset, slot.length);
        } else {
            if (slot.region == NicClockView.INSTANCE) {
                result = readPeerClock(slot);
            } else {
                RegionView target = slot.region;
                if (target == null || !target.isRegistered()) {
                    target = peer.region(slot.rkey);
                }
                result = OneSidedOps.execute(slot.opcode, target, slot.rkey, slot.remoteAddress, slot.local,
                    slot.localOffset, slot.length, slot.compareOrAdd, slot.swap);
            }
            if (result == WcStatus.SUCCESS && verbFaultInjector != null) {
                final WcStatus injected = verbFaultInjector.afterLanding(this, slot.opcode); // landed all the same
                result = injected == null ? result : injected;
            }
        }
        if (result != WcStatus.SUCCESS && state == QpState.READY) {
            state = QpState.ERROR;
        }
        slot.status = result;
    }

    /**
     * A READ of the responder's {@link NicClockWord}: its NIC clock at the READ's modelled execution time (at once
     * with a free model, which executes at post).
     */
    private WcStatus readPeerClock(final Slot slot) {
        final WcStatus check = NicClockWord.check(slot.opcode, slot.remoteAddress, slot.length);
        if (check == WcStatus.SUCCESS) {
            ((MutableDirectBuffer) slot.local).putLong(slot.localOffset,
                peer.nicClock().at(free ? clock.nanoTime() : slot.executeAt));
        }
        return check;
    }

    // ------------------------------------------------------------------------------------------------ the rest

    @Override
    public int postRecv(final MutableDirectBuffer buffer, final int offset, final int length, final long wrId) {
        if (cq == null || receiveQueue == null || state == QpState.CLOSED) {
            return NOT_CONNECTED;
        }
        if (!shared) {
            cq.checkOwner();
        }
        if (buffer == null || length < 0 || offset < 0 || offset > buffer.capacity() - length) {
            return INVALID_REQUEST;
        }
        final int code = receiveQueue.post(buffer, offset, length, wrId);
        if (code != POST_OK) {
            return code;
        }
        if (receiveQueue.polled()) {
            cq.receiving(this);
        }
        return POST_OK;
    }

    /** Delivers RECV completions of a polled receive queue. */
    int drainReceives(final CompletionHandler handler, final int max) {
        return receiveQueue == null ? 0 : receiveQueue.drain(this, handler, max);
    }

    /** Whether this end still has receive buffers to poll. */
    boolean receiving() {
        return receiveQueue != null && receiveQueue.polled() && receiveQueue.posted() > 0 && state != QpState.CLOSED;
    }

    /**
     * Reports a SEND that landed in this end's receive buffer {@code wrId} ({@link WcStatus#LOCAL_LENGTH_ERROR} when
     * the buffer was too small for it); called on the sender's thread.
     */
    public void received(final long wrId, final int length, final WcStatus status) {
        if (cq != null) {
            cq.received(this, wrId, length, status);
        }
    }

    @Override
    public boolean reset() {
        if (state == QpState.ERROR && head == tail && !connection.isRevoked()) {
            state = QpState.READY;
            return true;
        }
        return state == QpState.READY;
    }

    @Override
    public void revoke() {
        revokedLocally = true;
        connection.revoke();
    }

    @Override
    public void close() {
        if (state == QpState.CLOSED) {
            return;
        }
        // Requests not executed yet are flushed at the next poll.
        state = QpState.CLOSED;
        connection.close();
    }

    @Override
    public int qpNumber() {
        return qpNumber;
    }

    @Override
    public String localNode() {
        return localNode;
    }

    @Override
    public String remoteNode() {
        return remoteNode;
    }

    @Override
    public QpState state() {
        if (state == QpState.READY && (revokedLocally || connection.isRevoked())) {
            return QpState.REVOKED;
        }
        return state;
    }

    @Override
    public int outstanding() {
        if (shared) {
            synchronized (this) {
                return (int) (tail - head);
            }
        }
        return (int) (tail - head);
    }

    @Override
    public QpOptions options() {
        return options;
    }

    @Override
    public Object attachment() {
        return attachment;
    }

    @Override
    public void attachment(final Object attachment) {
        this.attachment = attachment;
    }

    public boolean isPassive() {
        return cq == null;
    }

    @Override
    public String toString() {
        return "EmulatedQueuePair{" + localNode + "->" + remoteNode + " qp=" + qpNumber + " state=" + state()
            + " outstanding=" + outstanding() + '}';
    }
}
