package io.scythe.storage;

import org.agrona.DirectBuffer;
import org.agrona.concurrent.AtomicBuffer;

import java.lang.invoke.VarHandle;

import static io.scythe.storage.HashIndexLayout.ADDRESS_OFFSET;
import static io.scythe.storage.HashIndexLayout.BUCKET_BYTES;
import static io.scythe.storage.HashIndexLayout.DELETED;
import static io.scythe.storage.HashIndexLayout.EMPTY;
import static io.scythe.storage.HashIndexLayout.KEY_OFFSET;
import static io.scythe.storage.HashIndexLayout.MAX_PROBE_BUCKETS;
import static io.scythe.storage.HashIndexLayout.SLOTS_PER_BUCKET;
import static io.scythe.storage.HashIndexLayout.SLOT_BYTES;

/**
 * The memory node's side of a table's hash index ({@link HashIndexLayout}) over the index region's memory. Lookups
 * are lock-free; inserts and removals must be serialised by the caller (the table's writer lock).
 */
public final class HashIndex implements Index {
    private final AtomicBuffer memory;
    private final int buckets;
    private long size;

    public HashIndex(final AtomicBuffer memory, final int buckets) {
        if (buckets < HashIndexLayout.MAX_PROBE_BUCKETS) {
            throw new IllegalArgumentException("buckets=" + buckets + " must be at least "
                + HashIndexLayout.MAX_PROBE_BUCKETS);
        }
        if ((long) buckets * BUCKET_BYTES > memory.capacity()) {
            throw new IllegalArgumentException("index region of " + memory.capacity() + " bytes is too small for "
                + buckets + " buckets");
        }
        this.memory = memory;
        this.buckets = buckets;
    }

    public int buckets() {
        return buckets;
    }

    @Override
    public long lookup(final long key) {
        final int home = HashIndexLayout.homeBucket(key, buckets);
        for (int probe = 0; probe < MAX_PROBE_BUCKETS; probe++) {
            final int bucket = (int) HashIndexLayout.bucketOffset(home, probe, buckets);
            final long found = find(memory, bucket, key);
            if (found != NOT_FOUND) {
                return found;
            }
            if (!full(memory, bucket)) {
                return 0;
            }
        }
        return 0;
    }

    /**
     * Searches one bucket that was READ into {@code bucket[offset..offset+BUCKET_BYTES)} (a compute node's one-sided
     * lookup does exactly this with the bytes it fetched).
     *
     * @return the object address, 0 when the key is absent and no later bucket can hold it ({@link #NOT_FOUND} when
     *     the bucket is full of other keys, so the next bucket must be read)
     */
    public static long search(final DirectBuffer bucket, final int offset, final long key) {
        final long found = find(bucket, offset, key);
        if (found != NOT_FOUND) {
            return found;
        }
        return full(bucket, offset) ? NOT_FOUND : 0;
    }

    /** Returned by {@link #search} when the key may be in the next bucket. */
    public static final long NOT_FOUND = -1;

    private static long find(final DirectBuffer buffer, final int bucket, final long key) {
        for (int slot = 0; slot < SLOTS_PER_BUCKET; slot++) {
            final int at = bucket + slot * SLOT_BYTES;
            final long address = buffer.getLong(at + ADDRESS_OFFSET);
            VarHandle.acquireFence(); // pairs with the writer's release: the key read below is the address's key
            if (HashIndexLayout.live(address) && buffer.getLong(at + KEY_OFFSET) == key) {
                return address;
            }
        }
        return NOT_FOUND;
    }

    private static boolean full(final DirectBuffer buffer, final int bucket) {
        for (int slot = 0; slot < SLOTS_PER_BUCKET; slot++) {
            if (buffer.getLong(bucket + slot * SLOT_BYTES + ADDRESS_OFFSET) == EMPTY) {
                return false;
            }
        }
        return true;
    }

    @Override
    public int insert(final long key, final long address) {
        if (!HashIndexLayout.live(address)) {
            throw new IllegalArgumentException("object address " + address + " is reserved");
        }
        final int home = HashIndexLayout.homeBucket(key, buckets);
        int freeAt = -1;
        for (int probe = 0; probe < MAX_PROBE_BUCKETS; probe++) {
            final int bucket = (int) HashIndexLayout.bucketOffset(home, probe, buckets);
            boolean sawEmpty = false;
            for (int slot = 0; slot < SLOTS_PER_BUCKET; slot++) {
                final int at = bucket + slot * SLOT_BYTES;
                final long current = memory.getLong(at + ADDRESS_OFFSET);
                if (HashIndexLayout.live(current) && memory.getLong(at + KEY_OFFSET) == key) {
                    return DUPLICATE;
                }
                if (!HashIndexLayout.live(current) && freeAt < 0) {
                    freeAt = at;
                }
                sawEmpty |= current == EMPTY;
            }
            if (sawEmpty) {
                break; // the key cannot be further along
            }
        }
        if (freeAt < 0) {
            return FULL;
        }
        memory.putLong(freeAt + KEY_OFFSET, key);
        memory.putLongRelease(freeAt + ADDRESS_OFFSET, address);
        size++;
        return OK;
    }

    @Override
    public boolean remove(final long key) {
        final int home = HashIndexLayout.homeBucket(key, buckets);
        for (int probe = 0; probe < MAX_PROBE_BUCKETS; probe++) {
            final int bucket = (int) HashIndexLayout.bucketOffset(home, probe, buckets);
            for (int slot = 0; slot < SLOTS_PER_BUCKET; slot++) {
                final int at = bucket + slot * SLOT_BYTES;
                final long current = memory.getLong(at + ADDRESS_OFFSET);
                if (HashIndexLayout.live(current) && memory.getLong(at + KEY_OFFSET) == key) {
                    memory.putLongRelease(at + ADDRESS_OFFSET, DELETED);
                    size--;
                    return true;
                }
            }
            if (!full(memory, bucket)) {
                return false;
            }
        }
        return false;
    }

    @Override
    public long size() {
        return size;
    }

    @Override
    public void forEach(final EntryVisitor visitor) {
        for (int bucket = 0; bucket < buckets; bucket++) {
            for (int slot = 0; slot < SLOTS_PER_BUCKET; slot++) {
                final int at = bucket * BUCKET_BYTES + slot * SLOT_BYTES;
                final long address = memory.getLongAcquire(at + ADDRESS_OFFSET);
                if (HashIndexLayout.live(address)) {
                    visitor.entry(memory.getLong(at + KEY_OFFSET), address);
                }
            }
        }
    }

    @Override
    public long bytes() {
        return (long) buckets * BUCKET_BYTES;
    }
}
