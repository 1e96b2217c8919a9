package io.scythe.txn.lotus;

import org.agrona.DirectBuffer;
import org.agrona.MutableDirectBuffer;

import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.atomic.LongAdder;

/**
 * Lotus's version-table cache (lotus.md §2.3, paper §4.4): copies of the CVTs of records in the compute node's own lock
 * range, so that a transaction holding a key's lock reads the record's version with one READ instead of two (the CVT,
 * then the record). Hash-partitioned into independent LRU sub-caches, each with its own monitor.
 *
 * <p>Consistency needs no messages, because every write of a CVT happens under the key's write lock, which only its
 * owner grants: a local writer puts the CVT it leaves on the memory node ({@link #put}) before it releases its lock; a
 * write lock granted to another compute node's transaction drops the entry ({@link #invalidate}, Algorithm 1 line
 * 15), and nothing refills it while that lock is held (a fill needs a lock of the key). So whenever no write lock of a
 * key is held, its entry, if any, equals the memory node's CVT. A fill ({@link #put}) is made only by a transaction
 * holding a lock of the key, with a CVT it READ under that lock and found whole with no INVISIBLE cell.
 *
 * <p>Entries are keyed by Lotus key and name their record (table and key): two records sharing a Lotus key share
 * its lock (safe) but not an entry (a lookup of the other misses). Eviction: a put only inserts; a partition over its
 * capacity is trimmed by {@link #trim}, which the caller runs off its transaction's path (the loop's deferred queue).
 */
public final class VtCache {
    /** The paper's default: 64K CVTs (about 4.5 MB). */
    public static final int DEFAULT_ENTRIES = 64 * 1024;
    /** Sub-caches (a power of two). */
    static final int PARTITIONS = 16;

    private record Entry(String table, long key, long pointer, byte[] cvt) {
    }

    private final int perPartition;
    private final Map<Long, Entry>[] partitions;
    final LongAdder hits = new LongAdder();
    final LongAdder misses = new LongAdder();
    final LongAdder fills = new LongAdder();
    final LongAdder invalidations = new LongAdder();
    final LongAdder evictions = new LongAdder();

    /** A cache of about {@code entries} CVTs; 0: no cache (every lookup misses, nothing is kept). */
    @SuppressWarnings("unchecked")
    public VtCache(final int entries) {
        if (entries < 0) {
            throw new IllegalArgumentException("lotus version-table cache: entries >= 0, not " + entries);
        }
        this.perPartition = entries == 0 ? 0 : Math.max(1, entries / PARTITIONS);
        this.partitions = new Map[PARTITIONS];
        for (int i = 0; i < PARTITIONS; i++) {
            partitions[i] = new LinkedHashMap<>(16, 0.75f, true); // access order: LRU first
        }
    }

    public boolean enabled() {
        return perPartition > 0;
    }

    private Map<Long, Entry> partition(final long lotusKey) {
        return partitions[(int) (LotusKey.mix(lotusKey) >>> 60) & (PARTITIONS - 1)];
    }

    /**
     * Copies the cached CVT of record {@code key} of {@code table} (Lotus key {@code lotusKey}) in the object at
     * {@code pointer} into {@code into} at {@code at}; false on a miss (an entry of the record at another object, as
     * after a delete and a re-insert, misses too).
     */
    public boolean get(final long lotusKey, final String table, final long key, final long pointer,
                       final MutableDirectBuffer into,
                       final int at) {
        if (perPartition == 0) {
            return false;
        }
        final Map<Long, Entry> p = partition(lotusKey);
        synchronized (p) {
            final Entry e = p.get(lotusKey);
            if (e == null || e.pointer != pointer || !e.table.equals(table) || e.key != key) {
                misses.increment();
                return false;
            }
            into.putBytes(at, e.cvt);
            hits.increment();
            return true;
        }
    }

    /**
     * Keeps {@code bytes} bytes of {@code cvt} at {@code at} as record {@code key}'s CVT (a fill, or a local writer's
     * update); returns whether its partition is now over capacity ({@link #trim} it off the hot path).
     */
    public boolean put(final long lotusKey, final String table, final long key, final long pointer,
                       final DirectBuffer cvt, final int at, final int bytes) {
        if (perPartition == 0) {
            return false;
        }
        final byte[] copy = new byte[bytes];
        cvt.getBytes(at, copy);
        final Map<Long, Entry> p = partition(lotusKey);
        synchronized (p) {
            p.put(lotusKey, new Entry(table, key, pointer, copy));
            fills.increment();
            return p.size() > perPartition;
        }
    }

    /** Drops the entry of Lotus key {@code lotusKey}, if any. */
    public void invalidate(final long lotusKey) {
        if (perPartition == 0) {
            return;
        }
        final Map<Long, Entry> p = partition(lotusKey);
        synchronized (p) {
            if (p.remove(lotusKey) != null) {
                invalidations.increment();
            }
        }
    }

    /** Drops the entries of {@code shard} (a handoff's step 3). */
    public void dropShard(final int shard) {
        for (final Map<Long, Entry> p : partitions) {
            synchronized (p) {
                p.keySet().removeIf(k -> LotusKey.shard(k) == shard);
            }
        }
    }

    /** Drops every entry. */
    public void clear() {
        for (final Map<Long, Entry> p : partitions) {
            synchronized (p) {
                p.clear();
            }
        }
    }

    /** Evicts the least recently used entries of every partition over its capacity. */
    public void trim() {
        for (final Map<Long, Entry> p : partitions) {
            synchronized (p) {
                final Iterator<Long> lru = p.keySet().iterator();
                while (p.size() > perPartition && lru.hasNext()) {
                    lru.next();
                    lru.remove();
                    evictions.increment();
                }
            }
        }
    }

    /** One entry as {@link #entries} lists it. */
    public record Cached(long lotusKey, String table, long key, long pointer, byte[] cvt) {
    }

    /** A copy of every entry (tests: each must equal its record's CVT on the memory node). */
    public java.util.List<Cached> entries() {
        final java.util.List<Cached> out = new java.util.ArrayList<>();
        for (final Map<Long, Entry> p : partitions) {
            synchronized (p) {
                p.forEach((k, e) -> out.add(new Cached(k, e.table, e.key, e.pointer, e.cvt.clone())));
            }
        }
        return out;
    }

    /** Entries kept now. */
    public int size() {
        int n = 0;
        for (final Map<Long, Entry> p : partitions) {
            synchronized (p) {
                n += p.size();
            }
        }
        return n;
    }

    /** Hits, misses, fills (and local writers' updates), invalidations, evictions. */
    public long[] counts() {
        return new long[] {hits.sum(), misses.sum(), fills.sum(), invalidations.sum(), evictions.sum()};
    }
}
