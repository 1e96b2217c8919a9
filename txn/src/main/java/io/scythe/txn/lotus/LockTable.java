package io.scythe.txn.lotus;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLongArray;

/**
 * A compute node's lock table (lotus.md §2.1, Algorithm 1): a fixed hash table of 8-byte slots, 8 to a bucket. A slot
 * is a 7-byte fingerprint of the Lotus key (bits 8-63) and a 1-byte counter (bits 0-7): 0 free, 1 write-locked, a
 * non-zero even value read-locked (+2 per reader, so at most 127 readers). An acquire never waits: it fails on a
 * conflict, a full bucket or a read counter that would overflow. A released slot goes back to the all-zero word.
 *
 * <p>Beside the words, the <b>lock state</b>: for each held Lotus key its holders (transaction id, compute node,
 * mode). It makes acquires and releases idempotent (a retransmitted request changes nothing), and names the holders
 * to abort (resharding) or release (a dead compute node's, {@link #releaseAllOf}). The counter of a slot is the sum
 * over the keys whose fingerprint shares it: a fingerprint collision only makes a false conflict.
 *
 * <p>Each acquire or release changes its slot with one CPU CAS. Finding the slot and the CAS are made atomic by a
 * monitor per group of buckets: loops of one compute node share the table, and two threads that each found no slot
 * of a fingerprint could otherwise claim two free slots for it (a writer in one, readers in the other). The
 * simulator runs every loop on one thread, where the monitor is never contended.
 */
public final class LockTable {
    public static final int SLOTS_PER_BUCKET = 8;
    /** The counter of a write-locked slot. */
    public static final int WRITE = 1;
    /** What each reader adds to the counter. */
    public static final int READER = 2;
    /** The largest counter: 127 readers. */
    public static final int MAX_COUNTER = 0xfe;
    /** The paper's default size: 32 MB of slots. */
    public static final long DEFAULT_BYTES = 32L << 20;
    private static final int STRIPES = 64;
    private static final long FP_SALT = 0x3c6ef372fe94f82bL;

    /** An acquire's outcome. */
    public enum Result {
        /** The slot's CAS took the lock. */
        GRANTED,
        /** The transaction held it already (in this mode or a stronger one): nothing changed. */
        HELD_ALREADY,
        /** Another transaction holds it in a conflicting mode (or a key of the same fingerprint does). */
        CONFLICT,
        /** No slot of the key's bucket is free or has its fingerprint. */
        BUCKET_FULL,
        /** A read lock would take the counter past {@link #MAX_COUNTER}. */
        OVERFLOW;

        public boolean granted() {
            return this == GRANTED || this == HELD_ALREADY;
        }
    }

    /** One holder of a key's lock: its transaction, its compute node and its mode. */
    public record Hold(long txn, int cn, boolean write) {
    }

    private final AtomicLongArray slots;
    private final int bucketMask;
    private final Object[] stripes = new Object[STRIPES];
    /** The lock state: holders by Lotus key (each key's list guarded by its bucket's stripe). */
    private final Map<Long, List<Hold>> state = new ConcurrentHashMap<>();

    /** A table of {@code buckets} buckets (a power of two). */
    public LockTable(final int buckets) {
        if (buckets < 1 || Integer.bitCount(buckets) != 1 || (long) buckets * SLOTS_PER_BUCKET > Integer.MAX_VALUE) {
            throw new IllegalArgumentException("lock table buckets=" + buckets + ": a power of two from 1 to "
                + Integer.MAX_VALUE / SLOTS_PER_BUCKET);
        }
        this.slots = new AtomicLongArray(buckets * SLOTS_PER_BUCKET);
        this.bucketMask = buckets - 1;
        for (int i = 0; i < STRIPES; i++) {
            stripes[i] = new Object();
        }
    }

    /** A table of {@code bytes} bytes of slots (rounded down to a power of two of buckets, 64 bytes each). */
    public static LockTable ofBytes(final long bytes) {
        final long buckets = bytes / (8L * SLOTS_PER_BUCKET);
        if (buckets < 1) {
            throw new IllegalArgumentException("lock table of " + bytes + " bytes: at least one 64-byte bucket");
        }
        return new LockTable((int) Long.highestOneBit(Math.min(buckets, Integer.MAX_VALUE / SLOTS_PER_BUCKET)));
    }

    public int buckets() {
        return bucketMask + 1;
    }

    /** The 56-bit fingerprint of {@code key}, never 0 (a slot of fingerprint 0 and counter 0 is free). */
    public static long fingerprint(final long key) {
        final long fp = LotusKey.mix(key ^ FP_SALT) >>> 8;
        return fp == 0 ? 1 : fp;
    }

    /** The bucket of {@code key}. */
    public int bucket(final long key) {
        return (int) LotusKey.mix(key) & bucketMask;
    }

    private static long word(final long fp, final int counter) {
        return fp << 8 | counter;
    }

    private static int counter(final long word) {
        return (int) (word & 0xff);
    }

    private static long fpOf(final long word) {
        return word >>> 8;
    }

    /**
     * Algorithm 1: acquires {@code key} for transaction {@code txn} of compute node {@code cn}, in write mode or read
     * mode. A transaction holding a read lock that asks for the write lock upgrades it when it is the only reader of
     * its slot, else conflicts.
     */
    public Result acquire(final long key, final boolean write, final int cn, final long txn) {
        final int bucket = bucket(key);
        synchronized (stripes[bucket & (STRIPES - 1)]) {
            final List<Hold> holders = state.get(key);
            final Hold mine = holdOf(holders, txn);
            if (mine != null && (mine.write() || !write)) {
                return Result.HELD_ALREADY;
            }
            final long fp = fingerprint(key);
            final int base = bucket * SLOTS_PER_BUCKET;
            int at = -1;
            int free = -1;
            for (int i = 0; i < SLOTS_PER_BUCKET; i++) {
                final long w = slots.get(base + i);
                if (w != 0 && fpOf(w) == fp) {
                    at = base + i;
                    break;
                }
                if (w == 0 && free < 0) {
                    free = base + i;
                }
            }
            final long compare;
            final long swap;
            if (mine != null) { // an upgrade: this transaction's is the slot's one reader
                if (at < 0 || slots.get(at) != word(fp, READER)) {
                    return Result.CONFLICT;
                }
                compare = word(fp, READER);
                swap = word(fp, WRITE);
            } else if (at < 0) {
                if (free < 0) {
                    return Result.BUCKET_FULL;
                }
                at = free;
                compare = 0;
                swap = word(fp, write ? WRITE : READER);
            } else {
                final long current = slots.get(at);
                final int c = counter(current);
                if (write || c == WRITE) {
                    return Result.CONFLICT;
                }
                if (c + READER > MAX_COUNTER) {
                    return Result.OVERFLOW;
                }
                compare = current;
                swap = word(fp, c + READER);
            }
            if (!slots.compareAndSet(at, compare, swap)) {
                return Result.CONFLICT; // not reached while every change holds the stripe
            }
            final List<Hold> now = holders == null ? new ArrayList<>(1) : holders;
            if (mine != null) {
                now.remove(mine);
            }
            now.add(new Hold(txn, cn, write));
            state.put(key, now);
            return Result.GRANTED;
        }
    }

    /** Releases what {@code txn} holds of {@code key}; {@code false} (nothing changed) when it holds nothing of it. */
    public boolean release(final long key, final long txn) {
        final int bucket = bucket(key);
        synchronized (stripes[bucket & (STRIPES - 1)]) {
            final List<Hold> holders = state.get(key);
            final Hold mine = holdOf(holders, txn);
            if (mine == null) {
                return false;
            }
            final long fp = fingerprint(key);
            final int base = bucket * SLOTS_PER_BUCKET;
            for (int i = base; i < base + SLOTS_PER_BUCKET; i++) {
                final long w = slots.get(i);
                if (w != 0 && fpOf(w) == fp) {
                    final int c = mine.write() ? 0 : counter(w) - READER;
                    if (!slots.compareAndSet(i, w, c == 0 ? 0 : word(fp, c))) {
                        throw new IllegalStateException("lock slot " + i + " changed under its stripe");
                    }
                    holders.remove(mine);
                    if (holders.isEmpty()) {
                        state.remove(key);
                    }
                    return true;
                }
            }
            throw new IllegalStateException("lock state says txn " + Long.toHexString(txn) + " holds key "
                + Long.toHexString(key) + " but its bucket has no slot of its fingerprint");
        }
    }

    /**
     * Releases every lock compute node {@code cn}'s transactions hold (a dead compute node's, from the lock state:
     * lotus.md §2.7); returns how many.
     */
    public int releaseAllOf(final int cn) {
        return releaseAll(h -> h.cn() == cn);
    }

    /**
     * Releases every lock whose hold matches {@code which} (a dead incarnation's: cluster nodes tell its compute node
     * and the id prefix of its transactions); returns how many.
     */
    public int releaseAll(final java.util.function.Predicate<Hold> which) {
        final List<long[]> held = new ArrayList<>();
        synchronized (this) {
            for (int s = 0; s < STRIPES; s++) {
                synchronized (stripes[s]) {
                    for (final Map.Entry<Long, List<Hold>> e : state.entrySet()) {
                        if ((bucket(e.getKey()) & (STRIPES - 1)) == s) {
                            for (final Hold h : e.getValue()) {
                                if (which.test(h)) {
                                    held.add(new long[] {e.getKey(), h.txn()});
                                }
                            }
                        }
                    }
                }
            }
        }
        int released = 0;
        for (final long[] kt : held) {
            if (release(kt[0], kt[1])) {
                released++;
            }
        }
        return released;
    }

    /** The holders of {@code key} (a copy; empty when free). */
    public List<Hold> holders(final long key) {
        synchronized (stripes[bucket(key) & (STRIPES - 1)]) {
            final List<Hold> holders = state.get(key);
            return holders == null ? List.of() : List.copyOf(holders);
        }
    }

    /** Whether transaction {@code txn} holds {@code key} (in either mode). */
    public boolean holds(final long key, final long txn) {
        synchronized (stripes[bucket(key) & (STRIPES - 1)]) {
            return holdOf(state.get(key), txn) != null;
        }
    }

    /** Whether some transaction holds {@code key}'s write lock now. */
    public boolean writeHeld(final long key) {
        synchronized (stripes[bucket(key) & (STRIPES - 1)]) {
            final List<Hold> holders = state.get(key);
            if (holders != null) {
                for (final Hold h : holders) {
                    if (h.write()) {
                        return true;
                    }
                }
            }
            return false;
        }
    }

    /** The slot word of {@code key}'s fingerprint in its bucket, or 0 when none has it. */
    public long slotWord(final long key) {
        final long fp = fingerprint(key);
        final int base = bucket(key) * SLOTS_PER_BUCKET;
        for (int i = base; i < base + SLOTS_PER_BUCKET; i++) {
            final long w = slots.get(i);
            if (w != 0 && fpOf(w) == fp) {
                return w;
            }
        }
        return 0;
    }

    /** Every held key with its holders (a copy, for end-of-run checks and tests). */
    public Map<Long, List<Hold>> held() {
        final Map<Long, List<Hold>> copy = new HashMap<>();
        state.forEach((key, holders) -> {
            synchronized (stripes[bucket(key) & (STRIPES - 1)]) {
                if (!holders.isEmpty()) {
                    copy.put(key, List.copyOf(holders));
                }
            }
        });
        return copy;
    }

    /** The held keys of {@code shard} with their holders (a copy; resharding's drain). */
    public Map<Long, List<Hold>> heldInShard(final int shard) {
        final Map<Long, List<Hold>> copy = new HashMap<>();
        state.forEach((key, holders) -> {
            if (LotusKey.shard(key) == shard) {
                synchronized (stripes[bucket(key) & (STRIPES - 1)]) {
                    if (!holders.isEmpty()) {
                        copy.put(key, List.copyOf(holders));
                    }
                }
            }
        });
        return copy;
    }

    /** Keys with at least one holder. */
    public int heldKeys() {
        return state.size();
    }

    /**
     * Checks the lock-word invariant of every slot against the lock state (lotus.md §6, 1): a write-locked slot has
     * one writer and no reader among the keys of its fingerprint, a read-locked one {@code counter / 2} readers and no
     * writer, a free one no holder. Returns the first violation, or {@code null}. For tests and end-of-run checks.
     */
    public String checkInvariant() {
        synchronized (this) {
            for (int s = 0; s < STRIPES; s++) {
                synchronized (stripes[s]) {
                    final String v = checkStripe(s);
                    if (v != null) {
                        return v;
                    }
                }
            }
        }
        return null;
    }

    private String checkStripe(final int stripe) {
        final Map<Long, int[]> bySlot = new HashMap<>(); // slot word position -> {writers, readers}
        for (final Map.Entry<Long, List<Hold>> e : state.entrySet()) {
            final long key = e.getKey();
            if ((bucket(key) & (STRIPES - 1)) != stripe) {
                continue;
            }
            final long fp = fingerprint(key);
            final int base = bucket(key) * SLOTS_PER_BUCKET;
            int at = -1;
            for (int i = base; i < base + SLOTS_PER_BUCKET; i++) {
                final long w = slots.get(i);
                if (w != 0 && fpOf(w) == fp) {
                    at = i;
                    break;
                }
            }
            if (at < 0) {
                return "key " + Long.toHexString(key) + " has holders " + e.getValue() + " but no slot";
            }
            final int[] n = bySlot.computeIfAbsent((long) at, x -> new int[2]);
            for (final Hold h : e.getValue()) {
                n[h.write() ? 0 : 1]++;
            }
        }
        for (int b = 0; b <= bucketMask; b++) {
            if ((b & (STRIPES - 1)) != stripe) {
                continue;
            }
            for (int i = b * SLOTS_PER_BUCKET; i < (b + 1) * SLOTS_PER_BUCKET; i++) {
                final long w = slots.get(i);
                final int[] n = bySlot.getOrDefault((long) i, new int[2]);
                final int c = counter(w);
                final boolean ok = w == 0 ? n[0] == 0 && n[1] == 0
                    : c == WRITE ? n[0] == 1 && n[1] == 0
                    : c % 2 == 0 && c > 0 && n[0] == 0 && n[1] == c / 2;
                if (!ok) {
                    return "slot " + i + " word " + Long.toHexString(w) + " but the lock state has " + n[0]
                        + " writers and " + n[1] + " readers";
                }
            }
        }
        return null;
    }

    private static Hold holdOf(final List<Hold> holders, final long txn) {
        if (holders != null) {
            for (final Hold h : holders) {
                if (h.txn() == txn) {
                    return h;
                }
            }
        }
        return null;
    }
}
