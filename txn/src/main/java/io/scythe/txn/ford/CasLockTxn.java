package io.scythe.txn.ford;

import io.scythe.bridge.Doorbell;
import io.scythe.bridge.RdmaChannel;
import io.scythe.storage.ObjectLayout;
import io.scythe.txn.AbortException;
import io.scythe.txn.AbortReason;
import io.scythe.txn.Access;
import io.scythe.txn.Stage;
import io.scythe.txn.TxnRuntime;
import io.scythe.txn.onesided.Futures;
import io.scythe.txn.onesided.HeaderBuffers;
import io.scythe.txn.onesided.OneSidedTxn;
import io.scythe.txn.spi.LockKind;
import io.vertx.core.Future;
import org.agrona.concurrent.UnsafeBuffer;

import java.util.ArrayList;
import java.util.List;

/**
 * What FORD's and FaRM's OCC share on the object's CAS lock word ({@link CasLock}): locking a key at commit (CAS and
 * a header READ in one doorbell, the version still the one read), validating the keys only read (version unchanged,
 * lock free), writing back with WRITE 0 as the release, and releasing everything held on abort. A lock taken on a
 * slot that turns out to be another object (freed and reused since the attempt cached its pointer) is released by a
 * conditional CAS ({@link #unlockIfOurs}), never a WRITE of 0, which could free the lock of the slot's new owner.
 */
public abstract class CasLockTxn extends OneSidedTxn {
    protected static final UnsafeBuffer FREE = new UnsafeBuffer(new byte[8]);

    protected CasLockTxn(final TxnRuntime runtime) {
        super(runtime);
    }

    /**
     * CAS lock + READ in one doorbell (FORD's execution-phase lock of a key it will write; Motor's too): the lock word
     * 0 -> this attempt, and {@link #lockReadBytes} of the object from its header; a version other than one read
     * before aborts.
     */
    protected final Future<io.scythe.txn.Access> lockAndRead(final io.scythe.txn.Access a) {
        final String table = a.table;
        final long key = a.key;
        if (a.fetch != null && !a.fetch.failed() && !a.fetch.isComplete()) {
            return a.fetch.compose(x -> x.locked ? Future.succeededFuture(x) : lockAndRead(x));
        }
        final Future<io.scythe.txn.Access> locking = doLockAndRead(a, table, key);
        a.fetch = locking;
        return locking;
    }

    private Future<io.scythe.txn.Access> doLockAndRead(final io.scythe.txn.Access a, final String table,
                                                      final long key) {
        // Futures.then(channel(a), ch -> ...) without the lambda when the channel is there (always, but the first time)
        final Future<RdmaChannel> channel = channel(a);
        if (!Futures.ready(channel)) {
            return channel.compose(ch -> lockAndReadOn(ch, a, table, key));
        }
        try {
            return lockAndReadOn(channel.result(), a, table, key);
        } catch (final RuntimeException e) { // as Futures.then: a throw fails the step
            return Future.failedFuture(e);
        }
    }

    private Future<io.scythe.txn.Access> lockAndReadOn(final RdmaChannel ch, final io.scythe.txn.Access a,
                                                      final String table, final long key) {
        final Doorbell batch = ch.doorbell();
        final int cas = batch.compareAndSwap(CasLock.lockAddress(a.pointer), a.rkey(), 0, id);
        final int bytes = lockReadBytes(a); // first: it may give the access a larger image
        batch.read(a.address(), a.rkey(), a.image, 0, bytes);
        // Lock time, though taken while executing (Fig. 26 compares lock stages across protocols).
        clock.enterWithin(Stage.LOCK);
        final LockAndRead step = new LockAndRead(a, batch, cas, table, key);
        batch.post(step);
        return step;
    }

    /**
     * {@link #lockAndRead}'s batch completing: {@code postLocking(a, batch, cas, Stage.LOCK, null, next)} with {@code
     * next} checking the CAS's old value, then {@link #tookLock} (or {@link #releaseStale}), then the image and the
     * version read before. One object per lock, the batch's callback and the step's future, where a promise, the
     * callback's lambda, three step lambdas and the checked image's future were six; the same steps at the same moments
     * (a step that completed at once passes its outcome on inline, as the promise's listener ran inline).
     */
    private final class LockAndRead extends io.vertx.core.impl.future.FutureImpl<io.scythe.txn.Access>
        implements io.scythe.bridge.VerbCallback, io.vertx.core.Completable<io.scythe.txn.Access> {
        private final io.scythe.txn.Access a;
        private final Doorbell batch;
        private final int cas;
        private final String table;
        private final long key;

        LockAndRead(final io.scythe.txn.Access a, final Doorbell batch, final int cas, final String table,
                    final long key) {
            this.a = a;
            this.batch = batch;
            this.cas = cas;
            this.table = table;
            this.key = key;
        }

        @Override
        public void done(final long value, final Throwable failure) {
            clock.leaveWithin();
            Future<io.scythe.txn.Access> step = null;
            Throwable bad;
            try {
                if (failure != null) {
                    step = lockingFailed(a, batch, cas, failure);
                    bad = null;
                } else {
                    final long previous = batch.result(cas);
                    if (previous != 0) {
                        bad = new AbortException(AbortReason.LOCKED, "key " + key + " of " + table
                            + " is locked by txn " + previous);
                    } else {
                        final Future<Void> held = sameObject(a, a.image) ? tookLock(a) : releaseStale(a);
                        if (Futures.ready(held)) {
                            bad = checkLocked();
                        } else {
                            step = held.compose(h -> {
                                final Throwable refused = checkLocked();
                                return refused == null ? Future.succeededFuture(a) : Future.failedFuture(refused);
                            });
                            bad = null;
                        }
                    }
                }
            } catch (final Throwable e) { // as compose and recover: a throw fails the step
                step = null;
                bad = e;
            }
            if (step != null) {
                step.onComplete(this);
            } else {
                complete(bad == null ? a : null, bad);
            }
        }

        /** The image READ with the lock is the key's, at the version read before it (if any); else why not. */
        private Throwable checkLocked() {
            final long seenBefore = a.fetched ? a.readVersion : -1;
            final Throwable refused = checkImage(a);
            if (refused == null && seenBefore != -1 && a.readVersion != seenBefore) {
                return new AbortException(AbortReason.VALIDATION, "key " + key + " changed between its read and its "
                    + "lock");
            }
            return refused;
        }

        @Override
        public void complete(final io.scythe.txn.Access result, final Throwable failure) {
            if (failure == null) {
                tryComplete(result);
            } else {
                tryFail(failure);
            }
        }
    }

    /**
     * Bytes of the object {@link #lockAndRead} READs with its CAS: the whole slot by default (FORD). A protocol that
     * READs more than the access's image holds grows the image here.
     */
    protected int lockReadBytes(final Access a) {
        return a.slotBytes();
    }

    /** CAS lock 0 -> this attempt, with a header READ in the same doorbell; the version must still be the one read. */
    protected final Future<Void> lockForCommit(final Access a) {
        return Futures.then(channel(a), ch -> {
            final Doorbell batch = ch.doorbell();
            final int cas = batch.compareAndSwap(CasLock.lockAddress(a.pointer), a.rkey(), 0, id);
            // One of the loop's header buffers, given back once the batch completed and the step below read it.
            final HeaderBuffers buffers = HeaderBuffers.of(runtime);
            final UnsafeBuffer header = buffers.take();
            batch.read(a.address(), a.rkey(), header, 0, ObjectLayout.HEADER_BYTES);
            return postLocking(a, batch, cas, null, () -> buffers.giveBack(header), b -> {
                if (b.result(cas) != 0) {
                    return Future.failedFuture(new AbortException(AbortReason.LOCKED, "key " + a.key
                        + " is locked at commit"));
                }
                if (!sameObject(a, header)) {
                    return releaseStale(a);
                }
                a.locked = true;
                if (!unchangedSinceRead(a, header)) {
                    return Future.failedFuture(new AbortException(AbortReason.VALIDATION, "key " + a.key
                        + " changed since it was read"));
                }
                return Future.succeededFuture();
            });
        });
    }

    /**
     * Posts {@code batch}, whose request {@code cas} CASes {@code a}'s lock word from 0 to this attempt's id. Refused
     * for now, nothing happened (the attempt aborts for back-pressure). Failed after a later request of it, the CAS
     * completed and its old value tells whether this attempt holds the lock ({@link #tookLock}; the abort releases
     * it). Failed at the CAS itself, the CAS may have landed, and only recovery can tell and free it (a WRITE of 0
     * here would free another holder's lock if it did not): the loop gives up.
     */
    protected final Future<Doorbell> postLocking(final Access a, final Doorbell batch, final int cas) {
        return batch.post().recover(e -> lockingFailed(a, batch, cas, e));
    }

    /**
     * {@code postLocking(a, batch, cas).compose(next)}, with the batch reporting to a callback (no promise,
     * recovery or composition per lock): {@code next} runs when it succeeded, {@link #postLocking}'s recovery when it
     * failed. With {@code within} non-null the batch's time in flight is that stage's ({@link StageClock#within});
     * {@code done} (or null) runs once the batch completed, before the step that follows (e.g. gives back a buffer).
     */
    protected final <T> Future<T> postLocking(final Access a, final Doorbell batch, final int cas,
                                              final io.scythe.txn.Stage within, final Runnable done,
                                              final java.util.function.Function<Doorbell, Future<T>> next) {
        final io.vertx.core.Promise<T> out = io.vertx.core.Promise.promise();
        if (within != null) {
            clock.enterWithin(within);
        }
        batch.post((v, failure) -> {
            if (within != null) {
                clock.leaveWithin();
            }
            Future<T> step;
            try {
                step = failure == null ? next.apply(batch) : lockingFailed(a, batch, cas, failure);
            } catch (final Throwable e) { // as compose and recover: a throw fails the step
                step = Future.failedFuture(e);
            }
            if (done != null) {
                done.run();
            }
            step.onComplete(out);
        });
        return out.future();
    }

    /** {@link #postLocking}'s recovery from the batch's failure {@code e}: always a failed future. */
    private <T> Future<T> lockingFailed(final Access a, final Doorbell batch, final int cas, final Throwable e) {
        if (io.scythe.txn.Refusal.forNow(e)) {
            return Future.failedFuture(e);
        }
        if (batch.failedIndex() <= cas) {
            return lockVerbInDoubt(a.partition.node(), "its lock CAS on key " + a.key + " of " + a.table + " failed after it was "
                + "posted", e);
        }
        // The CAS took the word, but nothing tells which object's (the READ after it failed): let go of it
        // only while it is still this attempt's.
        return (batch.result(cas) == 0 ? unlockIfOurs(a) : Future.<Void>succeededFuture())
            .compose(v -> Future.failedFuture(e));
    }

    /** Whether a header (or image) READ of {@code a}'s slot shows the object the attempt read (same incarnation). */
    protected static boolean sameObject(final Access a, final org.agrona.DirectBuffer header) {
        return (header.getShort(ObjectLayout.INCARNATION_OFFSET) & 0xffff) == ObjectLayout.incarnationOf(a.pointer);
    }

    /**
     * This attempt's lock CAS took the word of a slot that is no longer the object it read (freed and reused since):
     * it lets go of it conditionally ({@link #unlockIfOurs}), forgets the cached pointer, and fails for validation.
     */
    protected final Future<Void> releaseStale(final Access a) {
        runtime.remote(a.partition).invalidate(a.key);
        return unlockIfOurs(a).compose(v -> Future.failedFuture(new AbortException(AbortReason.VALIDATION, "key "
            + a.key + " of " + a.table + " moved (its slot was freed and reused)")));
    }

    /**
     * {@code a}'s lock CAS succeeded on the object the attempt read ({@link #sameObject}): this attempt holds the lock,
     * unless it was given up while the CAS was in flight; then the lock is released at once and this fails.
     */
    protected final Future<Void> tookLock(final Access a) {
        if (finished) {
            return releaseLate(a.partition.node(), () -> unlock(a))
                .compose(v -> Future.failedFuture(new AbortException(AbortReason.LOCKED, "attempt over")));
        }
        a.locked = true;
        return Future.succeededFuture();
    }

    /**
     * Frees the word this attempt's CAS set, by a CAS from its id back to 0, so only while it still holds it: for a
     * word taken on a slot that was not checked to be the object read. A slot freed by reclamation can be reused at
     * once: the memory node zeroes the new object's header and may lock it for an inserter, so a WRITE of 0 here
     * would free another transaction's lock. Posted again while refused for now (a CAS that landed twice changes
     * nothing the second time); failing otherwise, the loop gives up ({@link #lockVerbInDoubt}).
     */
    protected final Future<Void> unlockIfOurs(final Access a) {
        a.locked = false;
        return releaseLate(a.partition.node(), () -> channel(a).compose(ch -> ch.compareAndSwap(
            CasLock.lockAddress(a.pointer), a.rkey(), id, 0)));
    }

    /** Frees {@code a}'s lock, which this attempt holds, with a WRITE of 0 (posted once: see lockVerbInDoubt). */
    protected final Future<Void> unlock(final Access a) {
        return Futures.then(channel(a), ch -> ch.write(CasLock.lockAddress(a.pointer), a.rkey(), FREE, 0, 8));
    }

    /** Re-READs the header of every key not locked: its version unchanged and its lock free. */
    protected final Future<Void> validateUnlocked() {
        List<Future<Void>> checks = null; // none (every key locked): no list
        for (int i = 0; i < accesses.size(); i++) {
            final Access a = accesses.get(i);
            if (!a.locked && !a.readOnlyTable()) {
                if (checks == null) {
                    checks = new ArrayList<>(accesses.size());
                }
                checks.add(checkHeader(a, h -> { // a throw fails the check
                    if (!unchangedSinceRead(a, h) || h.getLong(ObjectLayout.CAS_LOCK_OFFSET) != 0) {
                        throw new AbortException(AbortReason.VALIDATION, "key " + a.key + " of " + a.table
                            + " changed or is locked");
                    }
                }));
            }
        }
        return checks == null ? Future.succeededFuture() : settle(checks);
    }

    /** Validation of an OCC commit over CAS locks: the keys not locked, and the keys read as absent. */
    protected final Future<Void> validateCasLocked() {
        final Future<Void> unlocked = validateUnlocked();
        final Future<Void> absent = validateAbsent();
        // Nothing read as absent (the common case): the outcome is the unlocked keys' alone, no pair to settle.
        return absent.succeeded() ? unlocked : settle(List.of(unlocked, absent));
    }

    /** The commit chain's validation (FORD, FaRM, Motor; a duplicate insert's too): {@link #validateCasLocked}. */
    @Override
    protected Future<Void> commitValidation() {
        return validateCasLocked();
    }

    /** The commit chain's write-back: {@link #writeBackAndUnlock}. */
    @Override
    protected Future<Void> commitWriteBack(final long version) {
        return writeBackAndUnlock(version);
    }

    /** Writes back with {@code version} and frees every held lock with a WRITE of 0 in the same batch. */
    protected final Future<Void> writeBackAndUnlock(final long version) {
        return writeBack(version, a -> a.locked,
            (batch, a) -> batch.write(CasLock.lockAddress(a.pointer), a.rkey(), FREE, 0, 8));
    }

    /** Inserted objects are created with this attempt's id in their CAS lock word. */
    protected final Future<Void> installInserts(final long owner) {
        return installInserts(io.scythe.storage.Table.InsertLock.CAS_WORD, owner, (a, inserted) -> { });
    }

    @Override
    protected LockKind lockKind() {
        return CasLockKind.INSTANCE;
    }

    @Override
    protected final long lockToken(final Access a) {
        return id; // the CAS lock word of every object this attempt holds
    }

    @Override
    protected final io.scythe.storage.Table.InsertLock insertLock() {
        return io.scythe.storage.Table.InsertLock.CAS_WORD;
    }

    @Override
    public Future<Void> abort() {
        return releaseHeld(this::unlock);
    }
}
