package io.scythe.txn.scythe;

import io.scythe.bridge.RdmaChannel;
import io.scythe.hotspot.Srtt;
import io.scythe.rrpc.Rocket;
import io.scythe.rrpc.RpcReply;
import io.scythe.storage.ObjectLayout;
import io.scythe.storage.TableDescriptor;
import io.scythe.txn.runtime.Timers;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import org.agrona.concurrent.UnsafeBuffer;

import java.util.HashMap;
import java.util.Map;
import java.util.function.Function;

/**
 * The compute-node side of the Takeout Lock (Scythe Fig. 14, client code; §4.3 (2)): step 1 queues by the Lock RPC;
 * step 2 waits the hangout {@code queued x SRTT} (Eq. 3) and then polls {@code upper} with a one-sided READ until
 * it equals the ticket, waiting again for whoever is still ahead; unlock is an FAA of 1 on {@code upper}. The SRTT
 * per memory node (Eq. 2, alpha 0.9) is fed by the poll READs only: it estimates the one-sided round trip (§4.3),
 * which a Lock RPC's round trip (the MN's CPU queue included) would overstate; an overstated SRTT lengthens every
 * hangout, queues grow, and RPCs slow further. Loop-confined; time comes from the injected {@link Timers}.
 *
 * <p>A queued request never gives its ticket up: {@code upper} passes a ticket only by its holder's unlock or, for a
 * dead compute node, by recovery cancelling it ({@link TicketLedger}), and the paper's Takeout Lock has no timeout
 * either. So a TOCC request queued behind a killed compute node's tickets waits until that node is fenced and
 * recovered (seconds: {@code CnKillProcessTest} sees its move commit about 4 s after it queued), then is served; a
 * client's timeout must exceed that. Giving up earlier could only abort the transaction, not free the queue.
 */
public final class TakeoutLockClient {
    /** Round trip assumed before the first sample: a one-sided READ on the cx5 profile. */
    public static final long INITIAL_RTT_NS = 2_100;

    private final Timers timers;
    private final Function<String, Future<Rocket>> rockets;
    private final Function<String, Future<RdmaChannel>> channels;
    private final Map<String, Srtt> srtt = new HashMap<>();
    /**
     * The Lock request being sent (loop-confined, reused): {@link Rocket#call} copies it before it returns, so only
     * a request that must wait for its Rocket gets a copy of its own ({@link #request}).
     */
    private final UnsafeBuffer request = new UnsafeBuffer(new byte[LockRpc.REQUEST_BYTES]);
    private long polls;

    /**
     * @param rockets  this loop's RRPC Rocket to a memory node
     * @param channels this loop's one-sided channel to a memory node
     */
    /** The runtime extension that holds a loop's client. */
    private static final io.scythe.txn.TxnRuntime.Key<TakeoutLockClient> KEY =
        new io.scythe.txn.TxnRuntime.Key<>("takeout-lock-client");

    /** {@code runtime}'s loop's client (made on first use). */
    public static TakeoutLockClient of(final io.scythe.txn.TxnRuntime runtime) {
        return runtime.extension(KEY, rt -> new TakeoutLockClient(rt.timers(), rt::rocket, rt::channel));
    }

    public TakeoutLockClient(final Timers timers, final Function<String, Future<Rocket>> rockets,
                             final Function<String, Future<RdmaChannel>> channels) {
        this.timers = timers;
        this.rockets = rockets;
        this.channels = channels;
    }

    /**
     * A queued and held lock. {@code versionAtGrant} is the object's version when the memory node granted a lock
     * that was free at once (then still its version), or -1 when the transaction had to wait its turn.
     */
    public record Grant(String node, long upperAddress, int rkey, long ticket, long queuedAtRequest, long waitedNs,
                        long versionAtGrant, org.agrona.DirectBuffer object, boolean shared, int tableId,
                        long pointer) {
        /** An exclusive ticket's grant. */
        public Grant(final String node, final long upperAddress, final int rkey, final long ticket,
                     final long queuedAtRequest, final long waitedNs, final long versionAtGrant,
                     final org.agrona.DirectBuffer object) {
            this(node, upperAddress, rkey, ticket, queuedAtRequest, waitedNs, versionAtGrant, object, false, 0, 0);
        }
    }

    /**
     * Queues on the lock of the object at {@code pointer} of {@code table} with timestamp {@code ts} and waits until
     * it is held.
     *
     * @return the grant; fails with {@link LockRefusedException} when the memory node refused to queue it
     */
    public Future<Grant> lock(final String node, final TableDescriptor table, final long pointer, final long ts,
                              final boolean hot) {
        return lock(node, table, pointer, ts, hot, false, 0);
    }

    /**
     * As {@link #lock(String, TableDescriptor, long, long, boolean)}; with {@code withObject} a lock granted at once
     * brings the object (header and value) in {@link Grant#object()}, saving the READ of a TOCC read. The memory
     * node records the ticket as held by this compute node and transaction {@code txnId} (recovery cancels a dead
     * node's tickets).
     */
    public Future<Grant> lock(final String node, final TableDescriptor table, final long pointer, final long ts,
                              final boolean hot, final boolean withObject, final long txnId) {
        return lock(node, table, pointer, ts, hot, withObject, txnId, false);
    }

    /**
     * As {@link #lock(String, TableDescriptor, long, long, boolean, boolean, long)}; {@code shared}: a reader's
     * ticket ({@link TakeoutLock#lockShared}, HOT only), held once {@code upper} reaches its turn and released with
     * {@link #unlockShared}, never with {@link #unlock}.
     */
    public Future<Grant> lock(final String node, final TableDescriptor table, final long pointer, final long ts,
                              final boolean hot, final boolean withObject, final long txnId, final boolean shared) {
        if (shared && !hot) {
            throw new IllegalArgumentException("a shared Takeout ticket is a HOT (TOCC) request");
        }
        request.putInt(LockRpc.TABLE_OFFSET, table.schema().id());
        request.putInt(LockRpc.MODE_OFFSET, (hot ? LockRpc.MODE_HOT : LockRpc.MODE_COLD)
            | (withObject ? LockRpc.WITH_OBJECT : 0) | (shared ? LockRpc.SHARED : 0));
        request.putLong(LockRpc.POINTER_OFFSET, pointer);
        request.putLong(LockRpc.TS_OFFSET, ts);
        request.putLong(LockRpc.TXN_OFFSET, txnId);
        final Granting granting = new Granting(node, table, pointer, timers.nowNs(), shared);
        request(node).onComplete(granting);
        return granting;
    }

    /**
     * The Lock RPC's reply read into its grant, one object (the reply's listener and the grant's future) where
     * {@code request(node).compose(r -> ...)} made a composition, its lambda and a completed future per lock. A throw
     * fails the grant, as in the composition. Without a context, as {@code Promise.promise()}: its listeners run inline.
     */
    private final class Granting extends io.vertx.core.impl.future.FutureImpl<Grant>
        implements io.vertx.core.Completable<RpcReply> {
        private final String node;
        private final TableDescriptor table;
        private final long pointer;
        private final long start;
        private final boolean shared;

        Granting(final String node, final TableDescriptor table, final long pointer, final long start,
                 final boolean shared) {
            this.node = node;
            this.table = table;
            this.pointer = pointer;
            this.start = start;
            this.shared = shared;
        }

        @Override
        public void complete(final RpcReply r, final Throwable failure) {
            if (failure != null) {
                tryFail(failure);
                return;
            }
            final Grant grant;
            try {
                final UnsafeBuffer reply = granted(node, r);
                final long upperAddress = ObjectLayout.addressOf(pointer) + ObjectLayout.UPPER_OFFSET;
                final int rkey = table.objects().rkey();
                final long ticket = reply.getLong(LockRpc.TICKET_OFFSET);
                final long upper = reply.getLong(LockRpc.UPPER_OFFSET);
                final long queued = reply.getLong(LockRpc.QUEUED_OFFSET);
                final Turn turn = new Turn(node, upperAddress, rkey, ticket, shared ? reply.getLong(LockRpc.TURN_OFFSET)
                    : ticket, shared, table.schema().id(), pointer, queued, start);
                if (!turn.served(upper)) {
                    final Promise<Grant> held = Promise.promise();
                    awaitTurn(turn, srtt(node).hangoutNs(turn.turn - upper, INITIAL_RTT_NS),
                        new UnsafeBuffer(new byte[8]), held, 0);
                    held.future().onComplete((g, f) -> {
                        if (f == null) {
                            tryComplete(g);
                        } else {
                            tryFail(f);
                        }
                    });
                    return;
                }
                final int objectBytes = reply.getInt(LockRpc.OBJECT_BYTES_OFFSET);
                final org.agrona.DirectBuffer object = objectBytes > 0
                    && reply.capacity() >= LockRpc.REPLY_BYTES + objectBytes
                    ? new UnsafeBuffer(reply, LockRpc.REPLY_BYTES, objectBytes) : null;
                grant = new Grant(node, upperAddress, rkey, ticket, queued, 0, reply.getLong(LockRpc.VERSION_OFFSET),
                    object, shared, table.schema().id(), pointer);
            } catch (final Throwable e) {
                tryFail(e);
                return;
            }
            tryComplete(grant);
        }
    }

    /**
     * Unlocks: one FAA of 1 on {@code upper}, which hands the lock to the next ticket. Posted once, never retried
     * here: an FAA that failed after it was posted may have landed (or may still land), and a second one would move
     * {@code upper} twice, handing one lock to two holders. The caller gives its loop up then
     * ({@code OneSidedTxn#lockVerbInDoubt}); only a refusal for now (nothing posted) may be posted again.
     */
    public Future<Void> unlock(final Grant grant) {
        return channels.apply(grant.node()).compose(ch -> ch.fetchAndAdd(grant.upperAddress(), grant.rkey(), 1))
            .mapEmpty();
    }

    /**
     * Releases a shared ticket through the memory node ({@link LockRpc#UNLOCK_SHARED}), which records it released for
     * recovery. Fails when the node answers that this node holds no such ticket (nothing changed there).
     */
    public Future<Void> unlockShared(final Grant grant) {
        if (!grant.shared()) {
            return Future.failedFuture(new IllegalArgumentException("ticket " + grant.ticket()
                + " is exclusive: it is released by unlock"));
        }
        request.putInt(LockRpc.TABLE_OFFSET, grant.tableId());
        request.putInt(LockRpc.MODE_OFFSET, 0);
        request.putLong(LockRpc.POINTER_OFFSET, grant.pointer());
        request.putLong(LockRpc.TS_OFFSET, grant.ticket());
        request.putLong(LockRpc.TXN_OFFSET, 0);
        return request(grant.node(), LockRpc.UNLOCK_SHARED).map(r -> {
            final UnsafeBuffer reply = replyOf(r);
            if (reply.getInt(LockRpc.STATUS_OFFSET) != TakeoutLock.GRANTED) {
                throw new IllegalStateException("shared Takeout ticket " + grant.ticket() + " on " + grant.node()
                    + " not released: the memory node says this node does not hold it");
            }
            return null;
        });
    }

    /** Poll READs that may fail in a row before the ticket is given up as in doubt (about 50 ms of pauses). */
    static final int MAX_POLL_FAILURES = 20;
    /** Pause after the first failed poll, doubling up to 1024 times as long. */
    private static final long POLL_RETRY_PAUSE_NS = 5_000;

    /**
     * The Lock RPC's reply to {@link #request} as filled now; {@link #granted} reads it. Sent at once when the Rocket
     * is ready ({@code Rocket#call} copies the request before it returns), else from a copy once the Rocket is.
     */
    private Future<RpcReply> request(final String node) {
        return request(node, LockRpc.LOCK);
    }

    private Future<RpcReply> request(final String node, final int verb) {
        final Future<Rocket> rocket = rockets.apply(node);
        if (io.scythe.txn.onesided.Futures.ready(rocket)) {
            try {
                return rocket.result().call(verb, request);
            } catch (final RuntimeException e) {
                return Future.failedFuture(e); // as Futures.then
            }
        }
        final UnsafeBuffer copy = new UnsafeBuffer(new byte[LockRpc.REQUEST_BYTES]);
        copy.putBytes(0, request, 0, LockRpc.REQUEST_BYTES);
        return rocket.compose(r -> r.call(verb, copy));
    }

    /** The Lock RPC's reply {@code r} from {@code node} when granted; throws the refusal otherwise. */
    private static UnsafeBuffer granted(final String node, final RpcReply r) {
        final UnsafeBuffer reply = replyOf(r);
        final int status = reply.getInt(LockRpc.STATUS_OFFSET);
        if (status == TakeoutLock.GRANTED) {
            return reply;
        }
        if (status == LockRpc.BAD_REQUEST) {
            throw new IllegalArgumentException("Takeout Lock request refused by " + node
                + " as malformed: unknown table or stale object pointer");
        }
        throw new LockRefusedException(status, reply.getLong(LockRpc.QUEUED_OFFSET));
    }

    private static UnsafeBuffer replyOf(final RpcReply r) {
        if (r.mode() != RpcReply.Mode.INLINE || r.length() < LockRpc.REPLY_BYTES) {
            throw new IllegalStateException("Takeout Lock reply of " + r.length() + " bytes in mode " + r.mode());
        }
        return r.payload();
    }

    /** Waits {@code pauseNs}, READs {@code upper}, and again (the hangout for those still ahead) until it is served. */
    private void awaitTurn(final Turn t, final long pauseNs, final UnsafeBuffer upperBuf, final Promise<Grant> held,
                           final int failuresInARow) {
        final String node = t.node;
        final long upperAddress = t.upperAddress;
        final int rkey = t.rkey;
        final long ticket = t.ticket;
        final Srtt s = srtt(node);
        timers.after(pauseNs).compose(v -> channels.apply(node)).compose(ch -> {
            final long sent = timers.nowNs();
            polls++;
            return ch.read(upperAddress, rkey, upperBuf, 0, Long.BYTES).map(r -> {
                s.sample(timers.nowNs() - sent);
                return upperBuf.getLong(0);
            });
        }).onComplete(ar -> {
            if (ar.failed()) {
                // A failed poll says nothing about the ticket: it is still ours, queued or (once upper reaches it)
                // held, and only our unlock or recovery moves upper past it. Failing the request here would leave it
                // queued on a live node, every later ticket of the object waiting forever. So the ticket is polled
                // for again (a refusal at once, a failure after a growing pause); a memory node unreachable that long
                // (fenced, dead) fails the request as in doubt, on which the caller gives its loop up to recovery.
                if (io.scythe.txn.Refusal.forNow(ar.cause())) {
                    awaitTurn(t, s.hangoutNs(1, INITIAL_RTT_NS), upperBuf, held, failuresInARow);
                } else if (failuresInARow + 1 < MAX_POLL_FAILURES) {
                    awaitTurn(t, POLL_RETRY_PAUSE_NS << Math.min(failuresInARow, 10), upperBuf, held,
                        failuresInARow + 1);
                } else {
                    held.fail(new TicketInDoubtException("Takeout ticket " + ticket + " of the lock at "
                        + Long.toHexString(upperAddress) + " on " + node + ": " + MAX_POLL_FAILURES + " polls in a row "
                        + "failed, the last with " + ar.cause(), ar.cause()));
                }
                return;
            }
            final long upper = ar.result();
            if (t.served(upper)) {
                held.complete(new Grant(node, upperAddress, rkey, ticket, t.queued, timers.nowNs() - t.start, -1,
                    null, t.shared, t.tableId, t.pointer));
            } else if (!t.shared && upper > ticket) {
                held.fail(new IllegalStateException("Takeout Lock at " + Long.toHexString(upperAddress) + " on " + node
                    + " served ticket " + upper + " past ours (" + ticket + ") without us: unlocked by someone else"));
            } else {
                awaitTurn(t, s.hangoutNs(t.turn - upper, INITIAL_RTT_NS), upperBuf, held, 0);
            }
        });
    }

    /** A granted ticket waiting for its turn: {@code upper == ticket} (exclusive) or {@code upper >= turn} (shared). */
    private record Turn(String node, long upperAddress, int rkey, long ticket, long turn, boolean shared, int tableId,
                        long pointer, long queued, long start) {
        boolean served(final long upper) {
            return shared ? upper >= turn : upper == ticket;
        }
    }

    private Srtt srtt(final String node) {
        return srtt.computeIfAbsent(node, n -> new Srtt());
    }

    /** How long to wait before asking again after a refusal that saw {@code queued} ahead: their hangout. */
    public long backoffNs(final String node, final long queued) {
        return srtt(node).hangoutNs(Math.max(1, queued), INITIAL_RTT_NS);
    }

    /** Smoothed round trip to {@code node} (ns), or the initial guess. */
    public long srttNs(final String node) {
        return srtt(node).srttNs(INITIAL_RTT_NS);
    }

    public long polls() {
        return polls;
    }

}
