package io.scythe.txn.selcc;

import io.scythe.rrpc.CnPeers;
import io.scythe.rrpc.RpcException;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import org.agrona.DirectBuffer;
import org.agrona.concurrent.UnsafeBuffer;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeSet;

/**
 * Cluster nodes (issue 21; package doc "The recovery barrier"): a restarted compute node's loops reuse the participant
 * numbers of its dead incarnations, so before it takes any latch every live survivor's loop acknowledges, per earlier
 * incarnation, that it processed that incarnation's recovery: it knows it released (so it hands it nothing any more),
 * no handover or downgrade to it is in flight and every one watched late ({@code LineCache#watchLate}) is taken back
 * (or given up, counted). What names the number after that is the new incarnation's.
 *
 * <p>The question is one CN-to-CN call ({@link #RPC}, to each loop of each other compute node): the earlier
 * incarnation's id prefix (u64) then its identity (UTF-8). The asker knows it recovered (its host told it: the record
 * is written before the owed entry goes), so the survivor takes the question as the news too
 * ({@link ReleasesHeard#recordedRecovered}: a survivor whose release message was lost or late learns it here). The
 * answer is a u32, {@link #ACKNOWLEDGED} or {@link #PENDING}; a pending one is asked again every
 * {@link #ASK_AGAIN_NS} (the call never waits, so no call bound is stretched). A compute node not in the cluster (its
 * call fails {@code DISCONNECTED} twice in a row, one interval apart: unknown, or its member left) is dropped from
 * the wait: it died, and its own recovery clears its bits. Past {@code scythe.selcc.survivorAckWaitMs} with an
 * acknowledgement missing the wait ends in a refusal: the node keeps taking no latch, says so in its log and health,
 * and an operator restarts it (never a silent proceed).
 */
final class RecoveryBarrier {
    /** The question's RPC id (beside {@link Invalidation#RPC}). */
    static final int RPC = 0x5C02;
    /** Answer: this loop processed the recovery of the incarnation asked about. */
    static final int ACKNOWLEDGED = 0;
    /** Answer: not yet (a handover to it in flight, or a watched one not taken back yet): ask again. */
    static final int PENDING = 1;
    /** How often a pending or failed question is asked again. */
    static final long ASK_AGAIN_NS = 100_000_000L;
    /** Default of {@code scythe.selcc.survivorAckWaitMs}: how long the barrier waits before it refuses. */
    static final long DEFAULT_WAIT_MS = 60_000;

    private RecoveryBarrier() {
    }

    /** The bound of the wait ({@code scythe.selcc.survivorAckWaitMs}, positive). */
    static long waitMs() {
        final long ms = Long.getLong("scythe.selcc.survivorAckWaitMs", DEFAULT_WAIT_MS);
        if (ms <= 0) {
            throw new IllegalArgumentException("scythe.selcc.survivorAckWaitMs=" + ms + " must be positive");
        }
        return ms;
    }

    /** The question about {@code incarnation} (id prefix {@code prefix}). */
    static UnsafeBuffer question(final String incarnation, final long prefix) {
        final byte[] name = incarnation.getBytes(StandardCharsets.UTF_8);
        final UnsafeBuffer b = new UnsafeBuffer(new byte[8 + name.length]);
        b.putLong(0, prefix);
        b.putBytes(8, name);
        return b;
    }

    /**
     * A survivor loop's answer to a question ({@code payload} at {@code offset}, {@code length} bytes): records the
     * incarnation recovered in {@code heard} (null: none kept, other hosts), then asks {@code settled} whether this
     * loop is done with it. Malformed questions fail clearly.
     */
    static int answer(final DirectBuffer payload, final int offset, final int length, final ReleasesHeard heard,
                      final java.util.function.Predicate<String> settled) {
        if (length <= 8) {
            throw new IllegalArgumentException("recovery barrier question of " + length + " bytes: expected an 8-byte "
                + "id prefix and an incarnation");
        }
        final long prefix = payload.getLong(offset);
        final String incarnation = payload.getStringWithoutLengthUtf8(offset + 8, length - 8);
        if (heard != null) {
            heard.recordedRecovered(incarnation, prefix);
        }
        return settled.test(incarnation) ? ACKNOWLEDGED : PENDING;
    }

    /** Asks one survivor loop about one earlier incarnation: true once acknowledged; a failure as the call's. */
    @FunctionalInterface
    interface Ask {
        Future<Boolean> ask(String peer, int loop, String incarnation, long prefix);
    }

    /** The production {@link Ask}: a call from this node's loop 0 over {@code peers}. */
    static Ask over(final CnPeers peers) {
        return (peer, loop, incarnation, prefix) -> peers.onLoop(0, () -> {
            final UnsafeBuffer q = question(incarnation, prefix);
            return peers.call(peer, loop, RPC, q, 0, q.capacity()).map(reply -> reply.payload().getInt(0)
                == ACKNOWLEDGED);
        });
    }

    /** One (survivor, loop, earlier incarnation) still to acknowledge. */
    private record Owed(String peer, int loop, String incarnation, long prefix) {
    }

    /**
     * Waits for every loop ({@code loops} each) of every node of {@code survivors} to acknowledge every one of
     * {@code earlier} (identity to id prefix), asking again every {@link #ASK_AGAIN_NS} ({@code sleep}, on no event
     * loop), dropping a node whose calls fail {@code DISCONNECTED} twice in a row; {@code nowNs} bounds it by
     * {@code waitNs}. Succeeds with a summary (what was dropped); fails with the refusal's reason.
     */
    static Future<String> await(final List<String> survivors, final int loops, final Map<String, Long> earlier,
                                final Ask ask, final java.util.function.LongFunction<Future<Void>> sleep,
                                final java.util.function.LongSupplier nowNs, final long waitNs) {
        final List<Owed> owed = new ArrayList<>();
        for (final String peer : survivors) {
            for (int loop = 0; loop < loops; loop++) {
                for (final Map.Entry<String, Long> e : earlier.entrySet()) {
                    owed.add(new Owed(peer, loop, e.getKey(), e.getValue()));
                }
            }
        }
        final Promise<String> done = Promise.promise();
        round(owed, new TreeSet<>(), new TreeSet<>(), ask, sleep, nowNs, nowNs.getAsLong() + waitNs, done);
        return done.future();
    }

    private static void round(final List<Owed> owed, final TreeSet<String> gone, final TreeSet<String> goneOnce,
                              final Ask ask, final java.util.function.LongFunction<Future<Void>> sleep,
                              final java.util.function.LongSupplier nowNs, final long deadlineNs,
                              final Promise<String> done) {
        owed.removeIf(o -> gone.contains(o.peer));
        if (owed.isEmpty()) {
            done.complete(gone.isEmpty() ? "every live survivor acknowledged" : "every live survivor acknowledged; "
                + gone + " not in the cluster (dropped from the wait)");
            return;
        }
        if (nowNs.getAsLong() - deadlineNs >= 0) {
            final TreeSet<String> missing = new TreeSet<>();
            owed.forEach(o -> missing.add(o.peer + " loop " + o.loop + " for " + o.incarnation));
            done.fail(new IllegalStateException("no acknowledgement from " + missing + " within the wait "
                + "(scythe.selcc.survivorAckWaitMs): this node takes no SELCC latch (its participant numbers may still "
                + "be named for its dead incarnation); restart it"));
            return;
        }
        final List<Future<Boolean>> asked = new ArrayList<>();
        for (final Owed o : owed) {
            asked.add(ask.ask(o.peer, o.loop, o.incarnation, o.prefix));
        }
        Future.join(asked).onComplete(all -> {
            final TreeSet<String> disconnected = new TreeSet<>();
            final TreeSet<String> answered = new TreeSet<>();
            final List<Owed> left = new ArrayList<>();
            for (int i = 0; i < owed.size(); i++) {
                final Future<Boolean> f = asked.get(i);
                final Owed o = owed.get(i);
                if (f.failed() && f.cause() instanceof RpcException r && r.code() == RpcException.DISCONNECTED) {
                    disconnected.add(o.peer);
                } else {
                    answered.add(o.peer);
                }
                if (f.failed() || !f.result()) {
                    left.add(o);
                }
            }
            disconnected.removeAll(answered); // a node some of whose loops answered is in the cluster
            for (final String peer : disconnected) {
                if (!goneOnce.add(peer)) {
                    gone.add(peer); // twice in a row: not in the cluster
                }
            }
            goneOnce.retainAll(disconnected);
            owed.clear();
            owed.addAll(left);
            if (owed.stream().allMatch(o -> gone.contains(o.peer))) {
                round(owed, gone, goneOnce, ask, sleep, nowNs, deadlineNs, done);
                return;
            }
            sleep.apply(ASK_AGAIN_NS).onComplete(v -> round(owed, gone, goneOnce, ask, sleep, nowNs, deadlineNs,
                done));
        });
    }
}
