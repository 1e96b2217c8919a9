package io.scythe.storage.remote;

import io.scythe.rrpc.RpcRequest;
import io.scythe.rrpc.RpcResponder;
import io.scythe.rrpc.RpcServer;
import io.scythe.storage.LogDb;
import io.scythe.storage.Table;
import org.agrona.DirectBuffer;
import org.agrona.concurrent.UnsafeBuffer;

/** LogDB's RPCs on a memory node's CPU: index lookups and timestamped reads ({@link LogDbRpc}). */
public final class LogDbService {
    private final LogDb db;
    private final UnsafeBuffer scratch = new UnsafeBuffer(new byte[1 << 16]);

    public LogDbService(final LogDb db) {
        this.db = db;
    }

    /** Serves LogDB's RPCs on {@code server} (which runs on one event loop, so the scratch buffer is safe). */
    public LogDbService register(final RpcServer server) {
        server.handle(LogDbRpc.LOOKUP, this::lookup);
        server.handle(LogDbRpc.READ, this::read);
        server.handle(LogDbRpc.LOOKUP_READ, this::lookupRead);
        return this;
    }

    private Table table(final RpcRequest request, final RpcResponder responder, final int length) {
        if (request.payloadLength() != length) {
            responder.fail(LogDbRpc.BAD_REQUEST, "LogDB RPC " + request.rpcId() + " takes " + length + " bytes, got "
                + request.payloadLength());
            return null;
        }
        final int id = request.payload().getInt(request.payloadOffset());
        final Table table = db.table(id);
        if (table == null) {
            responder.fail(LogDbRpc.UNKNOWN_TABLE, "no table " + id + " on memory node " + db.nic().node());
        }
        return table;
    }

    private void lookup(final RpcRequest request, final RpcResponder responder) {
        final Table table = table(request, responder, 16);
        if (table != null) {
            scratch.putLong(0, table.lookup(request.payload().getLong(request.payloadOffset() + 8)));
            responder.reply(scratch, 0, 8);
        }
    }

    private void read(final RpcRequest request, final RpcResponder responder) {
        final Table table = table(request, responder, 24);
        if (table == null) {
            return;
        }
        final DirectBuffer p = request.payload();
        final int at = request.payloadOffset();
        final int length = table.readAt(p.getLong(at + 8), p.getLong(at + 16), scratch, 0);
        answer(responder, length, 0);
    }

    private void lookupRead(final RpcRequest request, final RpcResponder responder) {
        final Table table = table(request, responder, 24);
        if (table == null) {
            return;
        }
        final DirectBuffer p = request.payload();
        final int at = request.payloadOffset();
        final long pointer = table.lookup(p.getLong(at + 8));
        if (pointer == 0) {
            responder.fail(LogDbRpc.NOT_FOUND, "no key " + p.getLong(at + 8) + " in table " + table.schema().name());
            return;
        }
        scratch.putLong(0, pointer);
        answer(responder, table.readAt(pointer, p.getLong(at + 16), scratch, 8), 8);
    }

    private void answer(final RpcResponder responder, final int length, final int prefix) {
        if (length == Table.STALE) {
            responder.fail(LogDbRpc.STALE, "stale object pointer");
        } else if (length < 0) {
            responder.fail(LogDbRpc.NOT_FOUND, "no version visible");
        } else {
            responder.reply(scratch, 0, prefix + length);
        }
    }
}
