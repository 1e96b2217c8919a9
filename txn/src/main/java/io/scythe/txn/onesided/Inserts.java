package io.scythe.txn.onesided;

import io.scythe.rrpc.RpcException;
import io.scythe.storage.Table;
import io.scythe.storage.remote.LogDbRpc;
import io.scythe.storage.remote.RemoteTable;
import io.scythe.txn.AbortException;
import io.scythe.txn.AbortReason;
import io.scythe.txn.Access;
import io.scythe.txn.Catalog;
import io.scythe.txn.TxnRuntime;
import io.vertx.core.Future;
import org.agrona.DirectBuffer;
import org.agrona.concurrent.UnsafeBuffer;

import java.util.ArrayList;
import java.util.List;
import java.util.function.BiConsumer;
import java.util.function.Supplier;

/**
 * One attempt's inserts and deletes, the same in every one-sided protocol ({@code io.scythe.txn} package doc): inserts
 * of untouched keys buffered until commit and then created on their memory nodes already locked (INSERT RPCs), deletes
 * and revivals marked on the accesses, a duplicate noted to fail the commit, and the keys read as absent validated.
 */
public final class Inserts {
    private final TxnRuntime runtime;
    private final ReadSet reads;
    /** The attempt these inserts belong to: whether it is over, and how it gives up or releases late. */
    private final Attempt attempt;
    /**
     * Inserts of keys this attempt has not touched otherwise: created by INSERT RPCs at commit. The shared empty list
     * ({@link #NONE}, no list of its own) until the first: most attempts insert nothing.
     */
    private List<PendingInsert> pending = NONE;
    /** {@link #pending} before the first insert: immutable, and its {@code remove} of what it lacks is a no-op. */
    private static final List<PendingInsert> NONE = java.util.Collections.emptyList();
    /** An insert of a key this attempt saw present: the commit aborts with DUPLICATE_KEY. */
    private String duplicate;

    /** An insert buffered until commit. */
    private record PendingInsert(String table, long key, Catalog.Partition partition, UnsafeBuffer value) {
    }

    /** What the inserts need of their attempt ({@link OneSidedTxn} gives them). */
    public interface Attempt {
        /** Whether the attempt was given up (an INSERT landing now must be undone at once). */
        boolean over();

        /** Releases a lock on {@code node} granted after the attempt was over ({@code OneSidedTxn#releaseLate}). */
        Future<Void> releaseLate(String node, Supplier<Future<?>> release);

        /**
         * A lock verb on {@code node} that may have landed failed: the loop gives up, or the attempt aborts if a
         * configuration removes the node ({@code OneSidedTxn#lockVerbInDoubt}).
         */
        <T> Future<T> lockVerbInDoubt(String node, String what, Throwable cause);
    }

    public Inserts(final TxnRuntime runtime, final ReadSet reads, final Attempt attempt) {
        this.runtime = runtime;
        this.reads = reads;
        this.attempt = attempt;
    }

    /** The value this attempt inserted for {@code key} (a copy), or {@code null} when it inserted none. */
    public UnsafeBuffer ownValue(final String table, final long key) {
        final PendingInsert own = find(table, key);
        if (own == null) {
            return null;
        }
        final UnsafeBuffer copy = new UnsafeBuffer(new byte[own.value.capacity()]);
        copy.putBytes(0, own.value, 0, copy.capacity());
        return copy;
    }

    private PendingInsert find(final String table, final long key) {
        for (int i = 0; i < pending.size(); i++) { // indexed: no iterator on the hot path (every read asks)
            final PendingInsert p = pending.get(i);
            if (p.key == key && p.table.equals(table)) {
                return p;
            }
        }
        return null;
    }

    /** Buffers an insert (see {@code Txn#insert}); the attempt must not be over. */
    public void insert(final String table, final long key, final DirectBuffer value, final int offset,
                       final int length) {
        final Catalog.Table t = runtime.catalog().table(table);
        WriteSet.refuseReadOnly("insert", table, t);
        final Catalog.Partition partition = t.partitionOf(key);
        if (runtime.catalog().blocked(partition)) {
            throw Reconfigured.settling(partition, table, key);
        }
        WriteSet.checkLength(table, partition, length);
        final Access a = reads.find(table, key);
        if (a != null) {
            if (!a.fetched) {
                throw new IllegalStateException("insert of key " + key + " of " + table + " while its read is in "
                    + "flight");
            }
            if (a.deleting) { // deleted and inserted again by this attempt: an update
                a.deleting = false;
                WriteSet.setNewValue(a, value, offset, length);
            } else if (a.deleted) { // over a delete it read: revived in place by the write-back, locked as a write
                a.reviving = true;
                WriteSet.setNewValue(a, value, offset, length);
            } else {
                duplicate = "key " + key + " of " + table + " exists";
            }
            return;
        }
        if (find(table, key) != null) {
            duplicate = "key " + key + " of " + table + " inserted twice";
            return;
        }
        final UnsafeBuffer copy = new UnsafeBuffer(new byte[length]);
        copy.putBytes(0, value, offset, length);
        if (pending == NONE) {
            pending = new ArrayList<>();
        }
        pending.add(new PendingInsert(table, key, partition, copy));
    }

    /** A key this attempt inserts and has not otherwise touched: {@link #pending()}. */
    public record PendingKey(String table, long key) {
    }

    /** The inserts still buffered (keys this attempt has not otherwise touched), in the order they were made. */
    public List<PendingKey> pending() {
        final List<PendingKey> keys = new ArrayList<>(pending.size());
        for (final PendingInsert p : pending) {
            keys.add(new PendingKey(p.table, p.key));
        }
        return keys;
    }

    /**
     * Takes the buffered insert of {@code key} out, for a protocol that creates the object itself (Lotus's one-sided
     * inserts): its value, or {@code null} when none is buffered.
     */
    public UnsafeBuffer take(final String table, final long key) {
        final PendingInsert own = find(table, key);
        if (own == null) {
            return null;
        }
        pending.remove(own);
        return own.value;
    }

    /**
     * Turns the buffered insert of {@code key} into one over its access, which the attempt has now read (a protocol
     * that latches the key's existing object before it inserts, e.g. SELCC's over a tombstone): a deleted object is
     * revived in place by the commit's write, a live one makes the commit fail as a duplicate.
     */
    public void foldInto(final String table, final long key) {
        final PendingInsert own = find(table, key);
        if (own == null) {
            throw new IllegalStateException("no buffered insert of key " + key + " of " + table);
        }
        pending.remove(own);
        insert(table, key, own.value, 0, own.value.capacity());
    }

    /** Buffers a delete (see {@code Txn#delete}). */
    public void delete(final String table, final long key) {
        WriteSet.refuseReadOnly("delete", table, runtime.catalog().table(table));
        final PendingInsert own = find(table, key);
        if (own != null) {
            pending.remove(own); // inserted and deleted by this attempt: nothing (its absence stays validated)
            return;
        }
        final Access a = reads.find(table, key);
        if (a == null || !a.fetched || a.deleted && !a.reviving) {
            throw new IllegalStateException("delete of key " + key + " of " + table + " before reading it (or "
                + "after reading it deleted)");
        }
        a.reviving = false;
        a.deleting = true;
        a.dirty = true; // locked at commit as any write
    }

    /** Whether the commit has anything to install: writes, deletes or inserts. */
    public boolean nothingToInstall() {
        if (!pending.isEmpty() || duplicate != null) {
            return false;
        }
        final List<Access> accesses = reads.accesses();
        for (int i = 0; i < accesses.size(); i++) { // indexed: no stream, lambda and iterator per commit
            if (accesses.get(i).dirty) {
                return false;
            }
        }
        return true;
    }

    /**
     * Why the commit fails as a duplicate (an insert of a key this attempt saw present, or inserted twice), or
     * {@code null}. Decided before anything is locked: a lock or INSERT in flight when the commit fails would be
     * left held.
     */
    public String duplicate() {
        return duplicate;
    }

    /**
     * The lock phase {@code locked} (duplicates checked, locks taken, inserts created), except that a
     * {@code DUPLICATE_KEY} decides the commit (not retried) only when what the attempt read is still current
     * ({@code validation}): otherwise the duplicate comes from stale reads (two TPC-C NewOrders that read one
     * district's next order id, the later one's insert finding the earlier one's order), and the attempt aborts for
     * {@code VALIDATION}, to be retried. Inserts come before validation (package doc), so an INSERT can meet the
     * duplicate before validation would have caught the stale read.
     */
    public static Future<Void> duplicateOnlyIfCurrent(final Future<Void> locked,
                                                      final Supplier<Future<Void>> validation) {
        return locked.recover(e -> e instanceof AbortException a && a.reason() == AbortReason.DUPLICATE_KEY
            ? validation.get().compose(current -> Future.failedFuture(e)) : Future.failedFuture(e));
    }

    /**
     * Validates the keys this attempt read as absent from the index: each must still be missing from it (a lookup past
     * the cache, by the loop's lookup mode: RPC or one-sided READs, which agree). An insert of one of them by this
     * attempt is checked by its INSERT instead.
     */
    public Future<Void> validateAbsent() {
        return validateAbsent(false);
    }

    /**
     * {@link #validateAbsent}, but for a commit that met a duplicate and so posts no INSERT: every key read absent is
     * looked up, those with a pending insert too (their INSERT, which would have checked them, is never sent; SEL's
     * TO marks are such pending inserts), and those folded into the accesses by the commit's own lookup (it found
     * them in the index: their absence is stale). Without it a duplicate met through a stale absent read was
     * reported as DUPLICATE_KEY (issue 21, review of selfix, finding 1).
     */
    public Future<Void> validateAbsentNothingInserted() {
        return validateAbsent(true);
    }

    private Future<Void> validateAbsent(final boolean nothingInserted) {
        final List<Access> absent = reads.absent();
        if (absent.isEmpty()) {
            return Future.succeededFuture();
        }
        final List<Future<Void>> checks = new ArrayList<>(absent.size());
        for (final Access a : absent) {
            if (!nothingInserted && (find(a.table, a.key) != null || reads.find(a.table, a.key) != null)) {
                continue;
            }
            // Still missing from the index, or the read is stale. A key found there at all fails, even deleted and
            // unlocked: its delete may have committed after this attempt's other reads were checked, and
            // accepting it let a read-only attempt see "inserted, then not yet deleted" across two keys (a fractured
            // read). Missing at both moments, nothing committed on it in between: committed deletes are tombstones
            // that stay in the index (one-sided, the memory node's CPU never reclaims them), and an abandoned insert,
            // which is reclaimed, never committed. So the bound recorded at the read stays the version read.
            checks.add(runtime.remote(a.partition).lookupWithBound(a.key, runtime.lookupMode())
                .map(RemoteTable.Lookup::pointer).compose(pointer -> pointer == 0
                ? Future.<Void>succeededFuture()
                : Future.failedFuture(new AbortException(AbortReason.VALIDATION, "key " + a.key + " of " + a.table
                    + " read as absent is in the index now"))));
        }
        return Reposts.settle(checks);
    }

    /**
     * Creates every pending insert on its memory node, locked by this attempt ({@code lock}, {@code lockWord}): part of
     * the commit's lock phase, before validation (see the package documentation). Each created object joins the
     * accesses as locked and inserted ({@code onInserted} fills in what the protocol's release needs, e.g. the ticket
     * held, which is not 0 on a revived object), so the write-back installs its version and releases it, and an
     * abort abandons it. A key found present aborts with {@code DUPLICATE_KEY}; a key someone holds, {@code LOCKED}; a
     * full table fails with {@link IllegalStateException} (not retried). An INSERT that failed after it was sent (the
     * connection broke, the handler failed) may have created the object, locked by this attempt: the loop gives up
     * ({@link Attempt#lockVerbInDoubt}; recovery abandons a dead node's inserts).
     */
    public Future<Void> install(final Table.InsertLock lock, final long lockWord,
                                final BiConsumer<Access, RemoteTable.Inserted> onInserted) {
        if (pending.isEmpty()) {
            return Future.succeededFuture();
        }
        final List<Future<Access>> created = new ArrayList<>(pending.size());
        for (final PendingInsert p : pending) {
            // With replication, the key is located on its backups (a placeholder made where it is missing) while its
            // INSERT runs: its redo record must name where the write-back will put it there.
            final Future<long[]> onBackups = p.partition.backups().isEmpty() ? null
                : Replicas.locate(runtime, p.partition, p.key);
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
                        if (attempt.over()) { // the attempt was given up while the INSERT was in flight: undo it
                            return attempt.releaseLate(p.partition.node(), () -> runtime.remote(p.partition).abandon(p.key, a.pointer,
                                lock)).compose(v -> Future.failedFuture(new AbortException(AbortReason.LOCKED,
                                "attempt over")));
                        }
                        reads.accesses().add(a);
                        if (onBackups != null) {
                            // What the backups' placeholders get at write-back: the primary has it from its INSERT.
                            a.newValue = p.value;
                            a.newLength = p.value.capacity();
                            a.backupsLocated = onBackups.map(pointers -> {
                                a.backupPointers = pointers;
                                return null;
                            });
                            return a.backupsLocated.map(a);
                        }
                        return Future.succeededFuture(a);
                    }
                    if (io.scythe.txn.Refusal.rpcMayHaveLanded(ar.cause())) {
                        return attempt.lockVerbInDoubt(p.partition.node(), "the INSERT of key " + p.key + " of " + p.table
                            + " failed after it was sent", ar.cause());
                    }
                    return Future.failedFuture(failure(p, ar.cause()));
                }));
        }
        return Reposts.settle(created);
    }

    private static Throwable failure(final PendingInsert p, final Throwable cause) {
        if (cause instanceof RpcException e) {
            final String what = "insert of key " + p.key + " of " + p.table + ": " + e.getMessage();
            switch (e.code()) {
                case LogDbRpc.DUPLICATE:
                    return new AbortException(AbortReason.DUPLICATE_KEY, what);
                case LogDbRpc.LOCKED:
                    return new AbortException(AbortReason.LOCKED, what);
                case LogDbRpc.FULL:
                    return new IllegalStateException(what);
                default:
                    return cause;
            }
        }
        return cause;
    }
}
