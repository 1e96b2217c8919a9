package io.scythe.sim;

import io.scythe.txn.AbortException;
import io.scythe.txn.AbortReason;
import io.scythe.txn.Access;
import io.scythe.txn.Stage;
import io.scythe.txn.TxnRuntime;
import io.scythe.txn.ford.CasLockTxn;
import io.vertx.core.Future;
import org.agrona.concurrent.UnsafeBuffer;

import java.util.ArrayList;
import java.util.List;

/**
 * A planted bug for the history checker: FaRM-style OCC over CAS locks, correct in every way but one: it does not
 * re-check at commit the keys it found absent ({@code validateAbsent}). Two transactions that both read a key absent
 * can then both commit although one inserts it, a phantom the checker must see through the recorded absent reads.
 */
final class PlantedPhantomTxn extends CasLockTxn {
    PlantedPhantomTxn(final TxnRuntime runtime) {
        super(runtime);
    }

    @Override
    public String mode() {
        return "planted-phantom";
    }

    @Override
    public Future<UnsafeBuffer> read(final String table, final long key) {
        return readVia(table, key, a -> a.fetched ? Future.succeededFuture(a) : readImage(a).compose(read ->
            io.scythe.txn.ford.CasLock.free(read.image) ? Future.succeededFuture(read) : Future.failedFuture(new AbortException(
                AbortReason.LOCKED, "key " + key + " of " + table + " is locked"))));
    }

    @Override
    public Future<UnsafeBuffer> readForUpdate(final String table, final long key) {
        return read(table, key);
    }

    @Override
    public Future<Long> commit() {
        if (sawDuplicate()) {
            return duplicateCommit(this::validateUnlocked);
        }
        final List<Future<Void>> locking = new ArrayList<>();
        long version = 1;
        for (final Access a : accesses) {
            version = Math.max(version, a.readVersion + 1);
            if (a.dirty) {
                locking.add(lockForCommit(a));
            }
        }
        locking.add(installInserts(id));
        final long installed = version;
        mark(Stage.EXECUTE);
        return finishCommit(staged(Stage.LOCK, settle(locking))
            .compose(v -> staged(Stage.VALIDATE, validateUnlocked())) // the planted bug: no validateAbsent()
            .compose(v -> staged(Stage.WRITE_BACK, writeBackAndUnlock(installed)))
            .map(installed));
    }
}
