package io.scythe.fabric.disni;

import com.ibm.disni.verbs.IbvQP;
import com.ibm.disni.verbs.IbvSendWR;
import com.ibm.disni.verbs.IbvWC;
import com.ibm.disni.verbs.RdmaCmId;
import io.scythe.fabric.CompletionHandler;
import io.scythe.fabric.NicClockWord;
import io.scythe.fabric.Opcode;
import io.scythe.fabric.QpOptions;
import io.scythe.fabric.QpState;
import io.scythe.fabric.QueuePair;
import io.scythe.fabric.WcStatus;
import io.scythe.fabric.WorkRequest;
import io.scythe.fabric.WorkRequests;
import org.agrona.MutableDirectBuffer;

import java.io.IOException;
import java.nio.ByteOrder;
import java.util.ArrayDeque;
import java.util.List;

/**
 * An RC queue pair on the RDMA device. Local buffers that are not registered memory ({@code lkey == 0}) are staged
 * through this QP's registered bounce ring: copied in at post (WRITE, SEND), copied out at completion (READ data,
 * atomic results). Work-request ids on the wire are this QP's sequence numbers, so that a signaled completion
 * completes every earlier unsignaled request too, as RC ordering guarantees.
 *
 * <p>DiSNI exposes no {@code ibv_modify_qp}: {@link #reset()} cannot bring a QP out of the error state (it returns
 * false; connect a new one), and {@link #revoke()} disconnects it.
 */
final class DisniQueuePair implements QueuePair {
    private static final boolean BIG_ENDIAN_HOST = ByteOrder.nativeOrder() == ByteOrder.BIG_ENDIAN;

    private final DisniNic nic;
    private final RdmaCmId id;
    private final IbvQP qp;
    private final int qpNumber;
    private final String remoteNode;
    private final QpOptions options;
    private final DisniCompletionQueue cq;
    private final DisniRegion bounce;
    private final boolean atomicResultBigEndian;
    private final ArrayDeque<Pending> pending = new ArrayDeque<>();
    private long nextSeq;
    private int bounceHead;
    private QpState state = QpState.READY;
    private Object attachment;

    DisniQueuePair(final DisniNic nic, final RdmaCmId id, final String remoteNode, final QpOptions options,
                   final DisniCompletionQueue cq, final DisniRegion bounce, final boolean atomicResultBigEndian)
        throws IOException {
        this.nic = nic;
        this.id = id;
        this.qp = id.getQp();
        this.qpNumber = qp.getQp_num();
        this.remoteNode = remoteNode;
        this.options = options;
        this.cq = cq;
        this.bounce = bounce;
        this.atomicResultBigEndian = atomicResultBigEndian;
        if (cq != null) {
            cq.add(this, qpNumber);
        }
    }

    @Override
    public synchronized int post(final WorkRequest first) {
        if (cq == null || state == QpState.CLOSED) {
            return NOT_CONNECTED;
        }
        int count = 0;
        for (WorkRequest wr = first; wr != null; wr = wr.next()) {
            if (!WorkRequests.valid(wr, options) || NicClockWord.isClockWord(wr.remoteAddress(), wr.rkey())) {
                return INVALID_REQUEST; // a real NIC has no clock word to READ (DisniSupport.NO_NIC_CLOCK)
            }
            count++;
        }
        if (pending.size() + count > options.sendQueueDepth()) {
            return SEND_QUEUE_FULL;
        }
        final Pending[] staged = new Pending[count];
        final int bounceStart = bounceHead;
        final List<IbvSendWR> list;
        try {
            list = DisniMapping.sendList(first, (wr, index, sge) -> {
                final Pending p = new Pending(nextSeq + index, wr);
                staged[index] = p;
                if (wr.lkey() != 0) {
                    sge.setAddr(wr.localBuffer().addressOffset() + wr.localOffset());
                    sge.setLkey(wr.lkey());
                } else {
                    p.bounceOffset = reserveBounce(wr.length());
                    if (wr.opcode() == Opcode.WRITE || wr.opcode() == Opcode.SEND) {
                        bounce.buffer().putBytes(p.bounceOffset, wr.localBuffer(), wr.localOffset(), wr.length());
                    }
                    sge.setAddr(bounce.address() + p.bounceOffset);
                    sge.setLkey(bounce.lkey());
                }
                sge.setLength(wr.length());
            });
        } catch (final BounceFullException e) {
            bounceHead = bounceStart;
            return SEND_QUEUE_FULL;
        }
        for (int i = 0; i < count; i++) {
            list.get(i).setWr_id(nextSeq + i);
        }
        try {
            qp.postSend(list, null).execute().free();
        } catch (final IOException e) {
            // Not "queue full": room was checked above. ibv_post_send stops at the first request it cannot take, and
            // the ones before it are posted (mlx5 rings the doorbell for them); DiSNI does not say which (bad_wr).
            // So this is no refusal (a caller would take it for "nothing happened" and, say, release a lock again
            // while the posted release still lands): the queue pair is broken off, whatever was posted is flushed
            // or has run, and the caller sees a failure that may have landed. Unverified without a NIC.
            state = QpState.ERROR;
            disconnect();
            return INVALID_REQUEST;
        }
        nextSeq += count;
        for (final Pending p : staged) {
            pending.add(p);
        }
        cq.posted(count);
        return POST_OK;
    }

    /** Space in the bounce ring for {@code bytes}, 8-byte aligned; the ring is reclaimed as completions come. */
    private int reserveBounce(final int bytes) {
        final int size = (bytes + 7) & ~7;
        if (size > bounce.length()) {
            throw new BounceFullException();
        }
        if (bounceHead + size > bounce.length()) {
            bounceHead = 0;
        }
        final int at = bounceHead;
        bounceHead += size;
        return at;
    }

    /** A completion for one of this QP's requests: it completes that one and every earlier one. */
    void completed(final IbvWC wc, final CompletionHandler handler) {
        final WcStatus status = DisniMapping.status(wc.getStatus());
        final long seq = wc.getWr_id();
        int done = 0;
        while (true) {
            final Pending p;
            synchronized (this) {
                p = pending.peek();
                if (p == null || p.seq > seq) {
                    break;
                }
                pending.poll();
                if (status != WcStatus.SUCCESS && state == QpState.READY) {
                    state = QpState.ERROR;
                }
            }
            done++;
            final boolean last = p.seq == seq;
            final WcStatus st = last ? status : WcStatus.SUCCESS;
            if (st == WcStatus.SUCCESS) {
                copyOut(p);
            }
            if (last ? (p.signaled || st != WcStatus.SUCCESS) : p.signaled) {
                handler.onCompletion(this, p.wrId, p.opcode, st, last ? wc.getByte_len() : p.length);
            }
            if (last) {
                break;
            }
        }
        cq.completed(done);
    }

    private void copyOut(final Pending p) {
        if (p.opcode == Opcode.READ && p.bounceOffset >= 0) {
            ((MutableDirectBuffer) p.local).putBytes(p.localOffset, bounce.buffer(), p.bounceOffset, p.length);
        } else if (p.opcode.isAtomic()) {
            final long raw = p.bounceOffset >= 0 ? bounce.buffer().getLong(p.bounceOffset)
                : p.local.getLong(p.localOffset);
            final long value = atomicResultBigEndian && !BIG_ENDIAN_HOST ? DisniMapping.atomicResult(raw, true) : raw;
            ((MutableDirectBuffer) p.local).putLong(p.localOffset, value);
        }
    }

    @Override
    public int postRecv(final MutableDirectBuffer buffer, final int offset, final int length, final long wrId) {
        if (cq == null || state == QpState.CLOSED) {
            return NOT_CONNECTED;
        }
        final DisniRegion region = nic.regionHolding(buffer.addressOffset() + offset, length);
        if (region == null) {
            return INVALID_REQUEST; // the device can only receive into registered memory
        }
        try {
            qp.postRecv(List.of(DisniMapping.receive(wrId, buffer.addressOffset() + offset, length, region.lkey())),
                null).execute().free();
            return POST_OK;
        } catch (final IOException e) {
            return SEND_QUEUE_FULL;
        }
    }

    @Override
    public boolean reset() {
        return state == QpState.READY;
    }

    @Override
    public synchronized void revoke() {
        state = QpState.REVOKED;
        disconnect();
    }

    @Override
    public synchronized int outstanding() {
        return pending.size();
    }

    @Override
    public synchronized void close() {
        if (state == QpState.CLOSED) {
            return;
        }
        state = QpState.CLOSED;
        disconnect();
        nic.forget(this);
    }

    private void disconnect() {
        try {
            id.disconnect();
        } catch (final IOException e) {
            // already disconnected
        }
    }

    @Override
    public int qpNumber() {
        return qpNumber;
    }

    @Override
    public String localNode() {
        return nic.node();
    }

    @Override
    public String remoteNode() {
        return remoteNode;
    }

    @Override
    public synchronized QpState state() {
        return state;
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

    private static final class Pending {
        final long seq;
        final long wrId;
        final Opcode opcode;
        final boolean signaled;
        final org.agrona.DirectBuffer local;
        final int localOffset;
        final int length;
        int bounceOffset = -1;

        Pending(final long seq, final WorkRequest wr) {
            this.seq = seq;
            this.wrId = wr.wrId();
            this.opcode = wr.opcode();
            this.signaled = wr.signaled();
            this.local = wr.localBuffer();
            this.localOffset = wr.localOffset();
            this.length = wr.length();
        }
    }

    private static final class BounceFullException extends RuntimeException {
        BounceFullException() {
            super(null, null, false, false);
        }
    }
}
