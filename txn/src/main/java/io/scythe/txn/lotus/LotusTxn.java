package io.scythe.txn.lotus;

import io.scythe.rrpc.RpcException;
import io.scythe.rrpc.RpcReply;
import io.scythe.storage.ObjectLayout;
import io.scythe.storage.Table;
import io.scythe.storage.TableDescriptor;
import io.scythe.txn.Catalog;
import io.scythe.txn.ford.CasLock;
import io.scythe.txn.AbortException;
import io.scythe.txn.AbortReason;
import io.scythe.txn.Access;
import io.scythe.txn.Stage;
import io.scythe.txn.TxnRuntime;
import io.scythe.txn.onesided.OneSidedTxn;
import io.scythe.txn.onesided.Replicas;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import org.agrona.DirectBuffer;
import org.agrona.concurrent.UnsafeBuffer;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * One attempt of Lotus's lock-first protocol (lotus.md §2.4) on Lotus's memory-node store ({@link Cvt}):
 * <ol>
 *   <li>Begin: T_start from the timestamp service (requested with the first lock phase, which it does not depend
 *       on).</li>
 *   <li>Each execution phase (the reads a procedure issues together) locks first: a read lock for a read (SR only;
 *       under SI data only read is not locked), a write lock for a read-for-update. A key of this node's shards is
 *       locked in its own table with a CPU CAS; the keys of each other compute node go in one message to it
 *       ({@link LockRpc}), loop to paired loop. Any refusal aborts: no waiting.</li>
 *   <li>Then the data: READ the CVT (or take it from the version-table cache, {@link VtCache}, for a key of this
 *       node's shards), pick the largest version below T_start (a newer one aborts), READ its record and check its
 *       cache-line versions.</li>
 *   <li>Commit: keys written but only read-locked are upgraded (under SI a key read lock-free is read again under
 *       its write lock: first committer wins); the new records and cells are written INVISIBLE to the primary and its
 *       backups, and the redo record to the log, in one round trip; T_commit; the cells' versions set to T_commit
 *       (visible) and the homes' version words (write-back); the locks released, returning before the remote
 *       releases are answered. The record decides nothing: the commit happens at its first visible write, and
 *       recovery finishes a record only where a copy shows one, else clears its INVISIBLE cells.</li>
 * </ol>
 * A transaction declared read-only takes no lock: it reads at T_start and aborts on an INVISIBLE or torn version.
 * No RDMA CAS or FAA on this path: memory nodes see READs and WRITEs only. Inserts lock their key and index bucket
 * ({@link LotusKey#indexBucket}) as they are issued, and the records are created by the memory node's INSERT RPC
 * before the INVISIBLE writes (the paper writes the CVT into the bucket one-sided under the bucket lock: our hash
 * index is maintained by the memory node's CPU), then get a fresh CVT of their one version.
 */
final class LotusTxn extends OneSidedTxn {
    /** Failed tries of a release an abort waits for before it goes on (the release is still retried after). */
    private static final int RELEASE_TRIES = 4;
    /** The pause after a release's first failed try; doubled after each, up to {@link #RELEASE_PAUSE_MAX_NS}. */
    private static final long RELEASE_RETRY_NS = 1_000_000;
    private static final long RELEASE_PAUSE_MAX_NS = 1_000_000_000L;
    /**
     * How long a release is retried on a node that does not answer it: past a lease and a stall of a loaded node (a
     * node that does not answer for that long is dead, and its lock table went with it; a restarted one's table is
     * empty, where a release is void).
     */
    static final long RELEASE_GIVE_UP_NS = 15_000_000_000L;
    private static final UnsafeBuffer FREE = new UnsafeBuffer(new byte[8]);

    private final LotusNode node;
    private final LotusNode.Loop loop;
    private Future<Long> start;
    /** Lock requests of the phase being gathered, sent together by {@link #flush}. */
    private final List<Request> pending = new ArrayList<>();
    private boolean flushScheduled;
    /** Keys locked in this node's table (released directly). */
    private final Set<Long> localKeys = new LinkedHashSet<>();
    /** Keys asked of each other compute node (released by one message each; a release of one not held is void). */
    private final Map<Integer, Set<Long>> remoteKeys = new LinkedHashMap<>();
    /** The locks of this attempt's inserts (key and index bucket), taken as each insert is issued. */
    private final List<Future<Void>> insertLocks = new ArrayList<>();
    private Future<Void> aborted;
    /**
     * This attempt's one-sided inserts ({@link #insertOneSided}): per inserted access, the address of the index slot
     * its commit writes (in the order they were picked: the simulator's runs must not depend on identity hashes).
     */
    private final Map<Access, Long> indexSlots = new LinkedHashMap<>();
    /**
     * Whether inserts go one-sided ({@link #insertOneSided}): off unless {@code -Dscythe.lotus.oneSidedInserts=true}
     * (or {@code LotusModule#oneSidedInserts}); every insert then goes by the INSERT RPC, as before helper lotusins.
     * Off by default while phantom seed 16 fails under a memory node's crash alone (an object slot taken and never
     * given back: TODO lotusins-return; TPC-C's failover cause is fixed, {@link #wholeHomesOfRevivals}; the stop-54
     * review's L1 and L2 are addressed since helper lotusfail: the placeholder's cell before its home, FULL fails).
     */
    static volatile boolean oneSidedInserts = "true".equals(System.getProperty("scythe.lotus.oneSidedInserts"));
    /** Index slots picked by this attempt's inserts, by address: another insert of it must pick another. */
    private final Set<Long> claimedSlots = new java.util.HashSet<>();
    /**
     * Object slots taken from the node's {@link SlotPool}, with their pools: given back by an abort (before any WRITE
     * at once, after WRITEs once {@link SlotPool#reusable}).
     */
    private final Map<Long, String> takenSlots = new LinkedHashMap<>();
    /** The memory node of each taken slot (its partition's primary when taken): whose batches decide its reuse. */
    private final Map<Long, String> takenSlotNodes = new HashMap<>();
    /** Whether a WRITE to a taken slot may have been posted (from the INVISIBLE phase on). */
    private boolean slotsPosted;
    /** The INVISIBLE phase with the redo record logged ahead ({@link #logWithInvisible}), once begun. */
    private Future<Void> invisiblePhase;
    /** Every batch this attempt posted to each memory node in its INVISIBLE phase and its abort's undo. */
    private final Map<String, List<Future<?>>> postedTo = new HashMap<>();
    /** Whether {@link #writeIndexSlots} posted its WRITEs (a slot it names is never reused then). */
    private boolean indexSlotsPosted;
    /**
     * Set first thing by {@link #abort}: from then on no read of this attempt settles a cell ({@link #settleInvisible}).
     * Its locks go once the abort's clearing is done, while a read it left in flight (an address lookup, a READ) may
     * still complete: a CVT READ that lands after the release can find the next writer's INVISIBLE cell, and settling
     * that as "a gone writer's" would clear a live commit's version (its visible write then sets the version of a cell
     * no longer valid: an acknowledged commit lost, LotusClusterProcessTest in CI run 67).
     */
    private boolean over;
    /** Settlements posted by this attempt's reads: an abort releases its locks only after they are done. */
    private final List<Future<Void>> settling = new ArrayList<>();

    /** The planted bug lotus-si runs ({@link LotusModule#plant}): tests only. */
    static volatile LotusModule.PlantedBug planted = LotusModule.PlantedBug.NONE;

    LotusTxn(final TxnRuntime runtime, final boolean snapshotIsolation) {
        super(runtime);
        this.si = snapshotIsolation;
        this.bug = snapshotIsolation ? planted : LotusModule.PlantedBug.NONE;
        this.loop = runtime.extensionOrNull(LotusNode.LOOP);
        if (loop == null) {
            throw new IllegalStateException("lotus runs only where its compute nodes have CN-to-CN messaging and "
                + "lock tables: the simulator (scythe sim) sets them up; scythe bench and cluster nodes do not yet "
                + "(issue 19)");
        }
        this.node = loop.node();
        writes.writeNoHomes(); // the versions are in the CVT: the home keeps only its version word current
        this.begun = runtime.timers().nowNs();
        node.began(this);
    }

    private final long begun;
    /** SI: reads of data it does not write take no read lock (lotus.md §2.5); SR: they take read locks. */
    private final boolean si;
    /** The bug planted in this attempt ({@link LotusModule#plant}; SI only): NONE but in tests. */
    private final LotusModule.PlantedBug bug;
    /** Declared read-only ({@link #declareReadOnly}): every read lock-free at T_start, no commit step. */
    private boolean readOnly;
    /**
     * Per access: the CVT cell its new version goes to and that cell's CV, once the INVISIBLE writes are built. Linked
     * (like {@link #cvtsAfter}, {@link #unlockedReads}): Access has identity hashing, so a HashMap's order (the order
     * {@link #clearCells} posts its doorbells to the memory nodes, and draws the simulator's per-batch jitter) would
     * change from run to run, and the simulator with it (same seed, different results).
     */
    private final Map<Access, int[]> cells = new LinkedHashMap<>();
    /** Per written access: its CVT as its commit leaves it (the version word set at T_commit), for the cache. */
    private final Map<Access, UnsafeBuffer> cvtsAfter = new LinkedHashMap<>();
    /** Accesses read lock-free whose keys it then wrote (SI): checked again under the write lock. */
    private final Set<Access> unlockedReads = new LinkedHashSet<>();
    /** Whether its INVISIBLE writes may have landed (an abort then clears their cells). */
    private boolean invisibleWritten;
    /** T_commit, once fetched (the redo record's tokens are derived from it). */
    private long commitTs;
    /** Why this attempt must abort (a handoff aborted it), or {@code null}. */
    private String doomed;
    /** Past its point of no return (T_commit fetched, write-back next): a handoff waits for it instead. */
    private boolean committing;
    /** How many times a refusal for a key out of the asked node's range is asked again by the newer map. */
    private static final int OUT_OF_RANGE_RETRIES = 2;

    /** Aborts this attempt at its next step unless it is past its point of no return. */
    void doom(final String why) {
        if (!committing && !finished) {
            doomed = why;
        }
    }

    /** Whether this attempt, not finished, asked compute node {@code cn} for locks. */
    boolean asked(final int cn) {
        return !finished && remoteKeys.containsKey(cn) || askedOf.contains(cn) && !finished;
    }

    /** Compute nodes this attempt asked for locks (kept after its releases were sent). */
    private final Set<Integer> askedOf = new java.util.TreeSet<>();

    /**
     * Compute node {@code cn} died: this attempt, if it asked it for locks, aborts unless past its point of no return
     * (its lock there is gone). Returns whether it was doomed.
     */
    boolean askedDead(final int cn) {
        if (asked(cn) && !committing) {
            doom("compute node cn" + cn + ", which held locks of it, died");
            return true;
        }
        return false;
    }

    /** Fails when a handoff doomed this attempt. */
    private <T> Future<T> unlessDoomed(final T value) {
        if (doomed == null && node.cluster().dead(node.index())) {
            // Its own lease ran out: the survivors free its locks and finish its logs, so it commits nothing more.
            doomed = "this compute node's lease ran out";
        } else if (doomed == null && node.restartAwaitingOldIncarnation()) {
            doomed = "this restarted compute node awaits its earlier incarnation's recovery";
        }
        return doomed == null ? Future.succeededFuture(value)
            : Future.failedFuture(new AbortException(AbortReason.LOCKED, "lotus: " + doomed));
    }

    @Override
    public String mode() {
        return si ? "lotus/si" : "lotus/sr";
    }

    /** Per key: its Lotus key, owner, and the lock this attempt asked for. */
    private static final class Held {
        final long key;
        int owner;
        boolean write;
        Future<Void> granting;

        Held(final long key, final int owner) {
            this.key = key;
            this.owner = owner;
        }
    }

    private record Request(String what, Held held, boolean write, Promise<Void> granted, int retries) {
    }

    /** This attempt's locks by Lotus key (two keys of one Lotus key share its lock, which is safe). */
    private final Map<Long, Held> held = new java.util.HashMap<>();

    private Future<Long> start() {
        if (start == null) {
            start = runtime.tso().next();
        }
        return start;
    }

    @Override
    public Future<UnsafeBuffer> read(final String table, final long key) {
        if (readOnlyTable(table)) {
            return goneAsAbort(readOnlyRead(table, key)); // nobody writes it: no lock
        }
        if (readOnly || si) {
            return goneAsAbort(snapshotRead(table, key));
        }
        return goneAsAbort(lockThenRead(table, key, false));
    }

    @Override
    public Future<UnsafeBuffer> readForUpdate(final String table, final long key) {
        if (readOnlyTable(table)) {
            return goneAsAbort(readOnlyRead(table, key));
        }
        if (readOnly) {
            return goneAsAbort(snapshotRead(table, key)); // its writes are refused
        }
        return goneAsAbort(lockThenRead(table, key, true));
    }

    /**
     * One execution phase of a key: its lock first (it depends on the key only, not on where the record is, so the
     * keys a procedure asks for together go in one message per compute node), then the record.
     */
    private Future<UnsafeBuffer> lockThenRead(final String table, final long key, final boolean write) {
        return Future.all(start(), lock(table, key, write)).compose(this::unlessDoomed).compose(v -> readVia(table, key,
            a -> once(a, x -> fetchVersion(x, true))));
    }

    /** A lock-free read at T_start (read-only transactions; reads of SI transactions): the snapshot's version. */
    private Future<UnsafeBuffer> snapshotRead(final String table, final long key) {
        return start().compose(this::unlessDoomed).compose(v -> readVia(table, key,
            a -> once(a, x -> fetchVersion(x, false))));
    }

    private static AbortException refusedRead(final Access a, final String why) {
        return new AbortException(AbortReason.VALIDATION, "lotus read of key " + a.key + " of " + a.table + ": " + why);
    }

    /**
     * Reads the version of {@code a} this attempt sees (lotus.md §2.4, step 2-3): READ the CVT, pick the largest
     * version below T_start, READ its record and check its CVs. {@code locked}: the key is locked by this attempt, so
     * a newer version aborts (SR; SI's first committer wins) and an INVISIBLE cell is a dead writer's; lock-free, an
     * INVISIBLE cell aborts (the digest's window, {@link Cvt}) and a newer version is skipped.
     */
    private Future<Access> fetchVersion(final Access a, final boolean locked) {
        return fetchVersion(a, locked, true);
    }

    /** {@link #fetchVersion}; {@code settle}: a locked read settles a gone writer's INVISIBLE cell first. */
    private Future<Access> fetchVersion(final Access a, final boolean locked, final boolean settle) {
        if (over || finished) { // e.g. an address lookup that completed after the abort: its locks may be gone
            return Future.failedFuture(new AbortException(AbortReason.LOCKED, "lotus: attempt over"));
        }
        final int maxValue = a.partition.descriptor().schema().maxValueBytes();
        final int at = Cvt.offset(maxValue);
        final int n = node.versions();
        final long ts = start.result();
        final int whole = at + Cvt.room(maxValue, n);
        if (a.image.capacity() < whole) { // the image covers the room too: the CVT and records are read into it
            final UnsafeBuffer image = new UnsafeBuffer(new byte[whole]);
            image.putBytes(0, a.image, 0, a.image.capacity());
            a.image = image;
        }
        final long lotusKey = node.fields().lotusKey(a.table, a.key);
        final boolean cached = cachedCvt(a, lotusKey, locked, at);
        return channel(a).compose(ch -> (cached ? Future.succeededFuture()
            : ch.read(a.address() + at, a.rkey(), a.image, at, Cvt.cvtBytes(n))).compose(v -> {
            if (!Cvt.written(a.image, at)) {
                if (!cached && locked) {
                    fill(a, lotusKey, a.image, at);
                }
                return homeRead(a, locked);
            }
            if (Cvt.key(a.image, at) != a.key || Cvt.versions(a.image, at) != n) {
                runtime.remote(a.partition).invalidate(a.key);
                return Future.failedFuture(refusedRead(a, "moved (stale cached address)"));
            }
            if (Cvt.empty(a.image, at)) {
                return undoneInsertRead(a, locked, ts);
            }
            final Cvt.Pick pick = Cvt.pick(a.image, at, ts);
            if (pick.cell() == Cvt.TORN) {
                return Future.failedFuture(refusedRead(a, "a CVT cell is being rewritten"));
            }
            if (!cached && locked && !pick.invisible()) {
                fill(a, lotusKey, a.image, at);
            }
            if (locked && pick.invisible() && (over || finished)) {
                // Aborted while this READ was in flight: the key may be another writer's by now, so the cell may be
                // that live writer's (see #over). Nothing is settled without the lock.
                return Future.failedFuture(refusedRead(a, "an INVISIBLE version, read after the attempt was over"));
            }
            if (locked && pick.invisible() && settle) {
                // The key is locked by this attempt, so no live writer has a version INVISIBLE on it: the cell is a
                // gone writer's (its coordinator died before its redo record, or its abort's clearing failed).
                return settleInvisible(a, at, n).compose(x -> fetchVersion(a, true, false));
            }
            if (locked && pick.newer()) {
                return Future.failedFuture(refusedRead(a, "a version newer than T_start " + ts));
            }
            if (!locked && pick.invisible()) {
                if (!settle) {
                    return Future.failedFuture(refusedRead(a, "an INVISIBLE version (its writer has no T_commit yet)"));
                }
                // Its writer may be gone (dead before its redo record: recovery cannot name its cells): under the
                // key's read lock, refused while a live writer holds the key, the cell is settled and read again.
                return lock(a.table, a.key, false).transform(ar -> ar.succeeded() ? fetchVersion(a, true, true)
                    : Future.failedFuture(refusedRead(a, "an INVISIBLE version (its writer has no T_commit yet)")));
            }
            if (pick.cell() == Cvt.NONE) {
                return Future.failedFuture(refusedRead(a, "no version below T_start " + ts));
            }
            final int cell = !locked && bug == LotusModule.PlantedBug.STALE_SNAPSHOT ? oldestBelow(a.image, at, ts)
                : pick.cell();
            final int record = (int) Cvt.address(a.image, at, cell);
            final int bytes = Cvt.recordBytes(maxValue);
            return ch.read(a.address() + record, a.rkey(), a.image, record, bytes).compose(w -> {
                final int length = Cvt.length(a.image, at, cell);
                if (length < 0 || length > maxValue || !Cvt.getRecord(a.image, record, bytes, Cvt.cv(a.image, at, cell),
                    length, a.image, ObjectLayout.VALUE_OFFSET)) {
                    return Future.failedFuture(refusedRead(a, "its record was rewritten under the read (CV check)"));
                }
                a.valueLength = length;
                a.deleted = Cvt.deleted(a.image, at, cell);
                a.readAbsent = a.deleted;
                a.readVersion = Cvt.version(a.image, at, cell);
                a.fetched = true;
                if (!locked) {
                    unlockedReads.add(a);
                }
                return Future.succeededFuture(a);
            });
        }));
    }

    /** The planted bug's pick ({@link LotusModule.PlantedBug#STALE_SNAPSHOT}): the oldest visible version below ts. */
    private static int oldestBelow(final DirectBuffer cvt, final int at, final long ts) {
        int oldest = Cvt.NONE;
        for (int i = 0; i < Cvt.versions(cvt, at); i++) {
            final long v = Cvt.version(cvt, at, i);
            if (Cvt.valid(cvt, at, i) && v != Cvt.INVISIBLE && Long.compareUnsigned(v, ts) < 0
                && (oldest == Cvt.NONE || v < Cvt.version(cvt, at, oldest))) {
                oldest = i;
            }
        }
        return oldest;
    }

    /**
     * Whether {@code a}'s CVT came from this node's version-table cache (copied into its image at {@code at}): only
     * for a key of a shard this node serves, and only while no write lock of it is held by another transaction (a
     * locked read holds its own lock of it here; a lock-free one finds it not write-locked). Then the entry, if any,
     * equals the memory node's CVT ({@link VtCache}).
     */
    private boolean cachedCvt(final Access a, final long lotusKey, final boolean locked, final int at) {
        final VtCache cache = node.vtCache();
        if (!cache.enabled() || !node.serves(LotusKey.shard(lotusKey)) || node.cluster().dead(node.index())) {
            return false;
        }
        if (locked ? !localKeys.contains(lotusKey) || !node.locks().holds(lotusKey, id)
            : node.locks().writeHeld(lotusKey)) {
            return false;
        }
        return cache.get(lotusKey, a.table, a.key, a.pointer, a.image, at);
    }

    /**
     * Keeps the CVT at {@code at} of {@code cvt} as {@code a}'s in the version-table cache: a CVT this attempt READ
     * under its lock (whole, no INVISIBLE cell), or the one its commit left (before its locks go). Only while it holds
     * its lock of the key in this node's table and this node serves the key's shard.
     */
    private void fill(final Access a, final long lotusKey, final DirectBuffer cvt, final int at) {
        final VtCache cache = node.vtCache();
        if (!cache.enabled() || finished || !localKeys.contains(lotusKey) || !node.serves(LotusKey.shard(lotusKey))
            || !node.locks().holds(lotusKey, id)) {
            return;
        }
        if (cache.put(lotusKey, a.table, a.key, a.pointer, cvt, at, Cvt.cvtBytes(node.versions()))) {
            loop.deferred().execute(cache::trim); // eviction off the transaction's path
        }
    }

    /** Drops the cache entries of the keys this attempt wrote (or may have: an abort, a failed commit). */
    private void forgetWritten() {
        final VtCache cache = node.vtCache();
        for (final Access a : cells.keySet()) {
            cache.invalidate(node.fields().lotusKey(a.table, a.key));
        }
    }

    /**
     * Settles the INVISIBLE cells a locked read of {@code a} found (its CVT image at {@code at}, {@code n} cells) on the
     * primary and every backup: a cell whose writer's commit reached the home (the home's version is newer than every
     * visible cell: recovery finished it; of an insert's CVT, which has none, the home live and its CAS word cleared)
     * becomes visible at the home's version, any other is cleared (not valid).
     */
    private Future<Void> settleInvisible(final Access a, final int at, final int n) {
        node.vtCache().invalidate(node.fields().lotusKey(a.table, a.key));
        final UnsafeBuffer header = new UnsafeBuffer(new byte[ObjectLayout.HEADER_BYTES]);
        return channel(a).compose(ch -> ch.read(a.address(), a.rkey(), header, 0, header.capacity()))
            .compose(v -> Replicas.locateAll(runtime, List.of(a))).compose(v -> {
                final long home = header.getLong(ObjectLayout.VERSION_OFFSET)
                    & ~ObjectLayout.VERSION_BUSY;
                final int newest = Cvt.newest(a.image, at);
                // No visible cell: an insert's CVT (written whole, its one cell INVISIBLE). Its home tells: a
                // committed insert's write-back (or recovery's) leaves it live with the CAS word cleared, an
                // abandoned one (its coordinator died before the redo record) deleted at the INSERT's version + 1,
                // which must not be made visible (a G1a: phantom seeds 65 and 89 read version 2 of an inserted mark).
                final boolean committed = newest == Cvt.NONE
                    ? (header.getShort(ObjectLayout.FLAGS_OFFSET)
                    & ObjectLayout.FLAG_DELETED) == 0
                    && header.getLong(ObjectLayout.CAS_LOCK_OFFSET) == 0
                    : home > Cvt.version(a.image, at, newest);
                final UnsafeBuffer version = new UnsafeBuffer(new byte[8]);
                version.putLong(0, home);
                // The backups' batches, then the primary's (review finding 4): a cell made visible on the primary,
                // which readers read, is visible on every backup a failover could promote, as the commit's own
                // visible write and recovery's (recoverCells) order them.
                final Map<String, List<java.util.function.Consumer<io.scythe.bridge.Doorbell>>> backupsByNode =
                    new LinkedHashMap<>();
                final Map<String, List<java.util.function.Consumer<io.scythe.bridge.Doorbell>>> primaryByNode =
                    new LinkedHashMap<>();
                boolean madeVisible = false;
                for (int i = 0; i < n; i++) {
                    if (!Cvt.valid(a.image, at, i) || Cvt.version(a.image, at, i) != Cvt.INVISIBLE) {
                        continue;
                    }
                    final boolean visible = committed && !madeVisible; // one cell holds the home's version
                    madeVisible |= visible;
                    final int cellAt = at + Cvt.cell(i);
                    final List<long[]> copies = copiesOf(a);
                    for (int c = 0; c < copies.size(); c++) {
                        final long base = copies.get(c)[0];
                        final int rkey = (int) copies.get(c)[1];
                        (c == 0 ? primaryByNode : backupsByNode).computeIfAbsent(nodeOf(a, c),
                            k -> new ArrayList<>()).add(visible
                            ? b -> writeVisible(b, base + cellAt, rkey, version)
                            : b -> writeCleared(b, base + cellAt, rkey));
                    }
                }
                if (over || finished) { // aborted meanwhile: its locks may be gone (see #over), nothing is written
                    return Future.failedFuture(refusedRead(a, "an INVISIBLE version, settled after the attempt was "
                        + "over"));
                }
                final Future<Void> posted = backupsByNode.isEmpty() ? post(primaryByNode)
                    : post(backupsByNode).compose(x -> post(primaryByNode));
                settling.add(posted);
                return posted;
            });
    }

    /**
     * A read of {@code a} whose CVT has no valid cell ({@link Cvt#empty}): an insert undone (aborted, or its
     * coordinator died before its redo record and recovery abandoned it), whose cell was cleared. The CVT has no
     * version of the key, so the home answers: deleted by the ABANDON and unlocked, the key is absent, read at the
     * home's version (above every committed version of the key, below every later one: the next write is an insert,
     * which installs above it) if that is below T_start, else the read aborts as a home read does. A home with its
     * CAS word set is an insert under way (reviving it) and aborts the read. Before this, every such read aborted
     * ("no version below T_start") until reclamation freed the object, for the rest of a short run.
     */
    private Future<Access> undoneInsertRead(final Access a, final boolean locked, final long ts) {
        final UnsafeBuffer header = new UnsafeBuffer(new byte[ObjectLayout.HEADER_BYTES]);
        return channel(a).compose(ch -> ch.read(a.address(), a.rkey(), header, 0, header.capacity())).compose(v -> {
            if ((header.getShort(ObjectLayout.INCARNATION_OFFSET) & 0xffff)
                != ObjectLayout.incarnationOf(a.pointer)) {
                runtime.remote(a.partition).invalidate(a.key);
                return Future.failedFuture(refusedRead(a, "moved (stale cached address)"));
            }
            final long home = header.getLong(ObjectLayout.VERSION_OFFSET);
            if ((header.getShort(ObjectLayout.FLAGS_OFFSET)
                & ObjectLayout.FLAG_DELETED) == 0
                || header.getLong(ObjectLayout.CAS_LOCK_OFFSET) != 0
                || (home & ObjectLayout.VERSION_BUSY) != 0) {
                return Future.failedFuture(refusedRead(a, "being inserted (its CVT has no version)"));
            }
            if (home >= ts) {
                return Future.failedFuture(refusedRead(a, "version " + home + " of its home, not below T_start "
                    + ts));
            }
            a.valueLength = 0;
            a.deleted = true;
            a.readAbsent = true;
            a.readVersion = home;
            a.fetched = true;
            if (!locked) {
                unlockedReads.add(a);
            }
            return Future.succeededFuture(a);
        });
    }

    /**
     * A record whose CVT no lotus writer wrote yet has one version, its home (header and value, as loaded or
     * inserted). Lock-free, an insert still holding the object aborts the read, and a CVT written meanwhile (its
     * writer may be rewriting the home) too.
     */
    private Future<Access> homeRead(final Access a, final boolean locked) {
        final int maxValue = a.partition.descriptor().schema().maxValueBytes();
        final int at = Cvt.offset(maxValue);
        final long ts = start.result();
        return channel(a).compose(ch -> ch.read(a.address(), a.rkey(), a.image, 0,
            ObjectLayout.slotBytes(maxValue)).compose(v -> {
                if (!locked && a.image.getLong(ObjectLayout.CAS_LOCK_OFFSET) != 0) {
                    return Future.failedFuture(refusedRead(a, "being inserted"));
                }
                return checkedImage(a);
            }).compose(x -> {
                if (a.readVersion >= ts) {
                    return Future.failedFuture(refusedRead(a, "version " + a.readVersion + " of its home, not "
                        + "below T_start " + ts));
                }
                if (locked) {
                    return Future.succeededFuture(a);
                }
                unlockedReads.add(a);
                final UnsafeBuffer again = new UnsafeBuffer(new byte[Cvt.HEADER_BYTES]);
                return ch.read(a.address() + at, a.rkey(), again, 0, Cvt.HEADER_BYTES).compose(w -> Cvt.written(again, 0)
                    ? Future.failedFuture(refusedRead(a, "its first CVT was written under the read"))
                    : Future.succeededFuture(a));
            }));
    }

    /** Declares this attempt read-only: Lotus's lock-free path (every read at T_start, no locks, no commit step). */
    @Override
    public void declareReadOnly() {
        readOnly = true;
    }

    /** Locks {@code key} in read or write mode (an upgrade when it holds the read lock); completes once held. */
    private Future<Void> lock(final String table, final long key, final boolean write) {
        return lockKey(node.fields().lotusKey(table, key), write, "key " + key + " of " + table);
    }

    /** Locks Lotus key {@code lotusKey} ({@code what} names it in a refusal). */
    private Future<Void> lockKey(final long lotusKey, final boolean write, final String what) {
        if (finished) { // e.g. a key whose address lookup completed after the attempt aborted: nothing is locked
            return Future.failedFuture(new AbortException(AbortReason.LOCKED, "attempt over"));
        }
        Held h = held.get(lotusKey);
        if (h == null) {
            h = new Held(lotusKey, node.owners().ownerOfKey(lotusKey));
            held.put(lotusKey, h);
        }
        if (h.granting != null && (h.write || !write)) {
            return h.granting; // asked already, in this mode or a stronger one
        }
        if (h.granting != null && !h.granting.isComplete()) {
            return h.granting.compose(v -> lockKey(lotusKey, write, what)); // the read lock first, then the upgrade
        }
        if (h.granting != null && h.granting.failed()) {
            return h.granting;
        }
        h.write = write;
        if (h.owner == node.index()) {
            node.localAcquires.increment();
            localKeys.add(h.key);
            final LockTable.Result r = node.acquireLocal(h.key, write, id);
            h.granting = r != null && r.granted() ? Future.succeededFuture()
                : Future.failedFuture(refused(what, r, node.index()));
            return h.granting;
        }
        final Promise<Void> granted = Promise.promise();
        h.granting = granted.future();
        pending.add(new Request(what, h, write, granted, OUT_OF_RANGE_RETRIES));
        if (node.cluster().gone(h.owner)) { // its shards are served by nobody until its recovery is over
            granted.fail(new AbortException(AbortReason.LOCKED, "lotus lock of " + what + ": its owner cn" + h.owner
                + " is down"));
            return h.granting;
        }
        remoteKeys.computeIfAbsent(h.owner, o -> new LinkedHashSet<>()).add(h.key);
        askedOf.add(h.owner);
        if (!flushScheduled) {
            flushScheduled = true;
            loop.deferred().execute(this::flush);
        }
        return h.granting;
    }

    private static AbortException refused(final String what, final LockTable.Result r, final int owner) {
        return new AbortException(AbortReason.LOCKED, "lotus lock of " + what + " on cn"
            + owner + ": " + (r == null ? "shard not served there (out of range)" : r.name().toLowerCase()));
    }

    /** Sends the gathered requests: one message per compute node. */
    private void flush() {
        flushScheduled = false;
        final List<Request> batch = new ArrayList<>(pending);
        pending.clear();
        if (finished) {
            for (final Request r : batch) {
                r.granted().tryFail(new AbortException(AbortReason.LOCKED, "attempt over"));
            }
            return;
        }
        final Map<Integer, List<Request>> byOwner = new LinkedHashMap<>();
        for (final Request r : batch) {
            byOwner.computeIfAbsent(r.held().owner, o -> new ArrayList<>()).add(r);
        }
        byOwner.forEach((owner, all) -> {
            for (int from = 0; from < all.size(); from += node.keysPerMessage()) {
                final List<Request> requests = all.subList(from, Math.min(all.size(), from + node.keysPerMessage()));
                final int n = requests.size();
                final long[] keys = new long[n];
                final boolean[] write = new boolean[n];
                for (int i = 0; i < n; i++) {
                    keys[i] = requests.get(i).held().key;
                    write[i] = requests.get(i).write();
                }
                node.acquireMessages.increment();
                node.acquireKeys.add(n);
                node.peers().call(node.name(owner), LockRpc.ACQUIRE, LockRpc.request(id, node.index(), keys, write,
                    n)).onComplete(ar -> answered(owner, requests, ar.succeeded() ? ar.result() : null, ar.cause()));
            }
        });
    }

    /** Asks for one key again, of the owner its request names now (locally when that is this node). */
    private void resend(final Request r) {
        if (r.held().owner == node.index()) {
            node.localAcquires.increment();
            localKeys.add(r.held().key);
            final LockTable.Result result = node.acquireLocal(r.held().key, r.write(), id);
            if (result != null && result.granted()) {
                r.granted().tryComplete();
            } else {
                r.granted().tryFail(refused(r.what(), result, node.index()));
            }
            return;
        }
        if (node.cluster().gone(r.held().owner)) {
            r.granted().tryFail(new AbortException(AbortReason.LOCKED, "lotus lock of " + r.what() + ": its owner cn"
                + r.held().owner + " is down"));
            return;
        }
        remoteKeys.computeIfAbsent(r.held().owner, o -> new LinkedHashSet<>()).add(r.held().key);
        askedOf.add(r.held().owner);
        pending.add(r);
        if (!flushScheduled) {
            flushScheduled = true;
            loop.deferred().execute(this::flush);
        }
    }

    private void answered(final int owner, final List<Request> requests, final RpcReply reply, final Throwable e) {
        if (reply == null || reply.length() != requests.size()) {
            final AbortException cause = new AbortException(e instanceof RpcException re
                && re.code() == RpcException.BACK_PRESSURE ? AbortReason.BACK_PRESSURE : AbortReason.LOCKED,
                "lotus lock message to cn" + owner + " failed: " + (e == null ? "reply of " + reply.length()
                    + " bytes for " + requests.size() + " keys" : e.getMessage()));
            for (final Request r : requests) {
                r.granted().tryFail(cause);
            }
            return;
        }
        final DirectBuffer codes = reply.payload();
        for (int i = 0; i < requests.size(); i++) {
            final Request r = requests.get(i);
            final LockTable.Result result = LockRpc.result(codes.getByte(i));
            if (result != null && result.granted()) {
                r.granted().tryComplete();
            } else if (result == null && r.retries() > 0 && !finished
                && node.owners().ownerOfKey(r.held().key) != owner) {
                // Out of range: the shard moved. Asked again of its owner by the newer map (lotus.md §2.1).
                r.held().owner = node.owners().ownerOfKey(r.held().key);
                resend(new Request(r.what(), r.held(), r.write(), r.granted(), r.retries() - 1));
            } else {
                r.granted().tryFail(refused(r.what(), result, owner));
            }
        }
    }

    /**
     * An insert locks, as it is issued, its key (write) and the memory-pool index bucket the key hashes to
     * ({@link LotusKey#indexBucket}), so that two inserts into one bucket conflict (lotus.md §2.1); the record is
     * created one-sided at commit ({@link #insertOneSided}), after every lock is held. A reader of the absent key holds its read
     * lock from before its lookup, so a concurrent insert conflicts with it (no phantom, no absence validation).
     */
    @Override
    public void insert(final String table, final long key, final DirectBuffer value, final int offset,
                       final int length) {
        super.insert(table, key, value, offset, length);
        if (sawDuplicate()) {
            return; // the commit fails with DUPLICATE_KEY and locks nothing more
        }
        insertLocks.add(lock(table, key, true));
        final Catalog.Partition partition = runtime.catalog().table(table).partitionOf(key);
        final TableDescriptor d = partition.descriptor();
        if (d.hashBuckets() > 0) {
            insertLocks.add(lockKey(LotusKey.indexBucket(partition.node(), d.bucketAddress(key, 0)), true,
                "index bucket of key " + key + " of " + table));
        }
    }

    /**
     * The one-sided inserts of lotus.md §2.1 (helper lotusins), in the commit's lock phase: for each buffered insert
     * into a hash-indexed table, READs of its probe sequence pick the index slot ({@code RemoteTable#probeForInsert}:
     * the first slot holding no object from the home bucket on, as the memory node's own insert picks), the bucket of
     * that slot is locked too (the home bucket is, from {@link #insert}: with linear probing, two inserts of different
     * home buckets can pick one slot, and both lock its bucket), the slot is READ again under that lock (an insert
     * that held it and committed since took it: abort, retried), and an object slot of the node's own
     * ({@link SlotPool}) becomes the key's. Nothing is written yet: the INVISIBLE phase writes its CVT (with the
     * others') and its placeholder home's version, the redo record names it (an inserted entry, as an INSERT's);
     * after T_commit, {@link #writeIndexSlots} writes the index slot, and then the visible phase the home, whole, and
     * the cell. So a redo record exists before the index names the object (record first: a coordinator dead before
     * that left a slot nobody can reach, and nothing to undo), and a visible cell, which is what makes recovery finish
     * a record, only once the index names it.
     *
     * <p>A key the READs find in the index (a tombstone, or a duplicate) is read and revived as a write
     * ({@link #insertOverFound}). A GRANT that finds no slot fails the insert FULL (never the INSERT RPC in its place:
     * stop-54 review, L2), and tables without a hash index keep the INSERT RPC (TODO lotusins-skiplist), and backups are still located by LOCATE
     * RPC ({@code Replicas#locate}: the backup's index is the memory node's; TODO lotusins-backup-index).
     */
    private Future<Void> insertOneSided() {
        final List<io.scythe.txn.onesided.Inserts.PendingKey> pending = inserts.pending();
        if (pending.isEmpty() || !oneSidedInserts) {
            return Future.succeededFuture();
        }
        final List<Future<Void>> done = new ArrayList<>(pending.size());
        for (final io.scythe.txn.onesided.Inserts.PendingKey p : pending) {
            final Catalog.Partition partition = runtime.catalog().table(p.table()).partitionOf(p.key());
            if (partition.descriptor().hashBuckets() > 0) {
                done.add(insertOneSided(p.table(), p.key(), partition));
            }
        }
        return settle(done);
    }

    private Future<Void> insertOneSided(final String table, final long key, final Catalog.Partition partition) {
        final io.scythe.storage.remote.RemoteTable remote = runtime.remote(partition);
        return remote.probeForInsert(key, claimedSlots::contains).compose(at -> {
            if (at.found() != 0) {
                return insertOverFound(table, key);
            }
            if (at.probe() < 0) {
                return Future.failedFuture(new IllegalStateException("lotus: insert of key " + key + " of " + table
                    + ": no free index slot within " + io.scythe.storage.HashIndexLayout.MAX_PROBE_BUCKETS
                    + " buckets of its home on " + partition.node()));
            }
            final long slot = remote.slotAddress(key, at.probe(), at.slot());
            if (!claimedSlots.add(slot)) {
                return insertOneSided(table, key, partition); // another insert of this attempt picked it meanwhile
            }
            final Future<Void> bucketLocked = at.probe() == 0 ? Future.succeededFuture()
                : lockKey(LotusKey.indexBucket(partition.node(), partition.descriptor().bucketAddress(key,
                at.probe())), true, "index bucket " + at.probe() + " of key " + key + " of " + table);
            return bucketLocked.compose(v -> remote.readSlotWord(key, at.probe(), at.slot())).compose(word -> {
                if (word != at.word()) {
                    return Future.failedFuture(new AbortException(AbortReason.LOCKED, "index slot of key " + key
                        + " of " + table + " taken by a concurrent insert"));
                }
                // No slot to be had (the memory node's slab is out, or other nodes' pools hold the rest): the insert
                // fails FULL, as an INSERT RPC's does (Inserts#failure), and nothing was written. It is not left to
                // the INSERT RPC (stop-54 review, L2): the memory node would pick the first free slot from home under
                // none of the compute nodes' bucket locks but this attempt's, and could take a slot this attempt
                // claimed for another key (writeIndexSlots then overwrites its entry after T_commit) or one that
                // reclamation freed under another node's one-sided insert: a committed key lost. One path per attempt.
                // (The INSERT RPC's memory node allocates from the same slab as the GRANT, so it would fail FULL too
                // but for a slot reclamation freed in between.)
                // TODO lotusins-revive-race (what is left of it): a tombstone the memory node itself deleted (an
                // INSERT RPC abandoned) is in its reclamation bookkeeping, and could be freed while insertOverFound
                // revives it one-sided (Lotus's own deletes and undone one-sided inserts are not: they stay tombstones).
                return node.slots().take(runtime, partition).recover(e -> Future.failedFuture(
                    e instanceof RpcException r && r.code() == io.scythe.storage.remote.LogDbRpc.FULL
                        ? new IllegalStateException("lotus: insert of key " + key + " of " + table + ": no object "
                        + "slot granted on " + partition.node() + " (FULL): " + r.getMessage(), r) : e));
            }).compose(pointer -> {
                if (over) { // aborted meanwhile: nothing was written to it
                    node.slots().giveBack(SlotPool.poolOf(partition), pointer);
                    return Future.failedFuture(new AbortException(AbortReason.LOCKED, "attempt over"));
                }
                takenSlots.put(pointer, SlotPool.poolOf(partition));
                takenSlotNodes.put(pointer, partition.node());
                final UnsafeBuffer value = inserts.take(table, key);
                if (value == null) {
                    return Future.failedFuture(new IllegalStateException("lotus: no buffered insert of key " + key
                        + " of " + table));
                }
                final Access a = new Access(table, key, partition);
                a.pointer = pointer;
                // What it replaces: no live value, at a version at most the absent bound, which an INSERT's new
                // object would have got + 1 (Table#insertLocked).
                a.readVersion = at.bound() + 1;
                a.readAbsent = true;
                a.inserted = true;
                a.placeholderHome = true;
                a.locked = true;
                a.fetched = true;
                a.newValue = value;
                a.newLength = value.capacity();
                accesses.add(a);
                indexSlots.put(a, slot);
                if (partition.backups().isEmpty()) {
                    return Future.succeededFuture();
                }
                a.backupsLocated = Replicas.locate(runtime, partition, key).map(pointers -> {
                    a.backupPointers = pointers;
                    return null;
                });
                return a.backupsLocated;
            });
        });
    }

    /**
     * An insert of a key the index holds (a tombstone: deleted, or an insert undone; or a duplicate): no slot is
     * written, the object is read under the write lock {@link #insert} took, and the insert becomes one over that
     * access ({@code Inserts#insert}: a deleted object is revived by the write-back, as a write: a new CVT version,
     * INVISIBLE then visible, and its home's flags cleared), or the commit fails as a duplicate (every key it read is
     * locked, so the duplicate is current). Before lotusins the INSERT RPC revived it in place.
     */
    private Future<Void> insertOverFound(final String table, final long key) {
        final UnsafeBuffer value = inserts.take(table, key);
        if (value == null) {
            return Future.failedFuture(new IllegalStateException("lotus: no buffered insert of key " + key + " of "
                + table));
        }
        // A deleted key's read fails with UnknownKeyException, its access kept (fetched, deleted): that is the case
        // to revive. (Before this recover, churn's and TPC-C's re-inserts failed with it as errors.)
        return readForUpdate(table, key).recover(e -> e instanceof io.scythe.txn.UnknownKeyException
            ? Future.succeededFuture(null) : Future.failedFuture(e)).compose(read -> {
            super.insert(table, key, value, 0, value.capacity());
            if (sawDuplicate()) {
                return Future.failedFuture(new AbortException(AbortReason.DUPLICATE_KEY, "key " + key + " of " + table
                    + " exists"));
            }
            return Future.succeededFuture();
        });
    }

    /**
     * After T_commit, before any visible write: the index slots of this attempt's one-sided inserts
     * ({@link #insertOneSided}), key then object pointer (two WRITEs, in order on the queue pair: a reader that sees the
     * pointer sees its key), one doorbell per memory node. Its own round trip: posted with the redo record, a
     * coordinator dying before that landed would leave the index naming an object no record names; posted with the
     * visible writes, a backup's visible cell (another memory node) could land before the index slot, and recovery
     * would finish a commit the index cannot find. Should it fail, the attempt aborts (the write-back is undecided):
     * a slot that landed names a placeholder home, deleted at the INSERT's version, its cells cleared, so the key
     * reads absent (a tombstone, which the next insert revives).
     */
    private Future<Void> writeIndexSlots() {
        if (indexSlots.isEmpty()) {
            return Future.succeededFuture();
        }
        if (over) {
            // Aborted meanwhile (a client's abort while the commit ran): its slots may be back in the pool already
            // (returnWrittenSlots), so no index slot may name them now.
            return Future.failedFuture(new AbortException(AbortReason.LOCKED, "attempt over"));
        }
        final Map<String, List<java.util.function.Consumer<io.scythe.bridge.Doorbell>>> byNode = new LinkedHashMap<>();
        indexSlots.forEach((a, slot) -> {
            final UnsafeBuffer entry = new UnsafeBuffer(new byte[io.scythe.storage.HashIndexLayout.SLOT_BYTES]);
            entry.putLong(io.scythe.storage.HashIndexLayout.KEY_OFFSET, a.key);
            entry.putLong(io.scythe.storage.HashIndexLayout.ADDRESS_OFFSET, a.pointer);
            final int rkey = a.partition.descriptor().index().rkey();
            byNode.computeIfAbsent(a.partition.node(), k -> new ArrayList<>()).add(b -> {
                b.write(slot + io.scythe.storage.HashIndexLayout.KEY_OFFSET, rkey, entry,
                    io.scythe.storage.HashIndexLayout.KEY_OFFSET, 8);
                b.write(slot + io.scythe.storage.HashIndexLayout.ADDRESS_OFFSET, rkey, entry,
                    io.scythe.storage.HashIndexLayout.ADDRESS_OFFSET, 8);
            });
        });
        indexSlotsPosted = true;
        return post(byNode).map(v -> {
            indexSlots.forEach((a, slot) -> runtime.remote(a.partition).cache(a.key, a.pointer));
            return null;
        });
    }

    /**
     * A revived key (an insert over a deleted object this attempt read: {@link #insertOverFound}, or a read of an
     * absent key and then its insert) gets its home written whole by the write-back, as a one-sided insert's
     * placeholder home ({@code Access#placeholderHome}: value, length, flags cleared, version; its visible cell first,
     * stop-54 review L1), on every copy. Lotus's write-back writes no home values else (the CVT cells carry them), and
     * a revived home may be a placeholder that never held a value: a backup's, made by the LOCATE RPC of an attempt
     * that then aborted, which a failover promoted (explorer tpcc {@code --crash-mn 1 --replicas 2 --mns 3}, seed 6:
     * a NewOrder aborted as {@code reconfigured} by mn1's failover, its retry found its 4 order lines' keys in the
     * promoted copy's index and revived them; their homes stayed empty and flagged deleted, the rows live only in the
     * CVT, and the end checks, which find a row by its home's value, counted "sum(O_OL_CNT) = 325 but 321 ORDER-LINE
     * rows"; with the explorer's CN crash too, the seed failed "D_NEXT_O_ID - 1 = 31, max(O_ID) = 30";
     * TODO lotusins-mn-failover), or an aborted one-sided insert's tombstone. The INSERT RPC, which
     * these revivals replace, revived such a home in place with its value; recovery's redo writes it too
     * ({@code CnRecovery#addEntryWrites}: OP_VALUE|OP_REVIVE; {@link #settlePromoted}). With one-sided inserts off as
     * well: a read of a deleted key and then its insert is a revival in either mode ({@code Inserts#insert}).
     */
    private void wholeHomesOfRevivals() {
        for (final Access a : accesses) {
            if (a.reviving && a.dirty && !a.inserted) {
                a.placeholderHome = true;
            }
        }
    }

    /** A delete is a write: its key's lock is upgraded at commit as any written key's. */
    @Override
    public void delete(final String table, final long key) {
        super.delete(table, key);
    }

    @Override
    public Future<Long> commit() {
        return goneAsAbort(commitAttempt());
    }

    private Future<Long> commitAttempt() {
        mark(Stage.EXECUTE);
        if (writesNothing()) {
            // Read-only: every read was at T_start (lock-free) or read-locked, so nothing changed since T_start.
            return finishCommit(start().compose(this::unlessDoomed).map(ts -> {
                unlockAll(false);
                node.ended(this, runtime.timers().nowNs() - begun);
                return ts;
            }));
        }
        if (readOnly) {
            return Future.failedFuture(new IllegalStateException("lotus: a transaction declared read-only wrote"));
        }
        if (sawDuplicate()) {
            // Every key it read is locked, so what it read is current: the duplicate decides the commit.
            return duplicateCommit(() -> Future.succeededFuture());
        }
        final List<Future<Void>> upgrades = new ArrayList<>(insertLocks);
        for (final Access a : accesses) {
            if (a.dirty) {
                upgrades.add(lock(a.table, a.key, true));
            }
        }
        return finishCommit(staged(Stage.LOCK, settle(upgrades).compose(this::unlessDoomed)
                .compose(v -> recheckUnlocked())
                .compose(v -> insertOneSided())
                // What is left to the INSERT RPC: keys the index holds (tombstones to revive, or duplicates), and
                // tables without a hash index (TODO lotusins-skiplist).
                .compose(v -> installInserts(Table.InsertLock.CAS_WORD, id, (a, inserted) -> { })))
            .compose(v -> start()) // an attempt that only inserted has not asked for it yet
            .compose(v -> {
                if (over) {
                    // Aborted meanwhile (a client's abort while the commit ran, stop-56 review L1): its slots went back
                    // to the pool untouched, and another insert may have one now; nothing of it is written from here.
                    return Future.failedFuture(new AbortException(AbortReason.LOCKED, "attempt over"));
                }
                wholeHomesOfRevivals();
                slotsPosted = !takenSlots.isEmpty();
                invisiblePhase = logWithInvisible();
                return staged(Stage.WRITE_BACK, invisiblePhase);
            })
            .compose(v -> staged(Stage.TIMESTAMP, runtime.tso().next()))
            .compose(commitTs -> {
                if (doomed != null) {
                    return unlessDoomed(commitTs);
                }
                committing = true; // from here it commits (or gives up past its point of no return)
                this.commitTs = commitTs;
                return Future.succeededFuture(commitTs);
            })
            .compose(commitTs -> staged(Stage.WRITE_BACK, writeIndexSlots().map(commitTs)))
            .compose(commitTs -> {
                // Write visible: every backup first, then each primary in its write-back doorbell, all after the
                // redo record (what recovery finishes from is logged before any reader can see the version) and each
                // cell before its copy's home version word (recovery's sign that it landed). Backups before
                // primaries (issue 19, review item 3): readers read primaries only, so a version a reader saw is
                // visible on every backup too, and a failover that promotes a backup keeps it; recovery, which
                // decides by visible cells (lotus.md §2.7: records "already visible" are finished), then finishes
                // it on whichever copy serves. Posted together, a coordinator dying after its primary's batch and
                // before its backups' left the promoted backup INVISIBLE, and recovery undid a commit a reader saw
                // (LotusMnCrashSimTest). The paper sends the visible writes to primary and backup in one round
                // trip (its MNs never fail); this costs one more round trip per commit with backups, as FORD's and
                // Aurogon's backups-first write-backs do. One doorbell per memory node per phase (WriteSet#writeBack:
                // the backups' batches, Replicas#writeBack, then the primaries').
                final UnsafeBuffer visible = new UnsafeBuffer(new byte[8]);
                visible.putLong(0, commitTs);
                writes.backupWrites((batch, a, backup) -> {
                    final int[] c = cells.get(a);
                    if (c == null) {
                        return;
                    }
                    final long object = ObjectLayout.addressOf(a.backupPointers[backup]);
                    final int rkey = a.partition.backups().get(backup).descriptor().objects().rkey();
                    writeVisible(batch, object + Cvt.offset(a.partition.descriptor().schema().maxValueBytes())
                        + Cvt.cell(c[0]), rkey, visible);
                    if (!a.inserted) { // an inserted object's home is written whole (version last) before its cell
                        writeLanded(batch, object, rkey, lockToken(a));
                    }
                });
                final Future<Void> written = writeBack(commitTs, a -> a.inserted || cells.containsKey(a),
                    new io.scythe.txn.onesided.WriteSet.ReleaseVerb() {
                        /**
                         * An inserted object's CAS word is cleared before its home (written whole, version last):
                         * recovery takes a home at the record's token for a write-back that landed and then finishes
                         * only the cells, so a crash cutting the batch between the version and a later clear left
                         * the word set, and RELEASE_NODE abandoned the committed insert (a lost TPC-C order line).
                         */
                        @Override
                        public void beforeWrites(final io.scythe.bridge.Doorbell batch, final Access a) {
                            if (a.inserted) {
                                batch.write(CasLock.lockAddress(a.pointer), a.rkey(), FREE, 0, 8);
                            }
                            // A one-sided insert's placeholder home (deleted, at the INSERT's version) gets its cell
                            // visible BEFORE the home is written whole (stop-54 review, L1), as a non-inserted write's
                            // cell precedes its home version: a crash cutting the batch between a home made live
                            // (flags cleared) and its cell left no visible cell, so recovery undid the commit and the
                            // key stayed live with an empty CVT, refused by every read and insert for good
                            // (undoneInsertRead). Cut after the cell, recovery finds it visible and finishes the home
                            // from the redo record; before it, the home is still the deleted placeholder (absent).
                            // No CAS word to order against: nobody's LockedInsert names a granted slot.
                            final int[] c = a.placeholderHome ? cells.get(a) : null;
                            if (c != null) {
                                writeVisible(batch, a.address() + Cvt.offset(a.partition.descriptor().schema()
                                    .maxValueBytes()) + Cvt.cell(c[0]), a.rkey(), visible);
                            }
                        }


                        @Override
                        public void add(final io.scythe.bridge.Doorbell batch, final Access a) {
                            final int[] c = a.placeholderHome ? null : cells.get(a); // a placeholder's: beforeWrites
                            if (c != null) {
                                writeVisible(batch, a.address() + Cvt.offset(a.partition.descriptor().schema()
                                    .maxValueBytes()) + Cvt.cell(c[0]), a.rkey(), visible);
                                if (!a.inserted) { // an inserted object's home is written whole (its backups need it)
                                    writeLanded(batch, a.address(), a.rkey(), lockToken(a));
                                }
                            }
                        }
                    });
                return staged(Stage.WRITE_BACK, written.map(commitTs));
            })
            .map(commitTs -> {
                // The local writer's cache update, before its locks go (lotus.md §2.3): its keys' CVTs as it left them.
                cvtsAfter.forEach((a, after) -> {
                    after.putLong(Cvt.cell(cells.get(a)[0]) + Cvt.CELL_VERSION, commitTs);
                    fill(a, node.fields().lotusKey(a.table, a.key), after, 0);
                });
                unlockAll(false); // returns before the remote releases are answered
                node.ended(this, runtime.timers().nowNs() - begun);
                return commitTs;
            }).onFailure(e -> forgetWritten()));
    }

    /**
     * Commit step 1 (lotus.md §2.4): the INVISIBLE writes and the redo record, in the same round trip, before T_commit
     * ({@code OneSidedTxn#logAhead}: version 0, each entry's token its read version + 1). The record decides nothing:
     * the commit happens at its first visible write, and recovery finishes a record only where a copy shows one
     * ({@link LotusLockKind#committedVersion}), else clears its INVISIBLE cells. A record whose WRITE failed and may
     * have landed gives the attempt up to recovery (under its locks); an attempt that aborts after its record was
     * logged withdraws it first ({@link #abort}).
     */
    private Future<Void> logWithInvisible() {
        final Future<Void> invisible = writeInvisible();
        final Future<io.scythe.txn.recovery.RedoLog.Appended> logged = logAhead();
        return Future.join(invisible, logged).transform(ar -> {
            if (logged.failed() && logged.cause() instanceof io.scythe.txn.recovery.RedoLog.RecordInDoubtException d) {
                // In doubt only on memory nodes a failover removes: an abort (its record withdrawn from the serving
                // copies, its cells cleared), not a give-up.
                return abortOrGiveUpAhead(d, "its redo record's WRITE failed before T_commit and may have landed");
            }
            return ar.failed() ? Future.failedFuture(invisible.failed() ? invisible.cause() : logged.cause())
                : Future.<Void>succeededFuture();
        });
    }


    /**
     * SI's first committer wins: a key read lock-free and then written is read again under its write lock, and a
     * version other than the one read (a newer one: it committed after T_start) aborts.
     */
    private Future<Void> recheckUnlocked() {
        if (bug == LotusModule.PlantedBug.NO_FIRST_COMMITTER_WINS) {
            unlockedReads.clear(); // the planted bug (tests only): written over whatever committed since
            return Future.succeededFuture();
        }
        final List<Future<Access>> checks = new ArrayList<>();
        for (final Access a : accesses) {
            if (a.dirty && unlockedReads.remove(a)) {
                final long read = a.readVersion;
                checks.add(fetchVersion(a, true).compose(x -> x.readVersion == read ? Future.succeededFuture(x)
                    : Future.failedFuture(refusedRead(a, "written since T_start (first committer wins)"))));
            }
        }
        return settle(checks);
    }

    /** The written accesses whose CVT this commit writes. */
    private List<Access> versioned() {
        final List<Access> out = new ArrayList<>();
        for (final Access a : accesses) {
            if (a.dirty || a.inserted) {
                out.add(a);
            }
        }
        return out;
    }

    /**
     * Commit step 1 (lotus.md §2.4): each written record's new version and its CVT cell, INVISIBLE, to the primary and
     * every backup (one doorbell per memory node): into the cell {@link Cvt#victim} picks (GC by overwriting the
     * oldest, and cells older than {@link Cvt#GC_AFTER_NS} cleared), or, on a CVT never written, a whole one holding
     * the home version and the new one; an inserted record gets a fresh CVT of its one version.
     */
    private Future<Void> writeInvisible() {
        final List<Access> written = versioned();
        return Replicas.locateAll(runtime, written).compose(v -> {
            final Map<String, List<java.util.function.Consumer<io.scythe.bridge.Doorbell>>> byNode = new LinkedHashMap<>();
            final long now = start.result();
            for (final Access a : written) {
                final int maxValue = a.partition.descriptor().schema().maxValueBytes();
                final int at = Cvt.offset(maxValue);
                final int n = node.versions();
                final int recordBytes = Cvt.recordBytes(maxValue);
                final boolean whole = a.inserted || !Cvt.written(a.image, at);
                final UnsafeBuffer out;
                final int from;
                final int bytes;
                final int cell;
                final byte cv;
                DirectBuffer value = a.deleting ? FREE : a.newValue;
                int length = a.deleting ? 0 : a.newLength;
                if (a.inserted && !a.dirty && a.newValue == null) { // its value went with the INSERT
                    final UnsafeBuffer own = inserts.ownValue(a.table, a.key);
                    if (own == null) {
                        throw new IllegalStateException("lotus: no value of inserted key " + a.key + " of " + a.table);
                    }
                    value = own;
                    length = own.capacity();
                }
                if (whole) {
                    out = new UnsafeBuffer(new byte[Cvt.room(maxValue, n)]);
                    Cvt.header(out, 0, a.key, Cvt.primaryId(a.partition.descriptor().schema().id()), n);
                    cv = 1;
                    cell = a.inserted ? 0 : 1;
                    if (!a.inserted) { // the home version, as cell 0
                        final int home = Cvt.recordOffset(maxValue, n, 0) - at;
                        Cvt.putCell(out, Cvt.cell(0), cv, true, a.deleted, a.deleted ? 0 : a.valueLength,
                            home + at, a.readVersion);
                        Cvt.putRecord(out, home, recordBytes, cv, a.image, ObjectLayout.VALUE_OFFSET,
                            a.deleted ? 0 : a.valueLength);
                    }
                    final int record = Cvt.recordOffset(maxValue, n, cell);
                    Cvt.putCell(out, Cvt.cell(cell), cv, true, a.deleting, length, record, Cvt.INVISIBLE);
                    Cvt.putRecord(out, record - at, recordBytes, cv, value, 0, length);
                    from = at;
                    bytes = out.capacity();
                } else {
                    cell = Cvt.victim(a.image, at);
                    cv = (byte) (Cvt.cv(a.image, at, cell) + 1);
                    final int record = Cvt.recordOffset(maxValue, n, cell);
                    // record then cell, as one contiguous image of [cell .. record] would not be: two WRITEs
                    out = new UnsafeBuffer(new byte[recordBytes + Cvt.CELL_BYTES]);
                    Cvt.putRecord(out, 0, recordBytes, cv, value, 0, length);
                    Cvt.putCell(out, recordBytes, cv, true, a.deleting, length, record, Cvt.INVISIBLE);
                    from = record;
                    bytes = recordBytes;
                }
                cells.put(a, new int[] {cell, cv});
                // The CVT this write leaves on the primary once visible (the cache's copy after the commit).
                final UnsafeBuffer after = new UnsafeBuffer(new byte[Cvt.cvtBytes(n)]);
                if (whole) {
                    after.putBytes(0, out, 0, after.capacity());
                } else {
                    after.putBytes(0, a.image, at, after.capacity());
                    after.putBytes(Cvt.cell(cell), out, recordBytes, Cvt.CELL_BYTES);
                    for (int i = 0; i < n; i++) {
                        if (i != cell && Cvt.expired(a.image, at, i, now)) {
                            after.putByte(Cvt.cell(i) + Cvt.CELL_VALID, (byte) 0);
                        }
                    }
                }
                cvtsAfter.put(a, after);
                final List<long[]> copies = copiesOf(a);
                for (int c = 0; c < copies.size(); c++) {
                    final long base = copies.get(c)[0];
                    final int rkey = (int) copies.get(c)[1];
                    final List<java.util.function.Consumer<io.scythe.bridge.Doorbell>> posts = byNode.computeIfAbsent(
                        nodeOf(a, c), k -> new ArrayList<>());
                    if (a.placeholderHome && a.inserted) {
                        // A one-sided insert's home, a placeholder (deleted, empty), gets the version its INSERT's
                        // would have had: should the commit not happen with its index slot written (a recovery that
                        // clears its cells, an abort after that WRITE failed in doubt), the key reads absent at it,
                        // as over an ABANDON, and its next insert revives it above it. On every copy: with the
                        // primary's only, such a tombstone differed from its backups' placeholders (at the loaded
                        // version; crash explorer, tpcc --crash-mn 1 --replicas 2 --mns 3, seeds 1, 4, 9).
                        final UnsafeBuffer version = new UnsafeBuffer(new byte[8]);
                        version.putLong(0, a.readVersion);
                        posts.add(b -> b.write(base + ObjectLayout.VERSION_OFFSET, rkey, version, 0, 8));
                    }
                    if (whole) {
                        posts.add(b -> b.write(base + from, rkey, out, 0, bytes));
                    } else {
                        final int cellAt = at + Cvt.cell(cell);
                        posts.add(b -> b.write(base + from, rkey, out, 0, bytes));
                        posts.add(b -> b.write(base + cellAt, rkey, out, bytes, Cvt.CELL_BYTES));
                        for (int i = 0; i < n; i++) { // GC: clear versions older than 500 ms
                            if (i != cell && Cvt.expired(a.image, at, i, now)) {
                                final int clearAt = at + Cvt.cell(i) + 1;
                                posts.add(b -> b.write(base + clearAt, rkey, FREE, 0, 1));
                            }
                        }
                    }
                }
            }
            invisibleWritten = true;
            return post(byNode, postedTo);
        });
    }

    /** Where {@code a}'s copies are: per copy (primary first, then the backups) its object's address and rkey. */
    private static List<long[]> copiesOf(final Access a) {
        final List<long[]> out = new ArrayList<>();
        out.add(new long[] {a.address(), a.rkey()});
        final List<Catalog.Replica> backups = a.partition.backups();
        for (int b = 0; b < backups.size(); b++) {
            out.add(new long[] {ObjectLayout.addressOf(a.backupPointers[b]),
                backups.get(b).descriptor().objects().rkey()});
        }
        return out;
    }

    private static String nodeOf(final Access a, final int copy) {
        return copy == 0 ? a.partition.node() : a.partition.backups().get(copy - 1).node();
    }

    /** Posts one doorbell per memory node of what {@code byNode} adds, again while refused for now. */
    private Future<Void> post(final Map<String, List<java.util.function.Consumer<io.scythe.bridge.Doorbell>>> byNode) {
        return post(byNode, null);
    }

    /** {@link #post}, each node's batch also added to {@code track} (if not {@code null}) under its memory node. */
    private Future<Void> post(final Map<String, List<java.util.function.Consumer<io.scythe.bridge.Doorbell>>> byNode,
                              final Map<String, List<Future<?>>> track) {
        final List<Future<io.scythe.bridge.Doorbell>> posted = new ArrayList<>();
        byNode.forEach((mn, posts) -> {
            final Future<io.scythe.bridge.Doorbell> batch = untilAccepted(() -> runtime.channel(mn).compose(ch -> {
                final io.scythe.bridge.Doorbell b = ch.doorbell();
                posts.forEach(p -> p.accept(b));
                return b.post();
            }));
            posted.add(batch);
            if (track != null) {
                track.computeIfAbsent(mn, k -> new ArrayList<>()).add(batch);
            }
        });
        return settle(posted);
    }

    /**
     * An abort's undo of its INVISIBLE writes: every new cell cleared (not valid), on the primary and every backup.
     * (The visible write is the write-back's, backups first: {@link #commit}.)
     */
    private Future<Void> clearCells() {
        final Map<String, List<java.util.function.Consumer<io.scythe.bridge.Doorbell>>> byNode = new LinkedHashMap<>();
        cells.forEach((a, c) -> {
            final int at = Cvt.offset(a.partition.descriptor().schema().maxValueBytes()) + Cvt.cell(c[0]);
            final List<long[]> copies = copiesOf(a);
            for (int i = 0; i < copies.size(); i++) {
                final long base = copies.get(i)[0];
                final int rkey = (int) copies.get(i)[1];
                byNode.computeIfAbsent(nodeOf(a, i), k -> new ArrayList<>()).add(b -> writeCleared(b, base + at, rkey));
            }
        });
        return post(byNode, postedTo);
    }

    /** The visible write of one cell (commit step 3, and recovery's): T_commit ({@code ts}) into its version word. */
    private static void writeVisible(final io.scythe.bridge.Doorbell batch, final long cellAddress, final int rkey,
                                     final DirectBuffer ts) {
        batch.write(cellAddress + Cvt.CELL_VERSION, rkey, ts, 0, 8);
    }

    /**
     * The home's version word set to {@code token} ({@link #lockToken}), after the visible write of the object's cell
     * in the same doorbell (so it lands after it): the one word of the home a commit writes (its value stays as
     * loaded: readers take versions from the CVT). Recovery's test of whether the commit's write-back landed
     * ({@link LotusLockKind#heldBy}), the settling of a gone writer's cell ({@link #settleInvisible}) and the copies'
     * comparison read it.
     */
    private static void writeLanded(final io.scythe.bridge.Doorbell batch, final long object, final int rkey,
                                    final long token) {
        final UnsafeBuffer word = new UnsafeBuffer(new byte[8]);
        word.putLong(0, token);
        batch.write(object + ObjectLayout.VERSION_OFFSET, rkey, word, 0, 8);
    }

    /** Clears one cell (an abort's INVISIBLE version, or a gone writer's): its valid byte to 0. */
    private static void writeCleared(final io.scythe.bridge.Doorbell batch, final long cellAddress, final int rkey) {
        batch.write(cellAddress + Cvt.CELL_VALID, rkey, FREE, 0, 1);
    }

    /**
     * Recovery's part of the visible write (lotus.md §2.7, {@link LotusLockKind#recovered}), for a commit at
     * {@code commitTs} whose redo record names the object at {@code pointer} of {@code partition} (backups at
     * {@code backupPointers}), whose write-back installs {@code token}, once recovery finished (or found finished)
     * its home. Unless the home is at {@code token} a later commit wrote the object, whose own entry or writer made
     * its cells visible: nothing to do. Else, on each copy whose CVT has no visible cell at {@code commitTs} (the
     * visible write did not land there, so the dead coordinator never released the key's lock, and nobody else wrote
     * that CVT since), its INVISIBLE cell, this commit's, gets version {@code commitTs}: lock-free readers see the
     * recovered version instead of aborting, and the key's next writer neither reads the older version nor
     * overwrites this one (it picks the newest visible cell and never reuses it). Its CVs are left as written, so the
     * cell stays whole.
     */
    static Future<Void> recoverCells(final TxnRuntime runtime, final Catalog.Partition partition, final long pointer,
                                     final long[] backupPointers, final long token, final long commitTs) {
        final long address = ObjectLayout.addressOf(pointer);
        final int rkey = partition.descriptor().objects().rkey();
        final int at = Cvt.offset(partition.descriptor().schema().maxValueBytes());
        final UnsafeBuffer header = new UnsafeBuffer(new byte[ObjectLayout.HEADER_BYTES]);
        return runtime.channel(partition.node()).compose(ch -> ch.read(address, rkey, header, 0, header.capacity()))
            .compose(v -> {
                if ((header.getLong(ObjectLayout.VERSION_OFFSET)
                    & ~ObjectLayout.VERSION_BUSY) != token) {
                    return Future.succeededFuture();
                }
                // The backups first, then the primary, as the commit's own visible write (issue 19, review item 3):
                // a version a reader saw on the primary is visible on every backup a failover could promote.
                final List<Future<Void>> copies = new ArrayList<>();
                final List<Catalog.Replica> backups = partition.backups();
                for (int b = 0; b < backupPointers.length; b++) {
                    final long object = ObjectLayout.addressOf(backupPointers[b]);
                    copies.add(recoverCell(runtime, backups.get(b).node(), object, object + at,
                        backups.get(b).descriptor().objects().rkey(), token, commitTs));
                }
                return settle(copies).compose(x -> recoverCell(runtime, partition.node(), -1, address + at, rkey,
                    token, commitTs));
            });
    }

    /**
     * Recovery of a decided commit's entry on an object whose primary failed over ({@link LotusLockKind#settlePromoted},
     * issue 19 review finding 1): on each serving copy ({@code copies}, primary first, at {@code pointers}; 0: a copy
     * not known to the record) what the commit's visible write would have written where it did not land: its INVISIBLE
     * cell made visible at {@code commitTs}, then the home's version word set to {@code token} where below it (an
     * inserted object's home written whole, as its write-back writes a backup's placeholder: value, flags, version,
     * {@code CnRecovery#addEntryWrites}). Not the home's value: a commit writes only the version word, so the shared
     * settling's value made a settled copy differ from one the write-back had reached (explorer seed 23: two copies of
     * checking key 10 differed, the promoted one's cell left INVISIBLE, money +20,000). The backups first, then the
     * primary, as the commit's visible write. Under the dead coordinator's locks nobody else writes the copies, so a
     * cell at {@code commitTs} is this commit's and settling again writes nothing.
     *
     * @return {@code token} when some copy was written, else -1
     */
    static Future<Long> settlePromoted(final TxnRuntime runtime, final List<Catalog.Replica> copies,
                                       final long[] pointers, final int op, final long token, final long commitTs,
                                       final DirectBuffer value, final int valueLength) {
        if (op == 0) {
            return Future.succeededFuture(-1L); // a lock only: nothing written
        }
        final List<Future<Boolean>> backups = new ArrayList<>();
        for (int c = 1; c < copies.size(); c++) {
            if (pointers[c] != 0) {
                backups.add(settleCopy(runtime, copies.get(c), pointers[c], op, token, commitTs, value, valueLength));
            }
        }
        return settle(backups).compose(v -> pointers[0] == 0 ? Future.succeededFuture(false)
            : settleCopy(runtime, copies.get(0), pointers[0], op, token, commitTs, value, valueLength))
            .map(primary -> {
                boolean wrote = primary;
                for (final Future<Boolean> b : backups) {
                    wrote |= b.result();
                }
                return wrote ? token : -1L;
            });
    }

    /** {@link #settlePromoted} on one copy: one READ from its home's header to its CVT's head, then the CVT. */
    private static Future<Boolean> settleCopy(final TxnRuntime runtime, final Catalog.Replica copy,
                                              final long pointer, final int op, final long token,
                                              final long commitTs, final DirectBuffer value, final int valueLength) {
        final long object = ObjectLayout.addressOf(pointer);
        final int rkey = copy.descriptor().objects().rkey();
        final int at = Cvt.offset(copy.descriptor().schema().maxValueBytes());
        final UnsafeBuffer read = new UnsafeBuffer(new byte[at + Cvt.HEADER_BYTES]);
        // A revival's home is written whole too, as its write-back writes it (LotusTxn#wholeHomesOfRevivals).
        final boolean inserted = (op & (io.scythe.txn.recovery.RedoRecordDescriptor.OP_INSERTED
            | io.scythe.txn.recovery.RedoRecordDescriptor.OP_REVIVE)) != 0;
        return runtime.channel(copy.node()).compose(ch -> ch.read(object, rkey, read, 0, read.capacity())
            .compose(v -> {
                if ((read.getShort(ObjectLayout.INCARNATION_OFFSET) & 0xffff) != ObjectLayout.incarnationOf(pointer)) {
                    return Future.<Boolean>failedFuture(new IllegalStateException("redo record names an object of "
                        + copy.descriptor().schema().name() + " on " + copy.node() + " whose slot was reused: a "
                        + "copy's slot is freed only after its commit settled"));
                }
                final long home = read.getLong(ObjectLayout.VERSION_OFFSET) & ~ObjectLayout.VERSION_BUSY;
                final boolean homeBehind = home < token;
                final UnsafeBuffer head = new UnsafeBuffer(read, at, Cvt.HEADER_BYTES);
                final Future<Integer> cell = !Cvt.written(head, 0) ? Future.succeededFuture(Cvt.NONE)
                    : readCells(ch, object + at, rkey, Cvt.versions(head, 0)).map(cvt -> toMakeVisible(cvt,
                    commitTs));
                return cell.compose(invisible -> {
                    if (invisible == Cvt.NONE && !homeBehind) {
                        return Future.succeededFuture(false);
                    }
                    final io.scythe.bridge.Doorbell batch = ch.doorbell();
                    if (inserted && homeBehind) { // its write-back writes the home whole, version last, then the cell
                        io.scythe.txn.recovery.CnRecovery.addEntryWrites(batch, object, rkey, op, true, token, value,
                            valueLength);
                    }
                    if (invisible != Cvt.NONE) {
                        final UnsafeBuffer ts = new UnsafeBuffer(new byte[8]);
                        ts.putLong(0, commitTs);
                        writeVisible(batch, object + at + Cvt.cell(invisible), rkey, ts);
                    }
                    if (!inserted && homeBehind) {
                        writeLanded(batch, object, rkey, token);
                    }
                    return batch.post().map(true);
                });
            }).onFailure(e -> {
                if (!io.scythe.txn.Refusal.forNow(e)) {
                    runtime.forgetChannel(copy.node(), ch);
                }
            }));
    }

    /** The {@code n} cells of the CVT at {@code cvtAddress} (one READ). */
    private static Future<UnsafeBuffer> readCells(final io.scythe.bridge.RdmaChannel ch, final long cvtAddress,
                                                  final int rkey, final int n) {
        final UnsafeBuffer cvt = new UnsafeBuffer(new byte[Cvt.cvtBytes(n)]);
        return ch.read(cvtAddress, rkey, cvt, 0, cvt.capacity()).map(cvt);
    }

    /**
     * The cell of {@code cvt} that a recovered commit at {@code commitTs} makes visible: its INVISIBLE one, or
     * {@link Cvt#NONE} when a valid cell is at {@code commitTs} already (its visible write landed) or none is INVISIBLE.
     */
    private static int toMakeVisible(final DirectBuffer cvt, final long commitTs) {
        int invisible = Cvt.NONE;
        for (int i = 0; i < Cvt.versions(cvt, 0); i++) {
            if (Cvt.valid(cvt, 0, i) && Cvt.version(cvt, 0, i) == commitTs) {
                return Cvt.NONE;
            }
            if (Cvt.valid(cvt, 0, i) && Cvt.version(cvt, 0, i) == Cvt.INVISIBLE) {
                invisible = i;
            }
        }
        return invisible;
    }

    /**
     * Recovery of a record logged before T_commit ({@link LotusLockKind#decidedByData}): the version this commit made
     * visible on some copy of the object at {@code pointers} (primary first, 0: a copy not known) of
     * {@code partition}, or 0 ({@link #committedIn} per copy, the earliest of them). A copy whose object is another
     * incarnation of its slot than the record's pointer names is not this commit's (skipped).
     */
    static Future<Long> committedVersion(final TxnRuntime runtime, final Catalog.Partition partition,
                                         final long[] pointers, final boolean inserted, final long entryToken) {
        final List<Future<Long>> copies = new ArrayList<>();
        forEachCopy(partition, pointers, (node, pointer, cvtAddress, rkey) -> copies.add(readCvt(runtime, node,
            pointer, cvtAddress, rkey).map(cvt -> cvt == null ? 0L : committedIn(cvt, inserted, entryToken))));
        return Future.all(copies).map(v -> {
            long found = 0;
            for (final Future<Long> f : copies) {
                found = io.scythe.txn.spi.LockKind.earlierFound(found, f.result());
            }
            return found;
        });
    }

    /**
     * The version the commit whose record entry carries {@code entryToken} (its read version + 1) made visible in
     * {@code cvt}, one copy's CVT, or 0. Under the dead coordinator's locks nobody else wrote the CVT since it read
     * it, and it read the newest visible version ({@code entryToken} - 1): so a visible cell at or above
     * {@code entryToken} is this commit's, at its T_commit. On an object it inserted the read version is the INSERT's
     * ({@code Table#insertLocked}: above every version any earlier incarnation of the key or of the slot had, and
     * below T_commit, fetched after it): a visible cell at or above {@code entryToken} - 1 is this commit's; one below
     * is an earlier incarnation's left in a reused slot whose whole-CVT INVISIBLE write never landed (before, any
     * visible cell was taken: such a record was rolled forward at an old version).
     */
    static long committedIn(final DirectBuffer cvt, final boolean inserted, final long entryToken) {
        final long lowest = inserted ? entryToken - 1 : entryToken;
        long found = 0;
        for (int i = 0; i < Cvt.versions(cvt, 0); i++) {
            final long v = Cvt.version(cvt, 0, i);
            if (Cvt.valid(cvt, 0, i) && v != Cvt.INVISIBLE && v >= lowest) {
                found = io.scythe.txn.spi.LockKind.earlierFound(found, v);
            }
        }
        return found;
    }

    /**
     * Recovery of a record logged before T_commit that no copy shows committed ({@link #committedVersion} 0 on every
     * entry): its INVISIBLE cells cleared on every copy, under the dead coordinator's locks (so every INVISIBLE cell
     * there is its own, or a gone writer's that a reader would clear the same way). This also closes what recovery
     * could not do while the record followed T_commit: name the INVISIBLE cells of a dead coordinator's attempt.
     */
    static Future<Void> undoCells(final TxnRuntime runtime, final Catalog.Partition partition, final long[] pointers) {
        final List<Future<Void>> copies = new ArrayList<>();
        forEachCopy(partition, pointers, (node, pointer, cvtAddress, rkey) -> copies.add(readCvt(runtime, node,
            pointer, cvtAddress, rkey).compose(cvt -> {
                if (cvt == null || Cvt.invisible(cvt, 0) == Cvt.NONE) {
                    return Future.succeededFuture();
                }
                return runtime.channel(node).compose(ch -> {
                    final io.scythe.bridge.Doorbell batch = ch.doorbell();
                    for (int i = 0; i < Cvt.versions(cvt, 0); i++) {
                        if (Cvt.valid(cvt, 0, i) && Cvt.version(cvt, 0, i) == Cvt.INVISIBLE) {
                            writeCleared(batch, cvtAddress + Cvt.cell(i), rkey);
                        }
                    }
                    return batch.post().<Void>mapEmpty();
                });
            })));
        return settle(copies);
    }

    /** What {@link #forEachCopy} calls per copy: its memory node, its object's pointer, its CVT's address and rkey. */
    @FunctionalInterface
    private interface CopyVisitor {
        void visit(String node, long pointer, long cvtAddress, int rkey);
    }

    /** Visits each known copy ({@code pointers}: primary first, then {@code partition}'s backups; 0 skipped). */
    private static void forEachCopy(final Catalog.Partition partition, final long[] pointers,
                                    final CopyVisitor visitor) {
        final int at = Cvt.offset(partition.descriptor().schema().maxValueBytes());
        for (int c = 0; c < pointers.length; c++) {
            if (pointers[c] == 0) {
                continue;
            }
            final String node = c == 0 ? partition.node() : partition.backups().get(c - 1).node();
            final int rkey = c == 0 ? partition.descriptor().objects().rkey()
                : partition.backups().get(c - 1).descriptor().objects().rkey();
            visitor.visit(node, pointers[c], ObjectLayout.addressOf(pointers[c]) + at, rkey);
        }
    }

    /**
     * The CVT at {@code cvtAddress} on {@code node} (READs: its object's header, its head, then its cells), or null if
     * never written or if the object is another incarnation of its slot than {@code pointer} names (freed and reused
     * since: its CVT is not the record's object's, as {@code CnRecovery}'s entries skip such an object).
     */
    private static Future<UnsafeBuffer> readCvt(final TxnRuntime runtime, final String node, final long pointer,
                                                final long cvtAddress, final int rkey) {
        final UnsafeBuffer header = new UnsafeBuffer(new byte[ObjectLayout.HEADER_BYTES]);
        final UnsafeBuffer head = new UnsafeBuffer(new byte[Cvt.HEADER_BYTES]);
        return runtime.channel(node).compose(ch -> ch.read(ObjectLayout.addressOf(pointer), rkey, header, 0,
            header.capacity()).compose(x -> ch.read(cvtAddress, rkey, head, 0, head.capacity())).compose(v -> {
            if (!Cvt.written(head, 0) || (header.getShort(ObjectLayout.INCARNATION_OFFSET) & 0xffff)
                != ObjectLayout.incarnationOf(pointer)) {
                return Future.<UnsafeBuffer>succeededFuture(null);
            }
            final UnsafeBuffer cvt = new UnsafeBuffer(new byte[Cvt.cvtBytes(Cvt.versions(head, 0))]);
            return ch.read(cvtAddress, rkey, cvt, 0, cvt.capacity()).map(cvt);
        }).onFailure(e -> {
            if (!io.scythe.txn.Refusal.forNow(e)) {
                runtime.forgetChannel(node, ch);
            }
        }));
    }

    /**
     * {@link #recoverCells} on one copy, whose CVT is at {@code cvtAddress}. On a backup ({@code object}, -1 on the
     * primary, whose home is at {@code token}) the home's version word is the visible write's too, after the cell
     * ({@link #writeLanded}): where it is still below {@code token} it is set to it, so the copies agree (issue 19,
     * Fig. 15's run: three CNs crashed at once left 11 backups whose cell recovery made visible with the home word at
     * 0, "version 7287 vs 0"; the dead coordinators' own doorbells to those backups never landed).
     */
    private static Future<Void> recoverCell(final TxnRuntime runtime, final String node, final long object,
                                            final long cvtAddress, final int rkey, final long token,
                                            final long commitTs) {
        // On a backup one READ from its home's header to the CVT's head (the slot's room is contiguous): no verb added.
        final int headAt = object < 0 ? 0 : (int) (cvtAddress - object);
        final UnsafeBuffer read = new UnsafeBuffer(new byte[headAt + Cvt.HEADER_BYTES]);
        final UnsafeBuffer head = new UnsafeBuffer(read, headAt, Cvt.HEADER_BYTES);
        final UnsafeBuffer home = read;
        return runtime.channel(node).compose(ch -> ch.read(object < 0 ? cvtAddress : object, rkey, read, 0,
            read.capacity()).compose(v -> {
            if (!Cvt.written(head, 0)) {
                return Future.succeededFuture(); // its writer wrote no INVISIBLE version (a CVT is written whole first)
            }
            final int n = Cvt.versions(head, 0);
            final UnsafeBuffer cvt = new UnsafeBuffer(new byte[Cvt.cvtBytes(n)]);
            return ch.read(cvtAddress, rkey, cvt, 0, cvt.capacity()).compose(w -> {
                final boolean homeBehind = object >= 0
                    && (home.getLong(ObjectLayout.VERSION_OFFSET) & ~ObjectLayout.VERSION_BUSY) < token;
                int invisible = Cvt.NONE;
                boolean landed = false;
                for (int i = 0; i < n; i++) {
                    if (Cvt.valid(cvt, 0, i) && Cvt.version(cvt, 0, i) == commitTs) {
                        landed = true; // its visible write landed here (its home word maybe not: cut after the cell)
                    }
                    if (Cvt.valid(cvt, 0, i) && Cvt.version(cvt, 0, i) == Cvt.INVISIBLE) {
                        invisible = i;
                    }
                }
                if (!landed && invisible == Cvt.NONE || landed && !homeBehind) {
                    return Future.succeededFuture();
                }
                final io.scythe.bridge.Doorbell batch = ch.doorbell();
                if (!landed) {
                    final UnsafeBuffer ts = new UnsafeBuffer(new byte[8]);
                    ts.putLong(0, commitTs);
                    writeVisible(batch, cvtAddress + Cvt.cell(invisible), rkey, ts);
                }
                if (homeBehind) {
                    writeLanded(batch, object, rkey, token);
                }
                return batch.post().<Void>mapEmpty();
            });
        }).onFailure(e -> {
            if (!io.scythe.txn.Refusal.forNow(e)) {
                runtime.forgetChannel(node, ch);
            }
        }));
    }

    /**
     * Releases every lock this attempt asked for: this node's directly, each other node's with one message (a release
     * of a key not held is void there, so keys whose grant is in doubt are released too). Idempotent.
     */
    private Future<Void> unlockAll(final boolean wait) {
        for (final long key : localKeys) {
            node.locks().release(key, id);
        }
        localKeys.clear();
        final List<Future<Void>> releases = new ArrayList<>();
        remoteKeys.forEach((owner, keys) -> {
            final long[] all = keys.stream().mapToLong(Long::longValue).toArray();
            for (int from = 0; from < all.length; from += node.keysPerMessage()) {
                final long[] k = java.util.Arrays.copyOfRange(all, from, Math.min(all.length,
                    from + node.keysPerMessage()));
                releases.add(release(owner, LockRpc.request(id, node.index(), k, null, k.length)));
            }
        });
        remoteKeys.clear();
        return wait ? settle(releases) : Future.succeededFuture();
    }

    /**
     * Sends a release until its owner answers it ({@link #untilReleased}): an abort waits for its first
     * {@link #RELEASE_TRIES} tries only. Stops when the owner is dead (its lock table went with it) or the run is over.
     */
    private Future<Void> release(final int owner, final UnsafeBuffer message) {
        if (node.cluster().gone(owner)) {
            return Future.succeededFuture(); // its lock table went with it
        }
        // The first try is sent even once the run is over (a simulated run drains its attempts, whose releases must
        // land before its end checks); only retries stop then.
        return untilReleased(runtime.timers(), () -> node.peers().call(node.name(owner), LockRpc.RELEASE, message),
            () -> node.cluster().gone(owner) || node.cluster().over(), RELEASE_TRIES, RELEASE_GIVE_UP_NS,
            () -> node.releasesGivenUp.increment());
    }

    /**
     * Sends a release ({@code send}) again, after pauses doubling from {@link #RELEASE_RETRY_NS} up to
     * {@link #RELEASE_PAUSE_MAX_NS}, while it fails, until {@code giveUpNs} passed or {@code pointless} says so before a
     * retry (then
     * {@code gaveUp} runs unless pointless). A release is idempotent and is sent after every acquire it may undo, on
     * the same ring (loop to paired loop), so the owner serves it after a grant that came too late for its requester
     * (an acquire whose call timed out while the owner was stalled; issue 19's chaos run left a lock held on a live
     * node when a release gave up after four tries 1 ms apart). The returned future completes once the release was
     * answered, given up, or had {@code waitTries} failed tries (the retries go on then without holding the caller).
     */
    static Future<Void> untilReleased(final io.scythe.txn.runtime.Timers timers,
                                      final java.util.function.Supplier<Future<?>> send,
                                      final java.util.function.BooleanSupplier pointless, final int waitTries,
                                      final long giveUpNs, final Runnable gaveUp) {
        final Promise<Void> waited = Promise.promise();
        releaseTry(timers, send, pointless, waitTries, timers.nowNs() + giveUpNs, gaveUp, 1, RELEASE_RETRY_NS, waited);
        return waited.future();
    }

    private static void releaseTry(final io.scythe.txn.runtime.Timers timers,
                                   final java.util.function.Supplier<Future<?>> send,
                                   final java.util.function.BooleanSupplier pointless, final int waitTries,
                                   final long deadlineNs, final Runnable gaveUp, final int tries, final long pauseNs,
                                   final Promise<Void> waited) {
        if (tries > 1 && pointless.getAsBoolean()) {
            waited.tryComplete();
            return;
        }
        send.get().onComplete(ar -> {
            if (ar.succeeded()) {
                waited.tryComplete();
                return;
            }
            if (tries >= waitTries) {
                waited.tryComplete();
            }
            if (timers.nowNs() + pauseNs > deadlineNs) {
                gaveUp.run();
                waited.tryComplete();
                return;
            }
            timers.after(pauseNs).onComplete(v -> releaseTry(timers, send, pointless, waitTries, deadlineNs, gaveUp,
                tries + 1, Math.min(RELEASE_PAUSE_MAX_NS, pauseNs * 2), waited));
        });
    }

    /**
     * A record is created by its memory node's INSERT with this attempt's id in its CAS word (the memory node's
     * reclamation leaves it alone until then); the write-back clears the word with a WRITE of 0. No transaction reads
     * that word: the CN locks order every access.
     */
    @Override
    protected Table.InsertLock insertLock() {
        return Table.InsertLock.CAS_WORD;
    }

    /**
     * An aborted attempt's slots it posted WRITEs to (TODO lotusins-return, helper lotusret): each back to the node's
     * pool once {@link SlotPool#reusable} (its redo record {@code withdrawn}, its index slot never written, every
     * batch it posted to the slot's memory node done), else leaked. Called once its undo ({@link #clearCells}) is
     * over. Its INVISIBLE phase must be over too (a batch of it pending could land on the slot's next insert): an
     * abort while it is in flight leaks them. An index slot naming them is never posted after the abort began
     * ({@link #writeIndexSlots} refuses once {@code over}). (Helper lotusret waited for the commit attempt's future to
     * complete instead; but a commit's own failure aborts ({@code OneSidedTxn#commitFailed}) before that future
     * completes, so every written slot still leaked: phantom seed 16's, traced by helper lotus19.) The slot's next insert writes its CVT whole and its placeholder home's version, so nothing of this
     * attempt's writes shows; no reader reaches it meanwhile (no index slot names it, and the record that did is
     * withdrawn, so no recovery does either). Before, all of them leaked: explorer phantom {@code --crash-mn 1
     * --replicas 2 --mns 3} seed 16 took a 1-object table's one slot so, and every later insert failed FULL.
     */
    private void returnWrittenSlots(final Map<Long, String> written, final boolean withdrawn) {
        final boolean phaseOver = invisiblePhase == null || invisiblePhase.isComplete();
        written.forEach((pointer, pool) -> node.slots().settleWritten(pool, pointer, phaseOver
            && SlotPool.reusable(withdrawn, indexSlotsPosted, postedTo.get(takenSlotNodes.get(pointer)))));
    }

    /** Lotus's locks as the redo records name them ({@link LotusLockKind}). */
    @Override
    protected io.scythe.txn.spi.LockKind lockKind() {
        return LotusLockKind.INSTANCE;
    }

    /** The version the write-back installs on {@code a}: recovery finishes an entry only below it. */
    @Override
    protected long lockToken(final Access a) {
        return ObjectLayout.versionAfter(commitTs, a.readVersion);
    }

    @Override
    public Future<Void> abort() {
        if (aborted == null && finished) {
            // Committed, or given up past its point of no return (or with its record logged ahead in doubt): what it
            // wrote and holds is its commit's or recovery's, so a client's abort changes nothing.
            aborted = Future.succeededFuture();
        }
        if (aborted == null) {
            over = true;
            node.ended(this, -1);
            for (final Access a : accesses) {
                if (a.placeholderHome && a.inserted) {
                    a.locked = false; // no INSERT to abandon: its index slot is unwritten, or a tombstone (see below)
                }
            }
            // Slots no WRITE was posted to go back at once; the others once the abort's undo is done and its record
            // withdrawn (returnWrittenSlots).
            final Map<Long, String> written = new LinkedHashMap<>();
            takenSlots.forEach((pointer, pool) -> {
                if (slotsPosted) {
                    written.put(pointer, pool);
                } else {
                    node.slots().giveBack(pool, pointer);
                }
            });
            takenSlots.clear();
            forgetWritten(); // its INVISIBLE writes (cleared or not) changed the CVTs it wrote
            // INVISIBLE versions it may have written are cleared before its locks go. Also once committing (T_commit
            // fetched; review finding 6: skipped then before, which left the cells of a commit refused between
            // T_commit and its write-back, a failover's epoch check or its backups' lookup, for readers to settle):
            // an attempt is aborted only while its write-back is undecided (OneSidedTxn#commitFailed; a finished
            // one returned above), and the redo step decides before it posts any visible write
            // (RedoStep#startWriteBack), so no cell of it is visible anywhere. Decided and not finished (no path
            // known), its cells are left to recovery, as its record and locks would be.
            final Future<Void> cleared = invisibleWritten && !writeBackDecided()
                ? clearCells().recover(e -> Future.succeededFuture()) : Future.succeededFuture();
            // Settlements its reads posted land before its locks go (a WRITE in flight after the release could clear
            // the next writer's cell).
            final Future<Void> settled = settle(new ArrayList<>(settling)).recover(e -> Future.succeededFuture());
            // A redo record logged ahead is withdrawn before the locks go (else a later recovery could read it and
            // clear the next writer's INVISIBLE cell); one that cannot be is given up to recovery, locks held.
            aborted = Future.all(cleared, settled).<Void>mapEmpty()
                .compose(v -> withdrawAhead().transform(w -> {
                    returnWrittenSlots(written, w.succeeded());
                    return w.succeeded() ? Future.<Void>succeededFuture() : giveUpAhead("its redo record, logged "
                        + "before T_commit, could not be withdrawn", w.cause());
                }))
                .compose(v -> releaseHeld(a -> Future.succeededFuture())).compose(v -> unlockAll(true));
        }
        return aborted;
    }
}
