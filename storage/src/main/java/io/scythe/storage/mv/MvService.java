package io.scythe.storage.mv;

import io.scythe.rrpc.RpcRequest;
import io.scythe.rrpc.RpcResponder;
import io.scythe.rrpc.RpcServer;
import org.agrona.DirectBuffer;
import org.agrona.ExpandableArrayBuffer;

/**
 * The multi-version tables' RPCs on a memory node's CPU ({@link MvRpc}), served on the RPC server's loop. No handler
 * waits: a latch another installer holds is answered {@link MvStatus#LATCHED}.
 */
public final class MvService {
    private final MvStore store;
    private final ExpandableArrayBuffer scratch = new ExpandableArrayBuffer(1 << 12);
    private final MvRead read = new MvRead();

    public MvService(final MvStore store) {
        this.store = store;
    }

    /** Serves the RPCs on {@code server} (which runs on one event loop, so the scratch buffer is safe). */
    public MvService register(final RpcServer server) {
        server.handle(MvRpc.READ, this::read);
        server.handle(MvRpc.INSTALL, this::install);
        server.handle(MvRpc.COMMIT, this::commit);
        server.handle(MvRpc.ROLLBACK, this::rollback);
        server.handle(MvRpc.MAKE_ROOM, this::makeRoom);
        server.handle(MvRpc.LOOKUP, this::lookup);
        return this;
    }

    /** The request's table, or {@code null} once the call has been failed. */
    private MvTable table(final RpcRequest request, final RpcResponder responder, final int min, final int max) {
        if (request.payloadLength() < min || request.payloadLength() > max) {
            responder.fail(MvRpc.BAD_REQUEST, "multi-version RPC " + Integer.toHexString(request.rpcId()) + " takes "
                + (min == max ? "" : "at least ") + min + " bytes, got " + request.payloadLength());
            return null;
        }
        final int id = request.payload().getInt(request.payloadOffset());
        final MvTable table = store.table(id);
        if (table == null) {
            responder.fail(MvRpc.UNKNOWN_TABLE, "no multi-version table " + id + " on memory node "
                + store.nic().node());
        }
        return table;
    }

    private void read(final RpcRequest request, final RpcResponder responder) {
        final MvTable table = table(request, responder, MvRpc.READ_REQUEST_BYTES, MvRpc.READ_REQUEST_BYTES);
        if (table == null) {
            return;
        }
        final DirectBuffer p = request.payload();
        final int at = request.payloadOffset();
        scratch.checkLimit(MvRpc.READ_REPLY_HEADER_BYTES + table.schema().maxValueBytes());
        table.read(p.getLong(at + 8), p.getLong(at + 16), (p.getInt(at + 4) & MvRpc.FLAG_RAISE_RTS) != 0, scratch,
            MvRpc.READ_REPLY_HEADER_BYTES, read);
        scratch.putInt(0, read.status());
        scratch.putInt(4, read.slot());
        scratch.putLong(8, read.wts());
        responder.reply(scratch, 0, MvRpc.READ_REPLY_HEADER_BYTES + Math.max(read.status(), 0));
    }

    private void install(final RpcRequest request, final RpcResponder responder) {
        final MvTable table = table(request, responder, MvRpc.INSTALL_HEADER_BYTES, Integer.MAX_VALUE);
        if (table == null) {
            return;
        }
        final DirectBuffer p = request.payload();
        final int at = request.payloadOffset();
        final int flags = p.getInt(at + 4);
        final long ts = p.getLong(at + 16);
        final long owner = p.getLong(at + 24);
        final int length = p.getInt(at + MvRpc.INSTALL_HEADER_BYTES - Integer.BYTES);
        final boolean hasValue = (flags & MvRpc.FLAG_VALUE) != 0;
        if (!wellFormed(request, MvRpc.INSTALL_HEADER_BYTES, hasValue, length) || owner == 0
            || owner == MvObjectDescriptor.MEMORY_NODE_OWNER || ts < 0 || ts > MvSlotDescriptor.MAX_WTS) {
            responder.fail(MvRpc.BAD_REQUEST, "malformed INSTALL into " + table.schema().name());
            return;
        }
        status(responder, table.install(p.getLong(at + 8), ts, owner, p, at + MvRpc.INSTALL_HEADER_BYTES,
            hasValue ? length : -1, (flags & MvRpc.FLAG_EXCLUSIVE) != 0));
    }

    private void commit(final RpcRequest request, final RpcResponder responder) {
        final MvTable table = table(request, responder, MvRpc.COMMIT_HEADER_BYTES, Integer.MAX_VALUE);
        if (table == null) {
            return;
        }
        final DirectBuffer p = request.payload();
        final int at = request.payloadOffset();
        final boolean hasValue = (p.getInt(at + 4) & MvRpc.FLAG_VALUE) != 0;
        final int length = p.getInt(at + MvRpc.COMMIT_HEADER_BYTES - Integer.BYTES);
        if (!wellFormed(request, MvRpc.COMMIT_HEADER_BYTES, hasValue, length)) {
            responder.fail(MvRpc.BAD_REQUEST, "malformed COMMIT into " + table.schema().name());
            return;
        }
        status(responder, table.commit(p.getLong(at + 8), p.getInt(at + 24), p.getLong(at + 16), p,
            at + MvRpc.COMMIT_HEADER_BYTES, hasValue ? length : -1));
    }

    private static boolean wellFormed(final RpcRequest request, final int header, final boolean hasValue,
                                      final int length) {
        return hasValue ? length >= 0 && length == request.payloadLength() - header
            : request.payloadLength() == header;
    }

    private void rollback(final RpcRequest request, final RpcResponder responder) {
        final MvTable table = table(request, responder, MvRpc.ROLLBACK_REQUEST_BYTES, MvRpc.ROLLBACK_REQUEST_BYTES);
        if (table != null) {
            final DirectBuffer p = request.payload();
            final int at = request.payloadOffset();
            status(responder, table.rollback(p.getLong(at + 8), p.getInt(at + 24), p.getLong(at + 16)));
        }
    }

    private void makeRoom(final RpcRequest request, final RpcResponder responder) {
        final MvTable table = table(request, responder, MvRpc.POINTER_REQUEST_BYTES, MvRpc.POINTER_REQUEST_BYTES);
        if (table != null) {
            status(responder, table.makeRoom(request.payload().getLong(request.payloadOffset() + 8)));
        }
    }

    private void lookup(final RpcRequest request, final RpcResponder responder) {
        final MvTable table = table(request, responder, MvRpc.POINTER_REQUEST_BYTES, MvRpc.POINTER_REQUEST_BYTES);
        if (table != null) {
            scratch.putLong(0, table.lookup(request.payload().getLong(request.payloadOffset() + 8)));
            responder.reply(scratch, 0, Long.BYTES);
        }
    }

    private void status(final RpcResponder responder, final int status) {
        scratch.putInt(0, status);
        scratch.putInt(4, 0);
        responder.reply(scratch, 0, MvRpc.STATUS_REPLY_BYTES);
    }
}
