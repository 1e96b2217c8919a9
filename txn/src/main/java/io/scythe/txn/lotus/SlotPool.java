package io.scythe.txn.lotus;

import io.scythe.txn.Catalog;
import io.scythe.txn.TxnRuntime;
import io.scythe.txn.recovery.RecoveryRpc;
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
 * dead incarnation's that no index names are, by its recovery ({@link #reclaim}; on cluster nodes by every survivor
 * once the host names the incarnation's id prefix, {@link #ofIdPrefix}), and a deleted
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
     * Whether this pool's holder id is its incarnation's transaction id prefix ({@link #ofIdPrefix}: a cluster node in
     * a process of its own), learnt from the first transaction that takes a slot, rather than a number of this process.
     */
    private final boolean byIdPrefix;
    /**
     * This pool's id on the memory nodes ({@code Table#grantSlots(int, long)}): each GRANT names it, so that the
     * recovery of this node's incarnation, once it is dead, gives back its slots no index names ({@link #reclaim}).
     * In process (the simulator's, and the embedded cluster's, compute nodes): a number unique within the process,
     * which the survivors read from the dead node's pool. A cluster node in a process of its own ({@link #ofIdPrefix},
     * helper lotus20, TODO lotusins-return closed): {@link #holderOfPrefix} of its incarnation's transaction id
     * prefix, which the survivors are told by the host once the incarnation is recovered ({@code
     * LotusNode#peerRecovered}); 0 until its first GRANT. Guarded by this.
     */
    private long holder;
    private long granted;
    private long grants;
    private long leaked;
    private long returned;

    /** A pool whose holder id is a number of this process (compute nodes of one process: simulator, embedded). */
    SlotPool() {
        this(false);
    }

    private SlotPool(final boolean byIdPrefix) {
        this.byIdPrefix = byIdPrefix;
        this.holder = byIdPrefix ? 0 : HOLDERS.incrementAndGet();
    }

    /**
     * A pool of a cluster node in a process of its own: its holder id is {@link #holderOfPrefix} of its incarnation's
     * transaction id prefix (the id's bits {@link RecoveryRpc#NODE_ID_MASK}: epoch and node slot), which the host names
     * to every survivor once that incarnation is recovered: the survivors know no number of another process.
     */
    static SlotPool ofIdPrefix() {
        return new SlotPool(true);
    }

    /**
     * The holder id of the incarnation whose transaction ids carry {@code prefix} ({@link RecoveryRpc#NODE_ID_MASK}
     * bits): the prefix with its low bit set (a prefix's low 32 bits are 0), so that it is never 0 ("no holder", not
     * tracked by the memory node) even for epoch 0 of slot 0.
     */
    static long holderOfPrefix(final long prefix) {
        return (prefix & RecoveryRpc.NODE_ID_MASK) | 1;
    }

    /** The pool's name for {@code partition}'s primary copy: its memory node and table. */
    static String poolOf(final Catalog.Partition partition) {
        return partition.node() + "/" + partition.descriptor().schema().id();
    }

    /**
     * A slot of {@code partition}'s primary for the insert of transaction {@code txnId} of this node: from the pool,
     * else from a new GRANT.
     */
    Future<Long> take(final TxnRuntime runtime, final Catalog.Partition partition, final long txnId) {
        final String pool = poolOf(partition);
        final long grantee;
        synchronized (this) {
            final ArrayDeque<Long> slots = free.get(pool);
            if (slots != null && !slots.isEmpty()) {
                final long pointer = slots.poll();
                pooled.remove(pointer);
                return Future.succeededFuture(pointer);
            }
            if (byIdPrefix && holder == 0) {
                holder = holderOfPrefix(txnId);
            }
            grantee = holder;
        }
        return runtime.remote(partition).grantSlots(chunkOf(partition), grantee).map(pointers -> {
            synchronized (this) {
                grants++;
                granted += pointers.length;
                final ArrayDeque<Long> slots = free.computeIfAbsent(pool, k -> new ArrayDeque<>());
                for (int i = 1; i < pointers.length; i++) {
                    if (pooled.add(pointers[i])) {
                        slots.add(pointers[i]);
                    } else {
                        doubleGiveBacks++; // a GRANT naming a slot still pooled here: the memory node's bug
                    }
                }
            }
            return pointers[0];
        });
    }

    /**
     * Gives back a slot no WRITE was posted to. A slot already in the pool is not added again (counted in
     * {@link #doubleGiveBacks}): two inserts would take it, and two keys share one object (the stop-56 review's
     * leftover; no path gives one back twice today, but the pool's safety does not rest on that).
     */
    synchronized void giveBack(final String pool, final long pointer) {
        if (!pooled.add(pointer)) {
            doubleGiveBacks++;
            return;
        }
        free.computeIfAbsent(pool, k -> new ArrayDeque<>()).add(pointer);
    }

    /** Every slot in {@link #free}, of every pool (pointers are unique across memory nodes' tables: their address). */
    private final java.util.Set<Long> pooled = new java.util.HashSet<>();
    /** Give-backs of a slot already in the pool, refused ({@link #giveBack}). */
    private long doubleGiveBacks;
    /** Aborted attempts' written slots whose index slot was posted: the key's object, a tombstone (not leaked). */
    private long tombstones;

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

    /**
     * An aborted attempt's slot it posted WRITEs to: back to the pool if {@code reusable}; else, {@code inIndex} (its
     * index slot was posted), the key's object, a tombstone, counted in {@link #tombstones} (the stop-56 review: it was
     * counted leaked, which it is not: a later insert of the key revives it); else counted leaked.
     */
    synchronized void settleWritten(final String pool, final long pointer, final boolean reusable,
                                    final boolean inIndex) {
        if (reusable) {
            giveBack(pool, pointer);
            returned++;
        } else if (inIndex) {
            tombstones++;
        } else {
            leaked++;
        }
    }

    /** Slots in pool {@code pool} ({@link #poolOf}) now. */
    synchronized int free(final String pool) {
        final ArrayDeque<Long> slots = free.get(pool);
        return slots == null ? 0 : slots.size();
    }

    synchronized long tombstones() {
        return tombstones;
    }

    synchronized long doubleGiveBacks() {
        return doubleGiveBacks;
    }

    /** This pool's holder id ({@link #holder}): 0 for a pool {@link #ofIdPrefix} that asked for no GRANT yet. */
    synchronized long holder() {
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
