package io.scythe.txn.selcc;

import io.scythe.bridge.Doorbell;
import io.scythe.storage.ObjectLayout;
import io.scythe.txn.AbortException;
import io.scythe.txn.AbortReason;
import io.scythe.txn.Access;
import io.scythe.txn.Refusal;
import io.scythe.txn.Stage;
import io.scythe.txn.TxnRuntime;
import io.scythe.txn.selcc.LocalLatches.Entry;
import io.vertx.core.Future;
import org.agrona.concurrent.UnsafeBuffer;

import java.util.ArrayList;
import java.util.List;

/**
 * Transactions on SEL latches released eagerly (the SEL baseline of SELCC §7): every object is a line whose latch word
 * is the header's protocol word (package doc). Three modes: {@code sel-2pl} (below), and {@code sel-occ} and
 * {@code sel-to}, whose reads latch a line only for the moment of their READ (OCC Shared, TO Exclusive with its
 * {@code rts} raise) and whose commit runs {@link LatchTxn}'s optimistic commit (package doc); those reads wait a
 * bounded number of rounds for a line latched by another flow of the loop or another participant
 * ({@link #LOCAL_TRIES}), unlike 2PL's. Two-phase locking, no wait:
 * <ol>
 *   <li>A read takes Shared: FAA {@code +bit(p)} and the READ of the object in one doorbell; an exclusive holder
 *       in the word the FAA returned means the attempt aborts (no wait) after undoing its bit with FAA
 *       {@code -bit(p)}. A loop whose other flow holds the line Shared already shares it (a READ, no FAA).</li>
 *   <li>{@code readForUpdate} takes Exclusive: CAS {@code 0 -> (p, 0)} and the READ in one doorbell; a key already
 *       held Shared is upgraded. A write of a key read Shared is upgraded at commit: CAS {@code (0, bit(p)) ->
 *       (p, 0)}; when it fails, the fallback in one doorbell: FAA {@code -bit(p)}, CAS {@code 0 -> (p, 0)} and a
 *       header READ, which must show the version read (nobody wrote in between), else the attempt aborts.</li>
 *   <li>Commit: one doorbell per memory node: the new values, the version word (old + 1: the per-object write
 *       counter the history checker orders writes by), then the FAA releases, X by {@code -(p, 0)} and S by
 *       {@code -bit(p)}, on the same QP after the WRITEs.</li>
 * </ol>
 * Under 2PL every conflict, local or global, aborts at once (no wait), with one exception: latching an object the attempt's
 * own INSERT just created retries (up to {@link #CREATED_TRIES} times the resend interval, holding its other latches)
 * while a reader's momentary S bit goes away. Inserts and deletes as in every SELCC protocol
 * ({@link LatchTxn#insertions}: keys in the index latched and revived, missing ones created CAS-locked by the memory
 * node's INSERT and latched, buried under the latch on abort; a delete is a write leaving a tombstone). No redo
 * record is written by default; with a redo log (a recoverable run: package doc "Dead compute nodes") the commit
 * WRITEs its record before the write-back ({@link #lockKind}), and a dead node's records are rolled forward and its
 * bits cleared by recovery as under the cached protocols.
 */
public final class Sel2plTxn extends LatchTxn {
    private final LocalLatches latches;
    private final int p;

    /** What one access holds. */
    private static final class Hold {
        final Entry entry;
        LocalLatches.Mode mode;
        /** TO: the object's {@code rts} and {@code wts} as its latch's READ found them (null otherwise). */
        UnsafeBuffer room;
        /** At commit: whether its release is a global FAA (the last local holder) or only the local count. */
        boolean global;

        Hold(final Entry entry, final LocalLatches.Mode mode) {
            this.entry = entry;
            this.mode = mode;
        }
    }

    public Sel2plTxn(final TxnRuntime runtime) {
        this(runtime, Mode.TWO_PL);
    }

    Sel2plTxn(final TxnRuntime runtime, final Mode mode) {
        super(runtime, mode);
        this.latches = LocalLatches.of(runtime);
        this.p = latches.participant();
    }

    @Override
    public String mode() {
        return mode.selLabel;
    }

    static long latchAddress(final Access a) {
        return a.address() + ObjectLayout.PROTOCOL_WORD_OFFSET;
    }

    private static Hold hold(final Access a) {
        return (Hold) a.held;
    }

    @Override
    protected boolean exclusive(final Access a) {
        return hold(a).mode == LocalLatches.Mode.EXCLUSIVE;
    }

    @Override
    protected <T> Future<T> locked(final Access a, final String why) {
        return Future.failedFuture(new AbortException(AbortReason.LOCKED, "key " + a.key + " of " + a.table + ": "
            + why));
    }

    @Override
    protected Future<Access> lockShared(final Access a) {
        switch (mode) {
            case TO:
                return toRead(a);
            case OCC:
                return momentaryRead(a, a.slotBytes(), true);
            default:
                return lockShared2pl(a);
        }
    }

    /** S: FAA +bit and READ in one doorbell, undone when an X holder shows; shared with the loop's other flows. */
    private Future<Access> lockShared2pl(final Access a) {
        if (finished) {
            // A read the client issued beside one that failed can start after abort() released what the attempt
            // held (TPC-C reads in parallel). Its global acquire would be released late by sharedOutcome, but a
            // join of the loop's local Shared posts nothing: a hold taken now would never be released, its reader
            // bit left set for good (every later writer of the line refused without end: sel-2pl TPC-C seed 8's
            // Payment never finished, the warehouse's S bit held by nobody).
            return locked(a, "attempt over");
        }
        final Entry e = latches.entry(a.partition.node(), latchAddress(a));
        if (e.busy || e.mode == LocalLatches.Mode.EXCLUSIVE) {
            latches.forgetIfIdle(e);
            return locked(a, "latched locally (" + e + ")");
        }
        if (e.mode == LocalLatches.Mode.SHARED) {
            e.holders++;
            a.held = new Hold(e, LocalLatches.Mode.SHARED);
            a.locked = true;
            return readImage(a).compose(this::notInsertedByAnother);
        }
        return latchAndRead(a, e, false, this::sharedOutcome);
    }

    /** {@code a}, latched and read, unless another attempt's INSERT created it and has not committed (it aborts). */
    private Future<Access> notInsertedByAnother(final Access a) {
        return insertedByAnother(a) ? uncommitted(a) : Future.succeededFuture(a);
    }

    /** What turns the word an acquire's atomic returned into the latch held, or the attempt's failure. */
    @FunctionalInterface
    private interface Outcome {
        Future<Void> of(Access a, Entry e, long previous, UnsafeBuffer room);
    }

    /**
     * Posts the acquire of {@code a}'s latch, Exclusive (CAS) or Shared (FAA), with the READ of {@code a} in one
     * doorbell ({@link #latchedRead}), {@code e} busy meanwhile; {@code outcome} reads the word it returned. Refused for
     * now, nothing happened; failed at the atomic, it may have landed: the loop gives up. Under TO the doorbell also
     * READs the object's {@code rts} and {@code wts} ({@link #TO_ROOM} after the slot), which {@code outcome} gets
     * (null when the doorbell failed after its atomic: not read).
     */
    private Future<Access> latchAndRead(final Access a, final Entry e, final boolean exclusive,
                                        final Outcome outcome) {
        e.busy = true;
        final UnsafeBuffer room = mode == Mode.TO ? new UnsafeBuffer(new byte[TO_ROOM]) : null;
        return channel(a).compose(ch -> {
            final Doorbell batch = ch.doorbell();
            final int at = latchedRead(batch, a, exclusive, a.slotBytes());
            if (room != null) {
                batch.read(a.address() + a.slotBytes(), a.rkey(), room, 0, TO_ROOM);
            }
            return batch.post().transform(posted -> {
                if (posted.succeeded()) {
                    return outcome.of(a, e, batch.result(at), room).compose(v -> checkedImage(a))
                        .compose(this::notInsertedByAnother);
                }
                final Throwable err = posted.cause();
                if (Refusal.forNow(err)) {
                    return idle(e, err);
                }
                if (batch.failedIndex() <= at) {
                    return lockVerbInDoubt("its " + (exclusive ? "Exclusive CAS" : "Shared FAA") + " on key " + a.key
                        + " of " + a.table + " failed after "
                        + "it was posted", err);
                }
                return outcome.of(a, e, batch.result(at), null).compose(v -> Future.failedFuture(err));
            });
        }, err -> idle(e, err));
    }

    /**
     * The latch doorbell: the acquire of {@code a}'s latch, Exclusive (CAS {@code 0 -> (p, 0)}) or Shared (FAA
     * {@code +bit(p)}), and the READ of its first {@code bytes} into its image, added to {@code batch}; answers the
     * atomic's index (what the caller adds goes after, on the same QP).
     */
    private int latchedRead(final Doorbell batch, final Access a, final boolean exclusive, final int bytes) {
        final int at = exclusive
            ? batch.compareAndSwap(latchAddress(a), a.rkey(), LatchWord.FREE, LatchWord.exclusive(p))
            : batch.fetchAndAdd(latchAddress(a), a.rkey(), LatchWord.share(p));
        batch.read(a.address(), a.rkey(), a.image, 0, bytes);
        return at;
    }

    /** {@code e} no longer busy (forgotten if idle), and the failure {@code err}: nothing was taken. */
    private <T> Future<T> idle(final Entry e, final Throwable err) {
        e.busy = false;
        latches.forgetIfIdle(e);
        return Future.failedFuture(err);
    }

    /** What a Shared FAA that returned {@code previous} left: held, or undone (an X holder showed). */
    private Future<Void> sharedOutcome(final Access a, final Entry e, final long previous, final UnsafeBuffer room) {
        if (LatchWord.shareFailed(previous)) {
            return releaseLate(a.partition.node(), () -> channel(a).compose(ch -> ch.fetchAndAdd(e.latchAddress, a.rkey(),
                LatchWord.unshare(p)))).andThen(v -> {
                    e.busy = false;
                    latches.forgetIfIdle(e);
                }).compose(v -> locked(a, "held Exclusive by participant " + LatchWord.holder(previous)));
        }
        e.busy = false;
        e.mode = LocalLatches.Mode.SHARED;
        e.holders = 1;
        final Hold h = new Hold(e, LocalLatches.Mode.SHARED);
        if (finished) {
            return releaseLate(a.partition.node(), () -> release(a, h)).compose(v -> locked(a, "attempt over"));
        }
        a.held = h;
        a.locked = true;
        return Future.succeededFuture();
    }

    /** 2PL: X, below; TO and OCC: a read for update is a read (nothing is held between accesses). */
    @Override
    protected Future<Access> lockExclusive(final Access a) {
        if (mode == Mode.TWO_PL) {
            return latchExclusive(a);
        }
        return a.fetched ? Future.succeededFuture(a) : lockShared(a);
    }

    /** X: CAS 0 -> (p, 0) and READ in one doorbell. */
    private Future<Access> latchExclusive(final Access a) {
        final Entry e = latches.entry(a.partition.node(), latchAddress(a));
        if (e.busy || e.mode != LocalLatches.Mode.NONE) {
            latches.forgetIfIdle(e);
            return locked(a, "latched locally (" + e + ")");
        }
        return latchAndRead(a, e, true, this::exclusiveOutcome);
    }

    private Future<Void> exclusiveOutcome(final Access a, final Entry e, final long previous, final UnsafeBuffer room) {
        return exclusiveOutcome(a, e, previous, room, false);
    }

    /**
     * What an Exclusive CAS that returned {@code previous} left: held, or not taken. Taken once the attempt is over it
     * is released at once, unless {@code evenIfOver} (an object its INSERT created: the abort latches it to bury it).
     */
    private Future<Void> exclusiveOutcome(final Access a, final Entry e, final long previous, final UnsafeBuffer room,
                                          final boolean evenIfOver) {
        e.busy = false;
        if (previous != LatchWord.FREE) {
            latches.forgetIfIdle(e);
            return locked(a, "latch word " + LatchWord.toString(previous));
        }
        e.mode = LocalLatches.Mode.EXCLUSIVE;
        e.holders = 1;
        final Hold h = new Hold(e, LocalLatches.Mode.EXCLUSIVE);
        h.room = room;
        if (finished && !evenIfOver) {
            return releaseLate(a.partition.node(), () -> release(a, h)).compose(v -> locked(a, "attempt over"));
        }
        a.held = h;
        a.locked = true;
        return Future.succeededFuture();
    }

    /**
     * S to X: CAS (0, bit) -> (p, 0); when it fails, the fallback in one doorbell (FAA -bit, CAS 0 -> (p, 0), header
     * READ), the version still the one read. Refused while another flow of this loop shares the line.
     */
    @Override
    protected Future<Void> upgrade(final Access a) {
        if (mode != Mode.TWO_PL) {
            return Future.succeededFuture(); // nothing held between accesses
        }
        final Hold h = hold(a);
        final Entry e = h.entry;
        if (e.busy || e.holders != 1) {
            return locked(a, "shared locally by another flow (" + e + ")");
        }
        e.busy = true;
        final long mine = LatchWord.share(p);
        return channel(a).compose(ch -> ch.compareAndSwap(e.latchAddress, a.rkey(), mine, LatchWord.exclusive(p)))
            .transform(done -> {
                if (done.failed()) {
                    return Refusal.forNow(done.cause()) ? unbusy(e, done.cause())
                        : lockVerbInDoubt("its upgrade CAS on key " + a.key + " failed after it was posted",
                        done.cause());
                }
                if (done.result() == mine) {
                    return becameExclusive(h);
                }
                return fallback(a, h);
            });
    }

    private <T> Future<T> unbusy(final Entry e, final Throwable err) {
        e.busy = false;
        return Future.failedFuture(err);
    }

    private Future<Void> becameExclusive(final Hold h) {
        h.entry.busy = false;
        h.entry.mode = LocalLatches.Mode.EXCLUSIVE;
        h.mode = LocalLatches.Mode.EXCLUSIVE;
        return Future.succeededFuture();
    }

    /** The upgrade's fallback: Shared released, Exclusive taken, in one doorbell; the version must be unchanged. */
    private Future<Void> fallback(final Access a, final Hold h) {
        final Entry e = h.entry;
        final UnsafeBuffer header = new UnsafeBuffer(new byte[ObjectLayout.HEADER_BYTES]);
        return channel(a).compose(ch -> {
            final Doorbell batch = ch.doorbell();
            batch.fetchAndAdd(e.latchAddress, a.rkey(), LatchWord.unshare(p));
            final int cas = batch.compareAndSwap(e.latchAddress, a.rkey(), LatchWord.FREE, LatchWord.exclusive(p));
            batch.read(a.address(), a.rkey(), header, 0, ObjectLayout.HEADER_BYTES);
            return batch.post().transform(posted -> {
                if (posted.failed() && Refusal.forNow(posted.cause())) {
                    return unbusy(e, posted.cause()); // nothing happened: still Shared
                }
                if (posted.failed() && batch.failedIndex() <= cas) {
                    return lockVerbInDoubt("its upgrade fallback on key " + a.key + " failed after it was posted",
                        posted.cause());
                }
                if (batch.result(cas) != LatchWord.FREE) { // Shared given up, Exclusive not taken: holds nothing
                    e.busy = false;
                    e.mode = LocalLatches.Mode.NONE;
                    e.holders = 0;
                    a.locked = false;
                    a.held = null;
                    latches.forgetIfIdle(e);
                    return locked(a, "upgrade failed, latch word " + LatchWord.toString(batch.result(cas)));
                }
                becameExclusive(h);
                if (posted.failed()) {
                    return Future.failedFuture(posted.cause());
                }
                if (!unchangedSinceRead(a, header)) {
                    return Future.failedFuture(new AbortException(AbortReason.VALIDATION, "key " + a.key + " of "
                        + a.table + " was written between its Shared release and its Exclusive acquire"));
                }
                return Future.succeededFuture();
            });
        });
    }

    /** Releases what {@code h} holds on {@code a}'s line: the local count, and the global bit or X when last. */
    private Future<Void> release(final Access a, final Hold h) {
        final Entry e = h.entry;
        e.holders--;
        if (e.holders > 0) {
            return Future.succeededFuture();
        }
        e.busy = true;
        final long delta = h.mode == LocalLatches.Mode.EXCLUSIVE ? LatchWord.unexclusive(p) : LatchWord.unshare(p);
        return channel(a).compose(ch -> ch.fetchAndAdd(e.latchAddress, a.rkey(), delta)).map(old -> {
            e.busy = false;
            e.mode = LocalLatches.Mode.NONE;
            latches.forgetIfIdle(e);
            return null;
        });
    }

    /**
     * The write-back and the releases (TO: each written object's {@code wts = ts}); an object its INSERT created is
     * installed by the write-back (version + 1) and its CAS word cleared before its latch is released.
     */
    @Override
    protected Future<Void> installAndRelease(final long ts) {
        for (final Access a : accesses) {
            if (created(a)) {
                // Written back (version + 1); for the history a write over no live value (its latch's
                // READ took the image as a read of a live one).
                a.inserted = true;
                a.readAbsent = true;
            }
        }
        // A write-back that fails before it posts (a failover since the attempt began) goes to abort():
        // its created objects must then be buried under their latches like any other abort's, not freed
        // (ABANDON) while other CNs may still latch the slot, so they stop counting as inserted here.
        return staged(Stage.WRITE_BACK, writeBackAndRelease(ts)).recover(e -> {
            for (final Access a : accesses) {
                if (created(a)) {
                    a.inserted = false;
                }
            }
            return Future.failedFuture(e);
        });
    }

    /** Tries of {@link #latchCreated} before the commit gives up (its abort then keeps trying). */
    private static final int CREATED_TRIES = 64;

    @Override
    protected Future<Access> latchCreated(final Access a) {
        return latchCreated(a, 0);
    }

    /**
     * X on an object this attempt's INSERT created: CAS {@code 0 -> (p, 0)} with its READ, posted again after
     * {@code resendNs} while a reader's FAA (undone as soon as it sees the CAS word) or another flow of this loop
     * holds the word, at most {@link #CREATED_TRIES} times unless the attempt is over.
     */
    private Future<Access> latchCreated(final Access a, final int tries) {
        if (a.held != null) {
            // Latched already by this attempt (an abort racing the commit's own CAS): the line looks held, and
            // trying again would never end, an aborted attempt having no round limit.
            return Future.succeededFuture(a);
        }
        final Entry e = latches.entry(a.partition.node(), latchAddress(a));
        if (e.busy || e.mode != LocalLatches.Mode.NONE) {
            latches.forgetIfIdle(e);
            return createdAgain(a, tries, null);
        }
        return latchAndRead(a, e, true, (x, en, previous, room) -> exclusiveOutcome(x, en, previous, room, true))
            .recover(err -> err instanceof AbortException && a.held == null || Refusal.forNow(err)
                ? createdAgain(a, tries, err) : Future.failedFuture(err));
    }

    private Future<Access> createdAgain(final Access a, final int tries, final Throwable why) {
        return retried(a, tries, CREATED_TRIES, SelccModule.resendNs(), true, () -> "its INSERT's object could not be "
            + "latched in " + CREATED_TRIES + " rounds (" + (why == null ? "held locally" : why.getMessage()) + ")",
            () -> latchCreated(a, tries + 1));
    }

    /** The abort of an object its INSERT created, latched Exclusive: a tombstone, the CAS word cleared, X released. */
    private Future<Void> bury(final Access a) {
        return bury(a, -1);
    }

    /** {@link #bury(Access)}; TO's mark ({@code rts >= 0}) also WRITEs its {@code rts} there, before the release. */
    private Future<Void> bury(final Access a, final long rts) {
        LineCache.Stats.count("insert buried");
        final Hold h = hold(a);
        final Entry e = h.entry;
        e.busy = true;
        final UnsafeBuffer flags = new UnsafeBuffer(new byte[2]);
        flags.putShort(0, (short) ObjectLayout.FLAG_DELETED);
        return channel(a).compose(ch -> {
            final Doorbell batch = ch.doorbell();
            batch.write(a.address() + ObjectLayout.FLAGS_OFFSET, a.rkey(), flags, 0, 2);
            batch.write(a.address() + ObjectLayout.CAS_LOCK_OFFSET, a.rkey(), WordBuffer.of(0), 0, 8);
            if (rts >= 0) {
                batch.write(a.address() + a.slotBytes(), a.rkey(), WordBuffer.of(rts), 0, 8);
            }
            batch.fetchAndAdd(latchAddress(a), a.rkey(), LatchWord.unexclusive(p));
            return batch.post();
        }).map(v -> {
            e.busy = false;
            e.mode = LocalLatches.Mode.NONE;
            e.holders = 0;
            latches.forgetIfIdle(e);
            return null;
        });
    }

    /**
     * The write-back, with the releases after the WRITEs: every line whose last local holder this attempt is
     * released globally by FAA in the same doorbell (marked busy until it lands), the others only locally.
     */
    private Future<Void> writeBackAndRelease(final long ts) {
        final List<Hold> global = new ArrayList<>();
        for (final Access a : accesses) {
            if (a.locked) {
                final Hold h = hold(a);
                if (h.mode == LocalLatches.Mode.SHARED && h.entry.holders > 1) {
                    h.entry.holders--;
                    a.locked = false;
                } else {
                    h.global = true;
                    h.entry.holders = 0;
                    h.entry.busy = true;
                    global.add(h);
                }
            }
        }
        // Version 0: each written object installs its own old version + 1 (ObjectLayout#versionAfter). With a redo
        // log the record goes first (OneSidedTxn#writeBack: lockKind, lockToken).
        return writeBack(0, a -> a.locked && hold(a).global, new io.scythe.txn.onesided.WriteSet.ReleaseVerb() {
            @Override
            public void beforeWrites(final Doorbell batch, final Access a) {
                if (created(a)) { // committed: its CAS word cleared, before the version (recovery: SelccRecovery)
                    batch.write(a.address() + ObjectLayout.CAS_LOCK_OFFSET, a.rkey(), WordBuffer.of(0), 0,
                        8);
                }
                if (mode == Mode.TO && (a.dirty || created(a))) { // its wts, before the version
                    batch.write(a.address() + a.slotBytes() + 8, a.rkey(), WordBuffer.of(ts), 0, 8);
                }
            }

            @Override
            public void add(final Doorbell batch, final Access a) {
                batch.fetchAndAdd(latchAddress(a), a.rkey(), hold(a).mode == LocalLatches.Mode.EXCLUSIVE
                    ? LatchWord.unexclusive(p) : LatchWord.unshare(p));
            }
        })
            .onSuccess(v -> {
                for (final Hold h : global) {
                    h.entry.busy = false;
                    h.entry.mode = LocalLatches.Mode.NONE;
                    latches.forgetIfIdle(h.entry);
                }
            });
    }

    /**
     * SEL's latch as the redo record names it: with a redo log (a recoverable run) the commit logs before its
     * write-back ({@link io.scythe.txn.onesided.RedoStep}), and recovery rolls an entry forward while this participant
     * still holds the line Exclusive below the version the write-back installs ({@link SelccRecovery#LOCK_KIND}).
     */
    @Override
    protected io.scythe.txn.spi.LockKind lockKind() {
        return mode == Mode.TO ? SelccRecovery.TO_LOCK_KIND : SelccRecovery.LOCK_KIND;
    }

    /**
     * {@code participant << 58 | version installed} for a line held Exclusive (the write-back's version: old + 1); a
     * line held Shared ({@link SelccRecovery#sharedToken}), which a commit finished from its record releases by its bit.
     */
    @Override
    protected long lockToken(final Access a) {
        return hold(a).mode == LocalLatches.Mode.EXCLUSIVE ? SelccRecovery.token(p, ObjectLayout.versionAfter(0, a.readVersion))
            : SelccRecovery.sharedToken(p);
    }

    @Override
    public Future<Void> abort() {
        return releaseHeld(a -> {
            if (created(a)) { // latched first if the commit had not yet: nobody else may bury it
                return (a.held == null ? latchCreated(a, 0) : Future.succeededFuture(a)).compose(this::bury);
            }
            return release(a, hold(a));
        });
    }

    /**
     * OCC: {@code a} latched Shared for the moment of its READ: FAA {@code +bit(p)}, the READ of its first {@code bytes}
     * and FAA {@code -bit(p)} in one doorbell (on one QP, in order: the READ runs under the latch, which is let go at
     * once whatever the first FAA found; the paper's SEL acquires and releases in two round trips, the release
     * posted after the READ came back: the same latch, one round trip less). An exclusive holder in the word the first
     * FAA returned aborts the access (a writer is installing it). A line another flow of this loop latches (its
     * momentary read, or its commit's write) is waited for ({@link #locally}).
     */
    private Future<Access> momentaryRead(final Access a, final int bytes, final boolean wait) {
        return momentaryRead(a, bytes, wait, 0);
    }

    private Future<Access> momentaryRead(final Access a, final int bytes, final boolean wait, final int tries) {
        final Entry e = latches.entry(a.partition.node(), latchAddress(a));
        if (e.busy || e.mode != LocalLatches.Mode.NONE) {
            return locally(a, e, tries, "latched locally (" + e + ")", () -> momentaryRead(a, bytes, wait, tries + 1));
        }
        e.busy = true;
        return channel(a).compose(ch -> {
            final Doorbell batch = ch.doorbell();
            final int at = latchedRead(batch, a, false, bytes);
            batch.fetchAndAdd(e.latchAddress, a.rkey(), LatchWord.unshare(p));
            return batch.post().transform(posted -> {
                if (posted.failed() && !Refusal.forNow(posted.cause())) {
                    return lockVerbInDoubt("its momentary Shared latch on key " + a.key + " of " + a.table
                        + " failed after it was posted", posted.cause());
                }
                if (posted.failed()) {
                    return idle(e, posted.cause()); // refused for now: nothing happened
                }
                e.busy = false;
                latches.forgetIfIdle(e);
                final long previous = batch.result(at);
                if (LatchWord.shareFailed(previous)) {
                    final String why = "held Exclusive by participant " + LatchWord.holder(previous);
                    return wait ? locally(a, e, tries, why, () -> momentaryRead(a, bytes, true, tries + 1))
                        : locked(a, why);
                }
                return checkedImage(a).compose(this::notInsertedByAnother);
            });
        }, err -> idle(e, err));
    }

    /** OCC validation: the header READ again under a momentary Shared latch (the value the attempt read stays). */
    @Override
    protected Future<Access> readAgain(final Access a) {
        return momentaryRead(a, ObjectLayout.HEADER_BYTES, false);
    }

    /**
     * TO read: Exclusive CAS with the READs of the object and its {@code rts}/{@code wts} in one doorbell; then, in a
     * second, {@code rts} raised to ts (unless {@code wts > ts}, which aborts the access) and the release, the WRITE
     * first: a recoverable run's raise lands before the latch is let go, as on the cache.
     */
    private Future<Access> toRead(final Access a) {
        return timestamp().compose(ts -> toRead(a, ts, 0));
    }

    private Future<Access> toRead(final Access a, final long ts, final int tries) {
        final Entry e = latches.entry(a.partition.node(), latchAddress(a));
        if (e.busy || e.mode != LocalLatches.Mode.NONE) {
            return locally(a, e, tries, "latched locally (" + e + ")", () -> toRead(a, ts, tries + 1));
        }
        final boolean[] heldElsewhere = new boolean[1];
        return latchAndRead(a, e, true, (x, en, previous, room) -> {
                heldElsewhere[0] = previous != LatchWord.FREE;
                return toReadOutcome(x, en, previous, room, ts);
            }).recover(err -> heldElsewhere[0] ? untilFree(a, tries, n -> toRead(a, ts, n))
                : Future.failedFuture(err));
    }

    /**
     * TO: a read whose CAS found the line latched by another participant waits for the word to show free by plain
     * READs of it, one every {@link #LOCAL_WAIT_NS}, and only then CASes again ({@link #toRead}), at most
     * {@link #LOCAL_TRIES} rounds in all. Posting the CAS itself every round (as before) livelocked a hot line: every
     * atomic that finds its address held holds it in turn ({@code CostModel}'s conflict hold, 18 us on host memory),
     * so the waiting readers' CASes queued ahead of the holder's release FAA faster than the atomic unit drained them;
     * the release landed only after every reader had given up ({@code scythe sim --workload churn --cns 2 --loops 2
     * --clients 8 --duration 1ms --seed 1 --protocols sel-to}: 2 commits, 12,027 LOCKED aborts). A READ takes no
     * atomic lock: SEL's spin on a latch held by another node (Ziegler et al.'s test before test-and-set), the paper's
     * §5.1 interval between retries of a latch.
     */
    private Future<Access> untilFree(final Access a, final int tries,
                                     final java.util.function.IntFunction<Future<Access>> again) {
        return retried(a, tries, LOCAL_TRIES, LOCAL_WAIT_NS, false,
            () -> "latched by another participant for " + LOCAL_TRIES + " rounds", () -> {
                final UnsafeBuffer word = WordBuffer.of(0);
                return channel(a).compose(ch -> ch.read(latchAddress(a), a.rkey(), word, 0, 8))
                    .compose(v -> finished ? locked(a, "attempt over")
                        : word.getLong(0) == LatchWord.FREE ? again.apply(tries + 1)
                        : untilFree(a, tries + 1, again));
            });
    }

    /** Rounds of {@link #locally} before a read gives up (aborts, LOCKED). */
    private static final int LOCAL_TRIES = 64;
    /** A round of {@link #locally}: about half a round trip. */
    private static final long LOCAL_WAIT_NS = 1_000;

    /**
     * TO and OCC: a read's latch is a moment's, and the attempt holds nothing while it executes (its commit's latches
     * are never waited for), so a read whose line is latched, by another flow of this loop or (OCC's Exclusive
     * holder, TO's any holder) by another participant, tries again {@link #LOCAL_WAIT_NS} later, at most
     * {@link #LOCAL_TRIES} rounds: a latch taken for a moment or by a commit is free again within a few round trips.
     * SELCC's reads wait too in the same state (an attempt holding nothing waits for its invalidations' answers); OCC's
     * validation ({@code readAgain}, its commit holding its writes) waits only for another flow of this loop, not for
     * another participant's Exclusive latch (two flows validating each other's written lines both abort after
     * {@link #LOCAL_TRIES} rounds). Locally: on SEL each thread would be a
     * participant of its own, and two momentary Shared latches would not meet; here a loop's flows share one reader
     * bit, which cannot be added twice (the FAA would carry into the next participant's). Aborting at once instead
     * refused nearly every TPC-C attempt (1 warehouse, 2 CNs x 2 loops x 8 clients: sel-occ 4 commits and 760 LOCKED
     * aborts, sel-to 1 and 14,703).
     */
    private Future<Access> locally(final Access a, final Entry e, final int tries, final String why,
                                   final java.util.function.Supplier<Future<Access>> again) {
        latches.forgetIfIdle(e);
        return retried(a, tries, LOCAL_TRIES, LOCAL_WAIT_NS, false, () -> why + " for " + LOCAL_TRIES + " rounds", again);
    }

    /** {@link LatchTxn#retried}, each round after {@code waitNs}: {@link #locally}, {@link #untilFree}, {@link #createdAgain}. */
    private Future<Access> retried(final Access a, final int tries, final int limit, final long waitNs,
                                   final boolean whileOver,
                                   final java.util.function.Supplier<String> why,
                                   final java.util.function.Supplier<Future<Access>> again) {
        return retried(a, tries, limit, whileOver, why, () -> runtime.timers().after(waitNs), again);
    }

    /** What TO's read CAS that returned {@code previous} left: not taken (aborts), or checked, raised and released. */
    private Future<Void> toReadOutcome(final Access a, final Entry e, final long previous, final UnsafeBuffer room,
                                       final long ts) {
        if (previous != LatchWord.FREE) {
            e.busy = false;
            latches.forgetIfIdle(e);
            return locked(a, "latch word " + LatchWord.toString(previous));
        }
        final AbortException late = room == null ? null : readLate(a, room.getLong(8), ts);
        // Not raised over an object another attempt's INSERT has not committed (the read aborts), nor when the room
        // was not READ (the doorbell failed after its CAS: the attempt fails).
        final boolean raise = room != null && late == null && !insertedByAnother(a) && raisesRts(room.getLong(0), ts);
        return releaseLate(a.partition.node(), () -> channel(a).compose(ch -> {
            final Doorbell batch = ch.doorbell();
            if (raise) {
                batch.write(a.address() + a.slotBytes(), a.rkey(), WordBuffer.of(ts), 0, 8);
            }
            batch.fetchAndAdd(e.latchAddress, a.rkey(), LatchWord.unexclusive(p));
            return batch.post();
        })).compose(v -> {
            e.busy = false;
            latches.forgetIfIdle(e);
            return late != null ? Future.failedFuture(late) : Future.succeededFuture();
        });
    }

    @Override
    protected long rts(final Access a) {
        return hold(a).room.getLong(0);
    }

    @Override
    protected long wts(final Access a) {
        return hold(a).room.getLong(8);
    }

    @Override
    protected Future<Access> latchWrite(final Access a) {
        return mode == Mode.TO ? toLatchWrite(a, 0) : latchExclusive(a);
    }

    /**
     * TO's commit latch on a line it writes: Exclusive as {@link #latchExclusive}, but a line latched by a read (this
     * loop's or another participant's) is waited for as the reads wait ({@link #locally}, {@link #untilFree}), at most
     * {@link #LOCAL_TRIES} rounds, the commit holding the lines it latched already. TO's reads latch every line they
     * read Exclusive for a moment, so on a hot line some read nearly always held it and a commit that gave up at once
     * never latched it (sel-to churn seed 1: commits aborted LOCKED by the momentary latches of reads of the same key).
     * Two commits waiting for each other's lines both give up after the bound (LOCKED), as the reads do.
     */
    private Future<Access> toLatchWrite(final Access a, final int tries) {
        if (a.locked) {
            return latchExclusive(a); // held by this attempt already: refused at once, as before
        }
        final Entry e = latches.entry(a.partition.node(), latchAddress(a));
        if (e.busy || e.mode != LocalLatches.Mode.NONE) {
            return locally(a, e, tries, "latched locally (" + e + ")", () -> toLatchWrite(a, tries + 1));
        }
        final boolean[] heldElsewhere = new boolean[1];
        return latchAndRead(a, e, true, (x, en, previous, room) -> {
            heldElsewhere[0] = previous != LatchWord.FREE;
            return exclusiveOutcome(x, en, previous, room);
        }).recover(err -> heldElsewhere[0] ? untilFree(a, tries, n -> toLatchWrite(a, n))
            : Future.failedFuture(err));
    }

    /**
     * TO: a mark ({@code markAbsent}), latched Exclusive by the inserts, buried with {@code rts = ts} (unless higher
     * already) and released in one doorbell, before the commit's record and write-back (a recoverable run's raise
     * never dies with its node after a decided commit); no longer the attempt's to release.
     */
    @Override
    protected Future<Void> buryMark(final Access a, final long ts) {
        a.locked = false;
        created.remove(a);
        final long rts = raisesRts(rts(a), ts) ? ts : -1; // a tombstone revived in place may have a higher one
        return releaseLate(a.partition.node(), () -> bury(a, rts)).onSuccess(v -> a.held = null);
    }
}
