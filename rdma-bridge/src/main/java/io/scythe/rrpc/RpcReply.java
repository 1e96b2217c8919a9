package io.scythe.rrpc;

import org.agrona.concurrent.UnsafeBuffer;

/**
 * A reply as the caller gets it: inline data (pure RPC), a descriptor of data to READ one-sided (RPC and one-sided
 * mode), or the length of data the server already wrote into the caller's buffer (zero-copy mode) — Fig. 20.
 */
public final class RpcReply {
    public enum Mode { INLINE, DESCRIPTOR, ZERO_COPY }

    private final Mode mode;
    private final UnsafeBuffer payload;
    private final long address;
    private final int rkey;
    private final int length;

    private RpcReply(final Mode mode, final UnsafeBuffer payload, final long address, final int rkey,
                     final int length) {
        this.mode = mode;
        this.payload = payload;
        this.address = address;
        this.rkey = rkey;
        this.length = length;
    }

    static RpcReply inline(final UnsafeBuffer payload) {
        return new RpcReply(Mode.INLINE, payload, 0, 0, payload.capacity());
    }

    static RpcReply descriptor(final long address, final int rkey, final int length) {
        return new RpcReply(Mode.DESCRIPTOR, null, address, rkey, length);
    }

    static RpcReply zeroCopy(final int length) {
        return new RpcReply(Mode.ZERO_COPY, null, 0, 0, length);
    }

    public Mode mode() {
        return mode;
    }

    /** Inline data (its own copy); {@code null} in the other modes. */
    public UnsafeBuffer payload() {
        return payload;
    }

    /** Bytes of data: inline, to READ, or written into the caller's buffer. */
    public int length() {
        return length;
    }

    /** Where to READ the data (descriptor mode). */
    public long address() {
        return address;
    }

    public int rkey() {
        return rkey;
    }
}
