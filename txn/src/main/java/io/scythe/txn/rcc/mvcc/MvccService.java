package io.scythe.txn.rcc.mvcc;

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
 * RCC's MVCC RPC stages on a memory node ({@link RccRpc#MV_READ}, {@link RccRpc#MV_LOCK}): the rules of
 * {@link MvccTuple} applied by the node's CPU to the tuple in place. A handler runs to its end before the loop serves
 * anything else, so its checks and updates are atomic against other RPCs; one-sided verbs of hybrid forms land on the
 * same words (CPU and NIC atomics agree in the emulated fabric, as RCC's mix assumes). Commit and release go through
 * {@link io.scythe.txn.rcc.RccLockService}'s WRITE_BACK (flags MVCC, FRESH) and RELEASE.
 */
public final class MvccService {
    private final LogDb db;
    private UnsafeBuffer reply = new UnsafeBuffer(new byte[1024]);
    private long reads;
    private long locks;

    public MvccService(final LogDb db) {
        this.db = db;
    }

    public MvccService register(final RpcServer server) {
        server.handle(RccRpc.MV_READ, this::onRead);
        server.handle(RccRpc.MV_LOCK, this::onLock);
        return this;
    }

    /** Reads served and locks granted so far. */
    public long[] counts() {
        return new long[] {reads, locks};
    }

    private UnsafeBuffer reply(final int bytes) {
        if (reply.capacity() < bytes) {
            reply = new UnsafeBuffer(new byte[bytes]);
        }
        return reply;
    }

    private static void check(final RpcRequest request) {
        if (request.payloadLength() != RccRpc.LOCK_REQUEST_BYTES) {
            throw new IllegalArgumentException("RCC MVCC request of " + request.payloadLength() + " bytes (expected "
                + RccRpc.LOCK_REQUEST_BYTES + ")");
        }
    }

    private static long timestamp(final DirectBuffer p, final int at) {
        final long ctts = p.getLong(at + 16);
        if (ctts <= 0) {
            throw new IllegalArgumentException("RCC MVCC request at timestamp " + ctts);
        }
        return ctts;
    }

    /** A request's object, its timestamp and its zeroed reply of {@code bytes}. */
    private record Target(Table table, int header, long ctts, UnsafeBuffer out) {
    }

    /**
     * The preamble READ and LOCK share: the request checked, its object and timestamp, a zeroed reply of
     * {@code replyBytes}; {@code null} once answered STALE (no such object there any more).
     */
    private Target target(final RpcRequest request, final RpcResponder responder, final int replyBytes) {
        check(request);
        final DirectBuffer p = request.payload();
        final int at = request.payloadOffset();
        final Table table = db.table(p.getInt(at));
        final int header = table == null ? -1 : table.offsetOf(p.getLong(at + 8));
        final long ctts = timestamp(p, at);
        final UnsafeBuffer out = reply(replyBytes);
        out.setMemory(0, replyBytes, (byte) 0);
        if (header < 0) {
            out.putInt(0, RccRpc.STALE);
            responder.reply(out, 0, replyBytes);
            return null;
        }
        return new Target(table, header, ctts, out);
    }

    /** R2, R1, rts raised to ctts, and the version picked (value in the reply when it fits). */
    private void onRead(final RpcRequest request, final RpcResponder responder) {
        final Target t = target(request, responder, RccRpc.MV_READ_REPLY_BYTES);
        if (t == null) {
            return;
        }
        final Table table = t.table();
        final int header = t.header();
        final long ctts = t.ctts();
        final UnsafeBuffer out = t.out();
        final AtomicBuffer m = table.objectMemory();
        final int max = table.schema().maxValueBytes();
        if (!MvccTuple.notInserting(m, header) || !MvccTuple.r2(m, header, ctts)) {
            out.putInt(0, RccRpc.BUSY);
            out.putLong(8, MvccTuple.tts(m, header));
            responder.reply(out, 0, RccRpc.MV_READ_REPLY_BYTES);
            return;
        }
        final int slot = MvccTuple.pick(m, header, max, ctts);
        if (slot == MvccTuple.NONE) {
            out.putInt(0, RccRpc.NO_VERSION);
            out.putLong(16, MvccTuple.rts(m, header, max));
            responder.reply(out, 0, RccRpc.MV_READ_REPLY_BYTES);
            return;
        }
        final int rtsAt = header + MvccTuple.rtsOffset(max);
        long rts = m.getLongVolatile(rtsAt);
        while (rts < ctts && !m.compareAndSetLong(rtsAt, rts, ctts)) { // one-sided readers CAS it too
            rts = m.getLongVolatile(rtsAt);
        }
        reads++;
        final long wts;
        final int flags;
        final int length;
        final int valueAt;
        if (slot == MvccTuple.NEWEST) {
            wts = MvccTuple.newestWts(m, header);
            flags = MvccTuple.newestAsOldFlags(m, header);
            length = m.getInt(header + ObjectLayout.VALUE_LENGTH_OFFSET);
            valueAt = header + ObjectLayout.VALUE_OFFSET;
        } else {
            final int old = header + MvccTuple.oldSlotOffset(max, slot);
            wts = m.getLong(old);
            length = m.getInt(old + 8);
            flags = m.getInt(old + 12);
            valueAt = old + 16;
        }
        final boolean fits = RccRpc.MV_READ_REPLY_BYTES + length <= responder.maxReplyBytes();
        final UnsafeBuffer full = reply(RccRpc.MV_READ_REPLY_BYTES + Math.max(0, length));
        full.putInt(0, RccRpc.GRANTED);
        full.putInt(4, fits ? length : -1);
        full.putLong(8, wts);
        full.putLong(16, Math.max(rts, ctts));
        full.putInt(24, flags);
        full.putInt(28, 0);
        if (fits && length > 0) {
            full.putBytes(RccRpc.MV_READ_REPLY_BYTES, m, valueAt, length);
        }
        responder.reply(full, 0, RccRpc.MV_READ_REPLY_BYTES + (fits ? Math.max(0, length) : 0));
    }

    /** W1, W2 (CAS of tts from 0 to ctts), and the tuple in the reply when it fits. */
    private void onLock(final RpcRequest request, final RpcResponder responder) {
        final Target t = target(request, responder, RccRpc.LOCK_REPLY_BYTES);
        if (t == null) {
            return;
        }
        final Table table = t.table();
        final int header = t.header();
        final long ctts = t.ctts();
        final UnsafeBuffer out = t.out();
        final AtomicBuffer m = table.objectMemory();
        final int max = table.schema().maxValueBytes();
        if (!MvccTuple.w1(m, header, max, ctts)) {
            out.putInt(0, RccRpc.TOO_LATE);
            out.putLong(8, MvccTuple.maxWts(m, header, max));
            responder.reply(out, 0, RccRpc.LOCK_REPLY_BYTES);
            return;
        }
        if (!MvccTuple.notInserting(m, header) || !m.compareAndSetLong(header + MvccTuple.TTS_OFFSET, 0, ctts)) {
            out.putInt(0, RccRpc.BUSY);
            out.putLong(8, MvccTuple.tts(m, header));
            responder.reply(out, 0, RccRpc.LOCK_REPLY_BYTES);
            return;
        }
        locks++;
        final int tuple = MvccTuple.tupleBytes(max);
        final boolean fits = RccRpc.LOCK_REPLY_BYTES + tuple <= responder.maxReplyBytes();
        final UnsafeBuffer full = reply(RccRpc.LOCK_REPLY_BYTES + tuple);
        full.putInt(0, RccRpc.GRANTED);
        full.putInt(4, fits ? tuple : 0);
        full.putLong(8, 0);
        if (fits) {
            full.putBytes(RccRpc.LOCK_REPLY_BYTES, m, header, tuple);
        }
        responder.reply(full, 0, RccRpc.LOCK_REPLY_BYTES + (fits ? tuple : 0));
    }
}
