package io.scythe.fabric.tcp;

import io.scythe.fabric.Opcode;
import io.scythe.fabric.QpOptions;
import io.scythe.fabric.QpState;
import io.scythe.fabric.QueuePair;
import io.scythe.fabric.WcStatus;
import io.scythe.fabric.WorkRequest;
import io.scythe.fabric.WorkRequests;
import io.vertx.core.buffer.Buffer;
import org.agrona.MutableDirectBuffer;

import java.util.ArrayDeque;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * One end of a tcp queue pair: it posts doorbell batches as REQUEST frames on its connection and matches the
 * RESPONSE frames to them in order; it also holds the receive buffers SENDs from the peer land in. Posting happens
 * on the owner's thread, responses on the socket's event loop; the shared state is guarded by this object.
 */
final class TcpQueuePair implements QueuePair {
    private final TcpConnection connection;
    private final int qpNumber;
    private final String localNode;
    private final String remoteNode;
    private final QpOptions options;
    private final TcpCompletionQueue cq;
    private final ArrayDeque<Pending> pending = new ArrayDeque<>();
    private final ArrayDeque<Posted> receives = new ArrayDeque<>();
    private long nextSeq;
    private QpState state = QpState.READY;
    private boolean lost;
    private volatile Object attachment;
    /**
     * Posted requests whose completion is not yet delivered by a poll ({@link #outstanding}), as on an RC queue pair:
     * an unsignaled request that succeeded counts until the next completion of this queue pair is delivered.
     */
    private final AtomicInteger undelivered = new AtomicInteger();
    /** Unsignaled requests that succeeded since the last reported completion: retired with the next one. */
    private int silentlyDone;
    /** When the last response came ({@link System#nanoTime()}); guarded by this object. */
    private long lastResponseNs = System.nanoTime();

    TcpQueuePair(final TcpConnection connection, final int qpNumber, final String localNode, final String remoteNode,
                 final QpOptions options, final TcpCompletionQueue cq) {
        this.connection = connection;
        this.qpNumber = qpNumber;
        this.localNode = localNode;
        this.remoteNode = remoteNode;
        this.options = new QpOptions(options).validate();
        this.cq = cq;
    }

    @Override
    public int post(final WorkRequest first) {
        if (cq == null || state == QpState.CLOSED) {
            return NOT_CONNECTED;
        }
        int count = 0;
        long frameBytes = 9;
        for (WorkRequest wr = first; wr != null; wr = wr.next()) {
            if (!WorkRequests.valid(wr, options)) {
                return INVALID_REQUEST;
            }
            count++;
            frameBytes += TcpFrames.REQUEST_HEADER_BYTES + (carriesPayload(wr.opcode()) ? wr.length() : 0);
        }
        if (frameBytes > TcpFrames.MAX_FRAME_BYTES) {
            return INVALID_REQUEST; // a batch larger than a frame: split it
        }
        if (count == 0) {
            return POST_OK;
        }
        synchronized (this) {
            if (pending.size() + count > options.sendQueueDepth()) {
                return SEND_QUEUE_FULL;
            }
            cq.posted(count);
            undelivered.addAndGet(count);
            if (state != QpState.READY || lost) {
                final WcStatus status = lost ? WcStatus.TRANSPORT_RETRY_EXCEEDED
                    : state == QpState.REVOKED ? WcStatus.REVOKED : WcStatus.WR_FLUSH_ERROR;
                for (WorkRequest wr = first; wr != null; wr = wr.next()) {
                    cq.finished(this, wr.wrId(), wr.opcode(), status, 0, true, 1);
                }
                return POST_OK;
            }
            final long postedNs = System.nanoTime();
            final Buffer frame = Buffer.buffer((int) frameBytes + 4);
            frame.appendIntLE(0).appendByte(TcpFrames.REQUEST).appendIntLE(count); // length set below
            for (WorkRequest wr = first; wr != null; wr = wr.next()) {
                final long seq = nextSeq++;
                frame.appendByte((byte) wr.opcode().code())
                    .appendByte((byte) (wr.signaled() ? TcpFrames.FLAG_SIGNALED : 0))
                    .appendShortLE((short) 0)
                    .appendIntLE(wr.length())
                    .appendLongLE(seq)
                    .appendLongLE(wr.remoteAddress())
                    .appendIntLE(wr.rkey())
                    .appendIntLE(0)
                    .appendLongLE(wr.compareOrAdd())
                    .appendLongLE(wr.swap());
                if (carriesPayload(wr.opcode()) && wr.length() > 0) {
                    final byte[] payload = new byte[wr.length()];
                    wr.localBuffer().getBytes(wr.localOffset(), payload);
                    frame.appendBytes(payload);
                }
                pending.add(new Pending(seq, wr.wrId(), wr.opcode(), wr.signaled(),
                    wr.opcode().returnsData() ? (MutableDirectBuffer) wr.localBuffer() : null, wr.localOffset(),
                    postedNs));
            }
            frame.setIntLE(0, frame.length() - 4);
            connection.write(frame);
        }
        return POST_OK;
    }

    private static boolean carriesPayload(final Opcode opcode) {
        return opcode == Opcode.WRITE || opcode == Opcode.SEND;
    }

    /** A RESPONSE frame ({@code body} from its type byte). Socket thread. */
    void onResponse(final Buffer body) {
        final int count = body.getIntLE(1);
        int at = 5;
        for (int i = 0; i < count; i++) {
            if (at + TcpFrames.RESPONSE_HEADER_BYTES > body.length()) {
                connection.protocolError("truncated RESPONSE frame");
                return;
            }
            final long seq = body.getLongLE(at);
            final WcStatus status = WcStatus.fromCode(body.getByte(at + 8));
            final int dataLength = body.getIntLE(at + 12);
            final int data = at + TcpFrames.RESPONSE_HEADER_BYTES;
            if (dataLength < 0 || data + dataLength > body.length()) {
                connection.protocolError("RESPONSE data past the frame");
                return;
            }
            at = data + dataLength;
            final Pending p;
            final boolean report;
            final int retires;
            synchronized (this) {
                lastResponseNs = System.nanoTime();
                p = pending.peek();
                if (p == null || p.seq != seq) {
                    connection.protocolError("RESPONSE out of order: expected " + (p == null ? "none" : p.seq)
                        + ", got " + seq);
                    return;
                }
                pending.poll();
                if (status == WcStatus.REVOKED) {
                    state = QpState.REVOKED;
                } else if (status != WcStatus.SUCCESS && state == QpState.READY) {
                    state = QpState.ERROR;
                }
                report = p.signaled || status != WcStatus.SUCCESS;
                retires = report ? silentlyDone + 1 : 0;
                silentlyDone = report ? 0 : silentlyDone + 1;
            }
            int bytes = 0;
            if (status == WcStatus.SUCCESS && p.local != null) {
                if (p.opcode.isAtomic()) {
                    p.local.putLong(p.localOffset, body.getLongLE(data));
                } else if (dataLength > 0) {
                    p.local.putBytes(p.localOffset, body.getBytes(data, data + dataLength));
                }
                bytes = p.opcode.isAtomic() ? Opcode.ATOMIC_WIDTH : dataLength;
            }
            cq.finished(this, p.wrId, p.opcode, status, bytes, report, retires);
        }
    }

    /** The connection is gone: what is in flight never completes normally. Socket thread. */
    void connectionLost() {
        final Pending[] failed;
        synchronized (this) {
            lost = true;
            failed = pending.toArray(new Pending[0]);
            pending.clear();
            undelivered.addAndGet(-silentlyDone); // nothing reported after them will retire them now
            silentlyDone = 0;
        }
        if (cq != null) {
            for (final Pending p : failed) {
                cq.finished(this, p.wrId, p.opcode, WcStatus.TRANSPORT_RETRY_EXCEEDED, 0, true, 1);
            }
        }
    }

    /**
     * Whether requests are in flight and the peer answered none of them for longer than
     * {@link QpOptions#transportTimeoutMs()} at {@code nowNs} ({@link System#nanoTime()}): since the oldest was posted
     * or the last response came, whichever is later (as an RC queue pair's ACK timeout restarts with every ACK). A
     * live peer that is only slow to get through a deep pipeline keeps answering; a paused one does not. Any thread.
     */
    synchronized boolean overdue(final long nowNs) {
        final Pending oldest = pending.peek();
        final long bound = options.transportTimeoutMs();
        if (oldest == null || bound <= 0) {
            return false;
        }
        final long since = lastResponseNs - oldest.postedNs > 0 ? lastResponseNs : oldest.postedNs;
        return nowNs - since > java.util.concurrent.TimeUnit.MILLISECONDS.toNanos(bound);
    }

    synchronized void revokedByPeer() {
        if (state != QpState.CLOSED) {
            state = QpState.REVOKED;
        }
    }

    /** A SEND from the peer, into the oldest posted buffer. Socket thread. */
    WcStatus deliver(final Buffer body, final int offset, final int length) {
        final Posted buffer;
        synchronized (receives) {
            buffer = cq == null ? null : receives.poll();
        }
        if (buffer == null) {
            return WcStatus.RNR_RETRY_EXCEEDED;
        }
        if (buffer.length < length) {
            cq.received(this, buffer.wrId, 0, WcStatus.LOCAL_LENGTH_ERROR);
            return WcStatus.REMOTE_INVALID_REQUEST;
        }
        if (length > 0) {
            buffer.buffer.putBytes(buffer.offset, body.getBytes(offset, offset + length));
        }
        cq.received(this, buffer.wrId, length, WcStatus.SUCCESS);
        return WcStatus.SUCCESS;
    }

    @Override
    public int postRecv(final MutableDirectBuffer buffer, final int offset, final int length, final long wrId) {
        if (cq == null || state == QpState.CLOSED) {
            return NOT_CONNECTED;
        }
        if (buffer == null || length < 0 || offset < 0 || offset > buffer.capacity() - length) {
            return INVALID_REQUEST;
        }
        synchronized (receives) {
            if (receives.size() >= options.receiveQueueDepth()) {
                return SEND_QUEUE_FULL;
            }
            receives.add(new Posted(buffer, offset, length, wrId));
        }
        return POST_OK;
    }

    @Override
    public synchronized boolean reset() {
        if (state == QpState.ERROR && pending.isEmpty() && !lost) {
            state = QpState.READY;
            connection.write(TcpConnection.control(TcpFrames.RESET));
            return true;
        }
        return state == QpState.READY && !lost;
    }

    @Override
    public void revoke() {
        synchronized (this) {
            if (state == QpState.CLOSED) {
                return;
            }
            state = QpState.REVOKED;
        }
        connection.revokeHere();
    }

    @Override
    public synchronized boolean connectionGone() {
        return lost || state == QpState.CLOSED;
    }

    @Override
    public int outstanding() {
        return undelivered.get();
    }

    /** A poll delivered a completion of this queue pair, retiring {@code requests} (it and the unsignaled before). */
    void delivered(final int requests) {
        undelivered.addAndGet(-requests);
    }

    @Override
    public void close() {
        synchronized (this) {
            if (state == QpState.CLOSED) {
                return;
            }
            state = QpState.CLOSED;
        }
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

    @Override
    public String toString() {
        return "TcpQueuePair{" + localNode + "->" + remoteNode + " qp=" + qpNumber + " state=" + state + '}';
    }

    private record Pending(long seq, long wrId, Opcode opcode, boolean signaled, MutableDirectBuffer local,
                           int localOffset, long postedNs) {
    }

    private record Posted(MutableDirectBuffer buffer, int offset, int length, long wrId) {
    }
}
