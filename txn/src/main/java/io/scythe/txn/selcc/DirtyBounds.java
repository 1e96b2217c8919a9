package io.scythe.txn.selcc;

/**
 * The dirty bounds of a cached copy (SELCC §5.2.2) as one long: {@code d_lower} in the high 32 bits, {@code d_higher}
 * in the low 32, data offsets; {@link #CLEAN} (0, 0) when nothing was written. A write of {@code [start, end)} widens
 * them to {@code [min(d_lower, start), max(d_higher, end))}; a flush WRITEs only that range.
 */
public final class DirtyBounds {
    public static final long CLEAN = 0;

    private DirtyBounds() {
    }

    /** The bounds after a write of {@code length} bytes at data offset {@code start}. */
    public static long widen(final long bounds, final int start, final int length) {
        if (start < 0 || length < 0) {
            throw new IllegalArgumentException("write of " + length + " bytes at " + start);
        }
        if (length == 0) {
            return bounds;
        }
        final int end = start + length;
        if (bounds == CLEAN) {
            return pack(start, end);
        }
        return pack(Math.min(lower(bounds), start), Math.max(higher(bounds), end));
    }

    public static long pack(final int lower, final int higher) {
        return ((long) lower << 32) | (higher & 0xffffffffL);
    }

    public static int lower(final long bounds) {
        return (int) (bounds >>> 32);
    }

    public static int higher(final long bounds) {
        return (int) bounds;
    }

    /** Bytes a flush writes. */
    public static int length(final long bounds) {
        return higher(bounds) - lower(bounds);
    }
}
