package io.scythe.fabric.emulated;

import io.scythe.fabric.MemoryKind;
import org.agrona.concurrent.AtomicBuffer;

/** A registered region as the emulated NIC of a requester sees it: where it is, and whether it is still valid. */
public interface RegionView {
    long address();

    long length();

    int rkey();

    MemoryKind kind();

    /** The region's memory; only valid while {@link #isRegistered()}. */
    AtomicBuffer buffer();

    boolean isRegistered();

    /** Called after a peer's WRITE landed in this region (see {@code MemoryRegion#remoteWriteListener}). */
    default void remoteWriteLanded() {
    }
}
