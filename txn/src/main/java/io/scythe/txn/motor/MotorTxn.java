package io.scythe.txn.motor;

import io.scythe.storage.ObjectLayout;
import io.scythe.txn.AbortException;
import io.scythe.txn.AbortReason;
import io.scythe.txn.Access;
import io.scythe.txn.Stage;
import io.scythe.txn.TxnRuntime;
import io.scythe.txn.ford.CasLock;
import io.scythe.txn.ford.CasLockTxn;
import io.scythe.txn.lotus.Cvt;
import io.scythe.txn.onesided.Replicas;
import io.scythe.txn.onesided.WriteSet;
import io.vertx.core.Future;
import org.agrona.concurrent.UnsafeBuffer;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * One attempt of Motor (package doc): FORD's one-sided CAS locks on the memory nodes, and a CVT of N full-record
 * versions per object ({@link MotorCvt}).
 * <ol>
 *   <li>T_start from the TSO, asked for with the first READ (it does not depend on it).</li>
 *   <li>A read: one READ of header, home and CVT; a locked object or a version at or above T_start aborts.</li>
 *   <li>A read-for-update: CAS lock + the same READ in one doorbell; the same checks.</li>
 *   <li>Commit: keys written but not locked are locked (CAS + READ, version unchanged); T_commit from the TSO once
 *       every lock is held; the keys only read are validated (version unchanged, lock free: SR); the new version is
 *       written to the victim cell (record, then cell) of every copy, backups in doorbells of their own and the
 *       primary's before its unlock in the write-back doorbell, which also installs the home and its version.</li>
 *   <li>A commit that writes nothing takes T_start as its timestamp and validates the keys only read; the keys it
 *       locked for update, if any, are then freed as FORD's commit frees them: WRITE 0 in one write-back doorbell per
 *       memory node, no record, no version (issue 19: kept held before).</li>
 * </ol>
 * A transaction declared read-only reads at T_start (home, or an older cell's record) without locks or validation.
 */
final class MotorTxn extends CasLockTxn {
    private final int versions;
    /**
     * Snapshot isolation (Motor's SI; {@code motor-si}): every read is at T_start from the CVT, as a read-only
     * transaction's, and nothing read is validated; a written key's CAS lock finds its version unchanged since that
     * read or aborts (first committer wins).
     */
    private final boolean si;
    private Future<Long> start;
    private boolean readOnly;

    MotorTxn(final TxnRuntime runtime, final int versions, final boolean snapshotIsolation) {
        super(runtime);
        this.versions = versions;
        this.si = snapshotIsolation;
    }

    /** Its redo records name Motor's lock kind: recovery writes the CVT cell with the home (package doc). */
    @Override
    protected io.scythe.txn.spi.LockKind lockKind() {
        return MotorLockKind.INSTANCE;
    }

    @Override
    public String mode() {
        return si ? "motor/si" : "motor";
    }

    @Override
    public void declareReadOnly() {
        readOnly = true;
    }

    private Future<Long> start() {
        if (start == null) {
            start = runtime.tso().next();
        }
        return start;
    }

    private int maxValue(final Access a) {
        return a.partition.descriptor().schema().maxValueBytes();
    }

    /** Also grows {@code a}'s image to hold what it READs (an image covers header and value only). */
    @Override
    protected int lockReadBytes(final Access a) {
        final int bytes = MotorCvt.readBytes(maxValue(a), versions);
        if (a.image.capacity() < bytes) {
            final UnsafeBuffer image = new UnsafeBuffer(new byte[bytes]);
            image.putBytes(0, a.image, 0, a.image.capacity());
            a.image = image;
        }
        return bytes;
    }

    private static AbortException refused(final Access a, final AbortReason reason, final String why) {
        return new AbortException(reason, "motor read of key " + a.key + " of " + a.table + ": " + why);
    }

    @Override
    public Future<UnsafeBuffer> read(final String table, final long key) {
        if (readOnlyTable(table)) {
            return readOnlyRead(table, key);
        }
        final Future<Long> ts = start();
        if (readOnly || si) { // SI: a read-write transaction's reads are at T_start too, never validated
            return readVia(table, key, a -> once(a, x -> ts.compose(t -> snapshot(x, t))));
        }
        return readVia(table, key, a -> once(a, x -> Future.all(ts, fetch(x)).compose(v -> newest(x, ts.result()))));
    }

    @Override
    public Future<UnsafeBuffer> readForUpdate(final String table, final long key) {
        if (readOnlyTable(table)) {
            return readOnlyRead(table, key);
        }
        final Future<Long> ts = start();
        if (readOnly) {
            return readVia(table, key, a -> once(a, x -> ts.compose(t -> snapshot(x, t)))); // its writes are refused
        }
        return readVia(table, key, a -> (a.locked ? Future.succeededFuture(a) : lockAndRead(a))
            .compose(x -> ts.compose(t -> newest(x, t))));
    }

    /** One READ of header, home value and CVT into the image, checked to be the key's object. */
    private Future<Access> fetch(final Access a) {
        // One promise, checked in the READ's callback (was channel.compose(read).compose(checkedImage)).
        return reads.readImage(a, lockReadBytes(a), null);
    }

    /**
     * A read-write transaction's read: the home, the newest version, below T_start and not locked by another. Under SI
     * only for a read-for-update, whose lock is held: the home below T_start is then the snapshot's version (every
     * commit below T_start landed: its writer held the lock while taking T_commit), and one at or above it is a
     * concurrent writer's that committed first.
     */
    private Future<Access> newest(final Access a, final long ts) {
        if (!a.locked && a.image.getLong(ObjectLayout.CAS_LOCK_OFFSET) != 0) {
            return Future.failedFuture(refused(a, AbortReason.LOCKED, "locked by a writer"));
        }
        if (a.readVersion >= ts) {
            return Future.failedFuture(refused(a, AbortReason.VALIDATION, "version " + a.readVersion
                + " not below T_start " + ts));
        }
        return Future.succeededFuture(a);
    }

    /** A read-only transaction's read at T_start: the home when older, else the newest cell below T_start. */
    private Future<Access> snapshot(final Access a, final long ts) {
        return fetch(a).compose(x -> {
            final int max = maxValue(a);
            final MotorCvt.Read r = MotorCvt.read(a.image, max, versions, a.key, a.readVersion, ts);
            switch (r.choice()) {
                case HOME:
                    return Future.succeededFuture(a);
                case LOCKED:
                    return Future.failedFuture(refused(a, AbortReason.LOCKED, "locked by a writer (its T_commit may "
                        + "be below T_start " + ts + ")"));
                case TORN:
                    return Future.failedFuture(refused(a, AbortReason.VALIDATION, "a CVT cell is being rewritten"));
                case TOO_OLD:
                    return Future.failedFuture(refused(a, AbortReason.VALIDATION, "no version below T_start " + ts
                        + " is kept"));
                default:
                    break;
            }
            final int at = MotorCvt.at(max);
            final int cell = r.cell();
            final int record = (int) Cvt.address(a.image, at, cell);
            final int bytes = Cvt.recordBytes(max);
            final UnsafeBuffer buffer = new UnsafeBuffer(new byte[bytes]);
            return channel(a).compose(ch -> ch.read(a.address() + record, a.rkey(), buffer, 0, bytes)).compose(v -> {
                final int length = Cvt.length(a.image, at, cell);
                if (length < 0 || length > max || !Cvt.getRecord(buffer, 0, bytes, Cvt.cv(a.image, at, cell), length,
                    a.image, ObjectLayout.VALUE_OFFSET)) {
                    return Future.failedFuture(refused(a, AbortReason.VALIDATION, "its record was rewritten under "
                        + "the read (check values differ)"));
                }
                a.valueLength = length;
                a.deleted = Cvt.deleted(a.image, at, cell);
                a.readAbsent = a.deleted;
                a.readVersion = Cvt.version(a.image, at, cell);
                return Future.succeededFuture(a);
            });
        });
    }

    @Override
    public Future<Long> commit() {
        mark(Stage.EXECUTE);
        if (readOnly) {
            if (!writesNothing()) {
                return Future.failedFuture(new IllegalStateException("motor: a transaction declared read-only wrote"));
            }
            // Every read was at T_start: nothing to validate. A key found missing from the index was missing at
            // T_start too: a committed one-sided delete leaves a tombstone the memory node never reclaims (Table#
            // reclaimObject keeps what it did not delete itself), which a later reader takes to the CVT; only an
            // abandoned insert, never committed, is reclaimed (review, stop 39: checked, no reclaimed tombstone).
            return finishCommit(start());
        }
        if (sawDuplicate()) {
            return duplicateCommit(this::validateCasLocked);
        }
        if (writesNothing()) {
            final Future<Long> validated = si ? start()
                : staged(Stage.VALIDATE, validateCasLocked()).compose(v -> start());
            if (!holdsLock()) {
                return finishCommit(validated);
            }
            // SI: it read a snapshot and validates nothing (validateCasLocked's checks are SR's). Locked for update and
            // wrote nothing (TATP's UpdateSubscriberData of a missing facility): its locks are
            // released as FORD's commit releases them, WRITE 0 in the write-back doorbell; no record, no version
            // (was: committed with them held, issue 19: 2 left on TATP read-update at 3 CNs, 96 at 9).
            return finishCommit(validated.compose(ts -> staged(Stage.WRITE_BACK, writeBackAndUnlock(ts)).map(ts)));
        }
        final List<Future<Void>> locking = new ArrayList<>();
        locking.add(installInserts(id));
        for (int i = 0; i < accesses.size(); i++) {
            final Access a = accesses.get(i);
            if (a.dirty && !a.locked) {
                locking.add(lockAndRead(a).mapEmpty());
            }
        }
        // Lock (a duplicate insert's validation too), T_commit once every lock is held, validate, write the versions
        // back at T_commit, each stage marked: one object per commit (OneSidedTxn#commitChainLockedFirst).
        return commitChainLockedFirst(settle(locking));
    }

    /**
     * SR: the keys only read, version unchanged and lock free, and the keys read as absent ({@link
     * #validateCasLocked}). SI: nothing; its reads were at T_start, and each written key was checked unchanged since
     * then by its CAS lock + READ ({@code lockAndRead}: first committer wins). A key read as absent and inserted is
     * refused by the INSERT if another inserted it meanwhile.
     */
    @Override
    protected Future<Void> commitValidation() {
        return si ? Future.succeededFuture() : validateCasLocked();
    }

    /** T_commit, from the TSO once every lock is held. */
    @Override
    protected Future<Long> commitTimestamp() {
        return runtime.tso().next();
    }

    /** The write-back installs the new versions in the CVTs too ({@link #writeVersions}). */
    @Override
    protected Future<Void> commitWriteBack(final long version) {
        return writeVersions(version);
    }

    private boolean holdsLock() {
        for (int i = 0; i < accesses.size(); i++) {
            if (accesses.get(i).locked) {
                return true;
            }
        }
        return false;
    }

    /**
     * Writes the new version of every written key into its CVT on every copy: per copy the record, then the cell (a
     * reader overlapping them finds the check values differ). The backups' go in the write-back's backup batches
     * ({@link WriteSet#backupWrites}), the primary's in its write-back batch before the home, its version and the
     * unlock: so, as the home values, after the redo record (when logged) and past the configuration check, and every
     * backup complete before any primary is released (was: posted on their own before the write-back, so a write-back
     * refused by a reconfiguration left backup cells at a T_commit that never committed, and a primary could be
     * unlocked, re-locked and its backup cell rewritten before the first commit's backup write landed: review).
     */
    private Future<Void> writeVersions(final long ts) {
        final Map<Access, MotorCvt.Writes> versionOf = new java.util.IdentityHashMap<>();
        final List<Access> written = writes.written();
        return Replicas.locateAll(runtime, written).compose(v -> {
            for (final Access a : written) {
                versionOf.put(a, versionWrite(a, ts));
            }
            writes.backupWrites((batch, a, backup) -> {
                final MotorCvt.Writes w = versionOf.get(a);
                if (w != null) {
                    w.add(batch, ObjectLayout.addressOf(a.backupPointers[backup]),
                        a.partition.backups().get(backup).descriptor().objects().rkey());
                }
            });
            return writeBack(ts, x -> x.locked, (batch, a) -> {
                final MotorCvt.Writes w = versionOf.get(a);
                if (w != null) {
                    w.add(batch, a.address(), a.rkey());
                }
                batch.write(CasLock.lockAddress(a.pointer), a.rkey(), FREE, 0, 8);
            });
        });
    }

    /**
     * What writing {@code a}'s new version at {@code ts} adds to a doorbell of any of its copies (the same bytes at the
     * same offsets on each): the record and the cell of the victim, or the whole CVT and the records it names.
     */
    private MotorCvt.Writes versionWrite(final Access a, final long ts) {
        final int max = maxValue(a);
        org.agrona.DirectBuffer value = a.newValue;
        int length = a.deleting ? 0 : a.newLength;
        if (a.inserted && !a.dirty && value == null) { // its value went with the INSERT (set here only with backups)
            final UnsafeBuffer own = inserts.ownValue(a.table, a.key);
            if (own == null) {
                throw new IllegalStateException("motor: no value of inserted key " + a.key + " of " + a.table);
            }
            value = own;
            length = own.capacity();
        }
        final int victim = a.inserted ? Cvt.NONE : MotorCvt.victim(a.image, max, versions, a.key);
        if (victim != Cvt.NONE) {
            return MotorCvt.intoVictim(a.image, max, versions, victim, a.deleting, value, length, ts);
        }
        // The version it replaces becomes cell 0, unless inserted
        return MotorCvt.whole(max, versions, a.key,
            a.partition.descriptor().schema().id() % io.scythe.storage.BackupTables.ID_STRIDE,
            a.inserted ? null : a.image, a.deleted, a.valueLength, a.readVersion, a.deleting, value, length, ts);
    }
}
