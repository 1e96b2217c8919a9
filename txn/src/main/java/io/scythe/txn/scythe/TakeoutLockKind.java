package io.scythe.txn.scythe;

import io.scythe.bridge.Doorbell;
import io.scythe.storage.ObjectLayout;
import io.scythe.txn.spi.LockKind;
import org.agrona.DirectBuffer;

/**
 * The Takeout Lock as recovery and the shared parts see it: held by the ticket {@code upper} serves, free when
 * {@code lower == upper} (nobody holds or queues), released by an FAA of 1 on {@code upper}.
 */
public final class TakeoutLockKind implements LockKind {
    /** The redo record's lock kind word of Scythe's commits: the token is the ticket. */
    public static final int ID = 1;
    public static final TakeoutLockKind INSTANCE = new TakeoutLockKind();

    private TakeoutLockKind() {
    }

    @Override
    public int id() {
        return ID;
    }

    @Override
    public String name() {
        return "takeout-ticket";
    }

    @Override
    public boolean free(final DirectBuffer header) {
        return header.getLong(ObjectLayout.LOWER_OFFSET) == header.getLong(ObjectLayout.UPPER_OFFSET);
    }

    @Override
    public boolean heldBy(final DirectBuffer header, final long token) {
        return header.getLong(ObjectLayout.UPPER_OFFSET) == token;
    }

    @Override
    public void release(final Doorbell batch, final long address, final int rkey, final long token) {
        batch.fetchAndAdd(address + ObjectLayout.UPPER_OFFSET, rkey, 1);
    }

    /** Tickets outstanding (held or queued) on the object at {@code header} of a memory node's {@code memory}. */
    public static long queued(final org.agrona.concurrent.AtomicBuffer memory, final int header) {
        return memory.getLongVolatile(header + ObjectLayout.LOWER_OFFSET)
            - memory.getLongVolatile(header + ObjectLayout.UPPER_OFFSET);
    }

    /** Transactions queued on or holding the lock of the object whose {@code header} (or image) was READ. */
    public static long queued(final DirectBuffer header) {
        return header.getLong(ObjectLayout.LOWER_OFFSET) - header.getLong(ObjectLayout.UPPER_OFFSET);
    }
}
