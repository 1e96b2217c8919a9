package io.scythe.txn.farm;

import io.scythe.bridge.Doorbell;
import io.scythe.storage.ObjectLayout;
import io.scythe.txn.AbortException;
import io.scythe.txn.AbortReason;
import io.scythe.txn.Access;
import io.scythe.txn.OneSidedTxn;
import io.scythe.txn.TxnRuntime;
import io.scythe.txn.ford.CasLock;
import io.vertx.core.Future;
import org.agrona.concurrent.UnsafeBuffer;

import java.util.ArrayList;
import java.util.List;

/**
 * FaRMv2-style OCC (Scythe §3.3 (1), §5's FaRMv2 baseline): every read is an unlocked one-sided READ (an object found
 * locked aborts the attempt); at commit the written objects are locked (CAS on the lock word, with a header READ in
 * the same doorbell to check the version is still the one read), the commit timestamp is taken from the
 * synchronised physical clock and the attempt waits out its uncertainty (22 us, {@code PhysicalClockOracle}),
 * the read-only objects are validated by re-reading their headers, and the write-back installs the timestamp as the
 * version and unlocks. What FaRMv2 adds beyond this (multi-versioned snapshot reads, read-only transactions without
 * validation) is not modelled: the baseline Scythe compares with is its OCC commit path and its clock wait.
 */
public final class FarmOccTxn extends OneSidedTxn {
    private static final UnsafeBuffer FREE = new UnsafeBuffer(new byte[8]);

    public FarmOccTxn(final TxnRuntime runtime) {
        super(runtime);
    }

    @Override
    public String mode() {
        return "farm-occ";
    }

    @Override
    public Future<UnsafeBuffer> read(final String table, final long key) {
        return locate(table, key).compose(a -> a.fetched ? Future.succeededFuture(a) : readImage(a).compose(read ->
            read.casLockFree() ? Future.succeededFuture(read) : Future.failedFuture(new AbortException(
                AbortReason.LOCKED, "key " + key + " of " + table + " is locked")))).map(OneSidedTxn::valueCopy);
    }

    @Override
    public Future<UnsafeBuffer> readForUpdate(final String table, final long key) {
        return read(table, key); // FaRM locks at commit only
    }

    @Override
    public Future<Long> commit() {
        final List<Future<Void>> locking = new ArrayList<>();
        for (final Access a : accesses) {
            if (a.dirty) {
                locking.add(lock(a));
            }
        }
        mark(io.scythe.txn.Stage.EXECUTE);
        return staged(io.scythe.txn.Stage.LOCK, settle(locking))
            .compose(v -> staged(io.scythe.txn.Stage.TIMESTAMP, runtime.physicalClock().next()))
            .compose(ts -> staged(io.scythe.txn.Stage.VALIDATE, validate()).map(ts))
            .compose(ts -> staged(io.scythe.txn.Stage.WRITE_BACK, writeBack(ts, a -> a.locked,
                (batch, a) -> batch.write(CasLock.lockAddress(a.pointer), a.rkey(), FREE, 0, 8))).map(ts))
            .onSuccess(ts -> {
                finished = true;
                accesses.forEach(a -> a.locked = false);
            })
            .recover(e -> abort().transform(ignored -> Future.failedFuture(e)));
    }

    private Future<Void> lock(final Access a) {
        return channel(a).compose(ch -> {
            final Doorbell batch = ch.doorbell();
            final int cas = batch.compareAndSwap(CasLock.lockAddress(a.pointer), a.rkey(), 0, id);
            final UnsafeBuffer header = new UnsafeBuffer(new byte[ObjectLayout.HEADER_BYTES]);
            batch.read(a.address(), a.rkey(), header, 0, ObjectLayout.HEADER_BYTES);
            return batch.post().compose(b -> {
                if (b.result(cas) != 0) {
                    return Future.failedFuture(new AbortException(AbortReason.LOCKED, "key " + a.key
                        + " is locked at commit"));
                }
                a.locked = true;
                if (header.getLong(ObjectLayout.VERSION_OFFSET) != a.readVersion) {
                    return Future.failedFuture(new AbortException(AbortReason.VALIDATION, "key " + a.key
                        + " changed since it was read"));
                }
                return Future.succeededFuture();
            });
        });
    }

    private Future<Void> validate() {
        final List<Future<Void>> checks = new ArrayList<>();
        for (final Access a : accesses) {
            if (!a.locked) {
                checks.add(readHeader(a).compose(h -> h.getLong(ObjectLayout.VERSION_OFFSET) == a.readVersion
                    && h.getLong(ObjectLayout.CAS_LOCK_OFFSET) == 0 ? Future.<Void>succeededFuture()
                    : Future.failedFuture(new AbortException(AbortReason.VALIDATION, "key " + a.key + " of "
                        + a.table + " changed or is locked"))));
            }
        }
        return settle(checks);
    }

    @Override
    public Future<Void> abort() {
        if (finished) {
            return Future.succeededFuture();
        }
        finished = true;
        final List<Future<Void>> unlocks = new ArrayList<>();
        for (final Access a : accesses) {
            if (a.locked) {
                a.locked = false;
                unlocks.add(channel(a).compose(ch -> ch.write(CasLock.lockAddress(a.pointer), a.rkey(), FREE, 0,
                    8)));
            }
        }
        return settle(unlocks);
    }
}
