package io.scythe.txn.rcc.sundial;

import io.scythe.rrpc.RpcRequest;
import io.scythe.rrpc.RpcResponder;
import io.scythe.rrpc.RpcServer;
import io.scythe.storage.LogDb;
import io.scythe.storage.ObjectLayout;
import io.scythe.storage.Table;
import io.scythe.txn.rcc.RccRpc;
import org.agrona.DirectBuffer;
import org.agrona.concurrent.AtomicBuffer;
import org.agrona.concurrent.UnsafeBuffer;

/**
 * RCC's SUNDIAL RPC stages on a memory node: the atomic read ({@link RccRpc#SD_READ}), the lock
 * ({@link RccRpc#SD_LOCK}) and the lease renewal ({@link RccRpc#SD_RENEW}), each applied by the node's CPU to the
 * tuple in place ({@link SundialTuple}). Commit and release go through {@link io.scythe.txn.rcc.RccLockService}'s
 * WRITE_BACK (flag RTS) and RELEASE.
 */
public final class SundialService {
    private final LogDb db;
    private UnsafeBuffer reply = new UnsafeBuffer(new byte[1024]);
    private final UnsafeBuffer small = new UnsafeBuffer(new byte[8]);
    private long renewed;

    public SundialService(final LogDb db) {
        this.db = db;
    }

    public SundialService register(final RpcServer server) {
        server.handle(RccRpc.SD_READ, (request, responder) -> onReadOrLock(request, responder, false));
        server.handle(RccRpc.SD_LOCK, (request, responder) -> onReadOrLock(request, responder, true));
        server.handle(RccRpc.SD_RENEW, this::onRenew);
        return this;
    }

    /** Leases renewed so far. */
    public long renewed() {
        return renewed;
    }

    private void onReadOrLock(final RpcRequest request, final RpcResponder responder, final boolean lock) {
        if (request.payloadLength() != RccRpc.LOCK_REQUEST_BYTES) {
            throw new IllegalArgumentException("RCC SUNDIAL request of " + request.payloadLength() + " bytes");
        }
        final DirectBuffer p = request.payload();
        final int at = request.payloadOffset();
        final Table table = db.table(p.getInt(at));
        final int header = table == null ? -1 : table.offsetOf(p.getLong(at + 8));
        final long owner = p.getLong(at + 16);
        if (header < 0) {
            answer(responder, RccRpc.STALE, 0, null, 0);
            return;
        }
        final AtomicBuffer m = table.objectMemory();
        if (m.getLongVolatile(header + ObjectLayout.CAS_LOCK_OFFSET) != 0) {
            answer(responder, RccRpc.BUSY, m.getLongVolatile(header + ObjectLayout.CAS_LOCK_OFFSET), null, 0);
            return;
        }
        if (lock) {
            if (owner == 0) {
                throw new IllegalArgumentException("RCC SD_LOCK for owner 0");
            }
            if (!m.compareAndSetLong(header + SundialTuple.LOCK_OFFSET, 0, owner)) {
                answer(responder, RccRpc.BUSY, m.getLongVolatile(header + SundialTuple.LOCK_OFFSET), null, 0);
                return;
            }
        } else if ((m.getLongVolatile(header + ObjectLayout.VERSION_OFFSET) & ObjectLayout.VERSION_BUSY) != 0) {
            answer(responder, RccRpc.BUSY, 0, null, 0);
            return;
        }
        answer(responder, RccRpc.GRANTED, 0, table, header);
    }

    private void answer(final RpcResponder responder, final int status, final long holder, final Table table,
                        final int header) {
        final int tuple = table == null ? 0 : SundialTuple.tupleBytes(table.schema().maxValueBytes());
        final int objectBytes = RccRpc.LOCK_REPLY_BYTES + tuple <= responder.maxReplyBytes() ? tuple : 0;
        if (reply.capacity() < RccRpc.LOCK_REPLY_BYTES + objectBytes) {
            reply = new UnsafeBuffer(new byte[RccRpc.LOCK_REPLY_BYTES + objectBytes]);
        }
        reply.putInt(0, status);
        reply.putInt(4, objectBytes);
        reply.putLong(8, holder);
        if (objectBytes > 0) {
            reply.putBytes(RccRpc.LOCK_REPLY_BYTES, table.objectMemory(), header, objectBytes);
        }
        responder.reply(reply, 0, RccRpc.LOCK_REPLY_BYTES + objectBytes);
    }

    /** Extends each lease to its commit ts when the object still has the wts read and is not locked. */
    private void onRenew(final RpcRequest request, final RpcResponder responder) {
        final DirectBuffer p = request.payload();
        final int start = request.payloadOffset();
        final int count = p.getInt(start);
        if (request.payloadLength() != RccRpc.HEAD_BYTES + count * RccRpc.RENEW_ENTRY_BYTES) {
            throw new IllegalArgumentException("RCC SD_RENEW request of " + request.payloadLength() + " bytes for "
                + count + " objects");
        }
        for (int i = 0, at = start + RccRpc.HEAD_BYTES; i < count; i++, at += RccRpc.RENEW_ENTRY_BYTES) {
            final Table table = db.table(p.getInt(at));
            final int header = table == null ? -1 : table.offsetOf(p.getLong(at + 8));
            if (header < 0 || !SundialTuple.renewable(table.objectMemory(), header, p.getLong(at + 16))) {
                small.putInt(0, RccRpc.BUSY);
                small.putInt(4, i);
                responder.reply(small, 0, 8);
                return;
            }
        }
        for (int i = 0, at = start + RccRpc.HEAD_BYTES; i < count; i++, at += RccRpc.RENEW_ENTRY_BYTES) {
            final Table table = db.table(p.getInt(at));
            final AtomicBuffer m = table.objectMemory();
            final int rtsAt = table.offsetOf(p.getLong(at + 8)) + SundialTuple.rtsOffset(table.schema()
                .maxValueBytes());
            final long cts = p.getLong(at + 24);
            long rts = m.getLongVolatile(rtsAt);
            while (rts < cts && !m.compareAndSetLong(rtsAt, rts, cts)) { // one-sided renewals CAS it too
                rts = m.getLongVolatile(rtsAt);
            }
            renewed++;
        }
        small.putInt(0, RccRpc.GRANTED);
        small.putInt(4, 0);
        responder.reply(small, 0, 8);
    }
}
