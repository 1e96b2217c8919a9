package io.scythe.fabric;

/**
 * What a peer needs to address a registered region with one-sided verbs: its node, base address, length and rkey.
 * This is the metadata a memory node serves; it is immutable and safe to cache (a stale one fails with
 * {@link WcStatus#REMOTE_ACCESS_ERROR}, never touches other memory).
 */
public record RemoteRegion(String node, String name, long address, long length, int rkey, MemoryKind kind) {

    public RemoteRegion {
        if (length <= 0) {
            throw new IllegalArgumentException("length=" + length + " must be positive");
        }
    }

    /** The remote address of {@code offset} bytes into the region, checked against its bounds. */
    public long addressOf(final long offset) {
        return addressOf(offset, 1);
    }

    /** The remote address of {@code [offset, offset + span)}, checked to lie within the region. */
    public long addressOf(final long offset, final int span) {
        if (offset < 0 || span < 0 || offset > length - span) {
            throw new IndexOutOfBoundsException(
                "offset=" + offset + " span=" + span + " outside region " + name + "@" + node + " length=" + length);
        }
        return address + offset;
    }

    public boolean contains(final long remoteAddress, final int span) {
        return remoteAddress >= address && span >= 0 && remoteAddress - address <= length - span;
    }
}
