package io.scythe.txn.aurogon;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.BitSet;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;

/**
 * An Aurogon backup participant (§3, §4.5): what a memory node holds, as a backup, of the transactions whose writes
 * went to the partitions it backs up. A coordinator sends a transaction's updates here ({@link #replicate}) before any
 * COMMIT reaches a primary; they stay HELD (not visible) until the transaction is decided: {@link #apply} writes them
 * into the node's backup tables through an {@link Applier} (the coordinator says so once its primaries committed, or a
 * recovery that found the transaction durable), {@link #discard} drops them (a recovery that found it not durable).
 *
 * <p><b>Durability, and fencing</b>: every REPLICATE part carries the transaction's backup nodes (a bit mask of memory
 * node indices) and how many writes this node gets, so a node knows when it holds all of its share ({@link #holds}:
 * FULL). A transaction is durable when every node of its mask holds its share: the coordinator sends no COMMIT before
 * all of them acknowledged. A recovery asks every node ({@link #holds}); a node that does not hold all of its share
 * answers ABORTED and from then on refuses the transaction's parts ({@link #FENCED}), so a live coordinator that was
 * only slow can never complete its replication after a recovery decided to roll it back.
 *
 * <p><b>Orphans</b>: a transaction held here longer than the orphan lease becomes a suspect ({@link #suspect()}):
 * the node's replies name it so that a live coordinator resolves it (a coordinator that died between its primaries'
 * COMMITs and its APPLYs leaves nothing pending at a primary, only this).
 *
 * <p>Decided transactions are remembered (their state and values, for recoveries still asking) for the last
 * {@link #REMEMBERED} decisions; an older one is forgotten, and its coordinator's mark rises to it: a timestamp of
 * that coordinator at or below its mark and not held here is answered {@link #FORGOTTEN} (to HOLDS, APPLY and
 * DISCARD) and its REPLICATE is refused ({@link #STALE}), never taken as new. Before, a forgotten decision took the
 * opposite mark as a new entry, so a resolver reaching this node more than {@link #REMEMBERED} decisions after
 * another decided could decide again, differently ({@link CoordinatorRecovery#mark}). A decision is forgotten only
 * below its coordinator's low-water (the oldest timestamp it still had open, carried by every REPLICATE: the largest
 * heard here), so the mark stays below every transaction the coordinator had not finished: one never seen here (its
 * REPLICATE reached only another backup before the coordinator died) is fenced by a recovery's HOLDS, not answered
 * FORGOTTEN. A decision at or above the low-water stays remembered past {@link #REMEMBERED} (pinned) until a later
 * REPLICATE raises it; a dead coordinator's stay for good, bounded by its transactions from its last low-water heard
 * here on. Before (review, stop 40), a forgotten decision raised the mark over such a never-seen timestamp: every
 * resolver asking this node yielded, and the backup holding it kept it undecided, first among its suspects, for good.
 * The marks are per coordinator (the timestamp's server and loop ids: one long each, so memory stays bounded by the
 * decisions kept and the coordinators), so one coordinator's clock running ahead does not put every other's
 * timestamps below it. Sans-IO, loop-confined.
 */
public final class Backups {
    public static final int OK = 0;
    /** The transaction was fenced (rolled back by a recovery): its parts are refused. */
    public static final int FENCED = -10;
    /**
     * A REPLICATE below what the node's deletes bookkeeping forgot ({@code ParticipantService#pruneDeletes}): refused,
     * the reply's seen timestamp at or above the forgotten ones, so the coordinator retries above them.
     */
    public static final int STALE = -11;
    /** A recovery's view of a transaction at this node. */
    public static final int FULL = 1;
    public static final int COMMITTED = 2;
    public static final int ABORTED = 3;
    /**
     * A decision taken here and forgotten since (or a timestamp never seen here that its coordinator had finished
     * before forgotten decisions, below its low-water: nothing to decide): final, known only by its effect at the
     * primaries; a recovery that meets it takes no decision ({@link CoordinatorRecovery#mark}).
     */
    public static final int FORGOTTEN = -12;
    /**
     * A replacement process asked about a timestamp at or below the floor it was born at ({@link #bornAt}) that it
     * holds nothing of: its predecessor, dead with what it held, may have held it in full (acknowledged, so its
     * coordinator may have decided to commit), so this node can neither say it holds it nor fence it. A recovery takes
     * the node's share as lost ({@code CoordinatorRecovery#lostShare}). Not fenced here.
     */
    public static final int NOT_HERE = 4;
    /** How many decided transactions a node remembers. */
    public static final int REMEMBERED = 8192;

    /** Writes a decided update into the node's backup table {@code table} ({@code value} null: a delete). */
    @FunctionalInterface
    public interface Applier {
        void apply(int table, long key, long wts, byte[] value);
    }

    /** One write of a transaction held here: a backup table's id, the key, the value (null: a delete). */
    static final class Entry {
        final int table;
        final long key;
        final byte[] value;
        final BitSet got;

        Entry(final int table, final long key, final int length) {
            this.table = table;
            this.key = key;
            this.value = length < 0 ? null : new byte[length];
            this.got = new BitSet(Math.max(length, 0));
        }

        boolean complete() {
            return value == null || got.nextClearBit(0) >= value.length;
        }

        int table() {
            return table;
        }

        long key() {
            return key;
        }

        byte[] value() {
            return value;
        }
    }

    private static final class Held {
        final long ts;
        long txnId;
        long mask;
        int expected;
        int state = FULL; // FULL while held (complete or not), then COMMITTED or ABORTED
        final Map<Long, Entry> entries = new HashMap<>();
        final List<Entry> order = new ArrayList<>();

        Held(final long ts) {
            this.ts = ts;
        }

        boolean complete() {
            if (order.size() != expected) {
                return false;
            }
            for (final Entry e : order) {
                if (!e.complete()) {
                    return false;
                }
            }
            return true;
        }
    }

    /**
     * A recovery's answer: {@link #FULL}, {@link #COMMITTED} or {@link #ABORTED}, the mask, the writes held and the
     * transaction's id (its coordinator's, so that a recovery reports the transaction under it; 0 when none is held).
     */
    public record Holding(int state, long mask, int entries, long txnId) {
    }

    private final Applier applier;
    private final Participant.Deferrer deferrer;
    private final long orphanNs;
    private final Map<Long, Held> byTs = new HashMap<>();
    private final ArrayDeque<Long> decided = new ArrayDeque<>();
    private final LinkedHashSet<Long> suspects = new LinkedHashSet<>();
    /** How many decided transactions this node remembers ({@link #REMEMBERED}; tests shrink it). */
    int remembered = REMEMBERED;
    /**
     * Per coordinator, the largest low-water its REPLICATEs carried: it had finished every transaction below it
     * (committed and applied, or rolled back and discarded), so a decision below it may be forgotten.
     */
    private final org.agrona.collections.Long2LongHashMap lowWater = new org.agrona.collections.Long2LongHashMap(0);
    /** Decisions past {@link #remembered} kept because they were at or above their coordinator's low-water. */
    private final ArrayDeque<Long> pinned = new ArrayDeque<>();
    /** Decisions since {@link #pinned} was last looked through. */
    private int sincePinnedScan;
    /** Per coordinator (a timestamp's low {@link AurogonTimestamp#ID_BITS}), the largest timestamp forgotten. */
    private final org.agrona.collections.Long2LongHashMap forgottenUpTo =
        new org.agrona.collections.Long2LongHashMap(0);
    private long applied;
    private long discarded;
    private long committedReposts;

    /** {@code orphanNs}: how long a transaction may stay held before it is a suspect (0: never). */
    public Backups(final Applier applier, final Participant.Deferrer deferrer, final long orphanNs,
                   final java.util.function.LongPredicate silent) {
        this.applier = applier;
        this.deferrer = deferrer;
        this.orphanNs = orphanNs;
        this.silent = silent;
    }

    /** Orphan checks armed and not yet run. */
    private int watching;

    /** Whether a held transaction may yet become a suspect, or is one ({@link Participant#watching}). */
    public boolean watching() {
        return watching > 0 || !suspects.isEmpty();
    }

    /** Whether the coordinator of a timestamp was not heard from for the lease. */
    private final java.util.function.LongPredicate silent;

    private void suspectLater(final Held held) {
        suspectAfter(held, orphanNs);
    }

    /** Looks at {@code held} after {@code ns}; while its coordinator still talks, again every quarter lease. */
    private void suspectAfter(final Held held, final long ns) {
        watching++;
        deferrer.after(ns, () -> {
            watching--;
            if (held.state == FULL && byTs.get(held.ts) == held) {
                if (silent.test(held.ts)) {
                    suspects.add(held.ts);
                } else {
                    suspectAfter(held, orphanNs / Participant.RECHECKS);
                }
            }
        });
    }

    /**
     * Holds part of one write of the transaction at {@code ts} (id {@code txnId}): its value's bytes from {@code offset} ({@code length}
     * {@link AurogonRpc#DELETE} for a delete, no bytes), one of the {@code expected} writes this node gets from it.
     * {@code low} is the coordinator's low-water: the oldest timestamp it had open when it sent this (at most
     * {@code ts}, the same coordinator's).
     *
     * @return {@link #OK}, {@link #COMMITTED} when it was decided to commit here (by a recovery: the coordinator may
     *     go on to commit), {@link #FENCED} when a recovery rolled the transaction back, or
     *     {@link #STALE} when it is at or below its coordinator's forgotten mark, or on a replacement process at or
     *     below the floor it was born at ({@link #bornAt}), and not held
     * @throws IllegalArgumentException when the part contradicts earlier parts or lies outside the value
     */
    public int replicate(final long ts, final long low, final long txnId, final long mask, final int expected,
                         final int table, final long key, final int length, final int offset, final byte[] part) {
        if (low > ts || low <= 0 || coordinator(low) != coordinator(ts)) {
            throw new IllegalArgumentException("Aurogon REPLICATE at " + AurogonTimestamp.toString(ts)
                + ": its coordinator's low-water " + AurogonTimestamp.toString(low) + " is not an earlier timestamp "
                + "of the same coordinator");
        }
        if (expected <= 0 || mask == 0 || txnId == 0 || length < AurogonRpc.DELETE || offset < 0
            || (length < 0 ? part.length != 0 || offset != 0 : offset > length - part.length)) {
            throw new IllegalArgumentException("Aurogon REPLICATE of " + table + "/" + key + " at "
                + AurogonTimestamp.toString(ts) + ": " + part.length + " bytes at " + offset + " of a value of "
                + length + ", " + expected + " writes, mask " + Long.toHexString(mask) + ", transaction "
                + Long.toHexString(txnId) + " (never 0)");
        }
        final long coordinator = coordinator(ts);
        Held h = byTs.get(ts);
        if (h == null && ts <= bornAt) {
            // A replacement process holds nothing of a timestamp at or below the floor it was born at and answers a
            // recovery's HOLDS of it NOT_HERE (its predecessor's share, lost with it; holds). A part arriving now is a
            // zombie coordinator's (paused since before the predecessor died) or a repost whose first answer died
            // with the predecessor: held, it turned that answer into FULL (or a fence) under a recovery that took
            // the share as lost, between its NOT_HERE and its DISCARD, and a second resolver could then commit from
            // "every backup FULL" what the first was rolling back. Refused instead (issue 20, aurotests): this node
            // has no record of the transaction and never makes one, so NOT_HERE stays its answer; a live coordinator
            // floors its clock at the refusal (forgottenUpTo: at least the birth floor) and runs again above it.
            return STALE;
        }
        if (h == null && ts < lowWater.get(coordinator)) {
            // Below a low-water its coordinator reported: never open there now, so a late frame of a finished attempt,
            // or a new incarnation reusing the coordinator id with a clock restarted below its old one's (review, stop
            // 40: its decisions in that gap could be forgotten at once, FORGOTTEN for a never-seen one again). The
            // refusal's floor (staleFloor) puts its clock above it.
            return STALE;
        }
        if (lowWater.get(coordinator) < low) {
            lowWater.put(coordinator, low);
        }
        if (h == null && forgotten(ts)) {
            return STALE; // decided here and forgotten (or finished by its coordinator): never held anew
        }
        if (h == null) {
            h = new Held(ts);
            h.txnId = txnId;
            h.mask = mask;
            h.expected = expected;
            byTs.put(ts, h);
            if (orphanNs > 0) {
                suspectLater(h);
            }
        } else if (h.state == COMMITTED) {
            // A part of a transaction a recovery committed here (its coordinator's repost, the first reply lost or
            // late): decided to commit, so the coordinator may go on to its COMMITs (issue 20). Not FENCED, which
            // says rolled back: the coordinator aborted a committed transaction and told its client "unknown".
            // Only for the same transaction (review of aurosplit4, 5): another one at this timestamp (a reused
            // coordinator id) is fenced, never told that a transaction it is not was committed.
            return committedTxn(ts, txnId, mask, expected) ? COMMITTED : FENCED;
        } else if (h.state != FULL) {
            return FENCED;
        } else if (h.mask != mask || h.expected != expected || h.txnId != txnId) {
            throw new IllegalArgumentException("Aurogon REPLICATE at " + AurogonTimestamp.toString(ts) + ": mask "
                + Long.toHexString(mask) + ", " + expected + " writes, transaction " + Long.toHexString(txnId)
                + ", earlier parts said " + Long.toHexString(h.mask) + ", " + h.expected + ", "
                + Long.toHexString(h.txnId));
        }
        final long id = (long) table << 48 ^ key;
        Entry e = h.entries.get(id);
        if (e == null) {
            if (h.order.size() == expected) {
                throw new IllegalArgumentException("Aurogon REPLICATE at " + AurogonTimestamp.toString(ts) + ": a "
                    + (expected + 1) + "th write where " + expected + " were announced");
            }
            e = new Entry(table, key, length);
            h.entries.put(id, e);
            h.order.add(e);
        } else if ((e.value == null ? AurogonRpc.DELETE : e.value.length) != length) {
            throw new IllegalArgumentException("Aurogon REPLICATE of " + table + "/" + key + ": a value of " + length
                + " bytes, earlier parts said otherwise");
        }
        if (e.value != null && part.length > 0) {
            System.arraycopy(part, 0, e.value, offset, part.length);
            e.got.set(offset, offset + part.length);
        }
        return OK;
    }

    /**
     * A recovery's question: does this node hold all of its share of the transaction at {@code ts}? FULL (held, all
     * of it), COMMITTED or ABORTED (decided); a node that holds less, or nothing, fences it first: ABORTED;
     * {@link #FORGOTTEN} when it was decided here and forgotten; {@link #NOT_HERE} on a replacement process for a
     * timestamp it holds nothing of at or below the floor it was born at (not fenced).
     */
    public Holding holds(final long ts) {
        Held h = byTs.get(ts);
        if (h == null && forgotten(ts)) {
            return new Holding(FORGOTTEN, 0, 0, 0);
        }
        if (h == null && ts <= bornAt) {
            // Review (stop 45): answered ABORTED (and fenced) here, a replacement made the recovery roll back what a
            // paused coordinator had decided to commit on its predecessor's acknowledgement, while its other COMMITs
            // landed: a partial commit, the client told committed.
            return new Holding(NOT_HERE, 0, 0, 0);
        }
        if (h == null) {
            h = new Held(ts);
            byTs.put(ts, h);
            decide(h, ABORTED);
            return new Holding(ABORTED, 0, 0, 0);
        }
        if (h.state == FULL && !h.complete()) {
            decide(h, ABORTED);
        }
        return new Holding(h.state, h.mask, h.order.size(), h.txnId);
    }

    /** Write {@code index} (of {@link Holding#entries}) of a transaction held or decided here, or null. */
    Entry entry(final long ts, final int index) {
        final Held h = byTs.get(ts);
        return h == null || index < 0 || index >= h.order.size() ? null : h.order.get(index);
    }

    /**
     * The transaction is committed: its writes go into the backup tables (once; applying a committed one again does
     * nothing). {@link #OK}, {@link #FENCED} when it was rolled back or is not held in full (a coordinator bug), or
     * {@link #FORGOTTEN}.
     */
    public int apply(final long ts) {
        final Held h = byTs.get(ts);
        if (h == null && forgotten(ts)) {
            return FORGOTTEN;
        }
        if (h == null || h.state == ABORTED || h.state == FULL && !h.complete()) {
            return FENCED;
        }
        if (h.state == FULL) {
            for (final Entry e : h.order) {
                applier.apply(e.table, e.key, ts, e.value);
            }
            applied++;
            decide(h, COMMITTED);
        }
        return OK;
    }

    /**
     * The transaction is rolled back (or fenced before it arrives): its writes are dropped. {@link #OK},
     * {@link #FENCED} when it was committed, or {@link #FORGOTTEN}.
     */
    public int discard(final long ts) {
        Held h = byTs.get(ts);
        if (h == null && forgotten(ts)) {
            return FORGOTTEN;
        }
        if (h == null) {
            h = new Held(ts);
            byTs.put(ts, h);
        } else if (h.state == COMMITTED) {
            return FENCED;
        }
        if (h.state == FULL) {
            discarded++;
            decide(h, ABORTED);
        }
        return OK;
    }

    private void decide(final Held h, final int state) {
        h.state = state;
        if (state == ABORTED) {
            h.entries.clear();
            h.order.clear();
        }
        suspects.remove(h.ts);
        decided.addLast(h.ts);
        while (decided.size() > remembered) {
            final long old = decided.removeFirst();
            if (!forget(old)) {
                pinned.addLast(old);
            }
        }
        // Looked through once every max(64, pinned) decisions: amortized O(1) a decision.
        if (!pinned.isEmpty() && ++sincePinnedScan >= Math.max(64, pinned.size())) {
            sincePinnedScan = 0;
            pinned.removeIf(this::forget);
        }
    }

    /**
     * Forgets the decision at {@code old} when it is below its coordinator's low-water (raising the mark to it), so
     * that the mark never covers a transaction the coordinator may not have finished; false when it is kept.
     */
    private boolean forget(final long old) {
        final long coordinator = coordinator(old);
        if (old >= lowWater.get(coordinator)) {
            return false;
        }
        byTs.remove(old);
        if (forgottenUpTo.get(coordinator) < old) {
            forgottenUpTo.put(coordinator, old);
        }
        return true;
    }

    /** Decisions kept past {@link #remembered} because their coordinator's low-water was not above them (tests). */
    int pinned() {
        return pinned.size();
    }

    private static long coordinator(final long ts) {
        return ts & (1L << AurogonTimestamp.ID_BITS) - 1;
    }

    /**
     * On a replacement process, the floor it was born at: every timestamp a predecessor could have held is at or below
     * it ({@code ParticipantService#replacement(long)}); 0 elsewhere.
     */
    private long bornAt;

    /** This node is a replacement process: timestamps at or below {@code floor} may be its predecessor's. */
    void bornAt(final long floor) {
        bornAt = Math.max(bornAt, floor);
    }

    /** Whether {@code ts} is at or below its coordinator's forgotten mark (and so, not held: forgotten). */
    private boolean forgotten(final long ts) {
        return ts <= forgottenUpTo.get(coordinator(ts));
    }

    /**
     * A STALE refusal's floor for {@code ts}: the largest of its coordinator's forgotten mark, the low-water heard
     * from it and, on a replacement process, the floor it was born at (a timestamp below any of them is refused), or 0.
     */
    long forgottenUpTo(final long ts) {
        final long coordinator = coordinator(ts);
        return Math.max(bornAt, Math.max(forgottenUpTo.get(coordinator), lowWater.get(coordinator)));
    }

    /** A transaction held here past the orphan lease, or 0. */
    public long suspect() {
        return suspects.isEmpty() ? 0 : suspects.iterator().next();
    }

    /** Whether a transaction at {@code ts} of id {@code txnId} is held here (undecided, or decided and remembered). */
    public boolean holdsTxn(final long ts, final long txnId) {
        final Held h = byTs.get(ts);
        return h != null && h.txnId == txnId;
    }

    /**
     * Whether the transaction at {@code ts} of id {@code txnId}, {@code mask} and {@code expected} writes is held here
     * in full and undecided (a part of it arriving now is a repost of a part held).
     */
    public boolean heldInFull(final long ts, final long txnId, final long mask, final int expected) {
        final Held h = byTs.get(ts);
        return h != null && h.state == FULL && h.txnId == txnId && h.mask == mask && h.expected == expected
            && h.complete();
    }

    /**
     * Whether the transaction at {@code ts} was committed here (by a recovery's APPLY) and is the one of id
     * {@code txnId}, {@code mask} and {@code expected} writes: a repost of its part is answered COMMITTED (counted,
     * {@link #committedReposts}).
     */
    public boolean committedTxn(final long ts, final long txnId, final long mask, final int expected) {
        final Held h = byTs.get(ts);
        if (h == null || h.state != COMMITTED || h.txnId != txnId || h.mask != mask || h.expected != expected) {
            return false;
        }
        committedReposts++;
        return true;
    }

    /** Whether the transaction at {@code ts} is held here, undecided. */
    public boolean held(final long ts) {
        final Held h = byTs.get(ts);
        return h != null && h.state == FULL;
    }

    /**
     * The transactions held here, undecided, each as its timestamp and the writes held of it when it is held in full,
     * or null when it is not (a promotion fences those, {@link ParticipantService#promote}).
     */
    Map<Long, List<Entry>> heldNow() {
        final Map<Long, List<Entry>> held = new java.util.TreeMap<>();
        for (final Held h : byTs.values()) {
            if (h.state == FULL) {
                held.put(h.ts, h.complete() ? List.copyOf(h.order) : null);
            }
        }
        return held;
    }

    /** The writes of the transaction at {@code ts} held here, undecided (none when it is not held or decided). */
    List<Entry> heldEntries(final long ts) {
        final Held h = byTs.get(ts);
        return h == null || h.state != FULL ? List.of() : List.copyOf(h.order);
    }

    /** The smallest timestamp of a transaction held here, undecided (in full or in part), or Long.MAX_VALUE. */
    long oldestHeld() {
        long oldest = Long.MAX_VALUE;
        for (final Held h : byTs.values()) {
            if (h.state == FULL) {
                oldest = Math.min(oldest, h.ts);
            }
        }
        return oldest;
    }

    /** Transactions held here, undecided (tests, end-of-run checks). */
    public int undecided() {
        int n = 0;
        for (final Held h : byTs.values()) {
            n += h.state == FULL ? 1 : 0;
        }
        return n;
    }

    public long applied() {
        return applied;
    }

    public long discarded() {
        return discarded;
    }

    /** Reposts of a part of a transaction a recovery committed here, answered COMMITTED. */
    public long committedReposts() {
        return committedReposts;
    }
}
