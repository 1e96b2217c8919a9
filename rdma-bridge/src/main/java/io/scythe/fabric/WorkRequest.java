package io.scythe.fabric;

import org.agrona.DirectBuffer;
import org.agrona.MutableDirectBuffer;

/**
 * A send work request, after ibverbs' {@code ibv_send_wr}. Requests are linked through {@link #next()} into a
 * doorbell batch: {@link QueuePair#post(WorkRequest)} hands the whole list to the NIC at once (one MMIO), and the NIC
 * executes it in list order, as on a real RC QP.
 *
 * <p>A request is copied by {@code post}, so the object may be reused as soon as {@code post} returns. The local
 * buffer is not copied (except for {@link #inline(boolean) inline} writes): like registered memory, it must stay
 * untouched until the request completes. The atomic verbs write the 8-byte value found at the remote address into
 * the local buffer, in native byte order, before their completion.
 *
 * <p>Unsignaled requests ({@code signaled(false)}) produce a completion only if they fail; a later signaled request's
 * completion implies that every earlier request on the same QP succeeded.
 */
public final class WorkRequest {
    private Opcode opcode = Opcode.READ;
    private long wrId;
    private boolean signaled = true;
    private boolean inline;
    private DirectBuffer localBuffer;
    private int localOffset;
    private int length;
    private int lkey;
    private long remoteAddress;
    private int rkey;
    private long compareOrAdd;
    private long swap;
    private WorkRequest next;

    /** RDMA READ of {@code length} bytes at {@code remoteAddress} into {@code dst[dstOffset..]}. */
    public WorkRequest read(final long remoteAddress, final int rkey,
                            final MutableDirectBuffer dst, final int dstOffset, final int length) {
        return set(Opcode.READ, remoteAddress, rkey, dst, dstOffset, length);
    }

    /** RDMA WRITE of {@code src[srcOffset..srcOffset+length)} to {@code remoteAddress}. */
    public WorkRequest write(final long remoteAddress, final int rkey,
                             final DirectBuffer src, final int srcOffset, final int length) {
        return set(Opcode.WRITE, remoteAddress, rkey, src, srcOffset, length);
    }

    /**
     * 8-byte compare-and-swap: if the remote word equals {@code expected}, replace it with {@code desired}. The word
     * found (the old value) is written to {@code result[resultOffset..+8)}.
     */
    public WorkRequest compareAndSwap(final long remoteAddress, final int rkey, final long expected,
                                      final long desired, final MutableDirectBuffer result, final int resultOffset) {
        set(Opcode.COMPARE_AND_SWAP, remoteAddress, rkey, result, resultOffset, Opcode.ATOMIC_WIDTH);
        this.compareOrAdd = expected;
        this.swap = desired;
        return this;
    }

    /** 8-byte fetch-and-add of {@code delta}; the old value is written to {@code result[resultOffset..+8)}. */
    public WorkRequest fetchAndAdd(final long remoteAddress, final int rkey, final long delta,
                                   final MutableDirectBuffer result, final int resultOffset) {
        set(Opcode.FETCH_AND_ADD, remoteAddress, rkey, result, resultOffset, Opcode.ATOMIC_WIDTH);
        this.compareOrAdd = delta;
        this.swap = 0;
        return this;
    }

    /** Two-sided SEND of {@code src[srcOffset..srcOffset+length)} into the peer's next posted receive buffer. */
    public WorkRequest send(final DirectBuffer src, final int srcOffset, final int length) {
        return set(Opcode.SEND, 0, 0, src, srcOffset, length);
    }

    private WorkRequest set(final Opcode opcode, final long remoteAddress, final int rkey,
                            final DirectBuffer buffer, final int offset, final int length) {
        this.opcode = opcode;
        this.remoteAddress = remoteAddress;
        this.rkey = rkey;
        this.localBuffer = buffer;
        this.localOffset = offset;
        this.length = length;
        this.inline = false;
        this.next = null;
        return this;
    }

    /** Clears every field, so a pooled request carries nothing over. */
    public WorkRequest clear() {
        opcode = Opcode.READ;
        wrId = 0;
        signaled = true;
        inline = false;
        localBuffer = null;
        localOffset = 0;
        length = 0;
        lkey = 0;
        remoteAddress = 0;
        rkey = 0;
        compareOrAdd = 0;
        swap = 0;
        next = null;
        return this;
    }

    public WorkRequest wrId(final long wrId) {
        this.wrId = wrId;
        return this;
    }

    public WorkRequest signaled(final boolean signaled) {
        this.signaled = signaled;
        return this;
    }

    /**
     * Inline the payload of a WRITE or SEND into the request (at most the QP's {@code maxInlineBytes}): the data is
     * copied at post time, the local buffer may be reused at once, and the NIC skips the DMA read of the payload.
     */
    public WorkRequest inline(final boolean inline) {
        this.inline = inline;
        return this;
    }

    /** Local key of the registered region holding the local buffer; 0 when the buffer is not registered. */
    public WorkRequest lkey(final int lkey) {
        this.lkey = lkey;
        return this;
    }

    /** Links {@code next} after this request in a doorbell batch and returns {@code next}, for chaining. */
    public WorkRequest link(final WorkRequest next) {
        this.next = next;
        return next;
    }

    public Opcode opcode() {
        return opcode;
    }

    public long wrId() {
        return wrId;
    }

    public boolean signaled() {
        return signaled;
    }

    public boolean inline() {
        return inline;
    }

    public DirectBuffer localBuffer() {
        return localBuffer;
    }

    public int localOffset() {
        return localOffset;
    }

    public int length() {
        return length;
    }

    public int lkey() {
        return lkey;
    }

    public long remoteAddress() {
        return remoteAddress;
    }

    public int rkey() {
        return rkey;
    }

    /** CAS: the expected value. FAA: the value added. */
    public long compareOrAdd() {
        return compareOrAdd;
    }

    /** CAS: the value stored when the comparison holds. */
    public long swap() {
        return swap;
    }

    public WorkRequest next() {
        return next;
    }

    @Override
    public String toString() {
        return "WorkRequest{opcode=" + opcode + ", wrId=" + wrId + ", signaled=" + signaled + ", inline=" + inline
            + ", length=" + length + ", remoteAddress=0x" + Long.toHexString(remoteAddress) + ", rkey=" + rkey + '}';
    }
}
