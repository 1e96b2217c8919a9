/**
 * Histories of committed transactions and the serializability checker ({@code scythe bench --history},
 * {@code scythe check}, {@code scythe sim --check-history}).
 *
 * <p>Layout: {@link io.scythe.bench.history.HistoryWriter} is the {@link io.scythe.txn.HistoryRecorder} a run
 * installs on every loop's {@code TxnRuntime}; it writes the file format of
 * {@link io.scythe.bench.history.HistoryFormat}; {@link io.scythe.bench.history.HistoryCollector} is the in-memory
 * recorder (the simulator's: same records, no file). {@link io.scythe.bench.history.HistoryReader} reads a file (format
 * version 1 or 2) into a columnar {@link io.scythe.bench.history.History} (also built by hand in tests), and
 * {@link io.scythe.bench.history.SerializabilityChecker} builds its direct serialization graph and finds the cycles.
 *
 * <p><b>Versions order a key's writes</b> (format version 2). A version is the 63-bit word every object header
 * carries ({@code ObjectLayout.VERSION_OFFSET}). Every path that installs one (the write-back, recovery's roll
 * forward, the memory node's revive and abandon of an insert) installs {@code ObjectLayout.versionAfter(commit,
 * current)}: the commit's version (ford-occ: the largest version read plus 1; farm-occ: its physical-clock timestamp;
 * scythe: its TSO timestamp, which for a TOCC transaction is its start timestamp) raised above the version under the
 * lock. So an object's versions strictly increase in the order they are installed, and the checker orders a key's
 * writes by version, with no link to the version each overwrote; a write may so be placed anywhere in the order (a
 * multi-version protocol's blind write between two versions). A protocol without versions records a per-object
 * counter. A key created again after its object was reclaimed starts above every version it had
 * ({@code Table.absentBound}).
 *
 * <p><b>Existence.</b> An insert records a read of the key's absence and a write; a delete a read and a tombstone; a
 * read that finds a key absent (missing from the index, or deleted) records the version it saw as a bound, since the
 * reader knows no exact version of a missing key (and an aborted insert leaves a version nobody committed): the version
 * read is the newest one at or below it. A reader that validates its absent keys records what its validation saw (it
 * serializes there). A phantom is then an anti-dependency through the absence of a key, and the checker also reports
 * as impossible an absent read of a live value and a read of a value at a version that is a delete.
 *
 * <p>Version 1 histories (still read) named, for each write, the version it overwrote, because Scythe's versions were
 * then unique but not increasing; the chains of overwrites ordered a key's versions, and a version overwritten twice
 * (a fork) was reported as impossible. They recorded no inserts, deletes or absent reads.
 *
 * <p>A history covers a run from the moment its data was loaded (the run's warm-up included), so every version read
 * is either the loaded one or made by a recorded transaction; the checker verifies it.
 */
package io.scythe.bench.history;
