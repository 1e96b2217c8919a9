package io.scythe.txn.spi;

import io.scythe.storage.ObjectLayout;
import io.scythe.storage.Table;

/**
 * A protocol module's end-of-run view of the objects on a memory node, read directly from its memory (no verbs; the
 * run is over): what its locks leave held, and where a key's committed value is. Workloads check with it that every
 * lock was released and that their invariants hold.
 */
@FunctionalInterface
public interface ObjectProbe {
    /** Whether the object whose header is at {@code header} of {@code table}'s memory is locked or queued on. */
    boolean locked(Table table, int header);

    /**
     * Where the committed value of {@code key} of {@code table} is in the table's object memory, or -1 when the key
     * is absent or deleted. Every module here keeps values in the one object layout of {@link ObjectLayout} (header,
     * then the newest committed value), so this reads that layout; a module with another format of its values (a
     * CN cache, multi-version slots) is where another answer would come from.
     */
    static int committedValueOffset(final Table table, final long key) {
        final long pointer = table.lookup(key);
        final int at = pointer == 0 ? -1 : table.offsetOf(pointer);
        if (at >= 0) {
            for (final ObjectProbe probe : ProtocolRegistry.probes()) {
                final int value = probe.committedValue(table, at, key);
                if (value != NOT_MINE) {
                    return value;
                }
            }
        }
        if (at < 0 || (table.objectMemory().getShortVolatile(at + ObjectLayout.FLAGS_OFFSET)
            & ObjectLayout.FLAG_DELETED) != 0) {
            return -1;
        }
        return at + ObjectLayout.VALUE_OFFSET;
    }

    /** The committed 8-byte value at the start of {@code key}'s value ({@link #committedValueOffset}), or null. */
    static Long committedLong(final Table table, final long key) {
        final int at = committedValueOffset(table, key);
        return at < 0 ? null : table.objectMemory().getLongVolatile(at);
    }

    /** What {@link #committedValue} answers for an object whose values it does not keep. */
    int NOT_MINE = -2;

    /**
     * Where the committed value of the object at {@code object} (key {@code key}) of {@code table} is, if this
     * module keeps its values in another format there ({@link #committedValueOffset}): its offset, -1 when deleted,
     * or {@link #NOT_MINE} (the default) for an object in the one layout of {@link ObjectLayout}.
     */
    default int committedValue(final Table table, final int object, final long key) {
        return NOT_MINE;
    }

    /** A probe that finds nothing held (a module without locks in the objects). */
    ObjectProbe NONE = (table, header) -> false;
}
