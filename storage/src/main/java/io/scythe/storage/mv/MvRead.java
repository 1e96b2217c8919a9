package io.scythe.storage.mv;

import org.agrona.concurrent.UnsafeBuffer;

/**
 * What a read at a timestamp found: {@link #status()} is the value's length ({@code >= 0}), or
 * {@link MvStatus#PENDING} (the version it would return is pending: {@link #wts()} and {@link #slot()} name it),
 * {@link MvStatus#NOT_VISIBLE} or {@link MvStatus#STALE}. {@link #wts()} is the version's write timestamp,
 * {@link #slot()} its inline slot or {@link #OVERFLOW} when it came from the overflow chain.
 *
 * <p>Mutable so that a memory node's thread can reuse one; a compute node gets a new one per read.
 */
public final class MvRead {
    /** {@link #slot()} of a version read from the overflow chain. */
    public static final int OVERFLOW = -1;

    private int status;
    private long wts;
    private int slot;
    private UnsafeBuffer value;

    public MvRead() {
    }

    MvRead(final int status, final long wts, final int slot, final UnsafeBuffer value) {
        set(status, wts, slot);
        this.value = value;
    }

    MvRead set(final int status, final long wts, final int slot) {
        this.status = status;
        this.wts = wts;
        this.slot = slot;
        return this;
    }

    public int status() {
        return status;
    }

    /** Whether a committed value was read. */
    public boolean found() {
        return status >= 0;
    }

    public long wts() {
        return wts;
    }

    public int slot() {
        return slot;
    }

    /** The value read ({@link #status()} bytes), where the reader asked for it to be kept; else {@code null}. */
    public UnsafeBuffer value() {
        return value;
    }

    @Override
    public String toString() {
        return "MvRead{" + MvStatus.name(status) + ", wts=" + wts + ", slot=" + slot + "}";
    }
}
