package io.scythe.txn.rcc;

import io.scythe.rrpc.RpcRequest;
import io.scythe.rrpc.RpcResponder;
import io.scythe.rrpc.RpcServer;
import io.scythe.storage.LogDb;
import io.scythe.storage.ObjectLayout;
import io.scythe.storage.Table;
import org.agrona.DirectBuffer;
import org.agrona.concurrent.AtomicBuffer;
import org.agrona.concurrent.UnsafeBuffer;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;

/**
 * RCC's RPC handlers on a memory node ({@link RccRpc}): NOWAIT's lock+fetch, WAIT-DIE's lock with a waiting list,
 * the write-back that writes records and releases their locks, and the release. It works on the same lock words the
 * one-sided stages CAS, with CPU atomics on them, so a hybrid's RPC lock and one-sided release (or the reverse) agree
 * on one word (RCC §5.2). On real hardware a CPU atomic is not atomic against a NIC atomic on the same word; RCC has
 * the same mix, and the emulated fabric applies both in one order.
 *
 * <p>WAIT-DIE waiting list: a request older than the holder is kept, not answered, and the list is checked every time
 * this loop polls it (while it is not empty) and at the end of each RPC round: the oldest waiter of a free word takes
 * it and is answered with the object; a waiter that finds the word taken by an older transaction than itself dies
 * (BUSY). Waiters only ever wait for younger holders, so no cycle of waits can form.
 */
public final class RccLockService implements io.scythe.bridge.Bridge.Poller {
    private final LogDb db;
    private final List<Waiter> waiting = new ArrayList<>();
    private UnsafeBuffer reply = new UnsafeBuffer(new byte[RccRpc.LOCK_REPLY_BYTES + 512]);
    private final UnsafeBuffer small = new UnsafeBuffer(new byte[8]);
    private io.scythe.bridge.Bridge bridge;
    private long granted;
    private long busy;
    private long waited;

    private static final Comparator<Waiter> OLDEST_FIRST = Comparator.comparingLong(w -> w.ts);

    private static final class Waiter {
        Table table;
        int header;
        long pointer;
        long ts;
        RpcResponder responder;
    }

    public RccLockService(final LogDb db) {
        this.db = db;
    }

    public RccLockService register(final RpcServer server) {
        server.handle(RccRpc.LOCK, this::onLock);
        server.handle(RccRpc.WRITE_BACK, this::onWriteBack);
        server.handle(RccRpc.WRITE_PART, this::onWritePart);
        server.handle(RccRpc.RELEASE, this::onRelease);
        server.handle(RccRpc.READ, this::onRead);
        server.handle(RccRpc.VALIDATE, this::onValidate);
        server.handle(RccRpc.LOG, this::onLog);
        server.onRoundEnd(this::checkWaiting);
        return this;
    }

    /** Locks granted, refused (BUSY) and queued on a waiting list so far. */
    public long[] counts() {
        return new long[] {granted, busy, waited};
    }

    /**
     * Forgets the WAIT-DIE waiters of a dead compute node ({@code idPrefixes}: its transaction-id prefixes; a
     * waiter's timestamp carries the node slot and incarnation, {@link DeadWords#deadTimestamp}), which would
     * otherwise take a word for a node that is gone; returns how many.
     */
    int dropWaiters(final long[] idPrefixes) {
        final int before = waiting.size();
        waiting.removeIf(w -> DeadWords.deadTimestamp(idPrefixes, w.ts));
        return before - waiting.size();
    }

    /** Requests on WAIT-DIE waiting lists now. */
    public int waiting() {
        return waiting.size();
    }

    private void onLock(final RpcRequest request, final RpcResponder responder) {
        final DirectBuffer p = request.payload();
        final int at = request.payloadOffset();
        if (request.payloadLength() != RccRpc.LOCK_REQUEST_BYTES) {
            throw new IllegalArgumentException("RCC LOCK request of " + request.payloadLength() + " bytes (expected "
                + RccRpc.LOCK_REQUEST_BYTES + ")");
        }
        final int kind = p.getInt(at + 4);
        final long pointer = p.getLong(at + 8);
        final long owner = p.getLong(at + 16);
        final Table table = db.table(p.getInt(at));
        final int header = table == null ? -1 : table.offsetOf(pointer);
        if (header < 0) {
            answer(responder, RccRpc.STALE, 0, null, 0);
            return;
        }
        if (owner == 0 || (kind != RccRpc.KIND_NOWAIT && kind != RccRpc.KIND_WAITDIE)) {
            throw new IllegalArgumentException("RCC LOCK request of kind " + kind + " for owner " + owner);
        }
        final AtomicBuffer m = table.objectMemory();
        if (kind == RccRpc.KIND_NOWAIT) {
            final int word = header + ObjectLayout.CAS_LOCK_OFFSET;
            if (m.compareAndSetLong(word, 0, owner)) {
                granted++;
                answer(responder, RccRpc.GRANTED, 0, table, header);
            } else {
                busy++;
                answer(responder, RccRpc.BUSY, m.getLongVolatile(word), null, 0);
            }
            return;
        }
        final Waiter w = new Waiter();
        w.table = table;
        w.header = header;
        w.pointer = pointer;
        w.ts = owner;
        w.responder = responder;
        if (!tryWaitDie(w)) {
            waited++;
            waiting.add(w);
            if (bridge == null) {
                bridge = io.scythe.bridge.Bridge.current();
                bridge.addPoller(this);
            }
        }
    }

    /**
     * One WAIT-DIE try for {@code w}: takes {@code tts} when it is free (and no insert holds the object), or answers
     * BUSY when the holder is older (smaller timestamp): true when answered, false when it must wait on.
     */
    private boolean tryWaitDie(final Waiter w) {
        final AtomicBuffer m = w.table.objectMemory();
        if (w.table.offsetOf(w.pointer) != w.header) {
            answer(w.responder, RccRpc.STALE, 0, null, 0); // freed (deleted and reclaimed) while it waited
            return true;
        }
        final int tts = w.header + TupleFormat.TTS_OFFSET;
        final long holder = m.getLongVolatile(tts);
        if (holder == 0 && m.getLongVolatile(w.header + ObjectLayout.CAS_LOCK_OFFSET) == 0
            && m.compareAndSetLong(tts, 0, w.ts)) {
            granted++;
            answer(w.responder, RccRpc.GRANTED, 0, w.table, w.header);
            return true;
        }
        final long seen = holder != 0 ? holder : m.getLongVolatile(w.header + ObjectLayout.CAS_LOCK_OFFSET);
        if (holder == 0 || !WaitDie.mayWait(w.ts, holder)) {
            // An insert in progress (cas_lock) has no timestamp to wait for: die, as for an older holder.
            busy++;
            answer(w.responder, RccRpc.BUSY, seen, null, 0);
            return true;
        }
        return false;
    }

    /** Gives free words to their oldest waiters; waiters that must die now are answered BUSY. */
    private void checkWaiting() {
        if (waiting.isEmpty()) {
            return;
        }
        if (waiting.size() > 1) {
            waiting.sort(OLDEST_FIRST);
        }
        waiting.removeIf(this::tryWaitDie);
    }

    @Override
    public int poll(final long nowNs) {
        final int before = waiting.size();
        checkWaiting();
        return before - waiting.size();
    }

    @Override
    public boolean busy() {
        return !waiting.isEmpty();
    }

    private void answer(final RpcResponder responder, final int status, final long holder, final Table table,
                        final int header) {
        int objectBytes = 0;
        if (table != null) {
            final int slot = ObjectLayout.slotBytes(table.schema().maxValueBytes());
            if (RccRpc.LOCK_REPLY_BYTES + slot <= responder.maxReplyBytes()) {
                objectBytes = slot;
                if (reply.capacity() < RccRpc.LOCK_REPLY_BYTES + slot) {
                    reply = new UnsafeBuffer(new byte[RccRpc.LOCK_REPLY_BYTES + slot]);
                }
                reply.putBytes(RccRpc.LOCK_REPLY_BYTES, table.objectMemory(), header, slot);
            }
        }
        reply.putInt(0, status);
        reply.putInt(4, objectBytes);
        reply.putLong(8, holder);
        responder.reply(reply, 0, RccRpc.LOCK_REPLY_BYTES + objectBytes);
    }

    /**
     * Writes each object's record and version, then releases its lock word, in that order; refuses the whole request
     * (STALE, nothing written) when an object is gone or a word to release is not the owner's.
     */
    private void onWriteBack(final RpcRequest request, final RpcResponder responder) {
        final DirectBuffer p = request.payload();
        final int start = request.payloadOffset();
        final int end = start + request.payloadLength();
        final int count = p.getInt(start);
        // Checked whole first: a refused request changes nothing.
        int at = start + RccRpc.HEAD_BYTES;
        for (int i = 0; i < count; i++) {
            if (at + RccRpc.ENTRY_BYTES > end) {
                throw new IllegalArgumentException("RCC WRITE_BACK request cut short at entry " + i + " of " + count);
            }
            final Table table = db.table(p.getInt(at));
            final int header = table == null ? -1 : table.offsetOf(p.getLong(at + 8));
            final int lockOffset = p.getInt(at + 32);
            final int length = p.getInt(at + 36);
            if (header < 0 || (lockOffset != 0
                && table.objectMemory().getLongVolatile(header + lockOffset) != p.getLong(at + 24))) {
                small.putInt(0, RccRpc.STALE);
                small.putInt(4, i);
                responder.reply(small, 0, 8);
                return;
            }
            if (length < 0 || length > table.schema().maxValueBytes()) {
                throw new IllegalArgumentException("RCC WRITE_BACK value of " + length + " bytes for table "
                    + table.schema().name());
            }
            at += RccRpc.entryBytes(length);
        }
        at = start + RccRpc.HEAD_BYTES;
        for (int i = 0; i < count; i++) {
            final Table table = db.table(p.getInt(at));
            final AtomicBuffer m = table.objectMemory();
            final int header = table.offsetOf(p.getLong(at + 8));
            final int flags = p.getInt(at + 4);
            final int lockOffset = p.getInt(at + 32);
            final int length = p.getInt(at + 36);
            final int max = table.schema().maxValueBytes();
            if ((flags & RccRpc.FLAG_FRESH) != 0) {
                for (int slot = 0; slot < io.scythe.txn.rcc.mvcc.MvccTuple.OLD_SLOTS; slot++) {
                    m.putLong(header + io.scythe.txn.rcc.mvcc.MvccTuple.oldSlotOffset(max, slot) + 8, 0);
                }
            } else if ((flags & RccRpc.FLAG_MVCC) != 0 && (m.getLongVolatile(header + ObjectLayout.VERSION_OFFSET)
                & ObjectLayout.VERSION_BUSY) == 0) {
                // BUSY (never, but in recovery's roll-forward of a one-sided commit cut short, or of a value written
                // in parts): that commit's doorbell, or the first part, moved the newest version before it set BUSY,
                // and the value may have been rewritten since.
                moveNewest(m, header, max);
            }
            if ((flags & RccRpc.FLAG_VALUE) != 0) {
                m.putBytes(header + ObjectLayout.VALUE_OFFSET, p, at + RccRpc.ENTRY_BYTES, length);
                m.putInt(header + ObjectLayout.VALUE_LENGTH_OFFSET, length);
            }
            if ((flags & (RccRpc.FLAG_DELETE | RccRpc.FLAG_REVIVE)) != 0) {
                m.putShortVolatile(header + ObjectLayout.FLAGS_OFFSET,
                    (short) ((flags & RccRpc.FLAG_DELETE) != 0 ? ObjectLayout.FLAG_DELETED : 0));
            }
            if ((flags & RccRpc.FLAG_VERSION) != 0) {
                m.putLongVolatile(header + ObjectLayout.VERSION_OFFSET, p.getLong(at + 16));
            }
            if ((flags & RccRpc.FLAG_RTS) != 0) {
                m.putLongVolatile(header + io.scythe.txn.rcc.mvcc.MvccTuple.rtsOffset(max), p.getLong(at + 16));
            }
            if (lockOffset != 0) {
                m.putLongVolatile(header + lockOffset, 0);
            }
            at += RccRpc.entryBytes(length);
        }
        small.putInt(0, RccRpc.GRANTED);
        small.putInt(4, count);
        responder.reply(small, 0, 8);
        checkWaiting();
    }

    /** MVCC's commit step: the newest version to the older slot it overwrites (MvccTuple#victim). */
    private static void moveNewest(final AtomicBuffer m, final int header, final int max) {
        io.scythe.txn.rcc.mvcc.MvccTuple.newestAsOld(m, header, max, m, header
            + io.scythe.txn.rcc.mvcc.MvccTuple.oldSlotOffset(max, io.scythe.txn.rcc.mvcc.MvccTuple.victim(m, header,
            max)));
    }

    /**
     * Writes one part of a value too large for a WRITE_BACK ({@link RccRpc#WRITE_PART}), only while the word holds
     * the owner: the first part to find the version word not BUSY moves MVCC's newest version (flag MVCC) and sets
     * BUSY; every part writes its bytes and the value length. Parts of one value are the same bytes whichever
     * recovery attempt sends them, so a timed-out attempt's parts landing late rewrite them, or find the word
     * released and write nothing.
     */
    private void onWritePart(final RpcRequest request, final RpcResponder responder) {
        final DirectBuffer p = request.payload();
        final int at = request.payloadOffset();
        if (request.payloadLength() < RccRpc.PART_HEAD_BYTES) {
            throw new IllegalArgumentException("RCC WRITE_PART request of " + request.payloadLength() + " bytes");
        }
        final int flags = p.getInt(at + 4);
        final long owner = p.getLong(at + 16);
        final int lockOffset = p.getInt(at + 24);
        final int length = p.getInt(at + 28);
        final int from = p.getInt(at + 32);
        final int part = p.getInt(at + 36);
        if (request.payloadLength() != RccRpc.PART_HEAD_BYTES + part || part <= 0 || from < 0 || from > length - part
            || owner == 0 || lockOffset <= 0 || lockOffset > ObjectLayout.HEADER_BYTES - 8 || (lockOffset & 7) != 0) {
            throw new IllegalArgumentException("RCC WRITE_PART request of " + request.payloadLength() + " bytes: part "
                + from + "+" + part + " of " + length + ", word at " + lockOffset + ", owner " + owner);
        }
        final Table table = db.table(p.getInt(at));
        final int header = table == null ? -1 : table.offsetOf(p.getLong(at + 8));
        final AtomicBuffer m = header < 0 ? null : table.objectMemory();
        if (m == null || m.getLongVolatile(header + lockOffset) != owner) {
            small.putInt(0, RccRpc.STALE);
            small.putInt(4, 0);
            responder.reply(small, 0, 8);
            return;
        }
        final int max = table.schema().maxValueBytes();
        if (length > max) {
            throw new IllegalArgumentException("RCC WRITE_PART value of " + length + " bytes for table "
                + table.schema().name());
        }
        final long version = m.getLongVolatile(header + ObjectLayout.VERSION_OFFSET);
        if ((version & ObjectLayout.VERSION_BUSY) == 0) {
            if ((flags & RccRpc.FLAG_MVCC) != 0) {
                moveNewest(m, header, max);
            }
            m.putLongVolatile(header + ObjectLayout.VERSION_OFFSET, version | ObjectLayout.VERSION_BUSY);
        }
        m.putBytes(header + ObjectLayout.VALUE_OFFSET + from, p, at + RccRpc.PART_HEAD_BYTES, part);
        m.putInt(header + ObjectLayout.VALUE_LENGTH_OFFSET, length);
        small.putInt(0, RccRpc.GRANTED);
        small.putInt(4, 0);
        responder.reply(small, 0, 8);
    }

    /** Copies the object into the reply (OCC's Read stage by RPC). */
    private void onRead(final RpcRequest request, final RpcResponder responder) {
        final DirectBuffer p = request.payload();
        final int at = request.payloadOffset();
        final Table table = db.table(p.getInt(at));
        final int header = table == null ? -1 : table.offsetOf(p.getLong(at + 8));
        if (header < 0) {
            answer(responder, RccRpc.STALE, 0, null, 0);
        } else {
            answer(responder, RccRpc.GRANTED, 0, table, header);
        }
    }

    /** Checks each object still has the version read and a free lock word (OCC's Validate stage by RPC). */
    private void onValidate(final RpcRequest request, final RpcResponder responder) {
        final DirectBuffer p = request.payload();
        final int start = request.payloadOffset();
        final int count = p.getInt(start);
        if (request.payloadLength() != RccRpc.HEAD_BYTES + count * RccRpc.WORD_ENTRY_BYTES) {
            throw new IllegalArgumentException("RCC VALIDATE request of " + request.payloadLength() + " bytes for "
                + count + " objects");
        }
        int status = RccRpc.GRANTED;
        int failed = 0;
        for (int i = 0, at = start + RccRpc.HEAD_BYTES; i < count; i++, at += RccRpc.WORD_ENTRY_BYTES) {
            final Table table = db.table(p.getInt(at));
            final int header = table == null ? -1 : table.offsetOf(p.getLong(at + 8));
            if (header < 0 || table.objectMemory().getLongVolatile(header + ObjectLayout.VERSION_OFFSET)
                != p.getLong(at + 16) || table.objectMemory().getLongVolatile(header + p.getInt(at + 4)) != 0) {
                status = RccRpc.BUSY;
                failed = i;
                break;
            }
        }
        small.putInt(0, status);
        small.putInt(4, failed);
        responder.reply(small, 0, 8);
    }

    /** CASes each word from its owner to 0: a word that is no longer the owner's is left as it is. */
    private void onRelease(final RpcRequest request, final RpcResponder responder) {
        final DirectBuffer p = request.payload();
        final int start = request.payloadOffset();
        final int count = p.getInt(start);
        if (request.payloadLength() != RccRpc.HEAD_BYTES + count * RccRpc.WORD_ENTRY_BYTES) {
            throw new IllegalArgumentException("RCC RELEASE request of " + request.payloadLength() + " bytes for "
                + count + " objects");
        }
        int released = 0;
        for (int i = 0, at = start + RccRpc.HEAD_BYTES; i < count; i++, at += RccRpc.WORD_ENTRY_BYTES) {
            final Table table = db.table(p.getInt(at));
            final int header = table == null ? -1 : table.offsetOf(p.getLong(at + 8));
            if (header >= 0 && table.objectMemory().compareAndSetLong(header + p.getInt(at + 4), p.getLong(at + 16),
                0)) {
                released++;
            }
        }
        small.putInt(0, released);
        small.putInt(4, 0);
        responder.reply(small, 0, 8);
        checkWaiting();
    }

    /** Log regions on this node by rkey (redo log regions, opened by the recovery service), found on first use. */
    private final java.util.Map<Integer, io.scythe.fabric.MemoryRegion> logRegions = new java.util.HashMap<>();

    /** RCC's Log stage by RPC: copies the record into the log region it names ({@link RccRpc#LOG}). */
    private void onLog(final RpcRequest request, final RpcResponder responder) {
        final DirectBuffer p = request.payload();
        final int at = request.payloadOffset();
        final long address = p.getLong(at);
        final int rkey = p.getInt(at + 8);
        final int length = p.getInt(at + 12);
        if (request.payloadLength() != RccRpc.LOG_HEAD_BYTES + length || length <= 0) {
            throw new IllegalArgumentException("RCC LOG request of " + request.payloadLength() + " bytes for a record "
                + "of " + length);
        }
        io.scythe.fabric.MemoryRegion region = logRegions.get(rkey);
        if (region == null || !region.isRegistered()) {
            region = io.scythe.txn.recovery.RecoveryService.logRegion(db.nic(), rkey);
            if (region != null) {
                logRegions.put(rkey, region);
            }
        }
        final boolean fits = region != null && address >= region.address()
            && address + length <= region.address() + region.length();
        if (fits) {
            region.buffer().putBytes((int) (address - region.address()), p, at + RccRpc.LOG_HEAD_BYTES, length);
        }
        small.putInt(0, fits ? RccRpc.GRANTED : RccRpc.STALE);
        small.putInt(4, 0);
        responder.reply(small, 0, 8);
    }
}
