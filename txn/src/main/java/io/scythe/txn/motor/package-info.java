/**
 * Motor (OSDI'24; peers.md §2b, lotus.md §0), the baseline most of Lotus's ratios are against, as a protocol module
 * ({@link io.scythe.txn.motor.MotorModule}, {@code motor}; {@code motor:versions=N}): FORD's one-sided locking on the
 * memory nodes with multi-version records.
 *
 * <p><b>Metadata layout</b> (per object slot, {@link io.scythe.txn.motor.MotorCvt}): the shared header with FORD's CAS
 * lock word and the version word, the home value, then a CVT (header: key, table id, N) of N cells {head check value,
 * valid, deleted, length, record address, version (the committing T_commit), tail check value} and N full records
 * with a check value per 64-byte line. The cells and records are Lotus's ({@link io.scythe.txn.lotus.Cvt}, read only
 * here), without its INVISIBLE state: Motor writes a version with its T_commit at once.
 *
 * <p><b>Verbs</b>: a read-write transaction's read is one READ of header, home and CVT (the lock word with them); a
 * key it writes is locked with a CAS and READ in the same doorbell (FORD's {@code lockAndRead}, the CAS shows in the
 * verb counters); keys written but not locked yet are locked that way at commit. T_commit comes from the TSO once
 * every lock is held; then the keys only read are validated (a header READ: version unchanged, lock free), and the new
 * version is written: per copy (primary and each backup) a WRITE of the victim's record then of its cell (the oldest
 * cell, never the newest: {@code Cvt#victim}); on the primary in the write-back doorbell, after the home value and
 * its version word and before the WRITE of 0 that unlocks; on each backup in the write-back's backup doorbell after
 * that copy's home ({@code WriteSet#backupWrites}): after the redo record, and every backup complete before any
 * primary is released, as the homes (stop 39 review: posted on their own before, a write-back refused by a
 * reconfiguration left backup cells at a T_commit that never committed, and a late backup write of one commit could
 * overwrite the next commit's cell on that backup).
 *
 * <p><b>Isolation</b>: SR. A read-write transaction reads the newest version (the home) and aborts when it is locked
 * or not below T_start (Motor's {@code EARLY_ABORT} under SR: validation after T_commit would fail it anyway); its reads are validated after T_commit, so it serializes at T_commit. A transaction declared
 * read-only reads at T_start without locks or validation: the home when older than T_start, else the newest cell
 * below T_start (READ of its record, check values compared: a torn record or cell aborts); a locked object aborts it,
 * since its holder may hold a T_commit below T_start without having written yet (every version below T_start is
 * written or locked once T_start is given out: a writer asks for T_commit while holding its locks).
 *
 * <p><b>Snapshot isolation</b> ({@code motor-si}, {@code motor-si:versions=N}; chosen as Lotus's SI is, by the
 * protocol's name, {@code Protocol#snapshotIsolation} telling the checkers to judge it by SI): Motor's SI. Every read
 * of a read-write transaction is the read-only path's, at T_start from the home or the CVT, without a lock; nothing
 * read is validated at commit (no header re-READ, no absent-key check). A written key is locked by the CAS + READ
 * (at its read-for-update, else at commit), which aborts unless the version is the one read at T_start: a version
 * committed since, necessarily at or above T_start, won (first committer wins); a read-for-update's lock finding
 * the home at or above T_start aborts alike. T_commit from the TSO once every lock is held, versions installed in
 * the CVTs as under SR. A commit that writes nothing takes T_start and validates nothing. Write skew is allowed: the
 * explorer and the simulation judge {@code motor-si} by SI (no cycle without two consecutive rw edges), as
 * {@code lotus-si}. Deviation: a spurious first-committer abort when a home's version word exceeds its cell's
 * T_commit (the shared write-back's {@code versionAfter}, below) and T_start falls between them. Checked:
 * {@code MotorSiSimTest} (a snapshot read below T_start where SR aborts, no read validation, the second writer
 * aborted, SmallBank replicated SI-clean). Recovery, failover and re-replication are SR's (same lock kind, same
 * CVT writes), not exercised under SI; {@code scythe chaos} does not take it.
 *
 * <p><b>Deviations from Motor</b>:
 * <ul>
 *   <li>Full records per cell, not Motor's one full record plus deltas (attribute bitmaps); the home is the newest
 *       full value besides (the shared write-back, recovery and end-of-run checks read it), so a commit writes the new
 *       value twice per copy (home and cell).</li>
 *   <li>The CVT is not inline in the hash bucket: the object slot holds it after the home value, found through the
 *       ordinary address cache; one READ covers header, home and CVT (Motor: header, cells and values in one CVT
 *       READ); an older version takes a second READ of its record.</li>
 *   <li>Torn reads: the cells' and records' check values (Lotus's head/tail and per-line scheme standing for Motor's
 *       {@code sa}/{@code ea} anchors); the home is taken from the same READ as the lock word, which the simulator
 *       executes atomically (hardware would need the home's lines checked too).</li>
 *   <li>Timestamps from the shared TSO (Motor: one counter on its one compute node).</li>
 *   <li>A read-write read of a locked object aborts at once (FORD reads it and lets validation decide).</li>
 *   <li>An object CVT not written yet (loaded, never written by motor) has the home as its only version: a read-only
 *       reader below it aborts (TOO_OLD), as one below the oldest kept version does. An inserted object's CVT is
 *       written whole by its commit.</li>
 *   <li>A read-only reader meeting a locked object aborts; Motor's read-only transactions have "movable" start
 *       timestamps (lotus.md §5.2) and its prototype's read-only path does not check the lock. Aborting keeps the
 *       snapshot exact (the holder may get a T_commit below T_start) at the price measured below.</li>
 *   <li>The home's version word is the shared write-back's ({@code ObjectLayout#versionAfter(T_commit, read
 *       version)}), which can exceed the T_commit in the new cell; readers of versions use the cells.</li>
 * </ul>
 *
 * <p><b>End-of-run checks</b>: Motor's cells have Lotus's layout, so Lotus's probe ({@code Cvt#committedValue})
 * recognises a written CVT and answers with its newest cell; the checks (money, TPC-C's conditions) thus read the
 * cells, which must equal the home. A read-only reader meets a lock often under Zipf (half of its reads in a 3-CN
 * 1k-account SmallBank run, measured with a temporary counter): the price of aborting rather than reading below a
 * writer that may hold an older T_commit.
 *
 * <p><b>Crash recovery</b> (issue 19): Motor's redo records name its own lock kind ({@link
 * io.scythe.txn.motor.MotorLockKind}: FORD's CAS word), whose roll-forward of an entry is the commit's own write-back:
 * with the dead node's CAS word still held (the shared recovery's test, so exactly once), the primary's header, home
 * and CVT are READ; the new version (the record's T_commit) goes into the victim cell, record then cell, on every
 * serving backup (one doorbell each, all completed) and then in the primary's doorbell with the home, its version word
 * and the release last. A CVT already holding a cell at T_commit (the dead commit's doorbell landed there, its release
 * did not) gets no cell again. Undecided commits (no complete record) wrote no cell (cells go only with the write-back,
 * after the record) and are dropped by the shared recovery, their CAS words freed on the memory nodes. The same lock
 * kind closes the earlier gap of a live write-back refused past its reposts ({@code RedoStep#finishFromRecord} finishes
 * it through the same roll-forward, so its cells are written too). Deviations, since a redo record names no key: a CVT
 * never written (the object loaded and not written by Motor since) is left unwritten, though the commit would have
 * written it whole with the replaced version as cell 0: the home is then its one version, as before any write, so a
 * read-only reader below it aborts (TOO_OLD) rather than reading the replaced version; and an inserted object's CVT is
 * marked not written (its slot may hold a former tenant's), the home again its one version. Checked: {@code
 * CnRecoveryTest#shouldRollAMotorCommitIntoItsCvtSoALaterReadOnlyReaderFindsIt} (a read-only reader takes the recovered
 * version from a cell), {@code MotorSimTest#shouldRollACrashedNodesCommitIntoTheCvt} (explorer seed 21), and {@code
 * scythe sim --explore 250 --seed 1 --crashes --workload W --protocols motor} (README).
 *
 * <p><b>Memory-node failover</b> (cluster mode's; issue 19): a decided commit whose primary failed over is settled
 * onto the promoted copy and every serving backup by versions ({@code CnRecovery#settlePromoted}: the homes), and then
 * the CVT of each copy by {@link io.scythe.txn.motor.MotorLockKind#settleCopy}: a written CVT whose newest cell is below
 * the record's T_commit gets the commit's version in its victim cell (an insert's CVT is marked not written), one whose
 * newest is at or above it is left (landed; or the old primary had released the lock, every copy then holding the
 * cell, and later commits wrote since). Checked: {@code CnRecoveryTest#shouldSettleAMotorCommitIntoThePromotedCopysCvt}
 * (before: the promoted copy's newest cell an older version than its home). A replacement memory node rejoins: the
 * re-replication copies each object's room too (CVT and records, {@code ReReplicator}; Motor's commits lock the
 * primary's header with the CAS word, so its copy-then-verify holds):
 * {@code CnRecoveryTest#shouldReReplicateARejoiningMemoryNodesMotorCvtsWhileTransfersRun}. The simulator's memory-node
 * crash stays refused for Motor, as for FORD ({@code ProtocolModule#memoryNodeCrashRefusal}).
 *
 * <p><b>Cluster nodes</b> run it ({@code scythe cluster --protocol motor}, {@code scythe chaos --protocol motor}):
 * its compute nodes do not message each other, so a dead one leaves only its CAS words and redo records on the memory
 * nodes, which the cluster's recovery duty ({@code RecoveryDuty}) rolls forward through the same lock kind (homes and
 * CVT cells of every copy, exactly once) before the memory nodes free its CAS words.
 */
package io.scythe.txn.motor;
