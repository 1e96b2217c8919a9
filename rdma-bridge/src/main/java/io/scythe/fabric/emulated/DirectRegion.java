package io.scythe.fabric.emulated;

import io.scythe.fabric.MemoryKind;
import io.scythe.fabric.MemoryRegion;
import org.agrona.concurrent.AtomicBuffer;

/**
 * A region of off-heap memory in this JVM (local and tcp providers). The memory is a direct buffer, freed by the
 * garbage collector once no one refers to it, so a verb racing with deregistration can never touch freed memory.
 */
public final class DirectRegion implements MemoryRegion, RegionView {
    private final String name;
    private final String node;
    private final long address;
    private final long length;
    private final int rkey;
    private final int lkey;
    private final MemoryKind kind;
    private final AtomicBuffer buffer;
    private volatile boolean registered = true;
    private volatile Runnable writeListener;

    DirectRegion(final String name, final String node, final long address, final long length, final int rkey,
                final int lkey, final MemoryKind kind, final AtomicBuffer buffer) {
        this.name = name;
        this.node = node;
        this.address = address;
        this.length = length;
        this.rkey = rkey;
        this.lkey = lkey;
        this.kind = kind;
        this.buffer = buffer;
    }

    void deregistered() {
        registered = false;
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
    public boolean isRegistered() {
        return registered;
    }

    @Override
    public void remoteWriteListener(final Runnable listener) {
        this.writeListener = listener;
    }

    @Override
    public boolean observesRemoteWrites() {
        return true;
    }

    @Override
    public void remoteWriteLanded() {
        final Runnable listener = writeListener;
        if (listener != null) {
            listener.run();
        }
    }

    @Override
    public String toString() {
        return "DirectRegion{" + name + "@" + node + " address=0x" + Long.toHexString(address) + " length=" + length
            + " kind=" + kind + " registered=" + registered + '}';
    }
}
