package io.scythe.txn.selcc;

/**
 * An 8-byte global pointer to a global cache line: the memory node's number in the top 16 bits, the byte offset in
 * its GCL region below (48 bits, as x86-64 and ConnectX addresses). 0 is never a line (offset 0 of node 0 holds the
 * region's first line, so pointers are built with {@link #of} which refuses nothing but out-of-range parts; callers
 * that need a null use {@link #NONE}, node 0xffff).
 */
public final class GlobalPointer {
    public static final int NODE_SHIFT = 48;
    public static final long OFFSET_MASK = (1L << NODE_SHIFT) - 1;
    public static final int MAX_NODE = 0xfffe;
    /** No line. */
    public static final long NONE = -1L;

    private GlobalPointer() {
    }

    public static long of(final int node, final long offset) {
        if (node < 0 || node > MAX_NODE) {
            throw new IllegalArgumentException("memory node=" + node + " outside 0.." + MAX_NODE);
        }
        if (offset < 0 || offset > OFFSET_MASK) {
            throw new IllegalArgumentException("offset=" + offset + " outside 48 bits");
        }
        return ((long) node << NODE_SHIFT) | offset;
    }

    public static int node(final long pointer) {
        return (int) (pointer >>> NODE_SHIFT);
    }

    public static long offset(final long pointer) {
        return pointer & OFFSET_MASK;
    }

    public static String toString(final long pointer) {
        return pointer == NONE ? "none" : "mn" + node(pointer) + "+" + offset(pointer);
    }
}
