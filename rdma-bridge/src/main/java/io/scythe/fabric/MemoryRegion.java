package io.scythe.fabric;

import org.agrona.concurrent.AtomicBuffer;

/**
 * A region of a node's memory registered with its NIC: peers reach it with one-sided verbs through
 * {@link #describe() its address and rkey}; its owner reads and writes it directly through {@link #buffer()} (CPU
 * loads, stores and atomics, as an MN-side RPC handler does). After {@link Nic#deregister deregistration} every verb
 * that targets it fails with {@link WcStatus#REMOTE_ACCESS_ERROR} and its buffer must not be used.
 */
public interface MemoryRegion {
    String name();

    String node();

    /** Base address peers use in work requests. */
    long address();

    long length();

    /** Key peers must present; random, checked on every verb, never reused by a later registration. */
    int rkey();

    /** Key for using this region as the local buffer of a work request. */
    int lkey();

    MemoryKind kind();

    /** Local CPU access to the region's bytes (native byte order for the atomic words). */
    AtomicBuffer buffer();

    boolean isRegistered();

    /**
     * Runs {@code listener} after each WRITE or SEND from a peer lands in this region, on the thread that executed it
     * ({@code null} removes it). Only providers that can see peer writes in this process call it ({@link
     * #observesRemoteWrites()}); it lets an RPC server in an embedded cluster stand in for a memory node's polling core
     * without spinning. Pollers of providers that cannot must poll.
     */
    default void remoteWriteListener(final Runnable listener) {
    }

    /** Whether {@link #remoteWriteListener} is ever called for this region. */
    default boolean observesRemoteWrites() {
        return false;
    }

    default RemoteRegion describe() {
        return new RemoteRegion(node(), name(), address(), length(), rkey(), kind());
    }
}
