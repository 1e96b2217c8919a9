package io.scythe.txn.rcc.occ;

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
 * RCC's OCC, which RCC takes from DrTM+H (metadata {@code lock}, {@code seq}: here {@code cas_lock} and the version
 * word). Reads are unlocked (Read stage: one READ of the object, or a READ RPC); at commit the records written are
 * locked, each with its {@code seq} still the one read (Lock stage: CAS + READ in one doorbell, or the lock RPC), the
 * records only read are validated, {@code seq} unchanged and not locked (Validate stage: a header READ each, or one
 * VALIDATE RPC per memory node), then written back with a new {@code seq} and unlocked as NOWAIT's are
 * ({@link RccLockingTxn}). A lock found taken aborts (no waiting).
 */
public final class OccTxn extends RccLockingTxn {
    public OccTxn(final TxnRuntime runtime, final RccForm form, final String mode) {
        super(runtime, form, 0, ObjectLayout.CAS_LOCK_OFFSET, RccRpc.KIND_NOWAIT, mode);
    }

    @Override
    protected boolean locksOnRead() {
        return false;
    }

    @Override
    protected Future<Access> onTaken(final Access a, final long holder, final boolean byRpc,
                                     final Supplier<Future<Access>> again) {
        return Future.failedFuture(new AbortException(AbortReason.LOCKED, "OCC: key " + a.key + " of " + a.table
            + " is locked at commit by " + Long.toHexString(holder)));
    }
}
