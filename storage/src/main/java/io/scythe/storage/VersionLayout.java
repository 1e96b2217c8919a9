package io.scythe.storage;

/**
 * An older version of an object, in the version log of its table: the chain from an object's
 * {@link ObjectLayout#OLDER_OFFSET older} pointer runs newest first. A reader at timestamp {@code ts} follows it to the
 * first version whose {@code version <= ts}.
 *
 * <pre>
 *   0                   1                   2                   3
 *   0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
 *  +---------------------------------------------------------------+
 *  |                  version (u64)  commit ts of this value         |  0
 *  +---------------------------------------------------------------+
 *  |  older: address of the next-older version record (48 bits)    |  8
 *  +-------------------------------+-------------------------------+
 *  |  value length (u32)           |  flags (u32)                  | 16
 *  +-------------------------------+-------------------------------+
 *  |                  value (value length bytes, 8-byte padded)      | 24
 *  +---------------------------------------------------------------+
 * </pre>
 */
public final class VersionLayout {
    public static final int VERSION_OFFSET = 0;
    public static final int OLDER_OFFSET = 8;
    public static final int VALUE_LENGTH_OFFSET = 16;
    public static final int FLAGS_OFFSET = 20;
    public static final int HEADER_BYTES = 24;
    public static final int VALUE_OFFSET = HEADER_BYTES;

    private VersionLayout() {
    }

    public static int slotBytes(final int maxValueBytes) {
        return HEADER_BYTES + ObjectLayout.align8(maxValueBytes);
    }
}
