package io.scythe.txn.selcc;

import io.scythe.storage.ObjectLayout;
import io.scythe.txn.AbortException;
import io.scythe.txn.AbortReason;
import io.scythe.txn.Access;
import io.scythe.txn.TxnRuntime;
import io.scythe.txn.onesided.Inserts;
import io.scythe.txn.selcc.LineCache.Frame;
import io.scythe.txn.selcc.LineCache.Memo;
import io.vertx.core.Future;
import org.agrona.concurrent.UnsafeBuffer;

import java.util.ArrayList;
import java.util.List;


/**
 * Transactions on SELCC's coherent cache: two-phase locking (no wait; below), or TO and OCC ({@link Mode}).
 * Two-phase locking (no wait) on SELCC's coherent cache ({@link LineCache}): the transaction's locks are the frames'
 * local shared-exclusive latches; the global latch stays with the loop after the commit (lazy release), so a line
 * read or written again by this loop costs no verb. A read takes the local latch Shared (a miss or memo I acquires
 * S globally first); {@code readForUpdate} and a write at commit take it Exclusive (memo S is upgraded, I acquired
 * X). Any local conflict aborts at once; a global conflict sends invalidations, and one dropped by the holder (a
 * transaction there holds the line) aborts. The commit writes the new values into the frames (memo M, dirty bounds
 * widened, the version word + 1 as the write counter); they reach the memory node when the line is evicted, handed
 * to a reader (case 2 flush) or its lease ends. No redo log by default (SELCC's evaluation runs with WAL off); with
 * one, commits log and write through so that a dead compute node can be recovered ({@link #installed}; package doc
 * "Dead compute nodes").
 *
 * <p><b>Inserts and deletes</b> (every mode). The rows live in the tables' object slots, one
 * line each, found through the memory nodes' index (not the B-link tree: the workloads' tables are not on it). A
 * delete is a write under the line's Exclusive latch that leaves a tombstone (the flags word's DELETED, version + 1):
 * a later transaction's read finds the key deleted, as an absent one. An insert, at commit once every written line is
 * latched Exclusive: a key in the index (a tombstone, or live: a duplicate) is latched Exclusive through the cache
 * like any write and revived in place; a missing key is created by the memory node's INSERT, CAS-locked with this
 * attempt's id (the memory node refuses, LOCKED, a key whose latch word is held: it only touches lines no compute node
 * caches), then latched Exclusive through the cache, waiting if need be (no transaction holds a CAS-locked line: a
 * read that finds the CAS word set aborts at once). The commit clears the CAS word in the frame (flushed with the
 * version); an abort leaves a tombstone there instead (never the memory node's ABANDON, which would free a slot other
 * compute nodes may still cache): an aborted insert leaves a deleted key, read as absent.
 */
public final class SelccTxn extends LatchTxn {
    private final LineCache cache;
    /** TO in a recoverable run: the write-throughs of the {@code rts} its reads raised, waited for by the commit. */
    private List<Future<Void>> rtsWrites;
    /** TO: the frames of the marks this commit buried ({@link #buryMark}). */
    private List<Frame> markFrames;

    /** What one access holds of its frame's local latch. */
    private static final class Hold {
        final Frame frame;
        boolean exclusive;

        Hold(final Frame frame, final boolean exclusive) {
            this.frame = frame;
            this.exclusive = exclusive;
        }
    }

    public SelccTxn(final TxnRuntime runtime) {
        this(runtime, Mode.TWO_PL);
    }

    SelccTxn(final TxnRuntime runtime, final Mode mode) {
        super(runtime, mode);
        this.cache = LineCache.of(runtime);
    }

    @Override
    public String mode() {
        return mode.label;
    }

    private static Hold hold(final Access a) {
        return (Hold) a.held;
    }

    @Override
    protected <T> Future<T> locked(final Access a, final String why) {
        LineCache.Stats.count("abort: " + why.replaceAll(" \\(.*", ""));
        return Future.failedFuture(new AbortException(AbortReason.LOCKED, "key " + a.key + " of " + a.table + ": "
            + why));
    }

    private Frame frameOf(final Access a) {
        return cache.frame(a.partition.node(), a.address(), a.rkey(), a.slotBytes() + (mode == Mode.TO ? TO_ROOM : 0));
    }

    /** Copies the frame's line into the access and checks it (incarnation, version) as a READ would be. */
    private Future<Access> fromFrame(final Access a, final Frame f) {
        a.image.putBytes(0, f.image, 0, a.slotBytes());
        cache.used(f);
        return checkedImage(a);
    }

    @Override
    protected boolean exclusive(final Access a) {
        return hold(a).exclusive;
    }

    private Future<Access> afterLocalStep(final Access a, final Frame f,
                                          final java.util.function.Function<Access, Future<Access>> retry) {
        if (f != null && f.acquiring && !holdsNothing()) {
            return locked(a, "another transaction of this loop is acquiring it, and this one holds other lines");
        }
        final Future<Void> step = f == null ? cache.evicted(a.partition.node(), a.address()) : cache.settled(f);
        return step.compose(v -> finished ? locked(a, "attempt over") : retry.apply(a));
    }

    @Override
    protected Future<Access> lockShared(final Access a) {
        switch (mode) {
            case TO:
                return toRead(a);
            case OCC:
                return lockShared(a, false).map(x -> {
                    unlatch(x);
                    return x;
                });
            default:
                return lockShared(a, false);
        }
    }

    /** OCC and TO: the latch of a read is let go once the line was copied (or its timestamps checked). */
    private void unlatch(final Access a) {
        a.locked = false;
        releaseLocal(a);
    }


    /** TO read: the line Exclusive, {@code wts <= ts} checked, {@code rts} raised to ts, the latch let go. */
    private Future<Access> toRead(final Access a) {
        return timestamp().compose(ts -> lockExclusive(a, false).compose(x -> {
            final Frame f = hold(x).frame;
            final int room = x.slotBytes();
            final AbortException late = readLate(x, f.image.getLong(room + 8), ts);
            if (late != null) {
                unlatch(x);
                return Future.failedFuture(late);
            }
            if (raisesRts(f.image.getLong(room), ts)) {
                f.image.putLong(room, ts);
                f.dirty = DirtyBounds.widen(f.dirty, room - ObjectLayout.VALUE_OFFSET, 8);
                if (cache.recoverable()) { // package doc "Dead compute nodes": no raise only in a cache
                    if (rtsWrites == null) {
                        rtsWrites = new ArrayList<>(4);
                    }
                    rtsWrites.add(cache.writeThroughWord(f, room));
                }
            }
            unlatch(x);
            return Future.succeededFuture(x);
        }));
    }

    /**
     * A hit costs no verb but does cost the compute node's CPU (the local latch, the lookup, the copy): it runs as a
     * task of its own on the loop ({@code charged} after it), which the simulator charges like any completion's
     * work; otherwise a loop whose lines are all cached would run transactions in no virtual time at all.
     */
    private Future<Access> chargeHit(final Access a, final java.util.function.Function<Access, Future<Access>> then) {
        return runtime.timers().after(1).compose(v -> finished ? locked(a, "attempt over") : then.apply(a));
    }

    private Future<Access> lockShared(final Access a, final boolean charged) {
        final Frame f = frameOf(a);
        if (f == null || f.busy) {
            return afterLocalStep(a, f, x -> lockShared(x, charged));
        }
        if (f.writer) {
            return locked(a, "written by another transaction of this loop");
        }
        if (f.memo != Memo.I) {
            if (!charged) {
                return chargeHit(a, x -> lockShared(x, true));
            }
            LineCache.hit();
            return take(a, f, false);
        }
        return cache.acquireShared(f, holdsNothing()).transform(done -> {
            if (done.failed()) {
                cache.forgetIfInvalid(f);
                return Future.failedFuture(done.cause());
            }
            return take(a, f, false);
        });
    }

    @Override
    protected Future<Access> lockExclusive(final Access a) {
        switch (mode) {
            case TO: // a read for update is a read (Exclusive for the moment of its check): the commit latches the writes
                return a.fetched ? Future.succeededFuture(a) : lockShared(a);
            case OCC:
                // The copy of a read for update is taken Exclusive (the global latch then stays here, memo M, as the
                // commit's latch wants it) and the local latch let go at once. Taken Shared, every loop that read a
                // hot line for update held it S and upgraded at its commit: each upgrade invalidated the other readers,
                // each busy upgrading too and so dropping it, and none ever won (a livelock: clients never finished).
                return a.fetched ? Future.succeededFuture(a) : lockExclusive(a, false).map(x -> {
                    unlatch(x);
                    return x;
                });
            default:
                return lockExclusive(a, false);
        }
    }

    private Future<Access> lockExclusive(final Access a, final boolean charged) {
        final Frame f = frameOf(a);
        if (f == null || f.busy) {
            return afterLocalStep(a, f, x -> lockExclusive(x, charged));
        }
        if (!f.idle()) {
            return locked(a, "latched by another transaction of this loop (" + f + ")");
        }
        if (f.memo == Memo.M) {
            if (!charged) {
                return chargeHit(a, x -> lockExclusive(x, true));
            }
            LineCache.hit();
            return take(a, f, true);
        }
        return (f.memo == Memo.S ? cache.upgrade(f, holdsNothing())
            : cache.acquireExclusive(f, holdsNothing())).transform(done -> {
            if (done.failed()) {
                cache.forgetIfInvalid(f);
                return Future.failedFuture(done.cause());
            }
            return take(a, f, true);
        });
    }

    /** Takes the local latch (the frame's memo allows it) unless the attempt is over, and reads the copy. */
    private Future<Access> take(final Access a, final Frame f, final boolean exclusive) {
        if (finished) {
            return locked(a, "attempt over"); // the global latch stays cached: nothing to release
        }
        final long casWord = f.image.getLong(ObjectLayout.CAS_LOCK_OFFSET);
        if (casWord != 0 && !created(a)) {
            if (cache.buriedSince(f, casWord)) {
                // Its inserter died and the memory node buried the insert after this copy was taken: the copy is
                // READ again and the access retried (kept, every read of the line aborted to the end of the run).
                return cache.refreshed(f, casWord).compose(v -> finished ? locked(a, "attempt over")
                    : exclusive ? lockExclusive(a, true) : lockShared(a, true));
            }
            // Created by an INSERT not committed yet: never latched locally, so its inserter's Exclusive acquire
            // is served at once (the global latch stays cached here until then).
            return locked(a, "inserted by a transaction not committed yet");
        }
        if (f.wanted) {
            if (f.sinceWanted >= cache.gamma()) {
                cache.yieldIfDue(f);
                return locked(a, "its lease ran out: yielding it to another compute node");
            }
            f.sinceWanted++;
        }
        if (exclusive) {
            f.writer = true;
        } else {
            f.readers++;
        }
        a.held = new Hold(f, exclusive);
        a.locked = true;
        return fromFrame(a, f);
    }

    /** Local S -> X of an access this attempt read: the global upgrade when memo is S; the version must hold. */
    @Override
    protected Future<Void> upgrade(final Access a) {
        if (mode != Mode.TWO_PL) {
            return Future.succeededFuture(); // nothing held between accesses
        }
        final Hold h = hold(a);
        final Frame f = h.frame;
        if (f.busy) {
            return cache.settled(f).compose(v -> finished ? locked(a, "attempt over") : upgrade(a));
        }
        if (f.writer || f.readers != 1) {
            return locked(a, "shared by another transaction of this loop (" + f + ")");
        }
        final Future<Void> global = f.memo == Memo.M ? Future.succeededFuture()
            : cache.upgrade(f, holdsNothingBut(a));
        return global.compose(v -> {
            f.readers = 0;
            f.writer = true;
            h.exclusive = true;
            cache.used(f);
            if (f.image.getLong(ObjectLayout.VERSION_OFFSET) != a.readVersion) { // the fallback re-read it
                return Future.failedFuture(new AbortException(AbortReason.VALIDATION, "key " + a.key + " of "
                    + a.table + " was written between its Shared release and its Exclusive acquire"));
            }
            return Future.succeededFuture();
        });
    }

    /** Whether this attempt holds no local latch: it may then wait for a dropped invalidation without deadlock. */
    private boolean holdsNothing() {
        return holdsNothingBut(null);
    }

    private boolean holdsNothingBut(final Access except) {
        for (final Access a : accesses) {
            if (a.locked && a != except) {
                return false;
            }
        }
        return true;
    }

    private void releaseLocal(final Access a) {
        final Hold h = hold(a);
        a.held = null;
        if (h.exclusive) {
            h.frame.writer = false;
        } else {
            h.frame.readers--;
        }
        cache.used(h.frame);
        cache.localReleased(h.frame);
        cache.yieldIfDue(h.frame);
        cache.forgetIfInvalid(h.frame);
    }

    /** The commit's installs (TO: each stamped {@code wts = ts}); then every latch is let go. */
    @Override
    protected Future<Void> installAndRelease(final long t) {
        return installed(() -> {
            for (final Access a : accesses) {
                if (marker(a)) {
                    continue; // buried and stamped by marked()
                }
                if (a.dirty) {
                    install(a);
                } else if (created(a)) {
                    installCreated(a);
                } else {
                    continue;
                }
                if (mode == Mode.TO) {
                    final Frame f = hold(a).frame;
                    f.image.putLong(a.slotBytes() + 8, t);
                    f.dirty = DirtyBounds.widen(f.dirty, a.slotBytes() - ObjectLayout.VALUE_OFFSET, TO_ROOM);
                }
            }
        }).map(v -> {
            for (final Access a : accesses) {
                if (a.locked) {
                    a.locked = false;
                    releaseLocal(a);
                }
            }
            readOnlyCommitted();
            return null;
        });
    }

    @Override
    protected void readOnlyCommitted() {
        LineCache.Stats.committed(cache.participant());
    }

    /**
     * TO: a mark ({@link #markAbsent}), latched Exclusive, buried (a tombstone, CAS word cleared) with {@code rts = ts}
     * (unless higher already) and {@code wts} 0 (nothing was written); its frame written through by
     * {@link #marksBuried}.
     */
    @Override
    protected Future<Void> buryMark(final Access a, final long ts) {
        bury(a);
        final Frame f = hold(a).frame;
        if (raisesRts(f.image.getLong(a.slotBytes()), ts)) { // a tombstone revived in place may have a higher one
            f.image.putLong(a.slotBytes(), ts);
        }
        f.dirty = DirtyBounds.widen(f.dirty, a.slotBytes() - ObjectLayout.VALUE_OFFSET, TO_ROOM);
        if (markFrames == null) {
            markFrames = new ArrayList<>(2);
        }
        markFrames.add(f);
        return Future.succeededFuture();
    }

    /** TO: in a recoverable run the marks' frames written through before the redo record, as {@link #rtsLanded}'s are. */
    @Override
    protected Future<Void> marksBuried(final List<Future<Void>> buried) {
        return cache.recoverable() && markFrames != null ? cache.writeThrough(markFrames) : Future.succeededFuture();
    }

    /**
     * TO: the write-throughs of the {@code rts} this attempt's reads raised, landed (recoverable runs; else none):
     * before its record is written, so a commit recovery finishes never has a raise that died with its node.
     */
    @Override
    protected Future<Void> rtsLanded() {
        return rtsWrites == null ? Future.succeededFuture() : Future.all(rtsWrites).mapEmpty();
    }

    @Override
    protected long rts(final Access a) {
        return hold(a).frame.image.getLong(a.slotBytes());
    }

    @Override
    protected long wts(final Access a) {
        return hold(a).frame.image.getLong(a.slotBytes() + 8);
    }

    @Override
    protected Future<Access> latchWrite(final Access a) {
        return lockExclusive(a, false);
    }

    @Override
    protected Future<Access> readAgain(final Access a) {
        return lockShared(a, false).map(x -> {
            unlatch(x);
            return x;
        });
    }

    /**
     * Runs {@code installs} (the commit's writes into the latched frames). With a redo log (a recoverable run: package
     * doc "Dead compute nodes") the record goes first: once it is durable the commit is decided; then the installs,
     * then the frames' write-through to the memory nodes, the latches kept; the record's slots are free again once it
     * landed. So a memory node's copy of a line is never more than this commit behind, and a line held Modified is
     * never the only copy of an acknowledged write. TO logs under {@link SelccRecovery#TO_LOCK_KIND} (recovery also
     * raises {@code wts}, which the record does not hold; its reads' {@code rts} raises were written through before:
     * {@link #rtsLanded}). An object this commit's INSERT created is an entry like any write ({@code OP_INSERTED}:
     * its INSERT wrote the value; the write-through clears its CAS word in the WRITE of the version, recovery by the
     * release): a node dead before its record leaves it CAS-locked, and the memory node's release of the dead node's
     * inserts buries it (a tombstone); one dead after has it finished by recovery.
     */
    private Future<Void> installed(final Runnable installs) {
        final io.scythe.txn.recovery.RedoLog log = io.scythe.txn.recovery.RedoLog.of(runtime);
        final List<Access> written = new ArrayList<>();
        for (final Access a : accesses) {
            if (a.dirty || (created(a) && !marker(a))) {
                written.add(a);
            }
        }
        if (log == null || written.isEmpty()) {
            installs.run();
            return Future.succeededFuture();
        }
        for (final Access a : written) {
            if (created(a)) {
                // Its entry's op: OP_INSERTED (the INSERT wrote the value; recovery clears the CAS word); for the
                // history, from here, a write over no live value, as installCreated records it.
                a.inserted = true;
                a.readAbsent = true;
            }
        }
        final int me = cache.participant();
        final int kind = mode == Mode.TO ? SelccRecovery.TO_LOCK_KIND_ID : SelccRecovery.LOCK_KIND_ID;
        // The record names the configuration the attempt began in, as the one-sided protocols' do (not the one
        // applied now: its locks were taken in the terms of that one or later, RccLog#log).
        return log.append(id, 0, kind, written, a -> SelccRecovery.token(me, ObjectLayout.versionAfter(0,
                a.readVersion)), null, configEpoch(), pointOfNoReturn())
            .compose(appended -> {
                installs.run();
                final List<Frame> frames = new ArrayList<>(written.size());
                for (final Access a : written) {
                    frames.add(hold(a).frame);
                }
                return cache.writeThrough(frames).onSuccess(v -> log.release(appended));
            }, e -> {
                if (e instanceof io.scythe.txn.recovery.RedoLog.RecordInDoubtException) {
                    return giveUpInDoubt("its redo record's WRITE failed and may have landed", e);
                }
                for (final Access a : written) {
                    if (created(a)) {
                        a.inserted = false; // not decided: its abort buries it
                    }
                }
                return Future.failedFuture(e);
            });
    }

    /** Writes {@code a}'s new value into its frame (memo M, held Exclusive): value, length, version + 1, bounds. */
    private static void install(final Access a) {
        final Frame f = hold(a).frame;
        if (a.deleting) { // a tombstone: the value stays, read as absent
            f.image.putShort(ObjectLayout.FLAGS_OFFSET, (short) ObjectLayout.FLAG_DELETED);
            f.image.putInt(ObjectLayout.VALUE_LENGTH_OFFSET, 0);
        } else {
            f.image.putBytes(ObjectLayout.VALUE_OFFSET, a.newValue, 0, a.newLength);
            f.image.putInt(ObjectLayout.VALUE_LENGTH_OFFSET, a.newLength);
            f.image.putShort(ObjectLayout.FLAGS_OFFSET, (short) 0); // revived, if it was a tombstone
            f.dirty = DirtyBounds.widen(f.dirty, 0, a.newLength);
        }
        a.installedVersion = ObjectLayout.versionAfter(0, a.readVersion);
        f.image.putLong(ObjectLayout.VERSION_OFFSET, a.installedVersion);
        f.headerDirty = true;
    }

    @Override
    public Future<Void> abort() {
        return releaseHeld(a -> {
            if (created(a)) {
                return (a.held == null ? latchCreated(a, 0) : Future.succeededFuture(a)).map(x -> {
                    bury(x);
                    x.locked = false;
                    releaseLocal(x);
                    return null;
                });
            }
            releaseLocal(a);
            return Future.succeededFuture();
        });
    }

    @Override
    protected Future<Access> latchCreated(final Access a) {
        return latchCreated(a, 0);
    }

    /** Tries of {@link #latchCreated} before the commit gives up (its abort then keeps trying). */
    private static final int CREATED_TRIES = 64;

    /**
     * Latches an object this attempt's INSERT created Exclusive through the cache, waiting: no transaction holds a
     * CAS-locked line (a read of it aborts before it latches), so only cached copies stand in the way and each
     * holder lets go. After {@link #CREATED_TRIES} failed rounds the commit aborts; the abort ({@code bury}) tries on
     * for as long as it takes.
     */
    private Future<Access> latchCreated(final Access a, final int tries) {
        final Frame f = frameOf(a);
        if (f == null || f.busy || !f.idle()) {
            return afterCreated(a, f, tries);
        }
        final Future<Void> global = f.memo == Memo.M ? Future.succeededFuture()
            : f.memo == Memo.S ? cache.upgrade(f, true) : cache.acquireExclusive(f, true);
        return global.transform(done -> {
            if (done.failed()) {
                cache.forgetIfInvalid(f);
                return afterCreated(a, f, tries);
            }
            final long casWord = f.image.getLong(ObjectLayout.CAS_LOCK_OFFSET);
            if (cache.buriedSince(f, casWord)) {
                // The copy shows a dead inserter's object that its memory node buried since, and this attempt's
                // INSERT revived the key in place there: a version taken from this copy would repeat the burial's.
                // READ again (the memory node's copy is current: the line is held here) and latch once more.
                LineCache.Stats.count("own INSERT over a copy older than a burial");
                return cache.refreshed(f, casWord).transform(r -> r.failed() ? afterCreated(a, f, tries)
                    : latchCreated(a, tries + 1));
            }
            f.writer = true;
            a.held = new Hold(f, true);
            a.locked = true;
            a.image.putBytes(0, f.image, 0, a.slotBytes());
            cache.used(f);
            return checkedImage(a);
        });
    }

    private Future<Access> afterCreated(final Access a, final Frame f, final int tries) {
        return retried(a, tries, CREATED_TRIES, true,
            () -> "its INSERT's object could not be latched in " + CREATED_TRIES + " rounds",
            () -> f == null ? cache.evicted(a.partition.node(), a.address())
                : f.busy ? cache.settled(f) : runtime.timers().after(SelccModule.resendNs()),
            () -> latchCreated(a, tries + 1));
    }

    /** The commit of an object its INSERT created (latched Exclusive): the CAS word cleared, version + 1. */
    private static void installCreated(final Access a) {
        final Frame f = hold(a).frame;
        f.image.putLong(ObjectLayout.CAS_LOCK_OFFSET, 0);
        a.installedVersion = ObjectLayout.versionAfter(0, a.readVersion);
        f.image.putLong(ObjectLayout.VERSION_OFFSET, a.installedVersion);
        f.headerDirty = true;
        a.inserted = true; // for the history: a write that replaced no live value (readAbsent, from its INSERT)
        a.readAbsent = true;
    }

    /** The abort of an object its INSERT created (latched Exclusive): left a tombstone, the CAS word cleared. */
    private static void bury(final Access a) {
        LineCache.Stats.count("insert buried");
        final Frame f = hold(a).frame;
        f.image.putLong(ObjectLayout.CAS_LOCK_OFFSET, 0);
        f.image.putShort(ObjectLayout.FLAGS_OFFSET, (short) ObjectLayout.FLAG_DELETED);
        f.image.putInt(ObjectLayout.VALUE_LENGTH_OFFSET, 0);
        f.headerDirty = true;
    }
}
