package io.scythe.txn.spi;

import io.scythe.storage.ObjectLayout;
import io.scythe.storage.Table;
import org.agrona.concurrent.AtomicBuffer;
import org.agrona.concurrent.UnsafeBuffer;

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
     * Whether the object at {@code header} of {@code table}'s memory holds a write no reader may take as committed
     * yet (Lotus: a CVT cell left INVISIBLE), which a later reader or writer must settle. None by default.
     */
    default boolean unsettled(final Table table, final int header) {
        return false;
    }

    /**
     * The committed value of {@code key} of {@code table}, or null when the key is absent or deleted: byte 0 of the
     * buffer is the value's first, its capacity the value's room (the schema's maximum). Read only, never written:
     * for the one object layout of {@link ObjectLayout} (header, then the newest committed value) it is a view of the
     * home value; a module keeping its values in another format (Lotus's CVT, {@link #committedValue(Table, int,
     * long)}) answers with a copy of its newest committed version. A check must not write memory to look consistent.
     */
    static AtomicBuffer committedValue(final Table table, final long key) {
        final int at = homeOffset(table, key);
        if (at < 0) {
            return null;
        }
        final AtomicBuffer kept = ProtocolRegistry.committedValueElsewhere(table, at, key);
        if (kept != NOT_MINE) {
            return kept;
        }
        if ((table.objectMemory().getShortVolatile(at + ObjectLayout.FLAGS_OFFSET) & ObjectLayout.FLAG_DELETED) != 0) {
            return null;
        }
        return new UnsafeBuffer(table.objectMemory(), at + ObjectLayout.VALUE_OFFSET, table.schema().maxValueBytes());
    }

    /** The offset of {@code key}'s object slot (its header) in {@code table}'s object memory, or -1 when absent. */
    static int homeOffset(final Table table, final long key) {
        final long pointer = table.lookup(key);
        return pointer == 0 ? -1 : table.offsetOf(pointer);
    }

    /** The committed 8-byte value at the start of {@code key}'s value ({@link #committedValue}), or null. */
    static Long committedLong(final Table table, final long key) {
        final AtomicBuffer value = committedValue(table, key);
        return value == null ? null : value.getLongVolatile(0);
    }

    /** What {@link #committedValue(Table, int, long)} answers for an object whose values it does not keep. */
    AtomicBuffer NOT_MINE = new UnsafeBuffer(new byte[0]);

    /**
     * The committed value of the object at {@code object} (key {@code key}) of {@code table}, if this module keeps
     * its values in another format there ({@link #committedValue(Table, long)}): a copy of it, null when deleted,
     * or {@link #NOT_MINE} (the default) for an object in the one layout of {@link ObjectLayout}. Must not write.
     */
    default AtomicBuffer committedValue(final Table table, final int object, final long key) {
        return NOT_MINE;
    }

    /** A probe that finds nothing held (a module without locks in the objects). */
    ObjectProbe NONE = (table, header) -> false;
}
