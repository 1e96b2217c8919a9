package io.scythe.txn.onesided;

import io.scythe.storage.ObjectLayout;
import io.scythe.storage.remote.RemoteTable;
import io.scythe.txn.AbortException;
import io.scythe.txn.AbortReason;
import io.scythe.txn.Access;
import io.scythe.txn.Catalog;
import io.scythe.txn.TxnRuntime;
import io.scythe.txn.UnknownKeyException;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import org.agrona.concurrent.UnsafeBuffer;

import java.util.ArrayList;
import java.util.List;
import java.util.function.Function;

/**
 * What one attempt touched: finding an object (the loop's address cache, then a lookup by RPC or one-sided READs,
 * {@link TxnRuntime#lookupMode}), READing it whole
 * (header and value in one READ, as {@link ObjectLayout} intends), the keys it found absent, and the reads still in
 * flight. Loop-confined, one per attempt.
 */
public final class ReadSet {
    private final TxnRuntime runtime;
    /** The loop's spare buffers: images come from it, and go back to it once the attempt committed. */
    private final BufferPool pool;
    private final List<Access> accesses = new ArrayList<>(4);
    /** Keys this attempt found absent from the index: re-checked at commit ({@code Inserts#validateAbsent}). */
    private List<Access> absent;
    /** Reads of this attempt not finished yet (they may outlive an abort: the first failure ends the attempt). */
    private int readsInFlight;
    private Promise<Void> readsDone;

    public ReadSet(final TxnRuntime runtime) {
        this.runtime = runtime;
        this.pool = BufferPool.of(runtime);
    }

    /** The loop's spare buffers this attempt's images come from ({@link BufferPool}). */
    public BufferPool pool() {
        return pool;
    }

    /**
     * Gives the accesses' pooled buffers back to the loop's pool, for an attempt that committed ({@link BufferPool#recycle}),
     * unless a read is still in flight (then they stay garbage): answers whether it did.
     */
    public boolean recycle() {
        if (readsInFlight != 0) {
            return false;
        }
        pool.recycle(accesses);
        return true;
    }

    /** Every object the attempt touched (read, locked, inserted), in the order it first did. */
    public List<Access> accesses() {
        return accesses;
    }

    /** The keys it found absent from the index. */
    public List<Access> absent() {
        return absent == null ? List.of() : absent;
    }

    public Access find(final String table, final long key) {
        for (int i = 0; i < accesses.size(); i++) { // indexed: no iterator per lookup on the hot path
            final Access a = accesses.get(i);
            if (a.key == key && a.table.equals(table)) {
                return a;
            }
        }
        return null;
    }

    public Access findAbsent(final String table, final long key) {
        if (absent == null) {
            return null;
        }
        for (int i = 0; i < absent.size(); i++) {
            final Access a = absent.get(i);
            if (a.key == key && a.table.equals(table)) {
                return a;
            }
        }
        return null;
    }

    /** The access of {@code key}, new (pointer looked up, nothing read yet) when this attempt has not touched it. */
    public Future<Access> locate(final String table, final long key) {
        return locateThen(table, key, null);
    }

    /**
     * {@code Futures.then(locate(table, key), fetch)} without the completed future of an access known already or
     * found in the address cache: {@code fetch} of it is called at once (a throw fails the result, as there). A null
     * {@code fetch} is {@link #locate}.
     */
    public Future<Access> locateThen(final String table, final long key,
                                     final Function<Access, Future<Access>> fetch) {
        final Access known = find(table, key);
        if (known != null) {
            return fetched(known, fetch);
        }
        if (findAbsent(table, key) != null) {
            // Read as absent before: absent again (a repeatable read), and no second lookup that could find it
            // inserted since, which validation would then no longer see as this attempt's absent read.
            return Future.failedFuture(new UnknownKeyException("no key " + key + " in table " + table));
        }
        final Catalog.Partition partition;
        try {
            partition = runtime.catalog().table(table).partitionOf(key);
        } catch (final UnknownKeyException e) {
            return Future.failedFuture(e);
        }
        if (runtime.catalog().blocked(partition)) {
            return Future.failedFuture(Reconfigured.settling(partition, table, key));
        }
        final RemoteTable remote = runtime.remote(partition);
        final long cached = remote.cachedPointer(key);
        if (cached != 0) {
            // The address cache's hit, without the Lookup, Future and composition find() would make: the same access
            // at the same moment (a completed future's compose ran inline).
            return fetched(located(table, key, partition, cached), fetch);
        }
        final Future<Access> looked = remote.find(key, runtime.lookupMode()).compose(found -> {
            final long pointer = found.pointer();
            if (pointer == 0) {
                // An absent key of a read-only table stays absent: nothing to re-check at commit.
                if (!partition.descriptor().schema().readOnly() && findAbsent(table, key) == null) {
                    final Access missing = new Access(table, key, partition);
                    missing.readVersion = found.absentBound(); // the version read, if validation finds it missing
                    missing.readAbsent = true;
                    if (absent == null) {
                        absent = new ArrayList<>(2);
                    }
                    absent.add(missing);
                }
                return Future.failedFuture(new UnknownKeyException("no key " + key + " in table " + table));
            }
            final Access existing = find(table, key); // a concurrent operation of this attempt may have added it
            if (existing != null) {
                return Future.succeededFuture(existing);
            }
            return Future.succeededFuture(located(table, key, partition, pointer));
        });
        return fetch == null ? looked : Futures.then(looked, fetch);
    }

    /** {@code fetch} of {@code a}, found at once ({@code a} itself, completed, for a null {@code fetch}). */
    private static Future<Access> fetched(final Access a, final Function<Access, Future<Access>> fetch) {
        if (fetch == null) {
            return Future.succeededFuture(a);
        }
        try {
            return fetch.apply(a);
        } catch (final RuntimeException e) { // as Futures.then's
            return Future.failedFuture(e);
        }
    }

    /** A new access of {@code key} at {@code pointer}, added to the read set. */
    private Access located(final String table, final long key, final Catalog.Partition partition,
                           final long pointer) {
        final Access a = new Access(table, key, partition);
        a.pointer = pointer;
        a.image = pool.take(a.slotBytes()); // zeroed, as a new array
        a.pooledImage = a.image;
        accesses.add(a);
        return a;
    }

    /** READs the whole object into the access's image and checks it is still the key's (not reused, not deleted). */
    public Future<Access> readImage(final Access a) {
        return readImage(a, null);
    }

    /**
     * {@link #readImage(Access)}, then {@code refusal} of the checked image (or null): {@code readImage(a).compose(x
     * -> refused == null ? succeeded(x) : failed(refused))} with the READ's one promise, e.g. FaRM's read refusing a
     * locked object. {@code refusal} answers why the access is refused, or {@code null}; it must not throw.
     */
    public Future<Access> readImage(final Access a, final Function<Access, Throwable> refusal) {
        return readImage(a, a.slotBytes(), refusal);
    }

    /**
     * {@link #readImage(Access, Function)} of the first {@code bytes} of the object (more than its slot for a protocol
     * that keeps more behind it, e.g. Motor's CVT; the image must hold them).
     */
    public Future<Access> readImage(final Access a, final int bytes, final Function<Access, Throwable> refusal) {
        // read(...).compose(v -> checkedImage(a)) with one object: the READ's callback checks the image
        final ImageRead checked = new ImageRead(this, a, refusal);
        Verbs.read(runtime.channel(a.partition.node()), a.address(), a.rkey(), a.image, 0, bytes, checked);
        return checked;
    }

    /**
     * A READ of an access's image: its callback checks the image (and the refusal), and it is the future of the
     * checked access, one object where a promise and the callback's lambda were two per read. Without a context, as
     * {@code Promise.promise()}: its listeners run inline on completion.
     */
    private static final class ImageRead extends io.vertx.core.impl.future.FutureImpl<Access>
        implements io.scythe.bridge.VerbCallback {
        private final ReadSet reads;
        private final Access a;
        private final Function<Access, Throwable> refusal;

        ImageRead(final ReadSet reads, final Access a, final Function<Access, Throwable> refusal) {
            this.reads = reads;
            this.a = a;
            this.refusal = refusal;
        }

        @Override
        public void done(final long value, final Throwable failure) {
            Throwable bad;
            try { // a throw here would be swallowed by the verb's callback and leave the read pending for good
                bad = failure != null ? failure : reads.checkImage(a);
                if (bad == null && refusal != null) {
                    bad = refusal.apply(a);
                }
            } catch (final RuntimeException e) {
                bad = e;
            }
            if (bad == null) {
                tryComplete(a);
            } else {
                tryFail(bad);
            }
        }
    }

    /** Checks the image just READ is still the key's (not reused, not deleted) and records its version. */
    public Future<Access> checkedImage(final Access a) {
        final Throwable bad = checkImage(a);
        return bad == null ? Future.succeededFuture(a) : Future.failedFuture(bad);
    }

    /**
     * {@link #checkedImage} without its future: {@code null} when the image is the key's (its version recorded), else
     * why not.
     */
    public Throwable checkImage(final Access a) {
        final int incarnation = a.image.getShort(ObjectLayout.INCARNATION_OFFSET) & 0xffff;
        if (incarnation != ObjectLayout.incarnationOf(a.pointer)) {
            runtime.remote(a.partition).invalidate(a.key);
            return new AbortException(AbortReason.VALIDATION, "key " + a.key + " of " + a.table
                + " moved (stale cached address)");
        }
        a.deleted = (a.image.getShort(ObjectLayout.FLAGS_OFFSET) & ObjectLayout.FLAG_DELETED) != 0;
        a.readAbsent = a.deleted;
        if (a.deleted) {
            // Kept in the read set: validation checks it is still deleted at commit, as any read is checked.
            a.valueLength = 0;
            a.readVersion = a.version();
            a.fetched = true;
            return null;
        }
        a.valueLength = a.image.getInt(ObjectLayout.VALUE_LENGTH_OFFSET);
        if (a.valueLength < 0 || a.valueLength > a.slotBytes() - ObjectLayout.HEADER_BYTES) {
            return new AbortException(AbortReason.VALIDATION, "torn read of key " + a.key);
        }
        a.readVersion = a.version();
        a.fetched = true;
        return null;
    }

    /** One-sided READ of the 64-byte header of {@code a} into a fresh buffer (validation). */
    public Future<UnsafeBuffer> readHeader(final Access a) {
        final UnsafeBuffer header = new UnsafeBuffer(new byte[ObjectLayout.HEADER_BYTES]);
        return Futures.then(runtime.channel(a.partition.node()), ch -> ch.read(a.address(), a.rkey(), header, 0,
            ObjectLayout.HEADER_BYTES)).map(header);
    }

    /**
     * A validation READ of {@code a}'s header, checked by {@code check} (which throws to fail it): {@code
     * readHeader(a).map(h -> ...)} without the header's allocation, the mapping steps and the verb's promise. The
     * header lands in one of the loop's {@link HeaderBuffers}, given back once {@code check} ran: {@code check} must
     * not keep it.
     */
    public Future<Void> checkHeader(final Access a, final java.util.function.Consumer<UnsafeBuffer> check) {
        final HeaderBuffers buffers = HeaderBuffers.of(runtime);
        final UnsafeBuffer header = buffers.take();
        final HeaderCheck checked = new HeaderCheck(buffers, header, check);
        Verbs.read(runtime.channel(a.partition.node()), a.address(), a.rkey(), header, 0, ObjectLayout.HEADER_BYTES,
            checked);
        return checked;
    }

    /**
     * A validation READ of a header ({@link #checkHeader}): its callback runs the check and gives the buffer back, and
     * it is the check's future, one object where a promise and the callback's lambda were two per validated read.
     */
    private static final class HeaderCheck extends io.vertx.core.impl.future.FutureImpl<Void>
        implements io.scythe.bridge.VerbCallback {
        private final HeaderBuffers buffers;
        private final UnsafeBuffer header;
        private final java.util.function.Consumer<UnsafeBuffer> check;

        HeaderCheck(final HeaderBuffers buffers, final UnsafeBuffer header,
                    final java.util.function.Consumer<UnsafeBuffer> check) {
            this.buffers = buffers;
            this.header = header;
            this.check = check;
        }

        @Override
        public void done(final long value, final Throwable failure) {
            Throwable bad = failure;
            if (bad == null) {
                try {
                    check.accept(header);
                } catch (final Throwable e) { // as map: a throw fails the step
                    bad = e;
                }
            }
            buffers.giveBack(header); // the READ is done and the check ran: nothing uses the buffer any more
            if (bad == null) {
                tryComplete(null);
            } else {
                tryFail(bad);
            }
        }
    }

    /** {@code read}, counted as in flight until it completes ({@link #quiesced}). */
    public <T> Future<T> inFlight(final Future<T> read) {
        readsInFlight++;
        return new Futures.Relay<T>() {
            @Override
            protected void first() {
                readFinished();
            }
        }.relaying(read);
    }

    /**
     * {@code inFlight(fetched).map(value)} with one listener and one promise: {@code fetched} counted in flight until
     * it completes, then {@code value} of its access (a throw fails the result, as in {@code map}).
     */
    public <T> Future<T> inFlight(final Future<Access> fetched, final Function<Access, T> value) {
        readsInFlight++;
        final ValueOf<T> result = new ValueOf<>(this, value);
        fetched.onComplete(result);
        return result;
    }

    /**
     * {@link #inFlight(Future, Function)}'s one object: the fetch's listener and the future of the value (a promise
     * and a listener lambda before). Without a context, as {@code Promise.promise()}: its listeners run inline.
     */
    private static final class ValueOf<T> extends io.vertx.core.impl.future.FutureImpl<T>
        implements io.vertx.core.Completable<Access> {
        private final ReadSet reads;
        private final Function<Access, T> value;

        ValueOf(final ReadSet reads, final Function<Access, T> value) {
            this.reads = reads;
            this.value = value;
        }

        @Override
        public void complete(final Access a, final Throwable failure) {
            reads.readFinished();
            if (failure != null) {
                tryFail(failure);
                return;
            }
            final T v;
            try {
                v = value.apply(a);
            } catch (final Throwable e) {
                tryFail(e);
                return;
            }
            tryComplete(v);
        }
    }

    /** One read counted by {@link #inFlight} completed. */
    private void readFinished() {
        if (--readsInFlight == 0 && readsDone != null) {
            final Promise<Void> done = readsDone;
            readsDone = null;
            done.complete();
        }
    }

    /**
     * Completes when no read of this attempt is in flight. The coordinator waits for it before retrying an aborted
     * attempt: otherwise, under contention, each retry adds verbs while the abandoned ones still queue, and the
     * send queues grow without bound (the closed loop of clients is no longer closed).
     */
    public Future<Void> quiesced() {
        if (readsInFlight == 0) {
            return Future.succeededFuture();
        }
        if (readsDone == null) {
            readsDone = Promise.promise();
        }
        return readsDone.future();
    }

    /** Whether transactions only read {@code table} (TableSchema#readOnly); false for a table not in the catalog. */
    public boolean readOnlyTable(final String table) {
        try {
            return runtime.catalog().table(table).partitions().get(0).descriptor().schema().readOnly();
        } catch (final UnknownKeyException e) {
            return false; // the read itself reports the unknown table
        }
    }

    /** The value of {@code a} as this attempt sees it (its own write, else what it read), as a copy. */
    public static UnsafeBuffer valueCopy(final Access a) {
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
    public static Future<Access> once(final Access a, final Function<Access, Future<Access>> start) {
        if (a.fetch == null || a.fetch.failed()) {
            a.fetch = start.apply(a);
        }
        return a.fetch;
    }
}
