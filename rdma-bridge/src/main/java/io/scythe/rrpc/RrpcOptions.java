package io.scythe.rrpc;

import io.vertx.core.json.JsonObject;

/** Sizes and policies of RRPC (Scythe §4.6). */
public final class RrpcOptions {
    /** Buckets per ring: how many batches a sender may have in flight to one receiver. */
    public static final int DEFAULT_RING_BUCKETS = 64;
    /** Rings a server's inbox holds: one per (client node, event loop). */
    public static final int DEFAULT_MAX_RINGS = 256;
    /** Reply rings a client node holds: one per (server node, event loop). */
    public static final int DEFAULT_MAX_REPLY_RINGS = 64;
    /** Messages a Rocket queues while its ring is full, before refusing calls (back-pressure). */
    public static final int DEFAULT_MAX_BACKLOG = 8192;
    /** Rockets served per RPC queue pair before RdmaStraws adds one (the paper's "average threads per QP"). */
    public static final int DEFAULT_ROCKETS_PER_QP = 2;
    /** Most RPC queue pairs a straw opens to one node. */
    public static final int DEFAULT_MAX_QPS_PER_STRAW = 4;

    /**
     * The bound on a compute node's call to a memory node in a cluster or an embedded one ({@link #forMemoryNodes}):
     * 4 s, above the 3 s stalls a whole process shows on this project's loaded test hosts (a lease is 3 s); a memory
     * node that stops answering (paused, hung, its ring not polled) then ends the call with
     * {@link RpcException#TIMED_OUT}.
     */
    public static final long DEFAULT_MEMORY_NODE_CALL_TIMEOUT_NS = java.util.concurrent.TimeUnit.SECONDS.toNanos(4);

    private int bucketBytes = BucketLayout.DEFAULT_BUCKET_BYTES;
    private int ringBuckets = DEFAULT_RING_BUCKETS;
    private int maxRings = DEFAULT_MAX_RINGS;
    private int maxReplyRings = DEFAULT_MAX_REPLY_RINGS;
    private int hybridCutoffBytes = BucketLayout.DEFAULT_BUCKET_BYTES;
    private int maxBacklog = DEFAULT_MAX_BACKLOG;
    private int rocketsPerQp = DEFAULT_ROCKETS_PER_QP;
    private int maxQpsPerStraw = DEFAULT_MAX_QPS_PER_STRAW;
    private boolean batching = true;
    /**
     * Whether an RPC server keeps polling its inbox while it has clients, as a memory node's polling core does, or
     * (default) sleeps until a peer's WRITE wakes it where the fabric shows those writes. Waking a sleeping event loop
     * costs 10-30 us on a VM; spinning costs that loop's core, and where loops outnumber free cores a spinning loop
     * that the scheduler preempts stalls for a whole tick (4 ms here).
     */
    private boolean spinServer;
    private long callTimeoutNs;
    private long openTimeoutMs;
    private long idlePollNs;
    private long verbTransportTimeoutMs;

    public RrpcOptions() {
    }

    public RrpcOptions(final JsonObject json) {
        bucketBytes = json.getInteger("bucketBytes", bucketBytes);
        ringBuckets = json.getInteger("ringBuckets", ringBuckets);
        maxRings = json.getInteger("maxRings", maxRings);
        maxReplyRings = json.getInteger("maxReplyRings", maxReplyRings);
        hybridCutoffBytes = json.getInteger("hybridCutoffBytes", hybridCutoffBytes);
        maxBacklog = json.getInteger("maxBacklog", maxBacklog);
        rocketsPerQp = json.getInteger("rocketsPerQp", rocketsPerQp);
        maxQpsPerStraw = json.getInteger("maxQpsPerStraw", maxQpsPerStraw);
        batching = json.getBoolean("batching", batching);
        spinServer = json.getBoolean("spinServer", spinServer);
        callTimeoutNs = json.getLong("callTimeoutNs", callTimeoutNs);
        openTimeoutMs = json.getLong("openTimeoutMs", openTimeoutMs);
        idlePollNs = json.getLong("idlePollNs", idlePollNs);
        verbTransportTimeoutMs = json.getLong("verbTransportTimeoutMs", verbTransportTimeoutMs);
        validate();
    }

    /**
     * Options of a compute node's client of memory nodes: the defaults, with every call bounded by
     * {@link #DEFAULT_MEMORY_NODE_CALL_TIMEOUT_NS}. (The simulator keeps its unbounded calls: it has no dead nodes.)
     */
    public static RrpcOptions forMemoryNodes() {
        return new RrpcOptions().callTimeoutNs(DEFAULT_MEMORY_NODE_CALL_TIMEOUT_NS)
            .openTimeoutMs(RrpcClient.OPEN_TIMEOUT_MS);
    }

    /**
     * How long opening a ring (an event-bus request, the server connecting back) may take before the calls waiting
     * for it fail. 0 (the default): the call bound when one is set (a call's bound then covers opening its ring),
     * else {@link RrpcClient#OPEN_TIMEOUT_MS}. A compute node's client of memory nodes opens with the longer bound: an
     * open is a one-time cost that takes seconds on a loaded host, and a call on an open ring has its own bound.
     */
    public long openTimeoutMs() {
        return openTimeoutMs;
    }

    public RrpcOptions openTimeoutMs(final long openTimeoutMs) {
        this.openTimeoutMs = openTimeoutMs;
        return this;
    }

    public JsonObject toJson() {
        return new JsonObject().put("bucketBytes", bucketBytes).put("ringBuckets", ringBuckets)
            .put("maxRings", maxRings).put("maxReplyRings", maxReplyRings)
            .put("hybridCutoffBytes", hybridCutoffBytes).put("maxBacklog", maxBacklog)
            .put("rocketsPerQp", rocketsPerQp).put("maxQpsPerStraw", maxQpsPerStraw).put("batching", batching)
            .put("spinServer", spinServer).put("callTimeoutNs", callTimeoutNs).put("openTimeoutMs", openTimeoutMs)
            .put("idlePollNs", idlePollNs).put("verbTransportTimeoutMs", verbTransportTimeoutMs);
    }

    public boolean spinServer() {
        return spinServer;
    }

    public RrpcOptions spinServer(final boolean spinServer) {
        this.spinServer = spinServer;
        return this;
    }

    public RrpcOptions validate() {
        BucketLayout.checkBucketBytes(bucketBytes);
        if (ringBuckets < 2 || ringBuckets > 1 << 16) {
            throw new IllegalArgumentException("ringBuckets=" + ringBuckets + " must be within [2, 65536]");
        }
        positive("maxRings", maxRings);
        positive("maxReplyRings", maxReplyRings);
        positive("maxBacklog", maxBacklog);
        positive("rocketsPerQp", rocketsPerQp);
        positive("maxQpsPerStraw", maxQpsPerStraw);
        if (hybridCutoffBytes < 0) {
            throw new IllegalArgumentException("hybridCutoffBytes must not be negative");
        }
        if (openTimeoutMs < 0) {
            throw new IllegalArgumentException("openTimeoutMs=" + openTimeoutMs + " must not be negative");
        }
        if (verbTransportTimeoutMs < 0) {
            throw new IllegalArgumentException("verbTransportTimeoutMs=" + verbTransportTimeoutMs
                + " must not be negative");
        }
        if (callTimeoutNs < 0 || idlePollNs < 0) {
            throw new IllegalArgumentException("callTimeoutNs=" + callTimeoutNs + " and idlePollNs=" + idlePollNs
                + " must not be negative");
        }
        return this;
    }

    private static void positive(final String name, final int value) {
        if (value <= 0) {
            throw new IllegalArgumentException(name + "=" + value + " must be positive");
        }
    }

    public int bucketBytes() {
        return bucketBytes;
    }

    public RrpcOptions bucketBytes(final int bucketBytes) {
        this.bucketBytes = bucketBytes;
        return this;
    }

    public int ringBuckets() {
        return ringBuckets;
    }

    public RrpcOptions ringBuckets(final int ringBuckets) {
        this.ringBuckets = ringBuckets;
        return this;
    }

    public int maxRings() {
        return maxRings;
    }

    public RrpcOptions maxRings(final int maxRings) {
        this.maxRings = maxRings;
        return this;
    }

    public int maxReplyRings() {
        return maxReplyRings;
    }

    public RrpcOptions maxReplyRings(final int maxReplyRings) {
        this.maxReplyRings = maxReplyRings;
        return this;
    }

    /** Replies above this size go one-sided (descriptor or zero-copy) rather than in a bucket (Fig. 20). */
    public int hybridCutoffBytes() {
        return hybridCutoffBytes;
    }

    public RrpcOptions hybridCutoffBytes(final int hybridCutoffBytes) {
        this.hybridCutoffBytes = hybridCutoffBytes;
        return this;
    }

    public int maxBacklog() {
        return maxBacklog;
    }

    public RrpcOptions maxBacklog(final int maxBacklog) {
        this.maxBacklog = maxBacklog;
        return this;
    }

    public int rocketsPerQp() {
        return rocketsPerQp;
    }

    public RrpcOptions rocketsPerQp(final int rocketsPerQp) {
        this.rocketsPerQp = rocketsPerQp;
        return this;
    }

    public int maxQpsPerStraw() {
        return maxQpsPerStraw;
    }

    public RrpcOptions maxQpsPerStraw(final int maxQpsPerStraw) {
        this.maxQpsPerStraw = maxQpsPerStraw;
        return this;
    }

    /**
     * Message and doorbell batching (the default). Off, every call and every reply is its own bucket, WRITE and
     * doorbell, sent at once: the plain one-message-per-RPC design RRPC is compared with.
     */
    public boolean batching() {
        return batching;
    }

    public RrpcOptions batching(final boolean batching) {
        this.batching = batching;
        return this;
    }

    /**
     * How long a call may wait for its reply before it fails with {@link RpcException#TIMED_OUT}, from the moment it
     * is made (opening the ring included); a reply that comes later is dropped. 0 (the default): no bound, a call
     * waits until its reply or its connection fails; compute nodes' clients of memory nodes use
     * {@link #forMemoryNodes()}'s bound.
     */
    public long callTimeoutNs() {
        return callTimeoutNs;
    }

    public RrpcOptions callTimeoutNs(final long callTimeoutNs) {
        this.callTimeoutNs = callTimeoutNs;
        return this;
    }

    /**
     * A server that polls continuously (its fabric shows no peer writes, or {@link #spinServer()}) and has taken no
     * request for this long polls only this often until the next one comes: a compute node's loops then do not spin
     * for peers that rarely call. 0 (the default, a memory node's polling core): it polls continuously while it has
     * clients.
     */
    public long idlePollNs() {
        return idlePollNs;
    }

    public RrpcOptions idlePollNs(final long idlePollNs) {
        this.idlePollNs = idlePollNs;
        return this;
    }

    /**
     * The transport timeout of the one-sided channels this client opens ({@link io.scythe.fabric.QpOptions#transportTimeoutMs}:
     * a verb the peer answers nothing for this long fails, and the connection is given up); 0 (the default): the
     * queue pairs' own default.
     */
    public long verbTransportTimeoutMs() {
        return verbTransportTimeoutMs;
    }

    public RrpcOptions verbTransportTimeoutMs(final long verbTransportTimeoutMs) {
        this.verbTransportTimeoutMs = verbTransportTimeoutMs;
        return this;
    }

    /** Bytes of one ring. */
    public int ringBytes() {
        return bucketBytes * ringBuckets;
    }

    /** The largest request or inline reply payload. */
    public int maxPayload() {
        return MessageLayout.maxPayload(bucketBytes);
    }
}
