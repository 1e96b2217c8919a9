package io.scythe.txn.selcc;

import io.scythe.rrpc.CnPeers;
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
 * {@link #ASK_AGAIN_NS} (the call never waits, so no call bound is stretched). A compute node whose calls all fail is
 * dropped from the wait only when the host says it holds nothing any more (never registered, or its current
 * incarnation recorded recovered: fenced, its bits cleared by its own recovery); a failed call alone, even
 * {@code DISCONNECTED}, proves neither (a paused survivor resumes). Past {@code scythe.selcc.survivorAckWaitMs} with
 * an acknowledgement missing the node says so in its log and health (overdue) and keeps asking, taking no latch
 * until every one came (never a silent proceed).
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
    /** Default of {@code scythe.selcc.survivorAckWaitMs}: how long the barrier waits before it is flagged overdue. */
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
     * loop). A node none of whose calls answered in a round is dropped only when {@code gone} (the host) says it holds
     * nothing any more (never registered, or its current incarnation recorded recovered,
     * {@code RecoveryRecord#recoveredOrNeverRegistered}); calls that fail, even {@code DISCONNECTED} (its member left,
     * an event-bus failure), are asked again: a paused survivor resumes, and its take-back CAS would take the new
     * incarnation's bits (issue 21 review, finding 1). Past {@code waitNs} ({@code nowNs}) with acknowledgements
     * missing, {@code overdue} is told once (who, health and log) and the wait goes on: a survivor's take-back may be
     * legitimately pending for its whole window ({@code deadHolderWaitNs}, 120 s), and a refusal would be for good (finding
     * 4). Succeeds with a summary (what was dropped); fails only once {@code stopped} (the node closed its peer
     * messaging: its rounds would ask for ever on behalf of a node that is gone; issue 21 review).
     */
    static Future<String> await(final List<String> survivors, final int loops, final Map<String, Long> earlier,
                                final Ask ask, final java.util.function.Function<String, Future<Boolean>> gone,
                                final java.util.function.LongFunction<Future<Void>> sleep,
                                final java.util.function.LongSupplier nowNs, final long waitNs,
                                final java.util.function.Consumer<String> overdue,
                                final java.util.function.BooleanSupplier stopped) {
        final List<Owed> owed = new ArrayList<>();
        for (final String peer : survivors) {
            for (int loop = 0; loop < loops; loop++) {
                for (final Map.Entry<String, Long> e : earlier.entrySet()) {
                    owed.add(new Owed(peer, loop, e.getKey(), e.getValue()));
                }
            }
        }
        final Promise<String> done = Promise.promise();
        new Rounds(owed, ask, gone, sleep, nowNs, nowNs.getAsLong() + waitNs, overdue, done, stopped).round();
        return done.future();
    }

    /** The state of one {@link #await}: what is owed, who was dropped, whether it was flagged overdue. */
    private record Rounds(List<Owed> owed, Ask ask, java.util.function.Function<String, Future<Boolean>> gone,
                          java.util.function.LongFunction<Future<Void>> sleep, java.util.function.LongSupplier nowNs,
                          long deadlineNs, java.util.function.Consumer<String> overdue, Promise<String> done,
                          java.util.function.BooleanSupplier stopped, TreeSet<String> dropped, boolean[] flagged) {
        Rounds(final List<Owed> owed, final Ask ask, final java.util.function.Function<String, Future<Boolean>> gone,
               final java.util.function.LongFunction<Future<Void>> sleep, final java.util.function.LongSupplier nowNs,
               final long deadlineNs, final java.util.function.Consumer<String> overdue, final Promise<String> done,
               final java.util.function.BooleanSupplier stopped) {
            this(owed, ask, gone, sleep, nowNs, deadlineNs, overdue, done, stopped, new TreeSet<>(), new boolean[1]);
        }

        void round() {
            if (stopped.getAsBoolean()) {
                done.fail(new IllegalStateException("the recovery barrier stopped: this node closed its peer "
                    + "messaging (still owed: " + owed.size() + " acknowledgements)"));
                return;
            }
            owed.removeIf(o -> dropped.contains(o.peer));
            if (owed.isEmpty()) {
                done.complete(dropped.isEmpty() ? "every live survivor acknowledged" : "every live survivor "
                    + "acknowledged; " + dropped + " never registered or recovered (dropped from the wait)");
                return;
            }
            if (!flagged[0] && nowNs.getAsLong() - deadlineNs >= 0) {
                flagged[0] = true;
                final TreeSet<String> missing = new TreeSet<>();
                owed.forEach(o -> missing.add(o.peer + " loop " + o.loop + " for " + o.incarnation));
                overdue.accept("no acknowledgement from " + missing + " within scythe.selcc.survivorAckWaitMs: this "
                    + "node takes no SELCC latch until they answer (still asking; a survivor that never will: restart "
                    + "it, or this node)");
            }
            final List<Future<Boolean>> asked = new ArrayList<>();
            for (final Owed o : owed) {
                asked.add(ask.ask(o.peer, o.loop, o.incarnation, o.prefix));
            }
            Future.join(asked).onComplete(all -> {
                final TreeSet<String> silent = new TreeSet<>();
                final TreeSet<String> answered = new TreeSet<>();
                final List<Owed> left = new ArrayList<>();
                for (int i = 0; i < owed.size(); i++) {
                    final Future<Boolean> f = asked.get(i);
                    (f.failed() ? silent : answered).add(owed.get(i).peer);
                    if (f.failed() || !f.result()) {
                        left.add(owed.get(i));
                    }
                }
                silent.removeAll(answered); // a node some of whose loops answered is there
                owed.clear();
                owed.addAll(left);
                final List<String> unheard = List.copyOf(silent);
                final List<Future<Boolean>> checked = new ArrayList<>();
                for (final String peer : unheard) {
                    checked.add(gone.apply(peer)); // a failed question to the host: not dropped, asked again
                }
                Future.join(checked).onComplete(c -> {
                    for (int i = 0; i < unheard.size(); i++) {
                        if (checked.get(i).succeeded() && Boolean.TRUE.equals(checked.get(i).result())) {
                            dropped.add(unheard.get(i));
                        }
                    }
                    if (owed.stream().allMatch(o -> dropped.contains(o.peer))) {
                        round();
                        return;
                    }
                    sleep.apply(ASK_AGAIN_NS).onComplete(v -> round());
                });
            });
        }
    }
}
