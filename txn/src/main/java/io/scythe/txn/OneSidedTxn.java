package io.scythe.txn;

import io.scythe.bridge.Doorbell;
import io.scythe.bridge.RdmaChannel;
import io.scythe.storage.ObjectLayout;
import io.scythe.storage.remote.RemoteTable;
import io.vertx.core.Future;
import org.agrona.DirectBuffer;
import org.agrona.concurrent.UnsafeBuffer;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Function;

/**
 * What the one-sided protocols share: finding an object (address cache, then a lookup RPC), READing it whole
 * (header and value in one READ, as {@link ObjectLayout} intends), buffering writes, and writing them back per
 * memory node with one doorbell. Subclasses decide when to lock, what to check, and how to release.
 *
 * <p>Known limits, for the reviewer's list:
 * <ul>
 *   <li>Torn reads: on a real NIC one READ of header and value is atomic per cache line only; a READ that took the
 *       header after a commit and the value before it would pass validation with a stale value. The emulated
 *       fabric executes a READ in one copy on one thread and benchmarks run one loop, so it does not happen here;
 *       on hardware it needs FaRM's per-cache-line versions or the value re-read under the header check.</li>
 *   <li>Write-back overwrites the object in place and bypasses the memory node's version chain, so MN-side snapshot
 *       reads ({@code Table.readAt}) do not see the history of tables written one-sided.</li>
 *   <li>No redo log yet (the recovery issue): a write-back batch that fails leaves its commit in doubt.</li>
 * </ul>
 */
public abstract class OneSidedTxn implements Txn {
    protected final TxnRuntime runtime;
    protected final long id;
    protected final List<Access> accesses = new ArrayList<>(4);
    protected boolean finished;
    private final long[] stageNanos = new long[Stage.values().length];
    private long stageMark;
    /** The version the write-back installed (for the history recorder). */
    private long versionMade;

    protected OneSidedTxn(final TxnRuntime runtime) {
        this.runtime = runtime;
        this.id = runtime.nextTxnId();
        this.stageMark = runtime.timers().nowNs();
    }

    /** Ends {@code stage} now: the time since the previous mark is its. */
    protected final void mark(final Stage stage) {
        final long now = runtime.timers().nowNs();
        stageNanos[stage.ordinal()] += now - stageMark;
        stageMark = now;
    }

    /** {@code future}, marking the end of {@code stage} when it completes. */
    protected final <T> Future<T> staged(final Stage stage, final Future<T> future) {
        return future.andThen(ar -> mark(stage));
    }

    @Override
    public long[] stageNanos() {
        return stageNanos;
    }

    /** What this attempt read and wrote, read-only: for history recorders (the simulator's checker hook). */
    public final List<Access> accesses() {
        return java.util.Collections.unmodifiableList(accesses);
    }

    protected final Access find(final String table, final long key) {
        for (final Access a : accesses) {
            if (a.key == key && a.table.equals(table)) {
                return a;
            }
        }
        return null;
    }

    /** The access of {@code key}, new (pointer looked up, nothing read yet) when this attempt has not touched it. */
    protected final Future<Access> locate(final String table, final long key) {
        if (finished) {
            return Future.failedFuture(new IllegalStateException("transaction " + id + " is over"));
        }
        final Access known = find(table, key);
        if (known != null) {
            return Future.succeededFuture(known);
        }
        final Catalog.Partition partition;
        try {
            partition = runtime.catalog().table(table).partitionOf(key);
        } catch (final UnknownKeyException e) {
            return Future.failedFuture(e);
        }
        final RemoteTable remote = runtime.remote(partition);
        return remote.lookup(key, RemoteTable.LookupMode.RPC).compose(pointer -> {
            if (pointer == 0) {
                return Future.failedFuture(new UnknownKeyException("no key " + key + " in table " + table));
            }
            final Access existing = find(table, key); // a concurrent operation of this attempt may have added it
            if (existing != null) {
                return Future.succeededFuture(existing);
            }
            final Access a = new Access(table, key, partition);
            a.pointer = pointer;
            a.image = new UnsafeBuffer(new byte[a.slotBytes()]);
            accesses.add(a);
            return Future.succeededFuture(a);
        });
    }

    /** READs the whole object into the access's image and checks it is still the key's (not reused, not deleted). */
    protected final Future<Access> readImage(final Access a) {
        return runtime.channel(a.partition.node()).compose(ch -> ch.read(a.address(), a.rkey(), a.image, 0,
            a.slotBytes())).compose(v -> checkedImage(a));
    }

    /** Checks the image just READ is still the key's (not reused, not deleted) and records its version. */
    protected final Future<Access> checkedImage(final Access a) {
        final int incarnation = a.image.getShort(ObjectLayout.INCARNATION_OFFSET) & 0xffff;
        if (incarnation != ObjectLayout.incarnationOf(a.pointer)) {
            runtime.remote(a.partition).invalidate(a.key);
            return Future.failedFuture(new AbortException(AbortReason.VALIDATION, "key " + a.key + " of " + a.table
                + " moved (stale cached address)"));
        }
        if ((a.image.getShort(ObjectLayout.FLAGS_OFFSET) & ObjectLayout.FLAG_DELETED) != 0) {
            return Future.failedFuture(new UnknownKeyException("key " + a.key + " of " + a.table + " is deleted"));
        }
        a.valueLength = a.image.getInt(ObjectLayout.VALUE_LENGTH_OFFSET);
        if (a.valueLength < 0 || a.valueLength > a.slotBytes() - ObjectLayout.HEADER_BYTES) {
            return Future.failedFuture(new AbortException(AbortReason.VALIDATION, "torn read of key " + a.key));
        }
        a.readVersion = a.version();
        a.fetched = true;
        return Future.succeededFuture(a);
    }

    @Override
    public void write(final String table, final long key, final DirectBuffer value, final int offset,
                      final int length) {
        final Access a = find(table, key);
        if (a == null || !a.fetched) {
            throw new IllegalStateException("write of key " + key + " of " + table + " before reading it");
        }
        final int max = a.slotBytes() - ObjectLayout.HEADER_BYTES;
        if (length < 0 || length > max || (a.partition.descriptor().schema().fixedSize() && length != max)) {
            throw new IllegalArgumentException("value of " + length + " bytes for table " + table + " (values are "
                + (a.partition.descriptor().schema().fixedSize() ? "exactly " : "at most ") + max + " bytes)");
        }
        if (a.newValue == null || a.newValue.capacity() < length) {
            a.newValue = new UnsafeBuffer(new byte[max]);
        }
        a.newValue.putBytes(0, value, offset, length);
        a.newLength = length;
        a.dirty = true;
    }

    /**
     * Writes every dirty access back with the new {@code version}, then {@code release} for each access it applies
     * to (e.g. the unlock), one doorbell per memory node; value first, then version, then release, on one QP, so the
     * release is seen last.
     */
    protected final Future<Void> writeBack(final long version, final Function<Access, Boolean> needsRelease,
                                           final ReleaseVerb release) {
        versionMade = version;
        final Map<String, List<Access>> byNode = new HashMap<>();
        for (final Access a : accesses) {
            if (a.dirty || needsRelease.apply(a)) {
                byNode.computeIfAbsent(a.partition.node(), n -> new ArrayList<>()).add(a);
            }
        }
        // The point of no return: the releases are in these batches, so nothing may release these locks again
        // (a second FAA on upper would hand one lock to two holders). A batch that fails leaves the commit in doubt,
        // which the redo log of the recovery issue settles; it is reported as a failure, not an abort.
        for (final List<Access> node : byNode.values()) {
            for (final Access a : node) {
                a.releasing = needsRelease.apply(a);
            }
        }
        for (final Access a : accesses) {
            if (a.releasing) {
                a.locked = false;
            }
        }
        final List<Future<Doorbell>> posted = new ArrayList<>(byNode.size());
        for (final Map.Entry<String, List<Access>> e : byNode.entrySet()) {
            posted.add(runtime.channel(e.getKey()).compose(ch -> {
                final Doorbell batch = ch.doorbell();
                for (final Access a : e.getValue()) {
                    if (a.dirty) {
                        batch.write(a.address() + ObjectLayout.VALUE_OFFSET, a.rkey(), a.newValue, 0, a.newLength);
                        if (a.newLength != a.valueLength) {
                            final UnsafeBuffer length = new UnsafeBuffer(new byte[4]);
                            length.putInt(0, a.newLength);
                            batch.write(a.address() + ObjectLayout.VALUE_LENGTH_OFFSET, a.rkey(), length, 0, 4);
                        }
                        final UnsafeBuffer v = new UnsafeBuffer(new byte[8]);
                        v.putLong(0, version);
                        batch.write(a.address() + ObjectLayout.VERSION_OFFSET, a.rkey(), v, 0, 8);
                    }
                    if (a.releasing) {
                        release.add(batch, a);
                    }
                }
                return batch.post();
            }));
        }
        return Future.all(posted).mapEmpty();
    }

    /** Adds the verb that releases {@code a}'s lock to a write-back batch. */
    @FunctionalInterface
    protected interface ReleaseVerb {
        void add(Doorbell batch, Access a);
    }

    /** One-sided READ of the 64-byte header of {@code a} into a fresh buffer (validation). */
    protected final Future<UnsafeBuffer> readHeader(final Access a) {
        final UnsafeBuffer header = new UnsafeBuffer(new byte[ObjectLayout.HEADER_BYTES]);
        return runtime.channel(a.partition.node()).compose(ch -> ch.read(a.address(), a.rkey(), header, 0,
            ObjectLayout.HEADER_BYTES)).map(header);
    }

    protected final Future<RdmaChannel> channel(final Access a) {
        return runtime.channel(a.partition.node());
    }

    /** The value of {@code a} as this attempt sees it (its own write, else what it read), as a copy. */
    protected static UnsafeBuffer valueCopy(final Access a) {
        if (a.dirty) {
            final UnsafeBuffer mine = new UnsafeBuffer(new byte[a.newLength]);
            mine.putBytes(0, a.newValue, 0, a.newLength);
            return mine;
        }
        final UnsafeBuffer copy = new UnsafeBuffer(new byte[a.valueLength]);
        copy.putBytes(0, a.image, ObjectLayout.VALUE_OFFSET, a.valueLength);
        return copy;
    }

    /** {@code a}'s fetch, started by {@code start} unless one is in flight or done already. */
    protected static Future<Access> once(final Access a, final Function<Access, Future<Access>> start) {
        if (a.fetch == null || a.fetch.failed()) {
            a.fetch = start.apply(a);
        }
        return a.fetch;
    }

    /** Waits for every future (so nothing of the attempt is left in flight), then fails with the first failure. */
    protected static Future<Void> settle(final List<? extends Future<?>> futures) {
        if (futures.isEmpty()) {
            return Future.succeededFuture();
        }
        return Future.join(futures).transform(ar -> {
            for (final Future<?> f : futures) {
                if (f.failed()) {
                    return Future.failedFuture(f.cause());
                }
            }
            return Future.succeededFuture();
        });
    }

    /**
     * Gives the attempt up: releases, with {@code release}, every lock it holds (each exactly once), and waits for
     * the releases. Idempotent: the protocols' {@code abort()}.
     */
    protected final Future<Void> releaseHeld(final Function<Access, Future<?>> release) {
        if (finished) {
            return Future.succeededFuture();
        }
        finished = true;
        final List<Future<?>> releases = new ArrayList<>();
        for (final Access a : accesses) {
            if (a.locked) {
                a.locked = false;
                releases.add(release.apply(a));
            }
        }
        return settle(releases);
    }

    /**
     * A commit's outcome: on success the attempt is over and its write-back released its locks; on failure it is
     * aborted (what it still holds released) and the failure passed on.
     */
    protected final <T> Future<T> finishCommit(final Future<T> commit) {
        return commit.onSuccess(v -> {
            finished = true;
            for (final Access a : accesses) {
                a.locked = false;
            }
            final HistoryRecorder recorder = runtime.recorder();
            if (recorder != null) {
                recorder.committed(id, v instanceof Long ts ? ts : 0, versionMade, accesses);
            }
        }).recover(e -> abort().transform(ignored -> Future.failedFuture(e)));
    }
}
