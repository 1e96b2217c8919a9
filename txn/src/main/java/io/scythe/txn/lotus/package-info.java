/**
 * Lotus (papers' lotus.md, issue 19) as a protocol module ({@link io.scythe.txn.lotus.LotusModule}, {@code lotus}):
 * locks live in compute nodes' memory and are executed by their CPUs, so memory nodes only serve one-sided READs and
 * WRITEs.
 *
 * <p><b>Keys</b>: {@link io.scythe.txn.lotus.LotusKey}, 64 bits: the shard (low 12 bits of the table's critical field,
 * {@link io.scythe.txn.lotus.CriticalFields}) and 52 bits of the whole key. Shard owners:
 * {@link io.scythe.txn.lotus.ShardOwners} (even split; the cluster's routing may back it later).
 *
 * <p><b>Locks</b>: {@link io.scythe.txn.lotus.LockTable}, 8-byte slots (56-bit fingerprint, 8-bit counter: 0 free, 1
 * written, +2 per reader), 8 to a bucket, one CAS per acquire, no waiting; the lock state makes requests idempotent.
 * Keys of other compute nodes' shards travel in one message per node ({@link io.scythe.txn.lotus.LockRpc}, loop i to
 * loop i over {@code io.scythe.rrpc.CnPeers}); an out-of-range key is answered with an error. An attempt that ends
 * releases every key it asked for, granted or not, and retries a release until its owner answers (pauses doubling to
 * 1 s, for up to 15 s; stopped for a dead owner), its abort waiting for the first four tries only: a grant served
 * after its requester's call failed (an owner stalled under load) is freed once the owner runs again. An owner that
 * serves a release naming a key not held remembers the transaction (the last 64K) and refuses an acquire of it served
 * after (it would be held by an attempt that is over). Issue 19's chaos run left such a lock on a live node; which of
 * the two paths did it was not seen in its logs (no holder is logged), and both are closed and tested.
 *
 * <p><b>Routing and resharding</b>: {@link io.scythe.txn.lotus.LotusCluster} stands for the routing layer (the shard
 * map requesters ask by; a key refused as out of range is asked again by the newer map) and the published latency
 * metrics; {@link io.scythe.txn.lotus.LotusNode} serves its shards, publishes its mean latency every
 * {@link io.scythe.txn.lotus.LotusOptions#reshardEveryNs} and hands its hottest shard to the fastest node when
 * overloaded, in the paper's order, recording each pause. Hybrid routing of transactions is the host's router
 * ({@code io.scythe.routing.RoutingMode#HYBRID}), which the handoffs update.
 *
 * <p>The periodic tasks (the lease's renewal every quarter lease, the resharding round) wait with
 * {@code Timers#afterIdle}: loop 0 sleeps until they are due rather than polling for them (with {@code after} it
 * busy-polled through every wait: a million simulator events per run, most of an explorer seed's time).
 *
 * <p><b>Recovery</b> (lotus.md §2.7) on leases ({@link io.scythe.txn.lotus.LotusOptions#leaseNs}): a node whose
 * lease ran out is let go of by every survivor (calls to it fail, attempts that asked it for locks abort unless past
 * T_commit); the first survivor to notice reads its redo records, written before T_commit (version 0): a record is
 * finished only if some copy of an object it names shows a visible cell of its commit (lotus.md §2.7: "logs fully
 * written AND records already carry a commit timestamp"; under the dead node's locks nobody else wrote the CVT, so a
 * visible cell above the version the record's entry read is its own, at its T_commit; on an object it inserted, a
 * visible cell at or above its INSERT's version, which is above every earlier incarnation's; a copy holding another
 * incarnation of the slot is skipped), else it is aborted and its
 * INVISIBLE cells cleared on every copy ({@link io.scythe.txn.lotus.LotusLockKind#committedVersion},
 * {@code undo}); a record found committed is finished from its redo record
 * ({@code CnRecovery}, {@link io.scythe.txn.lotus.LotusLockKind}: an entry only where the object's version is still
 * below the T_commit found; then, still under the dead node's locks, the commit's INVISIBLE cells made visible at its
 * T_commit on every copy its visible write did not reach, with that copy's home version word where it is behind: the
 * word is the visible write's too, and Fig. 15's run left 11 backups at "version T vs 0" when only the cell was
 * finished, {@code LotusTxn#recoverCells}) and drops the rest; survivors then free its locks from their lock state; no lock table is
 * rebuilt. The survivors judge leases past the run's end until every other node retired (stopped renewing because the
 * run is over, its lease held a lease past the end) or was recovered, so a node that crashed shortly before the end
 * is declared dead in the simulator's drain (issue 23 §4: they stopped at the end, their attempts that asked it
 * waited for ever and its locks stayed held). Its shards are served again once every survivor freed them and no attempt that asked it is left: by the
 * survivors (the paper gives them back to the restarted node with its empty table). The simulator restarts a crashed
 * node when asked ({@code --crash-restart-after D}): a new incarnation in the same process (its own fabric name and
 * rings, ids of epoch 2), started with {@code awaitsOwnRecovery}: it neither serves nor renews its lease until its old
 * incarnation was declared dead and its shards served again ({@code LotusNode#awaitOldIncarnation}; renewing earlier
 * would keep the old incarnation's lease alive), its coordinators running meanwhile (requests for its old shards
 * abort). Once it rejoins it registers its own address ({@code LotusCluster#address}; the simulator connects every
 * node to restarted incarnations before time starts) and asks each survivor for the shards its old incarnation's
 * recovery gave it ({@code LotusNode#askShardsBack}, one GIVE_BACK message per survivor), which hands each back by the
 * handoff order (stop serving, drain and after 10 ms abort holders, drop cache entries, message it, update routing):
 * an explicit give-back, not resharding's latency-driven one, which moves one shard per three intervals and never
 * from a node that is not overloaded. A shard resharding moved on since stays where it is. A restarted incarnation replaced again before it rejoined (a second crash
 * before its first incarnation's recovery is over) is refused loudly ({@code LotusCluster#join}: the recovery would be
 * taken for the first incarnation's); the simulator never asks it (each compute node crashes once). Several nodes
 * dead at once (the simulator's {@code --crash-cn 0,1,2}, Fig. 15) are each recovered so, one {@code Recovery} each;
 * a dead node's shards are served again only once every dead node's logs are done (or its recovery failed): a complete
 * redo record of dead cn1 on a key of dead cn0's shards was protected by cn0's lock table only.
 * A host without its own recovery hears what this one finished ({@code run.recoveryObserver}, {@code
 * run.moduleRecovered}: the simulator counts those commits in its checks, as it does its shared recovery's).
 * Where the host runs its own recovery beside the leases (the simulator's {@code --crash-recover}: a stand-in of the
 * cluster's recovery duty on the first live node), that recoverer holds the memory nodes' claim on the dead node, and
 * may be the lease leader itself (the same NIC name, so both would be admitted, and the first done would serve the
 * shards while the other's writes are in flight): the lease leader then never recovers a node the host recovers; it
 * waits for the host's recovery ({@code run.recoveryState}: recovering, recovered or failed; a node the host does not
 * recover, one Lotus declared dead that did not crash, it recovers itself) and takes it for its log scan
 * ({@code by_host} in the run's {@code lotus.recoveries}), a failure of it being the recovery's failure. Before lotus14
 * its recovery was refused, it never freed the dead node's locks, and 98 % of attempts
 * aborted on them to the end (Fig. 15's run, 9 CNs at 540 clients, where the host's recovery took 2 ms). On cluster nodes
 * the host's recovery duty finishes the redo records and then tells every survivor ({@code
 * ComputeNodeContext#onPeerRecovered}); each node's health shows the locks its table holds ({@code module.locksHeld},
 * {@code ComputeNodeContext#MODULE_HEALTH}) and a memory node's the objects with an INVISIBLE cell ({@code
 * unsettled}, {@code ObjectProbe#unsettled}): {@code scythe chaos --protocol lotus} checks both are 0 at the end.
 *
 * <p><b>Memory-node store</b>: {@link io.scythe.txn.lotus.Cvt}, Lotus's own format in the room of each object slot
 * ({@code Protocol#objectRoom}): a CVT of N cells (default 2: valid, address, version with INVISIBLE, head and tail
 * CVs) and N full-record versions with a CV per cache line, on the primary and every backup. A commit writes only the
 * home's version word (after its visible write: recovery's sign that the write-back landed); the home value stays as
 * loaded or inserted and is the one version only of a CVT never written. Every reader takes versions from the CVT:
 * one-sided reads, the version-table cache, lock-free reads, and the end-of-run checks
 * ({@code ObjectProbe#committedValue}, a copy of the newest visible version; no check writes memory). Deviation: log
 * recovery's redo apply ({@code CnRecovery}) still writes the home value and version of an entry whose write-back did
 * not land (the shared one-sided redo path) before finishing its cells; the home is then a copy nobody reads. The
 * per-coordinator log is the redo record every one-sided protocol writes to its coordinator's log region.
 *
 * <p><b>Protocol</b>: {@link io.scythe.txn.lotus.LotusTxn}, lotus.md §2.4: T_start; lock (write locks, and read locks
 * under SR: {@code lotus}; none for data only read under SI: {@code lotus-si}, declared by
 * {@code Protocol#snapshotIsolation}, so the explorer fails it only on a cycle without two consecutive rw edges,
 * {@code SerializabilityChecker.Result#snapshotIsolationAllowed}, and neither the simulation nor the bench judges a
 * workload's write-skew conditions, {@code OltpSpec#writeSkewConditions}); READ the CVT, pick the largest version
 * below T_start (a newer one aborts), READ its record (CV check); at commit WRITE the new records and cells INVISIBLE
 * (primary and backups) and the redo record in one round trip (its entries' tokens the read version + 1: T_commit is
 * not known yet; an attempt that aborts after it withdraws it, its trailer zeroed on every copy, before its locks go,
 * else a later recovery could clear the next writer's INVISIBLE cell; one whose record is in doubt, its WRITE failed
 * after it was posted or its withdraw failed, is never aborted: the loop gives up with its INVISIBLE cells and locks
 * kept for recovery, {@code RedoStep#giveUpAhead}; unless only copies on memory nodes a failover removes are in
 * doubt: see the memory-node failover below), T_commit, WRITE visible then the home's
 * version word, unlock (an inserted
 * object's home is written whole: its backups hold a placeholder until then; its CAS word is cleared first in that
 * batch, so a crash cutting it never leaves the home at the record's token, which recovery takes for landed, beside a
 * set CAS word, which recovery's RELEASE_NODE then abandoned: a committed TPC-C order line lost, crash explorer
 * seed 52). Each phase posts one doorbell per
 * memory node, as the paper's implementation batches: the INVISIBLE writes of every copy on a node together, and the
 * visible phase's backup writes in the write-back doorbell of a node that is also a written object's primary.
 * WRITEs per written record, 3 copies: 2 per copy INVISIBLE (record, cell; 1 for a CVT written whole the first time)
 * and 2 per copy visible (the cell's version, the home's version word); the paper's visible phase has no home word,
 * which here is recovery's sign that the write-back landed ({@link io.scythe.txn.lotus.LotusLockKind#heldBy}) and,
 * on a backup, what a promoted copy and the copies' comparison read. A write-back batch refused until its reposts run
 * out is finished from what the commit holds ({@code RedoStep}), which also makes its cells visible on every copy
 * ({@link io.scythe.txn.lotus.LotusLockKind#recovered}, as recovery does), so the visible writes that rode in it are
 * not lost; the backup writes of a node that is no written object's primary go in a doorbell of their own, posted with
 * the write-back (after the redo record, lotus.md §5.1: posted at once, they could land before it, and a crash then
 * left those backups at a version nobody committed, seen only after a failover; {@code LotusCvtSimTest} reads every
 * copy while a move is held before and after its record), finished so when refused, given up to recovery when failed
 * after posting. A transaction declared read-only
 * ({@code Txn#declareReadOnly}) takes no lock and reads at T_start, aborting on a torn cell or record or on an
 * INVISIBLE cell (the digest's window, {@link io.scythe.txn.lotus.Cvt}) unless it gets the key's read lock (no live
 * writer holds the key): then the cell is a gone writer's and is settled (made visible at the home's version if the
 * home is newer than every visible cell, else cleared; an insert's CVT, which has none, only over a live home with
 * its CAS word clear: one whose insert recovery abandoned, deleted at the INSERT's version + 1, was made visible so,
 * a G1a on phantom seeds 65 and 89) and the key read again; a locked read settles it too. A CVT left with no valid
 * cell (an insert undone) is read from its home: absent, at the ABANDON's version, if below T_start. An insert locks its key and its memory-pool index bucket; a delete is a version marked deleted. No RDMA CAS or FAA on
 * this path.
 *
 * <p><b>Memory-node failover</b> (issue 19, review item 3; the simulator's {@code --crash-mn}): the visible writes go
 * to every backup before any primary (the backups' batches, {@code WriteSet#backupWrites} then the primaries'; recovery's
 * {@code recoverCells} in the same order). Readers read primaries only, so a version a reader saw is visible on every
 * backup a failover could promote, and recovery, which finishes a record only where a surviving copy shows a visible
 * cell (lotus.md §2.7: "already visible"), keeps it. Chosen over a commit word outside the record's checksum because
 * the paper's recovery argument is the visible cells, and MNs are assumed fault-tolerant by replication (§6's failure
 * model): visible on a primary must mean visible on its replicas. Cost: one more round trip per commit with backups
 * (the paper posts primary and backup in one). Before, a coordinator dying with only its primary's batch landed,
 * then that primary's MN removed, left a version readers had seen undone ({@code LotusMnCrashSimTest}: readers saw
 * 9998, 10000 after recovery). An operation failing with an error once the memory-node configuration changed since
 * the attempt began is a {@code reconfigured} abort, retried ({@code OneSidedTxn#goneAsAbort}); promoted copies serve at
 * once ({@link io.scythe.txn.lotus.LotusModule#promotedCopiesServeAtOnce}: the CN locks keep commits in flight), and
 * with {@code --crashes} the dead CN is recovered by Lotus's leases. Only an error that may say a memory node is
 * gone waits for the failover ({@code OneSidedTxn#mayBeGone}; every error did, 2 ms each in the simulator, and the
 * explorer's phantom seeds committed nothing under {@code --crash-mn}). A dead coordinator's commit on a partition
 * whose primary failed over is settled by Lotus itself ({@link io.scythe.txn.lotus.LotusLockKind#settlePromoted},
 * {@code LotusTxn#settlePromoted}: on each copy its write-back missed, the INVISIBLE cell made visible at T_commit and
 * the home's version word set, backups first; an inserted object's home written whole): the shared settling wrote a
 * home value Lotus never writes and left the cells INVISIBLE (explorer seed 23: copies differing, money +20,000).
 * Inserts need nothing more across a failover: a backup's placeholder carries no lock word, the CAS words a cut
 * INSERT or write-back leaves are on the dead node only (which the end checks no longer count), and the key's CN
 * locks keep it from everyone else until its commit or recovery is over. A redo record logged ahead whose WRITE
 * failed in doubt only on memory nodes a failover removes (the transport gave up on a crashed node while the live
 * copies landed) is durable on every serving copy: its attempt aborts as {@code reconfigured} (the record withdrawn
 * from the serving copies, its cells cleared) and is retried, instead of giving its loop up
 * ({@code RedoStep#aheadOnSurvivingCopies}, {@code OneSidedTxn#abortOrGiveUpAhead}; helper lotusfix2): every loop
 * given up in the sweeps below was one (smallbank 21 of 100 seeds, tpcc 3 of 50, phantom 5 of 50: now 0). Sweeps
 * ({@code sim --explore N --crashes --crash-mn 1 --replicas 2 --mns 3 --protocols lotus}): smallbank 100 seeds, tpcc
 * 50, phantom 50: 0 failed, 0 gave a loop up.
 *
 * <p><b>Version-table cache</b>: {@link io.scythe.txn.lotus.VtCache}, per compute node, CVTs of its own shards only;
 * a read holding its local lock (or a lock-free read of a key no writer holds) takes the CVT from it and READs only the
 * record. The address cache is the ordinary one of index lookups (key to object; the CVT is in the object slot).
 *
 * <p><b>Not implemented yet</b> (issue 19; each fails clearly where reached): clearing, in recovery itself, the
 * INVISIBLE cells of a dead coordinator's attempt whose INVISIBLE writes landed and whose redo record (posted in the
 * same round trip) did not (recovery cannot name them: the first reader of the key after the recovery settles them,
 * see above); the redo record's own T_commit (lotusproc2's plan wrote it into the record's version word with the
 * visible writes: the cells decide instead, as the paper's recovery reads them, and the record's copies could
 * disagree; review of issue 19, item 3, is closed by the write-back's order instead: see below); a restarted cluster-node process getting shards back (the give-back runs in process only);
 * resharding and Lotus's own leases across cluster-node processes; of the one-sided inserts (below): tables without
 * a hash index (TODO lotusins-skiplist: the INSERT RPC), the backups' index (TODO lotusins-backup-index: located by
 * LOCATE RPC, the memory node's CPU making the placeholder), slots given back to the memory node (TODO
 * lotusins-return, what is left of it: a dead node in a process of its own, whose holder id the survivors do not know;
 * a live node's aborted attempts give theirs back to its pool, helpers lotusret and lotus19: {@code SlotPool#reusable};
 * a dead incarnation in process has its slots outside the index given back to the memory node by its recovery, helper
 * lotus19: {@code SlotPool#reclaim}, {@code Table#reclaimGranted}), and the
 * memory node's own index writes beside the compute nodes' (TODO lotusins-revive-race: a GRANT that finds no slot
 * fails the insert FULL, as an INSERT RPC's FULL does, since the stop-54 review's L2: left to the INSERT RPC, its
 * memory node wrote the first free slot under none of the compute nodes' bucket locks, which could overwrite a key
 * committed one-sided; what is left: a tombstone the memory node deleted itself, an abandoned INSERT, may be reclaimed under a one-sided revival).
 * The one-sided inserts across a memory-node failover (TODO lotusins-mn-failover, helper lotusmn, round 3; the TPC-C
 * cause fixed, phantom seed 16 since too, below: {@code sim --explore 30 --crashes
 * --protocols lotus --workload tpcc --crash-mn 1 --replicas 2 --mns 3} failed 4 of 30 seeds one-sided (6, 17, 21: a
 * NewOrder's district visible without its order; 24: order lines missing), and seed 6 with the memory node's crash
 * alone. The cause: a NewOrder aborted as {@code reconfigured} by the failover had LOCATEd its inserts' backups, which
 * left placeholders (deleted, empty) in the backups' indexes; its retry found those keys in the promoted copy's index
 * and revived them as writes ({@code LotusTxn#insertOverFound}), and Lotus's write-back wrote no home for a revival,
 * so the homes stayed empty and flagged deleted, the rows live only in their CVTs, which the end checks (finding a
 * row by its home's value) did not count. A revival's home is now written whole, as a one-sided insert's placeholder
 * home ({@code LotusTxn#wholeHomesOfRevivals}; recovery's {@link io.scythe.txn.lotus.LotusLockKind#settlePromoted}
 * too); the INSERT RPC had revived such a home in place. {@code LotusInsertSimTest
 * #shouldReviveAPlaceholderHomeWithItsValueOnEveryCopy}, {@code #shouldKeepTpccInsertsAcrossAMemoryNodeFailover}
 * (the five seeds): all failed before. Revivals write their homes whole with the INSERT RPC too (a read of a deleted
 * key, then its insert: {@code Inserts#insert}), where the write-back wrote none before either. Sweeps after,
 * one-sided, {@code --explore 30 --seed 1 --crash-mn 1 --replicas 2 --mns 3 --protocols lotus}: tpcc with
 * {@code --crashes} 0 failed, without 0 failed (seeds 5, 6 and 15 gave a loop up; with the INSERT RPC 5 and 6 do
 * too, 15 not: not traced); phantom with {@code --crashes} 0 failed; phantom without fails seed 16 ("no object slot granted on mn0
 * (FULL): table mark ... is full (capacity 1)": the one slot of a 1-object table was granted, taken by an attempt that
 * then aborted after posting its WRITEs, and leaked; the INSERT RPC passes it; since helper lotusret such a slot goes
 * back to its node's pool once its writes are done, its record withdrawn and no index slot names it; traced by helper
 * lotus19: the slot's attempt failed its INVISIBLE phase on the crashed memory node and aborted, but lotusret's
 * give-back waited for the commit's future, which completes only after the commit's own failure ran the abort, so
 * the slot still leaked; the give-back now waits for the INVISIBLE phase only, and an attempt over posts nothing
 * more: {@code LotusInsertSimTest#shouldGiveAnAbortedInsertsWrittenSlotBack}, enabled; the six sweeps of the README
 * 0 failed one-sided). One-sided inserts stay off by default until every Lotus test class is run with them on
 * (TODO lotusins-default). The placeholders an aborted attempt's LOCATE leaves in the backups' indexes, which
 * these revivals now handle, still accumulate (TODO lotusins-backup-index, lotusins-return)).
 *
 * <p><b>One-sided inserts</b> (lotus.md §2.1, helper lotusins; {@code LotusTxn#insertOneSided}): an insert locks its
 * key and its home index bucket as it is issued; at commit, READs of the probe sequence pick the index slot (the first
 * slot holding no object from home, as the memory node's own insert picks), the bucket of that slot is locked too
 * (linear probing: two inserts of different home buckets can pick one slot of a later bucket, and both then lock it)
 * and the slot READ again under that lock; the object goes in a slot the compute node was granted
 * ({@link io.scythe.txn.lotus.SlotPool}: GRANT RPCs of a 64th of the table's capacity, at most 32, per memory node and
 * table, placeholders outside the index, {@code Table#grantSlots}). The INVISIBLE phase writes its CVT, whole, and
 * its placeholder home's version (the version an INSERT would have given it, the absent bound + 1, READ with the
 * buckets); the redo record names it as an inserted entry; after T_commit, before any visible write, the index slot is
 * written (key, then pointer) in a round trip of its own; then the visible phase writes the home whole and the cell.
 * Record first: a coordinator dead before its index slot was written left an object nobody reaches, nothing to undo;
 * one dead after left a placeholder home, deleted at that version, whose cells recovery clears unless the commit is
 * visible somewhere (then it finishes it as any insert's): the key reads absent, a tombstone. A key the READs find in
 * the index (a tombstone, or a duplicate) is read under the insert's write lock and revived as a write, or fails as a
 * duplicate. What the memory node's bookkeeping does not learn, and why that may stay so: its index's entry count
 * (statistics only); its reclamation (Lotus's deletes are one-sided tombstones already, which it never frees); the
 * absent bound (READ by the inserter, raised only by reclamation); the backups' index (the LOCATE RPC). No INSERT RPC
 * is sent on this path ({@code LotusInsertSimTest}; {@code -Dscythe.lotus.oneSidedInserts=false} sends them as
 * before, for comparisons).
 */
package io.scythe.txn.lotus;
