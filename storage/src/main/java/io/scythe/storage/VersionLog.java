package io.scythe.storage;

import io.scythe.fabric.MemoryRegion;
import org.agrona.DirectBuffer;
import org.agrona.concurrent.AtomicBuffer;

import java.lang.invoke.VarHandle;
import java.util.concurrent.locks.ReentrantLock;

/**
 * LogDB's version log as a component others can own: {@link VersionLayout} records in one registered region, written
 * and freed by the memory node's CPU, chained newest first through their {@code older} addresses, and read by anyone
 * (the CPU, or compute nodes with one-sided READs of {@link #recordBytes()}). A record is immutable from the moment
 * its address is returned until it is freed, so a reader needs no lock: whoever frees a record must first make sure no
 * reader can still reach it (the owner's reclamation horizon). {@link Table} keeps its own log; multi-version tables
 * ({@code io.scythe.storage.mv}) keep their overflow versions here.
 *
 * <p>Thread-safe: appends may come from an RPC loop while a reclaimer frees on another thread; both hold the
 * allocation lock only for one free-list push or pop.
 */
public final class VersionLog {
    private final MemoryRegion region;
    private final AtomicBuffer memory;
    private final Slab slab;
    private final int maxValueBytes;
    private final ReentrantLock allocation = new ReentrantLock();

    public VersionLog(final MemoryRegion region, final int maxValueBytes) {
        this.region = region;
        this.memory = region.buffer();
        this.maxValueBytes = maxValueBytes;
        this.slab = new Slab(region, VersionLayout.slotBytes(maxValueBytes));
    }

    public MemoryRegion region() {
        return region;
    }

    /** Bytes of one record: what a one-sided READ of a record fetches. */
    public int recordBytes() {
        return slab.slotBytes();
    }

    /**
     * Appends a record of {@code value} at {@code version} whose next-older record is {@code older} (0: none). The
     * record is whole before its address is returned (release), so it may be linked at once.
     *
     * @return the record's address, or 0 when the log is full
     */
    public long append(final long version, final long older, final int flags, final DirectBuffer value,
                       final int offset, final int length) {
        if (length < 0 || length > maxValueBytes) {
            throw new IllegalArgumentException("version of " + length + " bytes, log records hold " + maxValueBytes);
        }
        final long slot;
        allocation.lock();
        try {
            slot = slab.allocate();
        } finally {
            allocation.unlock();
        }
        if (slot < 0) {
            return 0;
        }
        final int at = (int) slot;
        memory.putLong(at + VersionLayout.VERSION_OFFSET, version);
        memory.putLong(at + VersionLayout.OLDER_OFFSET, older & ObjectLayout.ADDRESS_MASK);
        memory.putInt(at + VersionLayout.VALUE_LENGTH_OFFSET, length);
        memory.putInt(at + VersionLayout.FLAGS_OFFSET, flags);
        if (length > 0) {
            memory.putBytes(at + VersionLayout.VALUE_OFFSET, value, offset, length);
        }
        VarHandle.releaseFence(); // whole before anyone can be handed the address
        return region.address() + at;
    }

    /** Offset in {@link #memory()} of the record at {@code address}. */
    public int offsetOf(final long address) {
        final long offset = (address & ObjectLayout.ADDRESS_MASK) - region.address();
        if (offset < 0 || offset > region.length() - recordBytes() || offset % recordBytes() != 0) {
            throw new IllegalArgumentException("address=" + address + " is no record of version log "
                + region.name());
        }
        return (int) offset;
    }

    public AtomicBuffer memory() {
        return memory;
    }

    public long version(final long address) {
        return memory.getLong(offsetOf(address) + VersionLayout.VERSION_OFFSET);
    }

    public long older(final long address) {
        return memory.getLongVolatile(offsetOf(address) + VersionLayout.OLDER_OFFSET) & ObjectLayout.ADDRESS_MASK;
    }

    public int valueLength(final long address) {
        return memory.getInt(offsetOf(address) + VersionLayout.VALUE_LENGTH_OFFSET);
    }

    /** The first record at or below {@code ts} in the chain from {@code address} (newest first), or 0. */
    public long find(long address, final long ts) {
        while (address != 0 && version(address) > ts) {
            address = older(address);
        }
        return address;
    }

    /**
     * Ends the chain at {@code record}: its {@code older} becomes 0 and every record that was older is freed. Only
     * for records no reader will step past (a reader stops at the first record at or below its timestamp).
     *
     * @return records freed
     */
    public long truncateAfter(final long record) {
        final long rest = older(record);
        memory.putLongRelease(offsetOf(record) + VersionLayout.OLDER_OFFSET, 0);
        return free(rest);
    }

    /**
     * Frees the chain from {@code address}, which no reader can reach any more.
     *
     * @return records freed
     */
    public long free(long address) {
        long freed = 0;
        while (address != 0) {
            final long next = older(address);
            final int at = offsetOf(address);
            allocation.lock();
            try {
                slab.free(at);
            } finally {
                allocation.unlock();
            }
            freed++;
            address = next;
        }
        return freed;
    }

    /** Records in use. */
    public long used() {
        allocation.lock();
        try {
            return slab.used();
        } finally {
            allocation.unlock();
        }
    }

    public long capacity() {
        return slab.capacity();
    }
}
