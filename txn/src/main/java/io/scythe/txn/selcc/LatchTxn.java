package io.scythe.txn.selcc;

import io.scythe.storage.Table;
import io.scythe.txn.Access;
import io.scythe.txn.Stage;
import io.scythe.txn.TxnRuntime;
import io.scythe.txn.onesided.OneSidedTxn;
import io.vertx.core.Future;
import org.agrona.DirectBuffer;
import org.agrona.concurrent.UnsafeBuffer;

import java.util.ArrayList;
import java.util.List;

/**
 * What SELCC's two 2PL transactions share: a read takes Shared, {@code readForUpdate} takes Exclusive (upgrading a
 * key held Shared), the commit first upgrades every key written but held Shared; inserts and deletes are refused
 * unless {@link #insertsAndDeletes}.
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
        return readVia(table, key, a -> a.locked ? Future.succeededFuture(a) : once(a, this::lockShared));
    }

    @Override
    public final Future<UnsafeBuffer> readForUpdate(final String table, final long key) {
        if (readOnlyTable(table)) {
            return readOnlyRead(table, key);
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

    /** Whether this protocol's attempts insert and delete ({@link SelccTxn} under 2PL); the others refuse them. */
    protected boolean insertsAndDeletes() {
        return false;
    }

    @Override
    public final void insert(final String table, final long key, final DirectBuffer value, final int offset,
                             final int length) {
        if (!insertsAndDeletes()) {
            throw new UnsupportedOperationException(mode() + " does not insert yet (issue 21): only selcc-2pl "
                + "inserts");
        }
        super.insert(table, key, value, offset, length);
    }

    @Override
    public final void delete(final String table, final long key) {
        if (!insertsAndDeletes()) {
            throw new UnsupportedOperationException(mode() + " does not delete yet (issue 21): only selcc-2pl "
                + "deletes");
        }
        super.delete(table, key);
    }

    @Override
    protected final Table.InsertLock insertLock() {
        return Table.InsertLock.CAS_WORD; // SelccTxn's INSERTs create the object CAS-locked
    }
}
