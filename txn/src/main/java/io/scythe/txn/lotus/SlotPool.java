package io.scythe.txn.lotus;

import io.scythe.txn.Catalog;
import io.scythe.txn.TxnRuntime;
import io.vertx.core.Future;

import java.util.ArrayDeque;
import java.util.HashMap;
import java.util.Map;

/**
 * A compute node's object slots for its one-sided inserts (lotus.md §2.1, helper lotusins), per memory node and table:
 * granted up to {@value #CHUNK} at a time ({@link #chunkOf}) by one GRANT RPC ({@code Table#grantSlots}: placeholders outside the index), taken
 * by an insert when it picks its index slot, and given back only by an attempt that aborts before it posted any WRITE
 * to the slot (a WRITE of it in doubt could land on the slot's next insert). A slot whose commit wrote it, or whose
 * WRITEs were posted by an attempt that then aborted, is not reused: in the index it is the key's object (a tombstone
 * when aborted: its home stays the placeholder, deleted), out of it it is leaked, counted in {@link #leaked}. A node's
 * slots are never given back to the memory node (a dead node's unused ones leak: TODO lotusins-return), and a deleted
 * object is never reclaimed into a pool (Lotus's deletes are one-sided tombstones, which the memory node keeps, and
 * which a later insert of the key revives by INSERT RPC). Shared by the node's loops (synchronized).
 */
final class SlotPool {
    /**
     * Slots one GRANT asks for at most ({@code LogDbRpc#GRANT_MAX} at most); {@link #chunkOf} asks for fewer in a
     * small table, so that slots idle in other nodes' pools leave the rest for the nodes that insert.
     */
    static final int CHUNK = 32;

    /** What one GRANT asks for in {@code partition}'s table: a 64th of its capacity, 1 to {@link #CHUNK}. */
    static int chunkOf(final Catalog.Partition partition) {
        return (int) Math.max(1, Math.min(CHUNK, partition.descriptor().schema().capacity() / 64));
    }

    private final Map<String, ArrayDeque<Long>> free = new HashMap<>();
    private long granted;
    private long grants;
    private long leaked;

    /** The pool's name for {@code partition}'s primary copy: its memory node and table. */
    static String poolOf(final Catalog.Partition partition) {
        return partition.node() + "/" + partition.descriptor().schema().id();
    }

    /** A slot of {@code partition}'s primary for this node's insert: from the pool, else from a new GRANT. */
    Future<Long> take(final TxnRuntime runtime, final Catalog.Partition partition) {
        final String pool = poolOf(partition);
        synchronized (this) {
            final ArrayDeque<Long> slots = free.get(pool);
            if (slots != null && !slots.isEmpty()) {
                return Future.succeededFuture(slots.poll());
            }
        }
        return runtime.remote(partition).grantSlots(chunkOf(partition)).map(pointers -> {
            synchronized (this) {
                grants++;
                granted += pointers.length;
                final ArrayDeque<Long> slots = free.computeIfAbsent(pool, k -> new ArrayDeque<>());
                for (int i = 1; i < pointers.length; i++) {
                    slots.add(pointers[i]);
                }
            }
            return pointers[0];
        });
    }

    /** Gives back a slot no WRITE was posted to. */
    synchronized void giveBack(final String pool, final long pointer) {
        free.computeIfAbsent(pool, k -> new ArrayDeque<>()).add(pointer);
    }

    /** Counts a slot that is neither in the index nor reusable (its aborted attempt posted WRITEs to it). */
    synchronized void leak() {
        leaked++;
    }

    synchronized long granted() {
        return granted;
    }

    synchronized long grants() {
        return grants;
    }

    synchronized long leaked() {
        return leaked;
    }
}
