package io.scythe.txn.spi;

import io.scythe.bridge.Doorbell;
import org.agrona.DirectBuffer;

/**
 * A kind of lock a protocol keeps in an object's header, as the shared one-sided parts and recovery need to know it:
 * whether an object is free of it, whether a redo record's token still holds it, and how recovery releases it. Its
 * {@link #id()} is the lock kind word of the redo records written under it ({@code RedoRecordDescriptor}); ids are
 * unique in the {@link ProtocolRegistry}.
 */
public interface LockKind {
    /** The redo record's lock kind word (1 and up; 0 means nothing logged). */
    int id();

    /** A short name for errors and reports, e.g. {@code takeout-ticket}. */
    String name();

    /** Whether the object whose {@code header} was just READ is neither locked nor queued on by this kind of lock. */
    boolean free(DirectBuffer header);

    /** Whether the object whose {@code header} was just READ is still locked under {@code token} (a redo entry's). */
    boolean heldBy(DirectBuffer header, long token);

    /** Adds to {@code batch} the verb that releases the lock {@code token} holds on the object at {@code address}. */
    void release(Doorbell batch, long address, int rkey, long token);

    /**
     * Whether recovery finishes an entry on its primary through {@link #finishPrimary} (a protocol whose commit writes
     * more than value, length, flags and version, e.g. RCC's MVCC, which moves the newest version to an older slot
     * first, and SUNDIAL, which sets rts) instead of the shared WRITEs and {@link #release} in one doorbell. Default:
     * no.
     */
    default boolean finishesPrimary() {
        return false;
    }

    /**
     * Finishes entry ({@code op}, a {@code RedoRecordDescriptor} op) of a complete redo record on its primary, the
     * object at {@code pointer} of {@code partition}, whose lock {@code token} still holds (its header just READ) and
     * whose backups were written: installs {@code installedVersion} (and {@code value}, {@code valueLength} bytes) as
     * the protocol's own commit would and releases the lock. Called only when {@link #finishesPrimary}.
     */
    default io.vertx.core.Future<Void> finishPrimary(final io.scythe.txn.TxnRuntime runtime,
                                                     final io.scythe.txn.Catalog.Partition partition,
                                                     final long pointer, final int op, final long token,
                                                     final long installedVersion,
                                                     final org.agrona.DirectBuffer value, final int valueLength) {
        return io.vertx.core.Future.failedFuture(new UnsupportedOperationException(name()
            + " finishes its entries with the shared writes"));
    }

    /**
     * {@link #finishPrimary(io.scythe.txn.TxnRuntime, io.scythe.txn.Catalog.Partition, long, int, long, long,
     * DirectBuffer, int)} also told the record's commit version {@code commitVersion} and where the object is on its
     * serving backups ({@code backupPointers}, in the order of {@code partition}'s backups, 0 for a copy that did not
     * serve; their shared writes completed): for a protocol whose commit writes versions beside the header on every
     * copy before the primary's release (Motor's CVT cells). What recovery and the live finishing call; by default
     * the shorter form.
     */
    default io.vertx.core.Future<Void> finishPrimary(final io.scythe.txn.TxnRuntime runtime,
                                                     final io.scythe.txn.Catalog.Partition partition,
                                                     final long pointer, final int op, final long token,
                                                     final long installedVersion, final long commitVersion,
                                                     final org.agrona.DirectBuffer value, final int valueLength,
                                                     final long[] backupPointers) {
        return finishPrimary(runtime, partition, pointer, op, token, installedVersion, value, valueLength);
    }

    /**
     * Settles what this kind keeps beside the header on one copy of an object whose primary failed over ({@code
     * CnRecovery}'s settling of a promoted copy: FaRM's blocked region), for entry {@code op} of a decided commit at
     * {@code commitVersion} ({@code value}, {@code valueLength} bytes): called once the shared settling of that copy's
     * home completed, while the partition is blocked and the committer fenced (nothing else writes the copy). Must be
     * idempotent: settling again finds it done. Nothing by default (the home is all a kind keeps).
     */
    default io.vertx.core.Future<Void> settleCopy(final io.scythe.txn.TxnRuntime runtime,
                                                  final io.scythe.txn.Catalog.Replica copy, final long pointer,
                                                  final int op, final long commitVersion,
                                                  final org.agrona.DirectBuffer value, final int valueLength) {
        return io.vertx.core.Future.succeededFuture();
    }

    /**
     * Whether this kind settles the copies of an object whose primary failed over itself ({@link #settlePromoted}),
     * in place of {@code CnRecovery}'s shared settling (each copy's home value, flags and version, then
     * {@link #settleCopy}), for every record whose primary is no longer the copy it was written under. Default: no.
     * Lotus: its commits write only a home's version word (the value lives in the CVT beside it), so the shared
     * settling's home value made the settled copies differ from those its write-back had reached; and its locks live
     * on compute nodes, so versions decide on every copy, whichever term the record was written in.
     */
    default boolean settlesPromoted() {
        return false;
    }

    /**
     * Settles entry {@code op} of a decided commit at {@code commitVersion} (write-back token {@code token}) on each
     * serving copy of an object whose primary failed over ({@code copies}, primary first; {@code pointers} aligned,
     * 0: a copy that did not serve when the record was written), while the dead node's locks keep everyone else off
     * it: what the write-back would have written, on each copy it did not reach. Idempotent. Called only when
     * {@link #settlesPromoted}.
     *
     * @return the version installed on some copy, or -1 when every copy had it
     */
    default io.vertx.core.Future<Long> settlePromoted(final io.scythe.txn.TxnRuntime runtime,
                                                     final java.util.List<io.scythe.txn.Catalog.Replica> copies,
                                                     final long[] pointers, final int op, final long token,
                                                     final long commitVersion, final org.agrona.DirectBuffer value,
                                                     final int valueLength) {
        return io.vertx.core.Future.failedFuture(new UnsupportedOperationException(name()
            + " does not settle promoted copies itself"));
    }

    /**
     * Whether recovery calls {@link #recovered} after each entry of a record logged under this kind (a protocol that
     * keeps versions beside the object header, such as Lotus's CVT). Default: no.
     */
    default boolean versionsBesideHeader() {
        return false;
    }

    /**
     * Recovery finished (or found finished) the entry of a complete redo record on the object at {@code pointer} of
     * {@code partition} (its serving backups at {@code backupPointers}), under {@code token}, of the commit at
     * {@code version}, while the dead node's locks still keep everyone else off it: the versions this kind keeps
     * beside the header are made to agree with it. Called only when {@link #versionsBesideHeader}; also for a live
     * commit whose write-back was refused and finished from what it holds ({@code RedoStep}): its locks keep
     * everyone else off the object as the dead node's do, and the refused batch may have carried those versions.
     */
    default io.vertx.core.Future<Void> recovered(final io.scythe.txn.TxnRuntime runtime,
                                                 final io.scythe.txn.Catalog.Partition partition, final long pointer,
                                                 final long[] backupPointers, final long token, final long version) {
        return io.vertx.core.Future.failedFuture(new UnsupportedOperationException(name()
            + " keeps no versions beside the header"));
    }
    /**
     * Whether a record of this kind is written before its commit version exists (commit version 0 in the record, as
     * Lotus logs before T_commit, lotus.md §2.4): recovery then asks the objects it names whether the commit happened
     * ({@link #committedVersion}), rolls it forward at the version found, or undoes what it wrote ({@link #undo}).
     * Default: no (a record is a decided commit, SELCC's version-0 records included).
     */
    default boolean decidedByData() {
        return false;
    }

    /**
     * The lock token recovery checks an entry by, for a record of commit version {@code version} whose entry carries
     * {@code entryToken} (for a kind {@link #decidedByData}, written before the version was known). Default: the
     * entry's token.
     */
    default long token(final long entryToken, final long version) {
        return entryToken;
    }

    /**
     * For a kind {@link #decidedByData}: the commit version of the record whose entry names the object at copies
     * {@code pointers} (primary first; 0 for a copy not known) of {@code partition}, with op word bits {@code op}
     * ({@code RedoRecordDescriptor.OP_*}) and token {@code entryToken}, as the object shows it (a version its commit
     * made visible on some copy), or 0 if no copy shows one.
     */
    default io.vertx.core.Future<Long> committedVersion(final io.scythe.txn.TxnRuntime runtime,
                                                        final io.scythe.txn.Catalog.Partition partition,
                                                        final long[] pointers, final int op, final long entryToken) {
        return io.vertx.core.Future.failedFuture(new UnsupportedOperationException(name()
            + " records are decided by their commit version"));
    }

    /**
     * The earlier of two commit versions found ({@link #committedVersion}: 0, none found): the smaller positive one.
     * A record's entries and an entry's copies each may show the commit; the earliest version shown is its T_commit
     * (later ones are a later writer's, after recovery finished an earlier copy).
     */
    static long earlierFound(final long found, final long other) {
        return other > 0 && (found == 0 || other < found) ? other : found;
    }

    /**
     * For a kind {@link #decidedByData}: undoes on every copy ({@code pointers}, primary first) what a record found
     * not committed ({@link #committedVersion} 0 on every entry) wrote, while the dead node's locks keep everyone
     * else off the object.
     */
    default io.vertx.core.Future<Void> undo(final io.scythe.txn.TxnRuntime runtime,
                                            final io.scythe.txn.Catalog.Partition partition, final long[] pointers) {
        return io.vertx.core.Future.failedFuture(new UnsupportedOperationException(name()
            + " records are decided by their commit version"));
    }
}
