/**
 * The transaction API ({@link io.scythe.txn.Txn}, {@link io.scythe.txn.Coordinator}, {@link io.scythe.txn.TxnRuntime},
 * {@link io.scythe.txn.Protocol}, the open {@link io.scythe.txn.Stage} and {@link io.scythe.txn.AbortReason}). It
 * names no protocol: protocols are modules ({@code spi}), one package each ({@code scythe}, {@code ford}, {@code farm},
 * {@code unsafe}), built from the shared one-sided parts ({@code onesided}).
 *
 * <p><b>Inserts and deletes</b>, the same in every one-sided protocol (code in {@code onesided.Inserts}):
 * <ul>
 *   <li>An insert of a key the attempt has not touched is buffered. At commit, together with the locks of the write
 *       set and before validation, one INSERT RPC per key ({@code LogDbRpc.INSERT},
 *       {@code Table#insertLocked}) creates the object on its memory node <em>already locked by the inserter</em>:
 *       FORD/FaRM's CAS lock word holds its transaction id, or for Scythe ticket 0 of the Takeout Lock is held with
 *       {@code queued_ts} its timestamp. A reader that finds it aborts (OCC reads, FaRM) or queues (TOCC) as on any
 *       locked object, or fails validation (FORD reads locked objects); the write-back installs its version and
 *       releases it together with the other writes, so nobody sees the insert before the rest of the commit. A key
 *       present aborts the commit with {@code DUPLICATE_KEY} (not retried); the memory node's CPU serialises
 *       INSERTs, so of many concurrent inserts of one key exactly one gets it. A commit that fails after some
 *       INSERTs ran undoes them by ABANDON RPCs (the object becomes a delete with a new version, unlocked, and is
 *       reclaimed by the memory node).</li>
 *   <li>A delete needs the key read by the attempt; it is locked at commit like a write, and the write-back sets
 *       {@code FLAG_DELETED} and a new version (a tombstone, one-sided). Reading a deleted key is "not found"
 *       ({@link io.scythe.txn.UnknownKeyException}) in every protocol; the deleted object stays in the read set, so
 *       validation checks it is still deleted. Inserting over a delete the attempt read revives it in place at
 *       write-back (locked as a write); over a delete it did not read, the INSERT RPC revives it.</li>
 *   <li>A key absent from the index is recorded when read, and re-checked at commit by a lookup RPC past the
 *       address cache (it must still be absent, or deleted and unlocked), so an insert that committed in between
 *       fails the reader's validation (no phantom of that key).</li>
 *   <li><b>Why inserts come before validation</b>: an insert is a write, and an OCC commit must hold every write
 *       lock before it validates its reads (lock, then validate: the validation point is then a moment at which
 *       everything read is still current and everything written is locked). The lock of a key that does not exist
 *       yet is its creation, locked. Created after validation instead, a transaction P that read key K absent and
 *       flag X, and inserts K, and a transaction Q that read K absent and writes X, can both commit: P's validation
 *       of X passes before Q locks X, and Q's re-check of K passes before P's INSERT arrives, a write skew through
 *       the phantom (a G2 cycle). With inserts taken as locks, one of the two validations must see the other's
 *       lock. The same holds for any protocol that validates (RCC's OCC, Lotus, SELCC's lock-based commits take
 *       the lock of an insert where they take the others).</li>
 *   <li><b>Versions</b> of an object strictly increase in the order they are installed, whatever path installs
 *       them ({@code ObjectLayout#versionAfter}: the commit's version, but above the version under the lock), so
 *       version equality proves nothing was written in between, and the history checker orders a key's versions by
 *       their value. A reader of an absent key records the bound its validation saw ({@code Access#readAbsent}).</li>
 * </ul>
 * <p><b>Back-pressure.</b> A verb that finds the loop's send queue to a memory node full waits for room (FIFO, in a
 * bounded list per channel, {@code RdmaChannel}), as an RPC waits in its Rocket's backlog. Only past those bounds is
 * it refused, and a refused request did nothing: during execution, locking, validation or inserts it
 * aborts the attempt as {@code BACK_PRESSURE} (the coordinator retries after its back-off); the write-back batches and
 * the releases, which must not be dropped, are built and posted again after a pause until accepted.
 *
 * <p>Known limits: tombstones written one-sided are not reclaimed (the memory node's CPU never sees them; a table
 * that deletes as it inserts needs room for both); an abandoned insert is reclaimed by the memory node, and a TOCC
 * reader still queued on it then would wait on a reused slot (not seen in tests, needs a grace period like the
 * horizon); range scans are not supported, so a workload reaches rows by key only (TPC-C keeps per-district cursors
 * for that).
 */
package io.scythe.txn;
