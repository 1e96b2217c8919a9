/**
 * RCC (Wang, Huang, Qian, SIGMOD'21; papers/rcc.txt, digest rcc.md): six concurrency-control protocols in one
 * framework, each one-sided, by RPC, and as per-stage hybrids, so that protocols and primitives compare fairly.
 * Issue 18. One sub-package per protocol; what they share is here:
 * <ul>
 *   <li>{@link io.scythe.txn.rcc.RccModule}: the module, registering {@code rcc-nowait}, {@code rcc-waitdie},
 *       {@code rcc-occ}, {@code rcc-mvcc}, {@code rcc-sundial} and {@code rcc-calvin} (asked for by name; not in the
 *       default lists), in a form chosen by option ({@code rcc-nowait:primitive=rpc}, {@code :hybrid=010111}:
 *       {@link io.scythe.txn.rcc.RccForm}).</li>
 *   <li>{@link io.scythe.txn.rcc.RccClock}: RCC's timestamps, the loop's clock with node, loop and client ids in the
 *       low bits, and the clock-skew control.</li>
 *   <li>{@link io.scythe.txn.rcc.TupleFormat}: Fig. 3's per-tuple metadata of each protocol, placed in the object
 *       header.</li>
 *   <li>{@link io.scythe.txn.rcc.RccLockingTxn}, {@link io.scythe.txn.rcc.RccLockService},
 *       {@link io.scythe.txn.rcc.RccRpc}: the stages of the protocols on one lock word (NOWAIT, WAITDIE, OCC),
 *       one-sided and by RPC, and their memory-node handlers.</li>
 * </ul>
 *
 * <p><b>Status</b>: NOWAIT, WAITDIE and OCC (DrTM+H's) are built in every form. MVCC, SUNDIAL and CALVIN are
 * registered and refuse to run, naming the issue (MVCC and SUNDIAL need the multi-version objects of
 * {@code io.scythe.storage.mv} wired into memory nodes, catalogs and workloads, which no protocol has done yet). Not built for any protocol yet: RCC's coordinator log replicated to backups
 * (so the Log digit of a code changes nothing), redo and recovery (a compute node that dies holding RCC locks leaves
 * them held), the hybrid enumerator ({@code hybrid=auto}), and the per-stage breakdown beyond the shared stages.
 */
package io.scythe.txn.rcc;
