/**
 * Aurogon (Jiang et al., FAST'22; papers/aurogon.txt, digest aurogon.md): multi-version timestamp ordering that
 * attacks request reordering in each phase. A protocol module ({@link io.scythe.txn.aurogon.AurogonModule},
 * {@code aurogon}, {@code aurogon-pre}, {@code aurogon-base}).
 *
 * <ul>
 *   <li><b>Timestamps</b> ({@link io.scythe.txn.aurogon.AurogonTimestamp}, {@link io.scythe.txn.aurogon.AurogonClock}):
 *       the node's host clock packed with server and loop ids in 64 bits. 2LClock, the FaRMv2-clock variant and DST
 *       are not built yet.</li>
 *   <li><b>Participants</b> ({@link io.scythe.txn.aurogon.Participant}, served by
 *       {@link io.scythe.txn.aurogon.ParticipantService} over RRPC, {@link io.scythe.txn.aurogon.AurogonRpc}): per
 *       record a version list by wts with a per-version rts, PENDING/COMMITTED; the exact read rule (largest wts below
 *       ts, rts raised by max, a read meeting a PENDING version parked and answered when it is decided, re-run when
 *       it is rolled back), the install rule (fail if {@code v.wts <= W.ts < v.rts}), commit and rollback; hot
 *       records (an 8-byte counter over 10 ms windows) defer reads by a per-record time driven by the write failure
 *       rate; a version GC bound.</li>
 *   <li><b>Coordinator</b> ({@link io.scythe.txn.aurogon.AurogonTxn}): reads need no commit round; the read of a
 *       read-modify-write carries the pre-attach flag (early abort, value at commit).</li>
 * </ul>
 *
 * <p><b>Why not {@code io.scythe.storage.mv}'s MvTable</b>: it keeps one rts per object (so a read parked on a
 * pending version refuses a straggler below it that Aurogon lets in, Fig. 4) and refuses an install below a committed
 * version (SUPERSEDED, Aurogon's SPS rule 2, not its default serializable mode); the paper's participant is a CPU
 * walking a list, which this is. Records start from the node's LogDB objects and their newest committed value is
 * written through, so loaders and end-of-run checks are shared with every protocol.
 *
 * <p><b>History</b>: a read records the wts of the version it returned, a write its timestamp as the version: wts
 * order is the version order (format v2 places a write between two versions by it).
 */
package io.scythe.txn.aurogon;
