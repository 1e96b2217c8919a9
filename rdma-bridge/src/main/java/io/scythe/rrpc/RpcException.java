package io.scythe.rrpc;

import io.vertx.core.VertxException;

/** An RPC that did not produce a reply: refused, failed by its handler, or cut off. No stack trace. */
public final class RpcException extends VertxException {
    /** No handler is registered for the RPC id. */
    public static final int UNKNOWN_RPC = 1;
    /** The handler threw or failed the call. */
    public static final int HANDLER_FAILED = 2;
    /** The request or reply does not fit (use the hybrid modes for large data). */
    public static final int TOO_LARGE = 3;
    /** The peer sent bytes that are not a valid message. */
    public static final int MALFORMED = 4;
    /** The ring to the server is full and the backlog too. */
    public static final int BACK_PRESSURE = 5;
    /** The connection to the server failed or was closed. */
    public static final int DISCONNECTED = 6;
    /** No reply came within the client's {@link RrpcOptions#callTimeoutNs() bound}; a late one is dropped. */
    public static final int TIMED_OUT = 7;
    /** Codes from this one up belong to handlers. */
    public static final int FIRST_APPLICATION_CODE = 100;

    private final int code;
    private final boolean taken;

    public RpcException(final int code, final String message) {
        this(code, message, false);
    }

    /** {@code taken}: see {@link #taken()}. */
    public RpcException(final int code, final String message, final boolean taken) {
        super(message, true);
        this.code = code;
        this.taken = taken;
    }

    public int code() {
        return code;
    }

    /**
     * For {@link #TIMED_OUT}: the server took the request and lived on after it. It answered a call made after this
     * one on the same ring, and a server serves a ring's requests in order, so it had read this request: the request
     * is held there (parked behind a lock, or its handler slow), not lost with a dead node. Without a later call
     * answered, nothing is known either way.
     */
    public boolean taken() {
        return taken;
    }
}
