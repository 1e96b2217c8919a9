package io.scythe.storage;

import io.scythe.fabric.MemoryRegion;
import org.agrona.DirectBuffer;
import org.agrona.MutableDirectBuffer;
import org.agrona.collections.Long2LongHashMap;
import org.agrona.collections.LongHashSet;
import org.agrona.concurrent.AtomicBuffer;

import java.lang.invoke.VarHandle;
import java.util.concurrent.locks.ReentrantLock;

import static io.scythe.storage.ObjectLayout.FLAGS_OFFSET;
import static io.scythe.storage.ObjectLayout.FLAG_DELETED;
import static io.scythe.storage.ObjectLayout.INCARNATION_OFFSET;
import static io.scythe.storage.ObjectLayout.OLDER_OFFSET;
import static io.scythe.storage.ObjectLayout.VALUE_LENGTH_OFFSET;
import static io.scythe.storage.ObjectLayout.VALUE_OFFSET;
import static io.scythe.storage.ObjectLayout.VERSION_OFFSET;

/**
 * A table on a memory node: objects ({@link ObjectLayout}) in a slab of registered memory, an index from keys to
 * object pointers, and a version log of older values ({@link VersionLayout}), reclaimed once no transaction can read
 * them. These are the memory node CPU's operations (RPC handlers, loaders, the evictor); compute nodes reach the same
 * memory with one-sided verbs through the table's {@link #describe() descriptor}.
 *
 * <p>Writers (insert, update, delete, reclaim) are serialised by the table's lock; lookups and reads are lock-free.
 * Results are object pointers ({@link ObjectLayout#pointer}) or a negative status.
 */
public final class Table {
    public static final int OK = 0;
    /** Insert of a key that is present. */
    public static final int DUPLICATE = -1;
    /** No room for another object (or index entry). */
    public static final int FULL = -2;
    /** A value longer than the table's maximum, or of the wrong size for a fixed-size table. */
    public static final int BAD_LENGTH = -3;
    /** No room in the version log for the value being replaced (reclamation is behind). */
    public static final int VERSION_SPACE_FULL = -4;
    /** The pointer's slot was freed or reused for another key. */
    public static final int STALE = -5;
    /** No such key. */
    public static final int NOT_FOUND = -6;
    /** No version of the object is visible at the timestamp asked (or it was deleted by then). */
    public static final int NOT_VISIBLE = -7;
    /** Insert over a deleted object whose lock is held or queued on by another transaction. */
    public static final int LOCKED = -8;

    /**
     * How {@link #insertLocked} locks the new object: FORD/FaRM's CAS lock word, a held Takeout Lock ticket, or not at
     * all ({@code NONE}: a protocol whose locks are not in the object, CALVIN's, whose owner of the key creates it
     * under its own lock manager's lock).
     */
    public enum InsertLock { CAS_WORD, TICKET, NONE }

    private final TableSchema schema;
    private final MemoryRegion objects;
    private final MemoryRegion indexRegion;
    private final MemoryRegion versions;
    private final AtomicBuffer objectMemory;
    private final AtomicBuffer versionMemory;
    private final Slab objectSlab;
    private final Slab versionSlab;
    private final Index index;
    private final int hashBuckets;
    private final ReentrantLock writer = new ReentrantLock();
    /** Objects whose version chains reclamation must look at, by offset in the object slab. */
    private final LongHashSet withHistory = new LongHashSet();
    /** Keys of objects whose newest version is a delete, by offset (the header has no room for the key). */
    private final Long2LongHashMap deletedKeys = new Long2LongHashMap(-1);
    /** The index region's memory: the index, then its trailer ({@link IndexRegionLayout}). */
    private final AtomicBuffer indexMemory;
    /**
     * Where, in the index region, the largest version of any object reclaimed so far is (0: none): the absent bound
     * ({@link IndexRegionLayout}). Every version a reclaimed object ever had is at most this, so a key created again
     * starts above it ({@link #insertLocked}: its versions keep growing across incarnations), and a key missing from
     * the index was last at a version at most this ({@link #absentBound}). It lives in registered memory, not in a
     * field, so that a compute node's one-sided lookup can READ it beside the index.
     *
     * <p>Ordering: {@link #removeObject} raises it (a release store) before it removes the key from the index (a
     * release store of the index entry), so the raise is visible before the removal. A reader that misses the key
     * reads the bound afterwards: the memory node's LOOKUP handler right after its lookup, a one-sided reader with a
     * READ posted after the READ of the index (in the same doorbell for the hash index: requests of one queue pair
     * execute in order; on hardware whose PCIe reads may pass one another the bound's READ needs the fence flag).
     * Whoever misses the key therefore sees a bound at or above every version it had.
     */
    private final int absentBoundOffset;
    /** INSERTs served ({@link #insertLocked}) and object slots granted ({@link #grantSlots}): counters for checks. */
    private long lockedInserts;
    private long slotsGranted;
    /**
     * Slots {@link #grantSlots(int, long)} handed to each holder (a compute node's incarnation, non-zero), by offset,
     * until {@link #reclaimGranted} settles them: what a dead holder's recovery gives back.
     */
    private final java.util.Map<Long, LongHashSet> grantedTo = new java.util.HashMap<>();
    /** Slots {@link #reclaimGranted} freed (a dead holder's, outside the index): a counter for checks. */
    private long slotsReclaimed;

    Table(final TableSchema schema, final MemoryRegion objects, final MemoryRegion indexRegion,
          final MemoryRegion versions, final int hashBuckets, final long seed) {
        this(schema, objects, indexRegion, versions, hashBuckets, seed, ObjectLayout.slotBytes(schema.maxValueBytes()));
    }

    /** With object slots of {@code slotBytes} (at least header and largest value: {@link LogDb#objectRoom}). */
    Table(final TableSchema schema, final MemoryRegion objects, final MemoryRegion indexRegion,
          final MemoryRegion versions, final int hashBuckets, final long seed, final int slotBytes) {
        this.schema = schema;
        this.objects = objects;
        this.indexRegion = indexRegion;
        this.versions = versions;
        this.objectMemory = objects.buffer();
        this.versionMemory = versions == null ? null : versions.buffer();
        if (slotBytes < ObjectLayout.slotBytes(schema.maxValueBytes()) || slotBytes % 8 != 0) {
            throw new IllegalArgumentException("table " + schema.name() + ": object slots of " + slotBytes
                + " bytes do not hold its header and values");
        }
        this.objectSlab = new Slab(objects, slotBytes);
        this.versionSlab = versions == null ? null : new Slab(versions, VersionLayout.slotBytes(schema.maxValueBytes()));
        this.hashBuckets = hashBuckets;
        this.indexMemory = indexRegion.buffer();
        this.absentBoundOffset = (int) IndexRegionLayout.absentBoundOffset(indexRegion.length());
        // The index gets the region without its trailer: the skip list allocates nodes up to its buffer's end.
        final AtomicBuffer indexOnly = new org.agrona.concurrent.UnsafeBuffer(indexMemory, 0,
            (int) IndexRegionLayout.trailerOffset(indexRegion.length()));
        this.index = schema.index() == IndexKind.HASH
            ? new HashIndex(indexOnly, hashBuckets)
            : new SkipListIndex(indexOnly, seed);
    }

    public TableSchema schema() {
        return schema;
    }

    public TableDescriptor describe() {
        return new TableDescriptor(schema, objects.describe(), indexRegion.describe(),
            versions == null ? null : versions.describe(), hashBuckets);
    }

    /** The object pointer of {@code key} (even when its newest version is a delete), or 0. */
    public long lookup(final long key) {
        return index.lookup(key);
    }

    private volatile ObjectFormat format = ObjectFormat.FULL;

    /** The protocol words its objects carry ({@link LogDb#objectFormat}; {@link ObjectFormat#FULL} by default). */
    public ObjectFormat format() {
        return format;
    }

    void format(final ObjectFormat format) {
        this.format = format;
    }

    /** Bytes of one object slot: header, largest value, and the room a protocol asked for ({@link LogDb#objectRoom}). */
    public int objectSlotBytes() {
        return objectSlab.slotBytes();
    }

    /**
     * For a key {@link #lookup} just found missing: a version at or above every version the key ever had, and below
     * every version it will have (0 while no object was reclaimed: a missing key never existed, it has the initial
     * version). A reader of the missing key read the newest committed version at or below it: a delete or the initial
     * state. The word is in the index region's trailer, where one-sided readers READ it
     * ({@link TableDescriptor#absentBoundAddress}); the ordering that makes a miss see it is the field's.
     */
    public long absentBound() {
        return indexMemory.getLongVolatile(absentBoundOffset);
    }

    /**
     * Raises {@link #absentBound} to {@code floor} (by CAS, retried; a higher bound stays): a promoted copy's bound
     * above every read of a missing key its dead primary served (RCC's MVCC and SUNDIAL, whose readers raise it).
     */
    public void raiseAbsentBound(final long floor) {
        long seen = absentBound();
        while (seen < floor && !indexMemory.compareAndSetLong(absentBoundOffset, seen, floor)) {
            seen = absentBound();
        }
    }

    /**
     * Inserts {@code key} with {@code value} committed at {@code version}; a key whose newest version is a delete is
     * revived (the delete stays in its history).
     *
     * @return the object pointer, or {@link #DUPLICATE}, {@link #FULL}, {@link #BAD_LENGTH},
     *     {@link #VERSION_SPACE_FULL}
     */
    public long insert(final long key, final DirectBuffer value, final int offset, final int length,
                       final long version) {
        if (!lengthOk(length)) {
            return BAD_LENGTH;
        }
        writer.lock();
        try {
            final long existing = index.lookup(key);
            if (existing != 0) {
                final int at = revivable(existing);
                if (at < 0) {
                    return DUPLICATE;
                }
                final int status = replace(at, value, offset, length, version, 0);
                if (status == OK) {
                    deletedKeys.remove(at);
                }
                return status == OK ? existing : status;
            }
            return createObject(key, value, offset, length, version, null, 0, 0);
        } finally {
            writer.unlock();
        }
    }

    /**
     * A transaction's insert at commit: creates {@code key} with its value <em>already locked by the inserter</em>
     * (the CAS lock word set to {@code lockWord}, its transaction id, or the next ticket of the Takeout Lock held
     * ({@link #insertTicket}: 0 for a new object, the old {@code upper} for a revived one), with
     * {@code queued_ts = lockWord}, its timestamp), so that until the inserter's write-back releases it, readers
     * that find it abort or queue as on any locked object. A key whose newest version is a delete is revived in place
     * (its version bumped, so readers that saw it deleted fail validation). A key whose object another transaction
     * holds or queues on is {@link #LOCKED}, deleted or not: its existence is not settled until that one is done. The
     * version is the old one plus 1 (for a new slot, {@link #absentBound} plus 1: above every version of an earlier,
     * reclaimed incarnation, and never the loaded version); the inserter installs a larger one at write-back. Undone
     * by {@link #abandonInsert}.
     *
     * @return the object pointer, or {@link #DUPLICATE}, {@link #FULL}, {@link #BAD_LENGTH}, {@link #LOCKED},
     *     {@link #VERSION_SPACE_FULL}
     */
    public long insertLocked(final long key, final DirectBuffer value, final int offset, final int length,
                             final InsertLock lock, final long lockWord) {
        if (!lengthOk(length)) {
            return BAD_LENGTH;
        }
        if (lock == InsertLock.CAS_WORD && lockWord == 0) {
            throw new IllegalArgumentException("CAS lock owner 0 means free");
        }
        writer.lock();
        try {
            lockedInserts++;
            final long existing = index.lookup(key);
            if (existing != 0) {
                final int at = offsetOf(existing);
                // Held or queued on: the key's existence is not settled (an insert not yet committed may be
                // abandoned, a delete may be under way), so "present" would be no verdict: the inserter retries.
                // The protocol word held (RCC's tts and SUNDIAL lock: a writer, e.g. a delete, under way) or the version
                // BUSY (a one-sided commit rewriting the object) count as held too.
                if (at >= 0 && (objectMemory.getLongVolatile(at + ObjectLayout.CAS_LOCK_OFFSET) != 0
                    || objectMemory.getLongVolatile(at + ObjectLayout.PROTOCOL_WORD_OFFSET) != 0
                    || (objectMemory.getLongVolatile(at + VERSION_OFFSET) & ObjectLayout.VERSION_BUSY) != 0
                    || objectMemory.getLongVolatile(at + ObjectLayout.LOWER_OFFSET)
                    != objectMemory.getLongVolatile(at + ObjectLayout.UPPER_OFFSET))) {
                    return LOCKED;
                }
                if (revivable(existing) < 0) {
                    return DUPLICATE;
                }
                takeLock(at, lock, lockWord); // before the value changes: readers see the lock first
                final int status = replace(at, value, offset, length, objectMemory.getLong(at + VERSION_OFFSET) + 1,
                    0);
                if (status != OK) {
                    releaseLock(at, lock);
                    return status;
                }
                deletedKeys.remove(at);
                return existing;
            }
            // Above every version an earlier, reclaimed incarnation of the key had, and never the loaded version: a
            // version nobody committed, which a history can tell from every committed one.
            return createObject(key, value, offset, length, absentBound() + 1, lock, lockWord, 0);
        } finally {
            writer.unlock();
        }
    }

    /**
     * Undoes an {@link #insertLocked} whose transaction did not commit: the object becomes a delete (version bumped,
     * so a reader that saw the uncommitted value fails validation), its lock is released, and reclamation frees it.
     *
     * @return {@link #OK} or {@link #STALE}
     */
    public int abandonInsert(final long key, final long pointer, final InsertLock lock) {
        writer.lock();
        try {
            final int at = offsetOf(pointer);
            if (at < 0 || index.lookup(key) != pointer) {
                return STALE;
            }
            objectMemory.putLongVolatile(at + VERSION_OFFSET,
                objectMemory.getLong(at + VERSION_OFFSET) | ObjectLayout.VERSION_BUSY);
            objectMemory.putInt(at + VALUE_LENGTH_OFFSET, 0);
            objectMemory.putShort(at + FLAGS_OFFSET, (short) FLAG_DELETED);
            objectMemory.putLongRelease(at + VERSION_OFFSET,
                (objectMemory.getLong(at + VERSION_OFFSET) & ~ObjectLayout.VERSION_BUSY) + 1);
            deletedKeys.put(at, key);
            withHistory.add(at);
            releaseLock(at, lock);
            return OK;
        } finally {
            writer.unlock();
        }
    }

    /**
     * On a backup copy ({@link BackupTables}): the object of {@code key}, for the write-backs of the primary's
     * transactions to address one-sided. An existing object is never changed (a write-back may be writing it). A key
     * without one gets a placeholder: deleted, empty, at {@link ObjectLayout#LOADED_VERSION}, unlocked, which reads
     * as absent (so a backup is never ahead of its primary) until the write-back of the insert that asked for it
     * fills it. Backups keep no reclamation bookkeeping (placeholders and tombstones stay), so a pointer handed out
     * stays the key's for good and compute nodes cache it without checks.
     *
     * @return the object pointer, or {@link #FULL}
     */
    public long locateBackupObject(final long key) {
        writer.lock();
        try {
            final long existing = index.lookup(key);
            if (existing != 0) {
                return existing;
            }
            return createObject(key, null, 0, 0, ObjectLayout.LOADED_VERSION, null, 0, FLAG_DELETED);
        } finally {
            writer.unlock();
        }
    }

    /** {@link #insertLocked} calls so far (INSERT RPCs served). */
    public long lockedInserts() {
        writer.lock();
        try {
            return lockedInserts;
        } finally {
            writer.unlock();
        }
    }

    /** Object slots {@link #grantSlots} handed out so far. */
    public long slotsGranted() {
        writer.lock();
        try {
            return slotsGranted;
        } finally {
            writer.unlock();
        }
    }

    /**
     * Hands up to {@code count} object slots to a compute node for its one-sided inserts (Lotus, lotus.md §2.1;
     * {@code LogDbRpc#GRANT}): each initialised as a placeholder (deleted, empty, at
     * {@link ObjectLayout#LOADED_VERSION}, unlocked, a new incarnation) and <em>not</em> in the index: the compute
     * node writes the object and then its index slot itself, under its lock of that index bucket. Such an object is
     * never in this table's reclamation bookkeeping (its deleted keys, its history), as an object a one-sided
     * write-back deleted is not: it stays a tombstone, which an INSERT revives. The index's entry count
     * ({@link Index#size}) does not count the compute node's entries. A slot granted is the compute node's until it
     * uses it (a dead node's that no index names go back by {@link #reclaimGranted}, if it was granted them as a holder).
     *
     * @return the pointers granted (fewer when the slab runs out; none when it is full)
     */
    public long[] grantSlots(final int count) {
        return grantSlots(count, 0);
    }

    /**
     * {@link #grantSlots(int)} for {@code holder} (a compute node incarnation's id; 0: none, not tracked): the slots
     * are remembered as the holder's until {@link #reclaimGranted} settles them.
     */
    public long[] grantSlots(final int count, final long holder) {
        writer.lock();
        try {
            final long[] granted = new long[count];
            int n = 0;
            while (n < count) {
                final long slot = objectSlab.allocate();
                if (slot < 0) {
                    break;
                }
                final int at = (int) slot;
                final int incarnation = (objectMemory.getShort(at + INCARNATION_OFFSET) + 1) & 0xffff;
                objectMemory.setMemory(at, ObjectLayout.HEADER_BYTES, (byte) 0);
                objectMemory.putShort(at + INCARNATION_OFFSET, (short) incarnation);
                objectMemory.putShort(at + FLAGS_OFFSET, (short) FLAG_DELETED);
                objectMemory.putLongRelease(at + VERSION_OFFSET, ObjectLayout.LOADED_VERSION);
                granted[n++] = ObjectLayout.pointer(objects.address() + at, incarnation);
            }
            slotsGranted += n;
            if (holder != 0 && n > 0) {
                final LongHashSet of = grantedTo.computeIfAbsent(holder, k -> new LongHashSet());
                for (int i = 0; i < n; i++) {
                    of.add(ObjectLayout.addressOf(granted[i]) - objects.address());
                }
            }
            return java.util.Arrays.copyOf(granted, n);
        } finally {
            writer.unlock();
        }
    }

    /**
     * Gives back the slots {@link #grantSlots(int, long)} granted {@code holder}, a compute node incarnation that is
     * dead and recovered (TODO lotusins-return, the dead-node half; lotus package doc): each slot no index entry names
     * goes back to the slab (a new incarnation, so a pointer to it from before is stale), one the index names is the
     * key's object and stays. Only once its holder's redo records are settled: a record rolled forward named its
     * slot in the index before any cell of it was visible, and one undone or never finished left it outside, which
     * nobody reaches. The holder is forgotten either way.
     *
     * @return how many slots went back
     */
    public int reclaimGranted(final long holder) {
        writer.lock();
        try {
            final LongHashSet of = grantedTo.remove(holder);
            if (of == null || of.isEmpty()) {
                return 0;
            }
            index.forEach((key, address) -> of.remove(ObjectLayout.addressOf(address) - objects.address()));
            int freed = 0;
            for (final LongHashSet.LongIterator it = of.iterator(); it.hasNext(); ) {
                final int at = (int) it.nextValue();
                objectMemory.putShortVolatile(at + INCARNATION_OFFSET,
                    (short) ((objectMemory.getShort(at + INCARNATION_OFFSET) + 1) & 0xffff));
                objectSlab.free(at);
                freed++;
            }
            slotsReclaimed += freed;
            return freed;
        } finally {
            writer.unlock();
        }
    }

    /** The index's memory (tests: a compute node's one-sided index WRITE, as {@code LotusTxn#writeIndexSlots}). */
    public AtomicBuffer indexMemory() {
        return indexMemory;
    }

    /** Slots {@link #reclaimGranted} gave back so far. */
    public long slotsReclaimed() {
        writer.lock();
        try {
            return slotsReclaimed;
        } finally {
            writer.unlock();
        }
    }

    /** How many holders have slots granted and not yet reclaimed (checks: a dead holder's recovery left none). */
    public int holders() {
        writer.lock();
        try {
            return grantedTo.size();
        } finally {
            writer.unlock();
        }
    }

    /** How many slots {@code holder} was granted and not yet reclaimed (in the index or not). */
    public int grantedTo(final long holder) {
        writer.lock();
        try {
            final LongHashSet of = grantedTo.get(holder);
            return of == null ? 0 : of.size();
        } finally {
            writer.unlock();
        }
    }

    /**
     * Creates {@code key} here as a copy of the object at {@code pointer} of {@code from}: the same value, length,
     * flags and version, unlocked and without history. For the initial copy of a primary onto its backup
     * ({@link BackupTables#replicate}), before any transaction runs.
     *
     * @return the object pointer here, or {@link #DUPLICATE}, {@link #FULL}, {@link #BAD_LENGTH}, {@link #STALE}
     */
    public long copyObject(final long key, final Table from, final long pointer) {
        final int source = from.offsetOf(pointer);
        if (source < 0) {
            return STALE;
        }
        final AtomicBuffer m = from.objectMemory;
        final int length = m.getInt(source + VALUE_LENGTH_OFFSET);
        if (!lengthOk(length)) {
            return BAD_LENGTH;
        }
        writer.lock();
        try {
            return createObject(key, m, source + VALUE_OFFSET, length,
                m.getLongVolatile(source + VERSION_OFFSET) & ~ObjectLayout.VERSION_BUSY, null, 0,
                m.getShort(source + FLAGS_OFFSET));
        } finally {
            writer.unlock();
        }
    }

    /** Visits every key in the index with its object pointer (deleted objects too), under the writer lock. */
    public void forEachKey(final Index.EntryVisitor visitor) {
        writer.lock();
        try {
            index.forEach(visitor);
        } finally {
            writer.unlock();
        }
    }

    /**
     * Whether the deleted object at {@code pointer} waits for reclamation: the memory node's CPU deleted it (an
     * abandoned insert, {@link #delete}), so it is no committed tombstone and may be freed. False for a live object and
     * a tombstone written one-sided (which stays).
     */
    public boolean awaitsReclamation(final long pointer) {
        writer.lock();
        try {
            final int at = offsetOf(pointer);
            return at >= 0 && deletedKeys.containsKey(at);
        } finally {
            writer.unlock();
        }
    }

    /**
     * The Takeout Lock ticket an {@link #insertLocked} with {@link InsertLock#TICKET} holds on the object at
     * {@code pointer}, read before the inserter heard of it: {@code upper}, which only the holder moves. Not always 0:
     * a revived object's counters moved on with its earlier holders. -1 for a stale pointer.
     */
    public long insertTicket(final long pointer) {
        final int at = offsetOf(pointer);
        return at < 0 ? -1 : objectMemory.getLongVolatile(at + ObjectLayout.UPPER_OFFSET);
    }

    /** The offset of the object at {@code pointer} if its newest version is a delete (to revive), else -1. */
    private int revivable(final long pointer) {
        final int at = offsetOf(pointer);
        return at < 0 || (objectMemory.getShort(at + FLAGS_OFFSET) & FLAG_DELETED) == 0 ? -1 : at;
    }

    /**
     * A new slot for {@code key} (locked when {@code lock} is set, with {@code flags}), published by the index insert
     * last.
     */
    private long createObject(final long key, final DirectBuffer value, final int offset, final int length,
                              final long version, final InsertLock lock, final long lockWord, final int flags) {
        final long slot = objectSlab.allocate();
        if (slot < 0) {
            return FULL;
        }
        final int at = (int) slot;
        final int incarnation = (objectMemory.getShort(at + INCARNATION_OFFSET) + 1) & 0xffff;
        objectMemory.setMemory(at, ObjectLayout.HEADER_BYTES, (byte) 0);
        objectMemory.putShort(at + INCARNATION_OFFSET, (short) incarnation);
        if (lock != null) {
            takeLock(at, lock, lockWord);
        }
        objectMemory.putInt(at + VALUE_LENGTH_OFFSET, length);
        objectMemory.putShort(at + FLAGS_OFFSET, (short) flags);
        if (length > 0) {
            objectMemory.putBytes(at + VALUE_OFFSET, value, offset, length);
        }
        objectMemory.putLongRelease(at + VERSION_OFFSET, version);
        final long pointer = ObjectLayout.pointer(objects.address() + at, incarnation);
        final int indexed = index.insert(key, pointer);
        if (indexed != Index.OK) {
            objectSlab.free(slot);
            return indexed == Index.DUPLICATE ? DUPLICATE : FULL;
        }
        return pointer;
    }

    private void takeLock(final int at, final InsertLock lock, final long lockWord) {
        if (lock == InsertLock.NONE) {
            return;
        }
        if (lock == InsertLock.CAS_WORD) {
            objectMemory.putLongVolatile(at + ObjectLayout.CAS_LOCK_OFFSET, lockWord);
        } else {
            // Ticket lower is the inserter's and already served (upper == lower before): it holds the lock.
            objectMemory.putLongVolatile(at + ObjectLayout.QUEUED_TS_OFFSET, lockWord);
            objectMemory.getAndAddLong(at + ObjectLayout.LOWER_OFFSET, 1);
        }
    }

    private void releaseLock(final int at, final InsertLock lock) {
        if (lock == InsertLock.NONE) {
            return;
        }
        if (lock == InsertLock.CAS_WORD) {
            objectMemory.putLongVolatile(at + ObjectLayout.CAS_LOCK_OFFSET, 0);
        } else {
            objectMemory.getAndAddLong(at + ObjectLayout.UPPER_OFFSET, 1); // only the holder ever adds to upper
        }
    }

    /**
     * Installs {@code value} as the newest version of the object, committed at {@code version}; the replaced value
     * moves to the version log (when the table keeps one).
     *
     * @return {@link #OK}, {@link #STALE}, {@link #BAD_LENGTH} or {@link #VERSION_SPACE_FULL}
     */
    public int update(final long pointer, final DirectBuffer value, final int offset, final int length,
                      final long version) {
        if (!lengthOk(length)) {
            return BAD_LENGTH;
        }
        writer.lock();
        try {
            final int at = offsetOf(pointer);
            return at < 0 ? STALE : replace(at, value, offset, length, version, 0);
        } finally {
            writer.unlock();
        }
    }

    /**
     * Deletes {@code key} at {@code version}: its newest version becomes a delete; readers older than that still see
     * the value before, until reclamation passes the delete and frees the object.
     *
     * @return {@link #OK}, {@link #NOT_FOUND} or {@link #VERSION_SPACE_FULL}
     */
    public int delete(final long key, final long version) {
        writer.lock();
        try {
            final long pointer = index.lookup(key);
            final int at = pointer == 0 ? -1 : offsetOf(pointer);
            if (at < 0 || (objectMemory.getShort(at + FLAGS_OFFSET) & FLAG_DELETED) != 0) {
                return NOT_FOUND;
            }
            final int status = replace(at, null, 0, 0, version, FLAG_DELETED);
            if (status == OK) {
                deletedKeys.put(at, key);
                withHistory.add(at); // even without a version log, the delete must be reclaimed
            }
            return status;
        } finally {
            writer.unlock();
        }
    }

    /** Moves the current value of the object at {@code at} into the version log and installs a new one. */
    private int replace(final int at, final DirectBuffer value, final int offset, final int length,
                        final long version, final int flags) {
        if (versionSlab != null) {
            final long slot = versionSlab.allocate();
            if (slot < 0) {
                return VERSION_SPACE_FULL;
            }
            final int v = (int) slot;
            final int oldLength = objectMemory.getInt(at + VALUE_LENGTH_OFFSET);
            versionMemory.putLong(v + VersionLayout.VERSION_OFFSET, objectMemory.getLong(at + VERSION_OFFSET));
            versionMemory.putLong(v + VersionLayout.OLDER_OFFSET, objectMemory.getLong(at + OLDER_OFFSET));
            versionMemory.putInt(v + VersionLayout.VALUE_LENGTH_OFFSET, oldLength);
            versionMemory.putInt(v + VersionLayout.FLAGS_OFFSET, objectMemory.getShort(at + FLAGS_OFFSET));
            if (oldLength > 0) {
                versionMemory.putBytes(v + VersionLayout.VALUE_OFFSET, objectMemory, at + VALUE_OFFSET, oldLength);
            }
            VarHandle.releaseFence(); // the version record is whole before the object points to it
            objectMemory.putLong(at + OLDER_OFFSET, versions.address() + v);
            withHistory.add(at);
        }
        // Seqlock: readers that overlap the rewrite see the busy bit or a changed version, and read again.
        objectMemory.putLongVolatile(at + VERSION_OFFSET,
            objectMemory.getLong(at + VERSION_OFFSET) | ObjectLayout.VERSION_BUSY);
        objectMemory.putInt(at + VALUE_LENGTH_OFFSET, length);
        objectMemory.putShort(at + FLAGS_OFFSET, (short) flags);
        if (length > 0) {
            objectMemory.putBytes(at + VALUE_OFFSET, value, offset, length);
        }
        objectMemory.putLongRelease(at + VERSION_OFFSET, version);
        return OK;
    }

    /**
     * Copies the value of the object visible at timestamp {@code ts} (the newest version committed at or before it)
     * into {@code dst}.
     *
     * @return its length, or {@link #STALE}, {@link #NOT_VISIBLE}
     */
    public int readAt(final long pointer, final long ts, final MutableDirectBuffer dst, final int dstOffset) {
        final int at = offsetOf(pointer);
        if (at < 0) {
            return STALE;
        }
        while (true) {
            final long version = objectMemory.getLongVolatile(at + VERSION_OFFSET);
            if ((version & ObjectLayout.VERSION_BUSY) != 0) {
                Thread.onSpinWait();
                continue;
            }
            final int result;
            if (version <= ts) {
                if ((objectMemory.getShort(at + FLAGS_OFFSET) & FLAG_DELETED) != 0) {
                    result = NOT_VISIBLE;
                } else {
                    final int length = objectMemory.getInt(at + VALUE_LENGTH_OFFSET);
                    dst.putBytes(dstOffset, objectMemory, at + VALUE_OFFSET, length);
                    result = length;
                }
            } else {
                result = readOlder(objectMemory.getLong(at + OLDER_OFFSET) & ObjectLayout.ADDRESS_MASK, ts, dst,
                    dstOffset);
            }
            VarHandle.acquireFence(); // the copy above happens before the version is checked again
            if (objectMemory.getLongVolatile(at + VERSION_OFFSET) == version) {
                return result;
            }
        }
    }

    /** Reads the chain from {@code older}: version records are immutable once linked. */
    private int readOlder(long older, final long ts, final MutableDirectBuffer dst, final int dstOffset) {
        while (older != 0 && versionMemory != null) {
            final int v = (int) (older - versions.address());
            if (versionMemory.getLong(v + VersionLayout.VERSION_OFFSET) <= ts) {
                if ((versionMemory.getInt(v + VersionLayout.FLAGS_OFFSET) & FLAG_DELETED) != 0) {
                    return NOT_VISIBLE;
                }
                final int length = versionMemory.getInt(v + VersionLayout.VALUE_LENGTH_OFFSET);
                dst.putBytes(dstOffset, versionMemory, v + VersionLayout.VALUE_OFFSET, length);
                return length;
            }
            older = versionMemory.getLong(v + VersionLayout.OLDER_OFFSET) & ObjectLayout.ADDRESS_MASK;
        }
        return NOT_VISIBLE;
    }

    /**
     * Frees what no transaction reading at {@code horizon} or later can see: versions older than the newest one
     * committed at or before the horizon, and objects whose newest version is a delete committed by then.
     *
     * @return the number of version records and objects freed
     */
    public long reclaim(final long horizon) {
        writer.lock();
        try {
            long freed = 0;
            final LongHashSet.LongIterator it = withHistory.iterator();
            final long[] done = new long[withHistory.size()];
            int doneCount = 0;
            while (it.hasNext()) {
                final int at = (int) it.nextValue();
                final long reclaimed = reclaimObject(at, horizon);
                if (reclaimed < 0) {
                    freed += -reclaimed;
                    done[doneCount++] = at;
                } else {
                    freed += reclaimed;
                }
            }
            for (int i = 0; i < doneCount; i++) {
                withHistory.remove(done[i]);
            }
            return freed;
        } finally {
            writer.unlock();
        }
    }

    /** @return freed count, negated when the object needs no more reclamation */
    private long reclaimObject(final int at, final long horizon) {
        final long headVersion = objectMemory.getLong(at + VERSION_OFFSET);
        final boolean headDeleted = (objectMemory.getShort(at + FLAGS_OFFSET) & FLAG_DELETED) != 0;
        if (headVersion <= horizon) {
            long freed = freeChain(objectMemory.getLong(at + OLDER_OFFSET) & ObjectLayout.ADDRESS_MASK);
            objectMemory.putLongRelease(at + OLDER_OFFSET, 0);
            if (headDeleted) {
                if (heldOrQueued(at)) {
                    return freed; // someone holds or waits on it (a reviver, a TOCC reader): not yet
                }
                if (!deletedKeys.containsKey(at)) {
                    // Deleted by a one-sided (or protocol RPC) write-back after this table last deleted or revived
                    // it itself: its key is not known here, so freeing the slot would leave the index pointing at a
                    // freed slot (every lookup of the key stale, for good). It stays a tombstone, which an insert
                    // revives.
                    return -freed;
                }
                removeObject(at);
                freed++;
            }
            return -freed;
        }
        // The head is too new for the horizon: keep the newest older version at or before it.
        long older = objectMemory.getLong(at + OLDER_OFFSET) & ObjectLayout.ADDRESS_MASK;
        while (older != 0) {
            final int v = (int) (older - versions.address());
            if (versionMemory.getLong(v + VersionLayout.VERSION_OFFSET) <= horizon) {
                final long rest = versionMemory.getLong(v + VersionLayout.OLDER_OFFSET) & ObjectLayout.ADDRESS_MASK;
                versionMemory.putLongRelease(v + VersionLayout.OLDER_OFFSET, 0);
                return freeChain(rest);
            }
            older = versionMemory.getLong(v + VersionLayout.OLDER_OFFSET) & ObjectLayout.ADDRESS_MASK;
        }
        return 0;
    }

    private long freeChain(long address) {
        long freed = 0;
        while (address != 0) {
            final int v = (int) (address - versions.address());
            address = versionMemory.getLong(v + VersionLayout.OLDER_OFFSET) & ObjectLayout.ADDRESS_MASK;
            versionSlab.free(v);
            freed++;
        }
        return freed;
    }

    private boolean heldOrQueued(final int at) {
        return objectMemory.getLongVolatile(at + ObjectLayout.CAS_LOCK_OFFSET) != 0
            || objectMemory.getLongVolatile(at + ObjectLayout.PROTOCOL_WORD_OFFSET) != 0 // e.g. RCC WAITDIE's tts
            || objectMemory.getLongVolatile(at + ObjectLayout.LOWER_OFFSET)
            != objectMemory.getLongVolatile(at + ObjectLayout.UPPER_OFFSET);
    }

    private void removeObject(final int at) {
        final long offset = at;
        final long version = objectMemory.getLong(at + VERSION_OFFSET) & ~ObjectLayout.VERSION_BUSY;
        if (version > absentBound()) {
            indexMemory.putLongVolatile(absentBoundOffset, version); // before the key leaves the index (see the field)
        }
        if (deletedKeys.containsKey(offset)) {
            index.remove(deletedKeys.remove(offset));
        }
        // A new incarnation at once, not only when the slot is reused: a pointer cached before is stale from now on,
        // so a READ, lock or validation through it is refused (offsetOf) or fails its incarnation check, instead of
        // acting on a freed slot (or on the key that reuses it, which can carry the same version number).
        objectMemory.putShortVolatile(at + INCARNATION_OFFSET,
            (short) ((objectMemory.getShort(at + INCARNATION_OFFSET) + 1) & 0xffff));
        forgetGranted(offset);
        objectSlab.free(offset);
    }

    /**
     * A granted slot freed by another path than {@link #reclaimGranted} (reclamation of a key deleted or an insert
     * abandoned on this node) is no longer its holder's: else the holder's RECLAIM would free it again once it was
     * granted to another holder, and two keys would share one object (stop-57 review, item 3; latent: Lotus's own
     * deletes are tombstones this node never frees). Linear in the holders (a handful: one per compute node
     * incarnation not yet reclaimed).
     */
    private void forgetGranted(final long offset) {
        for (final LongHashSet of : grantedTo.values()) {
            of.remove(offset);
        }
    }

    /** The object's offset in the slab, or -1 if the pointer is not a live slot of this table. */
    public int offsetOf(final long pointer) {
        final long address = ObjectLayout.addressOf(pointer);
        final long offset = address - objects.address();
        final int slotBytes = objectSlab.slotBytes();
        if (offset < 0 || offset >= objectSlab.touched() * slotBytes || offset % slotBytes != 0) {
            return -1;
        }
        final int at = (int) offset;
        if ((objectMemory.getShort(at + INCARNATION_OFFSET) & 0xffff) != ObjectLayout.incarnationOf(pointer)) {
            return -1;
        }
        return at;
    }

    /** Whether a value of {@code length} bytes fits this table's schema (exactly its size when fixed). */
    public boolean lengthOk(final int length) {
        return schema.fixedSize() ? length == schema.maxValueBytes() : length >= 0 && length <= schema.maxValueBytes();
    }

    /** The objects' memory, for MN-side protocol code (e.g. the Takeout Lock RPC's CPU atomics on lower). */
    public AtomicBuffer objectMemory() {
        return objectMemory;
    }

    public long objectBaseAddress() {
        return objects.address();
    }

    /** Live keys. */
    public long size() {
        return index.size();
    }

    public long versionsInUse() {
        return versionSlab == null ? 0 : versionSlab.used();
    }

    /** Registered memory of the records themselves: object slab and index, without the pool of older versions. */
    public long recordBytes() {
        return objects.length() + indexRegion.length();
    }

    /** Registered memory this table occupies: object slab, index and version log. */
    public long registeredBytes() {
        return objects.length() + indexRegion.length() + (versions == null ? 0 : versions.length());
    }

    ReentrantLock writerLock() {
        return writer;
    }
}
