package io.scythe.fabric.emulated;

import org.agrona.collections.IntHashSet;

import java.security.SecureRandom;

/**
 * Hands out the remote addresses and keys of a node's regions. Keys are random (a peer cannot guess one) and never
 * reused while the node lives, so a stale key can only fail. Addresses are 2 MiB aligned with a 2 MiB unmapped gap
 * after every region, so an address just past a region belongs to none.
 */
public final class KeyAndAddressAllocator {
    /** First address handed out: well away from 0, so a null-ish address never hits a region. */
    public static final long FIRST_ADDRESS = 0x0000_1000_0000_0000L;
    public static final long ALIGNMENT = 2L << 20;

    private final SecureRandom random = new SecureRandom();
    private final IntHashSet used = new IntHashSet();
    private long nextAddress = FIRST_ADDRESS;

    /** A fresh non-zero key, unique on this node. */
    public synchronized int nextKey() {
        int key;
        do {
            key = random.nextInt();
        } while (key == 0 || !used.add(key));
        return key;
    }

    /** The base address for a region of {@code length} bytes. */
    public synchronized long nextAddress(final long length) {
        final long address = nextAddress;
        nextAddress += ((length + ALIGNMENT - 1) / ALIGNMENT + 1) * ALIGNMENT;
        return address;
    }
}
