package io.scythe.txn.lotus;

import io.scythe.rrpc.RpcException;
import io.scythe.rrpc.RpcReply;
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
import io.vertx.core.Future;
import io.vertx.core.Promise;
import org.agrona.DirectBuffer;
import org.agrona.concurrent.UnsafeBuffer;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * One attempt of Lotus's lock-first protocol (lotus.md §2.4), under serializability:
 * <ol>
 *   <li>Begin: T_start from the timestamp service (requested with the first lock phase, which it does not depend
 *       on).</li>
 *   <li>Each execution phase (the reads a procedure issues together) locks first: a read lock for a read, a write
 *       lock for a read-for-update. A key of this node's shards is locked in its own table with a CPU CAS; the keys
 *       of each other compute node go in one message to it ({@link LockRpc}), loop to paired loop. Any refusal (a
 *       conflict, a full bucket, a counter overflow, a shard this node does not own) aborts: no waiting.</li>
 *   <li>Then the data, with one-sided READs of the memory nodes; a version newer than T_start aborts.</li>
 *   <li>Commit: keys written but only read-locked are upgraded (one more lock phase), T_commit is taken, the new
 *       values are written back with one-sided WRITEs (no validation: every key is locked), and the locks are
 *       released, returning before the remote releases are answered.</li>
 * </ol>
 * No RDMA CAS or FAA on this path: memory nodes see READs and WRITEs only.
 *
 * <p>Not yet as the paper (issue 19): the memory nodes keep one version per record in place (no CVT cells, INVISIBLE
 * write and visible write, version-table cache, log regions), so read-only transactions take read locks like any
 * other (the paper's lock-free read-only path needs the versions), and SI is not offered. Inserts lock their key and
 * index bucket ({@link LotusKey#indexBucket}) as they are issued, and the records are created by the memory node's
 * INSERT RPC at commit (the paper writes the CVT into the bucket one-sided under the bucket lock: our hash index is
 * maintained by the memory node's CPU); deletes write a tombstone as any write.
 */
final class LotusTxn extends OneSidedTxn {
    private static final int RELEASE_TRIES = 4;
    private static final long RELEASE_RETRY_NS = 1_000_000;
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

    LotusTxn(final TxnRuntime runtime) {
        super(runtime);
        this.loop = runtime.extensionOrNull(LotusNode.LOOP);
        if (loop == null) {
            throw new IllegalStateException("lotus runs only where its compute nodes have CN-to-CN messaging and "
                + "lock tables: the simulator (scythe sim) sets them up; scythe bench and cluster nodes do not yet "
                + "(issue 19)");
        }
        this.node = loop.node();
        this.begun = runtime.timers().nowNs();
        node.began(this);
    }

    private final long begun;
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
        }
        return doomed == null ? Future.succeededFuture(value)
            : Future.failedFuture(new AbortException(AbortReason.LOCKED, "lotus: " + doomed));
    }

    @Override
    public String mode() {
        return "lotus/sr";
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
            return readOnlyRead(table, key); // nobody writes it: no lock
        }
        return lockThenRead(table, key, false);
    }

    @Override
    public Future<UnsafeBuffer> readForUpdate(final String table, final long key) {
        if (readOnlyTable(table)) {
            return readOnlyRead(table, key);
        }
        return lockThenRead(table, key, true);
    }

    /**
     * One execution phase of a key: its lock first (it depends on the key only, not on where the record is, so the
     * keys a procedure asks for together go in one message per compute node), then the record.
     */
    private Future<UnsafeBuffer> lockThenRead(final String table, final long key, final boolean write) {
        return Future.all(start(), lock(table, key, write)).compose(this::unlessDoomed).compose(v -> readVia(table, key,
            a -> once(a, this::readImage).compose(x -> {
                if (x.readVersion > start.result()) {
                    return Future.failedFuture(new AbortException(AbortReason.VALIDATION, "key " + x.key + " of "
                        + x.table + " has version " + x.readVersion + ", newer than T_start " + start.result()));
                }
                return Future.succeededFuture(x);
            })));
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
        if (node.cluster().dead(h.owner)) { // its shards are served by nobody until its recovery is over
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
        if (node.cluster().dead(r.held().owner)) {
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
     * created at commit ({@code Inserts#install}), after every lock is held. A reader of the absent key holds its read
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

    /** A delete is a write: its key's lock is upgraded at commit as any written key's. */
    @Override
    public void delete(final String table, final long key) {
        super.delete(table, key);
    }

    @Override
    public Future<Long> commit() {
        mark(Stage.EXECUTE);
        if (writesNothing()) {
            // Every key read is read-locked: nothing changed since T_start.
            return finishCommit(start().compose(this::unlessDoomed).map(ts -> {
                unlockAll(false);
                node.ended(this, runtime.timers().nowNs() - begun);
                return ts;
            }));
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
                .compose(v -> installInserts(Table.InsertLock.CAS_WORD, id, (a, inserted) -> { })))
            .compose(v -> staged(Stage.TIMESTAMP, runtime.tso().next()))
            .compose(commitTs -> {
                if (doomed != null) {
                    return unlessDoomed(commitTs);
                }
                committing = true; // from here it commits (or gives up past its point of no return)
                this.commitTs = commitTs;
                return Future.succeededFuture(commitTs);
            })
            .compose(commitTs -> staged(Stage.WRITE_BACK, writeBack(commitTs, a -> a.inserted,
                    (batch, a) -> batch.write(CasLock.lockAddress(a.pointer), a.rkey(), FREE, 0, 8)))
                .map(commitTs))
            .map(commitTs -> {
                unlockAll(false); // returns before the remote releases are answered
                node.ended(this, runtime.timers().nowNs() - begun);
                return commitTs;
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
                releases.add(release(owner, LockRpc.request(id, node.index(), k, null, k.length), RELEASE_TRIES));
            }
        });
        remoteKeys.clear();
        return wait ? settle(releases) : Future.succeededFuture();
    }

    /** Sends a release, again after a pause while it fails (it is idempotent); gives up on a node that never answers. */
    private Future<Void> release(final int owner, final UnsafeBuffer message, final int tries) {
        if (node.cluster().dead(owner)) {
            return Future.succeededFuture(); // its lock table went with it
        }
        return node.peers().call(node.name(owner), LockRpc.RELEASE, message).<Void>mapEmpty()
            .recover(e -> tries <= 1 ? Future.succeededFuture() // dead: its lock table went with it
                : runtime.timers().after(RELEASE_RETRY_NS).compose(v -> release(owner, message, tries - 1)));
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

    /** Lotus's locks as the redo records name them ({@link LotusLockKind}). */
    @Override
    protected io.scythe.txn.spi.LockKind lockKind() {
        return LotusLockKind.INSTANCE;
    }

    /** The version the write-back installs on {@code a}: recovery finishes an entry only below it. */
    @Override
    protected long lockToken(final Access a) {
        return io.scythe.storage.ObjectLayout.versionAfter(commitTs, a.readVersion);
    }

    @Override
    public Future<Void> abort() {
        if (aborted == null) {
            node.ended(this, -1);
            aborted = releaseHeld(a -> Future.succeededFuture()).compose(v -> unlockAll(true));
        }
        return aborted;
    }
}
