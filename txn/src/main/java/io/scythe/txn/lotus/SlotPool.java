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
 * by an insert when it picks its index slot, and given back by an attempt that aborts before it posted any WRITE
 * to the slot, or (helper lotusret, TODO lotusins-return) by one that aborts after, once {@link #reusable}: every
 * WRITE it posted to the slot's memory node completed (a WRITE in doubt could land on the slot's next insert), no
 * index slot names it (its index WRITEs, after T_commit, were never posted) and its redo record, which names the
 * slot, was withdrawn (counted in {@link #returned}). A slot whose commit wrote it, or whose aborted attempt left it
 * otherwise, is not reused: in the index it is the key's object (a tombstone when aborted: its home stays the
 * placeholder, deleted), out of it it is leaked, counted in {@link #leaked}. Before, every slot an aborted attempt
 * had written leaked: a 1-object table's one slot so (explorer phantom {@code --crash-mn 1 --replicas 2 --mns 3}
 * seed 16: "no object slot granted on mn0 (FULL)"). A live node's slots are never given back to the memory node; a
 * dead incarnation's that no index names are, by its recovery ({@link #reclaim}; in process only: TODO
 * lotusins-return, the host's recovery), and a deleted
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

    /** Holder ids handed out in this process ({@link #SlotPool()}). */
    private static final java.util.concurrent.atomic.AtomicLong HOLDERS = new java.util.concurrent.atomic.AtomicLong();

    private final Map<String, ArrayDeque<Long>> free = new HashMap<>();
    /**
     * This pool's id on the memory nodes ({@code Table#grantSlots(int, long)}): each GRANT names it, so that the
     * recovery of this node's incarnation, once it is dead, gives back its slots no index names ({@link #reclaim}).
     * Unique within the process (the simulator's, and the embedded cluster's, compute nodes; a node in a process of its
     * own is never reclaimed for yet: TODO lotusins-return, the host's recovery).
     */
    private final long holder = HOLDERS.incrementAndGet();
    private long granted;
    private long grants;
    private long leaked;
    private long returned;

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
        return runtime.remote(partition).grantSlots(chunkOf(partition), holder).map(pointers -> {
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

    /**
     * Whether a slot an aborted attempt posted WRITEs to may go back to the pool: its redo record (which names the
     * slot as an inserted entry) was {@code withdrawn}, no index slot may name it ({@code indexPosted} false: the
     * index WRITEs, after T_commit, were never posted), and every batch the attempt posted to the slot's memory node
     * ({@code writesToItsNode}, {@code null} for none) completed without error: a batch pending or failed may land
     * after the slot's next insert wrote it.
     */
    static boolean reusable(final boolean withdrawn, final boolean indexPosted,
                            final java.util.Collection<? extends Future<?>> writesToItsNode) {
        if (!withdrawn || indexPosted) {
            return false;
        }
        if (writesToItsNode != null) {
            for (final Future<?> w : writesToItsNode) {
                if (!w.succeeded()) {
                    return false;
                }
            }
        }
        return true;
    }

    /** An aborted attempt's slot it posted WRITEs to: back to the pool if {@code reusable}, else counted leaked. */
    synchronized void settleWritten(final String pool, final long pointer, final boolean reusable) {
        if (reusable) {
            giveBack(pool, pointer);
            returned++;
        } else {
            leaked++;
        }
    }

    long holder() {
        return holder;
    }

    /**
     * Recovery of the dead incarnation whose pool this was, once its redo records are settled: every slot it was
     * granted on each table's primary that no index entry names goes back to the memory node ({@code RECLAIM},
     * {@code Table#reclaimGranted}): its pool's unused ones and those of its attempts that never reached the index.
     * How many, in all. Asked of every partition's primary of every hash-indexed table, through {@code runtime}.
     */
    static Future<Long> reclaim(final TxnRuntime runtime, final long holder) {
        final java.util.List<Future<Long>> asked = new java.util.ArrayList<>();
        final java.util.Set<String> seen = new java.util.HashSet<>();
        for (final Catalog.Table table : runtime.catalog().tables()) {
            for (final Catalog.Partition partition : table.partitions()) {
                if (partition.descriptor().hashBuckets() > 0 && seen.add(poolOf(partition))) {
                    asked.add(runtime.remote(partition).reclaimGranted(holder));
                }
            }
        }
        return Future.all(asked).map(all -> {
            long freed = 0;
            for (final Future<Long> f : asked) {
                freed += f.result();
            }
            return freed;
        });
    }

    synchronized long returned() {
        return returned;
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
