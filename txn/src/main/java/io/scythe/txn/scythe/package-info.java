/**
 * Scythe (papers/scythe.txt) as a protocol module ({@link io.scythe.txn.scythe.ScytheModule}): {@code scythe}, hot-aware
 * OCC / TOCC over the fair Takeout Lock ({@link io.scythe.txn.scythe.ScytheTxn}, §4.2), and {@code scythe-occ}, OCC
 * only. Registered by its line in {@code META-INF/services/io.scythe.txn.spi.ProtocolModule}.
 *
 * <p><b>Metadata</b>, in the object header ({@code io.scythe.storage.ObjectLayout}):
 * <pre>
 *   0  lower     (u64)  Takeout Lock: next ticket          written by the MN's CPU in the Lock RPC
 *   8  upper     (u64)  Takeout Lock: ticket served        CNs add 1 (RDMA FAA) to unlock
 *  16  queued_ts (u64)  largest timestamp queued            MN's CPU, in the Lock RPC; top bit: readers only
 *  32  version   (u64)  commit timestamp of the value       the write-back, raised above the one under the lock
 * </pre>
 * Free: {@code lower == upper}; held by ticket {@code t} while {@code upper == t}
 * ({@link io.scythe.txn.scythe.TakeoutLockKind}, redo lock kind 1, token = the ticket). The top bit of {@code queued_ts}
 * ({@link io.scythe.txn.scythe.TakeoutLock#READERS_ONLY}, {@code scythe}, not {@code scythe:exclusive}) says every outstanding ticket is
 * a reader's: optimistic reads and validations pass such an object ({@link
 * io.scythe.txn.scythe.TakeoutLockKind#writerQueued}, with the proof).
 *
 * <p><b>Verbs</b>: OCC reads are one READ of the whole object (aborting at once if anything is queued); a lock is a
 * Lock RPC ({@link io.scythe.txn.scythe.LockRpc}: the MN grants a ticket or refuses, {@link
 * io.scythe.txn.scythe.TakeoutLock}), then READs of {@code upper} after the SRTT hangout until the ticket is served
 * ({@link io.scythe.txn.scythe.TakeoutLockClient}, a per-loop runtime extension); TOCC's reads can take the object
 * with the grant. OCC validation re-READs headers; the write-back is one doorbell per memory node of WRITEs (value,
 * length, flags, version) and the FAA on {@code upper}. Timestamps come from the TSO group.
 *
 * <p><b>Memory-node service</b>: {@link io.scythe.txn.scythe.TakeoutLockService} (sorted grant rounds, watermarks,
 * the heuristic wait) with its {@link io.scythe.txn.scythe.TicketLedger}: recovery cancels a dead compute node's
 * tickets, held or queued, before its locked inserts are abandoned (the step counted as {@code tickets}).
 * <b>Abort reasons</b> of its own ({@link io.scythe.txn.scythe.ScytheAborts}): {@code hot-object},
 * {@code timestamp-order}, {@code queue-full}. <b>Retry policy</b> ({@code HotColdRetry}): a retry runs HOT (TOCC)
 * once an attempt was refused as hot or saw more than the cold watermark queued; protocol option
 * {@code adaptiveWatermarks} makes the cold watermark per object. <b>Probe</b>: an object is held while
 * {@code lower != upper}.
 */
package io.scythe.txn.scythe;
