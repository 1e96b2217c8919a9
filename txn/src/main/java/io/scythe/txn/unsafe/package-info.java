/**
 * <b>UNSAFE, for testing the history checker only.</b> {@link io.scythe.txn.unsafe.UnsafeTxn} is the one-sided
 * transaction with its concurrency control taken out: no locks, no validation, blind write-back. It loses updates and
 * breaks every invariant under contention; it exists so that the serializability checker can be shown to catch real
 * anomalies on the same workload that every real protocol passes. Its module ({@link
 * io.scythe.txn.unsafe.UnsafeModule}) registers {@code unsafe}, in no default protocol list (only by name).
 *
 * <p><b>Metadata</b>: none of its own. It reads the object header's version, value length, flags and incarnation
 * (shared words of {@code ObjectLayout}) and ignores every lock word. <b>Verbs</b>: a READ of the whole object per
 * key; at commit a TSO timestamp, then per memory node one doorbell of WRITEs (value, length, version). No redo
 * record (no lock kind), no memory-node service, no recovery step.
 */
package io.scythe.txn.unsafe;
