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
import java.util.function.Supplier;
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

    /** Whether the attempt passed its point of no return. */
    public boolean decided() {
        return decided;
    }

    /**
     * Logs, then writes back with {@code version} and {@code release} for each access {@code needsRelease} picks
     * ({@link WriteSet#writeBack}).
     */
    public Future<Void> writeBack(final long version, final java.util.function.Function<Access, Boolean> needsRelease,
                                  final WriteSet.ReleaseVerb release) {
        final List<Access> replicated = writes.written();
        if (Replicas.any(replicated)) {
            // The record names every written object's backup copies: located first (prefetched when the writes
            // were buffered, cached for good after a key's first commit; the wait, if any, counts in the log stage).
            return Replicas.locateAll(runtime, replicated).compose(v -> logAndWriteBack(version, needsRelease,
                release, replicated));
        }
        return logAndWriteBack(version, needsRelease, release, replicated);
    }

    /** {@code written}: {@link WriteSet#written()}, made once per commit (nothing changes what it holds from here). */
    private Future<Void> logAndWriteBack(final long version,
                                         final java.util.function.Function<Access, Boolean> needsRelease,
                                         final WriteSet.ReleaseVerb release, final List<Access> written) {
        final Supplier<Future<Void>> writeBack = () -> {
            decided = true;
            return writes.writeBack(version, needsRelease, release, written);
        };
        final RedoLog log = RedoLog.of(runtime);
        if (log == null || lockKind == null) {
            return finished(version, writeBack.get(), null, null);
        }
        // The redo record first: once it is durable the commit is decided, and recovery can finish it.
        if (written.isEmpty()) {
            return finished(version, writeBack.get(), null, null);
        }
        // A record refused before its WRITE was posted is nothing: the attempt aborts. One posted whose WRITE failed
        // may have landed, or may still land: never aborted (recovery might roll it forward), never written again
        // here (see finished); recovery, after fencing this node, finds it whole or not and settles it.
        return clock.staged(Stage.LOG, log.append(id, version, lockKind.id(), written, lockToken)
            .recover(e -> {
                if (e instanceof RedoLog.RecordInDoubtException doubt) {
                    decided = true;
                    return onSurvivingCopies(doubt).compose(survived -> survived
                        ? finishOnServingCopies(doubt.appended(), needsRelease)
                            .onSuccess(v -> log.release(doubt.appended())).<RedoLog.Appended>mapEmpty()
                        : giveUp("its redo record's WRITE failed and may have landed", e));
                }
                return Future.failedFuture(e);
            }))
            .compose(appended -> appended == null ? Future.<Void>succeededFuture()
                : finished(version, writeBack.get(), appended, needsRelease).onSuccess(v -> log.release(appended)));
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
    private Future<Void> finishOnServingCopies(final RedoLog.Appended appended,
                                               final java.util.function.Function<Access, Boolean> needsRelease) {
        final List<Future<Boolean>> releases = new ArrayList<>();
        return new CnRecovery(runtime).finishRecord(appended.record()).compose(v -> {
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
     * {@code writeBack}, finished from what this attempt holds if a batch of it was refused before it was posted
     * (nothing to finish without locks). A batch that was posted and failed is not finished here but given up to
     * recovery: its verbs may still land (a tcp frame read after the connection broke; an RDMA request executed
     * after its requester timed out), and a release that lands after this node re-released the lock on a fresh
     * queue pair would add 1 to {@code upper} twice, giving the lock to two holders. Recovery runs only after this
     * node is fenced on every memory node, which waits out verbs in flight and refuses the rest.
     */
    private Future<Void> finished(final long version, final Future<Void> writeBack, final RedoLog.Appended appended,
                                  final java.util.function.Function<Access, Boolean> needsRelease) {
        return lockKind == null ? writeBack : writeBack.recover(e -> {
            if (Refusal.forNow(e)) {
                return finishFromRecord(version, e, 1);
            }
            // Failed after posting only on memory nodes a configuration removes: what may still land there counts
            // for nothing, and the record (durable on every copy) finishes it on the copies that serve.
            final List<String> failedOn = writes.failedOn();
            final Future<Boolean> removed = appended == null || failedOn.isEmpty() ? Future.succeededFuture(false)
                : runtime.removedWithin(List.copyOf(failedOn));
            return removed.compose(died -> died ? finishOnServingCopies(appended, needsRelease)
                : giveUp("a write-back verb failed and may still land", e));
        });
    }

    /**
     * Finishes a decided commit whose write-back was refused in part (other batches may have landed, each with its
     * releases last): every entry whose lock this attempt still holds is written and released again; entries found
     * released are done ({@link CnRecovery#finishEntry}). The locks it holds make the rewrite safe. Only refusals
     * are tried again, at most {@link #FINISH_ATTEMPTS} times; a verb that failed after it was posted, or running
     * out of attempts, gives the commit up to recovery ({@link #finished} says why).
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
