package io.scythe.txn.recovery;

import io.scythe.bridge.Doorbell;
import io.scythe.storage.ObjectLayout;
import io.scythe.storage.remote.LogDbRpc;
import io.scythe.storage.remote.RemoteTable;
import io.scythe.txn.Catalog;
import io.scythe.txn.TxnRuntime;
import io.scythe.txn.onesided.Reposts;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import org.agrona.concurrent.UnsafeBuffer;

import java.util.ArrayList;
import java.util.List;

/**
 * Re-replicates the copies of a rejoining memory node ({@code MemoryNodeConfiguration#rejoin}): every key of each
 * partition it holds a copy of is copied from the serving primary onto it, so that once this finishes the copy
 * equals its primary and may count as a full backup ({@code MemoryNodeConfiguration#rejoined}). Loop-confined.
 *
 * <p><b>Why the copy cannot overwrite a newer commit.</b> From the rejoin epoch on, every commit writes the new copy
 * too, while holding its lock on the primary (backups are written before the primary is released, {@code
 * onesided.Replicas}); commits decided in an older epoch do not write it, so this must start only once they are
 * drained ({@link Catalog#inFlightBefore}; in cluster mode on every compute node). Each key is then copied by
 * <i>copy-then-verify</i> (a seqlock over the primary), not by a rewrite transaction per key: a rewrite through the
 * protocol would write only what a write-back writes (value and version; the length and flags only when they
 * change), which leaves a fresh copy's deleted placeholder reading as deleted, and it would bump every version.
 * <ol>
 *   <li>R1: one READ of the primary's object (header and value); while it is locked (a Takeout ticket held or queued,
 *       a CAS word taken) or busy, wait and read again;</li>
 *   <li>W: the whole image onto the new copy (located by LOCATE, which creates the slot when it has none): the
 *       version, protocol word, length, flags (a tombstone stays one: deleted keys are copied as deleted) and value,
 *       the lock words zero and no older version (what a backup has: its lock words were the old life's, and a copy
 *       promoted later must not find stale tickets or CAS words);</li>
 *   <li>R2, after W completed: the primary's header again. The same version, still unlocked: done. Otherwise again
 *       from R1.</li>
 * </ol>
 * A commit that wrote the new copy between R1 and R2 locked the primary after R1 (it was unlocked then, and every
 * commit writes the backups under the lock), so at R2 it either still holds the lock or has installed a higher
 * version (versions strictly increase, {@code ObjectLayout#versionAfter}): either way the key is copied again. A
 * commit that locks after R2 writes the new copy after W landed. So W never leaves an older image over a newer one.
 *
 * <p><b>Aurogon</b> (issue 20/23), whose commits lock no header (MV T/O: pending versions live in the primary's
 * participant, the object holds the newest committed version, written under LogDB's seqlock): R1 and R2 as above
 * (the busy bit and the version catch a write-through racing the read), and W by the module
 * ({@link io.scythe.txn.spi.ReplicaWrite}): a COPY request the new copy applies by the APPLY rule on its own loop
 * (never over a newer version), so the copy and the APPLYs of the rejoin epoch's commits commute. R2 still copies
 * again a key whose primary committed a newer version meanwhile (its APPLY may come later, or be held until a
 * recovery). No rts is copied: a backup keeps none, a promotion floors every version's. A version pending in the
 * primary's participant does not show in the object, and its commit (by a recovery, or a coordinator of an older
 * configuration) never writes the new copy: R1 asks the module ({@link io.scythe.txn.spi.ReplicaWrite#unsettled},
 * Aurogon's PENDING) and treats one as a lock.
 *
 * <p>Keys come from the primary's memory node ({@link LogDbRpc#KEYS}, paged). A key inserted after the rejoin epoch
 * is written to the new copy by its commit (as an insert: its full image); a key the primary freed (an abandoned
 * insert's slot reclaimed) is not copied, and a stale object the new copy held for it from an older life stays
 * there (reading as that old value if promoted): the limit of re-using a copy's memory rather than starting empty.
 */
public final class ReReplicator {
    /** Pause before reading a locked primary object again. */
    private static final long LOCKED_PAUSE_NS = 50_000;
    /** Keys of one copy copied at a time (each its own R1, W, R2: independent of the others). */
    private static final int WINDOW = 8;
    /** Most reads of one key before giving up (a key locked that long is held by a dead node: recover it first). */
    private static final int MAX_TRIES = 200_000;

    /** What a run did: per-copy totals and the time it took. */
    public record Report(int copies, long keys, long retries, long nanos) {
    }

    private final TxnRuntime runtime;
    /** The protocol whose objects are copied: its {@code objectRoom} (Motor's CVT and records) is copied too. */
    private final io.scythe.txn.Protocol protocol;
    private long keys;
    private long retries;
    private java.util.function.BiFunction<String, Long, Future<Void>> beforeWrite = (table, key) ->
        Future.succeededFuture();

    /**
     * The protocols whose commits hold their lock in the primary object's header (a Takeout ticket or a CAS word)
     * while they write the backups: R2 sees such a commit. Motor's too, SR and SI (the CAS word; what it keeps beyond the value,
     * its CVT, is the protocol's {@code objectRoom}, copied in W from R1's image). Protocols that lock elsewhere
     * (lock tables on memory or compute nodes, SELCC's latches and cached lines) could write the new copy with the
     * primary still reading "unlocked, same version", so the copy is refused for them.
     */
    public static final java.util.Set<String> HEADER_LOCKED = java.util.Set.of("scythe", "scythe-occ", "ford-occ",
        "farm-occ", "motor", "motor-si");

    /**
     * Whether {@code protocol}, a registered name or one followed by {@code :} and its options (e.g.
     * {@code motor:versions=3}), is {@link #HEADER_LOCKED}: the options do not move where its commits lock.
     */
    public static boolean headerLocked(final String protocol) {
        final int colon = protocol.indexOf(':');
        return HEADER_LOCKED.contains(colon > 0 ? protocol.substring(0, colon) : protocol);
    }

    /**
     * Whether a copy of {@code protocol}'s objects can be re-replicated: {@link #headerLocked}, or its module writes
     * the new copy its own way ({@link io.scythe.txn.spi.ProtocolModule#replicaWrite}: Aurogon).
     */
    public static boolean supported(final String protocol) {
        return headerLocked(protocol) || replicaWriteOf(protocol) != null;
    }

    private static io.scythe.txn.spi.ReplicaWrite replicaWriteOf(final String protocol) {
        final io.scythe.txn.spi.ProtocolModule module = io.scythe.txn.spi.ProtocolRegistry.moduleOf(protocol);
        return module == null ? null : module.replicaWrite(io.scythe.txn.spi.ProtocolRegistry.protocol(protocol));
    }

    /** The module's own W step, or null for the one-sided image write. */
    private final io.scythe.txn.spi.ReplicaWrite replicaWrite;

    /**
     * A copier for {@code protocol}'s objects on {@code runtime}'s loop; refused unless it is {@link #HEADER_LOCKED} or
     * its module writes the copy its own way ({@link #supported}).
     */
    public ReReplicator(final TxnRuntime runtime, final String protocol) {
        this.replicaWrite = headerLocked(protocol) ? null : replicaWriteOf(protocol);
        if (!headerLocked(protocol) && replicaWrite == null) {
            throw new IllegalArgumentException("re-replication by copy-then-verify needs a protocol whose commits lock "
                + "the primary object's header (" + String.join(", ", new java.util.TreeSet<>(HEADER_LOCKED))
                + ") or whose module writes the copy itself (ProtocolModule#replicaWrite), not " + protocol
                + ": its commits lock elsewhere, so a copy could miss one");
        }
        this.runtime = runtime;
        this.protocol = io.scythe.txn.spi.ProtocolRegistry.protocol(protocol);
    }

    /**
     * Runs {@code hook} (table name as loaded, key) between each key's R1 and W, and waits for it: for tests, to commit a write
     * of that key in the window the verification (R2) has to catch.
     */
    public ReReplicator beforeWrite(final java.util.function.BiFunction<String, Long, Future<Void>> hook) {
        this.beforeWrite = hook;
        return this;
    }

    /**
     * Copies every key of each partition with a backup on {@code node} from its primary, in configuration
     * {@code epoch} (the rejoin's). Fails when the configuration changes meanwhile (run it again in the new one) or
     * when a commit of an older epoch is still in flight on this compute node (the caller waits for the drain).
     */
    public Future<Report> copyOnto(final String node, final long epoch) {
        final Catalog catalog = runtime.catalog();
        if (catalog.epoch() != epoch) {
            return Future.failedFuture(new IllegalStateException("re-replication of " + node + " for epoch " + epoch
                + ", but the configuration applied is epoch " + catalog.epoch()));
        }
        if (catalog.inFlightBefore(epoch) > 0) {
            return Future.failedFuture(new IllegalStateException("re-replication of " + node + ": "
                + catalog.inFlightBefore(epoch) + " commit(s) of an epoch before " + epoch + " still in flight; they do "
                + "not write the rejoining copy, so the copy must wait for them to drain"));
        }
        final long start = runtime.timers().nowNs();
        final List<Future<Void>> all = new ArrayList<>();
        for (final Catalog.Table t : catalog.tables()) {
            for (final Catalog.Partition p : t.partitions()) {
                for (final Catalog.Replica b : p.backups()) {
                    if (b.node().equals(node)) {
                        all.add(copyPartition(p, b, epoch, 0));
                    }
                }
            }
        }
        if (all.isEmpty()) {
            return Future.failedFuture(new IllegalStateException("memory node " + node + " holds no serving backup "
                + "in epoch " + epoch + ": nothing to re-replicate (did it rejoin?)"));
        }
        return Future.all(all).map(v -> new Report(all.size(), keys, retries, runtime.timers().nowNs() - start));
    }

    /** Copies the partition's keys from the {@code skip}-th on, a page at a time. */
    private Future<Void> copyPartition(final Catalog.Partition p, final Catalog.Replica copy, final long epoch,
                                       final long skip) {
        return runtime.remote(p).keys(skip, LogDbRpc.KEYS_MAX).compose(page -> copyKeys(p, copy, epoch, page.keys(), 0)
            .compose(v -> skip + page.keys().length < page.total() && page.keys().length > 0
                ? copyPartition(p, copy, epoch, skip + page.keys().length) : Future.succeededFuture()));
    }

    private Future<Void> copyKeys(final Catalog.Partition p, final Catalog.Replica copy, final long epoch,
                                  final long[] page, final int i) {
        if (i == page.length) {
            return Future.succeededFuture();
        }
        if (runtime.catalog().epoch() != epoch) {
            return Future.failedFuture(new IllegalStateException("the memory-node configuration changed from epoch "
                + epoch + " to " + runtime.catalog().epoch() + " during the re-replication of " + copy.node()
                + ": run it again in the new configuration"));
        }
        final int end = Math.min(page.length, i + WINDOW);
        final List<Future<Void>> copied = new ArrayList<>(end - i);
        for (int k = i; k < end; k++) {
            copied.add(copyKey(p, copy, page[k], 0));
        }
        return Future.all(copied).compose(v -> {
            keys += end - i;
            return copyKeys(p, copy, epoch, page, end);
        });
    }

    /**
     * One key: R1, W, R2 (see the class comment), again until R2 finds the primary as R1 did. The tries run one after
     * another from a callback, each a future of its own (not each nested in the one before: a key held for thousands
     * of tries, e.g. an Aurogon version pending in doubt until a recovery, completed a chain that deep by recursion
     * and overflowed the stack, losing the completion: the copy never ended).
     */
    private Future<Void> copyKey(final Catalog.Partition p, final Catalog.Replica copy, final long key,
                                 final int tries) {
        final Promise<Void> done = Promise.promise();
        copyKey(p, copy, key, tries, done);
        return done.future();
    }

    private void copyKey(final Catalog.Partition p, final Catalog.Replica copy, final long key, final int tries,
                         final Promise<Void> done) {
        if (tries >= MAX_TRIES) {
            done.fail(new IllegalStateException("key " + key + " of " + p.descriptor().schema().name()
                + " on " + p.node() + " stayed locked or changing over " + MAX_TRIES + " reads: is its holder dead and "
                + "not recovered?"));
            return;
        }
        if (tries > 0) {
            retries++;
        }
        copyOnce(p, copy, key).onComplete(ar -> {
            if (ar.failed()) {
                done.fail(ar.cause());
            } else if (ar.result()) {
                done.complete();
            } else {
                copyKey(p, copy, key, tries + 1, done);
            }
        });
    }

    /** One try of {@link #copyKey}: whether it copied the key (or found it freed), false to try again. */
    private Future<Boolean> copyOnce(final Catalog.Partition p, final Catalog.Replica copy, final long key) {
        final RemoteTable primary = runtime.remote(p);
        final int maxValue = p.descriptor().schema().maxValueBytes();
        final int room = protocol.objectRoom(p.descriptor().schema());
        final UnsafeBuffer image = new UnsafeBuffer(new byte[room == 0 ? ObjectLayout.HEADER_BYTES + maxValue
            : ObjectLayout.slotBytes(maxValue) + room]);
        return primary.lookupRpc(key).compose(pointer -> {
            if (pointer == 0) {
                return Future.succeededFuture(true); // freed on the primary since the page was listed: nothing to copy
            }
            final long address = ObjectLayout.addressOf(pointer);
            final int rkey = p.descriptor().objects().rkey();
            return runtime.channel(p.node()).compose(ch -> ch.read(address, rkey, image, 0, image.capacity()))
                .compose(v -> {
                    final int length = image.getInt(ObjectLayout.VALUE_LENGTH_OFFSET);
                    if (unsettled(image) || incarnation(image) != ObjectLayout.incarnationOf(pointer)
                        || length < 0 || length > maxValue) {
                        return runtime.timers().after(LOCKED_PAUSE_NS).map(x -> false);
                    }
                    if (replicaWrite == null) {
                        return writeAndVerify(p, copy, key, address, rkey, image, length, maxValue, room);
                    }
                    // A write under way the object does not show (Aurogon: a version pending in the primary's
                    // participant) is a lock too: its commit may never write the new copy (issue 20/23 review).
                    return replicaWrite.unsettled(runtime, p, key).compose(busy -> busy
                        ? runtime.timers().after(LOCKED_PAUSE_NS).map(x -> false)
                        : writeAndVerify(p, copy, key, address, rkey, image, length, maxValue, room));
                });
        });
    }

    /** W and R2 of a key whose R1 found it settled: whether R2 found the primary as R1 did. */
    private Future<Boolean> writeAndVerify(final Catalog.Partition p, final Catalog.Replica copy, final long key,
                                           final long address, final int rkey, final UnsafeBuffer image,
                                           final int length, final int maxValue, final int room) {
        final boolean deleted = (image.getShort(ObjectLayout.FLAGS_OFFSET) & ObjectLayout.FLAG_DELETED) != 0;
        return beforeWrite.apply(io.scythe.storage.BackupTables.primaryName(p.descriptor().schema()), key)
            .compose(x -> replicaWrite != null
                ? replicaWrite.write(runtime, copy, key, image.getLong(ObjectLayout.VERSION_OFFSET),
                deleted, new UnsafeBuffer(image, ObjectLayout.VALUE_OFFSET, length), length)
                : runtime.remote(copy).locateBackup(key, runtime.lookupMode())
                .compose(at -> write(copy, at, image, length, maxValue, room)))
            .compose(x -> verify(p, address, rkey, image));
    }

    /**
     * W: the primary's image at {@code pointer} of the new copy, lock words zero, no older version; and the object's
     * {@code room} bytes after its slot (the protocol's own state: Motor's CVT and version records, read in R1 with the
     * header, so R2 covers them: a commit writes them under the lock).
     */
    private Future<Void> write(final Catalog.Replica copy, final long pointer, final UnsafeBuffer image,
                               final int length, final int maxValue, final int room) {
        final long address = ObjectLayout.addressOf(pointer);
        final int rkey = copy.descriptor().objects().rkey();
        final UnsafeBuffer out = new UnsafeBuffer(new byte[ObjectLayout.HEADER_BYTES + length]);
        out.putBytes(0, image, 0, ObjectLayout.HEADER_BYTES + length);
        out.putLong(ObjectLayout.LOWER_OFFSET, 0);
        out.putLong(ObjectLayout.UPPER_OFFSET, 0);
        out.putLong(ObjectLayout.QUEUED_TS_OFFSET, 0);
        out.putLong(ObjectLayout.CAS_LOCK_OFFSET, 0);
        out.putLong(ObjectLayout.OLDER_OFFSET, 0);
        return Reposts.untilAccepted(runtime.timers(), () -> runtime.channel(copy.node()).compose(ch -> {
            final Doorbell batch = ch.doorbell();
            // Everything but the incarnation: that word numbers the new copy's own slot (its pointers' check).
            batch.write(address, rkey, out, 0, ObjectLayout.INCARNATION_OFFSET);
            if (length > 0) {
                batch.write(address + ObjectLayout.VALUE_OFFSET, rkey, out, ObjectLayout.VALUE_OFFSET, length);
            }
            if (room > 0) {
                batch.write(address + ObjectLayout.slotBytes(maxValue), rkey, image, ObjectLayout.slotBytes(maxValue),
                    room);
            }
            return batch.post();
        })).mapEmpty();
    }

    /** R2: whether the primary still has R1's version and incarnation, and nobody holds or queues on it. */
    private Future<Boolean> verify(final Catalog.Partition p, final long address, final int rkey,
                                   final UnsafeBuffer first) {
        final UnsafeBuffer header = new UnsafeBuffer(new byte[ObjectLayout.HEADER_BYTES]);
        return runtime.channel(p.node()).compose(ch -> ch.read(address, rkey, header, 0, ObjectLayout.HEADER_BYTES))
            .map(v -> !unsettled(header) && incarnation(header) == incarnation(first)
                && header.getLong(ObjectLayout.VERSION_OFFSET) == first.getLong(ObjectLayout.VERSION_OFFSET));
    }

    /** Locked (a ticket held or queued, a CAS word taken) or being rewritten (the busy bit). */
    private static boolean unsettled(final UnsafeBuffer header) {
        return header.getLong(ObjectLayout.LOWER_OFFSET) != header.getLong(ObjectLayout.UPPER_OFFSET)
            || header.getLong(ObjectLayout.CAS_LOCK_OFFSET) != 0
            || (header.getLong(ObjectLayout.VERSION_OFFSET) & ObjectLayout.VERSION_BUSY) != 0;
    }

    private static int incarnation(final UnsafeBuffer header) {
        return header.getShort(ObjectLayout.INCARNATION_OFFSET) & 0xffff;
    }
}
