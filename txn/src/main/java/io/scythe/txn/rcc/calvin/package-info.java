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
 * values to write; each node's sequencer and scheduler run on its loop 0. Built, in the simulator (only it wires
 * compute nodes to each other for a module yet), in two forms:
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
 * input-log WRITE stops the node's sequencer (it gives up once, and closes no later epoch). Its cost (SmallBank, 4 compute nodes x 2 loops x 10 clients, 1 ms, seed 1): one-sided 438k vs
 * 459k txn/s without it (-4.6 %, p50 60 vs 55 us), RPC 304k vs 309k (-1.6 %). The sequencing layer's side of a
 * death is built, sans-IO and not wired yet ({@link io.scythe.txn.rcc.calvin.Epochs#nodeDied}: a dead node's epochs
 * from its log, the rest empty, the same at every survivor). Not built yet (issue 18 parts 2-6): telling survivors a
 * node died, reading its log there (after fencing it; and dropping its partly received chunks), a redo record of
 * executors (procedures are closures on the dead node's clients, so
 * survivors cannot re-run them), survivors taking over a dead node's lock queues, and crash tests; nor a per-stage
 * breakdown, nor backups of the data (the write-back updates primaries only: a run with {@code --replicas} fails its
 * copies check). So cluster nodes refuse it ({@code CalvinModule#clusterRefusal}), and so does the simulator for a run
 * that crashes a compute node ({@code SimOptions#validate}: a crash would stop every epoch and stall the run).
 */
package io.scythe.txn.rcc.calvin;
