package io.scythe.storage;

/**
 * The concurrent skip list a table can use as its index (Scythe §4.7 uses one for YCSB), in registered memory so a
 * compute node can also walk it with one-sided READs: one READ per node visited, which is why an RPC lookup (one
 * round trip, the walk done by the memory node's CPU) usually wins (Scythe §1 (3)).
 *
 * <pre>
 *  node (24 + 8 x level bytes); the head node is at offset 0 with {@value #MAX_LEVEL} levels:
 *   0                   1                   2                   3
 *   0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
 *  +---------------------------------------------------------------+
 *  |                  key (u64)                                      |  0
 *  +---------------------------------------------------------------+
 *  |                  object address (u64)   1 = deleted             |  8
 *  +-------------------------------+-------------------------------+
 *  |  level (u32)                  |  reserved (u32)               | 16
 *  +-------------------------------+-------------------------------+
 *  |  next[0]: offset of the next node at level 0 in this region   | 24  0 = none
 *  |  next[1] ... next[level - 1]                                  |
 *  +---------------------------------------------------------------+
 * </pre>
 * A node is written whole, then linked bottom-up with release stores, so a lock-free reader (MN CPU or one-sided)
 * always sees a well-formed list. Removal is logical (the address becomes {@link HashIndexLayout#DELETED}); the node
 * stays and is reused if its key is inserted again.
 */
public final class SkipListLayout {
    public static final int MAX_LEVEL = 16;
    public static final int KEY_OFFSET = 0;
    public static final int ADDRESS_OFFSET = 8;
    public static final int LEVEL_OFFSET = 16;
    public static final int NEXT_OFFSET = 24;
    public static final int HEAD_OFFSET = 0;
    /** Bytes a one-sided walker reads per node: enough for any level. */
    public static final int MAX_NODE_BYTES = NEXT_OFFSET + MAX_LEVEL * Long.BYTES;
    /** Expected bytes per key at p = 1/4 (4/3 levels on average). */
    public static final double BYTES_PER_KEY = NEXT_OFFSET + Long.BYTES * 4.0 / 3.0;

    private SkipListLayout() {
    }

    public static int nodeBytes(final int level) {
        return NEXT_OFFSET + level * Long.BYTES;
    }

    public static int nextOffset(final int level) {
        return NEXT_OFFSET + level * Long.BYTES;
    }

    /** Region bytes for {@code records} keys, with slack for unlucky levels. */
    public static long regionBytesFor(final long records) {
        return nodeBytes(MAX_LEVEL) + (long) Math.ceil(records * BYTES_PER_KEY * 1.25) + 4096;
    }
}
