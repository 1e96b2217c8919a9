package io.scythe.txn.rcc.calvin;

import io.scythe.txn.rcc.calvin.CalvinWire.Key;
import io.scythe.txn.rcc.calvin.CalvinWire.Record;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

/**
 * The records of one run of a transaction as its participants forward them to its executor ({@link CalvinWire#FORWARD},
 * whole or in pieces), until one of each of its {@code keys} declared keys is here. A key's record counted once: a
 * record that comes again once whole (a dead owner's FORWARD handled after its successor forwarded the same key from
 * the rebuilt part) is ignored, so the run is never delivered with another key's record missing. Loop-confined;
 * sans-IO.
 */
final class Forwards {
    private final List<Record> records = new ArrayList<>();
    private final Set<Key> whole = new HashSet<>();
    private final CalvinWire.Pieces pieces = new CalvinWire.Pieces();
    private int left;

    /** Awaits one record of each of {@code keys} keys. */
    Forwards(final int keys) {
        this.left = keys;
    }

    /** Adds {@code arrived}: the keys whose records are whole with it (a key already whole is not named again). */
    List<Key> add(final List<Record> arrived) {
        final List<Key> now = new ArrayList<>(arrived.size());
        for (final Record r : arrived) {
            if (whole.contains(r.key())) {
                continue; // its record again (or a piece of it): the first one counted
            }
            final Record w = pieces.add(r);
            if (w != null && whole.add(w.key())) {
                records.add(w);
                now.add(w.key());
                left--;
            }
        }
        return now;
    }

    /** Every record, once the last of them came with the {@link #add} that returned {@code now}; else null. */
    List<Record> completedBy(final List<Key> now) {
        return left == 0 && !now.isEmpty() ? List.copyOf(records) : null;
    }
}
