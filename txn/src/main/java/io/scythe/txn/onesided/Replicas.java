package io.scythe.txn.onesided;

import io.scythe.txn.Access;
import io.scythe.txn.Catalog;
import io.scythe.txn.TxnRuntime;
import io.vertx.core.Future;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The backup copies of what one attempt writes, with replication ({@link Catalog}'s placement: k backups per
 * partition): where each written object is on its backups, and the write-back to them. Protocols do not see it: the
 * write set, the redo step and the inserts call it, for every protocol alike.
 *
 * <p><b>Write order</b> of a replicated commit, and why:
 * <ol>
 *   <li>Everything before the commit point goes to the primary only: reads, locks, Takeout tickets, index lookups,
 *       inserts' INSERT RPCs (each object is located on its backups meanwhile; a new key gets a deleted placeholder
 *       there, which reads as absent).</li>
 *   <li>The redo record, with every entry's backup pointers, to the log region on the memory node of the first
 *       written object and on each of that partition's backups, in parallel ({@code recovery.RedoLog}). The commit is
 *       decided when every copy is durable (RCC and Lotus: the log to all replicas before the commit point).</li>
 *   <li>The write-back to every backup (values, lengths, flags, versions; no lock word: backups have none), one
 *       doorbell per backup memory node, all completed</li>
 *   <li>then the write-back to the primaries with the releases last, as without replication (FORD: the backups
 *       written before the primary's unlock; Aurogon: backups before the primary).</li>
 * </ol>
 * So a backup never holds what recovery would not roll forward (nothing reaches it before the record is durable
 * everywhere), and once a primary is released every backup has its new value: a reader that saw it released and
 * depends on it finds it on any copy that is promoted. Recovery needs nothing more than the primary's lock: while an
 * entry's lock is still held by the record's token its backups may be part written, and recovery (or the committer
 * finishing a refused write-back) writes the backups, then the primary and its release, again
 * ({@code recovery.CnRecovery#finishEntry}); once the lock is released every copy was written.
 */
public final class Replicas {
    private Replicas() {
    }

    /** Whether any of {@code accesses} is of a partition with backups. */
    public static boolean any(final List<Access> accesses) {
        for (final Access a : accesses) {
            if (!a.partition.backups().isEmpty()) {
                return true;
            }
        }
        return false;
    }

    /**
     * Where {@code key} of {@code partition} is on each of its backups (in backup order): from the loop's caches, else
     * looked up (by the loop's lookup mode), else located by a LOCATE RPC that creates a deleted placeholder there.
     */
    public static Future<long[]> locate(final TxnRuntime runtime, final Catalog.Partition partition, final long key) {
        final List<Catalog.Replica> backups = partition.backups();
        final long[] pointers = new long[backups.size()];
        final List<Future<Long>> located = new ArrayList<>(backups.size());
        for (int b = 0; b < backups.size(); b++) {
            final int backup = b;
            located.add(runtime.remote(backups.get(b)).locateBackup(key, runtime.lookupMode()).map(pointer -> {
                pointers[backup] = pointer;
                return pointer;
            }));
        }
        return Reposts.settle(located).map(pointers);
    }

    /**
     * Starts locating {@code a} on its backups, unless that is done or under way: called when the attempt first
     * buffers a write of it, so that the lookups (one per backup, then cached for good) overlap the rest of the
     * attempt instead of delaying its redo record.
     */
    public static void prefetch(final TxnRuntime runtime, final Access a) {
        if (a.partition.backups().isEmpty() || a.backupsLocated != null && !a.backupsLocated.failed()) {
            return;
        }
        a.backupsLocated = locate(runtime, a.partition, a.key).map(pointers -> {
            a.backupPointers = pointers;
            return null;
        });
    }

    /** Completes when every access of {@code written} is located on its backups. */
    public static Future<Void> locateAll(final TxnRuntime runtime, final List<Access> written) {
        final List<Future<Void>> located = new ArrayList<>(written.size());
        for (final Access a : written) {
            prefetch(runtime, a);
            if (a.backupsLocated != null) {
                located.add(a.backupsLocated);
            }
        }
        return Reposts.settle(located);
    }

    /**
     * {@link #writeBack(TxnRuntime, List, List)} for a protocol that does not finish a commit on the serving copies
     * after a failover (RCC: a failed batch leaves its commit in doubt, for recovery), so the failed nodes are not kept.
     */
    public static Future<Void> writeBack(final TxnRuntime runtime, final List<Access> written) {
        return writeBack(runtime, written, new ArrayList<>(0), null);
    }

    /**
     * Writes {@code written} (each already {@code installedVersion}ed) to every backup: per backup memory node one
     * doorbell of what the primary's write-back writes, without any lock word; posted again while refused for now.
     * Completes when every batch completed: only then may the primaries' releases be posted (see the class comment).
     * A node whose batch failed after it was posted is added to {@code failedOn} ({@link WriteSet#failedOn}).
     * {@code extra} (may be null) adds a protocol's own writes of each copy after its home writes.
     */
    public static Future<Void> writeBack(final TxnRuntime runtime, final List<Access> written,
                                         final List<String> failedOn, final WriteSet.BackupVerb extra) {
        return writeBack(runtime, written, failedOn, extra, true);
    }

    /**
     * {@link #writeBack(TxnRuntime, List, List, WriteSet.BackupVerb)}; without {@code homes} only inserted objects'
     * homes are written ({@link WriteSet#writeNoHomes}), the others' copies getting {@code extra}'s verbs only.
     */
    public static Future<Void> writeBack(final TxnRuntime runtime, final List<Access> written,
                                         final List<String> failedOn, final WriteSet.BackupVerb extra,
                                         final boolean homes) {
        final Map<String, List<Copy>> byNode = new LinkedHashMap<>();
        for (final Access a : written) {
            final List<Catalog.Replica> backups = a.partition.backups();
            for (int b = 0; b < backups.size(); b++) {
                byNode.computeIfAbsent(backups.get(b).node(), n -> new ArrayList<>())
                    .add(new Copy(a, b, a.backupPointers[b], backups.get(b).descriptor().objects().rkey()));
            }
        }
        return WriteSet.postPerNode(runtime, byNode, failedOn, (batch, c) -> {
            if (homes || c.access.inserted || c.access.placeholderHome) {
                WriteSet.addWrites(batch, c.access, io.scythe.storage.ObjectLayout.addressOf(c.pointer), c.rkey,
                    true);
            }
            if (extra != null) {
                extra.add(batch, c.access, c.backup);
            }
        });
    }

    /** One written object's copy on its {@code backup}-th backup. */
    private record Copy(Access access, int backup, long pointer, int rkey) {
    }
}
