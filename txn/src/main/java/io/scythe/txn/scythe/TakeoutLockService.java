package io.scythe.txn.scythe;

import io.scythe.hotspot.Watermarks;
import io.scythe.rrpc.RpcRequest;
import io.scythe.rrpc.RpcResponder;
import io.scythe.rrpc.RpcServer;
import io.scythe.storage.LogDb;
import io.scythe.storage.Table;
import org.agrona.DirectBuffer;
import org.agrona.concurrent.UnsafeBuffer;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;

/**
 * Serves the Takeout Lock's RPC on a memory node ({@link LockRpc}). The Lock requests of one RRPC poll round (from
 * every CN's buckets) are granted together at the end of the round, sorted by object and then timestamp (Scythe
 * Fig. 16): requests that crossed on the network queue in timestamp order after all. A HOT request that finds its
 * object's queue between the watermarks is held back {@link TakeoutLock#DEFER_NS} first (§4.4 (2), Aurogon's
 * deferral), then granted in a later round with whatever arrived meanwhile, sorted. Runs on the RPC server's loop,
 * which polls it while requests are held back. A SHARED request takes a reader's ticket
 * ({@link TakeoutLock#lockShared}), released by {@link LockRpc#UNLOCK_SHARED} here (recorded in the ledger).
 */
public final class TakeoutLockService implements io.scythe.bridge.Bridge.Poller {
    private final LogDb db;
    private final Watermarks watermarks;
    private final boolean sortRounds;
    private final List<Pending> round = new ArrayList<>();
    private final List<Pending> free = new ArrayList<>();
    private final java.util.ArrayDeque<Pending> heldBack = new java.util.ArrayDeque<>();
    private io.scythe.bridge.Bridge bridge;
    private final TakeoutLock.Outcome outcome = new TakeoutLock.Outcome();
    private UnsafeBuffer reply = new UnsafeBuffer(new byte[LockRpc.REPLY_BYTES + 512]);
    private long granted;
    private long refused;
    private final long[] refusedBy = new long[8];
    private long deferred;
    private long bad;
    private long heatSum;
    /** Requests by the heat they found, in power-of-two buckets: [0], [1], [2,3], [4,7], ... (see {@link #heatBucket}). */
    private final long[] heatBuckets = new long[HEAT_BUCKETS];
    private long hotRequests;
    /**
     * Who holds or queues for each ticket, for recovery, and each object's trailing reader run
     * ({@link TakeoutLock#lockShared}): one entry per object. A ledger of its own unless given one.
     */
    private TicketLedger ledger = new TicketLedger();
    private long sharedGranted;
    private long sharedReleased;

    private static final Comparator<Pending> BY_OBJECT_THEN_TS = (a, b) -> {
        final int byObject = Long.compare(a.pointer, b.pointer);
        return byObject != 0 ? byObject : Long.compare(a.ts, b.ts);
    };

    /** @param sortRounds grant a round's requests in (object, timestamp) order (Fig. 16); else in arrival order */
    public TakeoutLockService(final LogDb db, final Watermarks watermarks, final boolean sortRounds) {
        this.db = db;
        this.watermarks = watermarks;
        this.sortRounds = sortRounds;
    }

    /** Records every granted ticket's compute node in {@code ledger} (recovery cancels a dead node's). */
    public TakeoutLockService ledger(final TicketLedger ledger) {
        this.ledger = java.util.Objects.requireNonNull(ledger, "ledger");
        return this;
    }

    public TakeoutLockService register(final RpcServer server) {
        server.handle(LockRpc.LOCK, this::onLock);
        server.handle(LockRpc.UNLOCK_SHARED, this::onUnlockShared);
        server.onRoundEnd(this::grantRound);
        return this;
    }

    private void onLock(final RpcRequest request, final RpcResponder responder) {
        final DirectBuffer p = request.payload();
        final int at = request.payloadOffset();
        if (request.payloadLength() != LockRpc.REQUEST_BYTES) {
            answerBad(responder);
            return;
        }
        final int tableId = p.getInt(at + LockRpc.TABLE_OFFSET);
        final int flags = p.getInt(at + LockRpc.MODE_OFFSET);
        final int mode = flags & ~(LockRpc.WITH_OBJECT | LockRpc.SHARED);
        final boolean shared = (flags & LockRpc.SHARED) != 0;
        final long pointer = p.getLong(at + LockRpc.POINTER_OFFSET);
        final Table table = db.table(tableId);
        final int header = table == null ? -1 : table.offsetOf(pointer);
        if (header < 0 || (mode != LockRpc.MODE_COLD && mode != LockRpc.MODE_HOT)
            || shared && mode != LockRpc.MODE_HOT) {
            answerBad(responder);
            return;
        }
        final Pending pending = free.isEmpty() ? new Pending() : free.remove(free.size() - 1);
        pending.table = table;
        pending.header = header;
        pending.pointer = pointer;
        pending.hot = mode == LockRpc.MODE_HOT;
        pending.withObject = (flags & LockRpc.WITH_OBJECT) != 0;
        pending.shared = shared;
        pending.ts = p.getLong(at + LockRpc.TS_OFFSET);
        pending.txn = p.getLong(at + LockRpc.TXN_OFFSET);
        pending.responder = responder;
        pending.client = request.client();
        pending.heldBack = false;
        if (bridge == null) {
            bridge = io.scythe.bridge.Bridge.current();
            bridge.addPoller(this);
        }
        round.add(pending);
        if (!sortRounds) {
            grantRound();
        }
    }

    /** Grants the round's requests, sorted by (object, timestamp) unless configured otherwise. */
    private void grantRound() {
        if (round.isEmpty()) {
            return;
        }
        if (sortRounds && round.size() > 1) {
            round.sort(BY_OBJECT_THEN_TS);
        }
        final long now = bridge.clock().nanoTime();
        for (final Pending pending : round) {
            if (pending.hot && !pending.heldBack) {
                final int at = pending.header;
                final long queued = pending.shared ? TakeoutLock.sharedAhead(pending.table.objectMemory(), at,
                    TicketLedger.objectKey(pending.table, at), ledger) : pending.table.objectMemory().getLongVolatile(at
                    + io.scythe.storage.ObjectLayout.LOWER_OFFSET) - pending.table.objectMemory().getLongVolatile(at
                    + io.scythe.storage.ObjectLayout.UPPER_OFFSET);
                if (queued > watermarks.cold() && queued < watermarks.hot()) {
                    pending.heldBack = true;
                    pending.until = now + TakeoutLock.DEFER_NS;
                    heldBack.add(pending);
                    deferred++;
                    if (!pending.shared) {
                        // A writer waits: readers arriving meanwhile queue behind the run ahead, not join it.
                        TakeoutLock.closeRun(pending.table.objectMemory(), at, TicketLedger.objectKey(pending.table,
                            at), ledger);
                    }
                    continue;
                }
            }
            final long object = TicketLedger.objectKey(pending.table, pending.header);
            if (pending.shared) {
                TakeoutLock.lockShared(pending.table.objectMemory(), pending.header, object, pending.ts, watermarks,
                    ledger, outcome);
            } else {
                TakeoutLock.lock(pending.table.objectMemory(), pending.header, object, pending.ts, pending.hot,
                    watermarks, ledger, outcome);
            }
            heatSum += outcome.queued;
            heatBuckets[heatBucket(outcome.queued)]++;
            if (outcome.queued > watermarks.cold()) {
                hotRequests++;
            }
            if (outcome.status == TakeoutLock.GRANTED) {
                granted++;
                if (pending.shared) {
                    sharedGranted++;
                    ledger.granted(pending.client, pending.txn, pending.table, pending.header, outcome.ticket,
                        outcome.turn, true);
                } else {
                    ledger.granted(pending.client, pending.txn, pending.table, pending.header, outcome.ticket);
                }
            } else {
                refused++;
                refusedBy[outcome.status]++;
            }
            reply.putInt(LockRpc.STATUS_OFFSET, outcome.status);
            reply.putInt(4, 0);
            reply.putLong(LockRpc.QUEUED_OFFSET, outcome.queued);
            reply.putLong(LockRpc.TICKET_OFFSET, outcome.ticket);
            reply.putLong(LockRpc.UPPER_OFFSET, outcome.upper);
            reply.putLong(LockRpc.QUEUED_TS_OFFSET, pending.shared ? outcome.turn : outcome.queuedTs);
            reply.putLong(LockRpc.VERSION_OFFSET, pending.table.objectMemory().getLongVolatile(pending.header
                + io.scythe.storage.ObjectLayout.VERSION_OFFSET));
            int objectBytes = 0;
            final int slotBytes = io.scythe.storage.ObjectLayout.slotBytes(pending.table.schema().maxValueBytes());
            // The object rides along only when it fits the reply bucket: a reply that does not fit would fail the
            // RPC after the ticket was taken, and that lock would never be released (the client READs it instead).
            final boolean servedAtOnce = pending.shared ? outcome.upper >= outcome.turn
                : outcome.upper == outcome.ticket;
            if (pending.withObject && outcome.status == TakeoutLock.GRANTED && servedAtOnce
                && LockRpc.REPLY_BYTES + slotBytes <= pending.responder.maxReplyBytes()) {
                objectBytes = slotBytes;
                if (reply.capacity() < LockRpc.REPLY_BYTES + objectBytes) {
                    reply = new UnsafeBuffer(new byte[LockRpc.REPLY_BYTES + objectBytes]);
                }
                reply.putBytes(LockRpc.REPLY_BYTES, pending.table.objectMemory(), pending.header, objectBytes);
            }
            reply.putInt(LockRpc.OBJECT_BYTES_OFFSET, objectBytes);
            pending.responder.reply(reply, 0, LockRpc.REPLY_BYTES + objectBytes);
            pending.responder = null;
            pending.table = null;
            free.add(pending);
        }
        round.clear();
    }

    /**
     * Releases a shared ticket: 1 added to {@code upper}, once, and only for a ticket the ledger knows the caller
     * holds (a repeated or forged release, or one of a node recovery cancelled, changes nothing and is answered bad).
     */
    private void onUnlockShared(final RpcRequest request, final RpcResponder responder) {
        final DirectBuffer p = request.payload();
        final int at = request.payloadOffset();
        if (request.payloadLength() != LockRpc.REQUEST_BYTES) {
            answerBad(responder);
            return;
        }
        final Table table = db.table(p.getInt(at + LockRpc.TABLE_OFFSET));
        final int header = table == null ? -1 : table.offsetOf(p.getLong(at + LockRpc.POINTER_OFFSET));
        final long ticket = p.getLong(at + LockRpc.TS_OFFSET);
        if (header < 0 || !ledger.releaseShared(request.client(), table, header, ticket)) {
            answerBad(responder);
            return;
        }
        final long upper = TakeoutLock.releaseShared(table.objectMemory(), header,
            TicketLedger.objectKey(table, header), ledger);
        sharedReleased++;
        reply.setMemory(0, LockRpc.REPLY_BYTES, (byte) 0);
        reply.putInt(LockRpc.STATUS_OFFSET, TakeoutLock.GRANTED);
        reply.putLong(LockRpc.TICKET_OFFSET, ticket);
        reply.putLong(LockRpc.UPPER_OFFSET, upper);
        responder.reply(reply, 0, LockRpc.REPLY_BYTES);
    }

    /** Shared (reader) tickets granted so far. */
    public long sharedGranted() {
        return sharedGranted;
    }

    /** Shared tickets released through {@link LockRpc#UNLOCK_SHARED} so far. */
    public long sharedReleased() {
        return sharedReleased;
    }

    /** Returns held-back requests whose wait is over to a round of their own. */
    @Override
    public int poll(final long nowNs) {
        int released = 0;
        while (!heldBack.isEmpty() && heldBack.peek().until - nowNs <= 0) {
            final Pending due = heldBack.poll();
            round.add(due);
            released++;
            // Everything held back on the same object goes with it, so the round's sort puts the older first.
            for (final java.util.Iterator<Pending> it = heldBack.iterator(); it.hasNext(); ) {
                final Pending other = it.next();
                if (other.pointer == due.pointer) {
                    it.remove();
                    round.add(other);
                    released++;
                }
            }
        }
        if (released > 0) {
            grantRound();
        }
        return released;
    }

    @Override
    public boolean busy() {
        return !heldBack.isEmpty();
    }

    private void answerBad(final RpcResponder responder) {
        bad++;
        reply.setMemory(0, LockRpc.REPLY_BYTES, (byte) 0);
        reply.putInt(LockRpc.STATUS_OFFSET, LockRpc.BAD_REQUEST);
        reply.putLong(LockRpc.TICKET_OFFSET, -1);
        responder.reply(reply, 0, LockRpc.REPLY_BYTES);
    }

    public long granted() {
        return granted;
    }

    public long refused() {
        return refused;
    }

    /** Refusals with {@code status} ({@link TakeoutLock#REFUSED_ORDER}, ...). */
    public long refused(final int status) {
        return refusedBy[status];
    }

    public long deferred() {
        return deferred;
    }

    /** Lock requests held back right now, waiting for their turn (a gauge; read racily from other threads). */
    public int waiting() {
        return heldBack.size();
    }

    public long badRequests() {
        return bad;
    }

    /** Sum over every request of its object's heat (the transactions queued ahead of it). */
    public long heatSum() {
        return heatSum;
    }

    /** Requests that found their object above the cold watermark (hot). */
    public long hotRequests() {
        return hotRequests;
    }

    /** How many heat buckets {@link #heatRequests} has: the last one holds every heat from its lower bound up. */
    public static final int HEAT_BUCKETS = 8;

    /** The bucket of a heat: 0 for 0, then {@code 1 + floor(log2(heat))}, capped at the last bucket. */
    public static int heatBucket(final long heat) {
        return heat <= 0 ? 0 : Math.min(HEAT_BUCKETS - 1, 64 - Long.numberOfLeadingZeros(heat));
    }

    /** The smallest heat of a bucket (0, 1, 2, 4, ...). */
    public static long heatBucketFloor(final int bucket) {
        return bucket == 0 ? 0 : 1L << (bucket - 1);
    }

    /**
     * Lock requests so far that found a heat in {@code bucket} (a counter that only grows, so that a scrape changes
     * nothing and rates over any window add up across memory nodes).
     */
    public long heatRequests(final int bucket) {
        return heatBuckets[bucket];
    }

    private static final class Pending {
        Table table;
        int header;
        long pointer;
        boolean hot;
        long ts;
        long txn;
        RpcResponder responder;
        String client;
        boolean heldBack;
        boolean withObject;
        boolean shared;
        long until;
    }
}
