package io.scythe.txn.onesided;

import io.scythe.bridge.Doorbell;
import io.scythe.storage.ObjectLayout;
import io.scythe.txn.Access;
import io.scythe.txn.Catalog;
import io.scythe.txn.TxnRuntime;
import io.vertx.core.Future;
import org.agrona.DirectBuffer;
import org.agrona.concurrent.UnsafeBuffer;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Function;

/**
 * What one attempt will write: new values buffered in its accesses until commit, then written back per memory node
 * with one doorbell each (value, length, flags, version, then the protocol's release, so the release is seen last).
 * With replication every backup copy is written first, the primaries with their releases after ({@link Replicas}
 * says why).
 */
public final class WriteSet {
    private final TxnRuntime runtime;
    private final List<Access> accesses;
    /** Where written accesses' write-back words come from, or null ({@link Access#writeWords}). */
    private final BufferPool pool;
    /**
     * Whether the write-back writes the home values (header and value, on the primaries and backups); a protocol
     * keeping its committed versions elsewhere (Lotus's CVT) turns it off: its release verbs write what it needs.
     */
    private boolean homes = true;
    /** The memory nodes a write-back batch failed on after it was posted (it may still land); see {@link #failedOn}. */
    private final List<String> failedOn = new ArrayList<>(0);
    /** A protocol's own writes to each backup copy, in that copy's write-back batch (none by default). */
    private BackupVerb backupWrites;

    /**
     * Adds a protocol's own writes of {@code a}'s copy on its {@code backup}-th backup to that backup's write-back batch,
     * after the home writes: they land, as the home writes do, after the redo record and before any primary is
     * released (Motor's new CVT cell and record).
     */
    @FunctionalInterface
    public interface BackupVerb {
        void add(Doorbell batch, Access a, int backup);
    }

    /** Adds the verb that releases {@code a}'s lock to a write-back batch. */
    @FunctionalInterface
    public interface ReleaseVerb {
        void add(Doorbell batch, Access a);

        /**
         * Adds what must land before {@code a}'s writes in the same batch (nothing by default): SEL's created objects
         * clear their insert's CAS word before the version word, so that a crash cutting the batch never leaves a
         * committed version beside a CAS word that recovery would take for an unfinished insert.
         */
        default void beforeWrites(final Doorbell batch, final Access a) {
        }
    }

    public WriteSet(final TxnRuntime runtime, final List<Access> accesses) {
        this(runtime, accesses, null);
    }

    /**
     * A write set whose write-back takes each written access's source words ({@link Access#writeWords}) from
     * {@code pool} (null: a buffer per verb), given back with the attempt's other buffers once it committed.
     */
    public WriteSet(final TxnRuntime runtime, final List<Access> accesses, final BufferPool pool) {
        this.runtime = runtime;
        this.accesses = accesses;
        this.pool = pool;
    }

    /** Refuses {@code what} (a write, insert, delete) of a table transactions only read. */
    public static void refuseReadOnly(final String what, final String table, final Catalog.Table t) {
        if (t.partitions().get(0).descriptor().schema().readOnly()) {
            throw new IllegalStateException(what + " of table " + table + ", which is read-only to transactions");
        }
    }

    /** Checks {@code length} against the table's values: a clear error, nothing buffered, when it does not fit. */
    public static void checkLength(final String table, final Catalog.Partition partition, final int length) {
        final int max = partition.descriptor().objectSlotBytes() - ObjectLayout.HEADER_BYTES;
        final boolean fixed = partition.descriptor().schema().fixedSize();
        if (length < 0 || length > max || (fixed && length != partition.descriptor().schema().maxValueBytes())) {
            throw new IllegalArgumentException("value of " + length + " bytes for table " + table + " (values are "
                + (fixed ? "exactly " + partition.descriptor().schema().maxValueBytes()
                : "at most " + partition.descriptor().schema().maxValueBytes()) + " bytes)");
        }
    }

    /** Buffers {@code value} as {@code a}'s new value (checked against its table). */
    public static void setNewValue(final Access a, final DirectBuffer value, final int offset, final int length) {
        setNewValue(a, value, offset, length, null);
    }

    /**
     * {@link #setNewValue(Access, DirectBuffer, int, int)}, a new buffer taken from {@code pool} (null: a new array)
     * and given back to it once the attempt committed ({@link BufferPool#recycle}).
     */
    public static void setNewValue(final Access a, final DirectBuffer value, final int offset, final int length,
                                   final BufferPool pool) {
        checkLength(a.table, a.partition, length);
        final int max = a.slotBytes() - ObjectLayout.HEADER_BYTES;
        if (a.newValue == null || a.newValue.capacity() < length) {
            if (pool == null) {
                a.newValue = new UnsafeBuffer(new byte[max]);
            } else {
                a.newValue = pool.take(max); // zeroed, as a new array
                a.pooledNewValue = a.newValue;
            }
        }
        a.newValue.putBytes(0, value, offset, length);
        a.newLength = length;
        a.dirty = true;
    }

    /** The accesses a commit writes (new values, deletes, revivals, inserts): what its redo record names. */
    public List<Access> written() {
        final List<Access> writes = new ArrayList<>(accesses.size());
        for (int i = 0; i < accesses.size(); i++) {
            final Access a = accesses.get(i);
            if (a.dirty || a.inserted) {
                writes.add(a);
            }
        }
        return writes;
    }

    /**
     * The write-back writes no home values from here but those of inserted objects (whose backups hold a placeholder),
     * only the release verbs (and the backup verbs, {@link #backupWrites}): for a protocol whose committed versions are
     * elsewhere (Lotus's CVT cells), whose release and backup verbs make them visible.
     */
    public void writeNoHomes() {
        homes = false;
    }

    /** Sets what each backup's write-back batch adds of a written object's copy besides its home ({@link BackupVerb}). */
    public void backupWrites(final BackupVerb verb) {
        backupWrites = verb;
    }

    /**
     * Writes every dirty access back with {@code version}, with {@code release} for each access {@code needsRelease}
     * picks; one doorbell per memory node, posted again while refused for now. From here nothing may release these
     * locks again: they are marked releasing and not locked before any batch is posted. {@code written} is
     * {@link #written()}, made once per commit by the caller.
     */
    public Future<Void> writeBack(final long version, final Function<Access, Boolean> needsRelease,
                                  final ReleaseVerb release, final List<Access> written) {
        final Map<String, List<Access>> byNode = byNode(needsRelease);
        // The point of no return: the releases are in these batches, so nothing may release these locks again
        // (a second FAA on upper would hand one lock to two holders). A batch refused before it was posted is
        // finished from the redo record (RedoStep), which releases only what is still held; one that failed
        // after posting may still land, so the loop gives up to recovery. Never aborted or retried.
        for (final List<Access> node : byNode.values()) {
            for (int i = 0; i < node.size(); i++) { // indexed: no iterator on the hot path
                final Access a = node.get(i);
                a.releasing = needsRelease.apply(a);
            }
        }
        for (int i = 0; i < accesses.size(); i++) {
            final Access a = accesses.get(i);
            if (a.releasing) {
                a.locked = false;
            }
            if (a.dirty || a.inserted) {
                // Above the commit's version and the one the lock kept current (ObjectLayout#versionAfter): the same
                // on every copy.
                a.installedVersion = ObjectLayout.versionAfter(version, a.readVersion);
                if (pool != null && a.writeWords == null) {
                    a.writeWords = pool.take(WORDS_BYTES);
                }
            }
        }
        // Without homes (Lotus) but with backup verbs, every written object's backups get those verbs (its visible
        // cells) before any primary's batch is posted, homes written only for inserted objects.
        final List<Access> homesWritten = homes || backupWrites != null ? written : insertedOf(written);
        if (Replicas.any(homesWritten)) {
            // Every backup complete before any primary is released (Replicas).
            return Replicas.writeBack(runtime, homesWritten, failedOn, backupWrites, homes)
                .compose(v -> writeBackPrimaries(byNode, release));
        }
        return writeBackPrimaries(byNode, release);
    }

    /**
     * The memory nodes on which a batch of this commit's write-back failed after it was posted (its verbs may still
     * land there); empty while none did.
     */
    public List<String> failedOn() {
        return failedOn;
    }

    private static List<Access> insertedOf(final List<Access> written) {
        final List<Access> out = new ArrayList<>();
        for (final Access a : written) {
            if (a.inserted || a.placeholderHome) {
                out.add(a);
            }
        }
        return out;
    }

    /**
     * The accesses the write-back touches, by memory node: a HashMap of lists, except that when they are all on one
     * node (the common case) it is a singleton map of one list, which iterates the same (one entry) with fewer objects.
     */
    private Map<String, List<Access>> byNode(final Function<Access, Boolean> needsRelease) {
        String only = null;
        List<Access> onOnly = null;
        Map<String, List<Access>> byNode = null;
        for (int i = 0; i < accesses.size(); i++) { // indexed: no iterator on the hot path
            final Access a = accesses.get(i);
            if (!(a.dirty || a.inserted || needsRelease.apply(a))) {
                continue;
            }
            final String node = a.partition.node();
            if (byNode != null) {
                byNode.computeIfAbsent(node, n -> new ArrayList<>()).add(a);
            } else if (only == null || only.equals(node)) {
                only = node;
                if (onOnly == null) {
                    onOnly = new ArrayList<>(accesses.size());
                }
                onOnly.add(a);
            } else { // a second node: the map, filled in the order a HashMap would have been
                byNode = new HashMap<>();
                byNode.put(only, onOnly);
                byNode.computeIfAbsent(node, n -> new ArrayList<>()).add(a);
            }
        }
        if (byNode != null) {
            return byNode;
        }
        return only == null ? Map.of() : java.util.Collections.singletonMap(only, onOnly);
    }

    private Future<Void> writeBackPrimaries(final Map<String, List<Access>> byNode, final ReleaseVerb release) {
        return postPerNode(runtime, byNode, failedOn, (batch, a) -> {
            release.beforeWrites(batch, a);
            if (homes || a.inserted || a.placeholderHome) {
                addWrites(batch, a, a.address(), a.rkey(), false);
            }
            if (a.releasing) {
                release.add(batch, a);
            }
        });
    }

    /**
     * Posts one doorbell per memory node of {@code byNode} (after its write-back gate), with what {@code add} puts
     * in for each of its items, again while refused for now; completes when every batch settled, failed if any
     * failed.
     */
    public static <T> Future<Void> postPerNode(final TxnRuntime runtime, final Map<String, List<T>> byNode,
                                        final java.util.function.BiConsumer<Doorbell, T> add) {
        return postPerNode(runtime, byNode, null, add);
    }

    /**
     * {@link #postPerNode(TxnRuntime, Map, java.util.function.BiConsumer)}, adding to {@code failedOn} (unless null)
     * each memory node whose batch failed after it was posted, before the outcome is passed on.
     */
    public static <T> Future<Void> postPerNode(final TxnRuntime runtime, final Map<String, List<T>> byNode,
                                               final List<String> failedOn,
                                               final java.util.function.BiConsumer<Doorbell, T> add) {
        final List<Future<Doorbell>> posted = new ArrayList<>(byNode.size());
        for (final Map.Entry<String, List<T>> e : byNode.entrySet()) {
            final NodePost<T> post = new NodePost<>(runtime, e.getKey(), e.getValue(), add);
            posted.add(Futures.then(runtime.writeBackGate(e.getKey()), post));
        }
        // Every batch settled before a failure is handled: finishing from the record reads what they left.
        final Future<Void> settled = Reposts.settle(posted);
        if (failedOn == null) {
            return settled;
        }
        if (settled.isComplete()) { // every batch answered inline: recorded now, nothing to listen to
            recordFailed(byNode, posted, failedOn);
            return settled;
        }
        // One relay recording the failed nodes before passing the outcome on, where onFailure built a lambda, a copy
        // of the node names and (with the caller's step) a listener list on settled: three objects per commit fewer.
        return new FailedNodes<>(byNode, posted, failedOn).relaying(settled);
    }

    /**
     * One memory node's batch of {@link #postPerNode}: after its write-back gate, posted until accepted, each time on
     * the node's channel with what {@code add} puts in for each item. One object for the three steps, where the gate's
     * function, the repost's supplier and the channel's function were three lambdas per node and commit.
     */
    private static final class NodePost<T> implements java.util.function.Function<Object, Future<Doorbell>>,
        java.util.function.Supplier<Future<Doorbell>> {
        private final TxnRuntime runtime;
        private final String node;
        private final List<T> items;
        private final java.util.function.BiConsumer<Doorbell, T> add;

        NodePost(final TxnRuntime runtime, final String node, final List<T> items,
                 final java.util.function.BiConsumer<Doorbell, T> add) {
            this.runtime = runtime;
            this.node = node;
            this.items = items;
            this.add = add;
        }

        /** The gate passed: posted, again while refused for now. */
        @Override
        public Future<Doorbell> apply(final Object gate) {
            return Reposts.untilAccepted(runtime.timers(), this);
        }

        /** One try: the batch built afresh on the node's channel and posted. */
        @Override
        public Future<Doorbell> get() {
            final Future<io.scythe.bridge.RdmaChannel> channel = runtime.channel(node);
            if (!Futures.ready(channel)) {
                return channel.compose(this::post);
            }
            try { // Futures.then's fast case, without a function object for it
                return post(channel.result());
            } catch (final RuntimeException e) {
                return Future.failedFuture(e);
            }
        }

        private Future<Doorbell> post(final io.scythe.bridge.RdmaChannel ch) {
            final Doorbell batch = ch.doorbell();
            for (int i = 0; i < items.size(); i++) { // indexed: no iterator on the hot path
                add.accept(batch, items.get(i));
            }
            return batch.post(); // refused whole when the send queue lacks room: built and posted again
        }
    }

    /**
     * Adds to {@code failedOn} each node of {@code byNode} whose batch of {@code posted} failed after it was posted
     * (not refused for now). {@code byNode} iterates in the order {@code posted} was filled in: nobody changes it once
     * its batches are posted.
     */
    private static <T> void recordFailed(final Map<String, List<T>> byNode, final List<Future<Doorbell>> posted,
                                         final List<String> failedOn) {
        boolean anyFailed = false;
        for (int i = 0; i < posted.size() && !anyFailed; i++) { // indexed: a success allocates no iterator
            anyFailed = posted.get(i).failed() && !io.scythe.txn.Refusal.forNow(posted.get(i).cause());
        }
        if (!anyFailed) {
            return;
        }
        int i = 0;
        for (final String node : byNode.keySet()) {
            final Future<Doorbell> batch = posted.get(i++);
            if (batch.failed() && !io.scythe.txn.Refusal.forNow(batch.cause())) {
                failedOn.add(node);
            }
        }
    }

    /** {@code settled.onFailure(e -> recordFailed(...))} as one object: {@link #recordFailed} on a failure, then on. */
    private static final class FailedNodes<T> extends Futures.Relay<Void> {
        private final Map<String, List<T>> byNode;
        private final List<Future<Doorbell>> posted;
        private final List<String> failedOn;

        FailedNodes(final Map<String, List<T>> byNode, final List<Future<Doorbell>> posted,
                    final List<String> failedOn) {
            this.byNode = byNode;
            this.posted = posted;
            this.failedOn = failedOn;
        }

        @Override
        protected void first() {
            recordFailed(byNode, posted, failedOn); // on a success no batch failed: adds nothing, allocates nothing
        }
    }

    /**
     * Adds what the write-back installs on {@code a}'s copy at {@code address} ({@code rkey}): value and length, the
     * flags of a delete or revival, then {@code a.installedVersion}. A backup copy was last written by the same
     * write-backs as its primary, so it differs from the primary's image where the primary's does. An inserted
     * object is the exception: its INSERT filled the primary, while its backups hold a placeholder (deleted, empty),
     * so they get the value ({@code newValue}, set for them by {@code Inserts#install}), its length and cleared flags.
     * {@code backup}: whether {@code address} is a backup copy's, said by the caller (an address alone cannot tell:
     * a backup on another memory node may sit at the primary's address there).
     */
    public static void addWrites(final Doorbell batch, final Access a, final long address, final int rkey,
                                 final boolean backup) {
        final boolean insertedOnBackup = a.inserted && (backup || a.placeholderHome);
        // The access's pooled words (the same values for every copy, so one buffer serves them all), else a buffer
        // per verb as before.
        final UnsafeBuffer words = a.writeWords;
        if (a.dirty && !a.deleting || insertedOnBackup) {
            batch.write(address + ObjectLayout.VALUE_OFFSET, rkey, a.newValue, 0, a.newLength);
            // A placeholder home (Lotus: a revival's may never have held a value, its length 0 on every copy) gets
            // its length even when the copy read had the same (stop-55 review, M4).
            if (a.newLength != a.valueLength || insertedOnBackup || a.placeholderHome) {
                final UnsafeBuffer length = words != null ? words : new UnsafeBuffer(new byte[4]);
                final int at = words != null ? WORDS_LENGTH_OFFSET : 0;
                length.putInt(at, a.newLength);
                batch.write(address + ObjectLayout.VALUE_LENGTH_OFFSET, rkey, length, at, 4);
            }
        }
        if (a.deleting || a.reviving || insertedOnBackup) { // the flags word: a tombstone, or cleared again
            final UnsafeBuffer flags = words != null ? words : new UnsafeBuffer(new byte[2]);
            final int at = words != null ? WORDS_FLAGS_OFFSET : 0;
            flags.putShort(at, (short) (a.deleting ? ObjectLayout.FLAG_DELETED : 0));
            batch.write(address + ObjectLayout.FLAGS_OFFSET, rkey, flags, at, 2);
        }
        if (a.dirty || a.inserted) {
            final UnsafeBuffer v = words != null ? words : new UnsafeBuffer(new byte[8]);
            v.putLong(WORDS_VERSION_OFFSET, a.installedVersion);
            batch.write(address + ObjectLayout.VERSION_OFFSET, rkey, v, WORDS_VERSION_OFFSET, 8);
        }
    }

    /** {@link Access#writeWords}: the version at 0, the value length at 8, the flags at 12, in 16 bytes. */
    static final int WORDS_VERSION_OFFSET = 0;
    static final int WORDS_LENGTH_OFFSET = 8;
    static final int WORDS_FLAGS_OFFSET = 12;
    static final int WORDS_BYTES = 16;
}
