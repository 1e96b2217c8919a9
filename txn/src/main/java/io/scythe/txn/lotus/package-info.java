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
 * loop i over {@code io.scythe.rrpc.CnPeers}); an out-of-range key is answered with an error.
 *
 * <p><b>Routing and resharding</b>: {@link io.scythe.txn.lotus.LotusCluster} stands for the routing layer (the shard
 * map requesters ask by; a key refused as out of range is asked again by the newer map) and the published latency
 * metrics; {@link io.scythe.txn.lotus.LotusNode} serves its shards, publishes its mean latency every
 * {@link io.scythe.txn.lotus.LotusOptions#reshardEveryNs} and hands its hottest shard to the fastest node when
 * overloaded, in the paper's order, recording each pause. Hybrid routing of transactions is the host's router
 * ({@code io.scythe.routing.RoutingMode#HYBRID}), which the handoffs update.
 *
 * <p><b>Recovery</b> (lotus.md §2.7) on leases ({@link io.scythe.txn.lotus.LotusOptions#leaseNs}): a node whose
 * lease ran out is let go of by every survivor (calls to it fail, attempts that asked it for locks abort unless past
 * T_commit); the first survivor to notice finishes its logged commits from their redo records
 * ({@code CnRecovery}, {@link io.scythe.txn.lotus.LotusLockKind}: an entry only where the object's version is still
 * below the record's) and drops the rest; survivors then free its locks from their lock state; no lock table is
 * rebuilt. Its shards are served again once every survivor freed them and no attempt that asked it is left: by the
 * survivors, since the simulator cannot restart a node (the paper restarts it with an empty table).
 *
 * <p><b>Protocol</b>: {@link io.scythe.txn.lotus.LotusTxn}, lock first, then one-sided reads, then write-back and
 * unlock with no validation. An insert locks its key and its memory-pool index bucket; a delete is a write.
 *
 * <p><b>Not implemented yet</b> (issue 19; each fails clearly where reached): the memory nodes' CVT store (cells,
 * INVISIBLE, visible write, logs, GC), so no lock-free read-only path and no SI; the version-table cache; hybrid routing; resharding; lock-rebuild-free recovery; lotus outside the simulator (scythe bench, cluster
 * nodes); the Motor baseline.
 */
package io.scythe.txn.lotus;
