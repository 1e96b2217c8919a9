package io.scythe.storage.mv;

import io.scythe.fabric.MemoryRegion;
import io.scythe.storage.HashIndex;
import io.scythe.storage.Index;
import io.scythe.storage.IndexKind;
import io.scythe.storage.ObjectLayout;
import io.scythe.storage.SkipListIndex;
import io.scythe.storage.VersionLayout;
import io.scythe.storage.VersionLog;
import org.agrona.DirectBuffer;
import org.agrona.MutableDirectBuffer;
import org.agrona.concurrent.AtomicBuffer;

import java.lang.invoke.VarHandle;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.LongPredicate;

import static io.scythe.storage.mv.MvSlotDescriptor.ABORTED;
import static io.scythe.storage.mv.MvSlotDescriptor.COMMITTED;
import static io.scythe.storage.mv.MvSlotDescriptor.EMPTY;
import static io.scythe.storage.mv.MvSlotDescriptor.PENDING;
import static io.scythe.storage.mv.MvSlotDescriptor.head;
import static io.scythe.storage.mv.MvSlotDescriptor.state;
import static io.scythe.storage.mv.MvSlotDescriptor.wts;

/**
 * A multi-version table on a memory node: objects ({@link MvObjectDescriptor}) in registered memory, a LogDB index
 * from keys to object pointers, and a {@link VersionLog} for versions moved out of their inline slots. These are the
 * memory node CPU's operations (the {@link MvService} RPCs, loaders, the reclaimer); compute nodes do the same on the
 * same memory with one-sided verbs ({@link MvRemoteTable}), and the two mix freely.
 *
 * <p>No table-wide lock: an operation that changes which slot holds what takes the object's latch word with a CAS,
 * as a compute node's one-sided install does, and gives up with {@link MvStatus#LATCHED} instead of waiting (so an
 * RPC loop never blocks on a compute node). Reads, commits and rollbacks take no latch. Results are a non-negative
 * value (length, slot, pointer) or an {@link MvStatus} code.
 */
public final class MvTable {
    private final MvSchema schema;
    private final MemoryRegion objects;
    private final MemoryRegion indexRegion;
    private final VersionLog log;
    private final AtomicBuffer memory;
    private final Index index;
    private final int hashBuckets;
    private final int objectBytes;
    private final long capacity;
    private final ThreadLocal<MvObject> views;
    private final ReentrantLock loader = new ReentrantLock();
    /** Objects laid out so far, in slab order; raised before an object's pointer is published. */
    private volatile long created;
    private final AtomicLong evictions = new AtomicLong();
    private final AtomicLong latchedSkips = new AtomicLong();

    MvTable(final MvSchema schema, final MemoryRegion objects, final MemoryRegion indexRegion,
            final MemoryRegion versions, final int hashBuckets) {
        this.schema = schema;
        this.objects = objects;
        this.indexRegion = indexRegion;
        this.log = versions == null ? null : new VersionLog(versions, schema.maxValueBytes());
        this.memory = objects.buffer();
        this.hashBuckets = hashBuckets;
        this.objectBytes = schema.objectBytes();
        MvObjectDescriptor.checkCapacity(objects.length(), schema.inlineSlots(), schema.maxValueBytes());
        this.capacity = objects.length() / objectBytes;
        this.index = schema.table().index() == IndexKind.HASH
            ? new HashIndex(indexRegion.buffer(), hashBuckets)
            : new SkipListIndex(indexRegion.buffer(), schema.id());
        this.views = ThreadLocal.withInitial(() -> new MvObject(schema.inlineSlots(), schema.maxValueBytes()));
    }

    public MvSchema schema() {
        return schema;
    }

    public MvTableDescriptor describe() {
        return new MvTableDescriptor(schema, objects.describe(), indexRegion.describe(),
            log == null ? null : log.region().describe(), hashBuckets);
    }

    /**
     * Creates {@code key} with one committed version, {@code value} at {@code wts} (bulk load: use
     * {@link ObjectLayout#LOADED_VERSION}, below every timestamp). Off the event loop when loading many.
     *
     * @return the object pointer, or {@link MvStatus#DUPLICATE}, {@link MvStatus#FULL}, {@link MvStatus#BAD_LENGTH}
     */
    public long load(final long key, final DirectBuffer value, final int offset, final int length, final long wts) {
        if (!schema.lengthOk(length)) {
            return MvStatus.BAD_LENGTH;
        }
        final long committed = head(COMMITTED, wts);
        loader.lock();
        try {
            if (index.lookup(key) != 0) {
                return MvStatus.DUPLICATE;
            }
            if (created == capacity) {
                return MvStatus.FULL;
            }
            final int at = (int) (created * objectBytes);
            memory.setMemory(at, objectBytes, (byte) 0);
            memory.putLong(at + MvObjectDescriptor.KEY_OFFSET, key);
            final MvObject view = view(at);
            view.fillSlot(0, 0, value, offset, length, committed);
            memory.putLongRelease(view.headAt(0), committed);
            created = created + 1; // before the pointer is published: offsetOf accepts it from then on
            final long pointer = objects.address() + at;
            if (index.insert(key, pointer) != Index.OK) {
                created = created - 1;
                return MvStatus.FULL;
            }
            return pointer;
        } finally {
            loader.unlock();
        }
    }

    /** The object pointer of {@code key}, or 0. */
    public long lookup(final long key) {
        return index.lookup(key);
    }

    /** The object's offset in the objects region, or -1 if the pointer is not an object of this table. */
    public int offsetOf(final long pointer) {
        final long offset = (pointer & ObjectLayout.ADDRESS_MASK) - objects.address();
        if (offset < 0 || offset >= created * objectBytes || offset % objectBytes != 0) {
            return -1;
        }
        return (int) offset;
    }

    /** A flyweight of the calling thread over the object at {@code at}. */
    private MvObject view(final int at) {
        return views.get().wrap(memory, at);
    }

    // ------------------------------------------------------------------------------------------------ reads

    /**
     * Reads the version visible at {@code ts} into {@code dst}, first raising the object's read timestamp to
     * {@code ts} when {@code raiseRts} (a read that counts; without it, a peek that claims nothing).
     *
     * @return {@code out}, its status the value's length or {@link MvStatus#PENDING}, {@link MvStatus#NOT_VISIBLE},
     *     {@link MvStatus#STALE}
     */
    public MvRead read(final long pointer, final long ts, final boolean raiseRts, final MutableDirectBuffer dst,
                       final int dstOffset, final MvRead out) {
        final int at = offsetOf(pointer);
        if (at < 0) {
            return out.set(MvStatus.STALE, 0, MvRead.OVERFLOW);
        }
        if (raiseRts) {
            raiseRtsAt(at, ts); // before the slots are looked at: an install that misses it is seen below
        }
        final MvObject view = view(at);
        while (true) {
            final int slot = view.find(ts);
            final long head = view.foundHead();
            final long chain = view.chainToSearch();
            final long record = chain == 0 || log == null ? 0 : log.find(chain, ts);
            if (record != 0 && (slot == MvObject.NONE || log.version(record) > wts(head))) {
                final int length = log.valueLength(record);
                dst.putBytes(dstOffset, log.memory(), log.offsetOf(record) + VersionLayout.VALUE_OFFSET, length);
                return out.set(length, log.version(record), MvRead.OVERFLOW);
            }
            if (slot == MvObject.NONE) {
                return out.set(MvStatus.NOT_VISIBLE, 0, MvRead.OVERFLOW);
            }
            if (state(head) == PENDING) {
                return out.set(MvStatus.PENDING, wts(head), slot);
            }
            final int length = view.copyValue(slot, dst, dstOffset);
            VarHandle.acquireFence(); // the copy happens before the tail is checked again
            if (length >= 0 && view.intact(slot, head)) {
                return out.set(length, wts(head), slot);
            }
            // The slot was recycled under the copy: its version moved to the chain or was garbage. Look again.
        }
    }

    /** Raises the read timestamp of the object at {@code pointer} to at least {@code ts}; returns it, or STALE. */
    public long raiseRts(final long pointer, final long ts) {
        final int at = offsetOf(pointer);
        return at < 0 ? MvStatus.STALE : raiseRtsAt(at, ts);
    }

    private long raiseRtsAt(final int at, final long ts) {
        while (true) {
            final long current = memory.getLongVolatile(at + MvObjectDescriptor.RTS_OFFSET);
            if (current >= ts || memory.compareAndSetLong(at + MvObjectDescriptor.RTS_OFFSET, current, ts)) {
                return Math.max(current, ts);
            }
        }
    }

    // ------------------------------------------------------------------------------------------------ writes

    /**
     * Installs a pending version at {@code ts} for the transaction {@code owner} (non-zero, not
     * {@link MvObjectDescriptor#MEMORY_NODE_OWNER}), with {@code value}, or with none yet when {@code length} is
     * negative (Aurogon's pre-attached write: its value comes with {@link #commit}). Refused as
     * {@link MvObject#installSlot} says; when no slot is free the oldest committed version is moved to the overflow
     * chain first.
     *
     * @return the slot, to commit or roll back, or {@link MvStatus#TOO_LATE}, {@link MvStatus#SUPERSEDED},
     *     {@link MvStatus#DUPLICATE}, {@link MvStatus#PENDING_EXISTS}, {@link MvStatus#FULL},
     *     {@link MvStatus#VERSION_SPACE_FULL}, {@link MvStatus#LATCHED}, {@link MvStatus#STALE},
     *     {@link MvStatus#BAD_LENGTH}
     */
    public int install(final long pointer, final long ts, final long owner, final DirectBuffer value,
                       final int offset, final int length, final boolean exclusive) {
        checkOwner(owner);
        if (length >= 0 && !schema.lengthOk(length)) {
            return MvStatus.BAD_LENGTH;
        }
        final long pending = head(PENDING, ts); // checks ts
        final int at = offsetOf(pointer);
        if (at < 0) {
            return MvStatus.STALE;
        }
        if (!latch(at, owner)) {
            return MvStatus.LATCHED;
        }
        try {
            final MvObject view = view(at);
            int slot = view.installSlot(ts, exclusive);
            if (slot == MvStatus.FULL) {
                final int moved = evict(view);
                slot = moved < 0 ? moved : view.installSlot(ts, exclusive);
            }
            if (slot < 0) {
                return slot;
            }
            view.fillSlot(slot, owner, value, offset, length, length >= 0 ? head(COMMITTED, ts) : 0);
            final int headAt = view.headAt(slot);
            memory.putLongVolatile(headAt, pending);
            // Published first, rts read after (a full fence apart): a reader raising rts to ts or more either did so
            // before this read, and the install withdraws, or reads the slots after it and sees the pending version.
            if (memory.getAndAddLong(at + MvObjectDescriptor.RTS_OFFSET, 0) >= ts) {
                memory.putLongVolatile(headAt, head(ABORTED, ts));
                return MvStatus.TOO_LATE;
            }
            return slot;
        } finally {
            unlatch(at, owner);
        }
    }

    /**
     * Makes the pending version at {@code ts} in {@code slot} visible, with {@code value} (required when it was
     * installed without one; a negative {@code length} keeps the value it was installed with).
     *
     * @return {@link MvStatus#OK}, or {@link MvStatus#NOT_PENDING}, {@link MvStatus#BAD_LENGTH}, {@link MvStatus#STALE}
     */
    public int commit(final long pointer, final int slot, final long ts, final DirectBuffer value, final int offset,
                      final int length) {
        if (length >= 0 && !schema.lengthOk(length)) {
            return MvStatus.BAD_LENGTH;
        }
        final int at = pendingAt(pointer, slot, ts);
        if (at < 0) {
            return at;
        }
        final MvObject view = view(at);
        final long committed = head(COMMITTED, ts);
        if (length >= 0) {
            view.fillSlot(slot, view.owner(slot), value, offset, length, committed);
        } else if (view.tail(slot) != committed) {
            return MvStatus.BAD_LENGTH; // installed without a value: the commit must bring it
        }
        memory.putLongVolatile(view.headAt(slot), committed); // value first
        return MvStatus.OK;
    }

    /**
     * Removes the pending version at {@code ts} in {@code slot}: readers never see it, and the slot is free.
     *
     * @return {@link MvStatus#OK}, or {@link MvStatus#NOT_PENDING}, {@link MvStatus#STALE}
     */
    public int rollback(final long pointer, final int slot, final long ts) {
        final int at = pendingAt(pointer, slot, ts);
        if (at >= 0) {
            memory.putLongVolatile(view(at).headAt(slot), head(ABORTED, ts));
        }
        return Math.min(at, MvStatus.OK);
    }

    /** The offset of the object at {@code pointer} if {@code slot} holds its pending version at {@code ts}. */
    private int pendingAt(final long pointer, final int slot, final long ts) {
        final int at = offsetOf(pointer);
        if (at < 0) {
            return MvStatus.STALE;
        }
        final MvObject view = view(at);
        return slot < 0 || slot >= view.slots() || view.head(slot) != head(PENDING, ts) ? MvStatus.NOT_PENDING : at;
    }

    /**
     * Frees an inline slot of the object, moving its oldest committed version to the overflow chain if need be: what
     * a compute node asks for when its one-sided install found no free slot.
     *
     * @return {@link MvStatus#OK}, or {@link MvStatus#FULL}, {@link MvStatus#VERSION_SPACE_FULL},
     *     {@link MvStatus#LATCHED}, {@link MvStatus#STALE}
     */
    public int makeRoom(final long pointer) {
        final int at = offsetOf(pointer);
        if (at < 0) {
            return MvStatus.STALE;
        }
        if (!latch(at, MvObjectDescriptor.MEMORY_NODE_OWNER)) {
            return MvStatus.LATCHED;
        }
        try {
            final MvObject view = view(at);
            if (view.freeSlot() >= 0) {
                return MvStatus.OK;
            }
            final int moved = evict(view);
            return moved < 0 ? moved : MvStatus.OK;
        } finally {
            unlatch(at, MvObjectDescriptor.MEMORY_NODE_OWNER);
        }
    }

    /**
     * Moves the oldest committed version (never the newest) to the head of the overflow chain and frees its slot.
     * The caller holds the latch. Order: the record is whole, then linked ({@code overflowWts} before
     * {@code overflow}, so no chain version is ever above {@code overflowWts}), and only then is the slot's tail
     * zeroed and its head emptied: a reader that misses the version in its slot reads the trailer later and finds it.
     *
     * @return the slot freed, or {@link MvStatus#FULL}, {@link MvStatus#VERSION_SPACE_FULL}
     */
    private int evict(final MvObject view) {
        final int slot = view.evictable();
        if (slot < 0) {
            return MvStatus.FULL;
        }
        if (log == null) {
            return MvStatus.VERSION_SPACE_FULL;
        }
        final long moving = view.head(slot);
        final long record = log.append(wts(moving), view.overflow(), 0, memory, view.valueOffset(slot),
            view.valueLength(slot));
        if (record == 0) {
            return MvStatus.VERSION_SPACE_FULL;
        }
        memory.putLongVolatile(view.overflowWtsAt(), wts(moving));
        memory.putLongVolatile(view.overflowAt(), record);
        emptySlot(view, slot);
        evictions.incrementAndGet();
        return slot;
    }

    /** Recycles a committed slot: tail zeroed before anything else, so a reader copying it sees the tear. */
    private void emptySlot(final MvObject view, final int slot) {
        memory.putLongVolatile(view.tailAt(slot), 0);
        memory.putLongVolatile(view.headAt(slot), head(EMPTY, 0));
    }

    private boolean latch(final int at, final long owner) {
        // One CAS: on an emulated NIC the very instruction the NIC runs for compute nodes; on a real NIC it must be
        // posted as a loopback atomic (a CPU atomic is not atomic against the NIC's on the same word).
        return memory.compareAndSetLong(at + MvObjectDescriptor.LATCH_OFFSET, 0, owner);
    }

    private void unlatch(final int at, final long owner) {
        memory.compareAndSetLong(at + MvObjectDescriptor.LATCH_OFFSET, owner, 0);
    }

    private static void checkOwner(final long owner) {
        if (owner == 0 || owner == MvObjectDescriptor.MEMORY_NODE_OWNER) {
            throw new IllegalArgumentException("owner=" + owner + " is reserved (0 free, -1 the memory node)");
        }
    }

    // ------------------------------------------------------------------------------------------------ reclamation

    /**
     * Frees what no read at {@code horizon} or later can see, in every object: committed versions older than the
     * newest one committed at or below the horizon, inline or in the chain; then, where an object has no free slot,
     * moves its oldest committed version to the chain so that the next install needs no RPC. An object whose latch
     * is held is passed over until the next call. Safe while compute nodes read and install (package
     * documentation), provided no read uses a timestamp below {@code horizon} (the {@code HorizonBoard} contract).
     * Off the event loop: it walks every object.
     *
     * @return inline versions and chain records freed
     */
    public long reclaim(final long horizon) {
        long freed = 0;
        final long objectsNow = created;
        for (long i = 0; i < objectsNow; i++) {
            freed += reclaimObject((int) (i * objectBytes), horizon);
        }
        return freed;
    }

    private long reclaimObject(final int at, final long horizon) {
        if (!latch(at, MvObjectDescriptor.MEMORY_NODE_OWNER)) {
            latchedSkips.incrementAndGet();
            return 0;
        }
        try {
            final MvObject view = view(at);
            long freed = 0;
            final int visible = view.newestCommittedAtOrBelow(horizon);
            final long chain = view.overflow();
            if (visible >= 0) {
                final long visibleWts = wts(view.head(visible));
                for (int slot = 0; slot < view.slots(); slot++) {
                    final long head = view.head(slot);
                    if (state(head) == COMMITTED && wts(head) < visibleWts) {
                        emptySlot(view, slot);
                        freed++;
                    }
                }
                if (chain != 0) { // the chain is older than every slot: all of it is below the visible version
                    memory.putLongVolatile(view.overflowAt(), 0);
                    freed += log.free(chain);
                }
            } else if (chain != 0) {
                final long record = log.find(chain, horizon);
                if (record != 0) {
                    freed += log.truncateAfter(record);
                }
            }
            if (view.freeSlot() < 0) {
                evict(view);
            }
            return freed;
        } finally {
            unlatch(at, MvObjectDescriptor.MEMORY_NODE_OWNER);
        }
    }

    /**
     * Cleans up after dead transactions (recovery, once their compute node is fenced and its verbs can no longer
     * land): rolls back every pending version whose owner {@code dead} accepts and frees every latch such an owner
     * holds.
     *
     * @return pending versions rolled back plus latches freed
     */
    public long abandon(final LongPredicate dead) {
        long cleaned = 0;
        final long objectsNow = created;
        for (long i = 0; i < objectsNow; i++) {
            final int at = (int) (i * objectBytes);
            final MvObject view = view(at);
            for (int slot = 0; slot < view.slots(); slot++) {
                final long head = view.head(slot);
                if (state(head) == PENDING && dead.test(view.owner(slot))) {
                    memory.putLongVolatile(view.headAt(slot),
                        head(ABORTED, wts(head)));
                    cleaned++;
                }
            }
            final long holder = view.latch();
            if (holder != 0 && holder != MvObjectDescriptor.MEMORY_NODE_OWNER && dead.test(holder)
                && memory.compareAndSetLong(at + MvObjectDescriptor.LATCH_OFFSET, holder, 0)) {
                cleaned++;
            }
        }
        return cleaned;
    }

    // ------------------------------------------------------------------------------------------------ probes

    /** Latches held right now (0 when quiescent: an end-of-run check). */
    public long latchesHeld() {
        long held = 0;
        for (long i = 0; i < created; i++) {
            held += view((int) (i * objectBytes)).latch() != 0 ? 1 : 0;
        }
        return held;
    }

    /** Versions pending right now (0 when every transaction is decided: an end-of-run check). */
    public long pendingVersions() {
        long pending = 0;
        for (long i = 0; i < created; i++) {
            pending += view((int) (i * objectBytes)).pendingCount();
        }
        return pending;
    }

    /** Overflow records in use. */
    public long versionsInUse() {
        return log == null ? 0 : log.used();
    }

    /** Versions moved from their slots to the overflow chain so far. */
    public long evictions() {
        return evictions.get();
    }

    /** Objects reclamation passed over because their latch was held. */
    public long latchedSkips() {
        return latchedSkips.get();
    }

    /** Objects loaded. */
    public long size() {
        return created;
    }

    /** The objects' memory, for inspection (tests, probes) with an {@link MvObject}. */
    public AtomicBuffer objectMemory() {
        return memory;
    }

    /** The version log of the overflow chains, or {@code null} when the table keeps none. */
    public VersionLog versionLog() {
        return log;
    }
}
