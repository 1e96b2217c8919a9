package io.scythe.fabric.disni;

import com.ibm.disni.verbs.IbvMr;
import io.scythe.fabric.MemoryKind;
import io.scythe.fabric.MemoryRegion;
import org.agrona.concurrent.AtomicBuffer;

/** Host memory registered with the RDMA device: the NIC addresses it by its virtual address and keys. */
final class DisniRegion implements MemoryRegion {
    private final String name;
    private final String node;
    private final IbvMr mr;
    private final AtomicBuffer buffer;
    private volatile boolean registered = true;

    DisniRegion(final String name, final String node, final IbvMr mr, final AtomicBuffer buffer) {
        this.name = name;
        this.node = node;
        this.mr = mr;
        this.buffer = buffer;
    }

    IbvMr mr() {
        return mr;
    }

    void deregistered() {
        registered = false;
    }

    /** Whether {@code [address, address + bytes)} (virtual addresses) lies in this region. */
    boolean holds(final long address, final int bytes) {
        return address >= mr.getAddr() && address - mr.getAddr() <= (long) mr.getLength() - bytes;
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
        return mr.getAddr();
    }

    @Override
    public long length() {
        return mr.getLength();
    }

    @Override
    public int rkey() {
        return mr.getRkey();
    }

    @Override
    public int lkey() {
        return mr.getLkey();
    }

    @Override
    public MemoryKind kind() {
        return MemoryKind.HOST;
    }

    @Override
    public AtomicBuffer buffer() {
        return buffer;
    }

    @Override
    public boolean isRegistered() {
        return registered;
    }
}
