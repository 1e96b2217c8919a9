package io.scythe.fabric.emulated;

import io.scythe.fabric.Opcode;
import io.scythe.fabric.WcStatus;
import org.agrona.DirectBuffer;
import org.agrona.MutableDirectBuffer;
import org.agrona.concurrent.AtomicBuffer;

import java.lang.invoke.VarHandle;

/**
 * What a responder NIC does to its memory for a one-sided verb, with the checks a real NIC makes: a valid rkey, a
 * registered region, a range inside it, an aligned atomic. A failed check changes nothing and returns the status a
 * real NIC reports.
 */
public final class OneSidedOps {
    private OneSidedOps() {
    }

    /** Checks that {@code [remoteAddress, remoteAddress + length)} lies in {@code region}. */
    public static WcStatus check(final RegionView region, final int rkey, final long remoteAddress, final int length,
                                 final boolean atomic) {
        if (region == null || region.rkey() != rkey || !region.isRegistered()) {
            return WcStatus.REMOTE_ACCESS_ERROR;
        }
        final long offset = remoteAddress - region.address();
        if (offset < 0 || offset > region.length() - length) {
            return WcStatus.REMOTE_ACCESS_ERROR;
        }
        if (atomic && (remoteAddress & (Opcode.ATOMIC_WIDTH - 1)) != 0) {
            return WcStatus.REMOTE_INVALID_REQUEST;
        }
        return WcStatus.SUCCESS;
    }

    /**
     * Executes a READ, WRITE, CAS or FAA on {@code region}. READ copies into {@code local}; atomics store the old
     * value there; WRITE copies from it.
     */
    public static WcStatus execute(final Opcode opcode, final RegionView region, final int rkey,
                                   final long remoteAddress, final DirectBuffer local, final int localOffset,
                                   final int length, final long compareOrAdd, final long swap) {
        final WcStatus check = check(region, rkey, remoteAddress, length, opcode.isAtomic());
        if (check != WcStatus.SUCCESS) {
            return check;
        }
        final AtomicBuffer memory = region.buffer();
        final int offset = (int) (remoteAddress - region.address());
        switch (opcode) {
            case READ:
                // Pairs with the release fence of WRITE: a READ that sees a word sees what was written before it.
                VarHandle.acquireFence();
                if (length == Long.BYTES && (offset & 7) == 0) {
                    ((MutableDirectBuffer) local).putLong(localOffset, memory.getLong(offset));
                } else {
                    memory.getBytes(offset, (MutableDirectBuffer) local, localOffset, length);
                }
                return WcStatus.SUCCESS;
            case WRITE:
                if (length == Long.BYTES && (offset & 7) == 0) {
                    memory.putLong(offset, local.getLong(localOffset)); // one 8-byte store, as the NIC's DMA
                } else {
                    memory.putBytes(offset, local, localOffset, length);
                }
                VarHandle.releaseFence();
                region.remoteWriteLanded();
                return WcStatus.SUCCESS;
            case COMPARE_AND_SWAP:
                ((MutableDirectBuffer) local).putLong(localOffset,
                    memory.compareAndExchangeLong(offset, compareOrAdd, swap));
                return WcStatus.SUCCESS;
            case FETCH_AND_ADD:
                ((MutableDirectBuffer) local).putLong(localOffset, memory.getAndAddLong(offset, compareOrAdd));
                return WcStatus.SUCCESS;
            default:
                return WcStatus.REMOTE_INVALID_REQUEST;
        }
    }
}
