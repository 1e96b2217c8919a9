package io.scythe.rrpc;

import org.agrona.DirectBuffer;
import org.agrona.concurrent.UnsafeBuffer;

import java.nio.charset.StandardCharsets;

/**
 * Answers one request, exactly once, on the server's thread. A handler that answers before it returns must not use
 * its responder after returning: the server then answers its next request with the same object ({@link RpcServer}
 * allocates a new one only after a handler returned without answering, i.e. kept it to answer later), as it reuses
 * the {@link RpcRequest} flyweight.
 */
public final class RpcResponder {
    private final RpcServer server;
    private RpcServer.ServerRing ring;
    private int callId;
    /** The {@link RpcServer.ServerRing#incarnation} of {@link #ring} when the call came. */
    private int incarnation;
    private long targetAddress;
    private int targetRkey;
    private int targetCapacity;
    private boolean answered;

    RpcResponder(final RpcServer server) {
        this.server = server;
    }

    /** This responder, now answering {@code callId} of {@code ring} (a new call: not answered yet). */
    RpcResponder of(final RpcServer.ServerRing ring, final int callId, final RpcRequest request) {
        this.ring = ring;
        this.callId = callId;
        this.incarnation = ring.incarnation;
        this.targetAddress = request.hasZeroCopyTarget() ? request.targetAddress() : 0;
        this.targetRkey = request.hasZeroCopyTarget() ? request.targetRkey() : 0;
        this.targetCapacity = request.targetCapacity();
        this.answered = false;
        return this;
    }

    /** The longest reply {@link #reply(DirectBuffer, int, int)} sends inline (one bucket). */
    public int maxReplyBytes() {
        return server.options().maxPayload();
    }

    /**
     * Replies with {@code data}: inline when it fits the cut-off, else into the caller's zero-copy buffer when it
     * gave one; otherwise the call fails with {@link RpcException#TOO_LARGE} (the handler should have answered with
     * a {@link #replyDescriptor descriptor} of registered memory).
     */
    public void reply(final DirectBuffer data, final int offset, final int length) {
        if (!claim()) {
            return;
        }
        if (length <= server.options().hybridCutoffBytes() && length <= server.options().maxPayload()) {
            server.reply(ring, MessageLayout.KIND_REPLY, callId, data, offset, length);
        } else if (targetCapacity > 0) {
            writeZeroCopy(data, offset, length);
        } else if (length <= server.options().maxPayload()) {
            server.reply(ring, MessageLayout.KIND_REPLY, callId, data, offset, length);
        } else {
            error(RpcException.TOO_LARGE, "reply of " + length + " bytes exceeds a bucket ("
                + server.options().maxPayload() + "); the caller must give a zero-copy buffer or the handler a "
                + "descriptor");
        }
    }

    public void reply(final DirectBuffer data) {
        reply(data, 0, data.capacity());
    }

    /**
     * As {@link #reply(DirectBuffer, int, int)}, for bytes that stay unchanged until the reply has been written:
     * immutable data, or an object in registered memory the caller keeps locked. A zero-copy reply is then written
     * straight from them, with no copy.
     */
    public void replyStable(final DirectBuffer data, final int offset, final int length) {
        if (targetCapacity > 0 && length <= targetCapacity
            && !(length <= server.options().hybridCutoffBytes() && length <= server.options().maxPayload())) {
            if (!claim()) {
                return;
            }
            server.zeroCopyStable(ring, targetAddress, targetRkey, data, offset, length);
            final UnsafeBuffer done = server.scratch();
            done.putInt(0, length);
            server.reply(ring, MessageLayout.KIND_ZERO_COPY_DONE, callId, done, 0, 4);
            return;
        }
        reply(data, offset, length);
    }

    /** Replies with no data. */
    public void reply() {
        reply(new UnsafeBuffer(new byte[0]), 0, 0);
    }

    /** RPC and one-sided mode: the caller READs {@code length} bytes at {@code address} (registered memory). */
    public void replyDescriptor(final long address, final int rkey, final int length) {
        if (!claim()) {
            return;
        }
        final UnsafeBuffer descriptor = server.scratch(); // copied into the reply bucket at once
        descriptor.putLong(0, address);
        descriptor.putInt(8, rkey);
        descriptor.putInt(12, length);
        server.reply(ring, MessageLayout.KIND_DESCRIPTOR, callId, descriptor, 0, MessageLayout.TARGET_BYTES);
    }

    private void writeZeroCopy(final DirectBuffer data, final int offset, final int length) {
        if (length > targetCapacity) {
            error(RpcException.TOO_LARGE, "reply of " + length + " bytes exceeds the caller's buffer of "
                + targetCapacity);
            return;
        }
        server.zeroCopy(ring, targetAddress, targetRkey, data, offset, length);
        final UnsafeBuffer done = server.scratch(); // copied into the reply bucket at once
        done.putInt(0, length);
        server.reply(ring, MessageLayout.KIND_ZERO_COPY_DONE, callId, done, 0, 4);
    }

    /** Fails the call with {@code code} ({@link RpcException#FIRST_APPLICATION_CODE} and up for handlers). */
    public void fail(final int code, final String message) {
        if (claim()) {
            error(code, message);
        }
    }

    private void error(final int code, final String message) {
        final byte[] text = message.getBytes(StandardCharsets.UTF_8);
        final int room = server.options().maxPayload() - 4;
        final UnsafeBuffer payload = new UnsafeBuffer(new byte[4 + Math.min(text.length, room)]);
        payload.putInt(0, code);
        payload.putBytes(4, text, 0, payload.capacity() - 4);
        server.reply(ring, MessageLayout.KIND_ERROR, callId, payload, 0, payload.capacity());
    }

    /**
     * Marks the call answered; false when the answer must not be posted (issue 23, rpclate): its ring was opened again
     * since the call came ({@link RpcServer.ServerRing#incarnation}). A ring is opened again only by a client that gave
     * its old one up (its queue pair failed, the peer was abandoned, or its process restarted under the same name),
     * and giving it up failed every call in flight on it: nobody waits for this answer. Posted, it would land in the
     * reopened ring, whose call ids start again at 1, and complete another call with it (a READ's value for another
     * key, a lock grant never asked for). The server's reopen and this check both run on the server's loop.
     */
    private boolean claim() {
        if (answered) {
            throw new IllegalStateException("RPC call " + callId + " already answered");
        }
        answered = true;
        if (ring.incarnation != incarnation) {
            server.staleReply();
            return false;
        }
        return true;
    }

    /** Whether this call has its answer (a handler that answers later checks before it fails the call). */
    public boolean answered() {
        return answered;
    }
}
