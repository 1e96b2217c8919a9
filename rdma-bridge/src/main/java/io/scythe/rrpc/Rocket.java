package io.scythe.rrpc;

import io.scythe.bridge.Bridge;
import io.scythe.fabric.MemoryRegion;
import io.scythe.fabric.QueuePair;
import io.scythe.fabric.WcStatus;
import io.scythe.fabric.WorkRequest;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.internal.ContextInternal;
import org.agrona.BufferUtil;
import org.agrona.DirectBuffer;
import org.agrona.collections.Int2ObjectHashMap;
import org.agrona.concurrent.AtomicBuffer;
import org.agrona.concurrent.UnsafeBuffer;

import java.nio.charset.StandardCharsets;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;

/**
 * The sending side of RRPC for one event loop and one remote node (Scythe §4.6, Fig. 19): a ring in the remote
 * node's inbox, filled bucket by bucket. The calls of one round of the loop are packed into buckets (message
 * batching) and the round's buckets leave as one doorbell batch of WRITEs (doorbell batching) when the round ends.
 * Replies come back into this Rocket's reply ring, polled in the loop's bridge duty cycle. Loop-confined.
 *
 * <p>Timeouts ({@link RrpcOptions#callTimeoutNs()}): each call gets a deadline when it is made; the duty cycle fails
 * the calls whose deadline passed with {@link RpcException#TIMED_OUT} (in call order: one bound per client, so the
 * deadlines are in that order too) and forgets them, so a reply that comes later finds no call and is dropped.
 * A call that timed out although the server answered a later one is {@link RpcException#taken() taken}: the server
 * read it and lived on.
 */
public final class Rocket implements Bridge.Poller {
    private static final int REPLIES_PER_POLL = 32;

    private final RrpcClient client;
    private final String server;
    private final String endpoint;
    private final RrpcClient.ReplyRing replyRing;
    private final Bridge bridge;
    private final ContextInternal context;
    private final RrpcOptions options;
    private final int bucketBytes;
    private final int ringBuckets;
    private final UnsafeBuffer staging;
    private final int[] sealedBytes;
    private final AtomicBuffer replyMemory;
    private final int replyOffset;
    private final MemoryRegion replies;
    private final Int2ObjectHashMap<Promise<RpcReply>> pending = new Int2ObjectHashMap<>();
    /** Calls with a deadline, in call order; answered ones leave when they reach the head. */
    private final ArrayDeque<Deadline> deadlines = new ArrayDeque<>();
    private final long callTimeoutNs;
    private final ArrayDeque<Outgoing> backlog = new ArrayDeque<>();
    private final List<WorkRequest> wrPool = new ArrayList<>();
    private final Runnable flushTask = this::flush;
    private final UnsafeBuffer composed;
    private QueuePair qp;
    private long ringAddress;
    private int ringRkey;
    private boolean open;
    private RpcException broken;
    private long sendSeq;
    private long postedSeq;
    private int used;
    private int count;
    private int serverConsumed;
    private long replySeq;
    private int replyConsumed;
    private int replyAckSent;
    private int nextCallId = 1;
    /** The latest call (in call order, ids wrapping) any reply answered, late or not; 0 before the first reply. */
    private int answeredCallId;
    private boolean flushScheduled;
    private long calls;
    private long doorbells;
    private long timeouts;

    Rocket(final RrpcClient client, final String server, final String endpoint, final Bridge bridge,
           final ContextInternal context, final RrpcClient.ReplyRing replyRing) {
        this.client = client;
        this.server = server;
        this.endpoint = endpoint;
        this.replyRing = replyRing;
        this.bridge = bridge;
        this.context = context;
        this.options = client.options();
        this.bucketBytes = options.bucketBytes();
        this.ringBuckets = options.ringBuckets();
        this.staging = new UnsafeBuffer(BufferUtil.allocateDirectAligned(options.ringBytes(), 64));
        this.sealedBytes = new int[ringBuckets];
        this.composed = new UnsafeBuffer(new byte[options.maxPayload() + MessageLayout.TARGET_BYTES]);
        this.replies = replyRing.region();
        this.replyMemory = replies.buffer();
        this.replyOffset = replyRing.offset();
        this.callTimeoutNs = options.callTimeoutNs();
    }

    /** Attaches to the ring the server gave; calls made before are sent now. */
    void opened(final QueuePair qp, final long ringAddress, final int ringRkey) {
        this.qp = qp;
        this.ringAddress = ringAddress;
        this.ringRkey = ringRkey;
        this.open = true;
        bridge.addPoller(this);
        drainBacklog();
        scheduleFlush();
    }

    QueuePair queuePair() {
        return qp;
    }

    /** The largest request payload {@link #call} sends (one RRPC bucket). */
    public int maxPayload() {
        return options.maxPayload();
    }

    /** The node called. */
    public String server() {
        return server;
    }

    /** Which of the node's servers is called ({@code null}: its only one). */
    public String endpoint() {
        return endpoint;
    }

    /** Why this Rocket can call no more (its connection failed, or it was given up), or {@code null}. */
    RpcException broken() {
        return broken;
    }

    RrpcClient.ReplyRing replyRing() {
        return replyRing;
    }

    Bridge bridge() {
        return bridge;
    }

    // ---------------------------------------------------------------------------------------------------- calls

    /** Calls {@code rpcId} with {@code payload[offset..offset+length)} (copied at once). */
    public Future<RpcReply> call(final int rpcId, final DirectBuffer payload, final int offset, final int length) {
        return send(rpcId, MessageLayout.KIND_REQUEST, payload, offset, length, null, 0, 0, NO_DEADLINE);
    }

    /** As {@link #call(int, DirectBuffer, int, int)}, failing at {@code deadlineNs} (bridge clock) at the latest. */
    Future<RpcReply> call(final int rpcId, final DirectBuffer payload, final int offset, final int length,
                          final long deadlineNs) {
        return send(rpcId, MessageLayout.KIND_REQUEST, payload, offset, length, null, 0, 0, deadlineNs);
    }

    public Future<RpcReply> call(final int rpcId, final DirectBuffer payload) {
        return call(rpcId, payload, 0, payload.capacity());
    }

    /**
     * Calls {@code rpcId} offering {@code target[offset..offset+capacity)}, registered on this node, for a zero-copy
     * reply (Fig. 20 (c)): a large reply is written there directly and the reply reports its length.
     */
    public Future<RpcReply> callZeroCopy(final int rpcId, final DirectBuffer payload, final int payloadOffset,
                                         final int length, final MemoryRegion target, final int offset,
                                         final int capacity) {
        if (offset < 0 || capacity < 0 || offset > target.length() - capacity) {
            return Future.failedFuture(new IllegalArgumentException("zero-copy target [" + offset + ", +"
                + capacity + ") is outside region " + target.name()));
        }
        return send(rpcId, MessageLayout.KIND_REQUEST_ZERO_COPY, payload, payloadOffset, length, target, offset,
            capacity, NO_DEADLINE);
    }

    /** Reads the data a descriptor reply points to (RPC and one-sided mode, Fig. 20 (b)) into {@code dst}. */
    public Future<Void> fetch(final RpcReply reply, final org.agrona.MutableDirectBuffer dst, final int dstOffset) {
        if (reply.mode() != RpcReply.Mode.DESCRIPTOR) {
            return Future.failedFuture(new IllegalArgumentException("reply is " + reply.mode() + ", not a descriptor"));
        }
        return client.oneSided(server)
            .compose(channel -> channel.read(reply.address(), reply.rkey(), dst, dstOffset, reply.length()));
    }

    /** A call's deadline when the caller gave none: {@link RrpcOptions#callTimeoutNs()} from now, if set. */
    private static final long NO_DEADLINE = Long.MIN_VALUE;

    private Future<RpcReply> send(final int rpcId, final short kind, final DirectBuffer payload, final int offset,
                                  final int length, final MemoryRegion target, final int targetOffset,
                                  final int capacity, final long deadlineNs) {
        bridge.checkThread();
        if (broken != null) {
            return Future.failedFuture(broken);
        }
        final int extra = kind == MessageLayout.KIND_REQUEST_ZERO_COPY ? MessageLayout.TARGET_BYTES : 0;
        if (rpcId < 0 || rpcId > 0xffff) {
            return Future.failedFuture(new IllegalArgumentException("rpc id " + rpcId + " out of range"));
        }
        if (length < 0 || length + extra > options.maxPayload()) {
            return Future.failedFuture(new RpcException(RpcException.TOO_LARGE, "request of " + length
                + " bytes exceeds an RRPC bucket (" + (options.maxPayload() - extra) + " bytes); send large data "
                + "one-sided"));
        }
        if (backlog.size() >= options.maxBacklog()) {
            return Future.failedFuture(new RpcException(RpcException.BACK_PRESSURE, "RRPC ring to " + server
                + " is full and " + backlog.size() + " calls are waiting"));
        }
        final int callId = nextCallId++;
        if (nextCallId == 0) {
            nextCallId = 1;
        }
        final Promise<RpcReply> promise = context != null ? context.promise() : Promise.promise();
        pending.put(callId, promise);
        if (deadlineNs != NO_DEADLINE) {
            deadlines.add(new Deadline(callId, rpcId, deadlineNs, promise));
        } else if (callTimeoutNs > 0) {
            deadlines.add(new Deadline(callId, rpcId, bridge.clock().nanoTime() + callTimeoutNs, promise));
        }
        DirectBuffer body = payload;
        int bodyOffset = offset;
        if (extra > 0) {
            // The target travels in front of the payload: assembled in a reusable buffer (loop-confined).
            composed.putLong(0, target.address() + targetOffset);
            composed.putInt(8, target.rkey());
            composed.putInt(12, capacity);
            composed.putBytes(extra, payload, offset, length);
            body = composed;
            bodyOffset = 0;
        }
        calls++;
        bridge.stats().rpcCall(rpcId, length);
        if (!open || !backlog.isEmpty() || !place(rpcId, kind, callId, body, bodyOffset, length + extra)) {
            // Only a message that must wait is copied.
            final UnsafeBuffer copy = new UnsafeBuffer(new byte[length + extra]);
            copy.putBytes(0, body, bodyOffset, length + extra);
            backlog.add(new Outgoing(rpcId, kind, callId, copy));
        }
        if (options.batching() || !open) {
            scheduleFlush();
        } else {
            flush(); // plain design: this message alone, now
        }
        return promise.future();
    }

    /** Puts a message in the open bucket, opening the next when there is credit; false when there is none. */
    private boolean place(final int rpcId, final short kind, final int callId, final DirectBuffer body,
                          final int bodyOffset, final int length) {
        final int bytes = MessageLayout.messageBytes(length);
        if (used > 0 && (!options.batching()
            || Bucket.room(bucketBytes, used - BucketLayout.HEADER_BYTES) < bytes)) {
            seal();
        }
        if (used == 0) {
            if ((int) sendSeq - serverConsumed >= ringBuckets) {
                return false;
            }
            used = BucketLayout.HEADER_BYTES;
            count = 0;
        }
        final int position = (int) (sendSeq % ringBuckets);
        used = Bucket.append(staging, position * bucketBytes, used, rpcId, kind, callId, body, bodyOffset, length);
        count++;
        return true;
    }

    private void drainBacklog() {
        while (!backlog.isEmpty()) {
            final Outgoing m = backlog.peek();
            if (!place(m.rpcId, m.kind, m.callId, m.body, 0, m.body.capacity())) {
                return;
            }
            backlog.poll();
        }
    }

    private void seal() {
        final int position = (int) (sendSeq % ringBuckets);
        sealedBytes[position] = Bucket.seal(staging, position * bucketBytes, used, sendSeq / ringBuckets,
            replyConsumed, count);
        replyAckSent = replyConsumed;
        sendSeq++;
        used = 0;
        count = 0;
    }

    private void scheduleFlush() {
        if (!flushScheduled && open) {
            flushScheduled = true;
            final java.util.concurrent.Executor deferred = bridge.deferredExecutor();
            if (deferred != null) {
                deferred.execute(flushTask); // a simulated loop: the end of the round is the simulator's
            } else if (context != null) {
                context.runOnContext(v -> flushTask.run());
            } else {
                flush();
            }
        }
    }

    /** The end of a round: seals the open bucket and WRITEs every sealed one with one doorbell. */
    private void flush() {
        flushScheduled = false;
        if (!open || broken != null) {
            return;
        }
        if (used > 0) {
            seal();
        }
        int n = 0;
        long bytes = 0;
        for (long seq = postedSeq; seq < sendSeq; seq++) {
            final int position = (int) (seq % ringBuckets);
            final int offset = position * bucketBytes;
            wr(n++).write(ringAddress + offset, ringRkey, staging, offset, sealedBytes[position]).signaled(false);
            bytes += sealedBytes[position];
        }
        if (n == 0) {
            return;
        }
        wrPool.get(n - 1).signaled(true); // lets the straw see a failure; unsignaled successes cost nothing
        for (int i = 0; i < n - 1; i++) {
            wrPool.get(i).link(wrPool.get(i + 1));
        }
        final int code = qp.post(wrPool.get(0));
        if (code == QueuePair.SEND_QUEUE_FULL) {
            scheduleFlush(); // the shared QP is busy: try again next round, buckets stay sealed
            return;
        }
        if (code != QueuePair.POST_OK) {
            disconnected(null);
            return;
        }
        postedSeq = sendSeq;
        doorbells++;
        bridge.stats().rpcBuckets(n, bytes);
        if (!pending.isEmpty()) {
            // Their replies come to this Rocket's ring, which only this loop's bridge polls; the post woke the bridge
            // owning the queue pair, which may be another loop's (a quiet loop would never see the replies).
            bridge.wake();
        }
    }

    private WorkRequest wr(final int index) {
        while (wrPool.size() <= index) {
            wrPool.add(new WorkRequest());
        }
        return wrPool.get(index).clear();
    }

    // -------------------------------------------------------------------------------------------------- replies

    /** Polls in a row that left replies in the ring (see {@link #poll}). */
    private int undrainedPolls;

    @Override
    public int poll(final long nowNs) {
        int work = 0;
        boolean drained = false;
        while (work < REPLIES_PER_POLL) {
            final int position = (int) (replySeq % ringBuckets);
            final int bucket = replyOffset + position * bucketBytes;
            final int length = Bucket.ready(replyMemory, bucket, bucketBytes, replySeq / ringBuckets);
            if (length < 0) {
                if (length == -2) {
                    failAll(new RpcException(RpcException.MALFORMED, "malformed reply bucket from " + server));
                }
                drained = true;
                break;
            }
            final int ack = replyMemory.getInt(bucket + BucketLayout.ACK_OFFSET);
            if (ack - serverConsumed > 0) {
                serverConsumed = ack;
            }
            deliver(bucket, length);
            Bucket.release(replyMemory, bucket, length);
            replySeq++;
            replyConsumed++;
            work++;
        }
        // Deadlines only once the replies that came are read: a loop that did not run for a while (starved, paused)
        // finds its calls past their deadline with their replies waiting in the ring, and the peer answered in time.
        // While replies are left unread (more than a poll takes), they are judged on a later poll; but a ring never
        // found empty (replies keep coming) is judged anyway once enough polls in a row read a whole ring's worth, so
        // that every reply waiting when the deadline passed was read, and a call whose reply never comes still ends.
        undrainedPolls = drained ? 0 : undrainedPolls + 1;
        if ((drained || (long) undrainedPolls * REPLIES_PER_POLL > ringBuckets) && !deadlines.isEmpty()) {
            undrainedPolls = 0;
            work += expire(nowNs);
        }
        if (work > 0) {
            drainBacklog();
            if (replyConsumed - replyAckSent >= ringBuckets / 2 && used == 0 && backlog.isEmpty()
                && (int) sendSeq - serverConsumed < ringBuckets) {
                used = BucketLayout.HEADER_BYTES; // an empty bucket carrying only the acknowledgement
                count = 0;
            }
            if (used > 0 || postedSeq < sendSeq) {
                scheduleFlush();
            }
        }
        return work;
    }

    private void deliver(final int bucket, final int length) {
        final int end = bucket + BucketLayout.HEADER_BYTES + length;
        int at = bucket + BucketLayout.HEADER_BYTES;
        while (at + MessageLayout.HEADER_BYTES <= end) {
            final short kind = replyMemory.getShort(at + MessageLayout.KIND_OFFSET);
            final int callId = replyMemory.getInt(at + MessageLayout.CALL_ID_OFFSET);
            final int payloadLength = replyMemory.getInt(at + MessageLayout.LENGTH_OFFSET);
            final int payload = at + MessageLayout.HEADER_BYTES;
            if (payloadLength < 0 || payloadLength > end - payload) {
                failAll(new RpcException(RpcException.MALFORMED, "malformed reply from " + server));
                return;
            }
            at = payload + ((payloadLength + 7) & ~7);
            if (answeredCallId == 0 || callId - answeredCallId > 0) {
                answeredCallId = callId;
            }
            final Promise<RpcReply> promise = pending.remove(callId);
            if (promise == null) {
                continue; // a reply to a call already failed (e.g. cut off): nothing waits for it
            }
            switch (kind) {
                case MessageLayout.KIND_REPLY: {
                    final UnsafeBuffer copy = new UnsafeBuffer(new byte[payloadLength]);
                    copy.putBytes(0, replyMemory, payload, payloadLength);
                    promise.complete(RpcReply.inline(copy));
                    break;
                }
                case MessageLayout.KIND_DESCRIPTOR:
                    promise.complete(RpcReply.descriptor(replyMemory.getLong(payload),
                        replyMemory.getInt(payload + 8), replyMemory.getInt(payload + 12)));
                    break;
                case MessageLayout.KIND_ZERO_COPY_DONE:
                    promise.complete(RpcReply.zeroCopy(replyMemory.getInt(payload)));
                    break;
                case MessageLayout.KIND_ERROR: {
                    final int code = payloadLength >= 4 ? replyMemory.getInt(payload) : RpcException.MALFORMED;
                    final String text = payloadLength > 4
                        ? replyMemory.getStringWithoutLengthUtf8(payload + 4, payloadLength - 4) : "error";
                    promise.fail(new RpcException(code, text));
                    break;
                }
                default:
                    promise.fail(new RpcException(RpcException.MALFORMED, "reply of unknown kind " + kind + " from "
                        + server));
            }
        }
    }

    /** Fails the calls whose deadline passed; drops answered calls from the head of the list. */
    private int expire(final long nowNs) {
        int expired = 0;
        Deadline head;
        while ((head = deadlines.peek()) != null) {
            if (head.promise.future().isComplete()) {
                deadlines.poll(); // answered (or failed) already
                continue;
            }
            if (head.atNs - nowNs > 0) {
                break;
            }
            deadlines.poll();
            pending.remove(head.callId);
            timeouts++;
            expired++;
            // Issue 20 (rrpcheal): a server that answered a later call read this one and lived on (a ring is served
            // in order); the caller need not wait to learn whether the node died with it.
            final boolean taken = answeredCallId != 0 && answeredCallId - head.callId > 0;
            head.promise.tryFail(new RpcException(RpcException.TIMED_OUT, "RRPC call 0x"
                + Integer.toHexString(head.rpcId) + " to " + destination() + " got no reply within "
                + timeoutText() + (taken ? " (the peer took it: it answered a later call)"
                : " (the peer is dead, paused or overloaded)") + "; a late reply is dropped", taken));
        }
        return expired;
    }

    private String timeoutText() {
        if (callTimeoutNs == 0) {
            return "its deadline";
        }
        return callTimeoutNs % 1_000_000 == 0 ? callTimeoutNs / 1_000_000 + " ms" : callTimeoutNs / 1_000.0 + " us";
    }

    /** The node and server called, as {@code node} or {@code node/endpoint}. */
    public String destination() {
        return endpoint == null ? server : server + "/" + endpoint;
    }

    @Override
    public boolean busy() {
        return !pending.isEmpty();
    }

    /**
     * The queue pair failed (or was revoked): every call in flight and every later one fails, on this Rocket's loop.
     * The shared queue pair's failure is reported on the loop that polls its completions ({@link RdmaStraws}), which
     * may be another's.
     */
    void disconnected(final WcStatus status) {
        if (context != null && !context.inThread()) {
            context.runOnContext(v -> disconnected(status));
            return;
        }
        if (Bridge.currentOrNull() != bridge) {
            // The simulator runs every loop on one thread, so the context is "in thread" for all of them: the current
            // bridge tells whose turn it is. Failed under another loop's bridge, a caller's continuation (its next
            // transaction) ran as that loop: Aurogon's 2LClock probe then refused the other loop's NodeClocks
            // (seed 40071 of the CN+MN crash explorer).
            bridge.execute(() -> disconnected(status));
            return;
        }
        failAll(new RpcException(RpcException.DISCONNECTED, "RRPC connection to " + server + " failed"
            + (status == null ? "" : ": " + status)));
    }

    /**
     * Fails every call in flight and every later one with {@code cause} and stops polling: the server left (its node
     * left the cluster) or the client is closing. Call on the loop.
     */
    void abandon(final RpcException cause) {
        bridge.checkThread();
        failAll(cause);
        bridge.removePoller(this);
    }

    private void failAll(final RpcException cause) {
        broken = cause;
        open = false;
        backlog.clear();
        deadlines.clear();
        final List<Promise<RpcReply>> failed = new ArrayList<>(pending.values());
        pending.clear();
        for (final Promise<RpcReply> p : failed) {
            p.tryFail(cause);
        }
    }

    /** Calls made through this Rocket. */
    public long calls() {
        return calls;
    }

    /** Doorbells rung (each one a batch of bucket WRITEs). */
    public long doorbells() {
        return doorbells;
    }

    /** Buckets sent. */
    public long buckets() {
        return sendSeq;
    }

    public int outstanding() {
        return pending.size();
    }

    /** Calls that failed because no reply came in time. */
    public long timeouts() {
        return timeouts;
    }

    static String text(final byte[] bytes) {
        return new String(bytes, StandardCharsets.UTF_8);
    }

    private record Outgoing(int rpcId, short kind, int callId, UnsafeBuffer body) {
    }

    private record Deadline(int callId, int rpcId, long atNs, Promise<RpcReply> promise) {
    }
}
