package io.scythe.fabric.tcp;

import io.scythe.fabric.NicClockWord;
import io.scythe.fabric.Opcode;
import io.scythe.fabric.WcStatus;
import io.scythe.fabric.emulated.DirectRegion;
import io.scythe.fabric.emulated.OneSidedOps;
import io.vertx.core.Handler;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.internal.logging.Logger;
import io.vertx.core.internal.logging.LoggerFactory;
import io.vertx.core.net.NetSocket;
import io.vertx.core.parsetools.RecordParser;
import org.agrona.concurrent.UnsafeBuffer;

/**
 * One tcp connection between two nodes, after the handshake: the local end's requests go out as REQUEST frames and
 * their RESPONSEs come back; the peer's REQUEST frames are executed here, in order, on this node's regions (this
 * node's CPU does what a NIC would: soft verbs) and answered with one RESPONSE frame each.
 *
 * <p>The responder keeps the state an RC responder has: after a failed request it flushes until the requester resets
 * the queue pair; once revoked, it fails everything with REVOKED.
 */
final class TcpConnection {
    private static final Logger LOG = LoggerFactory.getLogger(TcpConnection.class);
    private static final int READY = 0;
    private static final int ERROR = 1;
    private static final int REVOKED = 2;

    private final TcpNic nic;
    private final NetSocket socket;
    private final String peer;
    private TcpQueuePair end;
    private volatile int responderState = READY;
    private volatile boolean closed;

    TcpConnection(final TcpNic nic, final NetSocket socket, final String peer) {
        this.nic = nic;
        this.socket = socket;
        this.peer = peer;
    }

    /** Starts reading frames; {@code parser} was reading the handshake and now hands frames here. */
    void start(final TcpQueuePair localEnd, final FrameReader reader) {
        this.end = localEnd;
        reader.frames(this::onFrame);
        socket.closeHandler(v -> lost());
        socket.exceptionHandler(e -> LOG.debug("tcp connection to " + peer + ": " + e));
    }

    String peer() {
        return peer;
    }

    TcpQueuePair end() {
        return end;
    }

    void write(final Buffer frame) {
        if (!closed) {
            socket.write(frame);
        }
    }

    static Buffer control(final byte type) {
        return Buffer.buffer(5).appendIntLE(1).appendByte(type);
    }

    /** This node revokes the connection (fencing, or its end was revoked): both directions fail from now on. */
    void revokeHere() {
        responderState = REVOKED;
        if (end != null) {
            end.revokedByPeer();
        }
        write(control(TcpFrames.REVOKE));
    }

    void close() {
        if (!closed) {
            closed = true;
            socket.close();
        }
        nic.forget(this);
    }

    /**
     * The peer stopped answering (its requests' transport timeout passed): what is in flight fails with
     * {@link WcStatus#TRANSPORT_RETRY_EXCEEDED} now, and the connection is closed, so nothing posted later waits on it.
     */
    void timedOut() {
        LOG.warn("tcp connection to " + peer + " closed: no response within "
            + end.options().transportTimeoutMs() + " ms (the peer is paused, hung or gone)");
        end.connectionLost();
        close();
    }

    void protocolError(final String what) {
        LOG.warn("tcp connection to " + peer + " closed: " + what);
        close();
    }

    private void lost() {
        closed = true;
        if (end != null) {
            end.connectionLost();
        }
        nic.forget(this);
    }

    private void onFrame(final Buffer body) {
        switch (body.getByte(0)) {
            case TcpFrames.REQUEST:
                execute(body);
                break;
            case TcpFrames.RESPONSE:
                if (end == null) {
                    protocolError("RESPONSE on a connection without a requester");
                } else {
                    end.onResponse(body);
                }
                break;
            case TcpFrames.RESET:
                if (responderState == ERROR) {
                    responderState = READY;
                }
                break;
            case TcpFrames.REVOKE:
                responderState = REVOKED;
                if (end != null) {
                    end.revokedByPeer();
                }
                break;
            default:
                protocolError("unknown frame type " + body.getByte(0));
        }
    }

    /** Executes a REQUEST frame's requests in order and answers them with one RESPONSE frame. */
    /** REQUEST frames being executed (on the socket's loop) while a fence may come from another thread. */
    private final java.util.concurrent.atomic.AtomicInteger executing = new java.util.concurrent.atomic.AtomicInteger();

    boolean executing() {
        return executing.get() > 0;
    }

    private void execute(final Buffer body) {
        executing.incrementAndGet();
        try {
            executeFrame(body);
        } finally {
            executing.decrementAndGet();
        }
    }

    private void executeFrame(final Buffer body) {
        if (body.length() < 5) {
            protocolError("truncated REQUEST frame");
            return;
        }
        nic.executedFrame();
        final int count = body.getIntLE(1);
        final Buffer out = Buffer.buffer(64).appendIntLE(0).appendByte(TcpFrames.RESPONSE).appendIntLE(count);
        final UnsafeBuffer scratch = new UnsafeBuffer(new byte[Long.BYTES]);
        int at = 5;
        for (int i = 0; i < count; i++) {
            if (at + TcpFrames.REQUEST_HEADER_BYTES > body.length()) {
                protocolError("truncated REQUEST frame");
                return;
            }
            final Opcode opcode;
            try {
                opcode = Opcode.fromCode(body.getByte(at));
            } catch (final IllegalArgumentException e) {
                protocolError(e.getMessage());
                return;
            }
            final int length = body.getIntLE(at + 4);
            final long seq = body.getLongLE(at + 8);
            final long address = body.getLongLE(at + 16);
            final int rkey = body.getIntLE(at + 24);
            final long compareOrAdd = body.getLongLE(at + 32);
            final long swap = body.getLongLE(at + 40);
            final int payload = at + TcpFrames.REQUEST_HEADER_BYTES;
            final boolean carries = opcode == Opcode.WRITE || opcode == Opcode.SEND;
            if (length < 0 || (carries && payload + length > body.length())) {
                protocolError("REQUEST payload past the frame");
                return;
            }
            at = payload + (carries ? length : 0);
            byte[] data = null;
            WcStatus status;
            if (responderState == REVOKED) {
                status = WcStatus.REVOKED;
            } else if (responderState == ERROR) {
                status = WcStatus.WR_FLUSH_ERROR;
            } else if (opcode == Opcode.SEND) {
                status = end == null ? WcStatus.RNR_RETRY_EXCEEDED : end.deliver(body, payload, length);
            } else if (opcode == Opcode.RECV) {
                status = WcStatus.REMOTE_INVALID_REQUEST;
            } else if (NicClockWord.addressedBy(rkey)) {
                status = NicClockWord.check(opcode, address, length);
                if (status == WcStatus.SUCCESS) {
                    scratch.putLong(0, nic.nicClock().nanoTime()); // the responder's clock as it executes the READ
                    data = scratch.byteArray().clone();
                }
            } else {
                final DirectRegion region = nic.regionTable().byKey(rkey);
                if (opcode == Opcode.READ) {
                    final UnsafeBuffer dst = new UnsafeBuffer(new byte[Math.max(0, length)]);
                    status = OneSidedOps.execute(opcode, region, rkey, address, dst, 0, length, 0, 0);
                    data = status == WcStatus.SUCCESS ? dst.byteArray() : null;
                } else if (opcode == Opcode.WRITE) {
                    final UnsafeBuffer src = new UnsafeBuffer(body.getBytes(payload, payload + length));
                    status = OneSidedOps.execute(opcode, region, rkey, address, src, 0, length, 0, 0);
                } else {
                    status = length != Opcode.ATOMIC_WIDTH ? WcStatus.REMOTE_INVALID_REQUEST
                        : OneSidedOps.execute(opcode, region, rkey, address, scratch, 0, length, compareOrAdd, swap);
                    data = status == WcStatus.SUCCESS ? scratch.byteArray().clone() : null;
                }
            }
            if (status != WcStatus.SUCCESS && status != WcStatus.REVOKED && responderState == READY) {
                responderState = ERROR;
            }
            out.appendLongLE(seq).appendByte((byte) status.code()).appendByte((byte) 0).appendShortLE((short) 0)
                .appendIntLE(data == null ? 0 : data.length);
            if (data != null) {
                out.appendBytes(data);
            }
        }
        out.setIntLE(0, out.length() - 4);
        write(out);
    }

    /**
     * Splits the socket's bytes into frames: a 4-byte length, then that many bytes; a length of zero or above the
     * limit is a malformed peer and closes the connection.
     */
    static final class FrameReader {
        private final RecordParser parser;
        private final NetSocket socket;
        private int limit;
        private boolean header = true;
        private Handler<Buffer> frames;

        FrameReader(final NetSocket socket, final int limit, final Handler<Buffer> frames,
                    final Handler<String> malformed) {
            this.socket = socket;
            this.limit = limit;
            this.frames = frames;
            this.parser = RecordParser.newFixed(4, buffer -> {
                if (header) {
                    final int length = buffer.getIntLE(0);
                    if (length <= 0 || length > this.limit) {
                        malformed.handle("frame length " + length + " outside [1, " + this.limit + "]");
                        return;
                    }
                    header = false;
                    this.parserRef().fixedSizeMode(length);
                } else {
                    header = true;
                    this.parserRef().fixedSizeMode(4);
                    this.frames.handle(buffer);
                }
            });
            socket.handler(parser);
        }

        private RecordParser parserRef() {
            return parser;
        }

        /** From now on frames go to {@code next}, up to the full frame limit. */
        void frames(final Handler<Buffer> next) {
            this.frames = next;
            this.limit = TcpFrames.MAX_FRAME_BYTES;
        }
    }
}
