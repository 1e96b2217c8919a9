/**
 * FORD's one-sided OCC with CAS locks (papers' peers digest §2) as a protocol module ({@link
 * io.scythe.txn.ford.FordModule}, {@code ford-occ}), and the CAS lock word that FaRM's module shares ({@link
 * io.scythe.txn.ford.CasLockModule}).
 *
 * <p><b>Metadata</b>, in the object header ({@code io.scythe.storage.ObjectLayout}):
 * <pre>
 *  24  cas_lock (u64)  0 free, else the holder's transaction id    CNs: RDMA CAS 0 -> id to lock, WRITE 0 to unlock
 *  32  version  (u64)  above every version the commit read (+1)    the write-back
 * </pre>
 * Held by transaction {@code id} while {@code cas_lock == id} ({@link io.scythe.txn.ford.CasLockKind}, redo lock
 * kind 2, token = the transaction id, whose high bits name its compute node).
 *
 * <p><b>Verbs</b>: a read-only key is one READ of the whole object; a key to be written is locked as it is read
 * (CAS and READ in one doorbell, {@link io.scythe.txn.ford.FordOccTxn}); keys written without {@code readForUpdate}
 * are locked at commit with CAS and a header READ ({@link io.scythe.txn.ford.CasLockTxn}). Validation re-READs the
 * headers of what was only read; the write-back is one doorbell per memory node of WRITEs (value, length, flags,
 * version) and the WRITE of 0 that unlocks. Recovery releases with a CAS from the owner to 0, never a blind WRITE.
 *
 * <p><b>Memory-node service</b>: none running; recovery's step (after the dead node's inserts are abandoned) scans
 * the objects and frees the CAS words whose owner carries the dead node's id prefix ({@link
 * io.scythe.txn.ford.CasWords}, counted as {@code casWords}). No abort reasons or stages of its own; retries take no
 * hint. <b>Retries</b>: the harness's rule, the same for every protocol
 * ({@link io.scythe.txn.OnAbort}: by default the coordinator's retries, as Scythe's paper measured; with
 * {@code --on-abort new} one attempt and a new transaction, as FORD's worker does). <b>Probe</b>: an object is held while its CAS word is not 0.
 */
package io.scythe.txn.ford;
