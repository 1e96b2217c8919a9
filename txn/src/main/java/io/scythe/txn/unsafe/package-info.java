/**
 * <b>UNSAFE, for testing the history checker only.</b> {@link io.scythe.txn.unsafe.UnsafeTxn} is the one-sided
 * transaction with its concurrency control taken out: no locks, no validation, blind write-back. It loses updates and
 * breaks every invariant under contention; it exists so that the serializability checker can be shown to catch real
 * anomalies on the same workload that every real protocol passes. It is registered as {@code unsafe}
 * ({@link io.scythe.txn.Protocol#UNSAFE}) but in no default protocol list.
 */
package io.scythe.txn.unsafe;
