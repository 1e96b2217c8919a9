package io.scythe.storage;

/**
 * The index region of a table: the index itself ({@link HashIndexLayout} buckets or {@link SkipListLayout} nodes)
 * from offset 0, then a trailer of {@value #TRAILER_BYTES} bytes that the memory node's CPU keeps for one-sided readers
 * of the index. A trailer rather than a header, so that bucket and node offsets are the same with or without it.
 *
 * <pre>
 *   0                   1                   2                   3
 *   0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
 *  +---------------------------------------------------------------+
 *  |                  the index (region length - 64 bytes)           |  0
 *  |                              ...                                |
 *  +---------------------------------------------------------------+
 *  |                  absent bound (u64): Table#absentBound         |  region length - 64
 *  +---------------------------------------------------------------+
 *  |                  reserved (56 bytes)                           |
 *  +---------------------------------------------------------------+
 * </pre>
 *
 * The absent bound is the largest version of any object reclaimed from the table: a key missing from the index was
 * last at a version at most this. The memory node's CPU raises it before it removes a reclaimed key from the index
 * (both release stores), so a reader that READs the index, finds the key missing, and READs the bound afterwards (a
 * later READ on the same queue pair) sees a bound at least as large as the removed key's last version.
 */
public final class IndexRegionLayout {
    /** Bytes of the trailer: a cache line of its own, so a READ of the bound shares no line with the index. */
    public static final int TRAILER_BYTES = 64;
    /** Offset of the absent bound within the trailer. */
    public static final int ABSENT_BOUND_OFFSET = 0;

    private IndexRegionLayout() {
    }

    /** Bytes of an index region whose index takes {@code indexBytes}. */
    public static long regionBytes(final long indexBytes) {
        return indexBytes + TRAILER_BYTES;
    }

    /** Offset of the trailer in an index region of {@code regionBytes}: the index may use the bytes before it. */
    public static long trailerOffset(final long regionBytes) {
        return regionBytes - TRAILER_BYTES;
    }

    /** Offset of the absent bound in an index region of {@code regionBytes}. */
    public static long absentBoundOffset(final long regionBytes) {
        return trailerOffset(regionBytes) + ABSENT_BOUND_OFFSET;
    }
}
