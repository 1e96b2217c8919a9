package io.scythe.txn.rcc;

import io.scythe.bridge.Doorbell;
import io.scythe.storage.ObjectLayout;
import io.scythe.txn.Catalog;
import io.scythe.txn.TxnRuntime;
import io.scythe.txn.ford.CasLockKind;
import io.scythe.txn.recovery.RedoRecordDescriptor;
import io.scythe.txn.spi.LockKind;
import io.vertx.core.Future;
import org.agrona.DirectBuffer;
import org.agrona.concurrent.UnsafeBuffer;

import java.util.List;

/**
 * The lock of an RCC protocol's written objects as its coordinator-log records name it ({@link RccLog}): the word
 * at {@code offset} (NOWAIT and OCC: the CAS word holding the transaction id; WAITDIE and MVCC: {@code tts} holding
 * the timestamp; SUNDIAL: its lock word holding the transaction id), or the CAS word of an object the attempt
 * inserted (holding the transaction id). One kind per protocol, so a record says which protocol wrote it. Each
 * entry's token is what the attempt's word holds ({@code ownerOf}/{@code lockOwner}: the timestamp or the id).
 *
 * <p><b>Recovery</b> ({@code recovery.CnRecovery}): a record is rolled forward entry by entry while the entry's word
 * still holds its token (backups first, then the primary, the release last), and every other word of the dead node
 * (read locks, which no record names; the locks of a commit that logged nothing) is freed by a dead-node step on each
 * memory node ({@link RccModule#startMemoryNode}: NOWAIT's and OCC's CAS words by the CAS-word module's step, which
 * frees words by the node's id prefix; the {@code tts} words of WAITDIE and MVCC by the node slot and incarnation in
 * the timestamp's low bits; SUNDIAL's lock words by the id prefix).
 * <ul>
 *   <li>NOWAIT, OCC, WAITDIE: the shared roll-forward (value, length, flags, version WRITEs, then the release, one
 *       doorbell): their commits write nothing else. WAITDIE's release CASes {@code tts} and the CAS word from the
 *       token to 0 (one of the two holds it: {@code tts} a timestamp, the CAS word an insert's id).</li>
 *   <li>MVCC and SUNDIAL ({@link #finishesPrimary}): the primary is finished by the protocol's own RPC commit, one
 *       WRITE_BACK request ({@link RccLockService}) that the memory node applies atomically while the word still
 *       holds the token: MVCC moves the newest version to the older slot it overwrites first (flag MVCC; an inserted
 *       object's older slots are emptied, flag FRESH), unless its version word is BUSY (the dead commit's one-sided
 *       install began, and its doorbell moved the newest version before it set BUSY); SUNDIAL sets {@code rts} to
 *       the installed version (flag RTS: the lease {@code [ts, ts]}). A value too large for one request goes first in
 *       parts, WRITE_PART requests each applied while the word holds the token ({@link #installValue}: MVCC's older
 *       slot and the version word BUSY with the first, value and length), and the WRITE_BACK carries the rest.
 *       Its backups get the newest version only (the shared roll-forward's writes), not MVCC's older slot move nor
 *       SUNDIAL's rts, which a committer's own write-back gives them ({@code RccTsTxn#addBackupWrites}): a TODO of
 *       issue 18, harmless while no memory node fails over under RCC (refused).</li>
 * </ul>
 */
public record RccLockKind(int id, String name, int offset) implements LockKind {
    public static final RccLockKind NOWAIT = new RccLockKind(18, "rcc-nowait-lock", ObjectLayout.CAS_LOCK_OFFSET);
    public static final RccLockKind WAITDIE = new RccLockKind(19, "rcc-waitdie-tts", TupleFormat.TTS_OFFSET);
    public static final RccLockKind OCC = new RccLockKind(20, "rcc-occ-lock", ObjectLayout.CAS_LOCK_OFFSET);
    public static final RccLockKind MVCC = new RccLockKind(21, "rcc-mvcc-tts", TupleFormat.TTS_OFFSET);
    public static final RccLockKind SUNDIAL = new RccLockKind(22, "rcc-sundial-lock", TupleFormat.TTS_OFFSET);
    public static final List<RccLockKind> ALL = List.of(NOWAIT, WAITDIE, OCC, MVCC, SUNDIAL);
    /** The CAS word's side of every kind (NOWAIT's and OCC's lock, an insert's word): FORD's kind's rules. */
    private static final CasLockKind CAS = CasLockKind.INSTANCE;

    @Override
    public boolean free(final DirectBuffer header) {
        return header.getLong(offset) == 0 && CAS.free(header);
    }

    /** Whether the protocol word is this kind's lock (else the CAS word is its only word). */
    private boolean protocolWord() {
        return offset != ObjectLayout.CAS_LOCK_OFFSET;
    }

    @Override
    public boolean heldBy(final DirectBuffer header, final long token) {
        return CAS.heldBy(header, token) || protocolWord() && header.getLong(offset) == token;
    }

    @Override
    public void release(final Doorbell batch, final long address, final int rkey, final long token) {
        // CASes from the owner to 0, never a blind WRITE (the word may have passed on)
        if (protocolWord()) {
            batch.compareAndSwap(address + offset, rkey, token, 0);
        }
        CAS.release(batch, address, rkey, token);
    }

    @Override
    public boolean finishesPrimary() {
        return this == MVCC || this == SUNDIAL;
    }

    /**
     * One WRITE_BACK request (the RPC commit's, {@link RccRpc}) to the primary: value, flags, version, what the
     * protocol keeps beside them (MVCC's older slot, SUNDIAL's rts), and the release of the token's word, applied
     * by the memory node only while that word still holds the token (else it answers STALE and nothing is written:
     * the entry was finished already). A value that does not fit a request goes first in parts, each
     * applied on the same condition ({@link #installValue}).
     */
    @Override
    public Future<Void> finishPrimary(final TxnRuntime runtime, final Catalog.Partition partition,
                                      final long pointer, final int op, final long token,
                                      final long installedVersion, final DirectBuffer value,
                                      final int valueLength) {
        final boolean inserted = (op & RedoRecordDescriptor.OP_INSERTED) != 0;
        final boolean writes = (op & RedoRecordDescriptor.OP_VALUE) != 0;
        int flags = writes ? RccRpc.FLAG_VALUE : 0;
        if ((op & RedoRecordDescriptor.OP_DELETE) != 0) {
            flags |= RccRpc.FLAG_DELETE;
        } else if ((op & RedoRecordDescriptor.OP_REVIVE) != 0) {
            flags |= RccRpc.FLAG_REVIVE;
        }
        if (op != 0) {
            flags |= RccRpc.FLAG_VERSION | (this == SUNDIAL ? RccRpc.FLAG_RTS
                : inserted ? RccRpc.FLAG_FRESH : RccRpc.FLAG_MVCC);
        }
        final int length = writes ? valueLength : 0;
        final int fixedFlags = flags;
        return runtime.rocket(partition.node()).compose(rocket -> {
            if (RccRpc.HEAD_BYTES + RccRpc.entryBytes(length) <= rocket.maxPayload()) {
                return writeBack(runtime, partition, pointer, token, installedVersion, inserted, fixedFlags, value,
                    length);
            }
            // Too large for a request (the commit writes such a value one-sided, whatever its code): the value in
            // parts, then the WRITE_BACK of the rest, without it.
            return installValue(partition, rocket, pointer, token, inserted, value, length).compose(v ->
                writeBack(runtime, partition, pointer, token, installedVersion, inserted,
                    fixedFlags & ~RccRpc.FLAG_VALUE, value, 0));
        });
    }

    /**
     * Writes a value too large for a WRITE_BACK request in parts, one WRITE_PART request each ({@link RccRpc}), in
     * turn: the memory node applies each only while the entry's word still holds {@code token} (else it answers
     * STALE, nothing is written, and this attempt fails as {@link #writeBack}'s does). The first part to find the
     * version word not BUSY moves MVCC's newest version to its older slot (unless the object was inserted) and sets
     * BUSY (readers wait, or pick an older version), as the one-sided commit's doorbell does ({@code
     * RccTsTxn#addCommitWrites}); a version word found BUSY was moved already (by the dead commit's doorbell or an
     * earlier attempt's part). The WRITE_BACK that follows installs the version (clearing BUSY), sets rts or empties
     * the older slots and releases the word; it finds the version word BUSY, so it moves nothing again.
     *
     * <p>Every write is conditional at the memory node, so a timed-out earlier attempt whose requests are still in the
     * ring cannot leave the version word BUSY or overwrite a later writer: its parts and this one's carry the same
     * bytes, and whatever lands after either attempt's WRITE_BACK released the word writes nothing
     * (RccInstallRaceTest).
     * (Until stop 40 the value went one-sided, after a READ that checked the token: an earlier attempt's WRITE_BACK
     * landing between that READ and the doorbell left the word BUSY and a later writer's value overwritten.)
     */
    private Future<Void> installValue(final Catalog.Partition partition, final io.scythe.rrpc.Rocket rocket,
                                      final long pointer, final long token, final boolean inserted,
                                      final DirectBuffer value, final int length) {
        final int part = (rocket.maxPayload() - RccRpc.PART_HEAD_BYTES) & ~7;
        final int flags = this == MVCC && !inserted ? RccRpc.FLAG_MVCC : 0;
        final int word = inserted ? ObjectLayout.CAS_LOCK_OFFSET : offset;
        Future<Void> done = Future.succeededFuture();
        for (int from = 0; from < length; from += part) {
            final UnsafeBuffer request = new UnsafeBuffer(new byte[RccRpc.PART_HEAD_BYTES
                + Math.min(part, length - from)]);
            request.putInt(0, partition.descriptor().schema().id());
            request.putInt(4, flags);
            request.putLong(8, pointer);
            request.putLong(16, token);
            request.putInt(24, word);
            request.putInt(28, length);
            request.putInt(32, from);
            request.putInt(36, request.capacity() - RccRpc.PART_HEAD_BYTES);
            request.putBytes(RccRpc.PART_HEAD_BYTES, value, from, request.capacity() - RccRpc.PART_HEAD_BYTES);
            done = done.compose(v -> rocket.call(RccRpc.WRITE_PART, request)
                .compose(reply -> granted(reply, partition, pointer, token, "WRITE_PART")));
        }
        return done;
    }

    /** One WRITE_BACK request of one entry, {@code length} bytes of {@code value} with it. */
    private Future<Void> writeBack(final TxnRuntime runtime, final Catalog.Partition partition, final long pointer,
                                   final long token, final long installedVersion, final boolean inserted,
                                   final int flags, final DirectBuffer value, final int length) {
        final UnsafeBuffer request = new UnsafeBuffer(new byte[RccRpc.HEAD_BYTES + RccRpc.entryBytes(length)]);
        request.putInt(0, 1);
        RccRpc.putWriteBack(request, RccRpc.HEAD_BYTES, partition.descriptor().schema().id(), flags, pointer,
            installedVersion, token, inserted ? ObjectLayout.CAS_LOCK_OFFSET : offset, value, length);
        // STALE: the word no longer holds the token, nothing written (an earlier attempt's request finished it):
        // fail this attempt, whose retry READs the header and finds the entry finished, rather than report an
        // install that did not happen.
        return runtime.rocket(partition.node()).compose(rocket -> rocket.call(RccRpc.WRITE_BACK, request))
            .compose(reply -> granted(reply, partition, pointer, token, "WRITE_BACK"));
    }

    /** Succeeds on a GRANTED reply; fails on STALE (the word no longer holds {@code token}, nothing written). */
    private Future<Void> granted(final io.scythe.rrpc.RpcReply reply, final Catalog.Partition partition,
                                 final long pointer, final long token, final String what) {
        return RccLockingTxn.payload(reply, 8).getInt(0) == RccRpc.GRANTED ? Future.succeededFuture()
            : Future.failedFuture(new IllegalStateException(name + ": recovery's " + what + " of the entry at "
            + Long.toHexString(pointer) + " on " + partition.node() + " found its word no longer held by "
            + Long.toHexString(token)));
    }
}
