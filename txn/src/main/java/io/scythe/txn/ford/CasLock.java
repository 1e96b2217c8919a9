package io.scythe.txn.ford;

import io.scythe.bridge.RdmaChannel;
import io.scythe.storage.ObjectLayout;
import io.vertx.core.Future;
import org.agrona.concurrent.UnsafeBuffer;

/**
 * FORD's lock (peers.md §2): one 8-byte word per object ({@link ObjectLayout#CAS_LOCK_OFFSET}), taken by an RDMA CAS
 * from 0 to the holder's id and released by an RDMA WRITE of 0. No queue: a CAS that finds the word taken fails, and
 * the caller aborts (FORD) or tries again (the spin lock Scythe's Fig. 27 compares with).
 */
public final class CasLock {
    private static final UnsafeBuffer ZERO = new UnsafeBuffer(new byte[Long.BYTES]);

    private CasLock() {
    }

    /** Address of the CAS lock word of the object at {@code pointer}. */
    public static long lockAddress(final long pointer) {
        return ObjectLayout.addressOf(pointer) + ObjectLayout.CAS_LOCK_OFFSET;
    }

    /** Whether the object whose {@code header} (or whole image) was READ has its CAS lock free. */
    public static boolean free(final org.agrona.DirectBuffer header) {
        return header.getLong(ObjectLayout.CAS_LOCK_OFFSET) == 0;
    }

    /** One CAS: {@code true} when {@code holder} (non-zero) now holds the lock. */
    public static Future<Boolean> tryLock(final RdmaChannel channel, final long lockAddress, final int rkey,
                                          final long holder) {
        if (holder == 0) {
            throw new IllegalArgumentException("holder id 0 means free");
        }
        return channel.compareAndSwap(lockAddress, rkey, 0, holder).map(found -> found == 0);
    }

    /** Releases the lock with a WRITE of 0 (the holder owns the word, so no CAS is needed). */
    public static Future<Void> unlock(final RdmaChannel channel, final long lockAddress, final int rkey) {
        return channel.write(lockAddress, rkey, ZERO, 0, Long.BYTES);
    }
}
