package io.scythe.txn.rcc.sundial;

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
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * RCC's SUNDIAL (§4.5) on {@link SundialTuple}'s tuples: leases {@code [wts, rts]} and a commit timestamp
 * {@code commit.tts} that each access pushes up, each stage by the primitive its {@link RccForm} picks:
 * <ul>
 *   <li><b>Read</b> (records read and not written): an atomic read, one-sided two READs of the tuple in one doorbell
 *       that must show the same version (not BUSY: no commit rewriting it), or an SD_READ whose handler copies it.
 *       The wts and rts read are kept; {@code commit.tts = max(commit.tts, wts)}. A record locked by a writer is read
 *       (its committed version) with a lease ending at its wts, whatever its rts: a one-sided renewal whose CAS on rts
 *       landed after the writer locked raised rts past the writer's commit (the renewal then fails, but rts stays;
 *       phantom crash seed 42 committed a write skew so). One being inserted is not read (LOCKED).</li>
 *   <li><b>Lock</b> (records written): the CAS of the lock word from 0 to the transaction id with a READ of the tuple
 *       in one doorbell, or an SD_LOCK. A record also read must still have the wts read. Then
 *       {@code commit.tts = max(commit.tts, rts + 1)}. A lock found taken aborts (no waiting).</li>
 *   <li><b>Validate (Renew)</b>: every record read whose lease ends before {@code commit.tts} is renewed: its wts
 *       must be unchanged and it must be unlocked; rts then rises to {@code commit.tts}. One-sided, a double READ,
 *       the checks, and a CAS on rts (expected: the rts read) with a READ of the header behind it in its doorbell,
 *       which must still show the same wts and no lock (a writer that locked before the raise landed would commit
 *       inside the lease); a CAS that found another rts is retried from it. By RPC, one SD_RENEW per memory
 *       node.</li>
 *   <li><b>Commit</b>: {@code wts = rts = commit.tts} with the new value, the version word BUSY while the value is
 *       rewritten ({@link RccTsTxn#writeBack}).</li>
 * </ul>
 * Keys read as absent are ordered before later inserts by their tables' absent bounds, raised to {@code commit.tts}
 * before their absence is validated ({@link RccTsTxn#raiseAbsentBounds}). An insert creates its object locked by the
 * CAS word; the commit reads its version and rts (a revived key may have
 * a lease) and goes above both.
 */
public final class SundialTxn extends RccTsTxn {
    private long commitTs;
    /** rts read of each record read (its lease end). */
    // Insertion order: Access hashes by identity, so a HashMap would renew leases in an order that differs between
    // runs of one seed (the simulator must repeat itself).
    private final Map<Access, Long> leases = new LinkedHashMap<>();

    public SundialTxn(final TxnRuntime runtime, final RccForm form, final String mode) {
        super(runtime, form, mode);
    }

    /** {@code commit.tts} so far. */
    public long commitTs() {
        return commitTs;
    }

    @Override
    protected int tupleBytes(final Access a) {
        return withRoom(a, SundialTuple.tupleBytes(max(a)), "rcc-sundial", "SUNDIAL's rts");
    }

    @Override
    protected io.scythe.txn.rcc.RccLockKind logKind() {
        return io.scythe.txn.rcc.RccLockKind.SUNDIAL;
    }

    @Override
    protected int lockOffset(final Access a) {
        return a.inserted ? ObjectLayout.CAS_LOCK_OFFSET : SundialTuple.LOCK_OFFSET;
    }

    @Override
    protected long lockOwner(final Access a) {
        return id;
    }

    // ---------------------------------------------------------------------------------------------- Read stage

    @Override
    protected Future<Access> readOneSided(final Access a) {
        return readTwice(a, (first, second) -> {
            if (SundialTuple.wts(first, 0) != SundialTuple.wts(second, 0)) {
                return Future.failedFuture(abort(AbortReason.VALIDATION, a, "its two READs saw different versions"));
            }
            return adoptRead(a);
        });
    }

    /** The tuple in {@code a}'s image was read atomically: keep its lease, push commit.tts up to its wts. */
    private Future<Access> adoptRead(final Access a) {
        final UnsafeBuffer t = a.image;
        if (SundialTuple.inserting(t, 0)) {
            return Future.failedFuture(abort(AbortReason.LOCKED, a, "an insert of it is in progress"));
        }
        if (SundialTuple.busy(t, 0)) {
            return Future.failedFuture(abort(AbortReason.LOCKED, a, "a commit is rewriting it"));
        }
        final long wts = SundialTuple.wts(t, 0);
        final long rts = SundialTuple.rts(t, 0, max(a));
        clock.observe(wts);
        clock.observe(rts);
        final long leaseEnd = SundialTuple.readLease(t, 0, max(a)); // a locked tuple's lease ends at wts
        return checkedImage(a).map(x -> {
            commitTs = Math.max(commitTs, wts);
            leases.put(a, leaseEnd);
            return x;
        });
    }

    @Override
    protected Future<Access> readByRpc(final Access a) {
        return call(a, RccRpc.SD_READ, 0).compose(p -> {
            final int status = p.getInt(0);
            if (status != RccRpc.GRANTED) {
                return Future.failedFuture(refused(a, status, "an insert of it is in progress or a commit is "
                    + "rewriting it"));
            }
            final int bytes = p.getInt(4);
            if (bytes == 0) {
                return readOneSided(a); // too large for a reply
            }
            tupleImage(a).putBytes(0, p, RccRpc.LOCK_REPLY_BYTES, Math.min(bytes, tupleBytes(a)));
            return adoptRead(a);
        });
    }

    private Future<DirectBuffer> call(final Access a, final int rpc, final long owner) {
        final UnsafeBuffer request = new UnsafeBuffer(new byte[RccRpc.LOCK_REQUEST_BYTES]);
        request.putInt(0, a.partition.descriptor().schema().id());
        request.putLong(8, a.pointer);
        request.putLong(16, owner);
        final Future<DirectBuffer> reply = runtime.rocket(a.partition.node()).compose(r -> r.call(rpc, request))
            .map(r -> RccLockingTxn.payload(r, RccRpc.LOCK_REPLY_BYTES));
        return rpc != RccRpc.SD_LOCK ? reply : reply.recover(e -> rpcMayHaveLanded(e) ? lockVerbInDoubt(a.partition.node(), "its SD_LOCK "
            + "RPC on key " + a.key + " of " + a.table + " failed after it was sent", e) : Future.failedFuture(e));
    }

    private AbortException refused(final Access a, final int status, final String busy) {
        if (status == RccRpc.STALE) {
            runtime.remote(a.partition).invalidate(a.key);
            return abort(AbortReason.VALIDATION, a, "moved (stale cached address)");
        }
        return abort(AbortReason.LOCKED, a, busy);
    }

    // ---------------------------------------------------------------------------------------------- Lock stage

    @Override
    protected Future<Access> lockOneSided(final Access a) {
        final int bytes = tupleBytes(a);
        final UnsafeBuffer image = tupleImage(a);
        return channel(a).compose(ch -> {
            final Doorbell batch = ch.doorbell();
            final int cas = batch.compareAndSwap(a.address() + SundialTuple.LOCK_OFFSET, a.rkey(), 0, id);
            batch.read(a.address(), a.rkey(), image, 0, bytes);
            return batch.post().recover(e -> batch.failedIndex() <= cas ? lockVerbInDoubt(a.partition.node(), "its lock CAS on key "
                + a.key + " of " + a.table + " failed after it was posted", e)
                : (batch.result(cas) == 0 ? releaseLate(a.partition.node(), () -> unlock(a)) : Future.<Void>succeededFuture())
                .compose(x -> Future.failedFuture(e))).map(b -> b.result(cas));
        }).compose(previous -> previous != 0 ? Future.failedFuture(abort(AbortReason.LOCKED, a, "held by "
            + Long.toHexString(previous))) : held(a).compose(x -> locked(a)));
    }

    @Override
    protected Future<Access> lockByRpc(final Access a) {
        return call(a, RccRpc.SD_LOCK, id).compose(p -> {
            final int status = p.getInt(0);
            if (status != RccRpc.GRANTED) {
                return Future.failedFuture(refused(a, status, "held by " + Long.toHexString(p.getLong(8))));
            }
            final int bytes = p.getInt(4);
            if (bytes == 0) { // too large for a reply: READ it under the lock now held
                return held(a).compose(x -> channel(a)).compose(ch -> ch.read(a.address(), a.rkey(), tupleImage(a),
                    0, tupleBytes(a))).compose(v -> locked(a));
            }
            tupleImage(a).putBytes(0, p, RccRpc.LOCK_REPLY_BYTES, Math.min(bytes, tupleBytes(a)));
            return held(a).compose(x -> locked(a));
        });
    }

    /** The checks under the lock just taken: same object, no insert, the wts read if read before; then commit.tts. */
    private Future<Access> locked(final Access a) {
        final UnsafeBuffer t = a.image;
        if ((t.getShort(ObjectLayout.INCARNATION_OFFSET) & 0xffff) != ObjectLayout.incarnationOf(a.pointer)) {
            runtime.remote(a.partition).invalidate(a.key);
            return releaseAndFail(a, abort(AbortReason.VALIDATION, a, "moved (its slot was freed and reused)"));
        }
        if (SundialTuple.inserting(t, 0)) {
            return releaseAndFail(a, abort(AbortReason.LOCKED, a, "an insert of it is in progress"));
        }
        final long wts = SundialTuple.wts(t, 0);
        if (leases.containsKey(a) && wts != a.readVersion) {
            return releaseAndFail(a, abort(AbortReason.VALIDATION, a, "a writer committed since its read"));
        }
        final long rts = SundialTuple.rts(t, 0, max(a));
        clock.observe(wts);
        clock.observe(rts);
        commitTs = Math.max(commitTs, SundialTuple.writerFloor(t, 0, max(a)));
        return checkedImage(a);
    }

    // -------------------------------------------------------------------------------------------- Commit stage

    /** commit.tts above inserts, the write set locked, absent bounds raised and leases renewed, then installed. */
    @Override
    public Future<Long> commit() {
        return commitInStages(this::afterInserted, () -> commitTs, () -> settle(List.of(validateAbsent(), renew())));
    }

    /** commit.tts above the version and rts of each object inserted (a READ of its tuple, held by its CAS word). */
    private Future<Void> afterInserted() {
        final List<Future<?>> reads = new ArrayList<>();
        for (final Access a : accesses) {
            if (a.inserted) {
                final UnsafeBuffer image = tupleImage(a);
                reads.add(channel(a).compose(ch -> ch.read(a.address(), a.rkey(), image, 0, tupleBytes(a)))
                    .map(v -> {
                        final long rts = SundialTuple.rts(image, 0, max(a));
                        clock.observe(rts);
                        commitTs = Math.max(commitTs, Math.max(rts, a.readVersion) + 1);
                        return null;
                    }));
            }
        }
        return settle(reads);
    }

    /** The records read whose lease ends before commit.tts, renewed. */
    private Future<Void> renew() {
        final List<Access> due = new ArrayList<>();
        for (final Map.Entry<Access, Long> e : leases.entrySet()) {
            final Access a = e.getKey();
            if (!a.locked && !a.inserted && e.getValue() < commitTs) {
                due.add(a);
            }
        }
        if (due.isEmpty()) {
            return Future.succeededFuture();
        }
        final List<Future<?>> renewals = new ArrayList<>();
        if (form.oneSided(RccForm.Step.VALIDATE)) {
            for (final Access a : due) {
                renewals.add(renewOneSided(a));
            }
        } else {
            for (final Map.Entry<String, List<Access>> e : RccLockingTxn.byNode(due).entrySet()) {
                renewals.add(runtime.rocket(e.getKey()).compose(rocket -> {
                    final List<Future<?>> calls = new ArrayList<>();
                    for (final List<Access> chunk : RccLockingTxn.chunks(e.getValue(), a -> RccRpc.RENEW_ENTRY_BYTES,
                        rocket.maxPayload() - RccRpc.HEAD_BYTES)) {
                        calls.add(renewByRpc(e.getKey(), chunk));
                    }
                    return settle(calls);
                }));
            }
        }
        return settle(renewals);
    }

    private Future<Void> renewByRpc(final String node, final List<Access> chunk) {
        final UnsafeBuffer request = new UnsafeBuffer(new byte[RccRpc.HEAD_BYTES
            + chunk.size() * RccRpc.RENEW_ENTRY_BYTES]);
        request.putInt(0, chunk.size());
        int at = RccRpc.HEAD_BYTES;
        for (final Access a : chunk) {
            request.putInt(at, a.partition.descriptor().schema().id());
            request.putLong(at + 8, a.pointer);
            request.putLong(at + 16, a.readVersion);
            request.putLong(at + 24, commitTs);
            at += RccRpc.RENEW_ENTRY_BYTES;
        }
        return untilAccepted(() -> runtime.rocket(node).compose(r -> r.call(RccRpc.SD_RENEW, request)))
            .compose(reply -> {
                final DirectBuffer p = RccLockingTxn.payload(reply, 8);
                return p.getInt(0) == RccRpc.GRANTED ? Future.succeededFuture() : Future.failedFuture(abort(
                    AbortReason.VALIDATION, chunk.get(p.getInt(4)), "its lease could not be renewed (written or "
                        + "locked since its read)"));
            });
    }

    /** Double READ, the checks, then CAS rts up to commit.tts with a header READ behind it (retried from rts found). */
    private Future<Void> renewOneSided(final Access a) {
        final int bytes = tupleBytes(a);
        final UnsafeBuffer first = new UnsafeBuffer(new byte[bytes]);
        final UnsafeBuffer second = new UnsafeBuffer(new byte[bytes]);
        return channel(a).compose(ch -> {
            final Doorbell batch = ch.doorbell();
            batch.read(a.address(), a.rkey(), first, 0, bytes);
            batch.read(a.address(), a.rkey(), second, 0, bytes);
            return batch.post();
        }).compose(b -> {
            if (!SundialTuple.renewable(first, 0, a.readVersion) || !SundialTuple.renewable(second, 0, a.readVersion)
                || (first.getShort(ObjectLayout.INCARNATION_OFFSET) & 0xffff) != ObjectLayout.incarnationOf(
                a.pointer)) {
                return Future.failedFuture(abort(AbortReason.VALIDATION, a, "its lease could not be renewed "
                    + "(written or locked since its read)"));
            }
            return raiseRts(a, SundialTuple.rts(second, 0, max(a)));
        });
    }

    private Future<Void> raiseRts(final Access a, final long rts) {
        if (rts >= commitTs) {
            return Future.succeededFuture();
        }
        final UnsafeBuffer header = new UnsafeBuffer(new byte[ObjectLayout.HEADER_BYTES]);
        return channel(a).compose(ch -> {
            final Doorbell batch = ch.doorbell();
            final int cas = batch.compareAndSwap(a.address() + SundialTuple.rtsOffset(max(a)), a.rkey(), rts,
                commitTs);
            batch.read(a.address(), a.rkey(), header, 0, ObjectLayout.HEADER_BYTES);
            return batch.post().map(b -> b.result(cas));
        }).compose(found -> {
            if (!SundialTuple.renewable(header, 0, a.readVersion)) {
                return Future.failedFuture(abort(AbortReason.VALIDATION, a, "locked or written while its lease was "
                    + "renewed"));
            }
            return found == rts ? Future.succeededFuture() : raiseRts(a, found);
        });
    }

    @Override
    protected void addCommitWrites(final Doorbell batch, final Access a) {
        final long previous = SundialTuple.wts(a.image, 0) & ~ObjectLayout.VERSION_BUSY;
        final long address = a.address();
        batch.write(address + ObjectLayout.VERSION_OFFSET, a.rkey(), word(previous | ObjectLayout.VERSION_BUSY), 0,
            8);
        batch.write(address + SundialTuple.rtsOffset(max(a)), a.rkey(), word(commitTs), 0, 8);
        addInstall(batch, a, previous, commitTs);
    }

    /** The backup's rts as the primary's commit sets it: {@code wts = rts = commitTs} (the version is shared). */
    @Override
    protected void addBackupWrites(final Doorbell batch, final Access a, final long address, final int rkey) {
        batch.write(address + SundialTuple.rtsOffset(max(a)), rkey, word(commitTs), 0, 8);
    }

    @Override
    protected int commitFlags(final Access a) {
        return RccRpc.FLAG_RTS;
    }
}
