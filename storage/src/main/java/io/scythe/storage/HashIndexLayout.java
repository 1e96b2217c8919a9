package io.scythe.storage;

/**
 * The hash index of a table, in registered memory so that a compute node can look a key up with one-sided READs as
 * well as by RPC. Buckets of {@value #SLOTS_PER_BUCKET} slots, one bucket a READ; a key lives in its home bucket or,
 * when that is full, in one of the next {@value #MAX_PROBE_BUCKETS}{@code - 1} buckets (linear probing by bucket).
 *
 * <pre>
 *  bucket (128 B):
 *   0                   1                   2                   3
 *   0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
 *  +---------------------------------------------------------------+
 *  |                  key (u64)                    slot 0          |   0
 *  +---------------------------------------------------------------+
 *  |                  object address (u64)         slot 0          |   8  0 empty, 1 deleted
 *  +---------------------------------------------------------------+
 *  |                  ...  slots 1 to 7                            |  16..127
 *  +---------------------------------------------------------------+
 * </pre>
 * A slot is filled by writing the key, then (release) the address; so a reader that sees an address sees its key.
 * Deleting writes {@link #DELETED} into the address; the slot can be reused by a later insert. The address field
 * holds an object pointer ({@link ObjectLayout#pointer}: incarnation and address).
 */
public final class HashIndexLayout {
    public static final int SLOTS_PER_BUCKET = 8;
    public static final int SLOT_BYTES = 16;
    public static final int KEY_OFFSET = 0;
    public static final int ADDRESS_OFFSET = 8;
    public static final int BUCKET_BYTES = SLOTS_PER_BUCKET * SLOT_BYTES;
    /**
     * Buckets a key may be in: its home bucket and the next ones. A lookup stops at the first bucket with an empty
     * slot, so one READ is the common case; the window only bounds the rare long cluster at high load. 32 was too
     * few: at the nominal 80 % load a cluster outgrew it and an insert was refused at 499,825 of 500,000 keys.
     */
    public static final int MAX_PROBE_BUCKETS = 64;
    /** Address of an empty slot. */
    public static final long EMPTY = 0;
    /** Address of a deleted slot (objects are never at address 1). */
    public static final long DELETED = 1;

    /** Whether an index entry's pointer refers to an object (not empty, not deleted), whatever its incarnation. */
    public static boolean live(final long pointer) {
        return (pointer & ObjectLayout.ADDRESS_MASK) > DELETED;
    }
    /** Default slots per record: a load factor of at most 0.8, with 8-slot buckets rarely a second READ. */
    public static final double DEFAULT_SLOTS_PER_RECORD = 1.25;

    private HashIndexLayout() {
    }

    /** Buckets for {@code records} keys: at least {@code records * slotsPerRecord} slots, any count. */
    public static int bucketsFor(final long records, final double slotsPerRecord) {
        final long slots = Math.max(SLOTS_PER_BUCKET * MAX_PROBE_BUCKETS, (long) Math.ceil(records * slotsPerRecord));
        final long buckets = (slots + SLOTS_PER_BUCKET - 1) / SLOTS_PER_BUCKET;
        if (buckets * BUCKET_BYTES > Integer.MAX_VALUE - 8) {
            throw new IllegalArgumentException("a hash index for " + records + " records exceeds one region");
        }
        return (int) buckets;
    }

    /**
     * The home bucket of {@code key} among {@code buckets}: the high half of the mixed key scaled to the bucket count
     * (Lemire's multiply-shift), so the count need not be a power of two.
     */
    public static int homeBucket(final long key, final int buckets) {
        return (int) (((mix(key) >>> 32) * buckets) >>> 32);
    }

    /** Offset of bucket {@code home + probe} (wrapping). */
    public static long bucketOffset(final int home, final int probe, final int buckets) {
        int bucket = home + probe;
        if (bucket >= buckets) {
            bucket -= buckets;
        }
        return (long) bucket * BUCKET_BYTES;
    }

    /** MurmurHash3's 64-bit finalizer: keys that differ in any bit land in unrelated buckets. */
    public static long mix(final long key) {
        long h = key;
        h ^= h >>> 33;
        h *= 0xff51afd7ed558ccdL;
        h ^= h >>> 33;
        h *= 0xc4ceb9fe1a85ec53L;
        h ^= h >>> 33;
        return h;
    }
}
