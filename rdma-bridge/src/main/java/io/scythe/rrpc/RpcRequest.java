package io.scythe.rrpc;

import org.agrona.DirectBuffer;

/** A request as its handler sees it: valid only during the handler call (a flyweight over the ring). */
public final class RpcRequest {
    private String client;
    private int rpcId;
    private DirectBuffer buffer;
    private int offset;
    private int length;
    private boolean zeroCopy;
    private long targetAddress;
    private int targetRkey;
    private int targetCapacity;

    RpcRequest wrap(final String client, final int rpcId, final DirectBuffer buffer, final int offset,
                    final int length) {
        this.client = client;
        this.rpcId = rpcId;
        this.buffer = buffer;
        this.offset = offset;
        this.length = length;
        this.zeroCopy = false;
        return this;
    }

    RpcRequest target(final long address, final int rkey, final int capacity) {
        this.zeroCopy = true;
        this.targetAddress = address;
        this.targetRkey = rkey;
        this.targetCapacity = capacity;
        return this;
    }

    /** The node that called. */
    public String client() {
        return client;
    }

    public int rpcId() {
        return rpcId;
    }

    public DirectBuffer payload() {
        return buffer;
    }

    public int payloadOffset() {
        return offset;
    }

    public int payloadLength() {
        return length;
    }

    /** Whether the caller gave a registered buffer for a zero-copy reply (Fig. 20 (c)). */
    public boolean hasZeroCopyTarget() {
        return zeroCopy;
    }

    long targetAddress() {
        return targetAddress;
    }

    int targetRkey() {
        return targetRkey;
    }

    public int targetCapacity() {
        return zeroCopy ? targetCapacity : 0;
    }
}
