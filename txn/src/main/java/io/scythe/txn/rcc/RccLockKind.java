package io.scythe.txn.rcc;

import io.scythe.bridge.Doorbell;
import io.scythe.storage.ObjectLayout;
import io.scythe.txn.Catalog;
import io.scythe.txn.TxnRuntime;
import io.scythe.txn.ford.CasLockKind;
import io.scythe.txn.rcc.mvcc.MvccTuple;
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
 *       the installed version (flag RTS: the lease {@code [ts, ts]}). A value too large for one request is written
 *       one-sided first, as the commit writes it ({@link #installValue}: MVCC's older slot, the version word BUSY,
 *       value and length), and the WRITE_BACK carries the rest. Backups keep the newest version only, as the commit
 *       writes them.</li>
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
     * the entry was finished already). A value that does not fit a request goes one-sided first ({@link
     * #installValue}).
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
            // Too large for a request (the commit writes such a value one-sided, whatever its code): the value
            // one-sided, then the WRITE_BACK of the rest, without it.
            return installValue(runtime, partition, pointer, token, inserted, value, length).compose(v ->
                writeBack(runtime, partition, pointer, token, installedVersion, inserted,
                    fixedFlags & ~RccRpc.FLAG_VALUE, value, 0));
        });
    }

    /**
     * Writes a value too large for a WRITE_BACK request one-sided, as the one-sided commit does
     * ({@code RccTsTxn#addCommitWrites}): the tuple READ (the dead node's word still holds {@code token}, so only
     * readers touch it meanwhile), then one doorbell: MVCC's newest version to its older slot (unless the object
     * was inserted, or its version word is BUSY: a dead one-sided commit's doorbell moved it already), the version
     * word BUSY (readers wait, or pick an older version), the value and its length. The WRITE_BACK that follows
     * installs the version (clearing BUSY), sets rts or empties the older slots and releases the word; it finds the
     * version word BUSY, so it moves nothing again. A word no longer holding the token writes nothing here (the
     * WRITE_BACK then answers STALE).
     *
     * <p><b>Open race (review, stop 39; not fixed):</b> the token is checked on the READ, not with the doorbell's
     * WRITEs. If an earlier recovery attempt's WRITE_BACK timed out but is still in the memory node's ring, this
     * attempt can READ the token, that WRITE_BACK then install and release, and this doorbell land after: the version
     * word is left BUSY (this attempt's WRITE_BACK answers STALE, nobody clears it) and a writer that locked and
     * committed in between has its value overwritten. The fix is to write such a value in parts by RPC, each applied
     * on the memory node only while the word holds the token (the last installing the version), as the small values'
     * WRITE_BACK is. Reached only when a recovery attempt times out with its WRITE_BACK still queued.
     */
    private Future<Void> installValue(final TxnRuntime runtime, final Catalog.Partition partition,
                                      final long pointer, final long token, final boolean inserted,
                                      final DirectBuffer value, final int length) {
        final int max = partition.descriptor().schema().maxValueBytes();
        final long address = ObjectLayout.addressOf(pointer);
        final int rkey = partition.descriptor().objects().rkey();
        final boolean moves = this == MVCC && !inserted;
        final UnsafeBuffer image = new UnsafeBuffer(new byte[moves ? MvccTuple.tupleBytes(max)
            : ObjectLayout.HEADER_BYTES]);
        final String node = partition.node();
        return runtime.channel(node).compose(ch -> ch.read(address, rkey, image, 0, image.capacity()).compose(v -> {
            if (!heldBy(image, token)
                || (image.getShort(ObjectLayout.INCARNATION_OFFSET) & 0xffff) != ObjectLayout.incarnationOf(pointer)) {
                return Future.<Void>succeededFuture();
            }
            final long version = image.getLong(ObjectLayout.VERSION_OFFSET);
            final Doorbell batch = ch.doorbell();
            if (moves && (version & ObjectLayout.VERSION_BUSY) == 0) {
                final UnsafeBuffer old = new UnsafeBuffer(new byte[MvccTuple.oldSlotBytes(max)]);
                MvccTuple.newestAsOld(image, 0, max, old, 0);
                batch.write(address + MvccTuple.oldSlotOffset(max, MvccTuple.victim(image, 0, max)), rkey, old, 0,
                    16 + old.getInt(8));
            }
            final UnsafeBuffer words = new UnsafeBuffer(new byte[16]);
            words.putLong(0, version | ObjectLayout.VERSION_BUSY);
            words.putInt(8, length);
            batch.write(address + ObjectLayout.VERSION_OFFSET, rkey, words, 0, 8);
            batch.write(address + ObjectLayout.VALUE_OFFSET, rkey, value, 0, length);
            batch.write(address + ObjectLayout.VALUE_LENGTH_OFFSET, rkey, words, 8, 4);
            return batch.post().<Void>mapEmpty();
        }).onFailure(e -> {
            if (!io.scythe.txn.Refusal.forNow(e)) {
                runtime.forgetChannel(node, ch);
            }
        }));
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
            .compose(reply -> RccLockingTxn.payload(reply, 8).getInt(0) == RccRpc.GRANTED
                ? Future.<Void>succeededFuture() : Future.failedFuture(new IllegalStateException(name
                + ": recovery's WRITE_BACK of the entry at " + Long.toHexString(pointer) + " on "
                + partition.node() + " found its word no longer held by " + Long.toHexString(token))));
    }
}
