package io.scythe.txn.rcc;

import io.scythe.bridge.Doorbell;
import io.scythe.storage.ObjectLayout;
import io.scythe.txn.spi.LockKind;
import org.agrona.DirectBuffer;

import java.util.List;

/**
 * The lock of an RCC protocol's written objects as its coordinator-log records name it ({@link RccLog}): the word
 * at {@code offset} (NOWAIT and OCC: the CAS word holding the transaction id; WAITDIE and MVCC: {@code tts} holding
 * the timestamp; SUNDIAL: its lock word holding the transaction id), or the CAS word of an object the attempt
 * inserted. One kind per protocol, so a record says which protocol wrote it.
 *
 * <p><b>Recovery</b> ({@code recovery.CnRecovery}, unmodified): NOWAIT's and OCC's words are the CAS word holding
 * the owner's transaction id, as FORD's ({@code ford.CasLockKind}): a record is rolled forward while its entries'
 * words still hold its id (backups, then the primary and a CAS from the id to 0), and every other word of the dead
 * node (NOWAIT's read locks, which no record names; a commit that logged nothing) is freed by the CAS-word module's
 * dead-node step, which frees words by the node's id prefix. WAITDIE's, MVCC's and SUNDIAL's are not built (issue 18:
 * their tts words hold timestamps, which no dead-node step knows; MVCC's roll-forward must move the newest version
 * to an older slot first, SUNDIAL's must set rts): {@link #heldBy}, which recovery asks first of every entry, fails
 * naming that.
 */
public record RccLockKind(int id, String name, int offset, boolean recoverable) implements LockKind {
    public static final RccLockKind NOWAIT = new RccLockKind(18, "rcc-nowait-lock", ObjectLayout.CAS_LOCK_OFFSET,
        true);
    public static final RccLockKind WAITDIE = new RccLockKind(19, "rcc-waitdie-tts", TupleFormat.TTS_OFFSET, false);
    public static final RccLockKind OCC = new RccLockKind(20, "rcc-occ-lock", ObjectLayout.CAS_LOCK_OFFSET, true);
    public static final RccLockKind MVCC = new RccLockKind(21, "rcc-mvcc-tts", TupleFormat.TTS_OFFSET, false);
    public static final RccLockKind SUNDIAL = new RccLockKind(22, "rcc-sundial-lock", TupleFormat.TTS_OFFSET,
        false);
    public static final List<RccLockKind> ALL = List.of(NOWAIT, WAITDIE, OCC, MVCC, SUNDIAL);

    @Override
    public boolean free(final DirectBuffer header) {
        return header.getLong(offset) == 0 && header.getLong(ObjectLayout.CAS_LOCK_OFFSET) == 0;
    }

    @Override
    public boolean heldBy(final DirectBuffer header, final long token) {
        if (recoverable) {
            return header.getLong(ObjectLayout.CAS_LOCK_OFFSET) == token;
        }
        throw new UnsupportedOperationException("a redo record of " + name + ": recovery of RCC's coordinator log "
            + "is not built (issue 18)");
    }

    @Override
    public void release(final Doorbell batch, final long address, final int rkey, final long token) {
        if (recoverable) { // a CAS from the owner to 0, never a blind WRITE (the word may have passed on)
            batch.compareAndSwap(address + ObjectLayout.CAS_LOCK_OFFSET, rkey, token, 0);
            return;
        }
        throw new UnsupportedOperationException("releasing " + name + " for recovery: not built (issue 18)");
    }
}
