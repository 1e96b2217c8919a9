package io.scythe.storage.mv;

import io.scythe.storage.TableSchema;

/**
 * What a multi-version table is: a LogDB {@link TableSchema} (id, name, values, capacity, index, and how many versions
 * its overflow log holds: {@code versionCapacity}, 0 for none) and how many versions each object keeps inline.
 */
public record MvSchema(TableSchema table, int inlineSlots) {
    public MvSchema {
        if (table == null) {
            throw new IllegalArgumentException("multi-version table: schema must be set");
        }
        MvObjectDescriptor.checkGeometry(inlineSlots, table.maxValueBytes());
    }

    /** {@code table} with {@link MvObjectDescriptor#DEFAULT_SLOTS} inline slots. */
    public static MvSchema of(final TableSchema table) {
        return new MvSchema(table, MvObjectDescriptor.DEFAULT_SLOTS);
    }

    public int id() {
        return table.id();
    }

    public String name() {
        return table.name();
    }

    public int maxValueBytes() {
        return table.maxValueBytes();
    }

    /** Bytes of one object: what a one-sided READ of it fetches. */
    public int objectBytes() {
        return MvObjectDescriptor.objectBytes(inlineSlots, table.maxValueBytes());
    }

    /** Whether {@code length} is a valid value length for this table. */
    public boolean lengthOk(final int length) {
        return table.fixedSize() ? length == table.maxValueBytes() : length >= 0 && length <= table.maxValueBytes();
    }
}
