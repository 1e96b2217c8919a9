package io.scythe.txn.motor;

import io.scythe.bridge.Doorbell;
import io.scythe.storage.ObjectLayout;
import io.scythe.txn.Catalog;
import io.scythe.txn.Refusal;
import io.scythe.txn.TxnRuntime;
import io.scythe.txn.ford.CasLockKind;
import io.scythe.txn.lotus.Cvt;
import io.scythe.txn.recovery.CnRecovery;
import io.scythe.txn.recovery.RedoRecordDescriptor;
import io.scythe.txn.spi.LockKind;
import io.vertx.core.Future;
import org.agrona.DirectBuffer;
import org.agrona.concurrent.UnsafeBuffer;

import java.util.ArrayList;
import java.util.List;

/**
 * Motor's lock as its redo records and recovery see it: FORD's CAS word ({@link CasLockKind}: held while the word is
 * the owner's transaction id, released with a CAS to 0), whose roll-forward also writes the CVT as the commit would
 * have ({@link #finishPrimary}): a dead node's decided commit (recovery) and a live one whose write-back was refused
 * past its reposts ({@code RedoStep#finishFromRecord}) both end with the new version in a cell of every copy, before
 * the primary's release, so a read-only reader below a later version still finds it.
 */
public final class MotorLockKind implements LockKind {
    /** The redo record's lock kind word of Motor's commits: the token is the owner's transaction id. */
    public static final int ID = 8;
    public static final MotorLockKind INSTANCE = new MotorLockKind();
    private static final LockKind CAS = CasLockKind.INSTANCE;

    private MotorLockKind() {
    }

    @Override
    public int id() {
        return ID;
    }

    @Override
    public String name() {
        return "motor-cas-word";
    }

    @Override
    public boolean free(final DirectBuffer header) {
        return CAS.free(header);
    }

    @Override
    public boolean heldBy(final DirectBuffer header, final long token) {
        return CAS.heldBy(header, token);
    }

    @Override
    public void release(final Doorbell batch, final long address, final int rkey, final long token) {
        CAS.release(batch, address, rkey, token);
    }

    @Override
    public boolean finishesPrimary() {
        return true;
    }

    @Override
    public Future<Void> finishPrimary(final TxnRuntime runtime, final Catalog.Partition partition, final long pointer,
                                      final int op, final long token, final long installedVersion,
                                      final DirectBuffer value, final int valueLength) {
        return Future.failedFuture(new UnsupportedOperationException(name() + " is finished with its commit version"));
    }

    /**
     * Finishes one entry on the primary whose CAS word {@code token} still holds (its header just READ, its backups'
     * homes written): READs header, home and CVT; writes the new version at {@code commitVersion} into the CVT of every
     * serving backup (one doorbell each, all completed), then the primary's doorbell: home, flags and version (the
     * shared writes), the same CVT writes, the release last. As the commit would have: the victim cell
     * ({@link MotorCvt#victim}) with the next check value, its record the new value (a delete: an empty deleted one).
     * Exactly once: a CVT already holding a cell at {@code commitVersion} (the dead commit's doorbell landed there
     * before its release did) gets nothing, and the lock still held says no later commit wrote since. Two cases this
     * cannot write as the commit would, since a redo record names no key (package doc): a CVT never written (the
     * commit would have written it whole, with the key) is left so (the home is then its only version, as for an
     * object loaded and never written); an insert's CVT is marked not written (another key's may be in a reused slot).
     */
    @Override
    public Future<Void> finishPrimary(final TxnRuntime runtime, final Catalog.Partition partition, final long pointer,
                                      final int op, final long token, final long installedVersion,
                                      final long commitVersion, final DirectBuffer value, final int valueLength,
                                      final long[] backupPointers) {
        final String node = partition.node();
        final int max = partition.descriptor().schema().maxValueBytes();
        final long address = ObjectLayout.addressOf(pointer);
        final int rkey = partition.descriptor().objects().rkey();
        final UnsafeBuffer head = new UnsafeBuffer(new byte[MotorCvt.at(max) + Cvt.HEADER_BYTES]);
        return runtime.channel(node).compose(ch -> ch.read(address, rkey, head, 0, head.capacity())
            .compose(v -> versionWrites(ch, address, rkey, head, max, op, commitVersion, value, valueLength))
            .compose(writes -> backups(runtime, partition.backups(), backupPointers, writes).compose(v -> {
                final Doorbell batch = ch.doorbell();
                CnRecovery.addEntryWrites(batch, address, rkey, op, false, installedVersion, value, valueLength);
                writes.add(batch, address, rkey);
                release(batch, address, rkey, token);
                return batch.post().<Void>mapEmpty();
            }))
            .onFailure(e -> {
                if (!Refusal.forNow(e)) {
                    runtime.forgetChannel(node, ch);
                }
            }));
    }

    /**
     * The CVT writes of the entry (none for a lock only), from the primary's image under the lock: {@code head} holds
     * header, home and the CVT's header; a written CVT is READ whole.
     */
    private static Future<MotorCvt.Writes> versionWrites(final io.scythe.bridge.RdmaChannel ch, final long address,
                                                         final int rkey, final UnsafeBuffer head, final int max,
                                                         final int op, final long commitVersion,
                                                         final DirectBuffer value, final int valueLength) {
        final int at = MotorCvt.at(max);
        if (op == 0 || !Cvt.written(head, at)) {
            return Future.succeededFuture(new MotorCvt.Writes());
        }
        if ((op & RedoRecordDescriptor.OP_INSERTED) != 0) {
            return Future.succeededFuture(MotorCvt.unwritten(max)); // maybe a former tenant's: no key to write ours
        }
        final int n = Cvt.versions(head, at);
        final UnsafeBuffer image = new UnsafeBuffer(new byte[MotorCvt.readBytes(max, n)]);
        return ch.read(address, rkey, image, 0, image.capacity()).map(v -> {
            if (MotorCvt.holds(image, max, n, commitVersion)) {
                return new MotorCvt.Writes(); // its doorbell wrote the cell (and the backups' before it)
            }
            return intoVictim(image, max, n, op, commitVersion, value, valueLength);
        });
    }

    /**
     * The writes of the entry's new version into the victim cell of the written CVT in {@code image} (header, home and
     * CVT of a copy, nothing else writing it): a delete an empty deleted record, flags only (a revival) the home's
     * value, else {@code value}.
     */
    private static MotorCvt.Writes intoVictim(final DirectBuffer image, final int max, final int n, final int op,
                                              final long commitVersion, final DirectBuffer value,
                                              final int valueLength) {
        final boolean deleted = (op & RedoRecordDescriptor.OP_DELETE) != 0;
        DirectBuffer newValue = value;
        int length = valueLength;
        if ((op & RedoRecordDescriptor.OP_VALUE) == 0 && !deleted) { // flags only (a revival): the home's value
            length = image.getInt(ObjectLayout.VALUE_LENGTH_OFFSET);
            newValue = new UnsafeBuffer(image, ObjectLayout.VALUE_OFFSET, length);
        }
        // A written CVT of a live object that was not inserted is its key's (an insert's is written whole or marked
        // not written), so its victim is the commit's.
        return MotorCvt.intoVictim(image, max, n, Cvt.victim(image, MotorCvt.at(max)), deleted, newValue, length,
            commitVersion);
    }

    /**
     * Settles the CVT of one copy of an object whose primary failed over (after the shared settling wrote its home):
     * READs its header, home and CVT; a written CVT whose newest cell is below {@code commitVersion} misses the
     * commit's cell, which goes into its victim as the write-back would have put it (an insert's CVT is marked not
     * written, as {@link #finishPrimary} does). Not the home's version: a copy's backup doorbell (home, then record and
     * cell) may have been cut after its home. Newest, not {@link MotorCvt#holds}: once the old primary released the
     * commit's lock every copy had its cell, and a later commit may since have overwritten that cell with a newer
     * version; before the release nobody else wrote the copies, so a newest cell below {@code commitVersion} means
     * the commit's never landed (later commits' T_commit are larger: taken under the lock after its release). Every
     * copy was identical before the commit, so each picks the same victim and check value. A CVT never written is
     * left so (the package doc's deviation: the home is then its one version). Exactly once: settling again finds the
     * cell.
     */
    @Override
    public Future<Void> settleCopy(final TxnRuntime runtime, final Catalog.Replica copy, final long pointer,
                                   final int op, final long commitVersion, final DirectBuffer value,
                                   final int valueLength) {
        if (op == 0) {
            return Future.succeededFuture();
        }
        final int max = copy.descriptor().schema().maxValueBytes();
        final int at = MotorCvt.at(max);
        final long address = ObjectLayout.addressOf(pointer);
        final int rkey = copy.descriptor().objects().rkey();
        final UnsafeBuffer head = new UnsafeBuffer(new byte[at + Cvt.HEADER_BYTES]);
        return runtime.channel(copy.node()).compose(ch -> ch.read(address, rkey, head, 0, head.capacity())
            .compose(v -> {
                if (!Cvt.written(head, at)) {
                    return Future.<Void>succeededFuture();
                }
                final int n = Cvt.versions(head, at);
                final UnsafeBuffer image = new UnsafeBuffer(new byte[MotorCvt.readBytes(max, n)]);
                return ch.read(address, rkey, image, 0, image.capacity()).compose(r -> {
                    final int newest = Cvt.newest(image, at);
                    if (newest != Cvt.NONE && Cvt.version(image, at, newest) >= commitVersion) {
                        return Future.<Void>succeededFuture(); // landed (or a later commit's, after its release)
                    }
                    final MotorCvt.Writes writes = (op & RedoRecordDescriptor.OP_INSERTED) != 0
                        ? MotorCvt.unwritten(max) : intoVictim(image, max, n, op, commitVersion, value, valueLength);
                    final Doorbell batch = ch.doorbell();
                    writes.add(batch, address, rkey);
                    return batch.post().<Void>mapEmpty();
                });
            }).onFailure(e -> {
                if (!Refusal.forNow(e)) {
                    runtime.forgetChannel(copy.node(), ch);
                }
            }));
    }

    /** {@code writes} on every serving backup, one doorbell each, all completed (a real failure before a refusal). */
    private static Future<Void> backups(final TxnRuntime runtime, final List<Catalog.Replica> backups,
                                        final long[] pointers, final MotorCvt.Writes writes) {
        final List<Future<Void>> posted = new ArrayList<>();
        for (int b = 0; !writes.isEmpty() && pointers != null && b < pointers.length; b++) {
            if (pointers[b] == 0) {
                continue; // a copy that did not serve when the record was written
            }
            final Catalog.Replica backup = backups.get(b);
            final long address = ObjectLayout.addressOf(pointers[b]);
            final int rkey = backup.descriptor().objects().rkey();
            posted.add(runtime.channel(backup.node()).compose(ch -> {
                final Doorbell batch = ch.doorbell();
                writes.add(batch, address, rkey);
                return batch.post().<Void>mapEmpty().onFailure(e -> {
                    if (!Refusal.forNow(e)) {
                        runtime.forgetChannel(backup.node(), ch);
                    }
                });
            }));
        }
        return io.scythe.txn.onesided.Reposts.settle(posted);
    }
}
