package io.scythe.txn.ford;

import io.scythe.txn.AbortException;
import io.scythe.txn.AbortReason;
import io.scythe.txn.Stage;
import io.scythe.txn.TxnRuntime;
import io.scythe.txn.onesided.Futures;
import io.vertx.core.Future;
import org.agrona.concurrent.UnsafeBuffer;

import java.util.ArrayList;
import java.util.List;

/**
 * FORD's one-sided OCC (peers.md §2, Lotus digest §0), on the CAS lock word of each object:
 * <ol>
 *   <li>execution: a read-only key is one READ of the whole object (aborts if its CAS lock is taken); a key to be
 *       written is locked as it is read: CAS lock 0 -> txn id and READ, in one doorbell (aborts if the CAS fails);</li>
 *   <li>validation: each read-only key's header is READ again; its version must be unchanged and its lock free;</li>
 *   <li>commit: per memory node one doorbell WRITEs the new values, their version (old + 1), and 0 into the lock.</li>
 * </ol>
 * FORD writes an undo log before the write-back and never replays it (peers.md); the redo log that recovery needs is
 * the recovery issue's, for every protocol alike, so no log is written here yet. Also simpler than FORD's commit: no
 * backup replicas and no INVISIBLE bit plus flush READ before the unlock, which makes this baseline's commit about
 * two round trips cheaper than FORD's (the comparison favours FORD). Validation also checks the lock word (FORD's
 * {@code CheckValidate} compares versions only, which admits write skew).
 */
public final class FordOccTxn extends CasLockTxn {

    public FordOccTxn(final TxnRuntime runtime) {
        super(runtime);
    }

    @Override
    public String mode() {
        return "ford-occ";
    }

    @Override
    public Future<UnsafeBuffer> read(final String table, final long key) {
        if (readOnlyTable(table)) {
            return readOnlyRead(table, key);
        }
        // FORD reads a locked object too (LOCK_REFUSE_READ_RO 0); validation catches a writer.
        return readVia(table, key, a -> a.locked ? Future.succeededFuture(a) : once(a, this::readImage));
    }

    @Override
    public Future<UnsafeBuffer> readForUpdate(final String table, final long key) {
        if (readOnlyTable(table)) {
            return readOnlyRead(table, key); // nothing to lock: a write of it is refused
        }
        return readVia(table, key, a -> a.locked ? Future.succeededFuture(a) : lockAndRead(a));
    }

    @Override
    public Future<Long> commit() {
        if (sawDuplicate()) {
            mark(Stage.EXECUTE);
            return duplicateCommit(this::validateCasLocked);
        }
        // Keys written without readForUpdate are locked now (CAS + header READ, version unchanged).
        final Future<Void> inserted = installInserts(id); // inserts are locks: taken with the others, before validation
        long version = 0;
        int unlocked = 0;
        for (int i = 0; i < accesses.size(); i++) {
            final var a = accesses.get(i);
            version = Math.max(version, a.readVersion + 1); // above every version read: new for every key written
            if (a.dirty && !a.locked) {
                unlocked++;
            }
        }
        // Sized to what it holds: a default list's first add grew it to ten slots (most commits lock nothing here).
        final List<Future<Void>> locking = new ArrayList<>(1 + unlocked);
        locking.add(inserted);
        for (int i = 0; i < accesses.size() && unlocked > 0; i++) {
            final var a = accesses.get(i);
            if (a.dirty && !a.locked) {
                locking.add(lockForCommit(a));
            }
        }
        final long installed = version;
        mark(Stage.EXECUTE);
        // Lock, validate (a duplicate insert's too), write back, each stage marked: one object per commit.
        return commitChain(settle(locking), installed);
    }
}
