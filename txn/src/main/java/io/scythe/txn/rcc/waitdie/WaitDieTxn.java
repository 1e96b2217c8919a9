package io.scythe.txn.rcc.waitdie;

import io.scythe.storage.ObjectLayout;
import io.scythe.txn.AbortException;
import io.scythe.txn.AbortReason;
import io.scythe.txn.Access;
import io.scythe.txn.TxnRuntime;
import io.scythe.txn.rcc.RccClock;
import io.scythe.txn.rcc.RccForm;
import io.scythe.txn.rcc.RccLockingTxn;
import io.scythe.txn.rcc.RccRpc;
import io.scythe.txn.rcc.TupleFormat;
import io.scythe.txn.rcc.WaitDie;
import io.vertx.core.Future;

import java.util.function.Supplier;

/**
 * RCC's WAITDIE (§4.3): the lock word {@code tts} holds the holder's timestamp (an {@link RccClock} timestamp taken
 * when the attempt begins). On a conflict the classic rule decides ({@link WaitDie}): an <b>older</b> requester
 * (smaller timestamp) <b>waits</b>, a <b>younger</b> one <b>dies</b>. One-sided, a waiter yields and re-posts its CAS
 * and READ until the CAS takes the word or finds an older holder; by RPC, the memory node's handler keeps it on the
 * object's waiting list and answers when it gets the word ({@link io.scythe.txn.rcc.RccLockService}).
 *
 * <p>Deviation: a retried attempt takes a new timestamp (the coordinator begins each attempt afresh), where classic
 * WAIT-DIE keeps the first one so that a transaction that keeps dying ages into one that waits; the coordinator's
 * growing back-off is what keeps a retried transaction from starving here.
 */
public final class WaitDieTxn extends RccLockingTxn {
    /** How long a one-sided waiter yields before it posts its CAS and READ again. */
    static final long RETRY_PAUSE_NS = 1_000;

    public WaitDieTxn(final TxnRuntime runtime, final RccForm form, final String mode) {
        super(runtime, form, RccClock.of(runtime).next(), TupleFormat.TTS_OFFSET, RccRpc.KIND_WAITDIE, mode);
    }

    /** This attempt's timestamp, the value of the {@code tts} words it holds. */
    public long ts() {
        return owner;
    }

    @Override
    protected Future<Access> onTaken(final Access a, final long holder, final boolean byRpc,
                                     final Supplier<Future<Access>> again) {
        if (byRpc || !WaitDie.mayWait(owner, holder)) {
            return Future.failedFuture(new AbortException(AbortReason.LOCKED, "WAITDIE: key " + a.key + " of "
                + a.table + " is held by " + (holder < owner ? "an older" : "a younger or inserting")
                + " transaction (" + Long.toHexString(holder) + "), this one (" + Long.toHexString(owner)
                + ") dies"));
        }
        return runtime.timers().after(RETRY_PAUSE_NS).compose(v -> again.get());
    }

    /** An object being inserted holds its CAS word, not {@code tts}: it has no timestamp to wait for, so this dies. */
    @Override
    protected Future<Access> checkTaken(final Access a) {
        final long inserting = a.image.getLong(ObjectLayout.CAS_LOCK_OFFSET);
        return inserting == 0 ? Future.succeededFuture(a) : Future.failedFuture(new AbortException(
            AbortReason.LOCKED, "WAITDIE: key " + a.key + " of " + a.table + " is being inserted by "
            + Long.toHexString(inserting)));
    }
}
