package io.scythe.fabric.emulated;

import io.scythe.fabric.MemoryKind;
import io.scythe.fabric.NicClockWord;
import org.agrona.concurrent.AtomicBuffer;

/**
 * The {@link NicClockWord} as a requester's emulated NIC sees its target: on the NIC (device memory, so a READ of it
 * pays no PCIe round trip to host memory), always there, and with no bytes of its own: its value is the responder's
 * clock at the READ's modelled execution time, written by the queue pair.
 */
final class NicClockView implements RegionView {
    static final NicClockView INSTANCE = new NicClockView();

    private NicClockView() {
    }

    @Override
    public long address() {
        return NicClockWord.ADDRESS;
    }

    @Override
    public long length() {
        return NicClockWord.LENGTH;
    }

    @Override
    public int rkey() {
        return NicClockWord.RKEY;
    }

    @Override
    public MemoryKind kind() {
        return MemoryKind.DEVICE;
    }

    @Override
    public AtomicBuffer buffer() {
        throw new UnsupportedOperationException("the NIC clock word has no memory: it is read from the clock");
    }

    @Override
    public boolean isRegistered() {
        return true;
    }
}
