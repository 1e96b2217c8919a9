package io.scythe.txn.onesided;

import io.scythe.txn.Access;
import io.scythe.txn.OutcomeUnknownException;
import io.scythe.txn.Refusal;
import io.scythe.txn.Stage;
import io.scythe.txn.TxnRuntime;
import io.scythe.txn.recovery.CnRecovery;
import io.scythe.txn.recovery.RedoLog;
import io.scythe.txn.spi.LockKind;
import io.vertx.core.Future;

import java.util.ArrayList;
import java.util.List;
import java.util.function.ToLongFunction;

/**
 * A commit's point of no return: the redo record first (when the loop keeps a {@link RedoLog} and the protocol names
 * a {@link LockKind}), then the write-back; a write-back refused in part is finished from what the attempt still
 * holds, and what cannot be finished is given up to recovery. Never aborted or retried once decided.
 */
public final class RedoStep {
    /** Tries to finish a decided commit this many times before giving it up. */
    private static final int FINISH_ATTEMPTS = 6;
    /** Pause before the first of them, doubling: 1, 2, ... 32 ms. */
    private static final long FINISH_PAUSE_NS = 1_000_000;

    private final TxnRuntime runtime;
    private final long id;
    private final WriteSet writes;
    private final List<Access> accesses;
    private final LockKind lockKind;
    private final ToLongFunction<Access> lockToken;
    private final StageClock clock;
    /** Tells the history the attempt is in doubt, when it is given up ({@link HistoryStep#inDoubt}). */
    private final Runnable inDoubt;
    private boolean toldInDoubt;
    /**
     * Past the point of no return: the redo record is durable (or may be) or the write-back began. From here the
     * attempt is finished, or given up to recovery; never aborted, never retried.
     */
    private boolean decided;
    /** The memory-node configuration the attempt ran in (its redo record names it), set by {@link #writeBack}. */
    private long attemptEpoch;
    /** The redo record appended before the commit version existed ({@link #logAhead}), or null. */
    private Future<RedoLog.Appended> loggedAhead;

    /**
     * @param lockKind  the protocol's lock of the written objects, or {@code null}: nothing logged or finished
     * @param lockToken what identifies the lock an access holds, for recovery (a ticket, a CAS owner word)
     */
    public RedoStep(final TxnRuntime runtime, final long id, final WriteSet writes, final List<Access> accesses,
                    final LockKind lockKind, final ToLongFunction<Access> lockToken, final StageClock clock,
                    final Runnable inDoubt) {
        this.inDoubt = inDoubt;
        this.runtime = runtime;
        this.id = id;
        this.writes = writes;
        this.accesses = accesses;
        this.lockKind = lockKind;
        this.lockToken = lockToken;
        this.clock = clock;
    }

    /**
     * Appends the redo record before the commit version exists, with version 0 and each entry's token as
     * {@code lockToken} gives it then (Lotus, lotus.md §2.4: the log goes with the INVISIBLE writes, before T_commit):
     * durable, it decides nothing; the commit happens at its visible writes, and recovery decides such a record by the
     * objects it names ({@code LockKind#decidedByData}). {@link #writeBack} then writes back after this record instead
     * of appending one. Completes with null when nothing is logged (no log, no lock kind or no writes).
     */
    public Future<RedoLog.Appended> logAhead(final long epoch) {
        final RedoLog log = RedoLog.of(runtime);
        final List<Access> written = writes.written();
        if (log == null || lockKind == null || written.isEmpty()) {
            return Future.succeededFuture();
        }
        if (!lockKind.decidedByData()) {
            throw new IllegalStateException(lockKind.name() + " records are decided when durable: not logged ahead");
        }
        attemptEpoch = epoch;
        final Future<Void> located = Replicas.any(written) ? Replicas.locateAll(runtime, written)
            : Future.succeededFuture();
        loggedAhead = located.compose(v -> log.append(id, 0, lockKind.id(), written, lockToken, null, epoch));
        return loggedAhead;
    }

    /**
     * An attempt whose record was logged ahead and that will not commit withdraws it ({@link RedoLog#withdraw}) before
     * its locks go: else a later recovery could find it and undo a later writer's INVISIBLE version. Completes at once
     * without such a record, or when its append failed before it was posted; fails if it could not be withdrawn, or
     * if its WRITE failed after it was posted ({@link RedoLog.RecordInDoubtException}: it may have landed, and is not
     * written again): the attempt must then be given up to recovery under its locks ({@link #giveUpAhead}).
     */
    public Future<Void> withdrawAhead() {
        final Future<RedoLog.Appended> ahead = loggedAhead;
        if (ahead == null || decided) { // decided: its write-back began, or it was given up with the record
            return Future.succeededFuture();
        }
        loggedAhead = null;
        return ahead.transform(ar -> {
            if (ar.failed()) {
                return ar.cause() instanceof RedoLog.RecordInDoubtException ? Future.<Void>failedFuture(ar.cause())
                    : Future.<Void>succeededFuture();
            }
            return ar.result() == null ? Future.<Void>succeededFuture() : RedoLog.of(runtime).withdraw(ar.result(),
                runtime.catalog()::removed);
        });
    }

    /**
     * Whether the record logged ahead ({@link #logAhead}), whose WRITE failed in doubt ({@code doubt}), is durable on
     * every copy that serves: replicated, and a memory-node configuration removes (now or within
     * {@link TxnRuntime#failoverWaitNs()}) every node whose copy is not known durable ({@link #onSurvivingCopies}).
     * Then it is not in doubt (what may land on a removed node counts for nothing: no recovery reads it), and it
     * becomes the record {@link #withdrawAhead} withdraws from the serving copies, so the attempt may abort (it
     * decided nothing yet: no cell of it is visible). Else (false) it stays in doubt: {@link #giveUpAhead}.
     * Lotus's explorer under {@code --crash-mn}: every seed whose loop gave up (smallbank 21 of 100, tpcc 3 of 50,
     * phantom 5 of 50: the {@code lotus} package doc's sweeps) was a survivor's record in doubt on the crashed memory
     * node only; each such abort is reported as {@code OneSidedTxn#AHEAD_ONLY_ON_REMOVED_NODES}
     * ({@code TxnRuntime#tookPath}).
     */
    public Future<Boolean> aheadOnSurvivingCopies(final RedoLog.RecordInDoubtException doubt) {
        // Only a record logged ahead (which decides nothing) may be withdrawn this way; a commit record in doubt
        // must never become an abort (stop-53 review).
        if (decided || loggedAhead == null) {
            return Future.succeededFuture(false);
        }
        return onSurvivingCopies(doubt).map(survived -> {
            if (survived && !decided) {
                loggedAhead = Future.succeededFuture(doubt.appended());
                return true;
            }
            return false;
        });
    }

    /**
     * Gives the loop up with the record logged ahead in doubt (its WRITE may have landed, or it could not be
     * withdrawn): from here the attempt is never aborted, so its INVISIBLE cells and its locks stay for recovery, which
     * decides the record by the cells. An abort that cleared them and released the locks would leave the record for
     * a later recovery to apply over a later writer's version (or clear that writer's INVISIBLE cell).
     */
    public <T> Future<T> giveUpAhead(final String what, final Throwable cause) {
        decided = true;
        return giveUp(what, cause);
    }

    /** Whether the attempt passed its point of no return. */
    public boolean decided() {
        return decided;
    }

    /**
     * Logs, then writes back with {@code version} and {@code release} for each access {@code needsRelease} picks
     * ({@link WriteSet#writeBack}); once its outcome is known, before anything listening to it hears it,
     * {@code catalog.finished(epoch)} (the attempt no longer counts as past its point of no return in that epoch).
     */
    public Future<Void> writeBack(final long version, final java.util.function.Function<Access, Boolean> needsRelease,
                                  final WriteSet.ReleaseVerb release, final io.scythe.txn.Catalog catalog,
                                  final long epoch) {
        attemptEpoch = epoch;
        final List<Access> replicated = writes.written();
        if (Replicas.any(replicated)) {
            // The record names every written object's backup copies: located first (prefetched when the writes
            // were buffered, cached for good after a key's first commit; the wait, if any, counts in the log stage).
            return Replicas.locateAll(runtime, replicated).compose(v -> logAndWriteBack(version, needsRelease,
                release, replicated, null, 0)).onComplete(done -> catalog.finished(epoch));
        }
        return logAndWriteBack(version, needsRelease, release, replicated, catalog, epoch);
    }

    /** What logAndWriteBack's write-back step does: from here the commit is decided. */
    private Future<Void> startWriteBack(final long version,
                                        final java.util.function.Function<Access, Boolean> needsRelease,
                                        final WriteSet.ReleaseVerb release, final List<Access> written) {
        decided = true;
        return writes.writeBack(version, needsRelease, release, written);
    }

    /**
     * {@code written}: {@link WriteSet#written()}, made once per commit (nothing changes what it holds from here).
     * {@code catalog} non-null: its {@code finished(epoch)} runs as the outcome's first listener.
     */
    private Future<Void> logAndWriteBack(final long version,
                                         final java.util.function.Function<Access, Boolean> needsRelease,
                                         final WriteSet.ReleaseVerb release, final List<Access> written,
                                         final io.scythe.txn.Catalog catalog, final long epoch) {
        final RedoLog log = RedoLog.of(runtime);
        if (log == null || lockKind == null || written.isEmpty()) {
            final Future<Void> writeBack = startWriteBack(version, needsRelease, release, written);
            if (lockKind != null) {
                return new Finished(this, version, catalog, epoch).listening(writeBack);
            }
            return catalog == null ? writeBack : writeBack.onComplete(ar -> catalog.finished(epoch));
        }
        // The redo record first: once it is durable the commit is decided, and recovery can finish it.
        // A record refused before its WRITE was posted is nothing: the attempt aborts. One posted whose WRITE failed
        // may have landed, or may still land: never aborted (recovery might roll it forward), never written again
        // here (see finished); recovery, after fencing this node, finds it whole or not and settles it.
        final Logging logging = new Logging(this, log, version, needsRelease, release, written, catalog, epoch);
        if (loggedAhead != null) {
            // Logged before the version existed: the checks hear the version now, before any visible write is posted.
            log.announce(id, version, written);
            return logging.listening(loggedAhead);
        }
        return logging.listening(log.append(id, version, lockKind.id(), written, lockToken, null, attemptEpoch));
    }

    /** A redo record's append that failed with {@code e}: in doubt, settled on the surviving copies or given up. */
    private Future<RedoLog.Appended> appendFailed(final RedoLog log, final Throwable e,
                                                  final java.util.function.Function<Access, Boolean> needsRelease) {
        if (e instanceof RedoLog.RecordInDoubtException doubt) {
            decided = true;
            return onSurvivingCopies(doubt).compose(survived -> survived
                ? finishOnServingCopies(doubt.appended(), 0, needsRelease)
                    .onSuccess(v -> log.release(doubt.appended())).<RedoLog.Appended>mapEmpty()
                : giveUp("its redo record's WRITE failed and may have landed", e));
        }
        return Future.failedFuture(e);
    }

    /**
     * The log-then-write-back chain as one object: the listener of the record's append, then of the write-back
     * (and of what recovers either), and the future of the outcome (without a context: its listeners run inline).
     * It was {@code clock.staged(LOG, append.recover(appendFailed)).compose(appended -> finished(version,
     * writeBack, appended).onSuccess(release))} with the catalog's listener after it: the same steps, in the same
     * order, at the same moments, without their compositions, lambdas and listener array.
     */
    private static final class Logging extends io.vertx.core.impl.future.FutureImpl<Void>
        implements io.vertx.core.Completable<Object> {
        private static final int APPEND = 0;
        private static final int APPEND_RECOVERED = 1;
        private static final int WRITTEN = 2;
        private static final int WRITE_RECOVERED = 3;

        private final RedoStep step;
        private final RedoLog log;
        private final long version;
        private final java.util.function.Function<Access, Boolean> needsRelease;
        private final WriteSet.ReleaseVerb release;
        private final List<Access> written;
        private final io.scythe.txn.Catalog catalog;
        private final long epoch;
        private int state;
        private RedoLog.Appended appended;

        Logging(final RedoStep step, final RedoLog log, final long version,
                final java.util.function.Function<Access, Boolean> needsRelease, final WriteSet.ReleaseVerb release,
                final List<Access> written, final io.scythe.txn.Catalog catalog, final long epoch) {
            this.step = step;
            this.log = log;
            this.version = version;
            this.needsRelease = needsRelease;
            this.release = release;
            this.written = written;
            this.catalog = catalog;
            this.epoch = epoch;
        }

        Future<Void> listening(final Future<RedoLog.Appended> append) {
            await(APPEND, append);
            return this;
        }

        private void await(final int next, final Future<?> future) {
            state = next;
            @SuppressWarnings("unchecked") final Future<Object> f = (Future<Object>) future;
            f.onComplete(this);
        }

        @Override
        public void complete(final Object result, final Throwable failure) {
            switch (state) {
                case APPEND -> {
                    if (failure != null) {
                        Future<RedoLog.Appended> recovered;
                        try {
                            recovered = step.appendFailed(log, failure, needsRelease);
                        } catch (final Throwable e) {
                            recovered = Future.failedFuture(e); // as recover's function that throws
                        }
                        await(APPEND_RECOVERED, recovered);
                        return;
                    }
                    logged((RedoLog.Appended) result, null);
                }
                case APPEND_RECOVERED -> logged((RedoLog.Appended) result, failure);
                case WRITTEN -> {
                    if (failure != null) {
                        Future<Void> recovered;
                        try {
                            recovered = step.writeBackFailed(version, failure, appended, needsRelease);
                        } catch (final Throwable e) {
                            recovered = Future.failedFuture(e);
                        }
                        await(WRITE_RECOVERED, recovered);
                        return;
                    }
                    released();
                }
                case WRITE_RECOVERED -> {
                    if (failure != null) {
                        done(failure);
                        return;
                    }
                    released();
                }
                default -> throw new IllegalStateException("redo step in state " + state);
            }
        }

        /** The record's append settled: the LOG stage ends, and the write-back follows a record appended. */
        private void logged(final RedoLog.Appended record, final Throwable failure) {
            step.clock.mark(Stage.LOG);
            if (failure != null) {
                done(failure);
                return;
            }
            if (record == null) {
                done(null);
                return;
            }
            appended = record;
            final Future<Void> writeBack;
            try {
                writeBack = step.startWriteBack(version, needsRelease, release, written);
            } catch (final Throwable e) {
                done(e);
                return;
            }
            await(WRITTEN, writeBack);
        }

        /** The write-back done: its record released, then the outcome passed on. */
        private void released() {
            try {
                log.release(appended);
            } finally {
                done(null);
            }
        }

        private void done(final Throwable failure) {
            try {
                if (catalog != null) {
                    catalog.finished(epoch);
                }
            } finally {
                if (failure == null) {
                    tryComplete(null);
                } else {
                    tryFail(failure);
                }
            }
        }
    }

    /**
     * Whether a record in doubt is durable on every copy that serves: it is replicated, some copies are durable, and
     * a memory-node configuration removes (now or within {@link TxnRuntime#failoverWaitNs()}) every node whose copy is
     * not known durable. What landed or may still land on a removed node counts for nothing, so the commit is
     * decided by the surviving copies, which any recovery reads.
     */
    private Future<Boolean> onSurvivingCopies(final RedoLog.RecordInDoubtException doubt) {
        final java.util.Set<String> lost = doubt.notDurableOn();
        if (doubt.appended().backups().isEmpty() || lost.isEmpty()
            || lost.size() > doubt.appended().backups().size()) {
            return Future.succeededFuture(false);
        }
        return runtime.removedWithin(lost);
    }

    /**
     * Finishes a commit whose record is durable on every serving copy after a failover removed the node of another
     * copy, or of a write-back batch that failed after it was posted (issue 23 §2: under {@code scythe chaos
     * --mn-faults} a CN gave up its lease for either). Its write-back did not finish, and the memory nodes it writes
     * may have failed over since: so it is finished as a recovery would
     * roll its record forward ({@link CnRecovery#finishRecord}: on a primary that still serves while this attempt's
     * lock is held, on a promoted copy by versions; the promoted partitions stay blocked until this commit finished,
     * since it counts as undrained in its configuration epoch), then the locks it holds without writing are released
     * (those on removed nodes died with them). A failure there gives it up to recovery, as before.
     */
    private Future<Void> finishOnServingCopies(final RedoLog.Appended appended, final long version,
                                               final java.util.function.Function<Access, Boolean> needsRelease) {
        return finishOnServingCopies(appended.record(), version, needsRelease, lockKind, lockToken);
    }

    /**
     * A decided commit of a protocol that appends its own redo record and writes back itself (RCC's Log stage:
     * {@code rcc.RccLockingTxn}), finished after a failover as this step's own chain finishes one
     * ({@link #appendFailed}, {@link #writeBackFailed}): {@code failure} is its record's append that failed in doubt
     * (then finished on the serving copies if it is durable on every copy but those of nodes a configuration
     * removes), or its write-back's, which failed after posting only on removed memory nodes
     * ({@link WriteSet#failedOn}, which the protocol adds its RPC write-backs' nodes to), {@code appended} its durable
     * record, or null when the loop keeps no log (then finished from the record it would have appended,
     * {@link RedoLog#recordOf}, begun in configuration {@code epoch}). {@code kind} and {@code token} name its locks
     * (this step was made without: it logs nothing itself).
     * Anything else gives the commit up to recovery ({@link #giveUp}, with {@code what}), as before.
     */
    public Future<Void> finishOwnRecord(final Throwable failure, final RedoLog.Appended appended, final long version,
                                        final LockKind kind, final ToLongFunction<Access> token, final long epoch,
                                        final String what) {
        decided = true;
        final java.util.function.Function<Access, Boolean> held = a -> true; // finishEntry checks the token
        if (failure instanceof RedoLog.RecordInDoubtException doubt) {
            return onSurvivingCopies(doubt).compose(survived -> survived
                ? finishOnServingCopies(doubt.appended().record(), version, held, kind, token)
                    .onSuccess(v -> RedoLog.of(runtime).release(doubt.appended()))
                : giveUp(what, failure));
        }
        final org.agrona.concurrent.UnsafeBuffer record = appended != null ? appended.record()
            : RedoLog.of(runtime) == null ? RedoLog.recordOf(id, version, kind.id(), writes.written(), token,
                runtime.catalog(), epoch) : null;
        return finishIfRemoved(record, version, held, kind, token, what, failure);
    }

    /**
     * A write-back that failed after posting: finished on the serving copies if it failed only on memory nodes a
     * configuration removes ({@link WriteSet#failedOn}: what may still land there counts for nothing) and
     * {@code record} is its record (durable on every copy, or the loop keeps no log); else given up to recovery with
     * {@code what}.
     */
    private Future<Void> finishIfRemoved(final org.agrona.concurrent.UnsafeBuffer record, final long version,
                                         final java.util.function.Function<Access, Boolean> needsRelease,
                                         final LockKind kind, final ToLongFunction<Access> token, final String what,
                                         final Throwable e) {
        final List<String> failedOn = writes.failedOn();
        final Future<Boolean> removed = record == null || failedOn.isEmpty() ? Future.succeededFuture(false)
            : runtime.removedWithin(List.copyOf(failedOn));
        return removed.compose(died -> died ? finishOnServingCopies(record, version, needsRelease, kind, token)
            : giveUp(what, e));
    }

    private Future<Void> finishOnServingCopies(final org.agrona.concurrent.UnsafeBuffer record, final long version,
                                               final java.util.function.Function<Access, Boolean> needsRelease,
                                               final LockKind lockKind, final ToLongFunction<Access> lockToken) {
        final List<Future<Boolean>> releases = new ArrayList<>();
        return new CnRecovery(runtime).finishRecord(versioned(record, version)).compose(v -> {
            for (final Access a : accesses) {
                // Held and not written: released unless the write-back's release of it landed already (finishEntry
                // releases only while it still carries this attempt's token).
                if (!(a.dirty || a.inserted) && (a.releasing || a.locked && needsRelease.apply(a))) {
                    a.locked = false;
                    if (!runtime.catalog().removed(a.partition.node())) {
                        releases.add(Reposts.untilAccepted(runtime.timers(), () -> CnRecovery.finishEntry(runtime,
                            a.partition, 0, a.pointer, lockToken.applyAsLong(a), lockKind, 0, null, 0, null)));
                    }
                }
            }
            return Reposts.settle(releases);
        }).transform(ar -> ar.failed() ? giveUp("finishing it on the serving copies after a failover failed",
            ar.cause()) : Future.<Void>succeededFuture());
    }

    /**
     * {@code record} as this committer finishes it: a record logged ahead ({@link #logAhead}) carries version 0, so a
     * copy with the commit {@code version} it knows (0: as it is).
     */
    private static org.agrona.concurrent.UnsafeBuffer versioned(final org.agrona.concurrent.UnsafeBuffer record, final long version) {
        if (version == 0 || record.getLong(io.scythe.txn.recovery.RedoRecordDescriptor.VERSION_OFFSET) != 0) {
            return record;
        }
        final org.agrona.concurrent.UnsafeBuffer copy = new org.agrona.concurrent.UnsafeBuffer(new byte[record.capacity()]);
        copy.putBytes(0, record, 0, record.capacity());
        copy.putLong(io.scythe.txn.recovery.RedoRecordDescriptor.VERSION_OFFSET, version);
        return copy;
    }

    /**
     * {@link #logAndWriteBack}'s chain without a record, for a protocol holding locks: the write-back, finished from
     * what this attempt holds if a batch of it was refused before it was posted ({@link #writeBackFailed}), then
     * {@code catalog.finished(epoch)} (if a catalog) before anything listening hears the outcome. A batch that was
     * posted and failed is not finished here but given up to recovery: its verbs may still land (a tcp frame read
     * after the connection broke; an RDMA request executed after its requester timed out), and a release that lands
     * after this node re-released the lock on a fresh queue pair would add 1 to {@code upper} twice, giving the lock
     * to two holders. Recovery runs only after this node is fenced on every memory node, which waits out verbs in
     * flight and refuses the rest.
     *
     * <p>One object, the write-back's listener (then its recovery's) and the outcome's future: it was {@code
     * writeBack.recover(e -> writeBackFailed(...)).onComplete(ar -> catalog.finished(epoch))}, whose lambdas,
     * composition and the listener array the caller's step then needed were five. The same steps in the same order
     * at the same moments (its listeners run inline: no context).
     */
    private static final class Finished extends io.vertx.core.impl.future.FutureImpl<Void>
        implements io.vertx.core.Completable<Void> {
        private final RedoStep step;
        private final long version;
        private final io.scythe.txn.Catalog catalog;
        private final long epoch;
        private boolean recovering;

        Finished(final RedoStep step, final long version, final io.scythe.txn.Catalog catalog, final long epoch) {
            this.step = step;
            this.version = version;
            this.catalog = catalog;
            this.epoch = epoch;
        }

        Future<Void> listening(final Future<Void> writeBack) {
            writeBack.onComplete(this);
            return this;
        }

        @Override
        public void complete(final Void result, final Throwable failure) {
            if (failure != null && !recovering) {
                recovering = true;
                Future<Void> recovered;
                try {
                    recovered = step.writeBackFailed(version, failure, null, null);
                } catch (final Throwable e) {
                    recovered = Future.failedFuture(e); // as recover's function that throws
                }
                recovered.onComplete(this);
                return;
            }
            if (catalog != null) {
                catalog.finished(epoch);
            }
            if (failure == null) {
                tryComplete(result);
            } else {
                tryFail(failure);
            }
        }
    }

    /** The recovery from a write-back that failed with {@code e} ({@link Finished}, {@link Logging}). */
    private Future<Void> writeBackFailed(final long version, final Throwable e, final RedoLog.Appended appended,
                                         final java.util.function.Function<Access, Boolean> needsRelease) {
        if (Refusal.forNow(e)) {
            return finishFromRecord(version, e, 1);
        }
        return finishIfRemoved(appended == null ? null : appended.record(), version, needsRelease, lockKind, lockToken,
            "a write-back verb failed and may still land", e);
    }

    /**
     * Finishes a decided commit whose write-back was refused in part (other batches may have landed, each with its
     * releases last): every entry whose lock this attempt still holds is written and released again; entries found
     * released are done ({@link CnRecovery#finishEntry}). The locks it holds make the rewrite safe. Only refusals
     * are tried again, at most {@link #FINISH_ATTEMPTS} times; a verb that failed after it was posted, or running
     * out of attempts, gives the commit up to recovery ({@link Finished} says why).
     */
    private Future<Void> finishFromRecord(final long version, final Throwable failure, final int attempt) {
        if (attempt > FINISH_ATTEMPTS) {
            return giveUp("its write-back could not be finished", failure);
        }
        return runtime.timers().after(FINISH_PAUSE_NS << (attempt - 1)).compose(v -> {
            final List<Future<Boolean>> entries = new ArrayList<>();
            for (final Access a : accesses) {
                final boolean written = a.dirty || a.inserted;
                if (written || a.releasing) {
                    final Future<Boolean> entry = Reposts.untilAccepted(runtime.timers(), () -> CnRecovery.finishEntry(
                        runtime, a.partition, written ? RedoLog.opOf(a) : 0, a.pointer, lockToken.applyAsLong(a),
                        lockKind, version, a.newValue, written ? RedoLog.valueBytes(a) : 0,
                        written ? a.backupPointers : null));
                    // A protocol keeping its versions beside the header (Lotus's CVT cells) makes them agree with the
                    // finished home, as recovery does (CnRecovery#applyEntry): the refused batch carried its visible
                    // writes. Still under this attempt's locks, so nobody else wrote the object since.
                    entries.add(written && lockKind.versionsBesideHeader() ? entry.compose(applied -> Reposts
                        .untilAccepted(runtime.timers(), () -> lockKind.recovered(runtime, a.partition, a.pointer,
                            a.backupPointers == null ? new long[0] : a.backupPointers, lockToken.applyAsLong(a),
                            version)).map(applied)) : entry);
                }
            }
            return Reposts.settle(entries);
        }).recover(e -> Refusal.forNow(e) ? finishFromRecord(version, e, attempt + 1)
            : giveUp("finishing its write-back failed with a verb that may still land", e));
    }

    /**
     * A decided commit this loop cannot finish: it keeps its locks and its redo record (not released, so never
     * truncated), the loop gives up ({@link TxnRuntime#giveUp}: the node stops serving, and recovery of its
     * incarnation settles the record), and the client hears "outcome unknown", never "aborted".
     */
    public <T> Future<T> giveUp(final String what, final Throwable cause) {
        if (!toldInDoubt) {
            toldInDoubt = true;
            inDoubt.run(); // what of its writes landed may be read: the history must know them
        }
        runtime.giveUp("transaction " + Long.toHexString(id) + ": " + what + ": " + cause);
        return Future.failedFuture(new OutcomeUnknownException("transaction " + Long.toHexString(id)
            + " is committed or in doubt: " + what, cause));
    }
}
