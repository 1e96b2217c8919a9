/**
 * Cluster mode: Scythe nodes as processes.
 *
 * <ul>
 *   <li>{@link io.scythe.cluster.ClusterSetup}: Hazelcast from conf/cluster.xml (TCP join, one bound address, fast
 *       failure detection), the secret-derived cluster name, the clustered Vert.x.</li>
 *   <li>{@link io.scythe.cluster.ScytheNode}: one node (MN, CN or TSO); the registry {@code scythe.nodes} (role,
 *       epoch, fabric identity, member), epochs {@code scythe.epochs}, leases and fencing.</li>
 *   <li>{@link io.scythe.cluster.MapLockStep}: an epoch or slot taken under a map lock, done again when a split and
 *       merge took the lock or the read was stale; its counters are only ever raised.</li>
 *   <li>{@link io.scythe.cluster.EpochClaims}: a CN incarnation's claims on its epoch and slot; a split that handed
 *       either out twice is found at the merge ({@code scythe.epochs} merges keeping the higher value,
 *       {@code HigherValueMergePolicy}) and the incarnation whose claim lost fails its start or loses its lease.</li>
 *   <li>{@link io.scythe.cluster.FabricLease}, {@link io.scythe.cluster.LeaseRenewer}: a CN's lease on the fabric
 *       (a word per CN on every MN, renewed by one-sided WRITEs; an MN fences a CN whose word stopped changing), as
 *       Lotus's lease-based membership; Hazelcast's heartbeat is the fallback detector.</li>
 *   <li>{@link io.scythe.cluster.ShardOwnership}: {@code scythe.shards}, recovery duty per CN, kept by the oldest
 *       member.</li>
 *   <li>{@link io.scythe.cluster.RecoveryDuty}: {@code scythe.owed}, the dead CN incarnations owed recovery, claimed
 *       and recovered by the CN their shard names (or any live CN), removed only once recovered; {@code scythe.recovered},
 *       those recovered, never owed again ({@code scythe.recovered.byPrefix}: the same by transaction-id prefix, what
 *       a SELCC node that missed a release asks by one get).</li>
 *   <li>{@link io.scythe.cluster.MemoryNodeFailover}: {@code scythe.mnconfig}, the memory-node configuration (MN
 *       failover: backups promoted, commits in flight settled); {@link io.scythe.cluster.MemoryNodeRejoin}: a
 *       replacement memory-node process rejoining (new tables switched in on every CN, re-replicated, then a full
 *       copy).</li>
 *   <li>{@link io.scythe.cluster.NodeMetrics}: Prometheus metrics and health over HTTP.</li>
 *   <li>{@link io.scythe.cluster.ScytheClient}: a client's view of outcomes (unknown is never aborted).</li>
 *   <li>{@link io.scythe.cluster.NodeMain}, {@link io.scythe.cluster.LocalCluster}: running one node, or a cluster
 *       of local processes.</li>
 * </ul>
 *
 * <p>Control traffic only crosses the event bus (table and TSO lookups, RRPC ring opening, client requests) and
 * Hazelcast (membership, registry, shards); data moves over the fabric.
 */
package io.scythe.cluster;
