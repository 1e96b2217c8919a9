/**
 * Histories of committed transactions and the serializability checker ({@code scythe bench --history},
 * {@code scythe check}).
 *
 * <p>Layout: {@link io.scythe.bench.history.HistoryWriter} is the {@link io.scythe.txn.HistoryRecorder} a run
 * installs on every loop's {@code TxnRuntime}; it writes the file format of
 * {@link io.scythe.bench.history.HistoryFormat}; {@link io.scythe.bench.history.HistoryCollector} is the in-memory
 * recorder (the simulator's: same records, no file). {@link io.scythe.bench.history.HistoryReader} reads a file into a
 * columnar {@link io.scythe.bench.history.History} (also built by hand in tests), and
 * {@link io.scythe.bench.history.SerializabilityChecker} builds its direct serialization graph and finds the cycles.
 *
 * <p><b>Why each write records the version it overwrote.</b> A version is the 63-bit word every object header
 * carries ({@code ObjectLayout.VERSION_OFFSET}); a commit's write-back stores its version there. For the checker it
 * must identify a key's version order, and per protocol it does so differently:
 * <ul>
 *   <li>ford-occ installs {@code max(version read) + 1} over the keys it touched, under the key's CAS lock and with
 *       the version checked unchanged since it was read: strictly increasing per key (but not unique across keys);</li>
 *   <li>farm-occ installs its physical-clock timestamp, taken after its locks are held; in one JVM the clock is
 *       monotonic, so versions increase, but across hosts only within the clock uncertainty;</li>
 *   <li>scythe installs its TSO timestamp, and a TOCC transaction writes with its <em>start</em> timestamp, which can
 *       be smaller than that of an OCC transaction that committed on the key before it (see {@code ScytheTxn}):
 *       versions are unique per key but <em>not</em> increasing.</li>
 * </ul>
 * So the checker never compares versions: each write names the version it made and the one it overwrote, and the
 * version order of a key is the chain from the initial (loaded) version through these links. Under every real
 * protocol the version overwritten is the version the transaction read: it writes back under a lock (CAS lock or
 * Takeout Lock) taken while the version was still the one read (checked at lock time, by validation, or by reading
 * under the lock). The {@code unsafe} protocol records the same belief without the lock, so two of its transactions
 * that raced show up as two overwrites of one version: impossible, and a cycle (a lost update).
 *
 * <p>Inserts and deletes (when the protocols have them) fit the format as writes without a read: an insert makes
 * its version over the initial one, a delete makes a tombstone version over the version it removed.
 *
 * <p>A history covers a run from the moment its data was loaded (the run's warm-up included), so every version read
 * is either the loaded one or made by a recorded transaction; the checker verifies it.
 */
package io.scythe.bench.history;
