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
public final class TicketLedger implements Bridge.Poller {
    /** Tickets not yet known to be served, by object (keyed without boxing: one lookup per grant). */
    private final Long2ObjectHashMap<ArrayDeque<Holder>> byObject = new Long2ObjectHashMap<>();
    /** The tables by schema id (no boxing: looked up per grant). */
    private final Long2ObjectHashMap<Table> tables = new Long2ObjectHashMap<>();
    private final List<Holder> cancelled = new ArrayList<>();
    /** Compute nodes released by recovery: a ticket they still get (a request already on its way) is cancelled. */
    private final Set<String> released = new HashSet<>();
    private Bridge bridge;
    private long skipped;

    /** A ticket and who got it; a served one's holder is reused for the object's next grant. */
    private static final class Holder {
        String client;
        long txn;
        long object;
        long ticket;
        /** A shared ticket's turn ({@code ticket} for an exclusive one). */
        long turn;
        boolean shared;
        /** A shared ticket released through this node ({@link #releaseShared}). */
        boolean released;

        Holder(final String client, final long txn, final long object, final long ticket, final long turn,
               final boolean shared) {
            set(client, txn, object, ticket, turn, shared);
        }

        Holder set(final String client, final long txn, final long object, final long ticket, final long turn,
                   final boolean shared) {
            this.client = client;
            this.txn = txn;
            this.object = object;
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

    private static long objectKey(final Table table, final int header) {
        return ((long) table.schema().id() << 32) | (header & 0xffffffffL);
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
        if (!released.isEmpty() && released.contains(client)) { // hashing the client's name per grant cost 2 % of the loop
            cancelled.add(new Holder(client, txn, object, ticket, turn, shared));
            skipOrPoll(); // queued behind a live holder: skipped once upper reaches it
            return;
        }
        ArrayDeque<Holder> queue = byObject.get(object);
        if (queue == null) {
            queue = new ArrayDeque<>(2);
            byObject.put(object, queue);
        }
        final long upper = table.objectMemory().getLongVolatile(header + ObjectLayout.UPPER_OFFSET);
        Holder served = null;
        while (!queue.isEmpty() && !queue.peekFirst().outstanding(upper)) {
            served = queue.pollFirst();
        }
        queue.addLast(served == null ? new Holder(client, txn, object, ticket, turn, shared) : served.set(client, txn,
            object, ticket, turn, shared));
    }

    /**
     * Records the shared {@code ticket} of {@code client} on the object at {@code header} of {@code table} released,
     * if it holds it: then the caller adds 1 to {@code upper} for it.
     *
     * @return false when {@code client} holds no such unreleased shared ticket (released already, cancelled, never
     * granted): nothing changed, and {@code upper} must not move
     */
    public boolean releaseShared(final String client, final Table table, final int header, final long ticket) {
        final ArrayDeque<Holder> queue = byObject.get(objectKey(table, header));
        if (queue == null) {
            return false;
        }
        for (final Holder h : queue) {
            if (h.ticket == ticket) {
                if (!h.shared || h.released || !h.client.equals(client)) {
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
        for (final Iterator<ArrayDeque<Holder>> it = byObject.values().iterator(); it.hasNext(); ) {
            final ArrayDeque<Holder> queue = it.next();
            for (final Iterator<Holder> h = queue.iterator(); h.hasNext(); ) {
                final Holder holder = h.next();
                if (holder.client.equals(client)) {
                    h.remove();
                    if (holder.outstanding(upper(holder))) {
                        cancelled.add(holder);
                        count++;
                    }
                }
            }
            if (queue.isEmpty()) {
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
                if (!holder.shared && upper > holder.ticket) {
                    it.remove(); // cannot happen for a cancelled ticket unless skipped already; dropped
                } else if (holder.served(upper)) {
                    memory(holder.object).getAndAddLong((int) holder.object + ObjectLayout.UPPER_OFFSET, 1);
                    it.remove();
                    skipped++;
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

    /**
     * The compute node whose ticket {@code upper} of the lock at {@code header} of {@code table} now serves (the
     * holder, or the next to hold it), or {@code null} when this ledger recorded no such ticket (e.g. an insert's).
     */
    public String holderOf(final Table table, final int header) {
        final ArrayDeque<Holder> queue = byObject.get(objectKey(table, header));
        if (queue == null) {
            return null;
        }
        final long upper = table.objectMemory().getLongVolatile(header + ObjectLayout.UPPER_OFFSET);
        for (final Holder h : queue) {
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
        for (final ArrayDeque<Holder> queue : byObject.values()) {
            for (final Holder h : queue) {
                if (h.client.equals(client) && h.outstanding(upper(h))) {
                    byTxn.computeIfAbsent(h.txn, t -> new ArrayList<>()).add(h.ticket);
                }
            }
        }
        return byTxn;
    }
}
