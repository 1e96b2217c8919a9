package io.scythe.fabric.shm;

import io.scythe.fabric.MemoryKind;
import io.scythe.fabric.MemoryRegion;
import io.scythe.fabric.emulated.RegionView;
import org.agrona.concurrent.AtomicBuffer;

import java.nio.file.Path;

import static io.scythe.fabric.shm.ShmLayout.REGION_REGISTERED;
import static io.scythe.fabric.shm.ShmLayout.REGION_RKEY;
import static io.scythe.fabric.shm.ShmLayout.REGION_STATE;

/**
 * A region of a node on the shm fabric, as its owner or a peer sees it: a mapped file, valid while the owner's region
 * table says it is registered under this rkey. Peer WRITEs from other processes cannot be observed, so
 * {@link #observesRemoteWrites()} is false and RPC servers poll.
 */
final class ShmRegion implements MemoryRegion, RegionView {
    private final ShmNodeFile owner;
    private final int slot;
    private final String name;
    private final String node;
    private final long address;
    private final long length;
    private final int rkey;
    private final int lkey;
    private final MemoryKind kind;
    private final AtomicBuffer buffer;
    final Path file;

    ShmRegion(final ShmNodeFile owner, final int slot, final String name, final String node, final long address,
              final long length, final int rkey, final int lkey, final MemoryKind kind, final AtomicBuffer buffer,
              final Path file) {
        this.owner = owner;
        this.slot = slot;
        this.name = name;
        this.node = node;
        this.address = address;
        this.length = length;
        this.rkey = rkey;
        this.lkey = lkey;
        this.kind = kind;
        this.buffer = buffer;
        this.file = file;
    }

    int slot() {
        return slot;
    }

    @Override
    public boolean isRegistered() {
        final int at = owner.regionEntry(slot);
        return owner.memory.getIntVolatile(at + REGION_STATE) == REGION_REGISTERED
            && owner.memory.getInt(at + REGION_RKEY) == rkey;
    }

    /** Whether {@code [nativeAddress, nativeAddress + bytes)} lies in this region's mapped memory. */
    boolean holds(final long nativeAddress, final int bytes) {
        final long start = buffer.addressOffset();
        return nativeAddress >= start && nativeAddress - start <= length - bytes;
    }

    @Override
    public String name() {
        return name;
    }

    @Override
    public String node() {
        return node;
    }

    @Override
    public long address() {
        return address;
    }

    @Override
    public long length() {
        return length;
    }

    @Override
    public int rkey() {
        return rkey;
    }

    @Override
    public int lkey() {
        return lkey;
    }

    @Override
    public MemoryKind kind() {
        return kind;
    }

    @Override
    public AtomicBuffer buffer() {
        return buffer;
    }

    @Override
    public String toString() {
        return "ShmRegion{" + name + "@" + node + " rkey=" + Integer.toHexString(rkey) + " registered="
            + isRegistered() + '}';
    }
}
