package io.scythe.txn.rcc.mvcc;

import io.scythe.bridge.Doorbell;
import io.scythe.storage.ObjectLayout;
import io.scythe.txn.AbortException;
import io.scythe.txn.AbortReason;
import io.scythe.txn.Access;
import io.scythe.txn.TxnRuntime;
import io.scythe.txn.rcc.RccForm;
import io.scythe.txn.rcc.RccLockingTxn;
import io.scythe.txn.rcc.RccRpc;
import io.scythe.txn.rcc.RccTsTxn;
import io.vertx.core.Future;
import org.agrona.DirectBuffer;
import org.agrona.concurrent.UnsafeBuffer;

import java.util.ArrayList;
import java.util.List;

/**
 * RCC's MVCC (§4.4) on {@link MvccTuple}'s tuples, at one RCC timestamp {@code ctts} per attempt, each stage by the
 * primitive its {@link RccForm} picks:
 * <ul>
 *   <li><b>Read</b> (records read and not written): one-sided, two READs of the tuple in one doorbell; the two must
 *       show the same versions (RCC's atomic read), then R2 and R1 pick the version, and rts is raised to ctts by a CAS
 *       retried until rts is at least ctts, each CAS followed in its doorbell by a READ of the header that must still
 *       show the newest version the pick saw and no writer below ctts: a writer that passed its W1 before the raise
 *       landed is caught there (RCC does not say how it closes this window). By RPC, one MV_READ whose handler does
 *       the same on the node's CPU ({@link MvccService}).</li>
 *   <li><b>Lock</b> (records written, at {@code readForUpdate} or at commit for a record read before): one-sided, a
 *       READ of the tuple to check W1 (and W2) before any CAS; then the CAS of tts from 0 to ctts with a READ of the
 *       tuple in one doorbell; W1 checked again on that fresh copy (a writer may have locked and committed between
 *       the first check and the CAS), releasing and aborting if it fails. By RPC, one MV_LOCK. A lock found taken
 *       aborts (no waiting).</li>
 *   <li><b>Commit</b>: per object the newest version moves to the older slot it overwrites (absent, else oldest), the
 *       version word is set BUSY, the value written, the version word set to ctts, tts freed
 *       ({@link RccTsTxn#writeBack}); by RPC the WRITE_BACK handler does the same.</li>
 *   <li><b>Validate</b>: only keys read as absent from the index: their tables' absent bounds are raised to ctts
 *       (an rts for the keys that have no tuple, {@link RccTsTxn#raiseAbsentBounds}), then they are checked still
 *       absent (shared with every protocol). MVCC validates nothing else.</li>
 * </ul>
 * Inserts: an INSERT creates the object locked by its CAS word; the commit checks W1 on it (a READ) and empties its
 * older slots (they were another key's, or a deleted one's) so that no read below ctts finds a version there.
 * Clock-skew control: every wts and rts seen moves the loop's clock up ({@link io.scythe.txn.rcc.RccClock#observe}).
 */
public final class MvccTxn extends RccTsTxn {
    private final long ctts;

    public MvccTxn(final TxnRuntime runtime, final RccForm form, final String mode) {
        super(runtime, form, mode);
        this.ctts = clock.next();
    }

    /** This attempt's timestamp. */
    public long timestamp() {
        return ctts;
    }

    @Override
    protected int tupleBytes(final Access a) {
        return withRoom(a, MvccTuple.tupleBytes(max(a)), "rcc-mvcc", "MVCC's older versions");
    }

    @Override
    protected io.scythe.txn.rcc.RccLockKind logKind() {
        return io.scythe.txn.rcc.RccLockKind.MVCC;
    }

    @Override
    protected int lockOffset(final Access a) {
        return a.inserted ? ObjectLayout.CAS_LOCK_OFFSET : MvccTuple.TTS_OFFSET;
    }

    @Override
    protected long lockOwner(final Access a) {
        return a.inserted ? id : ctts;
    }

    // ---------------------------------------------------------------------------------------------- Read stage

    @Override
    protected Future<Access> readOneSided(final Access a) {
        return readTwice(a, (first, second) -> {
            final int max = max(a);
            if (!MvccTuple.sameVersions(first, second, max)) {
                return Future.failedFuture(abort(AbortReason.VALIDATION, a, "its two READs saw different versions"));
            }
            clock.observe(MvccTuple.maxWts(first, 0, max));
            clock.observe(MvccTuple.rts(first, 0, max));
            if (!MvccTuple.notInserting(first, 0)) {
                return Future.failedFuture(abort(AbortReason.LOCKED, a, "an insert of it is in progress"));
            }
            if (!MvccTuple.r2(first, 0, ctts)) {
                return Future.failedFuture(abort(AbortReason.LOCKED, a, "R2: a writer below this reader holds it"));
            }
            final int slot = MvccTuple.pick(first, 0, max, ctts);
            if (slot == MvccTuple.NONE) {
                return Future.failedFuture(abort(AbortReason.VALIDATION, a, "R1: none of its 4 versions is older "
                    + "than the reader"));
            }
            final long seen = first.getLong(ObjectLayout.VERSION_OFFSET);
            return raiseRts(a, MvccTuple.rts(first, 0, max), seen).compose(x -> adopt(a, first, slot));
        });
    }

    /**
     * Raises rts to ctts from {@code rts} (a CAS retried with the value it found), each CAS followed by a READ of the
     * header, which must still show {@code version} and no writer below ctts (else one may have passed W1 before
     * the raise).
     */
    private Future<Void> raiseRts(final Access a, final long rts, final long version) {
        if (rts >= ctts) {
            return Future.succeededFuture();
        }
        final long address = a.address() + MvccTuple.rtsOffset(max(a));
        final UnsafeBuffer header = new UnsafeBuffer(new byte[ObjectLayout.HEADER_BYTES]);
        return channel(a).compose(ch -> {
            final Doorbell batch = ch.doorbell();
            final int cas = batch.compareAndSwap(address, a.rkey(), rts, ctts);
            batch.read(a.address(), a.rkey(), header, 0, ObjectLayout.HEADER_BYTES);
            return batch.post().map(b -> b.result(cas));
        }).compose(found -> {
            if (header.getLong(ObjectLayout.VERSION_OFFSET) != version || !MvccTuple.r2(header, 0, ctts)) {
                return Future.failedFuture(abort(AbortReason.VALIDATION, a, "a writer came between its read and "
                    + "the raise of its rts"));
            }
            return found == rts ? Future.succeededFuture() : raiseRts(a, found, version);
        });
    }

    /** Makes version {@code slot} of {@code tuple} the image the attempt read (header fields and value). */
    private Future<Access> adopt(final Access a, final DirectBuffer tuple, final int slot) {
        final int max = max(a);
        if (slot == MvccTuple.NEWEST) {
            if (tuple != a.image) {
                a.image.putBytes(0, tuple, 0, tupleBytes(a));
            }
            return checkedImage(a);
        }
        final int at = MvccTuple.oldSlotOffset(max, slot);
        return settleRead(a, tuple.getLong(at), tuple.getInt(at + 12), tuple, at + 16, tuple.getInt(at + 8));
    }

    /** The attempt read version {@code wts} of {@code a}: its flags and value (length {@code length}). */
    private Future<Access> settleRead(final Access a, final long wts, final int flags, final DirectBuffer value,
                                      final int at, final int length) {
        final UnsafeBuffer image = tupleImage(a);
        if (length < 0 || length > max(a)) {
            return Future.failedFuture(abort(AbortReason.VALIDATION, a, "torn read"));
        }
        image.putLong(ObjectLayout.VERSION_OFFSET, wts);
        image.putInt(ObjectLayout.VALUE_LENGTH_OFFSET, length);
        image.putShort(ObjectLayout.FLAGS_OFFSET, (short) ((flags & MvccTuple.DELETED) != 0
            ? ObjectLayout.FLAG_DELETED : 0));
        if (value != image || at != ObjectLayout.VALUE_OFFSET) {
            image.putBytes(ObjectLayout.VALUE_OFFSET, value, at, length);
        }
        return checkedImage(a);
    }

    @Override
    protected Future<Access> readByRpc(final Access a) {
        final UnsafeBuffer request = request(a);
        return runtime.rocket(a.partition.node()).compose(r -> r.call(RccRpc.MV_READ, request)).compose(reply -> {
            final DirectBuffer p = RccLockingTxn.payload(reply, RccRpc.MV_READ_REPLY_BYTES);
            switch (p.getInt(0)) {
                case RccRpc.GRANTED -> {
                    clock.observe(p.getLong(8));
                    clock.observe(p.getLong(16));
                    final int length = p.getInt(4);
                    if (length < 0) {
                        return readOneSided(a); // too large for a reply: the one-sided read (its rts is raised)
                    }
                    tupleImage(a).putShort(ObjectLayout.INCARNATION_OFFSET,
                        (short) ObjectLayout.incarnationOf(a.pointer));
                    return settleRead(a, p.getLong(8), p.getInt(24), p, RccRpc.MV_READ_REPLY_BYTES, length);
                }
                case RccRpc.STALE -> {
                    runtime.remote(a.partition).invalidate(a.key);
                    return Future.failedFuture(abort(AbortReason.VALIDATION, a, "moved (stale cached address)"));
                }
                case RccRpc.NO_VERSION -> {
                    clock.observe(p.getLong(16));
                    return Future.failedFuture(abort(AbortReason.VALIDATION, a, "R1: none of its 4 versions is "
                        + "older than the reader"));
                }
                default -> {
                    return Future.failedFuture(abort(AbortReason.LOCKED, a, "R2: a writer below this reader holds it"
                        + " (or an insert of it is in progress)"));
                }
            }
        });
    }

    private UnsafeBuffer request(final Access a) {
        final UnsafeBuffer request = new UnsafeBuffer(new byte[RccRpc.LOCK_REQUEST_BYTES]);
        request.putInt(0, a.partition.descriptor().schema().id());
        request.putLong(8, a.pointer);
        request.putLong(16, ctts);
        return request;
    }

    // ---------------------------------------------------------------------------------------------- Lock stage

    /** W1 and W2 on {@code tuple}, or why not. */
    private AbortException writable(final Access a, final DirectBuffer tuple) {
        final int max = max(a);
        clock.observe(MvccTuple.maxWts(tuple, 0, max));
        clock.observe(MvccTuple.rts(tuple, 0, max));
        if (!MvccTuple.w1(tuple, 0, max, ctts)) {
            return abort(AbortReason.VALIDATION, a, "W1: a version or a read at or after the writer's timestamp");
        }
        if (!MvccTuple.notInserting(tuple, 0)) {
            return abort(AbortReason.LOCKED, a, "an insert of it is in progress");
        }
        return null;
    }

    @Override
    protected Future<Access> lockOneSided(final Access a) {
        final int bytes = tupleBytes(a);
        final UnsafeBuffer image = tupleImage(a);
        return channel(a).compose(ch -> ch.read(a.address(), a.rkey(), image, 0, bytes))
            .compose(v -> sameObject(a, image)).compose(v -> {
                final AbortException no = writable(a, image);
                if (no != null) {
                    return Future.failedFuture(no);
                }
                if (MvccTuple.tts(image, 0) != 0) {
                    return Future.failedFuture(abort(AbortReason.LOCKED, a, "W2: held by "
                        + Long.toHexString(MvccTuple.tts(image, 0))));
                }
                return channel(a).compose(ch -> {
                    final Doorbell batch = ch.doorbell();
                    final int cas = batch.compareAndSwap(a.address() + MvccTuple.TTS_OFFSET, a.rkey(), 0, ctts);
                    batch.read(a.address(), a.rkey(), image, 0, bytes);
                    return batch.post().recover(e -> batch.failedIndex() <= cas ? lockVerbInDoubt(a.partition.node(), "its tts CAS on "
                        + "key " + a.key + " of " + a.table + " failed after it was posted", e)
                        : (batch.result(cas) == 0 ? releaseLate(a.partition.node(), () -> unlock(a)) : Future.<Void>succeededFuture())
                        .compose(x -> Future.failedFuture(e))).map(b -> b.result(cas));
                });
            }).compose(previous -> previous != 0 ? Future.failedFuture(abort(AbortReason.LOCKED, a, "W2: held by "
                + Long.toHexString(previous))) : held(a).compose(x -> recheck(a)));
    }

    /** W1 again on the copy READ under the lock; the word is let go of when it fails. */
    private Future<Access> recheck(final Access a) {
        final int incarnation = a.image.getShort(ObjectLayout.INCARNATION_OFFSET) & 0xffff;
        if (incarnation != ObjectLayout.incarnationOf(a.pointer)) {
            runtime.remote(a.partition).invalidate(a.key);
            return releaseAndFail(a, abort(AbortReason.VALIDATION, a, "moved (its slot was freed and reused)"));
        }
        final AbortException no = writable(a, a.image);
        if (no != null) {
            return releaseAndFail(a, no);
        }
        return checkedImage(a);
    }

    @Override
    protected Future<Access> lockByRpc(final Access a) {
        final UnsafeBuffer request = request(a);
        return runtime.rocket(a.partition.node()).compose(r -> r.call(RccRpc.MV_LOCK, request))
            .recover(e -> rpcMayHaveLanded(e) ? lockVerbInDoubt(a.partition.node(), "its MV_LOCK RPC on key " + a.key + " of " + a.table
                + " failed after it was sent", e) : Future.failedFuture(e))
            .compose(reply -> {
                final DirectBuffer p = RccLockingTxn.payload(reply, RccRpc.LOCK_REPLY_BYTES);
                switch (p.getInt(0)) {
                    case RccRpc.GRANTED -> {
                        final int bytes = p.getInt(4);
                        if (bytes == 0) { // too large for a reply: READ it under the lock now held
                            return held(a).compose(x -> channel(a)).compose(ch -> ch.read(a.address(), a.rkey(),
                                tupleImage(a), 0, tupleBytes(a))).compose(v -> recheck(a));
                        }
                        tupleImage(a).putBytes(0, p, RccRpc.LOCK_REPLY_BYTES, Math.min(bytes, tupleBytes(a)));
                        return held(a).compose(x -> recheck(a));
                    }
                    case RccRpc.STALE -> {
                        runtime.remote(a.partition).invalidate(a.key);
                        return Future.failedFuture(abort(AbortReason.VALIDATION, a, "moved (stale cached address)"));
                    }
                    case RccRpc.TOO_LATE -> {
                        clock.observe(p.getLong(8));
                        return Future.failedFuture(abort(AbortReason.VALIDATION, a, "W1: a version or a read at or "
                            + "after the writer's timestamp"));
                    }
                    default -> {
                        return Future.failedFuture(abort(AbortReason.LOCKED, a, "W2: held by "
                            + Long.toHexString(p.getLong(8))));
                    }
                }
            });
    }

    // -------------------------------------------------------------------------------------------- Commit stage

    /** W1 checked on inserts, the write set locked, absent bounds raised to ctts, then ctts installed. */
    @Override
    public Future<Long> commit() {
        final AbortException beyond = beyondBound(ctts);
        if (beyond != null) {
            // Before locking (ctts is fixed from the start; commitInStages checks again once locked, for SUNDIAL).
            return Future.failedFuture(beyond);
        }
        return commitInStages(this::checkInserted, () -> ctts, this::validateAbsent);
    }

    /** W1 on each object this attempt inserted: a READ of its tuple (it holds the object's CAS word). */
    private Future<Void> checkInserted() {
        final List<Future<?>> checks = new ArrayList<>();
        for (final Access a : accesses) {
            if (a.inserted) {
                final UnsafeBuffer image = tupleImage(a);
                checks.add(channel(a).compose(ch -> ch.read(a.address(), a.rkey(), image, 0, tupleBytes(a)))
                    .compose(v -> {
                        final int max = max(a);
                        clock.observe(MvccTuple.rts(image, 0, max));
                        return ctts > MvccTuple.newestWts(image, 0) && ctts >= MvccTuple.rts(image, 0, max)
                            ? Future.succeededFuture() : Future.failedFuture(abort(AbortReason.VALIDATION, a,
                            "W1: an insert below a version or read of the key"));
                    }));
            }
        }
        return settle(checks);
    }

    @Override
    protected void addCommitWrites(final Doorbell batch, final Access a) {
        final int max = max(a);
        final long address = a.address();
        if (a.inserted) {
            final UnsafeBuffer empty = new UnsafeBuffer(new byte[MvccTuple.OLD_SLOTS
                * MvccTuple.oldSlotBytes(max)]);
            batch.write(address + MvccTuple.oldSlotOffset(max, 0), a.rkey(), empty, 0, empty.capacity());
            addInstall(batch, a, MvccTuple.newestWts(a.image, 0), ctts);
            return;
        }
        final UnsafeBuffer old = new UnsafeBuffer(new byte[MvccTuple.oldSlotBytes(max)]);
        MvccTuple.newestAsOld(a.image, 0, max, old, 0);
        batch.write(address + MvccTuple.oldSlotOffset(max, MvccTuple.victim(a.image, 0, max)), a.rkey(), old, 0,
            16 + old.getInt(8));
        addInstall(batch, a, MvccTuple.newestWts(a.image, 0), ctts);
    }

    /**
     * The backup's rts and three older slots as the primary's commit leaves them ({@link #addCommitWrites}, or the RPC
     * commit's FLAG_MVCC move, both from the tuple read under the lock): the image's older slots with the newest
     * version moved into {@link MvccTuple#victim}, or none for an object this attempt inserted; rts as read under the
     * lock. One WRITE of the whole room, so a backup whose slots ever differed is made equal again. Readers raise the
     * primary's rts without a write to the backups (RCC replicates commits, not reads): the rts written is the primary's
     * at the lock, possibly lower than its latest.
     */
    @Override
    protected void addBackupWrites(final Doorbell batch, final Access a, final long address, final int rkey) {
        final int max = max(a);
        final int rts = MvccTuple.rtsOffset(max);
        final UnsafeBuffer room = new UnsafeBuffer(new byte[MvccTuple.room(max)]);
        room.putLong(0, MvccTuple.rts(a.image, 0, max));
        if (!a.inserted) {
            room.putBytes(8, a.image, MvccTuple.oldSlotOffset(max, 0), MvccTuple.OLD_SLOTS
                * MvccTuple.oldSlotBytes(max));
            MvccTuple.newestAsOld(a.image, 0, max, room,
                MvccTuple.oldSlotOffset(max, MvccTuple.victim(a.image, 0, max)) - rts);
        }
        batch.write(address + rts, rkey, room, 0, room.capacity());
    }

    @Override
    protected int commitFlags(final Access a) {
        return a.inserted ? RccRpc.FLAG_FRESH : RccRpc.FLAG_MVCC;
    }
}
