package io.scythe.txn.lotus;

/**
 * Lotus's 64-bit lock key (lotus.md §1.3, Fig. 7): bits 0-11 are the shard, the lowest 12 bits of the table's
 * critical field ({@link CriticalFields}); bits 12-63 are 52 bits computed from the whole primary key (here: the
 * table and the key), so keys of one table differ in them. Only lock ownership moves between compute nodes, by shard;
 * data never moves.
 */
public final class LotusKey {
    /** Bits of the shard number. */
    public static final int SHARD_BITS = 12;
    /** Shards there are: 4096. */
    public static final int SHARDS = 1 << SHARD_BITS;
    public static final long SHARD_MASK = SHARDS - 1;
    /** What an index bucket's lock key is derived with, so it never equals a record's by construction. */
    private static final long BUCKET_TAG = 0x6c6f7475735f6278L; // "lotus_bx"

    private LotusKey() {
    }

    /** The key of {@code key} in {@code table} whose critical field is {@code criticalField}. */
    public static long of(final String table, final long key, final long criticalField) {
        return ofHashed(tableHash(table), key, criticalField);
    }

    /** As {@link #of}, with the table's name hashed already ({@link #tableHash}). */
    public static long ofHashed(final long tableHash, final long key, final long criticalField) {
        return (mix(tableHash ^ mix(key)) & ~SHARD_MASK) | (criticalField & SHARD_MASK);
    }

    /**
     * The lock key of the memory-pool index bucket at {@code bucketAddress} of {@code memoryNode}, which an insert
     * locks besides its record's key (lotus.md §2.1), so two inserts into one bucket conflict. It depends on the bucket
     * only (its shard too: the paper names no owner for it, and every inserter must reach the same one).
     */
    public static long indexBucket(final String memoryNode, final long bucketAddress) {
        final long h = mix(mix(tableHash(memoryNode) ^ BUCKET_TAG) ^ bucketAddress);
        return h;
    }

    /** The shard of a Lotus key: its lowest 12 bits. */
    public static int shard(final long lotusKey) {
        return (int) (lotusKey & SHARD_MASK);
    }

    /** A table name's hash, the part of every key of the table that tells it from other tables' keys. */
    public static long tableHash(final String table) {
        long h = 0xcbf29ce484222325L;
        for (int i = 0; i < table.length(); i++) {
            h = (h ^ table.charAt(i)) * 0x100000001b3L;
        }
        return mix(h);
    }

    /** A 64-bit finaliser (SplitMix64's): every input bit changes every output bit with probability 1/2. */
    static long mix(final long x) {
        long z = x + 0x9e3779b97f4a7c15L;
        z = (z ^ (z >>> 30)) * 0xbf58476d1ce4e5b9L;
        z = (z ^ (z >>> 27)) * 0x94d049bb133111ebL;
        return z ^ (z >>> 31);
    }
}
