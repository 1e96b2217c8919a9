/**
 * Redo logging and compute-node failure recovery for the one-sided protocols (Scythe's Takeout Lock, the CAS-lock
 * baselines FORD and FaRM).
 *
 * <p><b>Log.</b> Each event loop of a compute node has a log region on every memory node it writes to, registered
 * on that node by {@link io.scythe.txn.recovery.RecoveryRpc#LOG_OPEN} ({@link io.scythe.txn.recovery.RedoLog}).
 * After a commit holds its locks, validated and created its inserts (locked), and before any of its writes reach a
 * memory node, it WRITEs one redo record ({@link io.scythe.txn.recovery.RedoRecordDescriptor}: transaction id,
 * version, and per written object its memory node, table, pointer, lock token and new value) to its loop's region on
 * the memory node of its first write. The commit is decided when that WRITE completes; the record's trailing commit
 * word (CRC32C) tells a complete record from a torn one. The slots are free again after write-back and unlock.
 * The one hook is {@code onesided.RedoStep}; the record's lock kind is the protocol module's
 * {@link io.scythe.txn.spi.LockKind} (Scythe's ticket 1, the CAS word 2), which recovery finds in the registry.
 *
 * <p><b>Recovery</b> of a dead compute node X, run by a live one ({@link io.scythe.txn.recovery.CnRecovery}):
 * <ol>
 *   <li>On every memory node, the first one first: fence X (its queue pairs revoked; nothing it posted can land
 *       later), become X's one recoverer there, and list its log regions
 *       ({@link io.scythe.txn.recovery.RecoveryRpc#LOG_LIST}). A memory node admits one recoverer of X at a time
 *       (two rolling forward at once would both add 1 to {@code upper} for the same ticket); a larger claim takes
 *       over only from a recoverer it has fenced (dead), which makes re-running an interrupted recovery safe.</li>
 *   <li>READ the regions; every complete record is rolled forward entry by entry, each only while the object's lock
 *       is still held by the record's token (ticket == {@code upper}, or CAS word == owner id): a write-back that
 *       landed whole or in part before the crash is finished and never applied twice, and re-running recovery
 *       changes nothing. Incomplete records are dropped: their write-back never started.</li>
 *   <li>On every memory node ({@link io.scythe.txn.recovery.RecoveryRpc#RELEASE_NODE}) the protocol modules'
 *       release steps run around the abandon of X's locked inserts: before it, X's Takeout tickets, held or queued,
 *       are cancelled (Scythe's {@code TicketLedger}: the node records every ticket's holder, compute node and
 *       transaction, and adds 1 to {@code upper} itself when it reaches a cancelled one); after it, CAS words whose
 *       owner id carries X's id prefix are freed (FORD's {@code CasWords}: a scan of the objects, as CAS locks are
 *       one-sided and recorded nowhere); X's log regions are deregistered.</li>
 * </ol>
 * Locks are never rebuilt (Lotus §6's point): they live in the objects, and the ledgers on the memory nodes name
 * their holders. Other compute nodes keep running throughout; what X held blocks others for the lease plus this.
 *
 * <p><b>Inserts come before the record</b> (a deviation from "nothing reaches a memory node before the record", kept
 * on purpose): an INSERT RPC creates the object locked, and the record names it by the pointer that RPC returned. A
 * crash before the record leaves only locked inserts, which step 3 abandons (the ledger knows them); a crash after
 * it rolls them forward like any entry, under the ticket the insert really holds (a revived deleted key keeps its
 * queue). So recovery is exact for both orders, and the commit path saves the round trip a pre-record would cost.
 *
 * <p><b>A live compute node whose write-back failed</b> (past the point of no return: the record durable or maybe
 * durable) never aborts or retries that commit. A batch refused before it was posted (send queue or ring full) is
 * finished by the node itself: each entry it still holds is written and released exactly as recovery would
 * ({@link io.scythe.txn.recovery.CnRecovery#finishEntry}). A record WRITE or a batch that failed after it was posted
 * might still land (a tcp frame read after its connection broke, an RDMA request executed after its requester timed
 * out), and a late release after a re-release would hand one Takeout lock to two holders; so then, or after a few
 * refusals, the loop gives up ({@code TxnRuntime.onGiveUp}): the node loses its lease, keeps the record, and is
 * recovered after it is fenced (which waits out verbs in flight and refuses the rest). Its client hears "outcome
 * unknown". A loop that gave up begins no transaction after (its clients hear "not serving", a plain error: nothing
 * ran), whatever its node does with the give-up. Also a failure that certainly posted nothing (a connect that failed,
 * a queue pair already revoked) counts as "may have landed": it costs the node its lease, which only an MN outage
 * (not supported) or a fence (lease lost anyway) causes. A read-only commit (no record) whose lock release failed
 * after posting gives up the same way and is reported "outcome unknown", although its outcome is decided.
 *
 * <p><b>An abort whose lock verb failed after it was posted</b> (a release, a lock CAS, or a Takeout ticket whose
 * turn could not be polled for about 50 ms) is not posted again either: a second FAA on {@code upper} hands one lock
 * to two holders, a repeated WRITE of 0 frees another's CAS lock. The loop gives up the same way, and recovery cancels
 * the ticket or frees the CAS word; the client hears "not serving" (nothing committed), not "outcome unknown".
 *
 * <p>Not covered: Lotus, Aurogon, SELCC and RCC protocols write no redo record yet (their commits are not
 * recoverable).
 */
package io.scythe.txn.recovery;
