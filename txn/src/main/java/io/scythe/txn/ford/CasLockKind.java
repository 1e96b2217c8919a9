package io.scythe.txn.ford;

import io.scythe.bridge.Doorbell;
import io.scythe.storage.ObjectLayout;
import io.scythe.txn.spi.LockKind;
import org.agrona.DirectBuffer;

/**
 * The CAS lock word ({@link CasLock}) as recovery and the shared parts see it: held while the word is the owner's
 * transaction id, free at 0; recovery releases it with a CAS from the owner to 0 (never a blind WRITE: the lock may
 * have passed on).
 */
public final class CasLockKind implements LockKind {
    /** The redo record's lock kind word of FORD's and FaRM's commits: the token is the owner's transaction id. */
    public static final int ID = 2;
    public static final CasLockKind INSTANCE = new CasLockKind();

    private CasLockKind() {
    }

    @Override
    public int id() {
        return ID;
    }

    @Override
    public String name() {
        return "cas-word";
    }

    @Override
    public boolean free(final DirectBuffer header) {
        return CasLock.free(header);
    }

    @Override
    public boolean heldBy(final DirectBuffer header, final long token) {
        return header.getLong(ObjectLayout.CAS_LOCK_OFFSET) == token;
    }

    @Override
    public void release(final Doorbell batch, final long address, final int rkey, final long token) {
        batch.compareAndSwap(address + ObjectLayout.CAS_LOCK_OFFSET, rkey, token, 0);
    }
}
