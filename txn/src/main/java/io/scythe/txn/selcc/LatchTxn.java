package io.scythe.txn.selcc;

import io.scythe.storage.ObjectLayout;
import io.scythe.storage.Table;
import io.scythe.txn.AbortException;
import io.scythe.txn.AbortReason;
import io.scythe.txn.Access;
import io.scythe.txn.Stage;
import io.scythe.txn.TxnRuntime;
import io.scythe.txn.UnknownKeyException;
import io.scythe.txn.onesided.Inserts;
import io.scythe.txn.onesided.OneSidedTxn;
import io.vertx.core.Future;
import org.agrona.concurrent.UnsafeBuffer;

import java.util.ArrayList;
import java.util.List;

/**
 * What SELCC's two 2PL transactions share: a read takes Shared, {@code readForUpdate} takes Exclusive (upgrading a
 * key held Shared), the commit first upgrades every key written but held Shared; inserts at commit
 * ({@link #insertions}), deletes as writes that leave a tombstone.
 * How a latch is taken, upgraded and released is each protocol's ({@link Sel2plTxn} eagerly, {@link SelccTxn} on
 * the cache).
 */
abstract class LatchTxn extends OneSidedTxn {
    LatchTxn(final TxnRuntime runtime) {
        super(runtime);
    }

    /** Takes Shared on {@code a} (not held yet) and reads it. */
    protected abstract Future<Access> lockShared(Access a);

    /** Takes Exclusive on {@code a} (not held yet) and reads it. */
    protected abstract Future<Access> lockExclusive(Access a);

    /** Upgrades {@code a}, held Shared, to Exclusive. */
    protected abstract Future<Void> upgrade(Access a);

    /** Whether this attempt holds {@code a} Exclusive. */
    protected abstract boolean exclusive(Access a);

    @Override
    public final Future<UnsafeBuffer> read(final String table, final long key) {
        if (readOnlyTable(table)) {
            return readOnlyRead(table, key);
        }
        final Future<UnsafeBuffer> notYet = SelccModule.notYet(runtime);
        if (notYet != null) {
            return notYet;
        }
        return readVia(table, key, a -> a.locked ? Future.succeededFuture(a) : once(a, this::lockShared));
    }

    @Override
    public final Future<UnsafeBuffer> readForUpdate(final String table, final long key) {
        if (readOnlyTable(table)) {
            return readOnlyRead(table, key);
        }
        final Future<UnsafeBuffer> notYet = SelccModule.notYet(runtime);
        if (notYet != null) {
            return notYet;
        }
        return readVia(table, key, this::forUpdate);
    }

    /** {@code a} (located) held Exclusive: taken, or upgraded from Shared, after its read if one is in flight. */
    protected final Future<Access> forUpdate(final Access a) {
        if (a.fetch != null && !a.fetch.isComplete()) {
            return a.fetch.compose(this::forUpdate);
        }
        if (a.locked && exclusive(a)) {
            return Future.succeededFuture(a);
        }
        if (a.locked) {
            return upgrade(a).map(a);
        }
        a.fetch = lockExclusive(a);
        return a.fetch;
    }

    /** The commit's lock phase: every key written but held Shared is upgraded (after its read, if in flight). */
    protected final Future<Void> upgradeWrites() {
        mark(Stage.EXECUTE);
        final List<Future<Void>> upgrades = new ArrayList<>();
        for (final Access a : accesses) {
            if (a.dirty && a.locked && !exclusive(a)) {
                upgrades.add(a.fetch != null && !a.fetch.isComplete() ? a.fetch.compose(x -> upgrade(x))
                    : upgrade(a));
            }
        }
        return staged(Stage.LOCK, settle(upgrades));
    }

    /** Objects this attempt's INSERTs created (CAS-locked with its id), latched Exclusive by the commit or the abort. */
    protected List<Access> created;

    /** Whether {@code a} is an object this attempt's INSERT created. */
    protected final boolean created(final Access a) {
        return created != null && created.contains(a);
    }

    /**
     * Whether the image of {@code a} (just read under a latch) is an object another attempt's INSERT created and has
     * not committed yet (its CAS word still set): never used, the access aborts instead ({@link #uncommitted}).
     */
    protected final boolean insertedByAnother(final Access a) {
        return a.image.getLong(ObjectLayout.CAS_LOCK_OFFSET) != 0 && !created(a);
    }

    /** The abort of an access that found {@link #insertedByAnother}. */
    protected static <T> Future<T> uncommitted(final Access a) {
        LineCache.Stats.count("abort: inserted by a transaction not committed yet");
        return Future.failedFuture(new AbortException(AbortReason.LOCKED, "key " + a.key + " of " + a.table
            + ": inserted by a transaction not committed yet"));
    }

    /** Latches {@code a}, a key in the index this attempt inserts, Exclusive until the commit (2PL: {@link #forUpdate}). */
    protected Future<Access> latchPresent(final Access a) {
        return forUpdate(a);
    }

    /**
     * Latches {@code a}, an object this attempt's INSERT created, Exclusive, waiting for whoever holds its latch word
     * for a moment (no transaction holds a CAS-locked object: a read of it aborts before it uses it); gives up after
     * a bounded number of tries unless the attempt is over (its abort must bury the object, so it waits as long as it
     * takes).
     */
    protected abstract Future<Access> latchCreated(Access a);

    /**
     * The commit's inserts, every written line latched already (the same in every SELCC and SEL protocol): a key in
     * the index is latched Exclusive ({@link #latchPresent}) and revived over its tombstone (or found live: a
     * duplicate); the others are created by the memory nodes' INSERTs, CAS-locked with this attempt's id (the memory
     * node refuses a key whose latch word is held), then latched Exclusive ({@link #latchCreated}). An aborted insert
     * is buried under its latch (a tombstone, CAS word cleared), never ABANDONed: that frees a slot that other
     * compute nodes may still cache or be latching.
     */
    protected final Future<Void> insertions() {
        final List<Inserts.PendingKey> pending = inserts.pending();
        if (pending.isEmpty()) {
            return Future.succeededFuture();
        }
        final Future<Void> notYet = SelccModule.notYet(runtime); // before any INSERT: its object must be latched
        if (notYet != null) {
            return notYet;
        }
        final List<Future<Void>> present = new ArrayList<>(pending.size());
        for (final Inserts.PendingKey p : pending) {
            present.add(locate(p.table(), p.key()).compose(this::latchPresent).transform(found -> {
                if (found.succeeded()) {
                    if (readAbsentOnly(p.table(), p.key())) {
                        return Future.failedFuture(new AbortException(AbortReason.VALIDATION, "key " + p.key() + " of "
                            + p.table() + " read as absent is in the index now"));
                    }
                    LineCache.Stats.count("insert over an object");
                    inserts.foldInto(p.table(), p.key());
                    return Future.succeededFuture();
                }
                return found.cause() instanceof UnknownKeyException ? Future.succeededFuture()
                    : Future.failedFuture(found.cause());
            }));
        }
        return settle(present).compose(v -> {
            if (inserts.duplicate() != null) {
                return Future.failedFuture(new AbortException(AbortReason.DUPLICATE_KEY, inserts.duplicate()));
            }
            created = new ArrayList<>(2);
            return installInserts(insertLock(), id, (a, inserted) -> {
                a.image = new UnsafeBuffer(new byte[a.slotBytes()]);
                a.inserted = false; // undone under its latch (buried), never by ABANDON
                created.add(a);
                LineCache.Stats.count("insert created");
            }).recover(e -> e instanceof AbortException x && x.reason() == AbortReason.DUPLICATE_KEY
                // created since this attempt found it missing: its absence was stale, retried
                ? Future.failedFuture(new AbortException(AbortReason.VALIDATION, e.getMessage()))
                : Future.failedFuture(e));
        }).compose(v -> {
            final List<Future<Access>> latched = new ArrayList<>(created.size());
            for (final Access a : List.copyOf(created)) {
                latched.add(latchCreated(a));
            }
            return settle(latched);
        });
    }

    /**
     * Whether the pending insert of {@code key} only marks a key this attempt read as absent (selcc-to's
     * {@code SelccTxn#markAbsent}): found in the index now, the absence it read is stale and the attempt aborts.
     */
    protected boolean readAbsentOnly(final String table, final long key) {
        return false;
    }

    @Override
    protected final Table.InsertLock insertLock() {
        return Table.InsertLock.CAS_WORD; // the INSERTs create the object CAS-locked with the attempt id
    }
}
