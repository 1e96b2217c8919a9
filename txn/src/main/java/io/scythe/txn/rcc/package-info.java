/**
 * RCC (Wang, Huang, Qian, SIGMOD'21; papers/rcc.txt, digest rcc.md): six concurrency-control protocols in one
 * framework, each one-sided, by RPC, and as per-stage hybrids, so that protocols and primitives compare fairly.
 * Issue 18. One sub-package per protocol; what they share is here:
 * <ul>
 *   <li>{@link io.scythe.txn.rcc.RccModule}: the module, registering {@code rcc-nowait}, {@code rcc-waitdie},
 *       {@code rcc-occ}, {@code rcc-mvcc} and {@code rcc-sundial} (asked for by name; not in the
 *       default lists; CALVIN is its own module, {@link io.scythe.txn.rcc.calvin}), in a form chosen by option
 *       ({@code rcc-nowait:primitive=rpc}, {@code :hybrid=010111}:
 *       {@link io.scythe.txn.rcc.RccForm}).</li>
 *   <li>{@link io.scythe.txn.rcc.RccClock}: RCC's timestamps, the loop's clock with node, loop and client ids in the
 *       low bits, and the clock-skew control.</li>
 *   <li>{@link io.scythe.txn.rcc.TupleFormat}: Fig. 3's per-tuple metadata of each protocol, placed in the object
 *       header.</li>
 *   <li>{@link io.scythe.txn.rcc.RccLockingTxn}, {@link io.scythe.txn.rcc.RccLockService},
 *       {@link io.scythe.txn.rcc.RccRpc}: the stages of the protocols on one lock word (NOWAIT, WAITDIE, OCC),
 *       one-sided and by RPC, and their memory-node handlers.</li>
 *   <li>{@link io.scythe.txn.rcc.RccTsTxn}: what the timestamp protocols (MVCC, SUNDIAL) share: lock words taken
 *       per written object, the write-back (version word BUSY while a value is rewritten), releases, and the absent
 *       bounds that order reads of missing keys before later inserts.</li>
 *   <li>{@link io.scythe.txn.rcc.RccLog}, {@link io.scythe.txn.rcc.RccLockKind}: RCC's coordinator log (§4.1), the
 *       Log stage of every protocol but CALVIN.</li>
 * </ul>
 *
 * <p><b>Status</b>: NOWAIT, WAITDIE, OCC (DrTM+H's), MVCC and SUNDIAL are built in every form (one-sided, RPC, any
 * hybrid code; {@code hybrid=auto} runs them all in the simulator). MVCC and SUNDIAL keep state after the value
 * ({@code Protocol#objectRoom}: memory nodes give each object slot room for it when they create a run's tables, in
 * the simulator and the embedded cluster). CALVIN (shared-nothing, deterministic) is built by RPC and one-sided
 * (WRITEs into per-peer inboxes) in the simulator ({@link io.scythe.txn.rcc.calvin}).
 *
 * <p><b>Log and backups</b> (issue 18): when the loop keeps a redo log (the simulator's {@code --redo-log}, the bench
 * always) every commit's Log stage, after Validate, writes the coordinator log record to the log regions of the
 * primary and of every backup ({@code --replicas K}), by WRITE or by a LOG RPC as the Log digit says, and waits for
 * every copy; then the backups are written (one-sided WRITEs, in every form), then the primaries (the Commit and
 * Release digits). Backups of MVCC and SUNDIAL hold the tuple as the primary's commit leaves it (issue 18,
 * {@code RccTsTxn#addBackupWrites}): MVCC's three older version slots and rts, SUNDIAL's rts (= wts); readers' rts
 * raises reach the primary only. CALVIN's write-back writes every backup before its primary too (its package docs).
 * Memory-node failover ({@code sim --crash-mn}) runs for NOWAIT, WAITDIE, OCC, MVCC and SUNDIAL and stays refused
 * for CALVIN: the TODO of issue 18 below. The enumerator ({@code hybrid=auto}) keeps the Log digit one-sided (RCC's finding: logging
 * strongly prefers one-sided WRITE; varying it would double every enumeration); a code given by hand may set it to
 * RPC. Recovery from the log, for all five, in the simulator ({@code --crash-cn N --crash-recover},
 * {@code --explore N --crashes}): the shared recovery rolls each record forward while its words still hold the
 * record's tokens ({@link io.scythe.txn.rcc.RccLockKind}: NOWAIT, OCC and WAITDIE by the shared WRITEs and a CAS
 * release; MVCC and SUNDIAL by their own RPC commit, a WRITE_BACK that moves the newest version to an older slot or
 * sets rts, a value too large for it going first in WRITE_PART requests, each applied only while the word holds the
 * token), then each memory node's dead-node steps free the rest: the CAS-word module's (NOWAIT, OCC, inserts) and
 * RCC's ({@link io.scythe.txn.rcc.DeadWords}: WAITDIE's and MVCC's tts by the node slot and incarnation of the
 * timestamp, SUNDIAL's lock by the id prefix, WAITDIE's RPC waiters of the dead incarnation), knowing the protocol
 * from the tables' format (every host sets it).
 *
 * <p><b>Cluster nodes</b> run all five ({@code scythe chaos --protocol rcc-...} passes for each: README). A cluster
 * node restarts under its slot with a new epoch and does not wait for its earlier incarnation's recovery, so the
 * dead-node step must tell the two apart: RCC timestamps carry the incarnation (the epoch's low 8 bits,
 * {@link io.scythe.txn.rcc.RccClock}), and the step frees a tts word or a waiter only when both its node slot and
 * its incarnation are the dead one's; NOWAIT's, OCC's and SUNDIAL's words hold a transaction id, whose prefix has the
 * whole epoch. The incarnation sits below the clock and the node slot,
 * so WAIT-DIE's and MVCC's age order is the one without it (ticks, then node, then loop); it also keeps a restarted
 * loop's timestamps distinct from its dead incarnation's at the same tick, so recovery's token match
 * ({@link io.scythe.txn.rcc.RccLockKind}) cannot take a new incarnation's word for a dead record's. 8 bits of the
 * 16-bit epoch are kept: an incarnation 256 epochs later would match a dead one whose recovery is still owed, so a
 * restarted cluster node skips every epoch whose low 8 bits are an incarnation's still owed recovery
 * ({@code cluster.RecoveryDuty#nextEpoch}). Not
 * built: the per-stage breakdown beyond the shared stages.
 *
 * <p><b>Memory-node failover in the simulator</b> (issue 18, {@code sim --crash-mn 1 --replicas 2 --mns 3}) runs for
 * NOWAIT, WAITDIE, OCC, MVCC and SUNDIAL, in every form (CALVIN: below). What the TODO named, as done for them:
 * <ol>
 *   <li>The stale writer is fenced by blocking: the simulator settles the promoted partitions only once no commit
 *       of an older configuration epoch is past its point of no return and unfinished
 *       ({@code ProtocolModule#simulatorSettlesPromotedCopies}, {@code Catalog#inFlightBefore}, as cluster mode's
 *       {@code MemoryNodeFailover} drains); until then reads, locks and inserts there abort ({@code settling}) and
 *       are retried. An attempt not yet at its point of no return when the configuration changed is refused there
 *       ({@code OneSidedTxn#pointOfNoReturn}, or the write-back's epoch check without a log). The Commit stage
 *       counts itself in {@code Catalog#decided} until it finished, on the serving copies too.</li>
 *   <li>MVCC and SUNDIAL: readers raise {@code rts} (and the absent bounds) on the primary only, so when the
 *       simulator settles the promoted copies ({@code ProtocolModule#promotedSettling}, once no commit of the old
 *       configuration is in flight: not at the promotion, since such a commit still writes a backup's rts as its
 *       primary left it) every promoted MVCC and SUNDIAL tuple's {@code rts} and its table's absent bound are raised
 *       to a floor above every timestamp issued so far ({@link io.scythe.txn.rcc.RccModule#rtsFloor}: the live
 *       coordinators' largest {@link io.scythe.txn.rcc.RccClock#ticks()} plus 2, since every {@code rts} is a
 *       {@code next()} or a timestamp a clock observed plus 1). A writer below a read the dead primary served then
 *       aborts by W1 (MVCC) or commits above it (SUNDIAL). The floor is our rule; RCC has no memory-node failover.
 *       Without it such a writer installs below R ({@code RtsFloorTest}, with the floor planted away by
 *       {@link io.scythe.txn.rcc.RccModule#plant}); the simulator's explorer has not reached that case (README).
 *       {@code RccTsTxn} counts its write-back in {@code Catalog#decided} as the locking protocols do, so the
 *       settling waits for it.</li>
 *   <li>A decided commit whose log record's WRITE or write-back failed only on the removed node is finished on the
 *       serving copies from its record ({@code RedoStep#finishOwnRecord}; without a log, from the record it would have
 *       written, {@code RedoLog#recordOf}): a promoted copy by versions, a live primary while its token holds; it is
 *       reported committed (MVCC and SUNDIAL too, {@code RccTsTxn#decidedFailure}: a live primary by their own
 *       roll-forward, a promoted copy by versions, which its backups-first write-back already gave the whole tuple).
 *       A lock verb, and any error of an attempt before its point of no return, on a node the
 *       configuration removes is an abort, retried ({@code OneSidedTxn#lockVerbInDoubt(String, String, Throwable)},
 *       {@code #goneAsAbort}).</li>
 * </ol>
 * Swept ({@code scythe sim --explore N --crash-mn 1 --replicas 2 --mns 3 --protocols P --workload W}), README's RCC
 * coordinator-log paragraph has the numbers. The explorer's {@code --crashes} adds a CN crash with the host's redo
 * recovery, which the simulator refuses with a memory-node crash for every protocol but Aurogon's and Lotus's
 * ({@code Explorer#crashMemoryNode}): not run.
 *
 * <p><b>Memory-node failover of MVCC and SUNDIAL on cluster nodes</b> (issue 18): the same floor, gathered across
 * processes. Each compute node drains a configuration with the largest {@link io.scythe.txn.rcc.RccClock#ticks()} of
 * its loops, read on each loop after the node applied it ({@code ProtocolModule#settlingClock}; from then on it sends
 * the removed primary nothing, so every timestamp a read there carried is at or below it); the memory node holding a
 * promoted copy waits for the settlement (every live compute node drained, every dead one recovered), floors the copy
 * above the largest clock drained from the promotion's term on ({@code ProtocolModule#promotedSettling(LogDb, Set,
 * long)}, {@link io.scythe.txn.rcc.RccModule#floorOf}) and says so in the cluster's map; no compute node serves the
 * copy before ({@code cluster.MemoryNodeFailover#copiesUnsettled}). {@code RccModule#clusterMemoryNodeFailoverRefusal}
 * is gone; {@code RccTimestampFailoverProcessTest} kills a memory node under load for both. {@code RccModule#replicates}
 * is true now: it said false, so cluster nodes kept no backups for any RCC protocol and none could fail over.
 *
 * <p><b>Memory-node failover of CALVIN in the simulator</b> (issue 18, helper calvinmn): {@code sim --crash-mn} runs
 * for {@code rcc-calvin} in both forms. CALVIN's locks are its schedulers' on the compute nodes and its sequencer and
 * scheduler state lives there too, so the dead memory node held none of it: only records, their backups' copies and
 * input-log copies. The same rule as above (what landed or may land on a removed node counts for nothing): a
 * participant's read that failed on a node the configuration removes reads the key again where it serves
 * ({@code CalvinNode#readRecord}); an active participant's write-back that failed so is done again, under the
 * scheduler's lock still held, on the serving copies, each key read where it serves and written at the version it was
 * to install, backups first ({@code CalvinNode#installAgain}; a copy written already gets the same value and version
 * again); an input-log or decision record is durable once every serving copy has it ({@code CalvinInputLog#writeAt}).
 * No stale writer can arise (no lock word on a memory node), so the promoted copies serve at once
 * ({@code CalvinModule#promotedCopiesServeAtOnce}). Test: {@code CalvinMnCrashSimTest}; numbers in the README's RCC
 * memory-node failover paragraph. Not built in the simulator: a memory-node crash beside a compute node's
 * ({@code combinedCrashRefusal}, the default refusal).
 *
 * <p><b>Memory-node failover of CALVIN on cluster nodes</b> (issue 18, helper rcc21): the same steps, which are the
 * shared catalog's and runtime's. {@code CalvinModule#replicates} is true (it was false, so cluster nodes kept no
 * backup for CALVIN), the refusal is gone, and the promoted copies serve as soon as a compute node applies the
 * configuration ({@code CalvinModule#clusterPromotedCopiesServeAtOnce}, {@code Catalog#servePromotedAtOnce}): CALVIN
 * has no stale writer to fence there either, and a read of a blocked partition would fail its participant. A survivor
 * reading a dead compute node's input log skips copies on removed memory nodes ({@code CalvinInputLog#findFrom}).
 * Test: {@code CalvinClusterProcessTest} (mn1 killed under load).
 *
 * <p><b>The published clock bound (issue 18, review R1).</b> Cluster mode's floor gathers the live compute nodes'
 * drained clocks; a compute node that is down left none, and a read it made on the dead primary at a timestamp above
 * every live clock (read-only commits log nothing recovery could add) would go unfloored (a cycle T_r -rw-&gt; T1
 * -rw-&gt; T_d -wr-&gt; T_r with the dead node's clock ahead). So each MVCC compute node publishes a bound on its clock
 * ahead of its use ({@link io.scythe.txn.spi.ClockBound}, {@link io.scythe.txn.rcc.RccClock#hostBound}: 5 s ahead
 * of the host's clock, every 250 ms, in the cluster's map {@code scythe.cnclockbounds}, once before its loops serve),
 * and commits no timestamp above the last one published: {@code MvccTxn#commit} aborts such an attempt
 * ({@link io.scythe.txn.rcc.RccClock#BEYOND_BOUND}, retried) and asks for a bound above it
 * ({@link io.scythe.txn.rcc.RccClock#withinBound}). The memory node settling a promoted copy floors it above the
 * largest bound the compute nodes that are down published, with the live ones' drained clocks
 * ({@code cluster.MemoryNodeFailover#downClocks}), so a node that never comes back blocks nothing. Tests:
 * {@code RtsFloorTest#shouldOrderAWriterAboveACommitAtTheBoundADownComputeNodePublished},
 * {@code cluster.PublishedClockBoundTest}.
 *
 * <p><b>SUNDIAL's bound (issue 18).</b> SUNDIAL has no clock: {@code commit.tts} is the largest {@code wts} (or
 * {@code rts + 1} of a record written) its accesses saw, so a bound following the host's clock would fit no timestamp
 * it uses and throw floors far ahead. What the settling must know of a SUNDIAL node that is down is a bound on every
 * timestamp it wrote: its leases' renewals (rts, on the dead primary alone), its absent bounds, its versions. So each
 * SUNDIAL compute node publishes {@link io.scythe.txn.rcc.RccClock#logicalBound}: at first
 * {@link io.scythe.txn.rcc.RccClock#LOGICAL_BOUND_LEAD_TICKS} ticks (2^34 logical steps: SUNDIAL's {@code +1}s never
 * climb it in a run), then that lead above the largest commit timestamp a loop was refused; and a commit whose
 * {@code commit.tts}, final once its write set is locked, is above the published bound aborts
 * ({@link io.scythe.txn.rcc.RccClock#BEYOND_BOUND}) before it writes any timestamp ({@code RccTsTxn#commitInStages},
 * which MVCC's commit shares), asking for a larger one. Only a settling's floor above a down node's bound moves
 * timestamps past the lead: then commits on the floored tables abort until the larger bound one of them asked for is
 * published (at once: {@code ClockBound#onWant}, one Hazelcast round trip; 1 and 7 attempts on the surviving node in
 * two runs of the process test below). The
 * paper has no memory-node failover: this is ours. Tests: {@code SundialClockBoundTest} (real commits on one memory
 * node, both primitives), {@code RtsFloorTest#shouldOrderASundialWriterAboveACommitAtTheBoundADownComputeNodePublished},
 * {@code cluster.RccTimestampFailoverProcessTest#shouldSettleWithoutWaitingForAComputeNodeKilledBesideTheMemoryNode}.
 *
 * <p><b>A compute node down that published no bound (issue 18, rcc20; was TODO rcc-unbounded-cn).</b> The bound's
 * absence alone proves nothing (stop 57 review: an entry lost with both replicas of its partition, or lowered by a
 * merge), so a positive record is written first: each compute node whose protocol bounds its clock records, in
 * {@code scythe.cnserving} ({@code cluster.MemoryNodeFailover#SERVING}: name to the epoch of its latest incarnation
 * that may serve; every backup synchronous, the higher-value merge), that it may serve, then publishes its first
 * bound, then deploys its loops ({@code ScytheNode}). What orders the record before the first commit: each of the two
 * writes is a blocking Hazelcast call (the record's returns once it is on every replica of its partition, the bound's
 * once on the primary and synchronous backup), and the loops that commit are deployed only after both returned, on
 * the same thread. (Review of rcc20, #1: with the record's backups asynchronous, the CN and the member holding its one
 * synchronous backup killed together could leave survivors the registration, written long before, and neither record.
 * Left: a backup whose acknowledgement times out, Hazelcast's backup timeout, does not hold the call.) A CN split off
 * from the cluster before its record, whose record and bound then land on its own side only, is not covered by this
 * argument: what keeps its commits out is the memory nodes' fencing of a CN whose member left (as for a bound raised
 * on a split side; review of rcc20, #2). So a compute node down with
 * neither record never served and is not waited for ({@code MemoryNodeFailover#downClocks}'s {@code neverServed});
 * one with the record but no bound published one that was lost, and is still waited for until it is back (it may
 * have committed anything up to that lost bound; also one that died between the two writes: until an operator
 * restarts it or removes its registration, review of rcc20, #8). Skipping wrongly needs both entries lost while the registration
 * survived: all three are keyed by the node's name, hence in one Hazelcast partition, so that partition lost whole
 * takes the registration too and the node is not seen at all (the registry's own durability, outside this). Test:
 * {@code cluster.PublishedClockBoundTest}. (The memory node's floor, review R3, walks a promoted table in steps of
 * {@link io.scythe.txn.rcc.RccModule#FLOOR_STEP_SLOTS} slots, one loop task each:
 * {@code ProtocolModule#promotedSettlingSteps}.)
 *
 * <p><b>TODO (issue 18, issue 23 §2): what the cluster floor does not cover.</b> What is still missing:
 * <ol>
 *   <li>The shared recovery's roll-forward writes a backup's newest version only ({@link
 *       io.scythe.txn.rcc.RccLockKind}), not MVCC's older-slot move nor SUNDIAL's rts.</li>
 * </ol>
 */
package io.scythe.txn.rcc;
