package io.scythe.txn.spi;

import io.scythe.storage.Table;

/**
 * A protocol module's end-of-run view of the objects on a memory node, read directly from its memory (no verbs; the
 * run is over): what its locks leave held. Workloads check with it that every lock was released.
 */
@FunctionalInterface
public interface ObjectProbe {
    /** Whether the object whose header is at {@code header} of {@code table}'s memory is locked or queued on. */
    boolean locked(Table table, int header);

    /** A probe that finds nothing held (a module without locks in the objects). */
    ObjectProbe NONE = (table, header) -> false;
}
