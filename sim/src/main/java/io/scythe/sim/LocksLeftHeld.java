package io.scythe.sim;

import io.scythe.bench.micro.OltpWorkload;
import io.scythe.storage.LogDb;
import io.scythe.storage.ObjectLayout;
import io.scythe.storage.Table;
import io.scythe.txn.scythe.TicketLedger;
import io.vertx.core.json.JsonObject;
import org.agrona.concurrent.AtomicBuffer;

import java.util.List;
import java.util.Map;
import java.util.function.LongFunction;
import java.util.function.Predicate;

/**
 * The locks a run left held, object by object, and whose they are: a CAS word names its holder's transaction (whose
 * id names its loop), a Takeout Lock's holder is the one whose ticket {@code upper} serves (the memory node's
 * ledger, or the locked insert that created the object). Held by a compute node that gave up, a lock is expected to
 * stay held (its recovery would free it; the simulator recovers only crashed nodes, {@link Faults#recover});
 * {@code upper} past {@code lower} means a lock was released more often than it was taken (one lock handed to two
 * holders); anything else is a lock leaked on a live node (or on a crashed one that recovery should have freed).
 */
final class LocksLeftHeld {
    /** Objects locked at the end (as {@link OltpWorkload#locksHeld} counts them). */
    long total;
    /** Of those, held by a compute node that gave up. */
    long byGivenUp;
    /** Takeout Locks whose {@code upper} passed {@code lower}: released once more than taken. */
    long releasedPast;
    /**
     * Of those, held by a compute node whose transactions are still in flight after the drain (a run that is not
     * quiescent): not a leak yet, their transactions may still release them.
     */
    long byInFlight;
    /** Held by no compute node that gave up or still has transactions in flight (or by nobody known). */
    long onLiveNodes;
    private String first;

    /**
     * @param ledgers     each memory node's ticket ledger, in the order of {@code dbs}; empty when none was kept
     * @param insertedBy  each insert created locked with a ticket, by {@link #objectKey}: the last one per object
     * @param nodeOfTxn   the compute node that ran a transaction id
     * @param gaveUp      whether a compute node gave up
     */
    static LocksLeftHeld census(final List<LogDb> dbs, final List<TicketLedger> ledgers,
                                final Map<Long, Insert> insertedBy, final LongFunction<String> nodeOfTxn,
                                final Predicate<String> gaveUp) {
        return census(dbs, ledgers, insertedBy, nodeOfTxn, gaveUp, node -> false);
    }

    /**
     * As {@link #census(List, List, Map, LongFunction, Predicate)}, and a lock of a compute node for which
     * {@code inFlight} holds (transactions still running after the drain) counts in {@link #byInFlight}.
     */
    static LocksLeftHeld census(final List<LogDb> dbs, final List<TicketLedger> ledgers,
                                final Map<Long, Insert> insertedBy, final LongFunction<String> nodeOfTxn,
                                final Predicate<String> gaveUp, final Predicate<String> inFlight) {
        // A crashed memory node is not among dbs: the simulator passes the serving copies (a promoted backup for
        // each partition the dead node held), whose lock words are the ones that count (issue 19: TPC-C under
        // --crash-mn, order lines' CAS words of live cn1 counted on dead mn1 as locks left held).
        final LocksLeftHeld held = new LocksLeftHeld();
        OltpWorkload.forEachLocked(dbs, (node, table, header) -> {
            held.total++;
            final AtomicBuffer m = table.objectMemory();
            final long lower = m.getLongVolatile(header + ObjectLayout.LOWER_OFFSET);
            final long upper = m.getLongVolatile(header + ObjectLayout.UPPER_OFFSET);
            final long casWord = m.getLongVolatile(header + ObjectLayout.CAS_LOCK_OFFSET);
            final String where = table.schema().name() + " object at " + header + " of " + dbs.get(node).nic().node();
            if (upper - lower > 0) {
                held.releasedPast++;
                held.noteFirst(where + ": upper " + upper + " passed lower " + lower);
                return;
            }
            final String holder = casWord != 0 ? nodeOfTxn.apply(casWord)
                : holderOfTicket(ledgers.isEmpty() ? null : ledgers.get(node), insertedBy, node, table, header);
            if (holder != null && gaveUp.test(holder)) {
                held.byGivenUp++;
            } else if (holder != null && inFlight.test(holder)) {
                held.byInFlight++;
            } else {
                held.onLiveNodes++;
                held.noteFirst(where + (casWord != 0 ? ": CAS word " + Long.toHexString(casWord)
                    : ": tickets " + upper + ".." + (lower - 1)) + " held by " + (holder == null ? "nobody known"
                    : holder + ", which did not give up"));
            }
        });
        return held;
    }

    private static String holderOfTicket(final TicketLedger ledger, final Map<Long, Insert> insertedBy,
                                         final int node, final Table table, final int header) {
        final String granted = ledger == null ? null : ledger.holderOf(table, header);
        if (granted != null) {
            return granted;
        }
        final Insert insert = insertedBy.get(objectKey(node, table, header));
        final long upper = table.objectMemory().getLongVolatile(header + ObjectLayout.UPPER_OFFSET);
        return insert != null && insert.ticket() == upper ? insert.node() : null;
    }

    /** An object compute node {@code node} inserted holding {@code ticket} of its Takeout Lock. */
    record Insert(String node, long ticket) {
    }

    /** Identifies the object at {@code header} of {@code table} on memory node number {@code node}. */
    static long objectKey(final int node, final Table table, final int header) {
        return ((long) node << 48) | ((long) table.schema().id() << 32) | (header & 0xffffffffL);
    }

    private void noteFirst(final String what) {
        if (first == null) {
            first = what;
        }
    }

    /** What was left held that nothing explains: a release too many, or a lock leaked on a live node. */
    boolean unexplained() {
        return releasedPast > 0 || onLiveNodes > 0;
    }

    /** The first lock left held that nothing explains, described, or {@code null}. */
    String first() {
        return first;
    }

    JsonObject unexplainedJson() {
        return new JsonObject().put("released_past_queue", releasedPast).put("held_on_live_nodes", onLiveNodes)
            .put("held_by_nodes_in_flight", byInFlight).put("first", first);
    }
}
