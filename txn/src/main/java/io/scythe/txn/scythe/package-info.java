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
 *
 * <p><b>Read committed</b> (issue 22, helper scythe24; {@code Txn#declareReadCommitted}, TPC-C's StockLevel). Why:
 * declared read-only and serializable, StockLevel (the district row, then ~200 order-line and stock rows NewOrders
 * write) never committed at the papers' topology (0 commits a run, seeds 1-3; scythe23's shared tickets behind the
 * writers: 0-2). The paper says nothing of read-only transactions; its prototype's {@code TxStockLevel} (PDS-Lab/Scythe
 * {@code benchmark/tpcc/tpcc_txn.cc}) reads the district and the order lines, with the stock reads commented out, and
 * returns OK without a commit (nothing validated); FORD's records a 99.5 % StockLevel abort rate (peers.md). A snapshot
 * read is not possible here: an object keeps one version, and its versions order its own writes only (they are not a
 * serialization order: a TOCC write carries its start timestamp, raised above the one under the lock), so "no version
 * newer than my timestamp" proves nothing across objects. TPC-C itself does not ask for serializability here (clause
 * 2.8.2.3: "All data read must be committed and no older than the most recently committed data prior to the time this
 * business transaction was initiated"), so an attempt so declared runs at read committed, and says so to the history
 * checker ({@code HistoryRecorder#committedReadCommitted}), which checks it at that level only.
 *
 * <p>What it does: each read is one READ of the whole object, whoever holds or waits for its Takeout Lock; no ticket,
 * no re-read of a held object, no validation at commit (a timestamp is fetched for the reply only). A read for update
 * fails, a write fails the commit (it is read-only). The claim, <b>Adya's PL-2</b> (no G0, G1a, G1b, G1c) for these
 * attempts among serializable (PL-3) ones, and why it holds:
 * <ul>
 *   <li><b>Every value read is committed or in doubt (G1a, G1b).</b> Scythe's write-back starts after the commit point
 *   (validation passed; with a redo log, its record durable), so a value a write-back put in memory is committed, even
 *   while its version WRITE and unlocking FAA are still in flight. Without a redo log a compute node that dies mid
 *   write-back leaves part of a decided transaction's values that nothing finishes or undoes: such a value is in doubt
 *   (the checker places its version), as it is for an OCC reader today. The only uncommitted values memory ever holds are an insert's, written by
 *   {@code Table#insertLocked} at its inserter's lock stage: a new object held by its first ticket ({@code upper} 0,
 *   {@code lower} above it, a version above the loaded one: {@code ScytheTxn#insertInFlight}) is READ again after
 *   20 us, up to 20 times, then the attempt aborts ({@code locked}). <b>Not detected, TODO scythe-rc-revive</b>: a
 *   deleted key revived in place by an insert not yet committed looks like any held object; its value could be read
 *   before its inserter commits. The history checker reports such a read (the revival's version, old + 1, is never a
 *   committed one: its inserter installs a larger one, or abandons it with a larger one), and StockLevel reads only
 *   tables nothing deletes (DISTRICT, ORDER, ORDER_LINE, STOCK). Until it is built, {@code declareReadCommitted} is for
 *   reads of tables without deletes (stop-58 review 3: a schema has no such flag to refuse on yet).</li>
 *   <li><b>No cycle of ww and wr edges through it (G0, G1c).</b> It writes nothing, so it has no ww edge and no wr edge
 *   out; a cycle through it leaves it by an rw edge (an anti-dependency of one of its reads), which PL-2 allows and the
 *   checker does not count for it (not obligatory in Adya's mixed histories). The serializable transactions' edges
 *   are all kept.</li>
 *   <li><b>The version recorded</b> is the image's. A READ between a write-back's value WRITE and its version WRITE
 *   pairs the new value with the version before it: both committed, so the check above gives the same verdict, and no
 *   obligatory edge depends on it.</li>
 *   <li><b>Freshness</b> (2.8.2.3's second sentence): every READ is issued after the attempt began and returns memory's
 *   value then, which holds every write-back of a commit acknowledged before it began (a commit is acknowledged after
 *   its write-back). The checker does not check it (a history has no real time).</li>
 *   <li><b>Torn values</b>: the simulator applies a WRITE whole. On hardware a READ racing a value's WRITE can mix cache
 *   lines of both, which OCC's validation would catch and nothing here does; StockLevel uses 4-byte fields
 *   ({@code d_next_o_id}, {@code o_ol_cnt}, {@code ol_i_id}, {@code s_quantity}), each within one cache line. A
 *   multi-line value would need a per-object check (FORD's cache-line versions, Motor's anchors): not built.</li>
 * </ul>
 * Not serializable: a StockLevel may see a stock row before a NewOrder's write-back and another row after it.
 */
package io.scythe.txn.scythe;
