package io.scythe.txn.onesided;

import io.scythe.bridge.RdmaChannel;
import io.scythe.storage.Table;
import io.scythe.storage.remote.RemoteTable;
import io.scythe.txn.AbortException;
import io.scythe.txn.Access;
import io.scythe.txn.NotServingException;
import io.scythe.txn.OutcomeUnknownException;
import io.scythe.txn.Stage;
import io.scythe.txn.Txn;
import io.scythe.txn.TxnRuntime;
import io.scythe.txn.UnknownKeyException;
import io.scythe.txn.spi.LockKind;
import io.vertx.core.Future;
import org.agrona.DirectBuffer;
import org.agrona.concurrent.UnsafeBuffer;

import java.util.ArrayList;
import java.util.List;
import java.util.function.BiConsumer;
import java.util.function.Function;
import java.util.function.Supplier;

/**
 * One attempt of a one-sided protocol, composed of the shared parts: {@link ReadSet} (address lookup, READs,
 * absent keys), {@link WriteSet} (buffered values, write-back doorbells), {@link Inserts} (inserts, deletes,
 * absence validation), {@link RedoStep} (the redo record and finishing a decided commit), {@link HistoryStep} and
 * {@link StageClock}. A protocol decides when to lock, what to check and how to release; its lock is a
 * {@link LockKind}.
 *
 * <p>Known limits, for the reviewer's list:
 * <ul>
 *   <li>Torn reads: on a real NIC one READ of header and value is atomic per cache line only; a READ that took the
 *       header after a commit and the value before it would pass validation with a stale value. The emulated
 *       fabric executes a READ in one copy on one thread and benchmarks run one loop, so it does not happen here;
 *       on hardware it needs FaRM's per-cache-line versions or the value re-read under the header check.</li>
 *   <li>Write-back overwrites the object in place and bypasses the memory node's version chain, so MN-side snapshot
 *       reads ({@code Table.readAt}) do not see the history of tables written one-sided.</li>
 * </ul>
 */
public abstract class OneSidedTxn implements Txn {
    protected final TxnRuntime runtime;
    protected final long id;
    protected final ReadSet reads;
    protected final WriteSet writes;
    protected final Inserts inserts;
    protected final StageClock clock;
    /** Every object this attempt touched ({@link ReadSet#accesses()}). */
    protected final List<Access> accesses;
    protected boolean finished;
    /** Whether a commit's outcome was taken ({@link #outcomeTakenBefore}): once per attempt. */
    private boolean outcomeTaken;
    private RedoStep redo;
    /** The outcome of this attempt's abort, once it began one ({@link #releaseHeld}). */
    private Future<Void> released;

    /** The memory-node configuration this attempt began in ({@link io.scythe.txn.Catalog#epoch}). */
    private final long configEpoch;

    /**
     * The memory-node configuration this attempt began in: the epoch its redo record names (its locks were taken in
     * that configuration's terms or later), whenever the record is encoded.
     */
    protected final long configEpoch() {
        return configEpoch;
    }

    protected OneSidedTxn(final TxnRuntime runtime) {
        this.runtime = runtime;
        this.configEpoch = runtime.catalog().epoch();
        this.id = runtime.nextTxnId();
        this.clock = new StageClock(runtime.timers());
        this.reads = new ReadSet(runtime);
        this.accesses = reads.accesses();
        this.writes = new WriteSet(runtime, accesses, reads.pool());
        this.inserts = new Inserts(runtime, reads, new Inserts.Attempt() {
            @Override
            public boolean over() {
                return finished;
            }

            @Override
            public Future<Void> releaseLate(final String node, final Supplier<Future<?>> release) {
                return OneSidedTxn.this.releaseLate(node, release);
            }

            @Override
            public <T> Future<T> lockVerbInDoubt(final String node, final String what, final Throwable cause) {
                return OneSidedTxn.this.lockVerbInDoubt(node, what, cause);
            }
        });
    }

    /** This attempt's transaction id, unique in the cluster (memory nodes record it with its Takeout tickets). */
    @Override
    public final long id() {
        return id;
    }

    /**
     * The protocol's lock on the objects it writes, as recovery and the shared parts see it; {@code null}: it holds
     * none, and its commits write no redo record.
     */
    protected LockKind lockKind() {
        return null;
    }

    /** What identifies the lock {@code a} holds, for recovery (a ticket, a CAS owner word). */
    protected long lockToken(final Access a) {
        return 0;
    }

    /** The lock an inserted object was created with, for its ABANDON. */
    protected abstract Table.InsertLock insertLock();

    /**
     * Gives the loop up with this transaction in doubt, as a decided commit that cannot be finished does
     * ({@link RedoStep#giveUp}): for a protocol whose own commit steps meet such a failure (RCC's).
     */
    protected final <T> Future<T> giveUpInDoubt(final String what, final Throwable cause) {
        return redo().giveUp(what, cause);
    }

    /**
     * A memory node's crash (the simulator's {@code --crash-mn}): a verb or call to it fails (the transport gave up on
     * it), and within {@link TxnRuntime#failoverWaitNs()} the memory-node configuration removes it and promotes its
     * backups. An operation of this attempt that failed with an error (not an abort, not a give-up: those stand) is
     * an abort ({@link Reconfigured#REASON}), retried in the new configuration, once the
     * configuration changed since the attempt began (now or within the wait); else the error stands. Only an error
     * that may say a memory node is gone waits ({@link #mayBeGone}: the lotusmn review's finding 6); any other (a
     * node's answer, a full table, this code's own) stands at once: waiting it out delayed every such error by the
     * wait (2 ms in the simulator; Lotus's phantom workload committed nothing under {@code --crash-mn}), and in a
     * changed configuration retried a bug as an abort. Past T_commit the write-back's failures on a removed node are
     * the redo step's ({@code RedoStep}: the dead copy counts for nothing, the live ones were written backups first).
     */
    protected final <T> Future<T> goneAsAbort(final Future<T> op) {
        return op.recover(e -> {
            if (!mayBeGone(e)) {
                return Future.failedFuture(e);
            }
            return reconfiguredWithin(runtime.timers().nowNs() + runtime.failoverWaitNs()).compose(changed ->
                Future.failedFuture(changed ? new io.scythe.txn.AbortException(
                    Reconfigured.REASON, "transaction " + Long.toHexString(id) + ": "
                    + e.getMessage() + ", and the memory-node configuration changed since it began (a memory node "
                    + "failed over): retried in the new configuration") : e));
        });
    }

    /**
     * Whether {@code e} may say that a memory node is gone: a verb that failed (a completion error, or refused at post
     * time other than for a full send queue: the queue pair broke), a connection the fabric refused (the node is not
     * attached: Lotus's explorer smallbank seed 8 under {@code --crash-mn}, a client error before), or a call to a
     * memory node that broke or was not answered ({@code DISCONNECTED}, {@code TIMED_OUT}). Not an abort, a give-up or
     * an unknown outcome (those stand), nor an answer (a node that answers lives), nor an error of this code.
     */
    public static boolean mayBeGone(final Throwable e) {
        if (io.scythe.txn.Refusal.forNow(e)) {
            return false;
        }
        if (e instanceof io.scythe.bridge.VerbException || e instanceof io.scythe.fabric.FabricException) {
            return true; // a verb's failure, or no connection to the node ("not attached to the local fabric")
        }
        return e instanceof io.scythe.rrpc.RpcException r
            && (r.code() == io.scythe.rrpc.RpcException.DISCONNECTED || r.code() == io.scythe.rrpc.RpcException.TIMED_OUT);
    }

    /** Whether the memory-node configuration is other than this attempt's now or becomes so by {@code deadlineNs}. */
    private Future<Boolean> reconfiguredWithin(final long deadlineNs) {
        if (runtime.catalog().epoch() != configEpoch) {
            return Future.succeededFuture(true);
        }
        if (runtime.timers().nowNs() >= deadlineNs) {
            return Future.succeededFuture(false);
        }
        return runtime.timers().after(TxnRuntime.removalPollNs(runtime.failoverWaitNs(), 100))
            .compose(v -> reconfiguredWithin(deadlineNs));
    }

    /** {@link RedoStep#finishOwnRecord}: a decided commit whose own record or write-back failed in a failover. */
    protected final Future<Void> finishOwnRecord(final Throwable failure, final io.scythe.txn.recovery.RedoLog.Appended
        appended, final long version, final LockKind kind, final java.util.function.ToLongFunction<Access> token,
                                                 final String what) {
        return redo().finishOwnRecord(failure, appended, version, kind, token, configEpoch, what);
    }

    /** Memory nodes a write-back batch of this attempt failed on after it was posted ({@link WriteSet#failedOn}). */
    protected final List<String> writeBackFailedOn() {
        return writes.failedOn();
    }

    private RedoStep redo() {
        if (redo == null) {
            redo = new RedoStep(runtime, id, writes, accesses, lockKind(), this::lockToken, clock,
                () -> HistoryStep.inDoubt(runtime, id, reads));
        }
        return redo;
    }

    /** Ends {@code stage} now: the time since the previous mark is its. */
    protected final void mark(final Stage stage) {
        clock.mark(stage);
    }

    /** {@code future}, marking the end of {@code stage} when it completes. */
    protected final <T> Future<T> staged(final Stage stage, final Future<T> future) {
        return clock.staged(stage, future);
    }

    /** {@code future}, its time in flight accounted to {@code stage}, not the stage running ({@link StageClock#within}). */
    protected final <T> Future<T> within(final Stage stage, final Future<T> future) {
        return clock.within(stage, future);
    }

    @Override
    public long[] stageNanos() {
        return clock.nanos();
    }

    @Override
    public final Future<Void> quiesced() {
        return reads.quiesced();
    }

    /** The access of {@code key}, new (pointer looked up, nothing read yet) when this attempt has not touched it. */
    protected final Future<Access> locate(final String table, final long key) {
        return locateThen(table, key, null);
    }

    /** {@link ReadSet#locateThen}: {@code fetch} of the access, with no completed future between them. */
    private Future<Access> locateThen(final String table, final long key,
                                      final Function<Access, Future<Access>> fetch) {
        if (finished) {
            return Future.failedFuture(new IllegalStateException("transaction " + id + " is over"));
        }
        return reads.locateThen(table, key, fetch);
    }

    /** READs the whole object into the access's image and checks it is still the key's (not reused, not deleted). */
    protected final Future<Access> readImage(final Access a) {
        return reads.readImage(a);
    }

    /** Checks the image just READ is still the key's (not reused, not deleted) and records its version. */
    protected final Future<Access> checkedImage(final Access a) {
        return reads.checkedImage(a);
    }

    /** {@link #checkedImage} without its future: {@code null} when the image is the key's, else why not. */
    protected final Throwable checkImage(final Access a) {
        return reads.checkImage(a);
    }

    /** One-sided READ of the 64-byte header of {@code a} into a fresh buffer (validation). */
    protected final Future<UnsafeBuffer> readHeader(final Access a) {
        return reads.readHeader(a);
    }

    /** {@link ReadSet#checkHeader}: a header READ checked by {@code check} (a throw fails it), into a reused buffer. */
    protected final Future<Void> checkHeader(final Access a, final java.util.function.Consumer<UnsafeBuffer> check) {
        return reads.checkHeader(a, check);
    }

    protected final Future<RdmaChannel> channel(final Access a) {
        return runtime.channel(a.partition.node());
    }

    /**
     * The value of {@code key} as this attempt sees it: its own insert, else the object {@code fetch} brings (a
     * deleted one is "not found", {@link UnknownKeyException}, as an absent key is).
     */
    protected final Future<UnsafeBuffer> readVia(final String table, final long key,
                                                 final Function<Access, Future<Access>> fetch) {
        final UnsafeBuffer own = inserts.ownValue(table, key);
        if (own != null) {
            return Future.succeededFuture(own);
        }
        // A read refused for now (send queue or RRPC ring full) fails the attempt, which the coordinator retries
        // after its back-off (AbortReason.BACK_PRESSURE): waiting here instead let thousands of re-posts spin.
        return reads.inFlight(locateThen(table, key, fetch), a -> {
            if (a.deleted && !a.reviving || a.deleting) {
                throw new UnknownKeyException("key " + key + " of " + table + " is deleted"); // fails the read
            }
            return ReadSet.valueCopy(a);
        });
    }

    /** Whether transactions only read {@code table} (TableSchema#readOnly); false for a table not in the catalog. */
    protected final boolean readOnlyTable(final String table) {
        return reads.readOnlyTable(table);
    }

    /**
     * A read of a read-only table, the same in every protocol: one READ, no lock, ticket or check of the lock word,
     * and no validation at commit (nobody writes it).
     */
    protected final Future<UnsafeBuffer> readOnlyRead(final String table, final long key) {
        return readVia(table, key, a -> once(a, this::readImage));
    }

    /** The value of {@code a} as this attempt sees it (its own write, else what it read), as a copy. */
    protected static UnsafeBuffer valueCopy(final Access a) {
        return ReadSet.valueCopy(a);
    }

    /** {@code a}'s fetch, started by {@code start} unless one is in flight or done already. */
    protected static Future<Access> once(final Access a, final Function<Access, Future<Access>> start) {
        return ReadSet.once(a, start);
    }

    @Override
    public void write(final String table, final long key, final DirectBuffer value, final int offset,
                      final int length) {
        if (finished) { // as insert: a write after the outcome would take a pooled buffer nothing writes back
            throw new IllegalStateException("transaction " + id + " is over");
        }
        WriteSet.refuseReadOnly("write", table, runtime.catalog().table(table));
        final Access a = reads.find(table, key);
        if (a == null || !a.fetched) {
            throw new IllegalStateException("write of key " + key + " of " + table + " before reading it");
        }
        if (a.deleted && !a.reviving || a.deleting) {
            throw new IllegalStateException("write of deleted key " + key + " of " + table + " (insert it)");
        }
        WriteSet.setNewValue(a, value, offset, length, reads.pool());
        Replicas.prefetch(runtime, a);
    }

    @Override
    public void insert(final String table, final long key, final DirectBuffer value, final int offset,
                       final int length) {
        if (finished) {
            throw new IllegalStateException("transaction " + id + " is over");
        }
        inserts.insert(table, key, value, offset, length);
        prefetchBackups(table, key);
    }

    @Override
    public void delete(final String table, final long key) {
        inserts.delete(table, key);
        prefetchBackups(table, key);
    }

    /** Starts locating {@code key}'s object on its backups if this attempt now writes it ({@link Replicas}). */
    private void prefetchBackups(final String table, final long key) {
        final Access a = reads.find(table, key);
        if (a != null && a.dirty) {
            Replicas.prefetch(runtime, a);
        }
    }

    /** Whether the commit has anything to install: writes, deletes or inserts. */
    protected final boolean writesNothing() {
        return inserts.nothingToInstall();
    }

    /**
     * Whether this attempt inserted a key it saw present: its commit then locks and creates nothing (a lock or INSERT
     * in flight when the commit fails would be left held), and {@link #duplicateCommit} decides it.
     */
    protected final boolean sawDuplicate() {
        return inserts.duplicate() != null;
    }

    /**
     * The commit of an attempt that {@link #sawDuplicate}: {@code DUPLICATE_KEY} if what it read is still current
     * ({@code validation}), else {@code VALIDATION} (its read of the key was stale).
     */
    protected final Future<Long> duplicateCommit(final Supplier<Future<Void>> validation) {
        return finishCommit(duplicateOnlyIfCurrent(Future.failedFuture(new io.scythe.txn.AbortException(
            io.scythe.txn.AbortReason.DUPLICATE_KEY, inserts.duplicate())), validation).map(0L));
    }

    /**
     * Whether a header READ of {@code a} shows the object it read (its slot not freed and reused since: the
     * incarnation in the header is the pointer's) with the version it read. Validation and locking check both: a
     * slot reclaimed and reused for another key can carry the same version number.
     */
    protected static boolean unchangedSinceRead(final Access a, final DirectBuffer header) {
        return (header.getShort(io.scythe.storage.ObjectLayout.INCARNATION_OFFSET) & 0xffff)
            == io.scythe.storage.ObjectLayout.incarnationOf(a.pointer)
            && header.getLong(io.scythe.storage.ObjectLayout.VERSION_OFFSET) == a.readVersion;
    }

    /** {@link io.scythe.txn.Refusal#rpcMayHaveLanded}. */
    protected static boolean rpcMayHaveLanded(final Throwable e) {
        return io.scythe.txn.Refusal.rpcMayHaveLanded(e);
    }

    /** {@link Inserts#duplicateOnlyIfCurrent}. */
    protected final Future<Void> duplicateOnlyIfCurrent(final Future<Void> locked,
                                                        final Supplier<Future<Void>> validation) {
        return Inserts.duplicateOnlyIfCurrent(locked, validation);
    }

    /** {@link Inserts#validateAbsent}. */
    protected final Future<Void> validateAbsent() {
        return inserts.validateAbsent();
    }

    /** {@link Inserts#validateAbsentNothingInserted}. */
    protected final Future<Void> validateAbsentNothingInserted() {
        return inserts.validateAbsentNothingInserted();
    }

    /** {@link Inserts#install}. */
    protected final Future<Void> installInserts(final Table.InsertLock lock, final long lockWord,
                                                final BiConsumer<Access, RemoteTable.Inserted> onInserted) {
        return inserts.install(lock, lockWord, onInserted);
    }

    /**
     * Writes every dirty access back with the new {@code version}, then {@code release} for each access it applies
     * to (e.g. the unlock), one doorbell per memory node; value first, then version, then release, on one QP, so the
     * release is seen last. The redo record goes first ({@link RedoStep}).
     */
    protected final Future<Void> writeBack(final long version, final Function<Access, Boolean> needsRelease,
                                           final WriteSet.ReleaseVerb release) {
        // Counted while past its point of no return: a failover's settlement waits for the commits of older epochs.
        // Counted before the epoch is checked, so a configuration applied meanwhile either fails this attempt or
        // sees it counted (both are volatile: one of the two sees the other).
        final io.scythe.txn.Catalog catalog = runtime.catalog();
        catalog.decided(configEpoch);
        if (passedPointOfNoReturn) {
            // Its own record (RCC's Log stage) passed the point of no return: decided, so never re-checked (an abort
            // here would give the whole loop up); this count pairs with the write-back's own finished.
            return redo().writeBack(version, needsRelease, release, catalog, configEpoch);
        }
        if (catalog.epoch() != configEpoch) {
            catalog.finished(configEpoch);
            // A memory node failed over since this attempt began: what it read, locked and would write may be copies
            // that no longer serve. Before its point of no return it is refused and retried in the new configuration.
            return Future.failedFuture(Reconfigured.abort(configEpoch, catalog.epoch()));
        }
        // catalog.finished(configEpoch) runs first when the outcome is known (was a listener added here).
        return redo().writeBack(version, needsRelease, release, catalog, configEpoch);
    }

    /**
     * Logs the redo record before the commit version exists ({@link RedoStep#logAhead}, Lotus's log before T_commit):
     * the next {@link #writeBack} writes back after it. Null result: nothing logged.
     */
    protected final Future<io.scythe.txn.recovery.RedoLog.Appended> logAhead() {
        return redo().logAhead(configEpoch);
    }

    /**
     * {@link TxnRuntime#tookPath}: a record logged ahead in doubt only on memory nodes a configuration removed, the
     * attempt aborted as {@code reconfigured} ({@link #abortOrGiveUpAhead}; helper lotusfix2).
     */
    public static final String AHEAD_ONLY_ON_REMOVED_NODES = "ahead_in_doubt_only_on_removed_nodes";

    /**
     * {@link TxnRuntime#tookPath}: a release of a lock granted after its attempt was over failed on a memory node a
     * configuration removed, counted done ({@link #releaseLate}; helper rccmn2).
     */
    public static final String LATE_RELEASE_ON_REMOVED_NODE = "late_release_on_removed_node";

    /**
     * A record {@link #logAhead} logged in doubt ({@code doubt}) only on memory nodes a configuration removes: durable
     * on every serving copy ({@link RedoStep#aheadOnSurvivingCopies}), the attempt aborts as {@code reconfigured}
     * (retried in the new configuration; its abort withdraws the record from the serving copies); else it is given up
     * with the record ({@link RedoStep#giveUpAhead}, {@code what}).
     */
    protected final <T> Future<T> abortOrGiveUpAhead(final io.scythe.txn.recovery.RedoLog.RecordInDoubtException doubt,
                                                     final String what) {
        return redo().aheadOnSurvivingCopies(doubt).<T>compose(survived -> {
            if (!survived) {
                return giveUpAhead(what, doubt);
            }
            runtime.tookPath(AHEAD_ONLY_ON_REMOVED_NODES);
            return Future.failedFuture(new AbortException(Reconfigured.REASON, "transaction " + Long.toHexString(id)
                + ": " + what + " (" + doubt.getMessage() + "), only on memory nodes the configuration removed: "
                + "durable on every serving copy, withdrawn by its abort; retried in the new configuration"));
        });
    }

    /** Withdraws a record logged ahead by an attempt that will not commit ({@link RedoStep#withdrawAhead}). */
    protected final Future<Void> withdrawAhead() {
        return redo == null ? Future.succeededFuture() : redo.withdrawAhead();
    }

    /**
     * Gives the loop up with the record {@link #logAhead} logged in doubt ({@link RedoStep#giveUpAhead}): the commit
     * that fails with it is not aborted, so what it wrote and holds stays for recovery.
     */
    protected final <T> Future<T> giveUpAhead(final String what, final Throwable cause) {
        return redo().giveUpAhead(what, cause);
    }

    /** Whether this attempt's own redo record passed {@link #pointOfNoReturn} (counted in {@code Catalog#decided}). */
    private boolean passedPointOfNoReturn;

    /**
     * The point of no return of a protocol that writes its own redo record (RCC's Log stage, SELCC's installs), run
     * by {@link io.scythe.txn.recovery.RedoLog#append} just before the record's WRITE is posted: counts the commit
     * in {@code Catalog#decided} for its configuration epoch, then checks the epoch (after the count: a configuration
     * applied meanwhile either fails this attempt or sees it counted). A changed epoch aborts the attempt there, truly
     * before its point of no return (nothing posted), retried in the new configuration. The count ends when the
     * commit's outcome is known ({@link #finishCommit}, or {@link #commitChain}'s end: finished, or given up to
     * recovery), so a node does not tell that it drained while its record is durable and its write-back in flight.
     * Issue 23 review.
     */
    protected final io.scythe.txn.recovery.RedoLog.PointOfNoReturn pointOfNoReturn() {
        return () -> {
            final io.scythe.txn.Catalog catalog = runtime.catalog();
            catalog.decided(configEpoch);
            if (catalog.epoch() != configEpoch) {
                catalog.finished(configEpoch);
                return Reconfigured.abort(configEpoch, catalog.epoch());
            }
            passedPointOfNoReturn = true;
            return null;
        };
    }

    /** Ends {@link #pointOfNoReturn}'s count, once (the commit's outcome is known). */
    private void pointOfNoReturnOver() {
        if (passedPointOfNoReturn) {
            passedPointOfNoReturn = false;
            runtime.catalog().finished(configEpoch);
        }
    }

    /** {@link Reposts#untilAccepted}, on this loop's timers. */
    protected final <T> Future<T> untilAccepted(final Supplier<Future<T>> request) {
        return Reposts.untilAccepted(runtime.timers(), request);
    }

    /**
     * Whether this attempt's write-back was decided ({@link RedoStep#decided}: its redo record in doubt, or its
     * write-back started): from then on it is never aborted, what it wrote is its commit's or recovery's.
     */
    protected final boolean writeBackDecided() {
        return redo != null && redo.decided();
    }

    /** {@link Reposts#settle}. */
    protected static Future<Void> settle(final List<? extends Future<?>> futures) {
        return Reposts.settle(futures);
    }

    /**
     * Gives the attempt up: releases, with {@code release}, every lock it holds (each exactly once), and waits for
     * the releases. A release is posted again only while refused for now; one that failed otherwise gives the loop up
     * ({@link #lockVerbInDoubt}), and the abort fails with its {@link NotServingException}. Idempotent (the
     * protocols' {@code abort()}): asked again, it answers with the first outcome, a failure included.
     */
    protected final Future<Void> releaseHeld(final Function<Access, Future<?>> release) {
        if (released != null) {
            return released;
        }
        if (finished) {
            return Future.succeededFuture();
        }
        finished = true;
        final List<Future<?>> releases = new ArrayList<>();
        final List<String> nodes = new ArrayList<>();
        for (final Access a : accesses) {
            if (a.locked) {
                a.locked = false;
                if (runtime.catalog().removed(a.partition.node())) {
                    continue; // its memory node failed over: nothing it held counts (the promoted copy has no lock)
                }
                // An object this attempt inserted is undone on its memory node, which releases its lock there.
                releases.add(untilAccepted(() -> a.inserted
                    ? runtime.remote(a.partition).abandon(a.key, a.pointer, insertLock())
                    : release.apply(a).<Void>mapEmpty()));
                nodes.add(a.partition.node());
            }
        }
        released = settle(releases).recover(e -> {
            // Settled: every release is over. Those that failed on memory nodes a configuration removes released
            // locks that died with their node; any other leaves a lock in doubt.
            final java.util.Set<String> failedOn = new java.util.TreeSet<>();
            for (int i = 0; i < releases.size(); i++) {
                if (releases.get(i).failed()) {
                    failedOn.add(nodes.get(i));
                }
            }
            return releaseFailedOn(failedOn, "releasing its locks failed", e, null);
        });
        return released;
    }

    /**
     * Releases, with {@code release}, a lock on memory node {@code node} granted to this attempt after it was over
     * (nothing else will): posted again only while refused for now; a release that failed otherwise is done if a
     * configuration removes the node (the lock died with it), else the loop gives up ({@link #lockVerbInDoubt}).
     * There is deliberately no form without the node: one that gave up on any failure made RCC's loops give up
     * under memory-node crashes (stop 53).
     */
    protected final Future<Void> releaseLate(final String node, final Supplier<Future<?>> release) {
        return untilAccepted(() -> release.get().<Void>mapEmpty()).recover(e -> releaseFailedOn(List.of(node),
            "releasing a lock granted after the attempt was over failed", e, LATE_RELEASE_ON_REMOVED_NODE));
    }

    /**
     * Releases that failed on memory nodes {@code nodes}: done if a configuration removes them all (the locks died
     * with them; reported as {@code path} to {@link TxnRuntime#tookPath}, unless null), else in doubt
     * ({@link #lockVerbInDoubt(String, Throwable)}).
     */
    private Future<Void> releaseFailedOn(final java.util.Collection<String> nodes, final String what,
                                         final Throwable cause, final String path) {
        return runtime.removedWithin(nodes).compose(died -> {
            if (!died) {
                return lockVerbInDoubt(what, cause);
            }
            if (path != null) {
                runtime.tookPath(path);
            }
            return Future.<Void>succeededFuture();
        });
    }

    /**
     * {@link #lockVerbInDoubt(String, Throwable)} of a verb on memory node {@code node}, unless a memory-node
     * configuration removes that node now or within {@link TxnRuntime#failoverWaitNs()} (a node that died stops
     * answering before the cluster removes it): then the attempt aborts, retried in the new configuration. Whatever
     * the verb did, it did it on the removed node's copy only: lock words live on primaries (backups have none, so a
     * promoted copy starts unlocked), and what a removed node holds counts for nothing ({@code Catalog#removed}).
     * The loop serves on meanwhile; the attempt waits.
     */
    protected final <T> Future<T> lockVerbInDoubt(final String node, final String what, final Throwable cause) {
        return runtime.removedWithin(List.of(node)).compose(died -> died ? Future.failedFuture(new AbortException(
            Reconfigured.REASON, "transaction " + Long.toHexString(id) + ": " + what + " (" + cause.getMessage()
            + "), on memory node " + node + ", which the memory-node configuration removed: the lock died with it; "
            + "retried in the new configuration")) : lockVerbInDoubt(what, cause));
    }

    /**
     * A verb that takes or releases a lock failed after it was posted (or a release could not be posted at all): it
     * may have landed, or may still land, so it is neither posted again nor taken as undone. A second FAA on
     * {@code upper} would hand one Takeout lock to two holders; a WRITE of 0 repeated after the lock passed on would
     * free another's CAS lock; a CAS or ticket left in doubt holds a lock nobody releases. So the loop gives up
     * ({@link TxnRuntime#giveUp}): its node stops serving and the recovery of its incarnation frees what it holds
     * (cancels its tickets, frees CAS words with its id prefix). Nothing of this attempt was committed, so its client
     * hears "not serving" ({@link NotServingException}: never committed), not "outcome unknown".
     */
    protected final <T> Future<T> lockVerbInDoubt(final String what, final Throwable cause) {
        runtime.giveUp("transaction " + Long.toHexString(id) + " (aborting): " + what + ": " + cause);
        return Future.failedFuture(new NotServingException("transaction " + Long.toHexString(id) + " aborted, nothing "
            + "committed, and this loop gave up: " + what + " (" + cause.getMessage() + ")", cause));
    }

    /**
     * A commit's outcome: on success the attempt is over and its write-back released its locks; on failure it is
     * aborted (what it still holds released) and the failure passed on.
     */
    protected final <T> Future<T> finishCommit(final Future<T> commit) {
        // commit.onSuccess(committed).recover(failed) with one object listening and passing the outcome on (those two
        // built a listener, a listener array, a composition and two lambdas per commit): the same steps, in the same
        // order, at the same moments.
        final Finishing<T> finishing = new Finishing<>(this);
        commit.onComplete(finishing);
        return finishing;
    }

    /**
     * The commit chain of a protocol that locks, validates and writes back: {@code locks} (settled), then
     * {@link #commitValidation()}, then {@link #commitWriteBack} with {@code version}, each stage marked on the clock
     * when it completes, then {@link #finishCommit}'s end. A lock stage that failed with {@code DUPLICATE_KEY} fails
     * with it only once the validation found the read current ({@link #duplicateOnlyIfCurrent}). One object
     * ({@link Committing}) for what was {@code duplicateOnlyIfCurrent(staged(LOCK, locks), validation).compose(v ->
     * staged(VALIDATE, validation())).compose(v -> staged(WRITE_BACK, writeBack(version))).map(version)} and
     * finishCommit: the same steps, in the same order, at the same moments.
     */
    protected final Future<Long> commitChain(final Future<Void> locks, final long version) {
        final Committing chain = new Committing(this);
        chain.version = version;
        chain.await(Committing.LOCK, locks);
        return chain;
    }

    /**
     * {@link #commitChain(Future, long)} after a commit timestamp: {@code timestamp} marked as the TIMESTAMP stage,
     * then {@link #commitLocks} with it, and the chain with the timestamp as the version and the commit's value
     * (was {@code staged(TIMESTAMP, timestamp).compose(ts -> ...)} and finishCommit).
     */
    protected final Future<Long> commitChainAt(final Future<Long> timestamp) {
        final Committing chain = new Committing(this);
        chain.await(Committing.TIMESTAMP, timestamp);
        return chain;
    }

    /**
     * {@link #commitChain(Future, long)} with a log stage between validation and write-back, for a protocol that
     * writes its own redo record (RCC's Log stage): {@code locks}, {@link #commitValidation()}, {@link #commitLog}
     * (marked as LOG), {@link #commitWriteBack}, then {@link #commitWrittenBack} with what the log stage gave, each
     * stage marked when it completes, and {@code version} as the commit's value. One object for what was {@code
     * finishCommit(duplicateOnlyIfCurrent(staged(LOCK, locks), validation).compose(v -> staged(VALIDATE,
     * validation())).compose(v -> staged(LOG, log())).compose(logged -> staged(WRITE_BACK, writeBack(version))
     * .onSuccess(v -> writtenBack(logged))).map(version))}: the same steps, in the same order, at the same moments.
     */
    protected final Future<Long> commitChainLogged(final Future<Void> locks, final long version) {
        final Committing chain = new Committing(this);
        chain.version = version;
        chain.logStage = true;
        chain.await(Committing.LOCK, locks);
        return chain;
    }

    /** {@link #commitChainLogged}'s log stage, started once the validation passed; its value goes to the next. */
    protected Future<?> commitLog(final long version) {
        throw new UnsupportedOperationException(mode() + " has no logged commit chain");
    }

    /**
     * {@link #commitChainLogged}'s step after a write-back that succeeded (its stage marked), with the log stage's
     * value, before the commit completes (e.g. reclaims the log record).
     */
    protected void commitWrittenBack(final Object logged) {
    }

    /**
     * FaRM's and Motor's order: {@code locks} (settled), then the commit timestamp ({@link #commitTimestamp}, asked for
     * once every lock is held), then {@link #commitValidation()}, then {@link #commitWriteBack} with the timestamp as
     * the version and the commit's value, each stage marked on the clock when it completes; a lock stage that failed
     * with {@code DUPLICATE_KEY} as in {@link #commitChain}. One object ({@link Committing}) for what was {@code
     * finishCommit(duplicateOnlyIfCurrent(staged(LOCK, locks), validation).compose(v -> staged(TIMESTAMP,
     * timestamp())).compose(ts -> staged(VALIDATE, validation()).map(ts)).compose(ts -> staged(WRITE_BACK,
     * writeBack(ts)).map(ts)))}: the same steps, in the same order, at the same moments.
     */
    protected final Future<Long> commitChainLockedFirst(final Future<Void> locks) {
        final Committing chain = new Committing(this);
        chain.timestampAfterLocks = true;
        chain.await(Committing.LOCK, locks);
        return chain;
    }

    /** {@link #commitChainLockedFirst}'s timestamp stage, started once every lock is held. */
    protected Future<Long> commitTimestamp() {
        throw new UnsupportedOperationException(mode() + " has no commit chain that locks first");
    }

    /**
     * A commit decided by {@code validation} alone, with {@code timestamp}'s value (complete by then: the validation
     * settles it too) as its outcome: {@code finishCommit(staged(VALIDATE, validation).map(v -> timestamp.result()))}
     * as one object.
     */
    protected final Future<Long> commitValidated(final Future<Void> validation, final Future<Long> timestamp) {
        final Committing chain = new Committing(this);
        chain.timestamp = timestamp;
        chain.await(Committing.VALIDATE_ONLY, validation);
        return chain;
    }

    /** {@link #commitChainAt}'s lock stage, started once the commit timestamp {@code ts} is known. */
    protected Future<Void> commitLocks(final long ts) {
        throw new UnsupportedOperationException(mode() + " has no timestamped commit chain");
    }

    /** {@link #commitChain}'s validation, also of a duplicate insert ({@link #duplicateOnlyIfCurrent}). */
    protected Future<Void> commitValidation() {
        throw new UnsupportedOperationException(mode() + " has no commit chain");
    }

    /** {@link #commitChain}'s write-back with {@code version}. */
    protected Future<Void> commitWriteBack(final long version) {
        throw new UnsupportedOperationException(mode() + " has no commit chain");
    }

    /**
     * One commit's chain as a state machine: the listener of each stage's future in turn and the future of the
     * commit's outcome (as {@link Finishing}, without a context: its listeners run inline on completion). Each stage
     * is started where the composition it replaces started it: on the completion of the one before, after its mark.
     * A stage that throws fails the commit, as a composition's function that throws does.
     */
    private static final class Committing extends io.vertx.core.impl.future.FutureImpl<Long>
        implements io.vertx.core.Completable<Object> {
        static final int TIMESTAMP = 0;
        static final int LOCK = 1;
        /** The validation after a lock stage that failed with DUPLICATE_KEY ({@link #duplicate}). */
        static final int DUPLICATE = 2;
        static final int VALIDATE = 3;
        static final int WRITE_BACK = 4;
        static final int VALIDATE_ONLY = 5;
        /** commitFailed's outcome, passed on. */
        static final int RECOVERED = 6;
        /** The protocol's own log record ({@link #logStage}), between validation and write-back. */
        static final int LOG = 7;

        private final OneSidedTxn txn;
        private int state;
        long version;
        /** The commit's value: the timestamp's own Long when it has one (no boxing), else {@link #version} boxed. */
        private Long value;
        Future<Long> timestamp;
        private Throwable duplicate;
        /** The timestamp is asked for after the locks ({@link #commitChainLockedFirst}), not before them. */
        boolean timestampAfterLocks;
        /** A log stage between validation and write-back ({@link #commitChainLogged}). */
        boolean logStage;
        /** What the log stage gave, for {@link OneSidedTxn#commitWrittenBack}. */
        private Object logged;

        Committing(final OneSidedTxn txn) {
            this.txn = txn;
        }

        void await(final int next, final Future<?> future) {
            state = next;
            @SuppressWarnings("unchecked") final Future<Object> f = (Future<Object>) future;
            f.onComplete(this);
        }

        @Override
        public void complete(final Object result, final Throwable failure) {
            final OneSidedTxn t = txn;
            switch (state) {
                case TIMESTAMP -> {
                    t.clock.mark(Stage.TIMESTAMP);
                    if (failure != null || result == null) { // no timestamp fails the commit, as compose did (review)
                        end(failure != null ? failure : new NullPointerException("the commit's timestamp is null"));
                        return;
                    }
                    value = (Long) result;
                    version = value;
                    start(timestampAfterLocks ? VALIDATE : LOCK);
                }
                case LOCK -> {
                    t.clock.mark(Stage.LOCK);
                    if (failure == null) {
                        start(timestampAfterLocks ? TIMESTAMP : VALIDATE);
                    } else if (failure instanceof AbortException a
                        && a.reason() == io.scythe.txn.AbortReason.DUPLICATE_KEY) {
                        duplicate = failure;
                        start(DUPLICATE);
                    } else {
                        end(failure);
                    }
                }
                case DUPLICATE -> end(failure != null ? failure : duplicate);
                case VALIDATE -> {
                    t.clock.mark(Stage.VALIDATE);
                    if (failure != null) {
                        end(failure);
                        return;
                    }
                    start(logStage ? LOG : WRITE_BACK);
                }
                case LOG -> {
                    t.clock.mark(Stage.LOG);
                    if (failure != null) {
                        end(failure);
                        return;
                    }
                    logged = result;
                    start(WRITE_BACK);
                }
                case WRITE_BACK -> {
                    t.clock.mark(Stage.WRITE_BACK);
                    if (failure != null) {
                        end(failure);
                        return;
                    }
                    final Long v = value != null ? value : Long.valueOf(version);
                    if (logStage) {
                        try {
                            t.commitWrittenBack(logged); // as its onSuccess: a throw does not fail the commit
                        } finally {
                            committed(v);
                        }
                        return;
                    }
                    committed(v);
                }
                case VALIDATE_ONLY -> {
                    t.clock.mark(Stage.VALIDATE);
                    if (failure != null) {
                        end(failure);
                        return;
                    }
                    committed(timestamp.result());
                }
                case RECOVERED -> {
                    if (failure == null) {
                        tryComplete((Long) result);
                    } else {
                        tryFail(failure);
                    }
                }
                default -> throw new IllegalStateException("commit chain in state " + state);
            }
        }

        /** Starts stage {@code next}'s future and listens to it; one that throws fails the commit, as compose's. */
        private void start(final int next) {
            final Future<?> stage;
            try {
                stage = switch (next) {
                    case TIMESTAMP -> txn.commitTimestamp();
                    case LOCK -> txn.commitLocks(version);
                    case DUPLICATE, VALIDATE -> txn.commitValidation();
                    case LOG -> txn.commitLog(version);
                    case WRITE_BACK -> txn.commitWriteBack(version);
                    default -> throw new IllegalStateException("no stage to start in state " + next);
                };
            } catch (final Throwable e) {
                end(e);
                return;
            }
            await(next, stage);
        }

        /** {@link Finishing}'s success step. */
        private void committed(final Long v) {
            if (txn.outcomeTakenBefore()) {
                tryFail(txn.finishedTwice());
                return;
            }
            txn.pointOfNoReturnOver(); // outcome known, as Finishing's (a no-op unless the protocol logs its own record)
            try {
                txn.committed(v);
            } finally {
                tryComplete(v);
            }
            // Everything listening has heard the outcome, the write-back settled (the chain's last stage): the
            // accesses' buffers go back to the loop's pool for the next attempts (not after finishCommit's custom
            // chains, whose end this does not know).
            txn.reads.recycle();
        }

        /** {@link Finishing}'s failure step: commitFailed's outcome passed on. */
        private void end(final Throwable failure) {
            if (txn.outcomeTakenBefore()) {
                tryFail(txn.finishedTwice());
                return;
            }
            txn.pointOfNoReturnOver(); // outcome known: failed, or given up to recovery (as Finishing's)
            final Future<Long> recovered;
            try {
                recovered = txn.commitFailed(failure);
            } catch (final Throwable e) {
                tryFail(e);
                return;
            }
            await(RECOVERED, recovered);
        }
    }

    /**
     * Takes the commit's outcome, answering whether it was taken before: a commit finished twice (a finished commit
     * passed to {@link #finishCommit} again, or to a commit chain) would abort, release and count its attempt twice;
     * the second fails with an {@link IllegalStateException} instead (SELCC's OCC and TO duplicate path did, issue 21).
     */
    private boolean outcomeTakenBefore() {
        final boolean before = outcomeTaken;
        outcomeTaken = true;
        return before;
    }

    private IllegalStateException finishedTwice() {
        return new IllegalStateException("transaction " + Long.toHexString(id) + ": its commit finished twice");
    }

    /** What a commit that succeeded leaves: the attempt over, its locks released by the write-back, its history. */
    private void committed(final Object v) {
        finished = true;
        for (int i = 0; i < accesses.size(); i++) { // indexed: no iterator on the hot path
            accesses.get(i).locked = false;
        }
        HistoryStep.committed(runtime, id, v instanceof Long ts ? ts : 0, reads, ranReadCommitted());
    }

    /**
     * Whether this attempt ran at read committed ({@code Txn#declareReadCommitted}, taken by the protocol): its commit
     * is reported so. False unless a protocol overrides it.
     */
    protected boolean ranReadCommitted() {
        return false;
    }

    /** What follows a commit that failed with {@code e}: given up past the point of no return, else aborted. */
    private <T> Future<T> commitFailed(final Throwable e) {
        if (redo != null && redo.decided()) {
            finished = true; // committed or in doubt: what it holds is the record's, released by finishing it
            if (e instanceof OutcomeUnknownException) {
                return Future.failedFuture(e); // given up already
            }
            // No record to finish from (a protocol that logs none): its locks stay held until the node is
            // recovered, so the loop gives up as well.
            return redo.giveUp("it failed after its point of no return", e);
        }
        // A release that failed gave the loop up: the client hears that (still "never committed"), not e.
        return abort().transform(aborted -> Future.failedFuture(aborted.failed() ? aborted.cause() : e));
    }

    /**
     * {@link #finishCommit}'s one object: the commit's listener and the future of its outcome (as {@link Futures.Relay},
     * without a context: its listeners run inline on completion).
     */
    private static final class Finishing<T> extends io.vertx.core.impl.future.FutureImpl<T>
        implements io.vertx.core.Completable<T> {
        private final OneSidedTxn txn;

        Finishing(final OneSidedTxn txn) {
            this.txn = txn;
        }

        @Override
        public void complete(final T value, final Throwable failure) {
            if (txn.outcomeTakenBefore()) {
                tryFail(txn.finishedTwice());
                return;
            }
            txn.pointOfNoReturnOver(); // outcome known: finished, or given up to recovery
            if (failure == null) {
                try {
                    txn.committed(value);
                } finally {
                    // Completed even when committed() throws (a recorder's bug), as onSuccess(...).recover(...) passed
                    // the value on past a throwing listener; the throw still reaches Vert.x's report (review, stop 39).
                    tryComplete(value);
                }
                return;
            }
            final Future<T> recovered;
            try {
                recovered = txn.commitFailed(failure);
            } catch (final Throwable e) {
                tryFail(e); // as recover's composition fails when its function throws
                return;
            }
            recovered.onComplete((v, f) -> {
                if (f == null) {
                    tryComplete(v);
                } else {
                    tryFail(f);
                }
            });
        }
    }
}
