package io.scythe.txn.farm;

import io.scythe.txn.AbortException;
import io.scythe.txn.AbortReason;
import io.scythe.txn.Access;
import io.scythe.txn.Stage;
import io.scythe.txn.TxnRuntime;
import io.scythe.txn.ford.CasLock;
import io.scythe.txn.ford.CasLockTxn;
import io.vertx.core.Future;
import org.agrona.concurrent.UnsafeBuffer;

import java.util.ArrayList;
import java.util.List;
import java.util.function.Function;

/**
 * FaRMv2-style OCC (Scythe §3.3 (1), §5's FaRMv2 baseline): every read is an unlocked one-sided READ (an object found
 * locked aborts the attempt); at commit the written objects are locked (CAS on the lock word, with a header READ in
 * the same doorbell to check the version is still the one read), the commit timestamp is taken from the
 * synchronised physical clock and the attempt waits out its uncertainty (22 us, {@code PhysicalClockOracle}),
 * the read-only objects are validated by re-reading their headers, and the write-back installs the timestamp as the
 * version and unlocks. What FaRMv2 adds beyond this (multi-versioned snapshot reads, read-only transactions without
 * validation) is not modelled: the baseline Scythe compares with is its OCC commit path and its clock wait.
 */
public final class FarmOccTxn extends CasLockTxn {

    public FarmOccTxn(final TxnRuntime runtime) {
        super(runtime);
    }

    @Override
    public String mode() {
        return "farm-occ";
    }

    @Override
    public Future<UnsafeBuffer> read(final String table, final long key) {
        if (readOnlyTable(table)) {
            return readOnlyRead(table, key);
        }
        return readVia(table, key, fetch);
    }

    /**
     * A read's fetch: nothing when fetched already, else one READ refusing a locked object ({@link #lockedRefusal},
     * checked in the READ's callback: was {@code readImage(a).compose(...)}); one per attempt, not one per read.
     */
    private final Function<Access, Future<Access>> fetch = a -> a.fetched ? Future.succeededFuture(a)
        : reads.readImage(a, FarmOccTxn::lockedRefusal);

    /** Why a read of {@code a}'s image is refused: its CAS lock word is taken; null when free. */
    private static Throwable lockedRefusal(final Access a) {
        return CasLock.free(a.image) ? null : new AbortException(AbortReason.LOCKED, "key " + a.key + " of " + a.table
            + " is locked");
    }

    @Override
    public Future<UnsafeBuffer> readForUpdate(final String table, final long key) {
        return read(table, key); // FaRM locks at commit only
    }

    @Override
    public Future<Long> commit() {
        if (sawDuplicate()) {
            mark(Stage.EXECUTE);
            return duplicateCommit(this::validateCasLocked);
        }
        final List<Future<Void>> locking = new ArrayList<>();
        for (final Access a : accesses) {
            if (a.dirty) {
                locking.add(lockForCommit(a));
            }
        }
        locking.add(installInserts(id)); // inserts are locks: taken with the others, before validation
        mark(Stage.EXECUTE);
        // Lock (a duplicate insert's validation too), timestamp, validate, write back at the timestamp, each stage
        // marked: one object per commit (OneSidedTxn#commitChainLockedFirst).
        return commitChainLockedFirst(settle(locking));
    }

    /** The commit timestamp, once every lock is held: the loop's physical clock after its uncertainty wait. */
    @Override
    protected Future<Long> commitTimestamp() {
        return PhysicalClock.of(runtime).next();
    }
}
