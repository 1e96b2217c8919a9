/**
 * A memory node's services set up in one place ({@link io.scythe.txn.mn.MemoryNodeServices}): the LogDB service,
 * redo logs and recovery, and every registered protocol module's services. Used by cluster nodes, the embedded
 * cluster, the simulator and the benchmarks alike.
 */
package io.scythe.txn.mn;
