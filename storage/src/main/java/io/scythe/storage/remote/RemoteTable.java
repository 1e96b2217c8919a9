package io.scythe.storage.remote;

import io.scythe.bridge.RdmaChannel;
import io.scythe.rrpc.Rocket;
import io.scythe.storage.HashIndex;
import io.scythe.storage.HashIndexLayout;
import io.scythe.storage.IndexKind;
import io.scythe.storage.SkipListLayout;
import io.scythe.storage.TableDescriptor;
import io.vertx.core.Future;
import org.agrona.collections.Long2LongHashMap;
import org.agrona.concurrent.UnsafeBuffer;

import java.util.function.Supplier;

/**
 * A table of a memory node as one compute-node event loop reaches it: lookups of object pointers, by RPC (one round
 * trip; the memory node's CPU walks the index) or one-sided (READs of the index: one bucket for the hash index, one
 * node per step for the skip list), cached after the first (as FORD and RCC cache remote addresses). Loop-confined.
 */
public final class RemoteTable {
    /** How a lookup that misses the cache reaches the index. */
    public enum LookupMode {
        RPC, ONE_SIDED;

        /**
         * The mode a configuration or command line names: {@code rpc} or {@code onesided} (or {@code one-sided}).
         *
         * @throws IllegalArgumentException saying what is accepted
         */
        public static LookupMode named(final String name) {
            return switch (name.toLowerCase(java.util.Locale.ROOT)) {
                case "rpc" -> RPC;
                case "onesided", "one-sided" -> ONE_SIDED;
                default -> throw new IllegalArgumentException(name + ": must be rpc or onesided");
            };
        }

        /** How {@link #named} names it. */
        public String label() {
            return this == RPC ? "rpc" : "onesided";
        }
    }

    private final TableDescriptor table;
    private final Supplier<Future<RdmaChannel>> channel;
    private final Supplier<Future<Rocket>> rocket;
    /** Entries the address cache starts with room for: up to the table's object slots, at most this many. */
    static final int CACHE_PRESIZE_MAX = 4096;

    private final Long2LongHashMap cache;
    private long reads;
    private long rpcs;

    /**
     * @param channel this loop's one-sided channel to the table's memory node
     * @param rocket  this loop's RRPC Rocket to it
     */
    public RemoteTable(final TableDescriptor table, final Supplier<Future<RdmaChannel>> channel,
                       final Supplier<Future<Rocket>> rocket) {
        this.table = table;
        this.channel = channel;
        this.rocket = rocket;
        // Presized (a 64 KiB array at most) so that warming it does not double its arrays a dozen times per table
        // and loop on the hot path.
        this.cache = new Long2LongHashMap(cacheCapacity(table), org.agrona.collections.Hashing.DEFAULT_LOAD_FACTOR,
            0);
    }

    /** Room for every object slot of {@code table} below the load factor, capped at {@link #CACHE_PRESIZE_MAX}. */
    static int cacheCapacity(final TableDescriptor table) {
        final long slots = table.objects().length() / Math.max(1, table.objectSlotBytes());
        return (int) Math.min(CACHE_PRESIZE_MAX, (long) (slots / org.agrona.collections.Hashing.DEFAULT_LOAD_FACTOR) + 1);
    }

    public TableDescriptor descriptor() {
        return table;
    }

    /** The object pointer of {@code key} (0 if absent): from the cache, else by {@code mode}, then cached. */
    public Future<Long> lookup(final long key, final LookupMode mode) {
        final long cached = cache.get(key);
        if (cached != 0) {
            return Future.succeededFuture(cached);
        }
        final Future<Long> found = mode == LookupMode.RPC ? lookupRpc(key) : lookupOneSided(key);
        return found.map(pointer -> {
            final long p = pointer;
            if (p != 0) {
                cache.put(key, p);
            }
            return pointer;
        });
    }

    /**
     * The object pointer of {@code key} if the cache holds it, else 0: the hit path of {@link #find(long, LookupMode)}
     * without a Future (a transaction's hot path looks every key up here first).
     */
    public long cachedPointer(final long key) {
        return cache.get(key);
    }

    /**
     * The object pointer of {@code key} from the cache, else by a LOOKUP RPC (then cached); for a missing key, with
     * the bound of the version it is absent at ({@link Lookup}).
     */
    public Future<Lookup> find(final long key) {
        return find(key, LookupMode.RPC);
    }

    /**
     * The object pointer of {@code key} from the cache, else by {@code mode} (then cached); for a missing key, with
     * the bound of the version it is absent at ({@link Lookup}), whichever way it was looked up.
     */
    public Future<Lookup> find(final long key, final LookupMode mode) {
        final long cached = cache.get(key);
        if (cached != 0) {
            return Future.succeededFuture(new Lookup(cached, 0));
        }
        if (mode == LookupMode.RPC) {
            return lookupRpc(key, true); // cached as the reply is decoded: one mapping stage fewer per miss
        }
        return lookupOneSidedWithBound(key).map(found -> cached(key, found));
    }

    /** {@code found}, its pointer cached first when the key is present. */
    private Lookup cached(final long key, final Lookup found) {
        if (found.pointer() != 0) {
            cache.put(key, found.pointer());
        }
        return found;
    }

    /** One lookup past the cache by {@code mode}, with the bound of a missing key's version. */
    public Future<Lookup> lookupWithBound(final long key, final LookupMode mode) {
        return mode == LookupMode.RPC ? lookupWithBound(key) : lookupOneSidedWithBound(key);
    }

    /** Forgets a cached pointer (after a stale-pointer failure). */
    public void invalidate(final long key) {
        cache.remove(key);
    }

    public int cached() {
        return cache.size();
    }

    /** One RPC: the memory node's CPU looks the key up. */
    public Future<Long> lookupRpc(final long key) {
        return lookupWithBound(key).map(Lookup::pointer);
    }

    /**
     * What a LOOKUP RPC found: the object pointer, or 0 and then {@code absentBound}, the version the missing key was
     * last at, at most ({@code Table#absentBound}).
     */
    public record Lookup(long pointer, long absentBound) {
    }

    /** One LOOKUP RPC, with the bound of a missing key's version (for validation and the history). */
    public Future<Lookup> lookupWithBound(final long key) {
        return lookupRpc(key, false);
    }

    /** {@link #lookupWithBound(long)}, the pointer found cached at once when {@code caching} ({@link #find}). */
    private Future<Lookup> lookupRpc(final long key, final boolean caching) {
        rpcs++;
        final UnsafeBuffer request = new UnsafeBuffer(new byte[16]); // the call may wait for the Rocket to open
        request.putInt(0, table.schema().id());
        request.putInt(4, 0);
        request.putLong(8, key);
        return rocket.get().compose(r -> r.call(LogDbRpc.LOOKUP, request, 0, 16)).map(reply -> {
            if (reply.length() < LogDbRpc.LOOKUP_REPLY_BYTES) {
                throw new IllegalStateException("LOOKUP reply of " + reply.length() + " bytes");
            }
            final Lookup found = new Lookup(reply.payload().getLong(0), reply.payload().getLong(8));
            return caching ? cached(key, found) : found;
        });
    }

    /** An object created by {@link #insert}: where it is and the version it has until the inserter's write-back. */
    public record Inserted(long pointer, long version, long ticket) {
    }

    /**
     * INSERT RPC ({@link LogDbRpc}): creates {@code key} locked by the caller ({@code lockWord} is its CAS-lock owner
     * id, or its timestamp for a Takeout Lock ticket) and caches its pointer. Fails with the RPC's
     * {@code RpcException}: {@link LogDbRpc#DUPLICATE}, {@link LogDbRpc#FULL}, {@link LogDbRpc#LOCKED}, ...
     */
    public Future<Inserted> insert(final long key, final org.agrona.DirectBuffer value, final int offset,
                                   final int length, final io.scythe.storage.Table.InsertLock lock,
                                   final long lockWord) {
        rpcs++;
        final UnsafeBuffer request = new UnsafeBuffer(new byte[LogDbRpc.INSERT_HEADER_BYTES + length]);
        request.putInt(0, table.schema().id());
        request.putInt(4, lock.ordinal());
        request.putLong(8, key);
        request.putLong(16, lockWord);
        request.putInt(24, length);
        request.putBytes(LogDbRpc.INSERT_HEADER_BYTES, value, offset, length);
        return rocket.get().compose(r -> r.call(LogDbRpc.INSERT, request, 0, request.capacity())).map(reply -> {
            if (reply.length() < LogDbRpc.INSERT_REPLY_BYTES) {
                throw new IllegalStateException("INSERT reply of " + reply.length() + " bytes");
            }
            final Inserted inserted = new Inserted(reply.payload().getLong(0), reply.payload().getLong(8),
                reply.payload().getLong(16));
            cache.put(key, inserted.pointer());
            return inserted;
        });
    }

    /**
     * The pointer of {@code key}'s object on this table, a backup copy ({@code BackupTables}): from the cache, else
     * by a one-sided lookup when {@code mode} says so and the key is there, else by a LOCATE RPC, which creates a
     * deleted placeholder for a key the backup does not have yet. Cached for good: a backup's objects are never freed.
     */
    public Future<Long> locateBackup(final long key, final LookupMode mode) {
        final long cached = cache.get(key);
        if (cached != 0) {
            return Future.succeededFuture(cached);
        }
        final Future<Long> found = mode == LookupMode.ONE_SIDED ? lookupOneSided(key) : Future.succeededFuture(0L);
        return found.compose(pointer -> pointer != 0 ? Future.succeededFuture(pointer) : locateRpc(key))
            .map(pointer -> {
                cache.put(key, (long) pointer);
                return pointer;
            });
    }

    private Future<Long> locateRpc(final long key) {
        rpcs++;
        final UnsafeBuffer request = new UnsafeBuffer(new byte[16]);
        request.putInt(0, table.schema().id());
        request.putInt(4, 0);
        request.putLong(8, key);
        return rocket.get().compose(r -> r.call(LogDbRpc.LOCATE, request, 0, 16)).map(reply -> {
            if (reply.length() < 8) {
                throw new IllegalStateException("LOCATE reply of " + reply.length() + " bytes");
            }
            return reply.payload().getLong(0);
        });
    }

    /** One page of this table's keys ({@link LogDbRpc#KEYS}), and how many keys the index holds in all. */
    public record Keys(long[] keys, long total) {
    }

    /** KEYS RPC: at most {@code limit} keys of this table's index from the {@code skip}-th on (deleted ones too). */
    public Future<Keys> keys(final long skip, final int limit) {
        rpcs++;
        final UnsafeBuffer request = new UnsafeBuffer(new byte[16]);
        request.putInt(0, table.schema().id());
        request.putInt(4, limit);
        request.putLong(8, skip);
        return rocket.get().compose(r -> r.call(LogDbRpc.KEYS, request, 0, 16)).map(reply -> {
            final int count = reply.length() < LogDbRpc.KEYS_REPLY_HEADER_BYTES ? -1 : reply.payload().getInt(0);
            if (count < 0 || reply.length() != LogDbRpc.KEYS_REPLY_HEADER_BYTES + 8L * count) {
                throw new IllegalStateException("KEYS reply of " + reply.length() + " bytes");
            }
            final long[] keys = new long[count];
            for (int i = 0; i < count; i++) {
                keys[i] = reply.payload().getLong(LogDbRpc.KEYS_REPLY_HEADER_BYTES + 8 * i);
            }
            return new Keys(keys, reply.payload().getLong(8));
        });
    }

    /** ABANDON RPC: undoes this loop's {@link #insert} of {@code key} at {@code pointer} (its commit failed). */
    public Future<Void> abandon(final long key, final long pointer, final io.scythe.storage.Table.InsertLock lock) {
        rpcs++;
        cache.remove(key); // the abandoned object is reclaimed: its slot may soon be another key's
        final UnsafeBuffer request = new UnsafeBuffer(new byte[24]);
        request.putInt(0, table.schema().id());
        request.putInt(4, lock.ordinal());
        request.putLong(8, key);
        request.putLong(16, pointer);
        return rocket.get().compose(r -> r.call(LogDbRpc.ABANDON, request, 0, 24)).mapEmpty();
    }

    /** GRANT RPC ({@link LogDbRpc#GRANT}): up to {@code count} object slots outside the index, for one-sided inserts. */
    public Future<long[]> grantSlots(final int count) {
        return grantSlots(count, 0);
    }

    /**
     * {@link #grantSlots(int)} for {@code holder} (this compute node incarnation's id; 0: none), which the memory node
     * remembers until {@link #reclaimGranted} of the holder.
     */
    public Future<long[]> grantSlots(final int count, final long holder) {
        rpcs++;
        final int length = holder == 0 ? 8 : 16;
        final UnsafeBuffer request = new UnsafeBuffer(new byte[16]);
        request.putInt(0, table.schema().id());
        request.putInt(4, count);
        request.putLong(8, holder);
        return rocket.get().compose(r -> r.call(LogDbRpc.GRANT, request, 0, length)).map(reply -> {
            final int n = reply.length() < 8 ? -1 : reply.payload().getInt(0);
            if (n < 1 || n > count || reply.length() != 8 + 8L * n) {
                throw new IllegalStateException("GRANT reply of " + reply.length() + " bytes");
            }
            final long[] pointers = new long[n];
            for (int i = 0; i < n; i++) {
                pointers[i] = reply.payload().getLong(8 + 8 * i);
            }
            return pointers;
        });
    }

    /**
     * RECLAIM RPC ({@link LogDbRpc#RECLAIM}): gives back the slots granted to dead {@code holder} that no index entry
     * names ({@code Table#reclaimGranted}). How many went back.
     */
    public Future<Long> reclaimGranted(final long holder) {
        rpcs++;
        final UnsafeBuffer request = new UnsafeBuffer(new byte[16]);
        request.putInt(0, table.schema().id());
        request.putLong(8, holder);
        return rocket.get().compose(r -> r.call(LogDbRpc.RECLAIM, request, 0, 16)).map(reply -> {
            if (reply.length() != 8) {
                throw new IllegalStateException("RECLAIM reply of " + reply.length() + " bytes");
            }
            return reply.payload().getLong(0);
        });
    }

    /**
     * Where a one-sided insert of {@code key} would go in this table's hash index, found by READs of its probe
     * sequence (and of the absent bound, in the doorbell of each bucket READ): {@code found} the key's pointer when it
     * is in the index (live or a tombstone: no slot then), else {@code probe} and {@code slot}, the first slot that
     * holds no object from the home bucket on ({@link HashIndex#insert} picks the same one), with its address word
     * ({@code EMPTY} or {@code DELETED}) and the bound; {@code probe} is -1 when the window has no free slot.
     */
    public record InsertSlot(long found, int probe, int slot, long word, long bound) {
    }

    /**
     * {@link InsertSlot} of {@code key}, by one-sided READs (hash index only). Slots {@code claimed} says are taken
     * (by address: the caller's other inserts, whose index WRITEs come later) are not picked, but an EMPTY one still
     * ends the search for the key (once written, it is not empty; if never written, neither is this key's slot: both
     * are one commit's); past that, buckets are READ for a free slot only.
     */
    public Future<InsertSlot> probeForInsert(final long key, final java.util.function.LongPredicate claimed) {
        if (table.schema().index() != IndexKind.HASH) {
            return Future.failedFuture(new IllegalStateException("table " + table.schema().name()
                + " has no hash index"));
        }
        final UnsafeBuffer bucket = new UnsafeBuffer(new byte[HashIndexLayout.BUCKET_BYTES]);
        final UnsafeBuffer bound = new UnsafeBuffer(new byte[8]);
        return channel.get().compose(ch -> probeFree(ch, key, claimed, 0, false, bucket, bound));
    }

    private Future<InsertSlot> probeFree(final RdmaChannel ch, final long key,
                                         final java.util.function.LongPredicate claimed, final int probe,
                                         final boolean keyAbsent, final UnsafeBuffer bucket,
                                         final UnsafeBuffer bound) {
        if (probe == HashIndexLayout.MAX_PROBE_BUCKETS) {
            return Future.succeededFuture(new InsertSlot(0, -1, -1, 0, bound.getLong(0)));
        }
        reads += keyAbsent ? 1 : 2;
        final io.scythe.bridge.Doorbell batch = ch.doorbell();
        batch.read(table.bucketAddress(key, probe), table.index().rkey(), bucket, 0, HashIndexLayout.BUCKET_BYTES);
        if (!keyAbsent) { // the bound READ after the bucket's, as lookupOneSidedWithBound's
            batch.read(table.absentBoundAddress(), table.index().rkey(), bound, 0, 8);
        }
        return batch.post().compose(v -> {
            int free = -1;
            long word = 0;
            boolean sawEmpty = false;
            for (int slot = 0; slot < HashIndexLayout.SLOTS_PER_BUCKET; slot++) {
                final int at = slot * HashIndexLayout.SLOT_BYTES;
                final long address = bucket.getLong(at + HashIndexLayout.ADDRESS_OFFSET);
                java.lang.invoke.VarHandle.acquireFence();
                if (!keyAbsent && HashIndexLayout.live(address)
                    && bucket.getLong(at + HashIndexLayout.KEY_OFFSET) == key) {
                    return Future.succeededFuture(new InsertSlot(address, -1, -1, 0, 0));
                }
                if (!HashIndexLayout.live(address) && free < 0 && !claimed.test(slotAddress(key, probe, slot))) {
                    free = slot;
                    word = address;
                }
                sawEmpty |= address == HashIndexLayout.EMPTY;
            }
            if (!keyAbsent && free >= 0) {
                // Is this the first free slot from home, and is the key absent? Earlier buckets had none (else
                // picked there); the key is absent once a bucket with an EMPTY slot is reached.
                if (sawEmpty) {
                    return Future.succeededFuture(new InsertSlot(0, probe, free, word, bound.getLong(0)));
                }
                final int freeProbe = probe;
                final int freeSlot = free;
                final long freeWord = word;
                return probeKey(ch, key, probe + 1, bucket).compose(found -> Future.succeededFuture(found != 0
                    ? new InsertSlot(found, -1, -1, 0, 0)
                    : new InsertSlot(0, freeProbe, freeSlot, freeWord, bound.getLong(0))));
            }
            if (keyAbsent && free >= 0) {
                return Future.succeededFuture(new InsertSlot(0, probe, free, word, bound.getLong(0)));
            }
            return probeFree(ch, key, claimed, probe + 1, keyAbsent || sawEmpty, bucket, bound);
        });
    }

    /** The rest of a one-sided lookup from bucket {@code probe} on (the bound already READ): the pointer, or 0. */
    private Future<Long> probeKey(final RdmaChannel ch, final long key, final int probe, final UnsafeBuffer bucket) {
        return probeBucket(ch, key, probe, bucket, null);
    }

    /** The address word of slot {@code slot} of bucket {@code probe} of {@code key}'s probe sequence, READ. */
    public Future<Long> readSlotWord(final long key, final int probe, final int slot) {
        final UnsafeBuffer word = new UnsafeBuffer(new byte[8]);
        return channel.get().compose(ch -> {
            reads++;
            return ch.read(slotAddress(key, probe, slot) + HashIndexLayout.ADDRESS_OFFSET, table.index().rkey(), word,
                0, 8);
        }).map(v -> word.getLong(0));
    }

    /** The registered address of slot {@code slot} of bucket {@code probe} of {@code key}'s probe sequence. */
    public long slotAddress(final long key, final int probe, final int slot) {
        return table.bucketAddress(key, probe) + (long) slot * HashIndexLayout.SLOT_BYTES;
    }

    /** Caches {@code pointer} as {@code key}'s (a one-sided insert wrote it into the index). */
    public void cache(final long key, final long pointer) {
        cache.put(key, pointer);
    }

    /** READs of the index, no CPU on the memory node; a miss comes without its bound (see the next method). */
    public Future<Long> lookupOneSided(final long key) {
        return channel.get().compose(ch -> table.schema().index() == IndexKind.HASH
            ? probeBucket(ch, key, 0, new UnsafeBuffer(new byte[HashIndexLayout.BUCKET_BYTES]), null)
            : walkSkipList(ch, key));
    }

    /**
     * READs of the index and of its absent bound ({@code IndexRegionLayout}), no CPU on the memory node: the same
     * answer as {@link #lookupWithBound(long)}. The bound is READ after the READ that showed the key missing, on the
     * same queue pair (the order {@code Table}'s absent-bound comment needs): for the hash index in the doorbell of
     * every bucket READ (one round trip, one more 8-byte READ), for the skip list once the walk ended in a miss (one
     * more round trip on misses only: a walk does not know its last node before it READ it).
     */
    public Future<Lookup> lookupOneSidedWithBound(final long key) {
        return channel.get().compose(ch -> {
            if (table.schema().index() == IndexKind.HASH) {
                final UnsafeBuffer bound = new UnsafeBuffer(new byte[8]);
                return probeBucket(ch, key, 0, new UnsafeBuffer(new byte[HashIndexLayout.BUCKET_BYTES]), bound)
                    .map(pointer -> new Lookup(pointer, pointer == 0 ? bound.getLong(0) : 0));
            }
            return walkSkipList(ch, key).compose(pointer -> {
                if (pointer != 0) {
                    return Future.succeededFuture(new Lookup(pointer, 0));
                }
                final UnsafeBuffer bound = new UnsafeBuffer(new byte[8]);
                reads++;
                return ch.read(table.absentBoundAddress(), table.index().rkey(), bound, 0, 8)
                    .map(v -> new Lookup(0, bound.getLong(0)));
            });
        });
    }

    /**
     * Each lookup READs into its own bucket buffer: lookups of one loop run concurrently. With {@code bound}, the
     * absent bound is READ into it in the same doorbell, after the bucket.
     */
    private Future<Long> probeBucket(final RdmaChannel ch, final long key, final int probe, final UnsafeBuffer bucket,
                                     final UnsafeBuffer bound) {
        if (probe == HashIndexLayout.MAX_PROBE_BUCKETS) {
            return Future.succeededFuture(0L);
        }
        reads++;
        final Future<?> read;
        if (bound == null) {
            read = ch.read(table.bucketAddress(key, probe), table.index().rkey(), bucket, 0,
                HashIndexLayout.BUCKET_BYTES);
        } else {
            reads++;
            final io.scythe.bridge.Doorbell batch = ch.doorbell();
            batch.read(table.bucketAddress(key, probe), table.index().rkey(), bucket, 0, HashIndexLayout.BUCKET_BYTES);
            batch.read(table.absentBoundAddress(), table.index().rkey(), bound, 0, 8);
            read = batch.post();
        }
        return read.compose(v -> {
            final long found = HashIndex.search(bucket, 0, key);
            return found == HashIndex.NOT_FOUND ? probeBucket(ch, key, probe + 1, bucket, bound)
                : Future.succeededFuture(found);
        });
    }

    private Future<Long> walkSkipList(final RdmaChannel ch, final long key) {
        final Walk walk = new Walk(ch, key);
        return walk.read(SkipListLayout.HEAD_OFFSET).compose(v -> walk.step(SkipListLayout.MAX_LEVEL - 1));
    }

    /** One-sided skip-list search: the node at hand, and the next node at each level, READ as needed. */
    private final class Walk {
        private final RdmaChannel ch;
        private final long key;
        private final UnsafeBuffer node = new UnsafeBuffer(new byte[SkipListLayout.MAX_NODE_BYTES]);
        private final UnsafeBuffer next = new UnsafeBuffer(new byte[SkipListLayout.MAX_NODE_BYTES]);

        Walk(final RdmaChannel ch, final long key) {
            this.ch = ch;
            this.key = key;
        }

        Future<Void> read(final long offset) {
            return readInto(node, offset);
        }

        private Future<Void> readInto(final UnsafeBuffer into, final long offset) {
            reads++;
            final int bytes = (int) Math.min(SkipListLayout.MAX_NODE_BYTES, table.index().length() - offset);
            return ch.read(table.index().addressOf(offset, bytes), table.index().rkey(), into, 0, bytes);
        }

        Future<Long> step(final int level) {
            final long nextOffset = node.getLong(SkipListLayout.nextOffset(level));
            if (nextOffset == 0) {
                return level == 0 ? Future.succeededFuture(0L) : step(level - 1);
            }
            return readInto(next, nextOffset).compose(v -> {
                final long nextKey = next.getLong(SkipListLayout.KEY_OFFSET);
                if (nextKey < key) {
                    node.putBytes(0, next, 0, SkipListLayout.MAX_NODE_BYTES); // move right
                    return step(level);
                }
                if (level > 0) {
                    return step(level - 1);
                }
                final long address = next.getLong(SkipListLayout.ADDRESS_OFFSET);
                return Future.succeededFuture(nextKey == key && HashIndexLayout.live(address) ? address : 0L);
            });
        }
    }

    /** READs issued for one-sided lookups. */
    public long reads() {
        return reads;
    }

    /** Lookup RPCs issued. */
    public long rpcs() {
        return rpcs;
    }
}
