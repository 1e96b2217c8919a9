package io.scythe.txn.scythe;

import io.scythe.bridge.Bridge;
import io.scythe.storage.ObjectLayout;
import io.scythe.storage.Table;
import org.agrona.collections.Long2ObjectHashMap;
import org.agrona.concurrent.AtomicBuffer;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * A memory node's record of who holds or queues for each Takeout Lock ticket it granted: the compute node and its
 * transaction ({@code TakeoutLockService} tells it), so that a dead compute node's tickets can be cancelled: a cancelled ticket is skipped when {@code upper}
 * reaches it (this node adds 1 to {@code upper} itself, as the holder's unlock would), so the tickets behind it are
 * served. Tickets already served ({@code ticket < upper}) are pruned as the object is locked again. Runs on the RPC
 * server's loop (the same as the lock service), polled there (busily: the unlocks ahead are one-sided and wake
 * nothing here) while cancelled tickets wait for their turn.
 *
 * <p>Shared (reader) tickets ({@link TakeoutLock#lockShared}): the readers of one run release in any order, each
 * adding 1 to {@code upper}, so {@code upper} does not tell which of them are done. They release through the memory
 * node ({@link LockRpc#UNLOCK_SHARED}), which marks them released here; so a shared ticket is known held until then,
 * and a dead compute node's unreleased one is skipped (1 added for it) once {@code upper} reaches its turn.
 */
public final class TicketLedger implements Bridge.Poller, TakeoutLock.Runs {
    /**
     * Each object's entry (keyed without boxing: one lookup per grant): its tickets not yet known to be served and its
     * trailing reader run, both of one incarnation of the object's slot.
     */
    private final Long2ObjectHashMap<Entry> byObject = new Long2ObjectHashMap<>();
    /** The tables by schema id (no boxing: looked up per grant). */
    private final Long2ObjectHashMap<Table> tables = new Long2ObjectHashMap<>();
    private final List<Holder> cancelled = new ArrayList<>();
    /** Compute nodes released by recovery: a ticket they still get (a request already on its way) is cancelled. */
    private final Set<String> released = new HashSet<>();
    private Bridge bridge;
    private long skipped;
    /** Shared tickets cancelled (a dead node's unreleased ones) and, of those, skipped: 1 added to upper for each. */
    private long sharedCancelled;
    private long sharedSkipped;

    /**
     * One object's tickets and reader run, for one incarnation of its slot. A slot reused by another object (its
     * {@code lower} and {@code upper} zeroed, its incarnation raised) drops both ({@link #renew}): before, the old
     * object's holders stayed queued (an exclusive one with a ticket at or above the new {@code upper} looked
     * outstanding, so nothing behind it was pruned), {@link #releaseShared} stopped at an old holder with the same ticket
     * number and refused the new reader's release, and a recovery's {@link #cancel} skipped old tickets on the new
     * object's {@code upper}.
     */
    private static final class Entry {
        int incarnation;
        final ArrayDeque<Holder> holders = new ArrayDeque<>(2);
        final TakeoutLock.Run run = new TakeoutLock.Run();

        Entry(final int incarnation) {
            this.incarnation = incarnation;
        }

        /** Holders are of the incarnation now in the slot; else the old ones are dropped first. */
        Entry of(final int current) {
            if (current != incarnation) {
                renew(current);
            }
            return this;
        }

        void renew(final int current) {
            incarnation = current;
            holders.clear();
            run.reset();
        }
    }

    /** A ticket and who got it; a served one's holder is reused for the object's next grant. */
    private static final class Holder {
        String client;
        long txn;
        long object;
        /** The incarnation of the object's slot the ticket was granted in. */
        int incarnation;
        long ticket;
        /** A shared ticket's turn ({@code ticket} for an exclusive one). */
        long turn;
        boolean shared;
        /** A shared ticket released through this node ({@link #releaseShared}). */
        boolean released;

        Holder(final String client, final long txn, final long object, final int incarnation, final long ticket,
               final long turn, final boolean shared) {
            set(client, txn, object, incarnation, ticket, turn, shared);
        }

        Holder set(final String client, final long txn, final long object, final int incarnation, final long ticket,
                   final long turn, final boolean shared) {
            this.client = client;
            this.txn = txn;
            this.object = object;
            this.incarnation = incarnation;
            this.ticket = ticket;
            this.turn = turn;
            this.shared = shared;
            this.released = false;
            return this;
        }

        /** Still held or queued for, with {@code upper} as it is now. */
        boolean outstanding(final long upper) {
            return shared ? !released : ticket >= upper;
        }

        /** Its turn has come: it holds the lock (or would, were it not cancelled). */
        boolean served(final long upper) {
            return shared ? upper >= turn : upper == ticket;
        }
    }

    static long objectKey(final Table table, final int header) {
        return ((long) table.schema().id() << 32) | (header & 0xffffffffL);
    }

    @Override
    public TakeoutLock.Run run(final long object, final int incarnation, final boolean create) {
        Entry entry = byObject.get(object);
        if (entry == null) {
            if (!create) {
                return null;
            }
            entry = new Entry(incarnation);
            byObject.put(object, entry);
        }
        return entry.of(incarnation).run;
    }

    /** The incarnation of the slot of {@code object} now, or -1 when its table is unknown here. */
    private int incarnationNow(final long object) {
        final Table table = tables.get(object >>> 32);
        return table == null ? -1 : TakeoutLock.incarnation(table.objectMemory(), (int) object);
    }

    /** {@code entry}, the entry of {@code object}, with only its slot's current incarnation's tickets. */
    private Entry current(final long object, final Entry entry) {
        final int now = incarnationNow(object);
        return now < 0 ? entry : entry.of(now);
    }

    /**
     * Transaction {@code txn} of {@code client} got {@code ticket} of the lock of the object at {@code header} of
     * {@code table}.
     */
    public void granted(final String client, final long txn, final Table table, final int header, final long ticket) {
        granted(client, txn, table, header, ticket, ticket, false);
    }

    /**
     * As {@link #granted(String, long, Table, int, long)}, for a ticket whose {@code turn} comes when {@code upper}
     * reaches it; {@code shared}: a reader's ({@link TakeoutLock#lockShared}), released only by {@link #releaseShared}.
     */
    public void granted(final String client, final long txn, final Table table, final int header, final long ticket,
                        final long turn, final boolean shared) {
        final long object = objectKey(table, header);
        if (tables.get(table.schema().id()) == null) {
            tables.put(table.schema().id(), table);
        }
        final int incarnation = TakeoutLock.incarnation(table.objectMemory(), header);
        if (!released.isEmpty() && released.contains(client)) { // hashing the client's name per grant cost 2 % of the loop
            cancelled.add(new Holder(client, txn, object, incarnation, ticket, turn, shared));
            sharedCancelled += shared ? 1 : 0;
            skipOrPoll(); // queued behind a live holder: skipped once upper reaches it
            return;
        }
        Entry entry = byObject.get(object);
        if (entry == null) {
            entry = new Entry(incarnation);
            byObject.put(object, entry);
        }
        final ArrayDeque<Holder> queue = entry.of(incarnation).holders;
        final long upper = table.objectMemory().getLongVolatile(header + ObjectLayout.UPPER_OFFSET);
        Holder served = null;
        while (!queue.isEmpty() && !queue.peekFirst().outstanding(upper)) {
            served = queue.pollFirst();
        }
        queue.addLast(served == null ? new Holder(client, txn, object, incarnation, ticket, turn, shared)
            : served.set(client, txn, object, incarnation, ticket, turn, shared));
    }

    /**
     * Records the shared {@code ticket} of {@code client} on the object at {@code header} of {@code table} released,
     * if it holds it: then the caller adds 1 to {@code upper} for it.
     *
     * @return false when {@code client} holds no such unreleased shared ticket (released already, cancelled, never
     * granted): nothing changed, and {@code upper} must not move
     */
    public boolean releaseShared(final String client, final Table table, final int header, final long ticket) {
        final Entry entry = byObject.get(objectKey(table, header));
        if (entry == null) {
            return false;
        }
        // Of the incarnation in the slot only: ticket numbers start again at 0 in a reused slot.
        for (final Holder h : entry.of(TakeoutLock.incarnation(table.objectMemory(), header)).holders) {
            if (h.ticket == ticket) {
                // Served only (upper >= turn): a forged early release while a ticket ahead still holds changes
                // nothing (issue 22's second review, finding 7); an honest client releases only a Grant, once served.
                if (!h.shared || h.released || !h.client.equals(client) || upper(h) < h.turn) {
                    return false;
                }
                h.released = true;
                return true;
            }
        }
        return false;
    }

    /**
     * Cancels every ticket {@code client} holds or queues for (it must be fenced first: its unlocks can no longer
     * land), and every ticket it is granted from now on.
     *
     * @return the number of tickets cancelled
     */
    public int cancel(final String client) {
        released.add(client);
        int count = 0;
        for (final Long2ObjectHashMap<Entry>.EntryIterator it = byObject.entrySet().iterator(); it.hasNext(); ) {
            it.next();
            final Entry entry = it.getValue();
            final ArrayDeque<Holder> queue = current(it.getLongKey(), entry).holders;
            for (final Iterator<Holder> h = queue.iterator(); h.hasNext(); ) {
                final Holder holder = h.next();
                if (holder.client.equals(client)) {
                    h.remove();
                    if (holder.outstanding(upper(holder))) {
                        cancelled.add(holder);
                        count++;
                        sharedCancelled += holder.shared ? 1 : 0;
                    }
                }
            }
            if (queue.isEmpty() && entry.run.next < 0) {
                it.remove();
            }
        }
        skipOrPoll();
        return count;
    }

    /**
     * Skips the cancelled tickets {@code upper} has reached, and polls for the others from now on: a one-sided unlock
     * ahead of one wakes nothing here. Whoever cancels them (a recovery's release, or a ticket granted to a node
     * released already) must register the poller, or a ticket cancelled while queued stays held for good.
     */
    private void skipOrPoll() {
        skip();
        if (!cancelled.isEmpty() && bridge == null) {
            bridge = Bridge.current();
            bridge.addPoller(this);
        }
    }

    /** Lets {@code client} hold tickets again (it rejoined under this name). */
    public void readmit(final String client) {
        released.remove(client);
    }

    private AtomicBuffer memory(final long object) {
        return tables.get(object >>> 32).objectMemory();
    }

    private long upper(final Holder holder) {
        return memory(holder.object).getLongVolatile((int) holder.object + ObjectLayout.UPPER_OFFSET);
    }

    /** Serves every cancelled ticket {@code upper} has reached: adds 1 to {@code upper} for it. */
    private int skip() {
        int work = 0;
        boolean progress = true;
        while (progress && !cancelled.isEmpty()) {
            progress = false;
            for (final Iterator<Holder> it = cancelled.iterator(); it.hasNext(); ) {
                final Holder holder = it.next();
                final long upper = upper(holder);
                if (incarnationNow(holder.object) != holder.incarnation) {
                    it.remove(); // the slot was reused: the ticket's lock words are gone with its object
                } else if (!holder.shared && upper > holder.ticket) {
                    it.remove(); // cannot happen for a cancelled ticket unless skipped already; dropped
                } else if (holder.served(upper)) {
                    memory(holder.object).getAndAddLong((int) holder.object + ObjectLayout.UPPER_OFFSET, 1);
                    it.remove();
                    skipped++;
                    sharedSkipped += holder.shared ? 1 : 0;
                    work++;
                    progress = true;
                }
            }
        }
        return work;
    }

    @Override
    public int poll(final long nowNs) {
        return cancelled.isEmpty() ? 0 : skip();
    }

    @Override
    public boolean busy() {
        // A one-sided unlock ahead of a cancelled ticket wakes nothing on this node: poll until it is skipped.
        return !cancelled.isEmpty();
    }

    /** Cancelled tickets not yet reached by {@code upper}. */
    public int waiting() {
        return cancelled.size();
    }

    /** Cancelled tickets skipped so far. */
    public long skipped() {
        return skipped;
    }

    /** Shared tickets cancelled so far (recovery's, and those granted to a node released already). */
    public long sharedCancelled() {
        return sharedCancelled;
    }

    /** Cancelled shared tickets skipped so far: each adds 1 to its object's {@code upper}, once. */
    public long sharedSkipped() {
        return sharedSkipped;
    }

    /** Shared tickets {@code client} holds or queues for, not released. */
    public int sharedHeldBy(final String client) {
        int n = 0;
        for (final Long2ObjectHashMap<Entry>.EntryIterator it = byObject.entrySet().iterator(); it.hasNext(); ) {
            it.next();
            for (final Holder h : current(it.getLongKey(), it.getValue()).holders) {
                n += h.shared && !h.released && h.client.equals(client) ? 1 : 0;
            }
        }
        return n;
    }

    /**
     * The compute node whose ticket {@code upper} of the lock at {@code header} of {@code table} now serves (the
     * holder, or the next to hold it), or {@code null} when this ledger recorded no such ticket (e.g. an insert's).
     */
    public String holderOf(final Table table, final int header) {
        final Entry entry = byObject.get(objectKey(table, header));
        if (entry == null) {
            return null;
        }
        final long upper = table.objectMemory().getLongVolatile(header + ObjectLayout.UPPER_OFFSET);
        for (final Holder h : entry.of(TakeoutLock.incarnation(table.objectMemory(), header)).holders) {
            if (h.outstanding(upper) && h.served(upper)) {
                return h.client;
            }
        }
        return null;
    }

    /** Tickets recorded as held or queued by {@code client} (tests, health). */
    public int heldBy(final String client) {
        return transactionsOf(client).values().stream().mapToInt(List::size).sum();
    }

    /** The tickets {@code client} holds or queues for, by transaction id (ticket order per object). */
    public Map<Long, List<Long>> transactionsOf(final String client) {
        final Map<Long, List<Long>> byTxn = new java.util.TreeMap<>();
        for (final Long2ObjectHashMap<Entry>.EntryIterator it = byObject.entrySet().iterator(); it.hasNext(); ) {
            it.next();
            for (final Holder h : current(it.getLongKey(), it.getValue()).holders) {
                if (h.client.equals(client) && h.outstanding(upper(h))) {
                    byTxn.computeIfAbsent(h.txn, t -> new ArrayList<>()).add(h.ticket);
                }
            }
        }
        return byTxn;
    }
}
