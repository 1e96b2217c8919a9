/**
 * SELCC ("Cache Coherence Over Disaggregated Memory", papers/selcc.txt; issue 21): shared-exclusive latches over
 * one-sided RDMA whose latch word is also the ownership directory, and the SEL baseline (the same latches released
 * eagerly, no cache).
 *
 * <p><b>Storage format.</b>
 * <ul>
 *   <li>A <b>global cache line</b> (GCL, {@link io.scythe.txn.selcc.GclDescriptor}) is {@code lineBytes} (default
 *       2 KB, configurable, 8-byte aligned): the 8-byte latch word, a 16-byte header (dirty bounds
 *       {@code d_lower}/{@code d_higher}, a per-line write counter), then the data.</li>
 *   <li>The <b>latch word</b> ({@link io.scythe.txn.selcc.LatchWord}): the exclusive holder in the top 6 bits,
 *       a 58-bit reader bitmap below; participants 1..58 (more are refused with a clear error), signed FAA deltas
 *       that wrap inside the holder field and never borrow from the bitmap.</li>
 *   <li>A <b>global pointer</b> ({@link io.scythe.txn.selcc.GlobalPointer}) is 8 bytes: memory node (16 bits),
 *       offset in its GCL region (48 bits).</li>
 *   <li><b>Table objects as lines</b> (what the transactions run on): every object of a table
 *       ({@code io.scythe.storage.ObjectLayout}) is one line, its latch word the header's protocol word (offset 48,
 *       declared as {@code selcc_latch}), its data the whole slot, its write counter the header's version word
 *       (old + 1 per write, so history v2 orders the writes of an object).</li>
 * </ul>
 *
 * <p><b>Participants.</b> A participant (the paper's compute node, one bit of the bitmap) is one event loop of a
 * compute node: each loop keeps its own latch table (its transaction flows are the paper's threads, its local
 * shared-exclusive latch needs no atomics), so at most 58 loops in the whole cluster take part. A loop's number is
 * read from its transaction ids ({@link io.scythe.txn.selcc.Participants}).
 *
 * <p><b>Verbs.</b> Acquire X: CAS {@code 0 -> (p, 0)} with the READ of the line in one doorbell; acquire S: FAA
 * {@code +bit(p)} with the READ, undone by FAA {@code -bit(p)} when an exclusive holder shows; upgrade S to X: CAS
 * {@code (0, bit(p)) -> (p, 0)}, with the fallback (FAA {@code -bit(p)}, then the X acquire, the data re-read and
 * checked). Release X: the dirty WRITEs first, then FAA {@code -(p, 0)} on the same QP; release S: FAA
 * {@code -bit(p)}.
 *
 * <p><b>Not implemented yet (issue 21)</b>, each failing with a clear error naming the issue: the compute-node cache
 * with lazy release, invalidation messages, handover and forwarding, batched eviction, fairness, the GCL region
 * allocator and B-link tree, TO and OCC, recovery of a dead participant's bits.
 */
package io.scythe.txn.selcc;
