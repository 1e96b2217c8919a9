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
 * </ul>
 */
public abstract class OneSidedTxn implements Txn {
    protected final TxnRuntime runtime;
    protected final long id;
    protected final List<Access> accesses = new ArrayList<>(4);
    /** Inserts of keys this attempt has not touched otherwise: created by INSERT RPCs at commit. */
    private final List<PendingInsert> inserts = new ArrayList<>(2);
    /** Keys this attempt found absent from the index: re-checked at commit (validateAbsent). */
    private final List<Access> absent = new ArrayList<>(0);
    /** An insert of a key this attempt saw present: the commit aborts with DUPLICATE_KEY. */
    private String duplicate;
    protected boolean finished;
    private final long[] stageNanos = new long[Stage.values().length];
    private long stageMark;
    /**
     * Past the point of no return: the redo record is durable (or may be) or the write-back began. From here the
     * attempt is finished, or given up to recovery; never aborted, never retried.
     */
    private boolean decided;
    /** The history recorder was told this attempt is in doubt ({@link #giveUp}). */
    private boolean toldInDoubt;

    protected OneSidedTxn(final TxnRuntime runtime) {
        this.runtime = runtime;
        this.id = runtime.nextTxnId();
        this.stageMark = runtime.timers().nowNs();
    }

    /** This attempt's transaction id, unique in the cluster (memory nodes record it with its Takeout tickets). */
    public final long id() {
        return id;
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
        final RemoteTable remote = runtime.remote(partition);
        return remote.find(key).compose(found -> {
            final long pointer = found.pointer();
            if (pointer == 0) {
                // An absent key of a read-only table stays absent: nothing to re-check at commit.
                if (!partition.descriptor().schema().readOnly() && findAbsent(table, key) == null) {
                    final Access missing = new Access(table, key, partition);
                    missing.readVersion = found.absentBound(); // validateAbsent replaces it by what it sees
                    missing.readAbsent = true;
                    absent.add(missing);
                }
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
        a.deleted = (a.image.getShort(ObjectLayout.FLAGS_OFFSET) & ObjectLayout.FLAG_DELETED) != 0;
        a.readAbsent = a.deleted;
        if (a.deleted) {
            // Kept in the read set: validation checks it is still deleted at commit, as any read is checked.
            a.valueLength = 0;
            a.readVersion = a.version();
            a.fetched = true;
            return Future.succeededFuture(a);
        }
        a.valueLength = a.image.getInt(ObjectLayout.VALUE_LENGTH_OFFSET);
        if (a.valueLength < 0 || a.valueLength > a.slotBytes() - ObjectLayout.HEADER_BYTES) {
            return Future.failedFuture(new AbortException(AbortReason.VALIDATION, "torn read of key " + a.key));
        }
        a.readVersion = a.version();
        a.fetched = true;
        return Future.succeededFuture(a);
    }

    /**
     * The value of {@code key} as this attempt sees it: its own insert, else the object {@code fetch} brings (a
     * deleted one is "not found", {@link UnknownKeyException}, as an absent key is).
     */
    protected final Future<UnsafeBuffer> readVia(final String table, final long key,
                                                 final Function<Access, Future<Access>> fetch) {
        final PendingInsert own = findInsert(table, key);
        if (own != null) {
            final UnsafeBuffer copy = new UnsafeBuffer(new byte[own.value.capacity()]);
            copy.putBytes(0, own.value, 0, copy.capacity());
            return Future.succeededFuture(copy);
        }
        // A read refused for now (send queue or RRPC ring full) fails the attempt, which the coordinator retries
        // after its back-off (AbortReason.BACK_PRESSURE): waiting here instead let thousands of re-posts spin.
        return inFlight(locate(table, key).compose(fetch)).compose(a -> a.deleted && !a.reviving || a.deleting
            ? Future.failedFuture(new UnknownKeyException("key " + key + " of " + table + " is deleted"))
            : Future.succeededFuture(valueCopy(a)));
    }

    /** Reads of this attempt not finished yet (they may outlive an abort: the first failure ends the attempt). */
    private int readsInFlight;
    private io.vertx.core.Promise<Void> readsDone;

    private <T> Future<T> inFlight(final Future<T> read) {
        readsInFlight++;
        return read.andThen(ar -> {
            if (--readsInFlight == 0 && readsDone != null) {
                final io.vertx.core.Promise<Void> done = readsDone;
                readsDone = null;
                done.complete();
            }
        });
    }

    /**
     * Completes when no read of this attempt is in flight. The coordinator waits for it before retrying an aborted
     * attempt: otherwise, under contention, each retry adds verbs while the abandoned ones still queue, and the
     * send queues grow without bound (the closed loop of clients is no longer closed).
     */
    public final Future<Void> quiesced() {
        if (readsInFlight == 0) {
            return Future.succeededFuture();
        }
        if (readsDone == null) {
            readsDone = io.vertx.core.Promise.promise();
        }
        return readsDone.future();
    }

    /** Whether transactions only read {@code table} (TableSchema#readOnly); false for a table not in the catalog. */
    protected final boolean readOnlyTable(final String table) {
        try {
            return runtime.catalog().table(table).partitions().get(0).descriptor().schema().readOnly();
        } catch (final UnknownKeyException e) {
            return false; // the read itself reports the unknown table
        }
    }

    /**
     * A read of a read-only table, the same in every protocol: one READ, no lock, ticket or check of the lock word,
     * and no validation at commit (nobody writes it).
     */
    protected final Future<UnsafeBuffer> readOnlyRead(final String table, final long key) {
        return readVia(table, key, a -> once(a, this::readImage));
    }

    private static void refuseReadOnly(final String what, final String table, final Catalog.Table t) {
        if (t.partitions().get(0).descriptor().schema().readOnly()) {
            throw new IllegalStateException(what + " of table " + table + ", which is read-only to transactions");
        }
    }

    @Override
    public void write(final String table, final long key, final DirectBuffer value, final int offset,
                      final int length) {
        refuseReadOnly("write", table, runtime.catalog().table(table));
        final Access a = find(table, key);
        if (a == null || !a.fetched) {
            throw new IllegalStateException("write of key " + key + " of " + table + " before reading it");
        }
        if (a.deleted && !a.reviving || a.deleting) {
            throw new IllegalStateException("write of deleted key " + key + " of " + table + " (insert it)");
        }
        setNewValue(a, value, offset, length);
    }

    /** Checks {@code length} against the table's values: a clear error, nothing buffered, when it does not fit. */
    private static void checkLength(final String table, final Catalog.Partition partition, final int length) {
        final int max = partition.descriptor().objectSlotBytes() - ObjectLayout.HEADER_BYTES;
        final boolean fixed = partition.descriptor().schema().fixedSize();
        if (length < 0 || length > max || (fixed && length != partition.descriptor().schema().maxValueBytes())) {
            throw new IllegalArgumentException("value of " + length + " bytes for table " + table + " (values are "
                + (fixed ? "exactly " + partition.descriptor().schema().maxValueBytes()
                : "at most " + partition.descriptor().schema().maxValueBytes()) + " bytes)");
        }
    }

    private void setNewValue(final Access a, final DirectBuffer value, final int offset, final int length) {
        checkLength(a.table, a.partition, length);
        final int max = a.slotBytes() - ObjectLayout.HEADER_BYTES;
        if (a.newValue == null || a.newValue.capacity() < length) {
            a.newValue = new UnsafeBuffer(new byte[max]);
        }
        a.newValue.putBytes(0, value, offset, length);
        a.newLength = length;
        a.dirty = true;
    }

    /** An insert buffered until commit. */
    private record PendingInsert(String table, long key, Catalog.Partition partition, UnsafeBuffer value) {
    }

    private PendingInsert findInsert(final String table, final long key) {
        for (final PendingInsert p : inserts) {
            if (p.key == key && p.table.equals(table)) {
                return p;
            }
        }
        return null;
    }

    private Access findAbsent(final String table, final long key) {
        for (final Access a : absent) {
            if (a.key == key && a.table.equals(table)) {
                return a;
            }
        }
        return null;
    }

    @Override
    public void insert(final String table, final long key, final DirectBuffer value, final int offset,
                       final int length) {
        if (finished) {
            throw new IllegalStateException("transaction " + id + " is over");
        }
        final Catalog.Table t = runtime.catalog().table(table);
        refuseReadOnly("insert", table, t);
        final Catalog.Partition partition = t.partitionOf(key);
        checkLength(table, partition, length);
        final Access a = find(table, key);
        if (a != null) {
            if (!a.fetched) {
                throw new IllegalStateException("insert of key " + key + " of " + table + " while its read is in "
                    + "flight");
            }
            if (a.deleting) { // deleted and inserted again by this attempt: an update
                a.deleting = false;
                setNewValue(a, value, offset, length);
            } else if (a.deleted) { // over a delete it read: revived in place by the write-back, locked as a write
                a.reviving = true;
                setNewValue(a, value, offset, length);
            } else {
                duplicate = "key " + key + " of " + table + " exists";
            }
            return;
        }
        if (findInsert(table, key) != null) {
            duplicate = "key " + key + " of " + table + " inserted twice";
            return;
        }
        final UnsafeBuffer copy = new UnsafeBuffer(new byte[length]);
        copy.putBytes(0, value, offset, length);
        inserts.add(new PendingInsert(table, key, partition, copy));
    }

    @Override
    public void delete(final String table, final long key) {
        refuseReadOnly("delete", table, runtime.catalog().table(table));
        final PendingInsert own = findInsert(table, key);
        if (own != null) {
            inserts.remove(own); // inserted and deleted by this attempt: nothing (its absence stays validated)
            return;
        }
        final Access a = find(table, key);
        if (a == null || !a.fetched || a.deleted && !a.reviving) {
            throw new IllegalStateException("delete of key " + key + " of " + table + " before reading it (or "
                + "after reading it deleted)");
        }
        a.reviving = false;
        a.deleting = true;
        a.dirty = true; // locked at commit as any write
    }

    /** Whether the commit has anything to install: writes, deletes or inserts. */
    protected final boolean writesNothing() {
        return inserts.isEmpty() && duplicate == null && accesses.stream().noneMatch(a -> a.dirty);
    }

    /**
     * Whether this attempt inserted a key it saw present: its commit then locks and creates nothing (a lock or INSERT
     * in flight when the commit fails would be left held), and {@link #duplicateCommit} decides it.
     */
    protected final boolean sawDuplicate() {
        return duplicate != null;
    }

    /**
     * The commit of an attempt that {@link #sawDuplicate}: {@link AbortReason#DUPLICATE_KEY} if what it read is still
     * current ({@code validation}), else {@link AbortReason#VALIDATION} (its read of the key was stale).
     */
    protected final Future<Long> duplicateCommit(final java.util.function.Supplier<Future<Void>> validation) {
        return finishCommit(duplicateOnlyIfCurrent(Future.failedFuture(new AbortException(AbortReason.DUPLICATE_KEY,
            duplicate)), validation).map(0L));
    }

    /**
     * The lock phase {@code locked} (duplicates checked, locks taken, inserts created), except that a
     * {@link AbortReason#DUPLICATE_KEY} decides the commit (not retried) only when what the attempt read is still
     * current ({@code validation}): otherwise the duplicate comes from stale reads (two TPC-C NewOrders that read one
     * district's next order id, the later one's insert finding the earlier one's order), and the attempt aborts for
     * {@link AbortReason#VALIDATION}, to be retried. Inserts come before validation (package doc), so an INSERT can
     * meet the duplicate before validation would have caught the stale read.
     */
    protected final Future<Void> duplicateOnlyIfCurrent(final Future<Void> locked,
                                                        final java.util.function.Supplier<Future<Void>> validation) {
        return locked.recover(e -> e instanceof AbortException a && a.reason() == AbortReason.DUPLICATE_KEY
            ? validation.get().compose(current -> Future.failedFuture(e)) : Future.failedFuture(e));
    }

    /**
     * Validates the keys this attempt read as absent from the index: each must still be missing from it (a lookup RPC
     * past the cache). An insert of one of them by this attempt is checked by its INSERT instead.
     */
    protected final Future<Void> validateAbsent() {
        if (absent.isEmpty()) {
            return Future.succeededFuture();
        }
        final List<Future<Void>> checks = new ArrayList<>(absent.size());
        for (final Access a : absent) {
            if (findInsert(a.table, a.key) != null || find(a.table, a.key) != null) {
                continue;
            }
            // Still missing from the index, or the read is stale. A key found there at all fails, even deleted and
            // unlocked: its delete may have committed after this attempt's other reads were checked, and
            // accepting it let a read-only attempt see "inserted, then not yet deleted" across two keys (a fractured
            // read). Missing at both moments, nothing committed on it in between: committed deletes are tombstones
            // that stay in the index (one-sided, the memory node's CPU never reclaims them), and an abandoned insert,
            // which is reclaimed, never committed. So the bound recorded at the read stays the version read.
            checks.add(runtime.remote(a.partition).lookupRpc(a.key).compose(pointer -> pointer == 0
                ? Future.<Void>succeededFuture()
                : Future.failedFuture(new AbortException(AbortReason.VALIDATION, "key " + a.key + " of " + a.table
                    + " read as absent is in the index now"))));
        }
        return settle(checks);
    }

    /**
     * Creates every pending insert on its memory node, locked by this attempt ({@code lock}, {@code lockWord}): part of
     * the commit's lock phase, before validation (see the package documentation). Each created object joins the
     * accesses as locked and inserted ({@code onInserted} fills in what the protocol's release needs, e.g. the ticket
     * held, which is not 0 on a revived object), so the
     * write-back installs its version and releases it, and an abort abandons it. A key found present aborts with
     * {@link AbortReason#DUPLICATE_KEY}; a key someone holds, {@link AbortReason#LOCKED}; a full table fails with
     * {@link IllegalStateException} (not retried). An INSERT that failed after it was sent (the connection broke, the
     * handler failed) may have created the object, locked by this attempt: the loop gives up
     * ({@link #lockVerbInDoubt}; recovery abandons a dead node's inserts).
     */
    protected final Future<Void> installInserts(final io.scythe.storage.Table.InsertLock lock, final long lockWord,
                                                final java.util.function.BiConsumer<Access, RemoteTable.Inserted>
                                                    onInserted) {
        if (inserts.isEmpty()) {
            return Future.succeededFuture();
        }
        final List<Future<Access>> created = new ArrayList<>(inserts.size());
        for (final PendingInsert p : inserts) {
            created.add(runtime.remote(p.partition).insert(p.key, p.value, 0, p.value.capacity(), lock, lockWord)
                .transform(ar -> {
                    if (ar.succeeded()) {
                        final Access a = new Access(p.table, p.key, p.partition);
                        a.pointer = ar.result().pointer();
                        // What the INSERT replaced: no live value, at a version at most this one (the new object's).
                        a.readVersion = ar.result().version();
                        a.readAbsent = true;
                        a.inserted = true;
                        a.locked = true;
                        a.fetched = true;
                        onInserted.accept(a, ar.result());
                        if (finished) { // the attempt was given up while the INSERT was in flight: undo it at once
                            return releaseLate(() -> runtime.remote(p.partition).abandon(p.key, a.pointer, lock))
                                .compose(v -> Future.failedFuture(new AbortException(AbortReason.LOCKED,
                                    "attempt over")));
                        }
                        accesses.add(a);
                        return Future.succeededFuture(a);
                    }
                    if (rpcMayHaveLanded(ar.cause())) {
                        return lockVerbInDoubt("the INSERT of key " + p.key + " of " + p.table + " failed after it "
                            + "was sent", ar.cause());
                    }
                    return Future.failedFuture(insertFailure(p, ar.cause()));
                }));
        }
        return settle(created);
    }

    private static Throwable insertFailure(final PendingInsert p, final Throwable cause) {
        if (cause instanceof io.scythe.rrpc.RpcException e) {
            final String what = "insert of key " + p.key + " of " + p.table + ": " + e.getMessage();
            switch (e.code()) {
                case io.scythe.storage.remote.LogDbRpc.DUPLICATE:
                    return new AbortException(AbortReason.DUPLICATE_KEY, what);
                case io.scythe.storage.remote.LogDbRpc.LOCKED:
                    return new AbortException(AbortReason.LOCKED, what);
                case io.scythe.storage.remote.LogDbRpc.FULL:
                    return new IllegalStateException(what);
                default:
                    return cause;
            }
        }
        return cause;
    }

    /** The lock an inserted object was created with, for its ABANDON. */
    protected abstract io.scythe.storage.Table.InsertLock insertLock();

    /**
     * Writes every dirty access back with the new {@code version}, then {@code release} for each access it applies
     * to (e.g. the unlock), one doorbell per memory node; value first, then version, then release, on one QP, so the
     * release is seen last.
     */
    protected final Future<Void> writeBack(final long version, final Function<Access, Boolean> needsRelease,
                                           final ReleaseVerb release) {
        final io.scythe.txn.recovery.RedoLog log = runtime.redoLog();
        if (log == null || redoLockKind() == 0) {
            return finished(version, writeBackLogged(version, needsRelease, release));
        }
        // The redo record first: once it is durable the commit is decided, and recovery can finish it.
        final List<Access> writes = new ArrayList<>();
        for (final Access a : accesses) {
            if (a.dirty || a.inserted) {
                writes.add(a);
            }
        }
        if (writes.isEmpty()) {
            return finished(version, writeBackLogged(version, needsRelease, release));
        }
        // A record refused before its WRITE was posted is nothing: the attempt aborts. One posted whose WRITE failed
        // may have landed, or may still land: never aborted (recovery might roll it forward), never written again
        // here (see finished); recovery, after fencing this node, finds it whole or not and settles it.
        return staged(Stage.LOG, log.append(id, version, redoLockKind(), writes, this::lockToken)
            .recover(e -> {
                if (e instanceof io.scythe.txn.recovery.RedoLog.RecordInDoubtException) {
                    decided = true;
                    return giveUp("its redo record's WRITE failed and may have landed", e);
                }
                return Future.failedFuture(e);
            }))
            .compose(appended -> finished(version, writeBackLogged(version, needsRelease, release))
                .onSuccess(v -> log.release(appended)));
    }

    /**
     * {@code writeBack}, finished from what this attempt holds if a batch of it was refused before it was posted
     * (nothing to finish without locks). A batch that was posted and failed is not finished here but given up to
     * recovery: its verbs may still land (a tcp frame read after the connection broke; an RDMA request executed
     * after its requester timed out), and a release that lands after this node re-released the lock on a fresh
     * queue pair would add 1 to {@code upper} twice, giving the lock to two holders. Recovery runs only after this
     * node is fenced on every memory node, which waits out verbs in flight and refuses the rest.
     */
    private Future<Void> finished(final long version, final Future<Void> writeBack) {
        return redoLockKind() == 0 ? writeBack : writeBack.recover(e -> refusedForNow(e)
            ? finishFromRecord(version, e, 1) : giveUp("a write-back verb failed and may still land", e));
    }

    /** Tries to finish a decided commit this many times before giving it up. */
    private static final int FINISH_ATTEMPTS = 6;
    /** Pause before the first of them, doubling: 1, 2, ... 32 ms. */
    private static final long FINISH_PAUSE_NS = 1_000_000;

    /**
     * Finishes a decided commit whose write-back was refused in part (other batches may have landed, each with its
     * releases last): every entry whose lock this attempt still holds is written and released again; entries found
     * released are done ({@link io.scythe.txn.recovery.CnRecovery#finishEntry}). The locks it holds make the rewrite
     * safe. Only refusals are tried again, at most {@link #FINISH_ATTEMPTS} times; a verb that failed after it was
     * posted, or running out of attempts, gives the commit up to recovery ({@link #finished} says why).
     */
    private Future<Void> finishFromRecord(final long version, final Throwable failure, final int attempt) {
        if (attempt > FINISH_ATTEMPTS) {
            return giveUp("its write-back could not be finished", failure);
        }
        return runtime.timers().after(FINISH_PAUSE_NS << (attempt - 1)).compose(v -> {
            final List<Future<Boolean>> entries = new ArrayList<>();
            for (final Access a : accesses) {
                final boolean written = a.dirty || a.inserted;
                if (written || a.releasing) {
                    entries.add(untilAccepted(() -> io.scythe.txn.recovery.CnRecovery.finishEntry(runtime,
                        a.partition.node(), a.partition.descriptor(), written
                            ? io.scythe.txn.recovery.RedoLog.opOf(a) : 0, a.pointer, lockToken(a), redoLockKind(),
                        version, a.newValue, a.dirty && !a.deleting ? a.newLength : 0)));
                }
            }
            return settle(entries);
        }).recover(e -> refusedForNow(e) ? finishFromRecord(version, e, attempt + 1)
            : giveUp("finishing its write-back failed with a verb that may still land", e));
    }

    /**
     * A decided commit this loop cannot finish: it keeps its locks and its redo record (not released, so never
     * truncated), the loop gives up ({@link TxnRuntime#giveUp}: the node stops serving, and recovery of its
     * incarnation settles the record), and the client hears "outcome unknown", never "aborted".
     */
    private <T> Future<T> giveUp(final String what, final Throwable cause) {
        final HistoryRecorder recorder = runtime.recorder();
        if (recorder != null && !toldInDoubt) {
            toldInDoubt = true;
            recorder.inDoubt(id, recorded()); // what of its writes landed may be read: the history must know them
        }
        runtime.giveUp("transaction " + Long.toHexString(id) + ": " + what + ": " + cause);
        return Future.failedFuture(new OutcomeUnknownException("transaction " + Long.toHexString(id)
            + " is committed or in doubt: " + what, cause));
    }

    /** The redo record's lock kind of this protocol ({@code RedoRecordDescriptor.LOCK_*}), or 0: nothing logged. */
    protected int redoLockKind() {
        return 0;
    }

    /** What identifies the lock {@code a} holds, for recovery (a ticket, a CAS owner word). */
    protected long lockToken(final Access a) {
        return 0;
    }

    private Future<Void> writeBackLogged(final long version, final Function<Access, Boolean> needsRelease,
                                         final ReleaseVerb release) {
        decided = true;
        final Map<String, List<Access>> byNode = new HashMap<>();
        for (final Access a : accesses) {
            if (a.dirty || a.inserted || needsRelease.apply(a)) {
                byNode.computeIfAbsent(a.partition.node(), n -> new ArrayList<>()).add(a);
            }
        }
        // The point of no return: the releases are in these batches, so nothing may release these locks again
        // (a second FAA on upper would hand one lock to two holders). A batch refused before it was posted is
        // finished from the redo record (finishFromRecord), which releases only what is still held; one that failed
        // after posting may still land, so the loop gives up to recovery. Never aborted or retried.
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
            posted.add(runtime.writeBackGate(e.getKey()).compose(gate -> untilAccepted(() -> runtime.channel(
                e.getKey()).compose(ch -> {
                final Doorbell batch = ch.doorbell();
                for (final Access a : e.getValue()) {
                    if (a.dirty && !a.deleting) {
                        batch.write(a.address() + ObjectLayout.VALUE_OFFSET, a.rkey(), a.newValue, 0, a.newLength);
                        if (a.newLength != a.valueLength) {
                            final UnsafeBuffer length = new UnsafeBuffer(new byte[4]);
                            length.putInt(0, a.newLength);
                            batch.write(a.address() + ObjectLayout.VALUE_LENGTH_OFFSET, a.rkey(), length, 0, 4);
                        }
                    }
                    if (a.deleting || a.reviving) { // the flags word: a delete's tombstone, or cleared again
                        final UnsafeBuffer flags = new UnsafeBuffer(new byte[2]);
                        flags.putShort(0, (short) (a.deleting ? ObjectLayout.FLAG_DELETED : 0));
                        batch.write(a.address() + ObjectLayout.FLAGS_OFFSET, a.rkey(), flags, 0, 2);
                    }
                    if (a.dirty || a.inserted) {
                        // Above the commit's version and the one the lock kept current (ObjectLayout#versionAfter).
                        a.installedVersion = ObjectLayout.versionAfter(version, a.readVersion);
                        final UnsafeBuffer v = new UnsafeBuffer(new byte[8]);
                        v.putLong(0, a.installedVersion);
                        batch.write(a.address() + ObjectLayout.VERSION_OFFSET, a.rkey(), v, 0, 8);
                    }
                    if (a.releasing) {
                        release.add(batch, a);
                    }
                }
                return batch.post(); // refused whole when the send queue lacks room: built and posted again
            }))));
        }
        // Every batch settled before a failure is handled: finishing from the record reads what they left.
        return settle(posted);
    }

    /**
     * Whether {@code e} is a refusal for now: a verb not posted because the send queue was full, or an RPC refused
     * for back-pressure. Nothing of the request happened, so it may be made again.
     */
    public static boolean refusedForNow(final Throwable e) {
        return e instanceof io.scythe.bridge.VerbException v && v.status() == null
            && String.valueOf(v.getMessage()).contains("send queue full")
            || e instanceof io.scythe.rrpc.RpcException r && r.code() == io.scythe.rrpc.RpcException.BACK_PRESSURE;
    }

    /**
     * Whether an RPC that failed with {@code e} may still have run on its server: not when it was refused before it
     * was sent (back-pressure) or the server answered that it did not run it (an unknown RPC, a malformed or
     * oversized request, or a handler's own answer); otherwise (the connection broke, the handler threw half-way, any
     * other failure) it may have.
     */
    public static boolean rpcMayHaveLanded(final Throwable e) {
        if (refusedForNow(e)) {
            return false;
        }
        if (e instanceof io.scythe.rrpc.RpcException r) {
            final int code = r.code();
            return code == io.scythe.rrpc.RpcException.DISCONNECTED || code == io.scythe.rrpc.RpcException.HANDLER_FAILED;
        }
        return true;
    }

    /** Pauses before posting again what was refused for now: 20 us, doubling up to 640 us. */
    private static final long REPOST_PAUSE_NS = 20_000;
    /** How often a refused write-back or release is posted again (about 6 s of pauses) before it fails. */
    private static final int MAX_REPOSTS = 10_000;

    /**
     * {@code request} (which builds and posts its verbs or RPC afresh each time), made again after a growing pause
     * while it is refused for now: for what must not be dropped once decided, the write-back and the releases (a
     * dropped release would leave a lock held forever, a dropped write-back batch half a commit).
     */
    protected final <T> Future<T> untilAccepted(final java.util.function.Supplier<Future<T>> request) {
        return untilAccepted(request, 0);
    }

    private <T> Future<T> untilAccepted(final java.util.function.Supplier<Future<T>> request, final int tries) {
        return request.get().recover(e -> refusedForNow(e) && tries < MAX_REPOSTS
            ? runtime.timers().after(REPOST_PAUSE_NS << Math.min(tries, 5)).compose(v -> untilAccepted(request,
                tries + 1))
            : Future.failedFuture(e));
    }

    /** Adds the verb that releases {@code a}'s lock to a write-back batch. */
    @FunctionalInterface
    protected interface ReleaseVerb {
        void add(Doorbell batch, Access a);
    }

    /**
     * Whether a header READ of {@code a} shows the object it read (its slot not freed and reused since: the
     * incarnation in the header is the pointer's) with the version it read. Validation and locking check both: a
     * slot reclaimed and reused for another key can carry the same version number.
     */
    protected static boolean unchangedSinceRead(final Access a, final org.agrona.DirectBuffer header) {
        return (header.getShort(ObjectLayout.INCARNATION_OFFSET) & 0xffff) == ObjectLayout.incarnationOf(a.pointer)
            && header.getLong(ObjectLayout.VERSION_OFFSET) == a.readVersion;
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

    /**
     * Waits for every future (so nothing of the attempt is left in flight), then fails with the first failure that is
     * not a refusal for now, else the first refusal.
     */
    protected static Future<Void> settle(final List<? extends Future<?>> futures) {
        if (futures.isEmpty()) {
            return Future.succeededFuture();
        }
        return Future.join(futures).transform(ar -> {
            Throwable refusal = null;
            for (final Future<?> f : futures) {
                if (f.failed()) {
                    if (!refusedForNow(f.cause())) {
                        return Future.failedFuture(f.cause()); // a real failure outweighs a refusal (nothing done)
                    }
                    refusal = refusal == null ? f.cause() : refusal;
                }
            }
            return refusal == null ? Future.succeededFuture() : Future.failedFuture(refusal);
        });
    }

    /** The outcome of this attempt's abort, once it began one ({@link #releaseHeld}). */
    private Future<Void> released;

    /**
     * Gives the attempt up: releases, with {@code release}, every lock it holds (each exactly once), and waits for
     * the releases. A release is posted again only while refused for now; one that failed otherwise gives the loop up
     * ({@link #lockVerbInDoubt}), and the abort fails with its {@link NotServingException}. Idempotent (the
     * protocols' {@code abort()}): asked again, it answers with the first outcome, a failure included.
     */
    protected final Future<Void> releaseHeld(final Function<Access, Future<?>> release) {
        if (released != null) {
            return released;
        }
        if (finished) {
            return Future.succeededFuture();
        }
        finished = true;
        final List<Future<?>> releases = new ArrayList<>();
        for (final Access a : accesses) {
            if (a.locked) {
                a.locked = false;
                // An object this attempt inserted is undone on its memory node, which releases its lock there.
                releases.add(untilAccepted(() -> a.inserted
                    ? runtime.remote(a.partition).abandon(a.key, a.pointer, insertLock())
                    : release.apply(a).<Void>mapEmpty()));
            }
        }
        released = settle(releases).recover(e -> lockVerbInDoubt("releasing its locks failed", e));
        return released;
    }

    /**
     * Releases, with {@code release}, a lock granted to this attempt after it was over (nothing else will): posted
     * again only while refused for now; failing otherwise, the loop gives up ({@link #lockVerbInDoubt}).
     */
    protected final Future<Void> releaseLate(final java.util.function.Supplier<Future<?>> release) {
        return untilAccepted(() -> release.get().<Void>mapEmpty())
            .recover(e -> lockVerbInDoubt("releasing a lock granted after the attempt was over failed", e));
    }

    /**
     * A verb that takes or releases a lock failed after it was posted (or a release could not be posted at all): it
     * may have landed, or may still land, so it is neither posted again nor taken as undone. A second FAA on
     * {@code upper} would hand one Takeout lock to two holders; a WRITE of 0 repeated after the lock passed on would
     * free another's CAS lock; a CAS or ticket left in doubt holds a lock nobody releases. So the loop gives up
     * ({@link TxnRuntime#giveUp}): its node stops serving and the recovery of its incarnation frees what it holds
     * (cancels its tickets, frees CAS words with its id prefix). Nothing of this attempt was committed, so its client
     * hears "not serving" ({@link NotServingException}: never committed), not "outcome unknown".
     */
    protected final <T> Future<T> lockVerbInDoubt(final String what, final Throwable cause) {
        runtime.giveUp("transaction " + Long.toHexString(id) + " (aborting): " + what + ": " + cause);
        return Future.failedFuture(new NotServingException("transaction " + Long.toHexString(id) + " aborted, nothing "
            + "committed, and this loop gave up: " + what, cause));
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
                recorder.committed(id, v instanceof Long ts ? ts : 0, recorded());
            }
        }).recover(e -> {
            if (decided) {
                finished = true; // committed or in doubt: what it holds is the record's, released by finishing it
                if (e instanceof OutcomeUnknownException) {
                    return Future.failedFuture(e); // given up already
                }
                // No record to finish from (a protocol that logs none): its locks stay held until the node is
                // recovered, so the loop gives up as well.
                return giveUp("it failed after its point of no return", e);
            }
            // A release that failed gave the loop up: the client hears that (still "never committed"), not e.
            return abort().transform(aborted -> Future.failedFuture(aborted.failed() ? aborted.cause() : e));
        });
    }

    /**
     * What the history recorder is told of a committed attempt: every access, and every key it read as absent from
     * the index that it did not then insert ({@link Access#readAbsent}, at the bound its validation saw).
     */
    private List<Access> recorded() {
        if (absent.isEmpty()) {
            return accesses;
        }
        final List<Access> all = new ArrayList<>(accesses.size() + absent.size());
        all.addAll(accesses);
        for (final Access a : absent) {
            if (find(a.table, a.key) == null) {
                all.add(a);
            }
        }
        return all;
    }
}
