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
 * <p><b>Protocols</b> ({@link io.scythe.txn.selcc.SelccModule}, unlisted: asked for by name).
 * <ul>
 *   <li>{@code sel-2pl} ({@link io.scythe.txn.selcc.Sel2plTxn}): the SEL baseline, 2PL no-wait on latches released
 *       eagerly. Acquire X: CAS {@code 0 -> (p, 0)} with the READ of the line in one doorbell; acquire S: FAA
 *       {@code +bit(p)} with the READ, undone by FAA {@code -bit(p)} when an exclusive holder shows; upgrade S to X:
 *       CAS {@code (0, bit(p)) -> (p, 0)}, with the fallback (FAA {@code -bit(p)}, CAS, header READ in one doorbell,
 *       the version still the one read). Release at commit: the WRITEs first, then FAA {@code -(p, 0)} or
 *       {@code -bit(p)} on the same QP. A loop's flows share its reader bit ({@link io.scythe.txn.selcc.LocalLatches}).</li>
 *   <li>{@code selcc-2pl} ({@link io.scythe.txn.selcc.SelccTxn} on {@link io.scythe.txn.selcc.LineCache}): the
 *       same verbs, but the global latch is kept after the commit (memo M/S in the loop's cache) and released lazily:
 *       on an invalidation from another participant (PeerRd / PeerWr over {@code CnPeers},
 *       {@link io.scythe.txn.selcc.Invalidation}: try-lock handlers, drop conditions, outdated messages discarded,
 *       handover cases 1-3 with the copy and its dirty bounds forwarded in the reply, the case-2 flush; a frame in
 *       use remembers the messages of senders that hold nothing else and serves the highest-priority one, priority
 *       N_r + 1, as soon as its local transactions let go, else answers dropped after {@code deferNs}; a reader
 *       that saw a writer's retried PeerWr makes its own next global reads of that line wait in proportion to the
 *       writer's priority, the reader spin flag, {@link io.scythe.txn.selcc.ReaderSpin}), on LRU
 *       eviction (batched per memory node, not waited for, dirty range only), at the end of an idle lease, or when
 *       the fairness lease γ runs out. Transactions hold the frames' local latches; commits write into the frames.</li>
 * </ul>
 *
 * <p><b>Configuration</b> (system properties read when a loop's cache is made): {@code scythe.selcc.cacheFrames},
 * {@code evictBatch}, {@code leaseNs}, {@code gamma}, {@code rounds}, {@code resendNs}, {@code deferNs},
 * {@code spinNs}, {@code stats} (counts by cause, virtual time per acquisition kind, commits per participant,
 * printed at exit); defaults in
 * {@link io.scythe.txn.selcc.SelccModule}.
 *
 * <p><b>Not implemented yet (issue 21)</b>, each failing with a clear error naming the issue or simply absent:
 * inserts and deletes (the line allocator), the GCL region on memory nodes with Allocate/Free and the B-link tree, TO
 * and OCC, priority matching (here a global acquisition takes the local latch in the same step, so a starved
 * writer's M copy is in use, and not handed to readers, until its transaction is done), the early reply of a case-1
 * handover before its FAA landed (the reply waits for it: a transient holder field would name a wrong participant),
 * forwarding by one-sided WRITE into the
 * requester's registered buffer (the copy rides in the RRPC reply, so a line must fit a reply), the per-QP eviction
 * rings (a Java doorbell keeps its frames' images alive instead), participants in cluster mode (refused: the
 * simulator numbers loops), redo logging and the recovery of a dead participant's bits and dirty lines (a dead
 * compute node's latches stay set), GAM's micro-benchmark ({@code bench --workload gcl}).
 */
package io.scythe.txn.selcc;
