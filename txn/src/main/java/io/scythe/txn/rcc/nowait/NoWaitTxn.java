package io.scythe.txn.rcc.nowait;

import io.scythe.storage.ObjectLayout;
import io.scythe.txn.AbortException;
import io.scythe.txn.AbortReason;
import io.scythe.txn.Access;
import io.scythe.txn.TxnRuntime;
import io.scythe.txn.rcc.RccForm;
import io.scythe.txn.rcc.RccLockingTxn;
import io.scythe.txn.rcc.RccRpc;
import io.vertx.core.Future;

import java.util.function.Supplier;

/**
 * RCC's NOWAIT (§4.2): every record read or written is locked as it is first touched (one exclusive lock word,
 * {@code cas_lock}, holding the transaction id), and an attempt that finds a word taken aborts at once. One-sided
 * the lock is a CAS and a READ in one doorbell; by RPC one LOCK request whose handler CASes and answers with the
 * record ({@link RccLockingTxn}).
 */
public final class NoWaitTxn extends RccLockingTxn {
    public NoWaitTxn(final TxnRuntime runtime, final RccForm form, final String mode) {
        super(runtime, form, 0, ObjectLayout.CAS_LOCK_OFFSET, RccRpc.KIND_NOWAIT, mode);
    }

    @Override
    protected Future<Access> onTaken(final Access a, final long holder, final boolean byRpc,
                                     final Supplier<Future<Access>> again) {
        return Future.failedFuture(new AbortException(AbortReason.LOCKED, "NOWAIT: key " + a.key + " of " + a.table
            + " is locked by " + Long.toHexString(holder)));
    }
}
