package io.scythe.rrpc;

import io.scythe.bridge.Bridge;
import io.scythe.fabric.CompletionHandler;
import io.scythe.fabric.CompletionQueue;
import io.scythe.fabric.MemoryKind;
import io.scythe.fabric.MemoryRegion;
import io.scythe.fabric.Nic;
import io.scythe.fabric.Opcode;
import io.scythe.fabric.QpOptions;
import io.scythe.fabric.QueuePair;
import io.scythe.fabric.WcStatus;
import io.scythe.fabric.WorkRequest;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.eventbus.Message;
import io.vertx.core.eventbus.MessageConsumer;
import io.vertx.core.internal.logging.Logger;
import io.vertx.core.internal.logging.LoggerFactory;
import io.vertx.core.json.JsonObject;
import org.agrona.DirectBuffer;
import org.agrona.collections.Int2ObjectHashMap;
import org.agrona.concurrent.AtomicBuffer;
import org.agrona.concurrent.UnsafeBuffer;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * The receiving side of RRPC on one node (Scythe §4.6, Fig. 19 steps 3-7): an inbox of rings in registered memory,
 * one per (client node, event loop), into which clients RDMA-WRITE buckets of requests; the server's CPU polls the
 * rings, runs each request's handler, packs the replies of a round into buckets per client, and WRITEs them into the
 * client's reply ring with one doorbell per client.
 *
 * <p>It runs on one event loop (the memory node's "core": its handlers never run in parallel), polled by that loop's
 * {@link Bridge}. Where the fabric shows peer writes to this process ({@link MemoryRegion#observesRemoteWrites()})
 * a landing WRITE wakes it; otherwise it polls continuously while clients are connected.
 *
 * <p>Credits: a client may fill a ring bucket only when the server has consumed the bucket's previous lap (the
 * server reports consumption in each reply bucket), and the server likewise for reply rings; both send an empty
 * bucket carrying only the acknowledgement when half a ring is unacknowledged.
 */
public final class RpcServer implements Bridge.Poller, CompletionHandler {
    private static final Logger LOG = LoggerFactory.getLogger(RpcServer.class);
    private static final int BUCKETS_PER_RING_PER_POLL = 16;

    private final Vertx vertx;
    private final Nic nic;
    private final RrpcOptions options;
    /** Which of the node's servers this is ({@code null}: its only one, a memory node's). */
    private final String endpoint;
    private final Int2ObjectHashMap<RpcHandler> handlers = new Int2ObjectHashMap<>();
    private final List<Runnable> roundEndHooks = new ArrayList<>();
    private final Map<String, ServerRing> ringsByClient = new HashMap<>();
    private final Map<String, QueuePair> qpByClient = new HashMap<>();
    /** Reconnects after failed reply WRITEs, by client ({@link Reconnect}). */
    private final Map<String, Reconnect> reconnects = new HashMap<>();
    /** When the next {@link Reconnect} is due ({@link CompletionQueue#NO_EVENT}: none). */
    private long reconnectWakeNs = CompletionQueue.NO_EVENT;
    /** Connects under way, by client ({@link #connectTo}). */
    private final Map<String, Future<QueuePair>> connecting = new HashMap<>();
    private final List<ServerRing> rings = new ArrayList<>();
    private List<ServerRing> dirty = new ArrayList<>();
    /** The rings a poll flushes, swapped with {@link #dirty} (no array per poll); empty between polls. */
    private List<ServerRing> flushing = new ArrayList<>();
    private final RpcRequest request = new RpcRequest();
    /**
     * The responder of the next request: the one of the last request again when its handler answered before it
     * returned (one object per kept call, not per request; {@link RpcResponder}'s contract).
     */
    private RpcResponder responder = new RpcResponder(this);
    private final List<WorkRequest> wrPool = new ArrayList<>();
    private final UnsafeBuffer scratch = new UnsafeBuffer(new byte[64]);
    private MemoryRegion inbox;
    private AtomicBuffer inboxMemory;
    private Bridge bridge;
    private CompletionQueue cq;
    private MessageConsumer<JsonObject> opens;
    private boolean spin;
    /** Slows a spinning server once idle ({@link RrpcOptions#idlePollNs()}); set up at {@link #start}. */
    private io.scythe.bridge.IdlePolling idlePolling;
    private long requests;
    private long buckets;
    private long malformed;
    private long resumedRings;
    private long staleReplies;

    public RpcServer(final Vertx vertx, final Nic nic, final RrpcOptions options) {
        this(vertx, nic, options, null);
    }

    /**
     * One of several servers of a node, named {@code endpoint} (a compute node serves peers on each event loop,
     * {@link CnPeers}): its inbox and the address where clients open rings carry the name.
     */
    public RpcServer(final Vertx vertx, final Nic nic, final RrpcOptions options, final String endpoint) {
        this.vertx = vertx;
        this.nic = nic;
        this.options = new RrpcOptions(options.toJson());
        this.endpoint = endpoint == null ? null : io.scythe.fabric.FabricOptions.checkName("endpoint", endpoint);
    }

    /** Event-bus address where clients open a ring on {@code node}. */
    public static String openAddress(final String node) {
        return "scythe.rrpc." + node + ".open";
    }

    /** Event-bus address where clients open a ring on server {@code endpoint} of {@code node} ({@code null}: its only one). */
    public static String openAddress(final String node, final String endpoint) {
        return endpoint == null ? openAddress(node) : "scythe.rrpc." + node + "/" + endpoint + ".open";
    }

    /** The name of this server among its node's ({@code null}: the node's only one). */
    public String endpoint() {
        return endpoint;
    }

    /** The RPC ids with a handler, ascending. */
    public int[] rpcIds() {
        return handlers.keySet().stream().mapToInt(Integer::intValue).sorted().toArray();
    }

    /** Serves {@code rpcId} with {@code handler}; register before clients call. */
    public RpcServer handle(final int rpcId, final RpcHandler handler) {
        if (rpcId < 0 || rpcId > 0xffff) {
            throw new IllegalArgumentException("rpc id " + rpcId + " must be within [0, 65535]");
        }
        handlers.put(rpcId, handler);
        return this;
    }

    /**
     * Runs {@code hook} after each poll round that took requests, before the round's replies are flushed: handlers
     * that defer their answer (keeping the responder) can then answer the whole round at once, in an order of their
     * choosing. Call before {@link #start()}.
     */
    public RpcServer onRoundEnd(final Runnable hook) {
        roundEndHooks.add(hook);
        return this;
    }

    /**
     * Cores of their own for groups of rings (a model's: the simulator's co-located servers, whose threads each poll
     * their own queue): a ring is drained only when its queue's core is free, and its requests then keep that core
     * busy. Without it ({@code null}, the default) the polling loop serves every ring as one core.
     */
    public interface RingQueues {
        /** The queue of the ring that {@code client}'s loop {@code loop} opened. */
        int queueOf(String client, int loop);

        /** When {@code queue}'s core is next free (at or before {@code nowNs}: now). */
        long freeAtNs(int queue, long nowNs);

        /** {@code queue}'s core took {@code requests} requests at {@code nowNs}. */
        void served(int queue, long nowNs, long requests);
    }

    private RingQueues ringQueues;
    /** The earliest time a skipped ring's busy queue frees ({@link #wakeAtNs}); NO_EVENT when none waits. */
    private long queueWakeNs = io.scythe.fabric.CompletionQueue.NO_EVENT;

    /** Gives groups of rings cores of their own ({@link RingQueues}); call before {@link #start()}. */
    public RpcServer ringQueues(final RingQueues queues) {
        this.ringQueues = queues;
        return this;
    }

    private long fencedBuckets;
    /** Whether {@link #pause} stopped the polling. */
    private boolean paused;

    /** Starts serving; call on the event loop that will be the server's core (it needs a running bridge). */
    public Future<Void> start() {
        bridge = Bridge.current();
        cq = bridge.completionQueue(nic);
        inbox = nic.register(endpoint == null ? "rrpc.inbox" : "rrpc.inbox." + endpoint,
            (long) options.maxRings() * options.ringBytes(), MemoryKind.HOST);
        inboxMemory = inbox.buffer();
        spin = options.spinServer() || !inbox.observesRemoteWrites();
        idlePolling = new io.scythe.bridge.IdlePolling(options.idlePollNs());
        inbox.remoteWriteListener(bridge::wake);
        bridge.addPoller(this);
        opens = vertx.eventBus().consumer(openAddress(nic.node(), endpoint), this::onOpen);
        return opens.completion();
    }

    /**
     * Stops polling the inbox, as a memory node whose CPU is paused or hung: requests land in the rings (one-sided
     * WRITEs need no CPU) and wait there unanswered, so the clients' calls end only by their bound
     * ({@link RrpcOptions#callTimeoutNs()}). {@link #resume} polls again. For fault tests; call on the server's loop.
     */
    public void pause() {
        bridge.checkThread();
        if (!paused) {
            paused = true;
            bridge.removePoller(this);
        }
    }

    /** Polls the inbox again after {@link #pause}: what waited in the rings is served now. Server's loop. */
    public void resume() {
        bridge.checkThread();
        if (paused) {
            paused = false;
            bridge.addPoller(this);
        }
    }

    public Future<Void> stop() {
        bridge.checkThread();
        bridge.removePoller(this);
        inbox.remoteWriteListener(null);
        for (final QueuePair qp : qpByClient.values()) {
            qp.close();
        }
        final Future<Void> unregistered = opens == null ? Future.succeededFuture() : opens.unregister();
        nic.deregister(inbox);
        return unregistered;
    }

    RrpcOptions options() {
        return options;
    }

    /** A small buffer whose contents a reply copies at once (server thread only). */
    UnsafeBuffer scratch() {
        return scratch;
    }

    // ------------------------------------------------------------------------------------------------- opening

    private void onOpen(final Message<JsonObject> message) {
        final JsonObject open = message.body();
        final String client;
        final int loop;
        final long replyAddress;
        final int replyRkey;
        try {
            client = open.getString("client");
            loop = open.getInteger("loop");
            replyAddress = open.getLong("replyAddress");
            replyRkey = open.getInteger("replyRkey");
            final int bucketBytes = open.getInteger("bucketBytes");
            final int ringBuckets = open.getInteger("ringBuckets");
            if (client == null || bucketBytes != options.bucketBytes() || ringBuckets != options.ringBuckets()) {
                message.fail(400, "RRPC ring geometry mismatch: server " + nic.node() + " uses "
                    + options.ringBuckets() + " buckets of " + options.bucketBytes() + " bytes, client asked "
                    + ringBuckets + " of " + bucketBytes);
                return;
            }
        } catch (final RuntimeException e) {
            message.fail(400, "malformed RRPC open request: " + e.getMessage());
            return;
        }
        final String key = client + "#" + loop;
        ServerRing ring = ringsByClient.get(key);
        if (ring == null) {
            if (rings.size() == options.maxRings()) {
                message.fail(503, "RRPC server " + nic.node() + " has no free ring (maxRings="
                    + options.maxRings() + ")");
                return;
            }
            ring = new ServerRing(client, rings.size());
            ring.queue = ringQueues == null ? 0 : ringQueues.queueOf(client, loop);
            rings.add(ring);
            ringsByClient.put(key, ring);
        }
        final ServerRing opened = ring;
        opened.reset(replyAddress, replyRkey);
        // Off its old queue pair until its own connect completes (review of aurofix, finding 4): a resume pending
        // for the old one (onCompletion) skips it, as the ring is the client's new one now.
        opened.qp = null;
        opened.open = false;
        connectTo(client).onComplete(ar -> {
            if (ar.failed()) {
                message.fail(503, "RRPC server " + nic.node() + " cannot reach " + client + ": "
                    + ar.cause().getMessage());
                return;
            }
            opened.qp = ar.result();
            opened.open = true;
            idlePolling.expectWork(bridge.clock().nanoTime()); // a new client calls soon: spin for it first
            // A spinning server polls only once woken: a peer in another process (shm) wakes nothing by writing.
            bridge.wake();
            message.reply(new JsonObject()
                .put("ringAddress", inbox.address() + opened.inboxOffset)
                .put("ringRkey", inbox.rkey()));
        });
    }

    /**
     * The queue pair to {@code client}: the working one, else one connect shared by whoever asks while it is under
     * way (an open and a resume racing made two, and the loser was never closed: review of aurofix, finding 4); a
     * queue pair it replaces (failed, revoked) is closed.
     */
    private Future<QueuePair> connectTo(final String client) {
        final QueuePair existing = qpByClient.get(client);
        if (existing != null && existing.state() == io.scythe.fabric.QpState.READY) {
            return Future.succeededFuture(existing);
        }
        final Future<QueuePair> pending = connecting.get(client);
        if (pending != null) {
            return pending;
        }
        final Future<QueuePair> connect = nic.connect(client, cq, new QpOptions().sendQueueDepth(4096)).map(qp -> {
            qp.attachment(this);
            final QueuePair replaced = qpByClient.put(client, qp);
            if (replaced != null && replaced != qp && replaced.state() != io.scythe.fabric.QpState.CLOSED) {
                replaced.close();
            }
            return qp;
        });
        connecting.put(client, connect);
        connect.onComplete(ar -> connecting.remove(client, connect));
        return connect;
    }

    // ------------------------------------------------------------------------------------------------- polling

    @Override
    public int poll(final long nowNs) {
        int work = 0;
        if (reconnectWakeNs != CompletionQueue.NO_EVENT && nowNs - reconnectWakeNs >= 0) {
            reconnectsDue(nowNs);
        }
        queueWakeNs = io.scythe.fabric.CompletionQueue.NO_EVENT;
        for (int r = 0; r < rings.size(); r++) {
            final ServerRing ring = rings.get(r);
            if (ring.open) {
                work += ringQueues == null ? drain(ring) : drainQueued(ring, nowNs);
            }
        }
        idlePolling.polled(nowNs, work);
        if (work > 0) {
            for (int i = 0; i < roundEndHooks.size(); i++) { // indexed: no iterator per round
                // e.g. the Takeout Lock grants the round's requests sorted by (key, timestamp)
                roundEndHooks.get(i).run();
            }
        }
        if (!dirty.isEmpty()) {
            // A ring still short of credit marks itself dirty again for the next poll.
            final List<ServerRing> toFlush = dirty;
            dirty = flushing;
            flushing = toFlush;
            for (int i = 0; i < toFlush.size(); i++) {
                work += flush(toFlush.get(i));
            }
            toFlush.clear();
        }
        return work;
    }

    @Override
    public boolean busy() {
        return !dirty.isEmpty() || idlePolling.busy(spin && !rings.isEmpty());
    }

    /**
     * A spinning server polls only every {@link RrpcOptions#idlePollNs()} once that long passed without a request;
     * with {@link RingQueues}, also when a queue whose ring has requests waiting frees.
     */
    @Override
    public long wakeAtNs() {
        return Math.min(Math.min(idlePolling.wakeAtNs(spin && !rings.isEmpty()), queueWakeNs), reconnectWakeNs);
    }

    /** Drains {@code ring} if its queue's core is free, charging that core; else notes when to come back. */
    private int drainQueued(final ServerRing ring, final long nowNs) {
        final long freeAt = ringQueues.freeAtNs(ring.queue, nowNs);
        if (freeAt - nowNs > 0) {
            final int position = (int) (ring.receiveSeq % options.ringBuckets());
            final long lap = ring.receiveSeq / options.ringBuckets();
            if (Bucket.ready(inboxMemory, ring.inboxOffset + position * options.bucketBytes(), options.bucketBytes(),
                lap) != -1 || ring.replyBacklog.size() > 0) {
                queueWakeNs = Math.min(queueWakeNs, freeAt);
            }
            return 0;
        }
        final long before = requests;
        final int taken = drain(ring);
        if (requests != before) {
            ringQueues.served(ring.queue, nowNs, requests - before);
        }
        return taken;
    }

    /** Takes the complete buckets of {@code ring}, in order. */
    private int drain(final ServerRing ring) {
        int taken = 0;
        while (taken < BUCKETS_PER_RING_PER_POLL) {
            final int position = (int) (ring.receiveSeq % options.ringBuckets());
            final int bucket = ring.inboxOffset + position * options.bucketBytes();
            final long lap = ring.receiveSeq / options.ringBuckets();
            final int length = Bucket.ready(inboxMemory, bucket, options.bucketBytes(), lap);
            if (length == -1) {
                break;
            }
            if (length == -2) {
                // Not a bucket the client sealed: drop it without taking the slot, which its next WRITE fills.
                malformed++;
                LOG.warn("RRPC server " + nic.node() + ": bucket from " + ring.client + " claims more bytes than a "
                    + "bucket holds; dropped");
                inboxMemory.putIntRelease(bucket + BucketLayout.LABEL_OFFSET, 0);
                break;
            }
            if (taken == 0 && nic.isFenced(ring.client)) {
                // Requests of a client fenced since it wrote them (it died or gave up, and its recovery may have
                // released what it held already; a paused server finds them late): never served, so a lock a
                // request would take cannot outlive that recovery.
                Bucket.release(inboxMemory, bucket, length);
                ring.receiveSeq++;
                ring.consumed++;
                fencedBuckets++;
                continue;
            }
            ring.ackFromClient(inboxMemory.getInt(bucket + BucketLayout.ACK_OFFSET));
            dispatch(ring, bucket, length);
            if (!options.batching()) {
                flush(ring); // plain design: each reply leaves alone, at once
            }
            Bucket.release(inboxMemory, bucket, length);
            ring.receiveSeq++;
            ring.consumed++;
            buckets++;
            taken++;
        }
        if (taken > 0 || ring.replyBacklog.size() > 0) {
            ring.drainBacklog();
            markDirty(ring);
        }
        return taken;
    }

    private void dispatch(final ServerRing ring, final int bucket, final int length) {
        final int end = bucket + BucketLayout.HEADER_BYTES + length;
        int at = bucket + BucketLayout.HEADER_BYTES;
        while (at < end) {
            if (end - at < MessageLayout.HEADER_BYTES) {
                malformedMessage(ring);
                return;
            }
            final int rpcId = inboxMemory.getShort(at + MessageLayout.RPC_ID_OFFSET) & 0xffff;
            final short kind = inboxMemory.getShort(at + MessageLayout.KIND_OFFSET);
            final int callId = inboxMemory.getInt(at + MessageLayout.CALL_ID_OFFSET);
            final int payloadLength = inboxMemory.getInt(at + MessageLayout.LENGTH_OFFSET);
            final int payload = at + MessageLayout.HEADER_BYTES;
            if (payloadLength < 0 || payloadLength > end - payload) {
                malformedMessage(ring);
                return;
            }
            at = payload + ((payloadLength + 7) & ~7);
            if (kind != MessageLayout.KIND_REQUEST && kind != MessageLayout.KIND_REQUEST_ZERO_COPY) {
                malformedMessage(ring);
                continue;
            }
            requests++;
            if (kind == MessageLayout.KIND_REQUEST_ZERO_COPY) {
                if (payloadLength < MessageLayout.TARGET_BYTES) {
                    malformedMessage(ring);
                    continue;
                }
                request.wrap(ring.client, rpcId, inboxMemory, payload + MessageLayout.TARGET_BYTES,
                    payloadLength - MessageLayout.TARGET_BYTES)
                    .target(inboxMemory.getLong(payload), inboxMemory.getInt(payload + 8),
                        inboxMemory.getInt(payload + 12));
            } else {
                request.wrap(ring.client, rpcId, inboxMemory, payload, payloadLength);
            }
            final RpcResponder responder = this.responder.of(ring, callId, request);
            final RpcHandler handler = handlers.get(rpcId);
            if (handler == null) {
                responder.fail(RpcException.UNKNOWN_RPC, "no RPC " + rpcId + " on node " + nic.node());
                continue;
            }
            try {
                handler.handle(request, responder);
            } catch (final RuntimeException e) {
                if (!responder.answered()) {
                    responder.fail(RpcException.HANDLER_FAILED, "RPC " + rpcId + " failed on node " + nic.node()
                        + ": " + e);
                } else {
                    LOG.error("RPC " + rpcId + " handler threw after answering", e);
                }
            }
            if (!responder.answered()) {
                this.responder = new RpcResponder(this); // the handler keeps this one to answer later
            }
        }
    }

    private void malformedMessage(final ServerRing ring) {
        malformed++;
        LOG.warn("RRPC server " + nic.node() + ": malformed message from " + ring.client + "; rest of bucket dropped");
    }

    private void markDirty(final ServerRing ring) {
        if (!ring.dirty) {
            ring.dirty = true;
            dirty.add(ring);
            bridge.wake();
        }
    }

    // ------------------------------------------------------------------------------------------------- replies

    void reply(final ServerRing ring, final short kind, final int callId, final DirectBuffer data, final int offset,
               final int length) {
        ring.append(kind, callId, data, offset, length);
        markDirty(ring);
    }

    void zeroCopy(final ServerRing ring, final long address, final int rkey, final DirectBuffer data,
                  final int offset, final int length) {
        final byte[] copy = new byte[length]; // the WRITE reads it when it executes, after the handler returned
        data.getBytes(offset, copy);
        ring.preWrites.add(new PreWrite(address, rkey, new UnsafeBuffer(copy), 0, length));
        markDirty(ring);
    }

    /** A zero-copy reply written straight from {@code data}, which stays unchanged until written. */
    void zeroCopyStable(final ServerRing ring, final long address, final int rkey, final DirectBuffer data,
                        final int offset, final int length) {
        ring.preWrites.add(new PreWrite(address, rkey, data, offset, length));
        markDirty(ring);
    }

    /** Seals the open reply bucket of {@code ring} and WRITEs what is ready, one doorbell. */
    private int flush(final ServerRing ring) {
        ring.dirty = false;
        if (ring.qp == null || !ring.open) {
            return 0;
        }
        ring.drainBacklog();
        if (ring.used > 0) {
            ring.seal();
        } else if (ring.consumed - ring.ackSent >= options.ringBuckets() / 2 && ring.creditAvailable()) {
            ring.openBucket();
            ring.seal(); // an empty bucket: only the acknowledgement
        }
        int count = 0;
        for (final PreWrite write : ring.preWrites) {
            request(count++).write(write.address, write.rkey, write.data, write.offset, write.length);
        }
        if (!ring.preWrites.isEmpty()) {
            ring.zeroCopyPosted();
        }
        ring.preWrites.clear();
        for (long seq = ring.postedSeq; seq < ring.sendSeq; seq++) {
            final int position = (int) (seq % options.ringBuckets());
            final int offset = position * options.bucketBytes();
            request(count++).write(ring.replyAddress + offset, ring.replyRkey, ring.staging, offset,
                ring.sealedBytes[position]);
        }
        ring.postedSeq = ring.sendSeq;
        if (count == 0) {
            return 0;
        }
        for (int i = 0; i < count; i++) {
            wrPool.get(i).signaled(i == count - 1).link(i == count - 1 ? null : wrPool.get(i + 1));
        }
        final int code = ring.qp.post(wrPool.get(0));
        if (code != QueuePair.POST_OK) {
            LOG.error("RRPC server " + nic.node() + ": replies to " + ring.client + " not posted (code " + code
                + "); closing its ring");
            ring.open = false;
        }
        if (ring.replyBacklog.size() > 0 || ring.used > 0) {
            markDirty(ring);
        }
        return count;
    }

    private WorkRequest request(final int index) {
        while (wrPool.size() <= index) {
            wrPool.add(new WorkRequest());
        }
        return wrPool.get(index).clear();
    }

    /**
     * A reply WRITE failed (its queue pair moved to ERROR; what was posted after it completes flushed). Before, every
     * ring of the client's node closed here, for good unless the client opened it again, which it does only once its
     * own queue pair to this server breaks: a client whose queue pair still worked (a failure on this side only, or
     * a split healed before it posted anything) called into closed rings and timed out for ever; and a late flushed
     * completion of a queue pair already replaced closed the rings working on its successor.
     * Now only the rings on the failed queue pair stop, and the client is connected again: when it answers, they
     * resume on the new queue pair, the reply buckets it has not acknowledged written again (a bucket carries its
     * lap, so one that had landed is ignored by a client past it); only a client that cannot be reached (gone,
     * fenced) has its rings closed until it opens them again. Zero-copy reply data is not kept for a rewrite: a ring
     * whose unacknowledged window held some stays closed (logged), as before.
     */
    @Override
    public void onCompletion(final QueuePair qp, final long wrId, final Opcode opcode, final WcStatus status,
                             final int byteLength) {
        if (status == WcStatus.SUCCESS) {
            return;
        }
        final String client = qp.remoteNode();
        final List<ServerRing> stopped = new ArrayList<>();
        for (final ServerRing ring : rings) {
            if (ring.qp == qp && ring.open) {
                ring.open = false;
                stopped.add(ring);
            }
        }
        qpByClient.remove(client, qp);
        if (stopped.isEmpty()) {
            return; // a flushed completion of a queue pair already stopped or replaced
        }
        if (status == WcStatus.REVOKED) {
            LOG.warn("RRPC server " + nic.node() + ": WRITE to " + client + " failed: " + status
                + "; its rings close until it opens them again");
            return;
        }
        LOG.warn("RRPC server " + nic.node() + ": WRITE to " + client + " failed: " + status
            + "; connecting to it again to resume its rings");
        final long nowNs = bridge.clock().nanoTime();
        final Reconnect r = reconnects.computeIfAbsent(client, Reconnect::new);
        if (nowNs - r.lastFailureNs > RECONNECT_BURST_QUIET_NS) {
            r.attempts = 0; // a new burst
            r.delayNs = RECONNECT_FIRST_NS;
        }
        r.lastFailureNs = nowNs;
        for (final ServerRing ring : stopped) {
            r.rings.add(ring);
            r.failedOn.add(qp);
        }
        if (r.dueNs == CompletionQueue.NO_EVENT && !r.connecting) {
            if (r.attempts == 0) {
                reconnect(r); // the first of a burst at once, as before
            } else {
                retryLater(r, nowNs);
            }
        }
    }

    /**
     * A client's rings stopped by failed reply WRITEs, waiting to resume on a new queue pair (review of aurofix,
     * finding 3). A connect that fails (the split that failed the WRITE is likely still there) is tried again after
     * {@link #RECONNECT_FIRST_NS}, doubling up to {@link #RECONNECT_MAX_NS}; so is a reconnect after a failure
     * that follows a resume within the burst. Once {@link #RECONNECTS_PER_BURST} reconnects of one burst (failures
     * less than {@link #RECONNECT_BURST_QUIET_NS} apart) were made, its rings close until the client opens them
     * again (before, one failed connect closed them: a client that posted nothing during the split kept its queue
     * pair, never reopened them, and every call of it timed out for good).
     */
    private static final class Reconnect {
        final String client;
        final List<ServerRing> rings = new ArrayList<>();
        /** The queue pair each of {@link #rings} stopped on: a ring off it since (reopened) is not resumed. */
        final List<QueuePair> failedOn = new ArrayList<>();
        int attempts;
        long delayNs = RECONNECT_FIRST_NS;
        long lastFailureNs = Long.MIN_VALUE / 2;
        long dueNs = CompletionQueue.NO_EVENT;
        boolean connecting;

        Reconnect(final String client) {
            this.client = client;
        }
    }

    /** The first retry of a failed reconnect waits this long; each next one twice as long, up to the max. */
    static final long RECONNECT_FIRST_NS = 1_000_000L;
    static final long RECONNECT_MAX_NS = 500_000_000L;
    /** Reconnects of one burst of failures before its rings close until the client opens them again. */
    static final int RECONNECTS_PER_BURST = 10;
    /** A failure this long after the previous one starts a new burst (the backoff starts over). */
    static final long RECONNECT_BURST_QUIET_NS = 2_000_000_000L;

    private void reconnect(final Reconnect r) {
        r.dueNs = CompletionQueue.NO_EVENT;
        r.connecting = true;
        r.attempts++;
        connectTo(r.client).onComplete(ar -> {
            r.connecting = false;
            if (ar.failed()) {
                r.lastFailureNs = bridge.clock().nanoTime();
                LOG.warn("RRPC server " + nic.node() + ": " + r.client + " is unreachable (" + ar.cause().getMessage()
                    + "), reconnect " + r.attempts + " of " + RECONNECTS_PER_BURST);
                retryLater(r, r.lastFailureNs);
                return;
            }
            for (int i = 0; i < r.rings.size(); i++) {
                final ServerRing ring = r.rings.get(i);
                if (ring.open || ring.qp != r.failedOn.get(i)) {
                    continue; // opened again by its client meanwhile (reset, on a queue pair of its own)
                }
                if (ring.zeroCopyUnacknowledged()) {
                    LOG.warn("RRPC server " + nic.node() + ": a ring of " + r.client + " lost zero-copy replies it "
                        + "has not acknowledged; it stays closed until the client opens it again");
                } else {
                    ring.resume(ar.result());
                    markDirty(ring);
                }
            }
            r.rings.clear();
            r.failedOn.clear();
        });
    }

    private void retryLater(final Reconnect r, final long nowNs) {
        if (r.attempts >= RECONNECTS_PER_BURST) {
            LOG.warn("RRPC server " + nic.node() + ": " + r.attempts + " reconnects to " + r.client
                + " in one burst of failures; its rings close until it opens them again");
            r.rings.clear();
            r.failedOn.clear();
            return;
        }
        r.dueNs = nowNs + r.delayNs;
        r.delayNs = Math.min(r.delayNs * 2, RECONNECT_MAX_NS);
        reconnectWakeNs = Math.min(reconnectWakeNs, r.dueNs);
    }

    /** Runs the reconnects due by {@code nowNs} ({@link #retryLater}). */
    private void reconnectsDue(final long nowNs) {
        reconnectWakeNs = CompletionQueue.NO_EVENT;
        for (final Reconnect r : reconnects.values()) {
            if (r.dueNs != CompletionQueue.NO_EVENT && nowNs - r.dueNs >= 0) {
                reconnect(r);
            }
            if (r.dueNs != CompletionQueue.NO_EVENT) {
                reconnectWakeNs = Math.min(reconnectWakeNs, r.dueNs);
            }
        }
    }

    /** Reconnects made after failed reply WRITEs ({@link Reconnect}), over all clients. */
    public long reconnects() {
        long n = 0;
        for (final Reconnect r : reconnects.values()) {
            n += r.attempts;
        }
        return n;
    }

    /** Rings resumed on a new queue pair after a failed reply WRITE ({@link #onCompletion}). */
    public long resumedRings() {
        return resumedRings;
    }

    /**
     * Answers dropped because their call's ring was opened again meanwhile ({@link ServerRing#incarnation}): the
     * client that made the call gave that ring up and failed the call. Server's loop.
     */
    public long staleReplies() {
        return staleReplies;
    }

    void staleReply() {
        staleReplies++;
    }

    /** Buckets dropped unserved because their client was fenced before they were read ({@link #drain}). */
    public long fencedBuckets() {
        return fencedBuckets;
    }

    public long requests() {
        return requests;
    }

    public long buckets() {
        return buckets;
    }

    public long malformed() {
        return malformed;
    }

    private record PreWrite(long address, int rkey, DirectBuffer data, int offset, int length) {
    }

    private record Pending(short kind, int callId, UnsafeBuffer data) {
    }

    /** The server's state for one client ring: receiving requests, and the reply ring it writes back into. */
    final class ServerRing {
        final String client;
        final int inboxOffset;
        final UnsafeBuffer staging;
        final int[] sealedBytes;
        final List<PreWrite> preWrites = new ArrayList<>();
        final ArrayDeque<Pending> replyBacklog = new ArrayDeque<>();
        QueuePair qp;
        /** Its {@link RingQueues} queue (0 without). */
        int queue;
        boolean open;
        boolean dirty;
        long receiveSeq;
        int consumed;
        int ackSent;
        long replyAddress;
        int replyRkey;
        long sendSeq;
        long postedSeq;
        int clientConsumed;
        /**
         * The reply buckets up to here (exclusive, low 32 bits of a sequence) may tell of zero-copy data: set when a
         * flush posts zero-copy writes ({@link #zeroCopyPosted}).
         */
        int zeroCopyUntil;
        int used;
        int count;
        /**
         * Which opening of this ring by its client this is: {@link #reset} counts it up. A responder notes it when it
         * takes its call and posts nothing once it changed ({@link RpcResponder}): the reply belongs to a ring the
         * client gave up, and the reopened one, whose call ids start again at 1, would match it to another call.
         */
        int incarnation;

        ServerRing(final String client, final int index) {
            this.client = client;
            this.inboxOffset = index * options.ringBytes();
            this.staging = new UnsafeBuffer(org.agrona.BufferUtil.allocateDirectAligned(options.ringBytes(), 64));
            this.sealedBytes = new int[options.ringBuckets()];
        }

        void reset(final long replyAddress, final int replyRkey) {
            incarnation++;
            inboxMemory.setMemory(inboxOffset, options.ringBytes(), (byte) 0);
            this.replyAddress = replyAddress;
            this.replyRkey = replyRkey;
            receiveSeq = 0;
            consumed = 0;
            ackSent = 0;
            sendSeq = 0;
            postedSeq = 0;
            clientConsumed = 0;
            zeroCopyUntil = 0;
            used = 0;
            count = 0;
            preWrites.clear();
            replyBacklog.clear();
        }

        /** Serves again on {@code qp}, writing again every reply bucket the client has not acknowledged. */
        void resume(final QueuePair qp) {
            this.qp = qp;
            postedSeq = sendSeq - ((int) sendSeq - clientConsumed);
            open = true;
            resumedRings++;
        }

        /**
         * A flush posted zero-copy writes: every bucket that may carry their replies is covered, the ones sealed and
         * the ones to come of the replies not sealed yet (out of credit, in {@link #replyBacklog}, or in an open
         * bucket: at most a bucket each). Before, only the buckets sealed so far were (review of aurofix, finding 2):
         * a reply backlogged behind a zero-copy WRITE that failed was sealed after the client acknowledged the rest,
         * the ring resumed, and the rewritten bucket pointed the client at data never written.
         */
        void zeroCopyPosted() {
            final int until = (int) sendSeq + replyBacklog.size() + (used > 0 ? 1 : 0);
            if (until - zeroCopyUntil > 0) {
                zeroCopyUntil = until;
            }
        }

        /** Whether a bucket the client has not acknowledged may tell of zero-copy data (not kept for a rewrite). */
        boolean zeroCopyUnacknowledged() {
            return zeroCopyUntil - clientConsumed > 0;
        }

        void ackFromClient(final int ack) {
            if (ack - clientConsumed > 0) {
                clientConsumed = ack;
            }
        }

        /** Whether the client has consumed enough of its reply ring for one more bucket (counts wrap at 2^32). */
        boolean creditAvailable() {
            return (int) sendSeq - clientConsumed < options.ringBuckets();
        }

        void openBucket() {
            used = BucketLayout.HEADER_BYTES;
            count = 0;
        }

        void seal() {
            final int position = (int) (sendSeq % options.ringBuckets());
            sealedBytes[position] = Bucket.seal(staging, position * options.bucketBytes(), used,
                sendSeq / options.ringBuckets(), consumed, count);
            ackSent = consumed;
            sendSeq++;
            used = 0;
            count = 0;
        }

        void append(final short kind, final int callId, final DirectBuffer data, final int offset,
                    final int length) {
            if (!replyBacklog.isEmpty() || !place(kind, callId, data, offset, length)) {
                final UnsafeBuffer copy = new UnsafeBuffer(new byte[length]);
                copy.putBytes(0, data, offset, length);
                replyBacklog.add(new Pending(kind, callId, copy));
            }
        }

        void drainBacklog() {
            while (!replyBacklog.isEmpty()) {
                final Pending p = replyBacklog.peek();
                if (!place(p.kind, p.callId, p.data, 0, p.data.capacity())) {
                    return;
                }
                replyBacklog.poll();
            }
        }

        /** Puts a reply into the open bucket (opening one when there is credit); false when out of credit. */
        private boolean place(final short kind, final int callId, final DirectBuffer data, final int offset,
                              final int length) {
            final int bytes = MessageLayout.messageBytes(length);
            if (used > 0 && (!options.batching()
                || Bucket.room(options.bucketBytes(), used - BucketLayout.HEADER_BYTES) < bytes)) {
                seal();
            }
            if (used == 0) {
                if (!creditAvailable()) {
                    return false;
                }
                openBucket();
            }
            final int position = (int) (sendSeq % options.ringBuckets());
            used = Bucket.append(staging, position * options.bucketBytes(), used, 0, kind, callId, data, offset,
                length);
            count++;
            return true;
        }
    }
}
