/**
 * Multi-version storage on memory nodes, for the timestamp-ordering protocols (Aurogon, RCC's MVCC and SUNDIAL): per
 * object a read timestamp, versions with write timestamps, pending ("pre-attached") versions, install ordered by
 * timestamp, commit, rollback, and reclamation below a horizon. Substrate: it knows no protocol's words, and compute
 * nodes (CNs) reach it one-sided or by RPC, mixed per operation as RCC's hybrids do.
 *
 * <h2>Layout</h2>
 *
 * An object ({@link io.scythe.storage.mv.MvObjectDescriptor}, byte by byte there) is one contiguous record that one
 * READ fetches whole:
 * <pre>
 *  +-----+-------+-----+--------------------+-----+--------------------+-------------+----------+
 *  | rts | latch | key | slot 0             | ... | slot K-1           | overflowWts | overflow |
 *  +-----+-------+-----+--------------------+-----+--------------------+-------------+----------+
 *                      | S|wts | owner | len | value ... | tail |      (MvSlotDescriptor)
 *                                                                         |
 *            LogDB version log (VersionLayout records, newest first) <----+  version | older | len | value
 * </pre>
 * K inline slots (2 to 16, default 4) each hold one version: a head word with its state (EMPTY, PENDING, COMMITTED,
 * ABORTED) and write timestamp, the installing transaction, the value, and a tail word that repeats the committed
 * head. Versions older than the K newest move to an overflow chain of {@link io.scythe.storage.VersionLog} records
 * (LogDB's {@link io.scythe.storage.VersionLayout}) when an install needs the slot. {@code rts} is the largest
 * timestamp any read was made at; {@code latch} serialises installers.
 *
 * <h2>Why this layout</h2>
 *
 * <ul>
 *   <li><b>Inline slots, not Aurogon's list.</b> Aurogon (§4.1) keeps a linked list of versions sorted by wts, each
 *       with rts and a PENDING/COMMITTED status, and its participants' CPUs walk it. On disaggregated memory a CN walks
 *       it one-sided, one dependent READ per version; RCC (§4.4) says exactly this and keeps four fixed slots in the
 *       record instead, so one READ brings every recent version. We keep RCC's slots but give each Aurogon's status,
 *       so several pending versions can sit among committed ones in timestamp order (Aurogon §4.1's install, Fig. 4's
 *       straggler installing below a pending version) and a pre-attached write is a pending slot with no value yet
 *       (§4.3), filled at commit.</li>
 *   <li><b>An overflow chain, not an abort.</b> RCC aborts a read that finds no version in its four slots (4.2 % of
 *       its read aborts). Here older versions move to LogDB's version log, and a reader that needs one walks the chain
 *       (a READ per record, rare: only reads older than the K newest versions). Reclamation keeps what a reader at
 *       the horizon needs, with LogDB's rule and its {@link io.scythe.storage.HorizonBoard}.</li>
 *   <li><b>One rts per object</b>, as RCC's MVCC and SUNDIAL's lease ({@code [wts, rts]}, RCC §4.5) have it, not
 *       Aurogon's rts per version: it is one word that never moves, so a CN raises it with a CAS and an installer reads
 *       it with an FAA, both safe against the memory node recycling slots (a per-version word moves with its slot, and
 *       a CAS could land on a recycled one). Because an install must also go above every committed version (below),
 *       the only versions whose rts could refuse an install are the newest committed one and pending ones, so per
 *       object loses little: only a read parked on a pending version refuses a straggler below that version, which
 *       Aurogon would let in ({@link io.scythe.storage.mv.MvRemoteTable#peek} lets a protocol wait without claiming).</li>
 *   <li><b>A latch for installers only.</b> Installs serialise on one CAS word, held for two round trips; readers never
 *       take it, and a commit or rollback needs none (the installer alone writes its pending slot). RCC's
 *       {@code tts} write lock is held until commit and allows one pending writer: an install can ask for that
 *       ({@code exclusive}, {@link io.scythe.storage.mv.MvStatus#PENDING_EXISTS}).</li>
 * </ul>
 *
 * <h2>Rules ({@link io.scythe.storage.mv.MvObject})</h2>
 *
 * <ul>
 *   <li><b>Read at ts:</b> the live (pending or committed) version with the largest {@code wts <= ts}; if it is
 *       pending, the read reports it ({@link io.scythe.storage.mv.MvStatus#PENDING}: Aurogon waits, RCC's R2 aborts);
 *       rolled-back versions are invisible. A read that counts raises rts to ts first. Aurogon reads {@code wts < ts}:
 *       it reads at {@code ts - 1} (timestamps are unique), so its own pre-attached version at ts is not in its way.</li>
 *   <li><b>Install at ts</b> (a pending version): refused when {@code ts <= rts} (a read at or above ts already
 *       returned an older version: {@link io.scythe.storage.mv.MvStatus#TOO_LATE}) or a committed version at or above
 *       ts exists ({@link io.scythe.storage.mv.MvStatus#SUPERSEDED}: RCC's W1, Aurogon's rule against immortal writes
 *       in §4.4). Pending versions above or below ts do not refuse it.</li>
 *   <li><b>Commit</b> makes the pending version visible (with its value, if pre-attached); <b>rollback</b> removes it,
 *       and its slot is free.</li>
 *   <li><b>Moving out:</b> only the oldest live version, only when it is committed and not the newest committed one.
 *       So the chain is always older than every slot, and the newest committed version, which the install rule
 *       checks, is always inline.</li>
 *   <li><b>Reclamation below horizon h:</b> keeps the newest committed version at or below h and everything newer;
 *       frees older committed versions, inline or in the chain. Pending versions are never touched.</li>
 * </ul>
 *
 * <h2>Verbs</h2>
 *
 * <table>
 *   <caption>Each operation, one-sided ({@link io.scythe.storage.mv.MvRemoteTable}) and by RPC
 *   ({@link io.scythe.storage.mv.MvService})</caption>
 *   <tr><th>operation</th><th>one-sided, in order</th><th>round trips</th></tr>
 *   <tr><td>read</td><td>doorbell [CAS rts: guess -&gt; ts, READ object]; again with the value found while it was
 *       below ts; none when an atomic already found rts at or above ts (then a plain READ); then a READ per chain
 *       record if the chain must be searched</td><td>1 (+ retries, + chain)</td></tr>
 *   <tr><td>peek</td><td>READ object (claims nothing)</td><td>1</td></tr>
 *   <tr><td>install</td><td>doorbell [CAS latch 0 -&gt; owner, READ object]; check locally; doorbell [WRITE slot body,
 *       WRITE slot head = PENDING|ts, FAA rts 0, CAS latch owner -&gt; 0]; if that FAA found rts &gt;= ts, WRITE head =
 *       ABORTED|ts (refused). No free slot: the install goes by RPC, where the CPU moves a version out</td>
 *       <td>2 (+1 refused late)</td></tr>
 *   <tr><td>commit</td><td>doorbell [WRITE length, value, tail (pre-attached only), WRITE head = COMMITTED|ts]</td>
 *       <td>1</td></tr>
 *   <tr><td>rollback</td><td>WRITE head = ABORTED|ts</td><td>1</td></tr>
 *   <tr><td>move out, reclaim</td><td>memory node CPU only (RPC MAKE_ROOM, or its reclaimer)</td><td>-</td></tr>
 * </table>
 *
 * <h2>Why it is safe (the memory-order story)</h2>
 *
 * <ol>
 *   <li><b>Reads against installs: a Dekker pair on rts.</b> A reader raises rts (an atomic), then READs the slots. An
 *       installer publishes its pending head (WRITE), then reads rts with an FAA of 0. Atomics on one word are totally
 *       ordered: either the reader's raise comes first, and the installer's FAA sees rts &gt;= ts and withdraws, or the
 *       FAA comes first, so the pending head landed before the raise and the reader's READ, which runs after the
 *       raise, sees it. Either way no read returns a version an install at or below its timestamp then slips under.
 *       (RCC §4.4 raises rts with a CAS after its double READ; a writer that checked W1 in between slips through.)
 *       A reader that knows an atomic already found rts at or above its ts skips the raise: rts only grows.</li>
 *   <li><b>Installs against installs:</b> the latch. An installer's WRITEs land before its latch-releasing CAS (one
 *       queue pair, in order), so the next installer's READ, after its CAS won, sees them. The memory node takes the
 *       same latch for moving versions and reclaiming, so a latch holder's image of the slots does not change under
 *       it except by commits and rollbacks, each one head word.</li>
 *   <li><b>Torn values: the tail.</b> A committed slot is rewritten only by the memory node, which zeroes the tail
 *       first, then empties the head; a READ copies in address order, head first, tail last; a committed slot counts
 *       only if its tail equals its head. A reader that saw the old head and any new byte reads a tail that is 0 or
 *       another version's (a new version's timestamp is above every committed one). Pending values are never
 *       returned, so a pre-attached value is written under a PENDING head and the head flips last.</li>
 *   <li><b>Versions moving out under a reader: the trailer comes last.</b> The memory node writes the chain record,
 *       then {@code overflowWts}, then {@code overflow}, and only then zeroes the slot's tail. A reader that missed the
 *       version in its slot read the trailer afterwards and finds it in the chain, and {@code overflowWts} above its
 *       best inline version tells it to look ({@link io.scythe.storage.mv.MvObject#chainToSearch}).</li>
 *   <li><b>Reclamation against readers: the horizon.</b> A CN announces on the {@link io.scythe.storage.HorizonBoard}
 *       a bound of every timestamp it will read at, and WRITEs it before reading there; the memory node reclaims below
 *       the smallest announcement. A reader at or above the horizon stops at the first chain record at or below its
 *       timestamp, which is the kept version or newer, so it never reaches a freed record; when the kept version is
 *       inline, the whole chain is older than it and no such reader looks at the chain at all. A read below the
 *       horizon breaks the contract (a CN read then fails loudly on a chain that does not descend).</li>
 *   <li><b>Dead installers.</b> {@link io.scythe.storage.mv.MvTable#abandon}, after the CN is fenced, rolls back its
 *       pending versions (the slot's owner) and frees latches it holds.</li>
 * </ol>
 *
 * On real NICs: a READ doorbell-batched after an atomic needs {@code IBV_SEND_FENCE} (the emulated providers run a
 * doorbell strictly in order, which is what the fence buys); the memory node's CAS on {@code rts} and {@code latch}
 * must be posted as a loopback atomic, since a CPU atomic is not atomic against the NIC's on one word (the emulated
 * NIC runs the very CPU instruction); and a READ is assumed to copy in address order, as FaRM's and Motor's version
 * checks assume too.
 *
 * <h2>Cost</h2>
 *
 * An object of K slots for values of V bytes takes {@code 40 + K (32 + V)} bytes (V rounded up to 8): 328 bytes for
 * RCC's 4 slots of YCSB's 40-byte values. Deciding the visible version on an image allocates nothing and took about
 * 20 ns (4 slots) and 28 ns (8 slots) on the 2-core build machine ({@code MvLookupBench} in the tests).
 *
 * <h2>Left to the protocols</h2>
 *
 * Timestamps (2LClock, or the TSO), Aurogon's read deferral and waiting on a pending version (this package reports
 * it), the value of a pre-attached write, announcing the horizon, calling {@code abandon} from recovery, redo logging
 * and replication, deletes and inserts (a multi-version table is loaded; there are no tombstones yet), SUNDIAL's lease
 * renewal (a CAS on rts after checking the newest committed wts, which this layout supports), clock skew handling
 * (RCC advances local clocks from wts/rts seen), and wiring: a node creates an {@link io.scythe.storage.mv.MvStore}
 * beside its LogDB and registers {@link io.scythe.storage.mv.MvService} on its RPC server, and a protocol's table
 * format declares it.
 */
package io.scythe.storage.mv;
