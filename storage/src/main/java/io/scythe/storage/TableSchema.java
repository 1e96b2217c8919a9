package io.scythe.storage;

import io.scythe.fabric.FabricOptions;

/**
 * What a table is: its id and name, its values (exactly {@code maxValueBytes} each when {@code fixedSize}, else up
 * to that), how many records it can hold, its index, and how many older versions its version log can keep.
 *
 * <p>{@code readOnly}: no transaction writes, inserts or deletes it after loading (TPC-C's ITEM). Transactions then read
 * it without concurrency control (no lock, ticket or validation) in every protocol, and refuse to write it. Beyond
 * the papers, which lock or validate every object; a careful implementation of any of them would do the same.
 */
public record TableSchema(int id, String name, int maxValueBytes, boolean fixedSize, long capacity, IndexKind index,
                          long versionCapacity, boolean readOnly) {
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

    /** A table that transactions may write. */
    public TableSchema(final int id, final String name, final int maxValueBytes, final boolean fixedSize,
                       final long capacity, final IndexKind index, final long versionCapacity) {
        this(id, name, maxValueBytes, fixedSize, capacity, index, versionCapacity, false);
    }

    /** A fixed-size table with a hash index and room for older versions of a quarter of its records. */
    public static TableSchema fixed(final int id, final String name, final int valueBytes, final long capacity) {
        return new TableSchema(id, name, valueBytes, true, capacity, IndexKind.HASH, Math.max(1024, capacity / 4));
    }

    public TableSchema withIndex(final IndexKind kind) {
        return new TableSchema(id, name, maxValueBytes, fixedSize, capacity, kind, versionCapacity, readOnly);
    }

    public TableSchema withVersionCapacity(final long versions) {
        return new TableSchema(id, name, maxValueBytes, fixedSize, capacity, index, versions, readOnly);
    }

    public TableSchema variable() {
        return new TableSchema(id, name, maxValueBytes, false, capacity, index, versionCapacity, readOnly);
    }

    /** This table, read-only to transactions (see the class comment). */
    public TableSchema asReadOnly() {
        return new TableSchema(id, name, maxValueBytes, fixedSize, capacity, index, versionCapacity, true);
    }
}
