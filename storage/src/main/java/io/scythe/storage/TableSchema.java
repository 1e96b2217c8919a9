package io.scythe.storage;

import io.scythe.fabric.FabricOptions;

/**
 * What a table is: its id and name, its values (exactly {@code maxValueBytes} each when {@code fixedSize}, else up
 * to that), how many records it can hold, its index, and how many older versions its version log can keep.
 */
public record TableSchema(int id, String name, int maxValueBytes, boolean fixedSize, long capacity, IndexKind index,
                          long versionCapacity) {
    /** Largest value a table may declare. */
    public static final int MAX_VALUE_BYTES = 1 << 20;

    public TableSchema {
        if (id <= 0 || id > 0xffff) {
            throw new IllegalArgumentException("table id=" + id + " must be within [1, 65535]");
        }
        FabricOptions.checkName("table", name);
        if (maxValueBytes <= 0 || maxValueBytes > MAX_VALUE_BYTES) {
            throw new IllegalArgumentException("table " + name + ": maxValueBytes=" + maxValueBytes
                + " must be within [1, " + MAX_VALUE_BYTES + "]");
        }
        if (capacity <= 0) {
            throw new IllegalArgumentException("table " + name + ": capacity=" + capacity + " must be positive");
        }
        if (versionCapacity < 0) {
            throw new IllegalArgumentException("table " + name + ": versionCapacity must not be negative");
        }
        if (index == null) {
            throw new IllegalArgumentException("table " + name + ": index kind must be set");
        }
    }

    /** A fixed-size table with a hash index and room for older versions of a quarter of its records. */
    public static TableSchema fixed(final int id, final String name, final int valueBytes, final long capacity) {
        return new TableSchema(id, name, valueBytes, true, capacity, IndexKind.HASH, Math.max(1024, capacity / 4));
    }

    public TableSchema withIndex(final IndexKind kind) {
        return new TableSchema(id, name, maxValueBytes, fixedSize, capacity, kind, versionCapacity);
    }

    public TableSchema withVersionCapacity(final long versions) {
        return new TableSchema(id, name, maxValueBytes, fixedSize, capacity, index, versions);
    }

    public TableSchema variable() {
        return new TableSchema(id, name, maxValueBytes, false, capacity, index, versionCapacity);
    }
}
