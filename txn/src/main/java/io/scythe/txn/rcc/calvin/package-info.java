/**
 * RCC's CALVIN (§4.6, issue 18), the deterministic shared-nothing protocol, as its own module
 * ({@link io.scythe.txn.rcc.calvin.CalvinModule}, {@code rcc-calvin}), on the compute nodes' peer messaging
 * ({@link io.scythe.rrpc.CnPeers}):
 * <ul>
 *   <li>Epochs ({@code epoch=<n>us}, default 10 us: Calvin's 10 ms scaled to simulated runs of a millisecond) and a
 *       sequencing layer per compute node ({@link io.scythe.txn.rcc.calvin.Epochs}): each node batches the
 *       transactions its clients began in an epoch and dispatches the batch to every node (one batched message per
 *       node and epoch, in chunks that fit a message, empty when it has none); an epoch is complete at a node once every node's
 *       batch of it is there, which gives every node one total order (epoch, node, position).</li>
 *   <li>Data partitioned among compute nodes (a key belongs to node {@code partition mod nodes}). Each node grants
 *       the locks on its keys in the total order ({@link io.scythe.txn.rcc.calvin.CalvinLocks}: shared reads,
 *       exclusive writes, FIFO), so no transaction waits for a later one: no deadlock, no abort but the
 *       procedure's own (a user abort).</li>
 *   <li>Participants: once a transaction holds its locks at a node, the node reads its records there (one-sided,
 *       from its memory nodes) and forwards them to the executor; a passive participant (reads only) then releases,
 *       an active one (writes there) holds its locks until the executor's writes arrive, writes them and releases.
 *       No two-phase commit.</li>
 *   <li>Read and write sets declared up front ({@link io.scythe.txn.rcc.calvin.CalvinTxn}): what the procedure reads
 *       ({@code read}) or will write ({@code readForUpdate}) in its first round of reads, which SmallBank and YCSB
 *       issue at once. A key read after that (one that depends on a value read) goes by OLLP, Calvin's
 *       reconnaissance: the first run's locks are released, the rest of the procedure reads unlocked, and the commit
 *       sequences the transaction again with every key it named; at execution each record must be at the version
 *       the reconnaissance saw, else nothing is written and it restarts (abort reason {@code ollp-restart}).</li>
 *   <li>Inserts and deletes are declared writes: the key's owner, holding its exclusive lock in sequence order,
 *       creates a key not in the index by an INSERT RPC to its memory node without a lock word
 *       ({@code InsertLock.NONE}: the owner's lock manager is the lock), revives a tombstone, or makes a deleted key
 *       a tombstone (one-sided). An insert of a key read present (or inserted twice) fails the commit with
 *       {@code duplicate-key}, a delete of a key not read present fails, as in the other protocols. An insert of a
 *       key named after the first round (TPC-C's order ids, from the district read) goes by OLLP.</li>
 * </ul>
 * Where it departs from RCC's (and Calvin's): the procedure runs only at its executor, the node whose client began it
 * (procedures are closures on the client's loop, not stored procedures every node could run), so participants
 * forward their records to it rather than to every active participant, and it sends each active participant the
 * values to write; each node's sequencer and scheduler run on its loop 0. Built, in the simulator, the embedded
 * cluster ({@code scythe bench --cns N}) and on cluster nodes through one compute-node fault per run (below), in two
 * forms:
 * <ul>
 *   <li>{@code rcc-calvin:primitive=rpc}: dispatch, forwarding and write-back are RRPC calls to the peer's home loop,
 *       in bucket-sized chunks (472 bytes); a record, a write or a transaction's keys larger than one go in parts
 *       (TPC-C's 680-byte customer rows, StockLevel's hundreds of keys).</li>
 *   <li>{@code rcc-calvin:primitive=onesided} (and {@code rcc-calvin}), the paper's RDMA CALVIN: every message is one
 *       one-sided WRITE of value + notify word into the sender's ring of 2 KB slots in the receiver's registered
 *       inbox ({@link io.scythe.txn.rcc.calvin.CalvinInbox}), which the receiver's home loop polls (no RPC handler,
 *       no reply); an active participant answers the executor's writes by such a WRITE too. Where the inboxes are is
 *       asked once by RPC at set-up.</li>
 * </ul>
 * At the end of a simulated run every node's lock queues (and every table of transactions in flight) must be empty
 * ({@code run.endChecks}: a violation of the run otherwise). OLLP is Calvin's deterministic re-execution: the
 * coordinator gives the procedure through {@link io.scythe.txn.Txn#run}, so once the reconnaissance is over and the
 * transaction, sequenced again with every key it named, holds those locks, the procedure runs again on the locked
 * records and its writes and result are that run's; it restarts ({@code ollp-restart}, nothing written) only when the
 * re-run names a key outside the locked set (or writes one it locked shared). A procedure not given by {@code run}
 * (a caller driving the {@code Txn} itself) falls back to the old check: every record read by the reconnaissance
 * unchanged at execution.
 *
 * <p>The input log ({@link io.scythe.txn.rcc.calvin.CalvinInputLog}, issue 18 part 1): where the loops keep a redo
 * log (the simulator's and the bench's {@code --redo-log}, cluster nodes) and unless {@code log=off}, each sequencer
 * writes every non-empty batch of an epoch, as dispatched to each node, to its log region on a memory node and on that
 * partition's backups (one one-sided WRITE per copy) and dispatches it, to itself too, only once every copy is
 * durable, epochs in order. RCC runs no recovery and is silent here; this is what Calvin's authors do (Calvin
 * replicates its input, the sequencers' batches, before the schedulers see it): any batch a node received is then in
 * the log, so survivors could agree on a dead sequencer's epochs (every logged batch, a missing one empty, which only
 * an empty batch is). For that a record must outlive its epoch at every node, not just here: each batch carries its
 * sender's newest complete epoch, and a node overwrites a record of its ring only at or below the minimum over the
 * live nodes ({@link io.scythe.txn.rcc.calvin.Epochs#lowWater}), else it gives up naming issue 18; a survivor that
 * holds a non-empty batch the log lacks refuses to go on. The region is of its own kind (not a redo log: the memory
 * node neither lists nor frees it with the node's redo logs, as survivors read it after), and the first failed
 * input-log WRITE stops the node's sequencer (it gives up once, and closes no later epoch). Its cost (SmallBank, 4
 * compute nodes x 2 loops x 10 clients, 1 ms, seed 1): one-sided 438k vs 459k txn/s without it (-4.6 %, p50 60 vs
 * 55 us), RPC 304k vs 309k (-1.6 %) (before decision records, below).
 *
 * <p>A node's death (issue 18 parts 2-4; RCC runs no recovery and is silent: what follows is what Calvin's authors
 * do, replaying the replicated input deterministically, adapted to procedures that exist only at their executor):
 * <ul>
 *   <li>Part 2, the word: the host tells each live node once the dead node is fenced on every memory node (its WRITEs
 *       in flight can land no more) and its redo records are settled: the simulator's {@code run.peerDied}, after its
 *       crash recovery ({@code CrashRecovery}). Before that, a message to the dead node that fails is not fatal for
 *       {@link io.scythe.txn.rcc.calvin.CalvinNode#DEATH_GRACE_NS} (its death is told later than the failure); after
 *       it, nothing more is sent to it.</li>
 *   <li>Part 3, its epochs: each survivor reads the dead node's input log (its first open copy, by one-sided READs;
 *       where it is, each node publishes once it opens it: the shared map's {@code calvin.inputLogs}, the stand-in
 *       for a membership service's record) and completes its epochs from it
 *       ({@link io.scythe.txn.rcc.calvin.Epochs#nodeDied}: every logged batch, a missing one empty); its partly
 *       received chunks are dropped (the log has the batch whole). Every survivor reads the same fenced copy, so all
 *       complete the same epochs with the same batches.</li>
 *   <li>Part 4, its transactions: procedures are closures on the executor's clients, so no survivor can run them
 *       again. So an executor logs its decision ({@link io.scythe.txn.rcc.calvin.CalvinInputLog#encodeDecision}: the
 *       transaction, its commit timestamp and its writes by node, in the same region and copies) before it sends any
 *       write, and holds its slots until every active participant wrote. A survivor holding a dead executor's
 *       transaction as an active participant (once its records are read) writes what the decision gives it, or, with
 *       no decision, releases: nothing was sent, so nothing was written anywhere. One more WRITE round trip per
 *       committing transaction under the input log (same SmallBank run as above: one-sided 390k vs 445k txn/s
 *       without decision records, -12.4 %, p50 65 vs 61 us; RPC 281k vs 304k, -7.6 %); a transaction that writes
 *       nothing logs no decision.</li>
 *   <li>Late words of the dead (the review's findings): what it WRITE or called before its fence can still be polled
 *       or handled after the take-over (a CN's inbox is not fenced, only its memory nodes are); so a one-sided
 *       message or an RPC call (BATCH, FORWARD, WRITE: the caller's name is a dead node's) from a node already taken
 *       over is dropped (its log has its batches whole and its transactions decided; what it owned is rebuilt here,
 *       which forwards again the records its executors missed, so a late FORWARD counted a key twice and delivered a
 *       transaction with another key's record missing; {@link io.scythe.txn.rcc.calvin.Forwards} also counts a key's
 *       record once), and its executors' WRITE chunks too, whole or not ({@link
 *       io.scythe.txn.rcc.calvin.WriteChunks#close}: a late chunk opened an assembly nothing completed, a late whole
 *       WRITE after its decision was applied failed as a second write). A decision record's slots are freed once its
 *       writes end, failed too (they were held for the rest of the run; a failed write-back gives the run up).</li>
 *   <li>Part 5, a dead owner's lock queues: its successor ({@link io.scythe.txn.rcc.calvin.Takeover#successor}, the
 *       first live node after it) takes its partitions over once it read the dead node's log, running a second
 *       scheduler for them (its own lock table and parts: the dead node's queues are lost with it and are rebuilt from
 *       the total order). Its input, in order: (a) {@code Takeover#input} of what every live survivor's executors still
 *       wait for from the dead node (each executor keeps, per participant, what it dispatched it until its part is
 *       over: its records in for a passive one, its writes acknowledged for an active one), the dead node's parts each
 *       sequencer held back while its log was read among them, and of the dead executors' decision records writing
 *       there (their written keys locked exclusive at their commit timestamps); (b) from then on, the dead node's part
 *       of every later epoch of every sequencer. With more than 2 compute nodes the other survivors take part (the
 *       successor's own share goes the same way, without messages): each, once it read the dead node's log, (1)
 *       sends the successor its contribution to (a) ({@code CalvinWire#OWED}: each transaction's place in the order,
 *       its declared keys there and which of their records its executor still awaits), once and even when empty, the
 *       successor scheduling none of (a) until every live survivor's is in (a second one from a node, or one for
 *       another dead node, gives the run up: nothing resends it, so it is idempotent by being sent once per survivor
 *       and death); (2) routes the dead node's part of each later epoch to the successor inside its batch of that
 *       epoch to it (after a separator, {@code CalvinWire#routedMarker}), so that when an epoch is complete at the
 *       successor its routed parts are all there, and the successor queues them with (a) by order timestamp, an epoch's
 *       once it is complete there; (3) sends the successor ({@code CalvinWire#TAKEN_WRITE}, answered as a WRITE) the
 *       writes its executors sent the dead node and saw no acknowledgement of (RPC: the failed call, one-sided: the
 *       DONE never coming; each such part tracked anew, so a late answer of the dead node is not counted) and every
 *       later write for its partitions; writes that come before their part is queued wait for it. The successor
 *       forwards to each executor only the records it did not get (each must be older than its place in the order,
 *       else a later transaction wrote what the dead node had read for it, which nothing can undo: the node gives up
 *       naming part 5), and applies only the writes {@code Takeover#installed} says are not (the dead node may have
 *       written some), an insert of a key present below its version as a revival. The owner function (part 5 (4)) is
 *       kept as each key's home node, the scheduler of a dead home being the one its successor took over (a
 *       transaction's keys at node d still go to d's scheduler, wherever it runs). One owner's death per run is taken
 *       over, and with it any number of deaths of nodes that schedule no partition (they only sequence and execute),
 *       built for before, during or after it and simulated as deaths at the same instant or, with {@code --crash-at T1,T2}, at different times (below) ({@link io.scythe.txn.rcc.calvin.Takeover#secondDeathRefusal}): such a node dying
 *       during the take-over is waited for no more at the successor if its contribution did not come (its
 *       transactions there are its decided ones, from its decision records, read before anything is rebuilt: nothing
 *       is rebuilt while a node is dying), its decision of a transaction it did contribute goes in once, as
 *       contributed, its parts in the taken-over scheduler are decided as a dead executor's are (a part whose executor
 *       is still dying waits for its log), its resent writes partly received are dropped, and such a node
 *       dying after the rebuild has each of its decided transactions writing there known at the successor or of an
 *       epoch complete there, checked loudly ({@code CalvinNode#deadDecidedAfterRebuild}: the "route from its log"
 *       step that stood there was never reached and is removed; the argument is there); a successor is named among
 *       the nodes dead or dying. A second death of a node scheduling
 *       partitions (an owner after an owner, or the dead owner's successor) gives the run up naming part 5: the
 *       successor of a successor is not built. Several nodes crashing at one time ({@code --crash-cn 0,2}, also with
 *       {@code --explore --crashes}) are refused up front where one of them might be such a second death
 *       ({@code CalvinModule#severalCrashesRefusal}: two owners, or an owner and a node between it and its successor).
 *       Tested by {@code CalvinSimTest#shouldTakeOverADeadOwnerWhenAnotherNodeDiesTooInTheSameRun} (3 compute nodes,
 *       owner cn0 and cn2 crashing together early, 3 seeds per form). Deaths at the same instant (news staggered or not)
 *       never reach the rebuilt part: the rebuild waits for the later-told node's contribution, which a node crashed
 *       with the owner never sends. Crashes at different times ({@code sim --crash-cn 0,2 --crash-at T,T+60us}) do: cn2
 *       contributes to cn1's rebuild and dies after it, and {@code executorDiedDuringTakeover} runs with its rebuilt
 *       and adopted parts ({@code CalvinModule#DIED_AFTER_REBUILD}), tested by
 *       {@code CalvinSimTest#shouldTakeOverADeadOwnerWhenANodeThatContributedDiesAfterTheRebuild} (2 seeds per form:
 *       money conserved, serializable, each commit reported once, no loop given up; the count absent with both
 *       crashes at one instant). Its "route from its log" step ran in no run nor sweep and is removed: a decided
 *       transaction writing the dead owner's partitions read its records there (every written key is read, {@code
 *       readForUpdate}), served either by the successor, in an epoch complete there, or by the dead owner, then
 *       rebuilt or of an epoch complete at the successor too: its writes there acknowledged before the executor
 *       contributed mean the epoch was complete at the owner, so every live sequencer had sent its batch of it
 *       before the owner died and before its own contribution, on the same in-order channel, and the rebuild waits
 *       for every live survivor's contribution, whatever the delays (an ordering argument, not a timing one). A loud
 *       failure stands in its place ({@code CalvinNode#deadDecidedAfterRebuild}, run once the epochs the dead log
 *       completes are scheduled, with the argument): a violation of the run ({@code run.violations}, so a sweep
 *       counts the seed failed, even though its node gave up), shown by {@code
 *       CalvinSimTest#shouldReportTheDeadDecidedCheckFiringAsAViolation} (the check forced to fire); {@code
 *       takenWriting}'s close after the rebuild is not shown reached; the contribution dedup is unit-tested in
 *       {@code CalvinOrderTest} only. Sweep ({@code scythe sim --explore 200 --seed 1
 *       --crashes --crash-cn 0,2 --cns 3 --mns 2 --protocols rcc-calvin,rcc-calvin:primitive=rpc}): 0 of 200 seeds
 *       failed in each form (one-sided 1,941 committed, 179 decided by recovery; RPC 1,860 and 166); with
 *       {@code --crash-stagger 15us} (the simulator crashes both at one instant and only delays the later-named
 *       node's detection: its death is told about the other's recovery length later, order not guaranteed), 100 seeds each of {@code --crash-cn 0,2} and {@code 2,0}: 0 failed in each form
 *       (1,001 and 959 committed, 80 and 88 decided by recovery, in both orders). The single-crash sweep
 *       ({@code --crashes --cns 3 --mns 2}, 100 seeds) stays clean: 0 failed in each form, 1,188 and 1,134 committed, 40 and 40 decided by recovery.
 *       Tested by {@code CalvinSimTest#shouldTakeOverTheLockQueuesOfADeadOwner}
 *       (2 compute nodes, 3 seeds per form, a dead owner alternating: money conserved, serializable, no lock left, no
 *       part awaited; 29 of 30 seeds per form fail when the rebuilt input is not scheduled, 7 to 9 when writes are
 *       re-applied over installed ones) and {@code #shouldTakeOverADeadOwnerWhileAnotherSurvivorRoutesToItsSuccessor}
 *       (3 compute nodes over 2 memory nodes, owner cn0 or cn1 crashing early, 2 seeds per form; both fail in each form
 *       when the other survivor's routing is off). Sweeps, {@code scythe sim --explore 100 --seed 1 --crashes --cns 2
 *       --mns 2 --protocols rcc-calvin,rcc-calvin:primitive=rpc}: SmallBank 0 of 100 failed in each form (one-sided
 *       842 committed, 40 of the dead node's commits decided by recovery; RPC 831 and 44); TPC-C 0 of 100 failed in
 *       each form (one-sided 735 committed, 16 decided by recovery; RPC 621 and 11; crashes executing 79 and 87, after
 *       a decision 20 and 12, idle 1 and 1). With 3 compute nodes ({@code --cns 3 --mns 2}, the crashed node drawn
 *       from the seed, an owner in about 2 of 3), {@code --seed 1}: SmallBank 0 of 20 failed in each form (one-sided
 *       244 committed, 5 decided by recovery; RPC 229 and 10), and one-sided over 100 seeds (before a race fix that
 *       only lets a successor take contributions that came before it was told of the death) 0 failed, 1188
 *       committed, 40 decided by recovery (crashes executing 68, after a decision 32); TPC-C 0 of 10 failed in each
 *       form (one-sided 69 committed, RPC 52, 1 and 1 decided by recovery); an owner forced ({@code --crash-cn 0},
 *       {@code 1}): SmallBank 0 of 20 failed in each form
 *       and either owner (cn0: one-sided 223 committed, 7 decided by recovery, RPC 215 and 10; cn1: 243 and 6, 235
 *       and 8). Short sweeps for want of time on a loaded machine (load 35 to 50 on 2 cores).</li>
 * </ul>
 * Not built: the take-over of a second death of a node scheduling partitions (above).
 * A rebuilt passive part whose records were lost and whose keys a
 * later transaction wrote gives up (above) rather than being served.
 * Also not built: freeing input-log regions once no survivor needs them; nor a per-stage breakdown; nor memory-node
 * failover ({@code --crash-mn}, refused: the TODO in {@link io.scythe.txn.rcc}'s package docs). With
 * {@code log=off} no crash is recoverable (refused).
 *
 * <p><b>Backups</b> (issue 18, {@code --replicas K}): the active participant's write-back ({@code CalvinNode#applyWrites},
 * for both forms: the RPC form's WRITE is applied there by the same one-sided verbs) locates each written key on its
 * partition's backups (cached per loop; a key being inserted gets a deleted placeholder by LOCATE), writes every
 * backup (value, length, flags, version; one doorbell per backup node), and only once all completed the primaries,
 * then releases its locks: the order of every other protocol here ({@code onesided.Replicas}), for the same reason
 * (a later writer of the key, queued behind this scheduler's lock, can never have its version overwritten on a
 * backup by this older one, and a promoted backup holds every write a reader saw). Before, backups were never
 * written ({@code sim --protocols rcc-calvin --replicas 2 --mns 3}: 1,030 SmallBank objects differed);
 * {@code RccLogSimTest#shouldWriteCalvinsBackupsAsItsPrimaries}, SmallBank and TPC-C, both forms.
 *
 * <p>A restarted node rejoining (issue 18, restart; built in the simulator, {@code --crash-restart-after}, as below:
 * {@code sim --explore 100 --crashes --crash-restart-after 30us --cns 3 --mns 2 --protocols
 * rcc-calvin,rcc-calvin:primitive=rpc}, 0 of 100 seeds failed in each form; and on cluster nodes, below). One rejoin
 * per run: a
 * death of the rejoined incarnation gives the run up naming it, and a rejoin while another node is dead is refused by
 * {@link io.scythe.txn.rcc.calvin.Epochs#rejoinFloor} (the node asked fails the {@code JOIN}, the joiner gives up).
 * Calvin's authors are silent on membership changes; what follows is the design a reviewer of theirs would accept,
 * in steps:
 * <ol>
 *   <li>(built: {@link io.scythe.txn.rcc.calvin.Epochs#rejoinFloor}, {@link io.scythe.txn.rcc.calvin.Epochs#joinAt},
 *       {@code CalvinOrderTest#shouldLetADeadNodesNewIncarnationRejoinAtOneEpochAgreedByEveryNode}) The entry epoch.
 *       The new incarnation of node {@code d}, once every live node took its old incarnation over (the joiner waits
 *       for that, as a Lotus node waits for its recovery), asks every live node {@code i} to let it in (an RPC,
 *       {@code CalvinWire#JOIN}, answered once; failed with "not taken over here yet" before, and asked again every
 *       20 us, up to 10 ms, {@code CalvinNode#join}). {@code i} answers its floor {@code r_i}, the newest epoch it sent, saw or
 *       completed, and from then on completes an epoch {@code e > r_i} only with {@code d}'s new batch (the dead
 *       incarnation's empty batch stands in only up to {@code r_i}; none above {@code r_i} was complete at {@code i},
 *       its own batch of it not sent yet, and none at or below it waits for {@code d}: the switch is sharp). The
 *       joiner's first epoch is {@code E = max r_i + 1}, the same for everyone as it is a function of the answers,
 *       and it sends each {@code i} an empty batch of every epoch in {@code (r_i, E)}. Invariant: every epoch's
 *       batches are the same at every node (below {@code E} d's batch is empty everywhere: logged or filled empty at
 *       or below a floor, the joiner's empty catch-up above it; from {@code E} on, the joiner's real one), so the
 *       total order stays one, every epoch completes exactly once per live incarnation, and no epoch waits for a batch
 *       the dead incarnation will never send (it is filled at or below the floor; above it the live joiner sends).
 *       The cost: epochs above a node's floor wait one round trip for the joiner's first batch.</li>
 *   <li>(built: {@code CalvinNode#joined} sets its own {@code routedHome}) Its partitions stay with the successor. Handing them back means switching a key's scheduler at an agreed
 *       epoch {@code F} while the successor's queues for epochs below {@code F} drain first (a cross-scheduler FIFO:
 *       the joiner's scheduler would have to wait for the successor's releases of each key), two lock tables for
 *       one key meanwhile, and a give-back message per survivor; keeping the successor serving needs nothing new (the
 *       joiner routes its parts for {@code d}'s keys to the successor as every survivor does, {@code route}, and
 *       sends writes there by {@code TAKEN_WRITE}), at the price of the successor's doubled load. The joiner owns no
 *       partition, so a later death of it is a non-owner's death (built); the successor's death stays a second
 *       owner's (refused).</li>
 *   <li>(built: {@code CalvinNode#onJoin}, {@code CalvinNode#oldIncarnation}, {@code CalvinInbox#rejoined}) Messages
 *       of two incarnations under one index. {@code deadNodes} now means "its old incarnation was taken
 *       over": every site testing it (dispatch, {@code onMessage}, {@code onBatch}, the executor's parts, {@code sent})
 *       must tell the incarnations apart: a transaction by its epoch ({@code < E}: the old one's, decided from its
 *       log), a message by its channel. The one-sided inbox ring of {@code d} at {@code i} continues where the old
 *       incarnation's stopped: before answering {@code JOIN}, {@code i} polls {@code d}'s ring dry (dropping the
 *       old incarnation's late words, fenced by then) and answers its consumed count too, from which the joiner's
 *       sequence numbers go on; the RPC form's calls carry the incarnation in the caller's name. The inboxes are
 *       described again both ways ({@code DESCRIBE}). ({@code CalvinInbox#drainDead}, {@code CalvinInbox#continueAt},
 *       tested on plain memory by {@code CalvinInboxRingTest}.) As built: {@code i} answers {@code JOIN} with its floor,
 *       the drained ring's consumed count and its form; it then sends to {@code d} at the peer name the {@code JOIN}
 *       came from (the simulator's restarted incarnation has its own), on a ring started again at 0 (the new
 *       incarnation's inbox is a new region), and sends it an empty batch of each later epoch ({@code d}'s keys go on
 *       to the successor). A part whose executor is {@code d} is the old incarnation's (decided from its log) at or
 *       below {@code i}'s floor, the new one's above it (an epoch above a floor holds nothing of the old one: it had
 *       logged nothing above the floor {@code i} took over, and the joiner's batches below its first epoch are
 *       empty); a one-sided message of {@code d} polled after the join is the new one's (the ring was drained at the
 *       join), an RPC call under {@code d}'s old peer name the old one's (dropped, {@code fromDead}).</li>
 *   <li>(built: the new incarnation's {@code CalvinInputLog} is opened under its own id prefix) Its input log: a new
 *       region (the old one stays for the survivors that read it), published under {@code d}
 *       again once the join is over; the low-water mark counts {@code d} from its floors on
 *       ({@link io.scythe.txn.rcc.calvin.Epochs#lowWater}).</li>
 *   <li>(built) Its clients resume at {@code E}: transactions begun before the join wait (the sequencer opens no
 *       window before {@link io.scythe.txn.rcc.calvin.Epochs#joinAt}, and batches received before it are only kept).
 *       {@code CalvinSimTest#shouldLetARestartedOwnerRejoinTheTotalOrderAndCommitAgain}: owner cn0 of 3 dies and
 *       restarts in each form; its new incarnation commits again, money conserved, serializable, each commit
 *       reported once, and every transaction queued at one place of the total order at every node that queued a
 *       part of it ({@code CalvinModule#SCHEDULED_AT}).</li>
 * </ol>
 *
 * <p>Cluster nodes (each compute node a process) run CALVIN with no compute-node fault: the peers' one-sided inboxes
 * are registered regions the other processes WRITE, found by one {@code DESCRIBE} RPC, which a node asks every peer at
 * start and asks again ({@link io.scythe.txn.rcc.calvin.CalvinInbox#patientDescribe}, 100 ms apart) until it answers:
 * a peer process still starting, or a ring's opening timed out under load (the first process run gave up on both CNs
 * at that), is not dead, and no message is sent before its inbox is known, so none is lost; the RPC form's calls go
 * as they are (a call timed out under load still gives the node up after the grace). The input log opens on the memory
 * nodes as in the simulator; {@code /health} shows each node's locks queued, parts held, epochs, inbox and input-log
 * records. One compute node's death, not restarted, is taken over there as in the simulator: the death word is the
 * host's {@code ComputeNodeContext#onPeerRecovered} (the dead incarnation fenced on every memory node and its redo
 * records settled: what {@code run.peerDied} means), and the dead incarnation's input log, whose whereabouts no
 * survivor holds in another process, is found on its copies' memory nodes by the incarnation's name
 * ({@code RecoveryRpc#INPUT_LOG_FIND}; the region outlives the node's release), asked in the same order by every
 * survivor. A failed message to a peer waits {@code CalvinNode#CLUSTER_DEATH_GRACE_NS} (120 s) for the death word
 * there (a member leaving, then its recovery, take seconds). With {@code log=off} a node that sequenced unlogged
 * transactions gives up when told of a death. A killed compute node restarted ({@code scythe cluster} restarts it;
 * {@code LocalCluster#restart}) rejoins the total order by the simulator's path ({@code CalvinNode#join}); what
 * differs is when: the host starts the process at once, so the new incarnation ({@code awaitsOwnRecovery}, however
 * long after its old incarnation's recovery it restarts: {@code CalvinModule#restartAlwaysRejoins}) asks to
 * rejoin only once the host tells it its earlier incarnations are recovered (its own name through
 * {@code onPeerRecovered}, told before or after its home loop starts), as the simulator starts a restarted node only
 * after its old incarnation's recovery; a survivor told later answers {@code JOIN_NOT_YET} until it read the dead
 * incarnation's log and took it over, asked again 100 ms apart for up to 2 minutes ({@code
 * CalvinNode#CLUSTER_JOIN_RETRY_NS}), and a JOIN timed out or disconnected is asked again too: a survivor answers a
 * repeated JOIN of one incarnation with its first answer (the joiner sends nothing before every answer is in, so the
 * consumed count it answered has not moved; another incarnation's second JOIN is refused). The survivors address the
 * new incarnation by its configured name (the host's directory maps it to the newest incarnation; the caller's name
 * of a cluster RPC is its fabric identity), describe its new inbox again, and the new incarnation opens an input log
 * of its own. {@code /health} shows {@code joining}, {@code joinedAt} and {@code rejoinedHere}. One compute-node fault
 * per run is survived so ({@code CalvinModule#clusterComputeNodeFaultLimit}): {@code scythe chaos --protocol
 * rcc-calvin} injects one kill (and the restart), then drives the load to the end; {@code --together 2} and
 * {@code log=off} are refused. Tested by {@code CalvinClusterProcessTest} (2 compute-node processes,
 * 200 concurrent moves: all committed, every key exact, no lock queued; then cn1, the owner of the odd keys, killed
 * idle and not restarted: cn0 read its input log and took its partitions over, moves over both owners' keys commit
 * again about 3 s after the kill, every key exact, no lock queued in either of cn0's schedulers; then cn1 restarted:
 * it rejoins (in 40 s from the restart's start, JVM start and cluster join included, at load ~40), and 20 moves
 * alternating between the new cn1 and cn0 commit, every key exact read on each CN, no lock queued, cn0 having let
 * one node in). Not built there ({@code CalvinModule#CLUSTER_DEATH_MISSING}): a second compute-node death in a run
 * (of the rejoined incarnation, of the dead owner's successor, or of another owner: gives the survivors up, as in the
 * simulator), and a rejoin while another node is dead. By hand, {@code scythe cluster --mns 2 --cns 2 --protocol
 * rcc-calvin --workload smallbank --accounts 200} and a client sending SmallBank's standard mix: 2,000 over both CNs,
 * 1,886 committed, 114 user aborts, money conserved (every account audited before and after: +1,000, the committed
 * deposits and checks); 1,500 to cn0 with cn1 SIGKILLed after 500 were sent: 1,426 committed, 74 user aborts, none
 * unknown, money conserved, cn0 holding no lock request, having read 100 records of cn1's log. (Before the rejoin, {@code scythe
 * cluster} restarted the killed CN, which was refused at start, at each try.)
 * Tested by {@code CalvinSimTest#shouldRecoverTheCrashOfANodeOwningNoPartition} (a node owning none crashes at a time
 * drawn from the seed: money conserved, serializable, no lock left; fails when survivors release a logged decision).
 * Sweep: {@code scythe sim --explore 100 --crashes --cns 3 --mns 2 --crash-cn 2 --protocols
 * rcc-calvin,rcc-calvin:primitive=rpc}: 0 of 100 seeds failed in each form (crashes before the decision: 63 and 61,
 * after it: 37 and 39; 38 and 43 of the dead node's commits decided by recovery); with the late words dropped, 0 of 60
 * in each form (25 and 25 decided by recovery). Not caught by that sweep: sending
 * the writes before the decision is durable (0 of 30 seeds per form failed with it; the window is one WRITE).
 * On TPC-C ({@code --workload tpcc}) that sweep committed 15 (RPC: 8) transactions over 100 seeds in the explorer's
 * 150 us, every crash hitting a node merely executing, none decided by recovery: no stall and no abort storm, but a
 * TPC-C transaction under CALVIN is rarely over in 150 us (one client alone: p50 78 us, StockLevel 440 us, about
 * what {@code rcc-occ} and {@code scythe} take alone; its 9 clients: p50 387 us and 18 commits per ms, as NewOrder
 * and Payment by name are sequenced twice (OLLP) and a transaction holds the warehouse's and its district's locks
 * across its executor's round trip, decision record and write-back, a deviation above). So the explorer runs CALVIN's
 * TPC-C seeds 4x longer ({@code CalvinModule#explorerTpccRunScale}, 600 us; other protocols and workloads as they
 * were): 0 of 100 failed in each form, 719 (RPC: 566) committed, crashes executing 90 (86), after a decision record
 * 9 (13), idle 1 (1), 6 (10) of the dead node's commits decided by recovery.
 *
 * <p>A memory node's failover in the simulator ({@code sim --crash-mn}, issue 18, helper calvinmn): a participant's
 * read and an active participant's write-back that failed on a node the configuration removes are done again where the
 * keys serve now (the write-back under the scheduler's lock still held, at the version it was to install, backups
 * first), and an input-log or decision record is durable once every serving copy has it; the promoted copies serve at
 * once, as no lock lives on a memory node (txn.rcc's package docs; {@code CalvinMnCrashSimTest}). Cluster nodes fail a
 * memory node over for CALVIN too (helper rcc21: backups kept, promoted copies serving as soon as applied; txn.rcc's
 * package docs; {@code CalvinClusterProcessTest}); a replacement memory node cannot rejoin (no re-replication for
 * CALVIN: copy-then-verify needs the lock in the object header).
 */
package io.scythe.txn.rcc.calvin;
