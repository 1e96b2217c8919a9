package io.scythe.txn.selcc;

/**
 * The layout of one global cache line (GCL) in a memory node's GCL region (SELCC §3.1): the latch word, a header
 * with the dirty bounds, then the data. Lines are {@code lineBytes} long (default {@link #DEFAULT_LINE_BYTES}, the
 * paper's micro-benchmark size), 8-byte aligned, packed back to back.
 *
 * <pre>
 *   0                   1                   2                   3
 *   0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
 *  +---------------------------------------------------------------+
 *  | X holder  |           latch word (u64, LatchWord)             |  0  RDMA CAS / FAA only
 *  +-------------------------------+-------------------------------+
 *  |  d_lower (u32)                |  d_higher (u32)               |  8  dirty bounds of the holder's copy
 *  +-------------------------------+-------------------------------+
 *  |                  writes (u64)  per-line write counter           | 16  +1 by every X holder that wrote
 *  +---------------------------------------------------------------+
 *  |                  data (lineBytes - 24 bytes)                    | 24
 *  |                              ...                                |
 *  +---------------------------------------------------------------+
 * </pre>
 *
 * The dirty bounds {@code [d_lower, d_higher)} are data offsets the X holder has written since it took the line
 * ({@code d_lower = min}, {@code d_higher = max}, both 0 when clean; §5.2.2, without the text's typo); a flush WRITEs
 * only that range of data, then the header. The write counter orders a line's writes for the history checker (a
 * protocol without versions, history v2). The latch word is never written by a WRITE: a flush covers bytes
 * {@code [8, ...)} only, so a NIC atomic on it never races a WRITE (RDMA atomics are atomic only against atomics).
 */
public final class GclDescriptor {
    public static final int LATCH_OFFSET = 0;
    public static final int D_LOWER_OFFSET = 8;
    public static final int D_HIGHER_OFFSET = 12;
    public static final int WRITES_OFFSET = 16;
    public static final int DATA_OFFSET = 24;
    public static final int HEADER_BYTES = DATA_OFFSET;
    public static final int DEFAULT_LINE_BYTES = 2048;
    /** Smallest line: the header and one 8-byte word of data. */
    public static final int MIN_LINE_BYTES = HEADER_BYTES + 8;
    /** Largest line (the paper measures up to 8 KB). */
    public static final int MAX_LINE_BYTES = 1 << 20;

    private GclDescriptor() {
    }

    /** Refuses a line size that is not 8-byte aligned or not in [{@link #MIN_LINE_BYTES}, {@link #MAX_LINE_BYTES}]. */
    public static int checkLineBytes(final int lineBytes) {
        if (lineBytes < MIN_LINE_BYTES || lineBytes > MAX_LINE_BYTES || (lineBytes & 7) != 0) {
            throw new IllegalArgumentException("lineBytes=" + lineBytes + ": a global cache line is 8-byte aligned, "
                + "at least " + MIN_LINE_BYTES + " (header + one word) and at most " + MAX_LINE_BYTES + " bytes");
        }
        return lineBytes;
    }

    /** Data bytes of a line of {@code lineBytes}. */
    public static int dataBytes(final int lineBytes) {
        return checkLineBytes(lineBytes) - HEADER_BYTES;
    }

    /** Offset of line {@code index} in a region of lines of {@code lineBytes}. */
    public static long lineOffset(final long index, final int lineBytes) {
        return index * checkLineBytes(lineBytes);
    }
}
