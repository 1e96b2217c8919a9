package io.scythe.txn.recovery;

import io.scythe.bridge.RdmaChannel;
import io.scythe.rrpc.Rocket;
import io.scythe.rrpc.RpcReply;
import io.scythe.txn.AbortException;
import io.scythe.txn.AbortReason;
import io.scythe.txn.Access;
import io.scythe.txn.FaultPoints;
import io.vertx.core.Future;
import org.agrona.concurrent.UnsafeBuffer;

import java.nio.charset.StandardCharsets;
import java.util.BitSet;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Function;
import java.util.function.ToLongFunction;

/**
 * One event loop's redo log: a log region on each memory node it writes to (opened by {@link RecoveryRpc#LOG_OPEN}
 * on first use), cut into {@link RedoRecordDescriptor#SLOT_BYTES} slots. A commit appends its record to the region on
 * the memory node of its first written object, with one one-sided WRITE, before any of its writes reach a memory
 * node; when the WRITE completes the commit is decided (a protocol whose lock kind is {@code LockKind#decidedByData},
 * Lotus, appends it before its commit version exists, with version 0 and beside its INVISIBLE writes: durable, it
 * decides nothing, recovery decides it by the objects it names; an attempt that aborts after it withdraws it,
 * {@link #withdraw}, and one whose record is in doubt keeps its writes and locks for recovery). After write-back and
 * unlock the slots are free again
 * (locally: nothing is cleared remotely) and the record drops below the low water that the next records carry, which
 * truncates it for recovery ({@link RedoRecordDescriptor}). Loop-confined.
 *
 * <p>With replication (the first written object's partition has backups) the record is written, in parallel, to
 * the loop's region on that partition's primary node and on each of its backup nodes, and the commit is decided only
 * when every copy is durable: the log survives the loss of any k of those memory nodes, and no write-back (which
 * reaches backups first, {@code onesided.Replicas}) begins before. A copy refused for now while others were posted is
 * posted again until accepted; a record refused on every copy is nothing (the attempt aborts); a copy that failed
 * after it was posted leaves the record in doubt. Recovery rolls one complete copy forward ({@link CnRecovery}).
 */
public final class RedoLog {
    /** Log region per loop and memory node: 2048 slots of 512 B. */
    public static final int DEFAULT_REGION_BYTES = 1 << 20;

    private final Function<String, Future<Rocket>> rockets;
    private final Function<String, Future<RdmaChannel>> channels;
    private final long idBase;
    private final int regionBytes;
    private final Map<String, Future<Region>> regions = new HashMap<>();
    /** The catalog's incarnation of each node when its region was opened ({@code Catalog#incarnationOf}). */
    private final Map<String, Integer> regionIncarnations = new HashMap<>();
    /** Sequence numbers of appended records not released yet (written, or whose WRITE failed: in doubt). */
    private final LsnSet unfinished = new LsnSet();
    /** The next record's sequence number: one counter for every region of this loop, so it never repeats. */
    private long nextLsn = 1;
    private java.util.function.BiConsumer<String, RdmaChannel> forgetBroken = (node, ch) -> { };
    /** The loop's catalog: after a memory-node failover, entries name their partitions as loaded ({@link #encode}). */
    private io.scythe.txn.Catalog catalog;
    /** The loop's timers, for posting a refused copy of a replicated record again; null: such a record is in doubt. */
    private io.scythe.txn.runtime.Timers timers;
    /** Observer of each record about to be posted (the simulator's crash checks), or null. */
    private PostingObserver onPosting;
    /** Test hook: runs after a record is durable, before the write-back (a crash there is "mid-commit"). */
    private Runnable afterAppend;
    /** Test fault point: runs after each copy's WRITE completed, which fails if it fails ({@link #afterWrite}). */
    private Function<String, Future<Void>> afterWrite;
    private long records;
    private long bytes;

    /** The runtime extension that holds a loop's redo log. */
    private static final io.scythe.txn.TxnRuntime.Key<RedoLog> KEY = new io.scythe.txn.TxnRuntime.Key<>("redo-log");

    /**
     * Commits on {@code runtime}'s loop write redo records from now on, to log regions of {@code regionBytes} per
     * memory node; the loop's log (the existing one if enabled before).
     */
    public static RedoLog enable(final io.scythe.txn.TxnRuntime runtime, final int regionBytes) {
        return runtime.extension(KEY, rt -> new RedoLog(rt::rocket, rt::channel, rt.idBase(), regionBytes)
            .forgetBroken(rt::forgetChannel).timers(rt.timers()).catalog(rt.catalog()));
    }

    /** The redo log of {@code runtime}'s loop, or {@code null} when its commits write none. */
    public static RedoLog of(final io.scythe.txn.TxnRuntime runtime) {
        return runtime.extensionOrNull(KEY);
    }

    public RedoLog(final Function<String, Future<Rocket>> rockets,
                   final Function<String, Future<RdmaChannel>> channels, final long idBase, final int regionBytes) {
        if (regionBytes < RedoRecordDescriptor.SLOT_BYTES || regionBytes % RedoRecordDescriptor.SLOT_BYTES != 0) {
            throw new IllegalArgumentException("regionBytes=" + regionBytes + " must be a positive multiple of "
                + RedoRecordDescriptor.SLOT_BYTES);
        }
        this.rockets = rockets;
        this.channels = channels;
        this.idBase = idBase;
        this.regionBytes = regionBytes;
    }

    /**
     * Where a record went (its copy on the first written object's node; with replication also {@code backups}, the
     * copies on that partition's backup nodes), and its bytes: freed by {@link #release}.
     */
    public record Appended(Region region, int firstSlot, int slots, long lsn, UnsafeBuffer record,
                           List<Copy> backups) {
    }

    /** A copy of a record in another region (replication). */
    public record Copy(Region region, int firstSlot) {
    }

    /**
     * A record's WRITE failed after it was posted: whether it landed is unknown, so the commit is in doubt. Its slots
     * stay taken and its sequence number unfinished (a landed record must not be truncated or overwritten) until the
     * committer gives it up to recovery (it is not written again: the failed WRITE might still land).
     */
    public static final class RecordInDoubtException extends io.vertx.core.VertxException {
        private final transient Appended appended;
        private final transient java.util.Set<String> notDurableOn;

        RecordInDoubtException(final Appended appended, final Throwable cause,
                               final java.util.Collection<String> notDurableOn) {
            super("redo record " + appended.lsn + " in doubt on " + notDurableOn + ": " + cause.getMessage(), cause,
                true);
            this.appended = appended;
            this.notDurableOn = java.util.Set.copyOf(notDurableOn);
        }

        public Appended appended() {
            return appended;
        }

        /**
         * The memory nodes whose copy of the record is not known durable (its WRITE failed after it was posted, or was
         * never accepted); every other copy is. With replication, when a configuration removes all of these, the
         * record is durable on every copy that serves (see {@code onesided.RedoStep}).
         */
        public java.util.Set<String> notDurableOn() {
            return notDurableOn;
        }
    }

    /** A log region on one memory node. */
    public static final class Region {
        final String node;
        final long address;
        final int rkey;
        final BitSet used;
        final int slotCount;
        int cursor;

        Region(final String node, final long address, final int rkey, final int bytes) {
            this.node = node;
            this.address = address;
            this.rkey = rkey;
            this.slotCount = bytes / RedoRecordDescriptor.SLOT_BYTES;
            this.used = new BitSet(slotCount);
        }

        /** First of {@code n} contiguous free slots, taken, or -1. */
        int take(final int n) {
            for (int pass = 0; pass < 2; pass++) {
                int from = pass == 0 ? cursor : 0;
                while (from + n <= slotCount) {
                    final int start = used.nextClearBit(from);
                    if (start + n > slotCount) {
                        break;
                    }
                    final int busy = used.nextSetBit(start);
                    if (busy < 0 || busy >= start + n) {
                        used.set(start, start + n);
                        cursor = start + n;
                        return start;
                    }
                    from = busy + 1;
                }
            }
            return -1;
        }
    }

    /**
     * Writes the redo record of a commit installing {@code version} over {@code writes} (every access the
     * write-back will touch), each lock identified by {@code token} of kind {@code lockKind}.
     *
     * @return where it went, once durable; fails with a {@link AbortReason#BACK_PRESSURE} abort when the region is
     *     full for now, with the refusal when the WRITE was not posted (nothing written: its slots are free again, so
     *     the low water moves on), or with {@link RecordInDoubtException} when it was posted and failed
     */
    public Future<Appended> append(final long txnId, final long version, final int lockKind,
                                   final List<Access> writes, final ToLongFunction<Access> token) {
        return append(txnId, version, lockKind, writes, token, null);
    }

    /**
     * How a record's copy reaches a log region other than by this loop's one-sided WRITE (RCC's Log stage by RPC:
     * a request whose handler copies it into the region): completes when the copy is durable; fails with a refusal
     * for now when nothing was sent, with {@link NotPostedException} when the node answered that nothing of it was
     * written, otherwise the copy is in doubt. Returns {@code null} for a copy this loop's one-sided WRITE posts
     * instead (a record too large for a request).
     */
    @FunctionalInterface
    public interface Poster {
        Future<Void> post(String node, long address, int rkey, UnsafeBuffer record);
    }

    /**
     * A copy the memory node answered it did not write (a request it refused or did not run): nothing of the record
     * is there, as for a refusal for now, but posting it again would be refused again.
     */
    public static final class NotPostedException extends io.vertx.core.VertxException {
        public NotPostedException(final String message, final Throwable cause) {
            super(message, cause, true);
        }
    }

    /** Whether a copy that failed with {@code e} left nothing of the record on its node. */
    private static boolean nothingLanded(final Throwable e) {
        return io.scythe.txn.Refusal.forNow(e) || e instanceof NotPostedException;
    }

    /**
     * {@link #append(long, long, int, List, ToLongFunction)}, each copy posted by {@code poster} ({@code null}: by
     * this loop's one-sided WRITE, as the other overload).
     */
    public Future<Appended> append(final long txnId, final long version, final int lockKind,
                                   final List<Access> writes, final ToLongFunction<Access> token,
                                   final Poster poster) {
        return append(txnId, version, lockKind, writes, token, poster, catalog == null ? 0 : catalog.epoch());
    }

    /**
     * {@link #append(long, long, int, List, ToLongFunction, Poster)} of a commit whose attempt ran in memory-node
     * configuration {@code epoch} (its accesses hold the partitions serving then): the record names it, so recovery
     * reads a primary's lock word for it only in the term it was written in ({@link RedoRecordDescriptor}).
     */
    public Future<Appended> append(final long txnId, final long version, final int lockKind,
                                   final List<Access> writes, final ToLongFunction<Access> token,
                                   final Poster poster, final long epoch) {
        return append(txnId, version, lockKind, writes, token, poster, epoch, null);
    }

    /**
     * The commit's point of no return, passed (or refused) just before its record's WRITE is posted: what a protocol
     * that counts its decided commits ({@code Catalog#decided}) runs there, with the epoch check that must come after
     * the count. Returns null to post, or the failure the attempt aborts with (nothing was posted: its slots are
     * free again).
     */
    @FunctionalInterface
    public interface PointOfNoReturn {
        Throwable pass();
    }

    /**
     * {@link #append(long, long, int, List, ToLongFunction, Poster, long)} with {@code gate} ({@code null}: none)
     * run once its slots are taken, just before the record is sealed and posted.
     */
    public Future<Appended> append(final long txnId, final long version, final int lockKind,
                                   final List<Access> writes, final ToLongFunction<Access> token,
                                   final Poster poster, final long epoch, final PointOfNoReturn gate) {
        if (writes.isEmpty()) {
            return Future.failedFuture(new IllegalArgumentException("redo record of transaction " + txnId
                + " without writes"));
        }
        final UnsafeBuffer record;
        try {
            record = encode(txnId, version, lockKind, writes, token, catalog, epoch);
        } catch (IllegalArgumentException e) { // nothing posted: the attempt aborts with the reason
            return Future.failedFuture(e);
        }
        if (!writes.get(0).partition.backups().isEmpty()) {
            return appendReplicated(txnId, record, writes, poster, gate);
        }
        final String node = writes.get(0).partition.node();
        // Futures.then(Futures.then(reached, v -> region(node)), region -> appendTo(...)) with no function object
        // when both steps are ready (the common case: no fault hook, the region open)
        final Future<Void> reached = FaultPoints.reached(FaultPoints.Point.BEFORE_REDO, txnId);
        final Future<Region> region;
        if (io.scythe.txn.onesided.Futures.ready(reached)) {
            try {
                region = region(node);
            } catch (final RuntimeException e) {
                return Future.failedFuture(e);
            }
        } else {
            region = reached.compose(v -> region(node));
        }
        if (!io.scythe.txn.onesided.Futures.ready(region)) {
            return region.compose(r -> appendTo(r, node, txnId, record, writes, poster, gate));
        }
        try {
            return appendTo(region.result(), node, txnId, record, writes, poster, gate);
        } catch (final RuntimeException e) {
            return Future.failedFuture(e);
        }
    }

    /** {@link #append}'s record into {@code region} on {@code node}: its slots taken, sealed and written. */
    private Future<Appended> appendTo(final Region region, final String node, final long txnId,
                                      final UnsafeBuffer record, final List<Access> writes, final Poster poster,
                                      final PointOfNoReturn gate) {
        final int slots = (record.capacity() + RedoRecordDescriptor.SLOT_BYTES - 1)
            / RedoRecordDescriptor.SLOT_BYTES;
        final int first = slots > region.slotCount ? -1 : region.take(slots);
        if (first < 0) {
            return Future.failedFuture(new AbortException(AbortReason.BACK_PRESSURE, "redo log region on "
                + node + " has no room for " + record.capacity() + " bytes"));
        }
        final Throwable refused = gate == null ? null : gate.pass();
        if (refused != null) {
            region.used.clear(first, first + slots);
            return Future.failedFuture(refused);
        }
        final long lsn = sealNext(txnId, record, writes);
        final Appended appended = new Appended(region, first, slots, lsn, record, List.of());
        return write(region, first, record, poster).transform(ar -> {
            if (ar.failed()) {
                if (nothingLanded(ar.cause())) {
                    release(appended); // not posted: nothing of it is on the memory node
                    return Future.failedFuture(ar.cause());
                }
                return Future.failedFuture(new RecordInDoubtException(appended, ar.cause(), List.of(node)));
            }
            return durable(appended, txnId);
        });
    }

    /**
     * Gives {@code record} the next sequence number and the low water, seals it and counts it unfinished, just before
     * its WRITEs are posted; returns its sequence number.
     */
    private long sealNext(final long txnId, final UnsafeBuffer record, final List<Access> writes) {
        final long lsn = nextLsn++;
        record.putLong(RedoRecordDescriptor.LSN_OFFSET, lsn);
        record.putLong(RedoRecordDescriptor.LOW_WATER_OFFSET, unfinished.isEmpty() ? lsn : unfinished.first());
        RedoRecordDescriptor.seal(record, 0, record.capacity());
        unfinished.add(lsn);
        posting(txnId, record, writes);
        return lsn;
    }

    /** A record durable on every copy: counted, then the test hooks that follow a durable record. */
    private Future<Appended> durable(final Appended appended, final long txnId) {
        records++;
        bytes += (long) appended.record.capacity() * (1 + appended.backups.size());
        if (afterAppend != null) {
            try {
                afterAppend.run();
            } catch (final RuntimeException e) { // the record is durable: in doubt, never an abort
                return Future.failedFuture(new RecordInDoubtException(appended, e, List.of()));
            }
        }
        // A fault failing here (an await past its bound) fails a durable record: in doubt, never an abort.
        final Future<Void> reached = FaultPoints.reached(FaultPoints.Point.AFTER_REDO, txnId);
        if (io.scythe.txn.onesided.Futures.ready(reached)) { // what the transform gives, at once: no step built
            return Future.succeededFuture(appended);
        }
        return reached.transform(ar -> ar.succeeded()
            ? Future.succeededFuture(appended)
            : Future.failedFuture(new RecordInDoubtException(appended, ar.cause(), List.of())));
    }

    /**
     * {@link #append} of a record whose first written object's partition has backups: a copy in this loop's region
     * on the primary's node and on each backup's node, written in parallel; durable when every copy is (see the
     * class comment for what a refusal or failure of a copy means).
     */
    private Future<Appended> appendReplicated(final long txnId, final UnsafeBuffer record,
                                              final List<Access> writes, final Poster poster,
                                              final PointOfNoReturn gate) {
        final io.scythe.txn.Catalog.Partition partition = writes.get(0).partition;
        final List<String> nodes = new java.util.ArrayList<>();
        nodes.add(partition.node());
        partition.backups().forEach(b -> nodes.add(b.node()));
        return FaultPoints.reached(FaultPoints.Point.BEFORE_REDO, txnId).compose(v -> {
            final List<Future<Region>> opened = nodes.stream().map(this::region).toList();
            return Future.all(opened).map(all -> opened.stream().map(Future::result).toList());
        }).compose(regions -> {
            final int slots = (record.capacity() + RedoRecordDescriptor.SLOT_BYTES - 1)
                / RedoRecordDescriptor.SLOT_BYTES;
            final int[] firsts = new int[regions.size()];
            for (int i = 0; i < regions.size(); i++) {
                firsts[i] = slots > regions.get(i).slotCount ? -1 : regions.get(i).take(slots);
                if (firsts[i] < 0) {
                    for (int taken = 0; taken < i; taken++) {
                        regions.get(taken).used.clear(firsts[taken], firsts[taken] + slots);
                    }
                    return Future.failedFuture(new AbortException(AbortReason.BACK_PRESSURE, "redo log region on "
                        + nodes.get(i) + " has no room for " + record.capacity() + " bytes"));
                }
            }
            final Throwable refused = gate == null ? null : gate.pass();
            if (refused != null) {
                for (int i = 0; i < regions.size(); i++) {
                    regions.get(i).used.clear(firsts[i], firsts[i] + slots);
                }
                return Future.failedFuture(refused);
            }
            final long lsn = sealNext(txnId, record, writes);
            final List<Copy> backups = new java.util.ArrayList<>(regions.size() - 1);
            for (int i = 1; i < regions.size(); i++) {
                backups.add(new Copy(regions.get(i), firsts[i]));
            }
            final Appended appended = new Appended(regions.get(0), firsts[0], slots, lsn, record, List.copyOf(backups));
            final List<Future<Void>> written = new java.util.ArrayList<>(regions.size());
            for (int i = 0; i < regions.size(); i++) {
                written.add(write(regions.get(i), firsts[i], record, poster));
            }
            return Future.join(written).transform(ar -> settleCopies(appended, txnId, regions, firsts, written,
                poster));
        });
    }

    /**
     * The outcome of a replicated record once each copy's first WRITE settled. A copy that failed after it was posted
     * leaves the record in doubt, naming the copies not known durable ({@link RecordInDoubtException#notDurableOn}):
     * the refused ones are still posted again first, so that every other copy is durable when it says so.
     */
    private Future<Appended> settleCopies(final Appended appended, final long txnId, final List<Region> regions,
                                          final int[] firsts, final List<Future<Void>> written,
                                          final Poster poster) {
        int refused = 0;
        for (final Future<Void> copy : written) {
            refused += copy.failed() && nothingLanded(copy.cause()) ? 1 : 0;
        }
        if (refused == written.size()) {
            release(appended); // no copy posted: nothing of it is on any memory node
            return Future.failedFuture(written.get(0).cause());
        }
        // Posted somewhere: the record may be there, so it is never given up for a refusal; the refused copies are
        // posted again until accepted (a copy is the same bytes in a slot this loop keeps).
        final List<Future<Void>> copies = new java.util.ArrayList<>(written.size());
        for (int i = 0; i < written.size(); i++) {
            final Future<Void> first = written.get(i);
            copies.add(first.failed() && io.scythe.txn.Refusal.forNow(first.cause())
                ? writeUntilPosted(regions.get(i), firsts[i], appended.record, first.cause(), 0, poster) : first);
        }
        return Future.join(copies).transform(ar -> {
            final List<String> notDurable = new java.util.ArrayList<>();
            Throwable cause = null;
            for (int i = 0; i < copies.size(); i++) {
                if (copies.get(i).failed()) {
                    notDurable.add(regions.get(i).node);
                    cause = cause == null ? copies.get(i).cause() : cause;
                }
            }
            return cause != null ? Future.failedFuture(new RecordInDoubtException(appended, cause, notDurable))
                : durable(appended, txnId);
        });
    }

    /** Posts a refused copy again after a growing pause (20 us, doubling to 640 us), up to about 6 s. */
    private Future<Void> writeUntilPosted(final Region region, final int firstSlot, final UnsafeBuffer record,
                                          final Throwable refusal, final int tries, final Poster poster) {
        if (timers == null || tries >= 10_000) {
            return Future.failedFuture(refusal);
        }
        return timers.after(20_000L << Math.min(tries, 5)).compose(v -> write(region, firstSlot, record, poster))
            .recover(e -> io.scythe.txn.Refusal.forNow(e) ? writeUntilPosted(region, firstSlot, record, e, tries + 1,
                poster) : Future.failedFuture(e));
    }

    private Future<Void> write(final Region region, final int firstSlot, final UnsafeBuffer record,
                               final Poster poster) {
        final Function<String, Future<Void>> gate = afterWrite;
        final Future<Void> posted = poster == null ? null : poster.post(region.node,
            region.address + (long) firstSlot * RedoRecordDescriptor.SLOT_BYTES, region.rkey, record);
        if (posted != null) {
            return gate == null ? posted : posted.compose(v -> gate.apply(region.node));
        }
        // The WRITE reports to a callback (no promise, composition and listener list per record); the steps are
        // compose's: a failed channel fails the write, a verb that failed otherwise than refused forgets the channel.
        final Future<io.scythe.bridge.RdmaChannel> channel = channels.apply(region.node);
        final io.vertx.core.Promise<Void> written = io.vertx.core.Promise.promise();
        io.scythe.txn.onesided.Verbs.write(channel, region.address + (long) firstSlot * RedoRecordDescriptor.SLOT_BYTES,
            region.rkey, record, 0, record.capacity(), (v, failure) -> {
                if (failure == null) {
                    written.complete();
                    return;
                }
                if (channel.succeeded() && !io.scythe.txn.Refusal.forNow(failure)) {
                    forgetBroken.accept(region.node, channel.result()); // a failed verb may have broken the QP
                }
                written.fail(failure);
            });
        return gate == null ? written.future() : written.future().compose(v -> gate.apply(region.node));
    }

    /**
     * Gives this log the loop's catalog, by which its records name each written partition as it was loaded once a
     * memory-node configuration moved it ({@link #encode}); without one they name it as it serves.
     */
    public RedoLog catalog(final io.scythe.txn.Catalog loopCatalog) {
        this.catalog = loopCatalog;
        return this;
    }

    /** Gives this log the loop's timers, with which a refused copy of a replicated record is posted again. */
    public RedoLog timers(final io.scythe.txn.runtime.Timers loopTimers) {
        this.timers = loopTimers;
        return this;
    }

    /** Tells {@code forget} of a channel a WRITE failed on, so that the next record connects anew. */
    public RedoLog forgetBroken(final java.util.function.BiConsumer<String, RdmaChannel> forget) {
        this.forgetBroken = forget;
        return this;
    }

    /** Frees a record's slots after its write-back and unlock. */
    public void release(final Appended appended) {
        appended.region.used.clear(appended.firstSlot, appended.firstSlot + appended.slots);
        for (final Copy copy : appended.backups) {
            copy.region.used.clear(copy.firstSlot, copy.firstSlot + appended.slots);
        }
        unfinished.remove(appended.lsn);
    }

    /**
     * Withdraws a durable record whose commit will not happen (a protocol that logs before its commit point, Lotus,
     * aborting after its record was appended): its trailer is overwritten with 0 on every copy, so recovery finds it
     * incomplete and never reads it as a commit, then its slots are freed. Fails, with the record kept, if a copy's
     * WRITE failed (refused for now: posted again, as a copy of the record is); the caller then gives the attempt up
     * to recovery, which decides such a record by the objects it names. A copy on a memory node the configuration
     * removed ({@code removed}, as {@code Catalog#removed}) is skipped: what it holds counts for nothing (no recovery
     * reads it), and its WRITE would fail and give the loop up on every failover.
     */
    public Future<Void> withdraw(final Appended appended, final java.util.function.Predicate<String> removed) {
        final UnsafeBuffer zero = new UnsafeBuffer(new byte[RedoRecordDescriptor.TRAILER_BYTES]);
        final int trailer = appended.record.capacity() - RedoRecordDescriptor.TRAILER_BYTES;
        final List<Future<Void>> copies = new java.util.ArrayList<>(1 + appended.backups.size());
        if (!removed.test(appended.region.node)) {
            copies.add(clearTrailer(appended.region, appended.firstSlot, trailer, zero));
        }
        for (final Copy copy : appended.backups) {
            if (!removed.test(copy.region.node)) {
                copies.add(clearTrailer(copy.region, copy.firstSlot, trailer, zero));
            }
        }
        return Future.all(copies).map(v -> {
            release(appended);
            return null;
        });
    }

    private Future<Void> clearTrailer(final Region region, final int firstSlot, final int trailer,
                                      final UnsafeBuffer zero) {
        final java.util.function.Supplier<Future<Void>> write = () -> channels.apply(region.node).compose(ch -> ch
            .write(region.address + (long) firstSlot * RedoRecordDescriptor.SLOT_BYTES + trailer, region.rkey, zero,
                0, zero.capacity()));
        return timers == null ? write.get() : io.scythe.txn.onesided.Reposts.untilAccepted(timers, write);
    }

    /** Records appended and not released: their commits are not finished (or in doubt). */
    public int unfinishedRecords() {
        return unfinished.size();
    }

    /** The low water the next record would carry. */
    public long lowWater() {
        return unfinished.isEmpty() ? nextLsn : unfinished.first();
    }

    private Future<Region> region(final String node) {
        final Future<Region> known = regions.get(node);
        // A region opened on an earlier process of the node (replaced since: a memory node that rejoined) is gone.
        final int incarnation = catalog == null ? 0 : catalog.incarnationOf(node);
        if (known != null && !known.failed() && regionIncarnations.getOrDefault(node, 0) == incarnation) {
            return known;
        }
        regionIncarnations.put(node, incarnation);
        final UnsafeBuffer request = new UnsafeBuffer(new byte[RecoveryRpc.LOG_OPEN_REQUEST_BYTES]);
        request.putLong(0, idBase);
        request.putInt(8, regionBytes);
        final Future<Region> opened = rockets.apply(node).compose(r -> r.call(RecoveryRpc.LOG_OPEN, request))
            .map((RpcReply reply) -> {
                final UnsafeBuffer p = reply.payload();
                if (reply.length() < RecoveryRpc.LOG_OPEN_REPLY_BYTES) {
                    throw new IllegalStateException("LOG_OPEN reply of " + reply.length() + " bytes from " + node);
                }
                return new Region(node, p.getLong(0), p.getInt(8), p.getInt(12));
            });
        regions.put(node, opened);
        return opened;
    }

    /**
     * The record of a commit installing {@code version} over {@code writes}, its sequence number and seal still to
     * come. Each entry names its partition <b>as loaded</b>: the memory node and table of the copy loaded as its
     * primary (copy 0), the backups it was loaded with, and the object's pointer on each loaded copy, copy 0 in the
     * entry's pointer field and copy b in backup slot b - 1. Recovery finds the partition by that identity
     * ({@code Catalog#servingOf}) and reads the pointers of the copies serving then by their loaded numbers
     * ({@code Catalog.Serving#servingPointers}). A copy's loaded number means the same under every memory-node
     * configuration, while what serves where does not: after a failover the promoted copy of one partition may be
     * on the node and hold as many backups as another partition's loaded primary (with two or more backups several
     * partitions look alike), so a record naming its partitions as they serve would be read as another partition's.
     * The copies that do not serve when the record is written (on removed memory nodes) get pointer 0: recovery
     * reads only serving copies. The op word also names the loaded copy serving as primary when the record was
     * written: recovery trusts that copy's lock word only if it still is the primary (a promoted copy's lock words
     * start afresh, so a ticket of an older record can equal a live holder's). Without a configuration copy b is
     * backup b, the primary copy 0, and the bytes are those of the partitions as they serve.
     */
    /**
     * The record a commit of {@code writes} would append ({@link #encode}), for a loop that keeps no log: what a
     * protocol that logs its own record finishes a commit from after a memory-node failover
     * ({@code onesided.RedoStep#finishOwnRecord}), as it would from its appended record.
     */
    public static UnsafeBuffer recordOf(final long txnId, final long version, final int lockKind,
                                        final List<Access> writes, final ToLongFunction<Access> token,
                                        final io.scythe.txn.Catalog catalog, final long epoch) {
        return encode(txnId, version, lockKind, writes, token, catalog, epoch);
    }

    static UnsafeBuffer encode(final long txnId, final long version, final int lockKind, final List<Access> writes,
                               final ToLongFunction<Access> token, final io.scythe.txn.Catalog catalog,
                               final long epoch) {
        // The loaded identity of each entry's partition, when a configuration may have moved it (else null: as served).
        final io.scythe.txn.Catalog.LoadedAs[] loaded = catalog == null || catalog.configuration() == null ? null
            : new io.scythe.txn.Catalog.LoadedAs[writes.size()];
        int length = RedoRecordDescriptor.HEADER_BYTES + RedoRecordDescriptor.TRAILER_BYTES;
        final byte[][] names = new byte[writes.size()][];
        for (int i = 0; i < writes.size(); i++) {
            final Access a = writes.get(i);
            if (loaded != null) {
                loaded[i] = catalog.loadedAs(a.table, a.partition);
            }
            final io.scythe.txn.Catalog.Partition named = loaded == null ? a.partition : loaded[i].loaded();
            final io.scythe.txn.Catalog.Partition before = i == 0 ? null
                : loaded == null ? writes.get(i - 1).partition : loaded[i - 1].loaded();
            // Entries on the same node (most of a record) share its name's bytes: encoded once.
            names[i] = before != null && named.node().equals(before.node()) ? names[i - 1]
                : named.node().getBytes(StandardCharsets.UTF_8);
            length += RedoRecordDescriptor.entryBytes(names[i].length, valueBytes(a), named.backups().size());
        }
        final UnsafeBuffer b = new UnsafeBuffer(new byte[length]);
        b.putInt(RedoRecordDescriptor.MAGIC_OFFSET, RedoRecordDescriptor.MAGIC);
        b.putInt(RedoRecordDescriptor.LENGTH_OFFSET, length);
        b.putLong(RedoRecordDescriptor.TXN_ID_OFFSET, txnId);
        b.putLong(RedoRecordDescriptor.VERSION_OFFSET, version);
        RedoRecordDescriptor.putCounts(b, 0, writes.size(), lockKind, epoch);
        int at = RedoRecordDescriptor.HEADER_BYTES;
        for (int i = 0; i < writes.size(); i++) {
            final Access a = writes.get(i);
            final io.scythe.txn.Catalog.Partition named = loaded == null ? a.partition : loaded[i].loaded();
            final int backups = named.backups().size();
            final int value = valueBytes(a);
            b.putShort(at + RedoRecordDescriptor.ENTRY_NODE_LENGTH_OFFSET, (short) names[i].length);
            b.putShort(at + RedoRecordDescriptor.ENTRY_OP_OFFSET, (short) RedoRecordDescriptor.opWord(opOf(a),
                loaded == null ? 0 : loaded[i].copies()[0], backups));
            b.putInt(at + RedoRecordDescriptor.ENTRY_TABLE_OFFSET, named.descriptor().schema().id());
            b.putLong(at + RedoRecordDescriptor.ENTRY_POINTER_OFFSET, loaded == null ? a.pointer
                : loaded[i].pointerOf(0, a.pointer, a.backupPointers));
            b.putLong(at + RedoRecordDescriptor.ENTRY_TOKEN_OFFSET, token.applyAsLong(a));
            b.putInt(at + RedoRecordDescriptor.ENTRY_VALUE_LENGTH_OFFSET, value);
            b.putBytes(at + RedoRecordDescriptor.ENTRY_FIXED_BYTES, names[i]);
            if (value > 0) {
                b.putBytes(at + RedoRecordDescriptor.ENTRY_FIXED_BYTES + names[i].length, a.newValue, 0, value);
            }
            final int pointers = at + RedoRecordDescriptor.backupPointersOffset(names[i].length, value);
            for (int backup = 0; backup < backups; backup++) {
                b.putLong(pointers + backup * Long.BYTES, loaded == null ? a.backupPointers[backup]
                    : loaded[i].pointerOf(backup + 1, a.pointer, a.backupPointers));
            }
            at += RedoRecordDescriptor.entryBytes(names[i].length, value, backups);
        }
        return b; // sealed once its sequence number is known
    }

    /**
     * Bytes of {@code a}'s value in its redo entry: a written value, or with backups also an inserted object's
     * (its INSERT filled the primary; the backups' placeholders need it, from the write-back or from recovery).
     */
    public static int valueBytes(final Access a) {
        return a.dirty && !a.deleting || a.inserted && (backupsOf(a) > 0 || a.placeholderHome) ? a.newLength : 0;
    }

    /** How many backup copies {@code a}'s entry names (0 without replication). */
    private static int backupsOf(final Access a) {
        return a.partition.backups().size();
    }

    /** The {@code RedoRecordDescriptor.OP_*} bits of {@code a}'s entry (0: a lock released, nothing written). */
    public static int opOf(final Access a) {
        int op = 0;
        if (a.dirty && !a.deleting) {
            op |= RedoRecordDescriptor.OP_VALUE;
        }
        if (a.deleting) {
            op |= RedoRecordDescriptor.OP_DELETE;
        }
        if (a.reviving) {
            op |= RedoRecordDescriptor.OP_REVIVE;
        }
        if (a.inserted) {
            op |= RedoRecordDescriptor.OP_INSERTED;
        }
        if (a.placeholderHome) {
            // A one-sided insert's (Lotus, helper lotusins): its primary is a placeholder (deleted, empty) as its
            // backups are, so recovery's redo writes the value and clears the flags there too. Before, it wrote the
            // version only, and a NewOrder recovery rolled forward kept 4 order lines deleted (crash explorer, tpcc
            // seed 9 of --explore 30 --crashes).
            op |= RedoRecordDescriptor.OP_VALUE | RedoRecordDescriptor.OP_REVIVE;
        }
        return op;
    }

    /**
     * Test fault point: {@code hook} runs after each WRITE of a record's copy completed, with the copy's memory node,
     * and a failure it returns fails that WRITE as a lost acknowledgement would (the copy landed, the node cannot know
     * it); null clears it.
     */
    public void afterWrite(final Function<String, Future<Void>> hook) {
        this.afterWrite = hook;
    }

    /**
     * Tells {@code observer} of each record just before its first WRITE is posted: the transaction id and the accesses
     * the version it commits, the accesses its entries name, in entry order (from here the record may land, and recovery may roll it forward). For a
     * checker that must know what a crashed node may have committed; null clears it. Changes nothing else.
     */
    public void onPosting(final PostingObserver observer) {
        this.onPosting = observer;
    }

    /** Sees each record just before it is posted ({@link #onPosting}). */
    @FunctionalInterface
    public interface PostingObserver {
        void posting(long txnId, long version, List<Access> writes);
    }

    /**
     * A protocol that logs its commit decision elsewhere (CALVIN's executor record in its input log) tells the
     * {@link #onPosting} observer, as a record of this log would, just before that decision is posted: the observer
     * then knows the transaction may be committed by recovery. Changes nothing else.
     */
    public void announce(final long txnId, final long version, final List<Access> writes) {
        if (onPosting != null) {
            onPosting.posting(txnId, version, writes);
        }
    }

    private void posting(final long txnId, final UnsafeBuffer record, final List<Access> writes) {
        if (onPosting != null) {
            onPosting.posting(txnId, record.getLong(RedoRecordDescriptor.VERSION_OFFSET), writes);
        }
    }

    /** Sets (or clears, with null) the test hook run after each durable record. */
    public void afterAppend(final Runnable hook) {
        this.afterAppend = hook;
    }

    public long records() {
        return records;
    }

    public long bytes() {
        return bytes;
    }
}
