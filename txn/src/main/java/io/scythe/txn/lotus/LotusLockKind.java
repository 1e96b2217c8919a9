package io.scythe.txn.lotus;

import io.scythe.bridge.Doorbell;
import io.scythe.storage.ObjectLayout;
import io.scythe.txn.spi.LockKind;
import org.agrona.DirectBuffer;
import org.agrona.concurrent.UnsafeBuffer;

/**
 * Lotus's locks as the redo records and recovery see them. The locks are not in the objects but in compute nodes'
 * lock tables, and a dead node's write locks stay held there until its recovery is over (survivors release them
 * only afterwards; its own shards are served by nobody meanwhile): so while recovery runs, every object a record of
 * the dead node names is still locked by that record unless its write-back landed ({@link #heldBy}). An object the dead node inserted
 * carries its transaction id in the CAS word (the memory node's INSERT); the release clears it with a WRITE of 0 (no
 * atomic verb), which changes nothing on the others (their word is 0).
 */
public final class LotusLockKind implements LockKind {
    /** The redo record's lock kind word of Lotus commits: the token is the transaction id. */
    public static final int ID = 7;
    public static final LotusLockKind INSTANCE = new LotusLockKind();
    private static final UnsafeBuffer ZERO = new UnsafeBuffer(new byte[8]);

    private LotusLockKind() {
    }

    @Override
    public int id() {
        return ID;
    }

    @Override
    public String name() {
        return "lotus-cn-lock";
    }

    @Override
    public boolean free(final DirectBuffer header) {
        return header.getLong(ObjectLayout.CAS_LOCK_OFFSET) == 0;
    }

    /**
     * Whether the object still waits for the write-back of the record whose token (the version that write-back
     * installs) is {@code token}: its version is below it. Its locks kept everyone else off it since (see the class
     * comment), so a version at or above the token is that record's write-back, landed.
     */
    @Override
    public boolean heldBy(final DirectBuffer header, final long token) {
        return (header.getLong(ObjectLayout.VERSION_OFFSET) & ~ObjectLayout.VERSION_BUSY) < token;
    }

    @Override
    public void release(final Doorbell batch, final long address, final int rkey, final long token) {
        batch.write(address + ObjectLayout.CAS_LOCK_OFFSET, rkey, ZERO, 0, 8);
    }

    /** Lotus keeps its versions in the CVT beside the header: recovery finishes their visible write. */
    @Override
    public boolean versionsBesideHeader() {
        return true;
    }

    /** Finishes the visible write of the recovered commit on every copy it did not land on ({@link LotusTxn#recoverCells}). */
    @Override
    public io.vertx.core.Future<Void> recovered(final io.scythe.txn.TxnRuntime runtime,
                                                final io.scythe.txn.Catalog.Partition partition, final long pointer,
                                                final long[] backupPointers, final long token, final long version) {
        return LotusTxn.recoverCells(runtime, partition, pointer, backupPointers, token, version);
    }

    /** Its locks are on compute nodes and its homes carry only a version word: {@link LotusTxn#settlePromoted}. */
    @Override
    public boolean settlesPromoted() {
        return true;
    }

    @Override
    public io.vertx.core.Future<Long> settlePromoted(final io.scythe.txn.TxnRuntime runtime,
                                                    final java.util.List<io.scythe.txn.Catalog.Replica> copies,
                                                    final long[] pointers, final int op, final long token,
                                                    final long commitVersion, final DirectBuffer value,
                                                    final int valueLength) {
        return LotusTxn.settlePromoted(runtime, copies, pointers, op, token, commitVersion, value, valueLength);
    }

    /** Lotus logs before T_commit (lotus.md §2.4): its records carry version 0 and are decided by the CVT cells. */
    @Override
    public boolean decidedByData() {
        return true;
    }

    /**
     * The entry of a record logged before T_commit carries {@code versionAfter(0, readVersion)}, the read version + 1;
     * the write-back installs {@code versionAfter(T_commit, readVersion)}: the larger of the two.
     */
    @Override
    public long token(final long entryToken, final long version) {
        return Math.max(entryToken, version);
    }

    /** A cell of this commit made visible on some copy ({@link LotusTxn#committedVersion}). */
    @Override
    public io.vertx.core.Future<Long> committedVersion(final io.scythe.txn.TxnRuntime runtime,
                                                      final io.scythe.txn.Catalog.Partition partition,
                                                      final long[] pointers, final int op, final long entryToken) {
        return LotusTxn.committedVersion(runtime, partition, pointers,
            (op & io.scythe.txn.recovery.RedoRecordDescriptor.OP_INSERTED) != 0, entryToken);
    }

    /** Its INVISIBLE cells cleared on every copy ({@link LotusTxn#undoCells}). */
    @Override
    public io.vertx.core.Future<Void> undo(final io.scythe.txn.TxnRuntime runtime,
                                           final io.scythe.txn.Catalog.Partition partition, final long[] pointers) {
        return LotusTxn.undoCells(runtime, partition, pointers);
    }
}
