package io.scythe.fabric;

import io.vertx.core.json.JsonObject;

/** Sizes of a queue pair, after {@code ibv_qp_cap}. */
public final class QpOptions {
    /** Send-queue slots: outstanding work requests per QP (ConnectX allows thousands; FORD uses 128-1024). */
    public static final int DEFAULT_SEND_QUEUE_DEPTH = 1024;
    /** Receive-queue slots for posted receive buffers. */
    public static final int DEFAULT_RECEIVE_QUEUE_DEPTH = 256;
    /** Largest payload a WRITE/SEND may inline (mlx5 accepts up to ~220 B; 64 B keeps WQEs in one cache line). */
    public static final int DEFAULT_MAX_INLINE_BYTES = 64;
    /** Largest single transfer (a region is at most 2 GiB; RC messages up to 2 GiB are legal). */
    public static final int DEFAULT_MAX_MESSAGE_BYTES = 1 << 30;
    /**
     * How long requests in flight may go without any response before the queue pair gives the peer up (ibverbs' local
     * ACK timeout times its retry count): 2.5 s, below a 3 s lease (a commit whose write-back finds its memory node
     * stopped ends before that node's lease does) and counted only while this node itself runs (a stalled poster
     * judges no one).
     */
    public static final long DEFAULT_TRANSPORT_TIMEOUT_MS = 2_500;

    private int sendQueueDepth = DEFAULT_SEND_QUEUE_DEPTH;
    private int receiveQueueDepth = DEFAULT_RECEIVE_QUEUE_DEPTH;
    private int maxInlineBytes = DEFAULT_MAX_INLINE_BYTES;
    private int maxMessageBytes = DEFAULT_MAX_MESSAGE_BYTES;
    private boolean shared;
    private long transportTimeoutMs = DEFAULT_TRANSPORT_TIMEOUT_MS;

    public QpOptions() {
    }

    public QpOptions(final QpOptions other) {
        this.sendQueueDepth = other.sendQueueDepth;
        this.receiveQueueDepth = other.receiveQueueDepth;
        this.maxInlineBytes = other.maxInlineBytes;
        this.maxMessageBytes = other.maxMessageBytes;
        this.shared = other.shared;
        this.transportTimeoutMs = other.transportTimeoutMs;
    }

    public QpOptions(final JsonObject json) {
        this();
        sendQueueDepth = json.getInteger("sendQueueDepth", sendQueueDepth);
        receiveQueueDepth = json.getInteger("receiveQueueDepth", receiveQueueDepth);
        maxInlineBytes = json.getInteger("maxInlineBytes", maxInlineBytes);
        maxMessageBytes = json.getInteger("maxMessageBytes", maxMessageBytes);
        shared = json.getBoolean("shared", shared);
        transportTimeoutMs = json.getLong("transportTimeoutMs", transportTimeoutMs);
        validate();
    }

    public JsonObject toJson() {
        return new JsonObject()
            .put("sendQueueDepth", sendQueueDepth)
            .put("receiveQueueDepth", receiveQueueDepth)
            .put("maxInlineBytes", maxInlineBytes)
            .put("maxMessageBytes", maxMessageBytes)
            .put("shared", shared)
            .put("transportTimeoutMs", transportTimeoutMs);
    }

    /** @throws IllegalArgumentException naming the first field out of range */
    public QpOptions validate() {
        requirePositive("sendQueueDepth", sendQueueDepth);
        requirePositive("receiveQueueDepth", receiveQueueDepth);
        if (maxInlineBytes < 0 || maxInlineBytes > 1024) {
            throw new IllegalArgumentException("maxInlineBytes=" + maxInlineBytes + " must be within [0, 1024]");
        }
        requirePositive("maxMessageBytes", maxMessageBytes);
        if (transportTimeoutMs < 0) {
            throw new IllegalArgumentException("transportTimeoutMs=" + transportTimeoutMs + " must not be negative "
                + "(0: no bound)");
        }
        return this;
    }

    private static void requirePositive(final String name, final int value) {
        if (value <= 0) {
            throw new IllegalArgumentException(name + "=" + value + " must be positive");
        }
    }

    public int sendQueueDepth() {
        return sendQueueDepth;
    }

    public QpOptions sendQueueDepth(final int sendQueueDepth) {
        this.sendQueueDepth = sendQueueDepth;
        return this;
    }

    public int receiveQueueDepth() {
        return receiveQueueDepth;
    }

    public QpOptions receiveQueueDepth(final int receiveQueueDepth) {
        this.receiveQueueDepth = receiveQueueDepth;
        return this;
    }

    public int maxInlineBytes() {
        return maxInlineBytes;
    }

    public QpOptions maxInlineBytes(final int maxInlineBytes) {
        this.maxInlineBytes = maxInlineBytes;
        return this;
    }

    /**
     * A shared queue pair may be posted on from any thread (serialised by a lock, as ibverbs does); its completions
     * are still delivered to its completion queue's owner. RRPC's RdmaStraws share QPs across event loops to keep the
     * NIC's QP cache small (Scythe §4.6 (1)). Providers that cannot share refuse to connect one.
     */
    public boolean shared() {
        return shared;
    }

    public QpOptions shared(final boolean shared) {
        this.shared = shared;
        return this;
    }

    public int maxMessageBytes() {
        return maxMessageBytes;
    }

    public QpOptions maxMessageBytes(final int maxMessageBytes) {
        this.maxMessageBytes = maxMessageBytes;
        return this;
    }

    /**
     * The bound on a peer's silence ({@link #DEFAULT_TRANSPORT_TIMEOUT_MS} unless set; 0: none). When requests are in
     * flight and none was answered for that long (since the oldest was posted or the last response, whichever is
     * later), every request in flight on the queue pair completes with
     * {@link WcStatus#TRANSPORT_RETRY_EXCEEDED} and the queue pair is lost, as an RC queue pair whose peer stopped
     * acknowledging: a paused or hung peer ends a verb within the bound instead of never. A request that timed out may
     * still have been executed by the peer. Providers whose verbs the poster executes itself (local, shm) never wait
     * for a peer and ignore it; on disni it is the device's own timeout.
     */
    public long transportTimeoutMs() {
        return transportTimeoutMs;
    }

    public QpOptions transportTimeoutMs(final long transportTimeoutMs) {
        this.transportTimeoutMs = transportTimeoutMs;
        return this;
    }
}
