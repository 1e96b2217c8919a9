/**
 * The transaction API ({@link io.scythe.txn.Txn}, {@link io.scythe.txn.Coordinator}) and what the one-sided protocols
 * share ({@link io.scythe.txn.OneSidedTxn}); one sub-package per protocol ({@code scythe}, {@code ford}, {@code farm}).
 *
 * <p><b>Inserts and deletes</b>, the same in every protocol (code in {@code OneSidedTxn}):
 * <ul>
 *   <li>An insert of a key the attempt has not touched is buffered. At commit, after the locks are taken and
 *       validation passed and before the write-back, one INSERT RPC per key ({@code LogDbRpc.INSERT},
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
