package io.scythe.txn.recovery;

import io.scythe.bridge.Doorbell;
import io.scythe.bridge.VerbException;
import io.scythe.fabric.WcStatus;
import io.scythe.rrpc.RpcReply;
import io.scythe.storage.ObjectLayout;
import io.scythe.storage.TableDescriptor;
import io.scythe.txn.Catalog;
import io.scythe.txn.TxnRuntime;
import io.scythe.txn.spi.LockKind;
import io.scythe.txn.spi.ProtocolRegistry;
import io.vertx.core.Future;
import org.agrona.concurrent.UnsafeBuffer;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Recovers a dead compute node from a live one (Lotus §6's shape: no lock table to rebuild, the locks live in the
 * objects and the memory nodes' ticket ledgers): on every memory node it fences the dead node and lists its log
 * regions ({@link RecoveryRpc#LOG_LIST}); READs them; rolls every complete redo record forward (each entry only while
 * the object's lock is still held by that record's token, so a record whose write-back landed, or landed in part, is
 * finished and never applied twice); drops incomplete ones (nothing of theirs was written, by construction: the
 * write-back starts after the record is durable; a record withdrawn by an attempt that aborted after logging it ahead
 * is incomplete too, its INVISIBLE writes cleared before); a record of a lock kind logged before its commit version
 * ({@code LockKind#decidedByData}, Lotus: version 0, its INVISIBLE writes may have landed with it) is decided by the
 * objects it names: rolled forward at the version a copy shows, else undone ({@code LockKind#undo});
 * an incomplete Lotus record may likewise have INVISIBLE cells, which readers settle under the key's lock; then on
 * every memory node releases what the dead node held: the
 * protocol modules' steps (Scythe cancels its tickets, FORD frees its CAS words) and its locked inserts
 * ({@link RecoveryRpc#RELEASE_NODE}). Runs on a loop of the recovering
 * node, through its {@link TxnRuntime}; loop-confined.
 *
 * <p><b>Terms (issue 23).</b> A record names the memory-node configuration epoch its attempt ran in
 * ({@link RedoRecordDescriptor#EPOCH_OFFSET}), the catalog each partition's term: the epoch its primary has served
 * since ({@code MemoryNodeConfiguration#primarySince}). An entry of a record older than its partition's term is
 * settled by versions ({@link #settlePromoted}), never by the primary's lock word: a copy primary again (promoted,
 * removed, rejoined, promoted again; or a replacement memory node's copy 0 primary again) started its lock words and
 * Takeout counters afresh, so the record's ticket can be a live holder's. Such a record was finished (the failover
 * ending its term settled every commit of older epochs), so versions find it landed. Every protocol's record names the
 * epoch its attempt began in: RCC's and SELCC's are counted as decided and their epoch checked just before their
 * WRITE is posted ({@code OneSidedTxn#pointOfNoReturn}: an attempt whose configuration changed aborts there), so the
 * record's epoch is also the one applied when it went out. SELCC's records carry commit version 0, which
 * {@link #settlePromoted} cannot settle: cluster mode refuses memory-node failover for SELCC by name.
 *
 * <p><b>An attempt's verbs landing late (issue 23, review stop 40).</b> The roll-forward READs an entry's header,
 * checks the record's token is still there, then posts unconditional WRITEs (only a CAS release is conditional;
 * Lotus's release is a plain WRITE). That is safe against this attempt's own verbs (one channel per memory node: an RC
 * queue pair, or a TCP connection, executes in posting order) but not against an earlier attempt's WRITEs executing
 * after this attempt released the lock and another writer committed there (a lost update). Per provider:
 * <ul>
 *   <li>local, shm and the simulator's emulated engine: a verb is executed by the poster's engine in posting order
 *       and its completion, failed or not, is reported only after it executed or was flushed unexecuted
 *       ({@code EmulatedQueuePair#executeChecked}: a closed, revoked or errored queue pair executes nothing; the
 *       simulator's injected failure lands first, then reports); they have no transport timeout
 *       ({@code QpOptions#transportTimeoutMs}). Nothing lands after its failure was told.</li>
 *   <li>tcp: a queue pair whose peer answered nothing for the transport timeout (2.5 s) fails everything in flight
 *       with TRANSPORT_RETRY_EXCEEDED and closes its socket ({@code TcpConnection#timedOut}, {@code
 *       TcpQueuePair#connectionLost}); frames already written still reach the memory node, which executes every
 *       REQUEST frame it reads while the connection is not revoked ({@code TcpConnection#executeFrame}). The failed
 *       verb drops the channel ({@link #finishEntry}), so the next attempt opens a new connection, not ordered after
 *       the old one: {@code TcpFabricTest#shouldLetAWriteThatTimedOutLandAfterALaterWriteOnANewQueuePair} lands a
 *       timed-out WRITE over a later one of a new queue pair.</li>
 *   <li>disni (RDMA hardware): a retry-exceeded request may have executed, and a packet still in the network may
 *       execute at a responder queue pair that is not destroyed; the retry uses a new queue pair.</li>
 * </ul>
 * So a roll-forward verb failing with TRANSPORT_RETRY_EXCEEDED ({@link #mayStillLand}) fails the attempt with {@link
 * WritesInDoubtException}, once every entry in flight completed (joined, not failed fast, so no verb of the attempt
 * is left behind unseen), and the recovery duty hands the recovery over instead of retrying on this node
 * ({@code RecoveryDuty}): the memory nodes fence this node (its connections revoked: a late frame executes as REVOKED)
 * before they admit the next recoverer. Any other failure is of verbs that did not execute, and the attempt is
 * retried here as before. RCC's own RPC roll-forward applies its parts only while the token holds, so it needs
 * none of this. A live committer finishing its record after a failed write-back ({@link #finishRecord}) gives its
 * node up on any failure, which fences it the same way.
 */
public final class CnRecovery {
    /** READ size when scanning a log region. */
    private static final int SCAN_CHUNK_BYTES = 64 << 10;
    /** Chunk READs of one region in flight at once ({@link #scan}). */
    private static final int SCAN_CHUNKS_IN_FLIGHT = 2;

    private final TxnRuntime runtime;
    /** The step under way, for whoever finds a recovery stuck; written on the loop, read from anywhere. */
    private volatile String waitingFor = "its start on the recovery loop";
    /** Told each step as it starts ({@link #onStep}). */
    private java.util.function.Consumer<String> onStep = what -> { };

    /** Told what the roll-forward finds (a checker's view), or null. */
    private Observer observer;
    /** A roll-forward verb of this recovery whose execution is in doubt ({@link #mayStillLand}), or null. */
    private Throwable inDoubt;

    public CnRecovery(final TxnRuntime runtime) {
        this.runtime = runtime;
    }

    /**
     * What a recovery found in the dead node's logs, record by record: for a checker that must know which of the dead
     * node's commits recovery decided, and what versions it installed. Called on the recovery's loop.
     */
    public interface Observer {
        /**
         * A complete record of transaction {@code txnId}: rolled forward ({@code truncated} false, its entries follow
         * through {@link #entry}), or below its log's low water (its write-back and release had finished).
         */
        void record(long txnId, boolean truncated);

        /**
         * Entry {@code index} of {@code txnId}'s record: recovery installed {@code installedVersion} and released the
         * lock, or found it finished ({@code installedVersion} -1: its write-back had landed).
         */
        void entry(long txnId, int index, long installedVersion);
    }

    /**
     * Told each step of this recovery as it starts (LOG_LIST, the log READs, the roll-forward, RELEASE_NODE, with the
     * memory nodes it waits on), on the recovery's loop: the recovery duty logs them, so that a recovery that stalls
     * says where. Before {@link #recover}; does not block.
     */
    public CnRecovery onStep(final java.util.function.Consumer<String> listener) {
        this.onStep = listener;
        return this;
    }

    /** Step {@code what} starts: what this recovery waits for from now, told to {@link #onStep}'s listener. */
    private void step(final String what) {
        waitingFor = what;
        onStep.accept(what);
    }

    /** Tells {@code observer} what this recovery finds (null: nobody). Before {@link #recover}. */
    public CnRecovery observe(final Observer observer) {
        this.observer = observer;
        return this;
    }

    /** What this recovery is waiting for now (a step and the memory nodes it waits on). Any thread. */
    public String waitingFor() {
        return waitingFor;
    }

    /** What one recovery did. */
    public record Report(String deadNode, int logRegions, int committedRecords, int incompleteRecords,
                         int entriesApplied, int entriesAlreadyDone, Map<String, Integer> released,
                         int insertsAbandoned, int truncatedRecords, long nanos, long listedNanos,
                         long scannedNanos, long rolledNanos, int undoneRecords) {
        /** Locks the protocol modules' release step {@code counted} released on every memory node (0: none). */
        public int released(final String counted) {
            return released.getOrDefault(counted, 0);
        }
    }

    private record Region(String node, long address, int rkey, int bytes, long idBase) {
    }

    /**
     * Whether {@code failure} (or a cause of it) is a verb whose execution is in doubt: reported
     * {@link WcStatus#TRANSPORT_RETRY_EXCEEDED}, which on tcp (and RDMA hardware) a memory node may still execute
     * later, after verbs of a new connection (see the class doc). Every other failure status means not executed.
     */
    public static boolean mayStillLand(final Throwable failure) {
        return causedBy(failure, e -> e instanceof WritesInDoubtException
            || e instanceof VerbException v && v.status() == WcStatus.TRANSPORT_RETRY_EXCEEDED);
    }

    /**
     * Whether {@code failure} (or a cause of it) is a memory node's refusal because another live recoverer holds the
     * claim on the dead node ({@link RecoveryRpc#RECOVERY_BUSY}).
     */
    public static boolean refusedBusy(final Throwable failure) {
        return causedBy(failure, e -> e instanceof io.scythe.rrpc.RpcException r
            && r.code() == RecoveryRpc.RECOVERY_BUSY);
    }

    /** Whether {@code failure} or a cause of it matches {@code what}. */
    private static boolean causedBy(final Throwable failure, final java.util.function.Predicate<Throwable> what) {
        for (Throwable e = failure; e != null; e = e.getCause() == e ? null : e.getCause()) {
            if (what.test(e)) {
                return true;
            }
        }
        return false;
    }

    /**
     * Whether {@code failure} (or a cause of it) is a {@link WritesInDoubtException}: a roll-forward verb of the attempt
     * timed out (review, stop 40: any transport timeout, a scan READ or a LOG_LIST included, handed the duty over and
     * cost the CN its lease; one memory node stalled past the transport timeout then took CN after CN with it).
     */
    public static boolean writesInDoubt(final Throwable failure) {
        return causedBy(failure, WritesInDoubtException.class::isInstance);
    }

    /**
     * A recovery attempt that failed with a roll-forward verb whose execution is in doubt ({@link #mayStillLand}):
     * its unconditional WRITEs may still land, so this recoverer must not roll forward again (on a new connection
     * they may land after its next attempt released a lock and another writer committed there, a lost update). The
     * duty passes on: this compute node gives up its lease, the memory nodes fence it (revoking its connections, so
     * nothing of it executes any more) before they admit the next recoverer's larger claim ({@link RecoveryRpc}).
     */
    public static final class WritesInDoubtException extends IllegalStateException {
        public WritesInDoubtException(final String deadNode, final Throwable inDoubt) {
            super("recovery of " + deadNode + ": a roll-forward verb timed out and may still execute (" + inDoubt
                + "); rolling forward again before this recoverer is fenced could lose a later writer's update",
                inDoubt);
        }
    }

    private static final class Tally {
        int committed;
        int incomplete;
        int applied;
        int done;
        final Map<String, Integer> released = new LinkedHashMap<>();
        int inserts;
        int truncated;
        /** Records logged before their commit version ({@code LockKind#decidedByData}) found not committed: undone. */
        int undone;
        /** Since the start: every memory node fenced the dead node and listed its logs; logs read; rolled forward. */
        long listedNs;
        long scannedNs;
        long rolledNs;
    }

    /** Recovers {@code deadNode} under claim 0 (one recoverer only: tests, tools). */
    public Future<Report> recover(final String deadNode, final long... idPrefixes) {
        return recover(deadNode, 0, idPrefixes);
    }

    /**
     * Recovers {@code deadNode} (its fabric identity) under {@code claim} (the cluster's claim counter of this
     * recovery: a memory node refuses a second recoverer unless its claim is larger and the first is fenced, see
     * {@link RecoveryRpc}). {@code idPrefixes} are its transaction-id prefixes known to the caller (from the owed
     * entry), used to free its CAS words; those of its log regions are added.
     */
    public Future<Report> recover(final String deadNode, final long claim, final long[] idPrefixes) {
        final long start = runtime.timers().nowNs();
        final List<String> nodes = memoryNodes();
        final Tally tally = new Tally();
        final List<Future<List<Region>>> listed = new ArrayList<>();
        // The first memory node first: two recoverers racing meet there, and the refused one stops before it made
        // itself the recoverer on any other node (where each would refuse the other).
        step("LOG_LIST of " + deadNode + " on " + nodes.get(0));
        final Future<List<Region>> first = list(nodes.get(0), deadNode, claim);
        listed.add(first);
        final List<String> others = nodes.subList(1, nodes.size());
        if (!others.isEmpty()) {
            first.onSuccess(v -> step("LOG_LIST of " + deadNode + " on " + others));
        }
        for (final String node : others) {
            listed.add(first.compose(v -> list(node, deadNode, claim)));
        }
        return Future.all(listed).compose(all -> {
            tally.listedNs = runtime.timers().nowNs() - start;
            final List<Region> regions = new ArrayList<>();
            for (final Future<List<Region>> f : listed) {
                regions.addAll(f.result());
            }
            // Every region is read first: the low water of a loop's log may sit in a record of another of its
            // regions. Then the records not below it, a few at a time (their header READs must fit the send queue).
            // Memory nodes are read at once, one channel each; a node's regions one after another (the chunk READs
            // of one region fill much of a send queue). Record order does not matter: each entry applies only while
            // its lock still carries that record's token.
            final List<Record> records = new ArrayList<>();
            final Set<RecordId> seen = new java.util.HashSet<>();
            final Map<Long, Long> lowWater = new HashMap<>();
            final Map<String, Future<Void>> byNode = new LinkedHashMap<>();
            step("READs of " + regions.size() + " log regions of " + deadNode);
            for (final Region r : regions) {
                byNode.put(r.node, byNode.getOrDefault(r.node, Future.succeededFuture()).compose(v -> scan(r))
                    .map(image -> {
                        parse(r, image, records, seen, lowWater, tally);
                        return null;
                    }));
            }
            return Future.all(new ArrayList<>(byNode.values())).compose(v -> {
                tally.scannedNs = runtime.timers().nowNs() - start;
                step("the roll-forward of " + records.size() + " records of " + deadNode);
                return rollForward(records, lowWater, tally).recover(e -> Future.failedFuture(inDoubt == null ? e
                    : new WritesInDoubtException(deadNode, inDoubt)));
            }).map(regions);
        }).compose(regions -> {
            tally.rolledNs = runtime.timers().nowNs() - start;
            final Set<Long> owners = new LinkedHashSet<>();
            for (final long p : idPrefixes) {
                owners.add(p & RecoveryRpc.NODE_ID_MASK);
            }
            for (final Region r : regions) {
                owners.add(r.idBase & RecoveryRpc.NODE_ID_MASK);
            }
            final List<Future<Void>> releases = new ArrayList<>();
            step("RELEASE_NODE of " + deadNode + " on " + nodes);
            for (final String node : nodes) {
                releases.add(release(node, deadNode, claim, owners, tally));
            }
            return Future.all(releases).map(v -> new Report(deadNode, regions.size(), tally.committed,
                tally.incomplete, tally.applied, tally.done, tally.released, tally.inserts,
                tally.truncated, runtime.timers().nowNs() - start, tally.listedNs, tally.scannedNs, tally.rolledNs,
                tally.undone));
        });
    }

    private List<String> memoryNodes() {
        final Set<String> nodes = new LinkedHashSet<>();
        for (final Catalog.Table t : runtime.catalog().tables()) {
            for (final Catalog.Partition p : t.partitions()) {
                nodes.add(p.node());
                for (final Catalog.Replica b : p.backups()) {
                    nodes.add(b.node());
                }
            }
        }
        return new ArrayList<>(nodes);
    }

    private Future<List<Region>> list(final String node, final String deadNode, final long claim) {
        final byte[] name = deadNode.getBytes(StandardCharsets.UTF_8);
        final UnsafeBuffer request = new UnsafeBuffer(new byte[RecoveryRpc.LIST_REQUEST_HEADER_BYTES + name.length]);
        request.putLong(0, claim);
        request.putBytes(RecoveryRpc.LIST_REQUEST_HEADER_BYTES, name);
        return runtime.rocket(node).compose(r -> r.call(RecoveryRpc.LOG_LIST, request)).map((RpcReply reply) -> {
            final UnsafeBuffer p = reply.payload();
            final int count = p.getInt(0);
            final List<Region> regions = new ArrayList<>(count);
            for (int i = 0; i < count; i++) {
                final int at = RecoveryRpc.LIST_HEADER_BYTES + i * RecoveryRpc.LIST_ENTRY_BYTES;
                regions.add(new Region(node, p.getLong(at), p.getInt(at + 8), p.getInt(at + 12),
                    p.getLong(at + 16)));
            }
            return regions;
        });
    }

    /**
     * READs a whole log region, in chunks, at most {@link #SCAN_CHUNKS_IN_FLIGHT} at a time. All sixteen chunks of a
     * 1 MB region posted at once put 1 MB in front of every other response the memory node's port sends (the cost
     * model books a port per request, first come first served, where a real NIC interleaves queue pairs packet by
     * packet): in the simulator the survivors' clients stopped committing for the whole scan of three dead nodes'
     * regions (Lotus Fig. 15's run, `--on-abort new`: no commit from 0.5 to 3.3 ms after the crash, though most of
     * their transactions touched no dead node's shard). Two in flight keep the READs pipelined (a chunk's 5 us on the
     * wire against a round trip of a few) and let the others' responses in between.
     */
    private Future<UnsafeBuffer> scan(final Region r) {
        final UnsafeBuffer image = new UnsafeBuffer(new byte[r.bytes]);
        return runtime.channel(r.node).compose(ch -> {
            final List<Future<Void>> lanes = new ArrayList<>();
            for (int lane = 0; lane < SCAN_CHUNKS_IN_FLIGHT; lane++) {
                lanes.add(scanFrom(ch, r, image, lane * SCAN_CHUNK_BYTES));
            }
            return Future.all(lanes);
        }).map(image);
    }

    /** READs the chunks of {@code r} at {@code at}, then every {@link #SCAN_CHUNKS_IN_FLIGHT}-th after it, in turn. */
    private Future<Void> scanFrom(final io.scythe.bridge.RdmaChannel ch, final Region r, final UnsafeBuffer image,
                                  final int at) {
        if (at >= r.bytes) {
            return Future.succeededFuture();
        }
        return ch.read(r.address + at, r.rkey, image, at, Math.min(SCAN_CHUNK_BYTES, r.bytes - at))
            .compose(v -> scanFrom(ch, r, image, at + SCAN_CHUNKS_IN_FLIGHT * SCAN_CHUNK_BYTES));
    }

    /** Records rolled forward at once: their header READs must fit the send queue beside the loop's own traffic. */
    private static final int RECORDS_IN_FLIGHT = 16;

    /** A complete record at {@code offset} of a region's {@code image}. */
    private record Record(UnsafeBuffer image, int offset, long idBase, long lsn) {
    }

    /** A record of one loop: copies of it (replication writes one per replica of its log) share it. */
    private record RecordId(long idBase, long lsn) {
    }

    /**
     * Finds the complete records of one region and raises its loop's low water to the largest they carry. A record
     * whose copy on another memory node was found already is skipped: with replication every record is written to
     * each replica of its log, and rolling two copies forward at once would release one lock twice. One complete
     * copy is enough to roll it forward: its write-back had not begun unless every copy was durable, so its locks are
     * still held by its token, and finishing it is as good as aborting it for a commit nobody was told of.
     */
    private static void parse(final Region r, final UnsafeBuffer image, final List<Record> records,
                              final Set<RecordId> seen, final Map<Long, Long> lowWater, final Tally tally) {
        int at = 0;
        while (at < image.capacity()) {
            // A record of another format is refused before anything is applied (never misread as this layout).
            RedoRecordDescriptor.checkFormat(image, at, image.capacity() - at, "at offset " + at + " of log region "
                + r.address + " on " + r.node + " (id base " + Long.toHexString(r.idBase) + ")");
            final int length = RedoRecordDescriptor.completeLength(image, at, image.capacity() - at);
            if (length < 0) {
                if (image.getInt(at) == RedoRecordDescriptor.MAGIC) {
                    tally.incomplete++;
                }
                at += RedoRecordDescriptor.SLOT_BYTES;
                continue;
            }
            final long lsn = image.getLong(at + RedoRecordDescriptor.LSN_OFFSET);
            if (seen.add(new RecordId(r.idBase, lsn))) {
                tally.committed++;
                records.add(new Record(image, at, r.idBase, lsn));
            }
            lowWater.merge(r.idBase, image.getLong(at + RedoRecordDescriptor.LOW_WATER_OFFSET), Math::max);
            at += (length + RedoRecordDescriptor.SLOT_BYTES - 1) / RedoRecordDescriptor.SLOT_BYTES
                * RedoRecordDescriptor.SLOT_BYTES;
        }
    }

    private Future<Void> rollForward(final List<Record> all, final Map<Long, Long> lowWater, final Tally tally) {
        final List<Record> records = new ArrayList<>();
        for (final Record r : all) {
            if (r.lsn >= lowWater.getOrDefault(r.idBase, 0L)) {
                records.add(r);
            } else {
                tally.truncated++; // finished before a later record was written: nothing to check
                if (observer != null) {
                    observer.record(r.image.getLong(r.offset + RedoRecordDescriptor.TXN_ID_OFFSET), true);
                }
            }
        }
        Future<Void> applied = Future.succeededFuture();
        for (int from = 0; from < records.size(); from += RECORDS_IN_FLIGHT) {
            final List<Record> batch = records.subList(from, Math.min(records.size(), from + RECORDS_IN_FLIGHT));
            applied = applied.compose(v -> {
                final List<Future<Void>> inFlight = new ArrayList<>(batch.size());
                for (final Record record : batch) {
                    inFlight.add(applyRecord(record.image, record.offset, tally));
                }
                return Future.join(inFlight).mapEmpty(); // all done before a failure is told: nothing left in flight
            });
        }
        return applied;
    }

    /**
     * Finishes a decided commit of this (live) loop from its own sealed {@code record}, entry by entry as a recovery
     * rolls a dead node's record forward (so on the copies serving now: after a failover, a promoted copy is settled
     * by versions). Idempotent; the committer must still hold the locks the record names on primaries that serve.
     */
    public Future<Void> finishRecord(final UnsafeBuffer record) {
        return applyRecord(record, 0, new Tally());
    }

    /** One entry of a redo record, as {@link #applyRecord} reads it. */
    private record Entry(String node, int tableId, int op, int writtenPrimary, long pointer, long token,
                         UnsafeBuffer value, long[] backupPointers) {
    }

    private Future<Void> applyRecord(final UnsafeBuffer image, final int record, final Tally tally) {
        final long version = image.getLong(record + RedoRecordDescriptor.VERSION_OFFSET);
        final int count = RedoRecordDescriptor.countOf(image, record);
        final int lockKind = RedoRecordDescriptor.lockKindOf(image, record);
        final long epoch = RedoRecordDescriptor.epochOf(image, record);
        final long txnId = image.getLong(record + RedoRecordDescriptor.TXN_ID_OFFSET);
        final List<Entry> parsed = new ArrayList<>(count);
        int at = record + RedoRecordDescriptor.HEADER_BYTES;
        for (int i = 0; i < count; i++) {
            final int nodeBytes = image.getShort(at + RedoRecordDescriptor.ENTRY_NODE_LENGTH_OFFSET) & 0xffff;
            final int valueBytes = image.getInt(at + RedoRecordDescriptor.ENTRY_VALUE_LENGTH_OFFSET);
            final int opAndBackups = image.getShort(at + RedoRecordDescriptor.ENTRY_OP_OFFSET) & 0xffff;
            final int backups = RedoRecordDescriptor.backupsOf(opAndBackups);
            final byte[] name = new byte[nodeBytes];
            image.getBytes(at + RedoRecordDescriptor.ENTRY_FIXED_BYTES, name);
            final UnsafeBuffer value = new UnsafeBuffer(new byte[valueBytes]);
            image.getBytes(at + RedoRecordDescriptor.ENTRY_FIXED_BYTES + nodeBytes, value, 0, valueBytes);
            final long[] backupPointers = new long[backups];
            final int pointersAt = at + RedoRecordDescriptor.backupPointersOffset(nodeBytes, valueBytes);
            for (int b = 0; b < backups; b++) {
                backupPointers[b] = image.getLong(pointersAt + b * Long.BYTES);
            }
            parsed.add(new Entry(new String(name, StandardCharsets.UTF_8),
                image.getInt(at + RedoRecordDescriptor.ENTRY_TABLE_OFFSET), RedoRecordDescriptor.opOf(opAndBackups),
                RedoRecordDescriptor.primaryCopyOf(opAndBackups),
                image.getLong(at + RedoRecordDescriptor.ENTRY_POINTER_OFFSET),
                image.getLong(at + RedoRecordDescriptor.ENTRY_TOKEN_OFFSET), value, backupPointers));
            at += RedoRecordDescriptor.entryBytes(nodeBytes, valueBytes, backups);
        }
        final LockKind kind = ProtocolRegistry.lockKind(lockKind);
        if (version != 0 || kind == null || !kind.decidedByData()) {
            return applyEntries(parsed, txnId, lockKind, version, epoch, tally);
        }
        // Logged before its commit version existed (Lotus, lotus.md §2.7): committed only if some copy of an object
        // it names shows a version it made visible; then rolled forward at that version, else undone.
        waitingFor = "the commit version of " + Long.toHexString(txnId) + "'s record";
        final List<Future<Long>> found = new ArrayList<>(count);
        for (final Entry e : parsed) {
            final Catalog.Serving serving = runtime.catalog().servingOf(e.node, e.tableId);
            if (serving == null) {
                return Future.failedFuture(new IllegalStateException("redo record names table " + e.tableId
                    + " on " + e.node + ", which the catalog does not know"));
            }
            found.add(kind.committedVersion(runtime, serving.partition(),
                serving.servingPointers(e.pointer, e.backupPointers), e.op, e.token));
        }
        return Future.all(found).compose(v -> {
            long committed = 0;
            for (final Future<Long> f : found) {
                committed = LockKind.earlierFound(committed, f.result());
            }
            if (committed > 0) {
                return applyEntries(parsed, txnId, lockKind, committed, epoch, tally);
            }
            tally.undone++;
            final List<Future<Void>> undone = new ArrayList<>(count);
            for (final Entry e : parsed) {
                final Catalog.Serving serving = runtime.catalog().servingOf(e.node, e.tableId);
                undone.add(kind.undo(runtime, serving.partition(),
                    serving.servingPointers(e.pointer, e.backupPointers)).onFailure(f -> {
                        if (inDoubt == null && mayStillLand(f)) {
                            inDoubt = f; // a clearing WRITE that may still land: handed over, as an entry's
                        }
                    }));
            }
            return Future.join(undone).mapEmpty();
        });
    }

    /** Rolls {@code parsed}, the entries of {@code txnId}'s record, forward at commit {@code version}. */
    private Future<Void> applyEntries(final List<Entry> parsed, final long txnId, final int lockKind,
                                      final long version, final long epoch, final Tally tally) {
        if (observer != null) {
            observer.record(txnId, false);
        }
        final LockKind kind = ProtocolRegistry.lockKind(lockKind);
        final List<Future<Void>> entries = new ArrayList<>(parsed.size());
        for (int i = 0; i < parsed.size(); i++) {
            final Entry e = parsed.get(i);
            entries.add(applyEntry(e.node, e.tableId, e.op, e.writtenPrimary, e.pointer,
                kind == null ? e.token : kind.token(e.token, version), lockKind, version, e.value, e.backupPointers,
                tally, txnId, i, epoch).onFailure(f -> {
                    if (inDoubt == null && mayStillLand(f)) {
                        inDoubt = f;
                    }
                }));
        }
        return Future.join(entries).mapEmpty();
    }

    /**
     * Applies one entry as the write-back would have, if its lock is still held by {@code token} (see
     * {@link #finishEntry}).
     */
    private Future<Void> applyEntry(final String node, final int tableId, final int op, final int writtenPrimary,
                                    final long pointer,
                                    final long token, final int lockKind, final long version,
                                    final UnsafeBuffer value, final long[] backupPointers, final Tally tally,
                                    final long txnId, final int index, final long epoch) {
        final Catalog.Serving serving = runtime.catalog().servingOf(node, tableId);
        if (serving == null) {
            return Future.failedFuture(new IllegalStateException("redo record names table " + tableId + " on "
                + node + ", which the catalog does not know"));
        }
        if (backupPointers.length != serving.loadedBackups()) {
            return Future.failedFuture(new IllegalStateException("redo record names " + backupPointers.length
                + " backups of table " + tableId + " on " + node + ", the catalog " + serving.loadedBackups()));
        }
        final LockKind kind = ProtocolRegistry.lockKind(lockKind);
        if (kind == null) {
            return Future.failedFuture(new IllegalStateException("redo record names lock kind " + lockKind
                + ", which no registered protocol module has"));
        }
        final Catalog.Partition partition = serving.partition();
        if (epoch < serving.primarySince()) {
            // Written in an earlier term of this partition's primaries (issue 23): the primary now began serving
            // after the record's configuration, with lock words and Takeout counters started afresh, even when it is
            // the copy the op word names (a copy primary twice: promoted, removed, rejoined, promoted again; or copy
            // 0 primary again after its replacement rejoined). Its lock word says nothing of the record (the old
            // ticket can be a live holder's), so versions decide, as for a record of another primary. A record of an
            // earlier term is finished: the failover that ended its term settled every commit of older epochs.
            return settlePromoted(serving, kind, op, token, version, value,
                serving.servingPointers(pointer, backupPointers))
                .map(installed -> counted(installed, tally, txnId, index));
        }
        if (serving.primaryCopy() != 0) {
            // Its primary failed over. A record written under another primary (before the failover): the promoted
            // copy was a backup, which has no lock word, so versions say whether the write-back landed there
            // (settlePromoted); its lock word must not be read as the record's, since a promoted copy's Takeout
            // counters start from 0 and the old record's ticket can be a live holder's now. One written under this
            // copy as the primary (the op word names it): its lock held by the record's token says the write-back did
            // not finish, as on a primary that never failed over.
            // The op word names the copy; the record's epoch (checked above) its term as primary.
            final long[] copies = serving.servingPointers(pointer, backupPointers);
            if (writtenPrimary != serving.primaryCopy() || kind.settlesPromoted()) {
                // A kind settling promoted copies itself (Lotus: locks on compute nodes, no lock word on the copy to
                // ask) does so for a record written under this copy as the primary too.
                return settlePromoted(serving, kind, op, token, version, value, copies)
                    .map(installed -> counted(installed, tally, txnId, index));
            }
            final long[] backups = java.util.Arrays.copyOfRange(copies, 1, copies.length);
            return finish(runtime, partition, op, copies[0], token, kind, version, value, value.capacity(), backups,
                true).map(installed -> counted(installed, tally, txnId, index));
        }
        final long[] servingPointers = serving.servingBackupPointers(backupPointers);
        final Future<Long> finished = finish(runtime, partition, op, pointer, token, kind, version, value,
            value.capacity(), servingPointers, false);
        // A protocol keeping versions beside the header (Lotus's CVT) makes them agree with it, still under the lock.
        return (kind.versionsBesideHeader() ? finished.compose(installed -> kind.recovered(runtime, partition,
                pointer, servingPointers, token, version).map(installed)) : finished)
            .map(installed -> counted(installed, tally, txnId, index));
    }

    /** Counts one finished entry ({@code installed}: the version written now, -1 if it had landed). */
    private Void counted(final long installed, final Tally tally, final long txnId, final int index) {
        if (observer != null) {
            observer.entry(txnId, index, installed);
        }
        if (installed >= 0) {
            tally.applied++;
        } else {
            tally.done++;
        }
        return null;
    }

    /**
     * Finishes one entry of a decided commit as its write-back would have (value, length, flags, version, then the
     * release, in one doorbell on one QP), but only while the object's lock is still held by {@code token}:
     * otherwise the write-back and release of this entry landed already, and others may have written since. So it is
     * idempotent, for recovery and for a live committer whose write-back failed. {@code op} 0 is a lock held and not
     * written (a TOCC read): only released. A failed verb drops the channel (its queue pair may be broken).
     *
     * <p>With backups ({@code backupPointers}, in the order of {@code partition}'s backups), the copies are written
     * first, each with one doorbell, and the primary's batch with the release only once they all completed: the order
     * of the write-back itself ({@code onesided.Replicas}). While the primary's lock is held nobody else writes the
     * copies, so writing them again is harmless; once it is released, they were written.
     *
     * @param valueLength bytes of {@code value}: the new value of an {@link RedoRecordDescriptor#OP_VALUE} entry, or
     *                    of an inserted object's, which only its backups get (the INSERT filled the primary)
     * @return whether it applied the entry (false: found finished)
     */
    public static Future<Boolean> finishEntry(final TxnRuntime runtime, final Catalog.Partition partition,
                                              final int op, final long pointer, final long token,
                                              final LockKind lockKind, final long version,
                                              final org.agrona.DirectBuffer value, final int valueLength,
                                              final long[] backupPointers) {
        return finish(runtime, partition, op, pointer, token, lockKind, version, value, valueLength, backupPointers,
            false).map(installed -> installed >= 0);
    }

    /**
     * {@link #finishEntry}, telling the version it installed (-1: found finished). {@code locked}: the lock must also
     * be taken ({@link LockKind#free} false), not only carry the token: on a promoted copy, whose lock words started
     * from nothing, a free Takeout Lock at the token's ticket was never taken by the record.
     */
    private static Future<Long> finish(final TxnRuntime runtime, final Catalog.Partition partition, final int op,
                                       final long pointer, final long token, final LockKind lockKind,
                                       final long version, final org.agrona.DirectBuffer value,
                                       final int valueLength, final long[] backupPointers, final boolean locked) {
        final String node = partition.node();
        final TableDescriptor table = partition.descriptor();
        final long address = ObjectLayout.addressOf(pointer);
        final int rkey = table.objects().rkey();
        final UnsafeBuffer header = new UnsafeBuffer(new byte[ObjectLayout.HEADER_BYTES]);
        return runtime.channel(node).compose(ch -> ch.read(address, rkey, header, 0, ObjectLayout.HEADER_BYTES)
            .compose(v -> {
                final boolean sameObject = (header.getShort(ObjectLayout.INCARNATION_OFFSET) & 0xffff)
                    == ObjectLayout.incarnationOf(pointer);
                final boolean held = lockKind.heldBy(header, token) && !(locked && lockKind.free(header));
                if (!sameObject || !held) {
                    return Future.succeededFuture(-1L);
                }
                // What the write-back installs: the lock held since the attempt read the object kept current its
                // version then (ObjectLayout#versionAfter).
                final long installedVersion = ObjectLayout.versionAfter(version,
                    header.getLong(ObjectLayout.VERSION_OFFSET) & ~ObjectLayout.VERSION_BUSY);
                final java.util.function.Supplier<Future<?>> primary = () -> lockKind.finishesPrimary()
                    ? lockKind.finishPrimary(runtime, partition, pointer, op, token, installedVersion, version,
                    value, valueLength, backupPointers)
                    : finishPrimary(ch, address, rkey, op, token, lockKind, installedVersion, value, valueLength);
                if (op != 0 && backupPointers != null && backupPointers.length > 0) {
                    return finishBackups(runtime, partition.backups(), backupPointers, op, installedVersion, value,
                        valueLength).compose(done -> primary.get()).map(installedVersion);
                }
                return primary.get().map(installedVersion);
            }).onFailure(e -> {
                if (!io.scythe.txn.Refusal.forNow(e)) {
                    runtime.forgetChannel(node, ch);
                }
            }));
    }

    /**
     * Settles one entry of a decided commit whose primary failed over (FaRM's recovery of a promoted region): on the
     * promoted copy and each serving backup, versions decide whether its write-back landed. While the primary's lock
     * was held (a write-back in flight) nobody else wrote the copies, and once released every copy had the commit;
     * so a copy's version is either the one before this commit or at least its commit version ({@code versionAfter}
     * installs at least {@code version}), and a copy below {@code version} is written as the backup write-back would
     * (value, flags, then the version {@code versionAfter(version, its version)}: the same on every copy that missed
     * it). The copies are blocked meanwhile ({@code Catalog#blocked}) and the committer fenced, so nothing else
     * writes them; settling again finds every copy at or above {@code version} and applies nothing (exactly once).
     * This needs a commit version above the version under the lock (a timestamp taken after the locks, or FORD's
     * read version + 1); a protocol whose records carry version 0 cannot be settled so, and is refused. What the lock
     * kind keeps beside the header (Motor's CVT cells) is settled after each copy's home ({@link LockKind#settleCopy});
     * a kind that settles promoted copies itself ({@link LockKind#settlesPromoted}: Lotus) does it all instead.
     *
     * @param servingPointers where the object is on each serving copy, primary first
     *                        ({@link Catalog.Serving#servingPointers}; 0: a copy that joined after the record)
     * @return the version installed, or -1 when every copy had it (or the entry wrote nothing: a lock only)
     */
    private Future<Long> settlePromoted(final Catalog.Serving serving, final LockKind kind, final int op,
                                        final long token, final long version, final UnsafeBuffer value,
                                        final long[] servingPointers) {
        if (op == 0) {
            return Future.succeededFuture(-1L); // a lock held, nothing written: the promoted copy has no lock
        }
        if (version <= 0) {
            return Future.failedFuture(new IllegalStateException("redo record of commit version " + version
                + " names a partition whose primary failed over: without a commit version above the one under the "
                + "lock, versions cannot tell whether its write-back landed on the promoted copy"));
        }
        final Catalog.Partition partition = serving.partition();
        final List<Catalog.Replica> copies = new ArrayList<>();
        copies.add(new Catalog.Replica(partition.node(), partition.descriptor()));
        copies.addAll(partition.backups());
        if (kind.settlesPromoted()) {
            return kind.settlePromoted(runtime, copies, servingPointers, op, token, version, value, value.capacity());
        }
        final List<Future<Long>> settled = new ArrayList<>(copies.size());
        for (int i = 0; i < copies.size(); i++) {
            if (servingPointers[i] != 0) { // 0: a copy that did not serve when the record was written
                final Catalog.Replica copy = copies.get(i);
                final long pointer = servingPointers[i];
                settled.add(settleCopy(runtime, copy, pointer, op, version, value).compose(installed -> kind
                    .settleCopy(runtime, copy, pointer, op, version, value, value.capacity()).map(installed)));
            }
        }
        return Future.join(settled).transform(ar -> { // every copy's verbs ended, an in-doubt one preferred (review)
            if (ar.failed()) {
                for (final Future<Long> f : settled) {
                    if (f.failed() && mayStillLand(f.cause())) {
                        return Future.failedFuture(f.cause());
                    }
                }
                return Future.failedFuture(ar.cause());
            }
            long installed = -1;
            for (final Future<Long> f : settled) {
                installed = Math.max(installed, f.result());
            }
            return Future.succeededFuture(installed);
        });
    }

    /** {@link #settlePromoted} on one copy: its header READ, then the entry's writes if its version is below. */
    private static Future<Long> settleCopy(final TxnRuntime runtime, final Catalog.Replica copy, final long pointer,
                                           final int op, final long version, final UnsafeBuffer value) {
        final long address = ObjectLayout.addressOf(pointer);
        final int rkey = copy.descriptor().objects().rkey();
        final UnsafeBuffer header = new UnsafeBuffer(new byte[ObjectLayout.HEADER_BYTES]);
        return runtime.channel(copy.node()).compose(ch -> ch.read(address, rkey, header, 0, ObjectLayout.HEADER_BYTES)
            .compose(v -> {
                if ((header.getShort(ObjectLayout.INCARNATION_OFFSET) & 0xffff) != ObjectLayout.incarnationOf(pointer)) {
                    return Future.failedFuture(new IllegalStateException("redo record names an object of "
                        + copy.descriptor().schema().name() + " on " + copy.node() + " whose slot was reused: a "
                        + "backup copy's slot is freed only after its commit settled"));
                }
                final long current = header.getLong(ObjectLayout.VERSION_OFFSET) & ~ObjectLayout.VERSION_BUSY;
                if (current >= version) {
                    return Future.succeededFuture(-1L); // landed (or a later commit did, after this one's release)
                }
                final long installed = ObjectLayout.versionAfter(version, current);
                final Doorbell batch = ch.doorbell();
                addEntryWrites(batch, address, rkey, op, true, installed, value, value.capacity());
                return batch.post().map(installed);
            }).onFailure(e -> {
                if (!io.scythe.txn.Refusal.forNow(e)) {
                    runtime.forgetChannel(copy.node(), ch);
                }
            }));
    }

    /**
     * What the write-back writes for one entry on one copy: value and length ({@link RedoRecordDescriptor#OP_VALUE};
     * on a backup also an inserted object's value, which its placeholder lacks), the flags of a delete or revival
     * (on a backup also of an insert: its placeholder reads as deleted), then the version; no lock word.
     */
    public static void addEntryWrites(final Doorbell batch, final long address, final int rkey, final int op,
                                       final boolean backup, final long installedVersion,
                                       final org.agrona.DirectBuffer value, final int valueLength) {
        if ((op & RedoRecordDescriptor.OP_VALUE) != 0 || backup && valueLength > 0) {
            batch.write(address + ObjectLayout.VALUE_OFFSET, rkey, value, 0, valueLength);
            final UnsafeBuffer length = new UnsafeBuffer(new byte[4]);
            length.putInt(0, valueLength);
            batch.write(address + ObjectLayout.VALUE_LENGTH_OFFSET, rkey, length, 0, 4);
        }
        final int flagged = RedoRecordDescriptor.OP_DELETE | RedoRecordDescriptor.OP_REVIVE
            | (backup ? RedoRecordDescriptor.OP_INSERTED : 0);
        if ((op & flagged) != 0) {
            final UnsafeBuffer flags = new UnsafeBuffer(new byte[2]);
            flags.putShort(0, (short) ((op & RedoRecordDescriptor.OP_DELETE) != 0 ? ObjectLayout.FLAG_DELETED : 0));
            batch.write(address + ObjectLayout.FLAGS_OFFSET, rkey, flags, 0, 2);
        }
        if (op != 0) {
            final UnsafeBuffer installed = new UnsafeBuffer(new byte[8]);
            installed.putLong(0, installedVersion);
            batch.write(address + ObjectLayout.VERSION_OFFSET, rkey, installed, 0, 8);
        }
    }

    /** The primary's part of {@link #finishEntry}: one doorbell, the release last. */
    private static Future<Boolean> finishPrimary(final io.scythe.bridge.RdmaChannel ch, final long address,
                                                 final int rkey, final int op, final long token,
                                                 final LockKind lockKind, final long installedVersion,
                                                 final org.agrona.DirectBuffer value, final int valueLength) {
        final Doorbell batch = ch.doorbell();
        addEntryWrites(batch, address, rkey, op, false, installedVersion, value, valueLength);
        lockKind.release(batch, address, rkey, token);
        return batch.post().map(true);
    }

    /**
     * The backups' part of {@link #finishEntry}: one doorbell per copy, all completed. A verb that failed drops its
     * channel, as on the primary.
     */
    private static Future<Void> finishBackups(final TxnRuntime runtime, final List<Catalog.Replica> backups,
                                              final long[] pointers, final int op, final long installedVersion,
                                              final org.agrona.DirectBuffer value, final int valueLength) {
        final List<Future<Doorbell>> posted = new ArrayList<>(backups.size());
        for (int b = 0; b < backups.size(); b++) {
            if (pointers[b] == 0) {
                continue; // a copy that did not serve when the record was written (Catalog.Serving#servingPointers)
            }
            final Catalog.Replica backup = backups.get(b);
            final long address = ObjectLayout.addressOf(pointers[b]);
            final int rkey = backup.descriptor().objects().rkey();
            posted.add(runtime.channel(backup.node()).compose(ch -> {
                final Doorbell batch = ch.doorbell();
                addEntryWrites(batch, address, rkey, op, true, installedVersion, value, valueLength);
                return batch.post().onFailure(e -> {
                    if (!io.scythe.txn.Refusal.forNow(e)) {
                        runtime.forgetChannel(backup.node(), ch);
                    }
                });
            }));
        }
        return Future.join(posted).transform(ar -> {
            Throwable failure = null;
            for (final Future<Doorbell> f : posted) {
                if (f.failed() && (failure == null || mayStillLand(f.cause()) && !mayStillLand(failure))) {
                    failure = f.cause(); // the first, or the first whose writes may still land (told first)
                }
            }
            return failure == null ? Future.succeededFuture() : Future.failedFuture(failure);
        });
    }

    private Future<Void> release(final String node, final String deadNode, final long claim, final Set<Long> owners,
                                 final Tally tally) {
        final byte[] name = deadNode.getBytes(StandardCharsets.UTF_8);
        final UnsafeBuffer request = new UnsafeBuffer(new byte[RecoveryRpc.RELEASE_REQUEST_HEADER_BYTES
            + owners.size() * 8 + name.length]);
        request.putLong(0, claim);
        request.putInt(8, owners.size());
        int at = RecoveryRpc.RELEASE_REQUEST_HEADER_BYTES;
        for (final long owner : owners) {
            request.putLong(at, owner);
            at += 8;
        }
        request.putBytes(at, name);
        return runtime.rocket(node).compose(r -> r.call(RecoveryRpc.RELEASE_NODE, request)).map((RpcReply reply) -> {
            final UnsafeBuffer p = reply.payload();
            synchronized (tally) {
                tally.inserts += p.getInt(0);
                final int steps = p.getInt(8);
                int step = RecoveryRpc.RELEASE_REPLY_BYTES;
                for (int i = 0; i < steps; i++) {
                    final int count = p.getInt(step);
                    final byte[] counted = new byte[p.getShort(step + 4) & 0xffff];
                    p.getBytes(step + 6, counted);
                    tally.released.merge(new String(counted, StandardCharsets.UTF_8), count, Integer::sum);
                    step += 6 + counted.length;
                }
            }
            return null;
        });
    }
}
