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
 * node; when the WRITE completes the commit is decided. After write-back and unlock the slots are free again
 * (locally: nothing is cleared remotely) and the record drops below the low water that the next records carry, which
 * truncates it for recovery ({@link RedoRecordDescriptor}). Loop-confined.
 */
public final class RedoLog {
    /** Log region per loop and memory node: 2048 slots of 512 B. */
    public static final int DEFAULT_REGION_BYTES = 1 << 20;

    private final Function<String, Future<Rocket>> rockets;
    private final Function<String, Future<RdmaChannel>> channels;
    private final long idBase;
    private final int regionBytes;
    private final Map<String, Future<Region>> regions = new HashMap<>();
    /** Sequence numbers of appended records not released yet (written, or whose WRITE failed: in doubt). */
    private final java.util.TreeSet<Long> unfinished = new java.util.TreeSet<>();
    /** The next record's sequence number: one counter for every region of this loop, so it never repeats. */
    private long nextLsn = 1;
    private java.util.function.BiConsumer<String, RdmaChannel> forgetBroken = (node, ch) -> { };
    /** Test hook: runs after a record is durable, before the write-back (a crash there is "mid-commit"). */
    private Runnable afterAppend;
    /** Test fault point: runs after each record's WRITE completed, which fails if it fails ({@link #afterWrite}). */
    private java.util.function.Supplier<Future<Void>> afterWrite;
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
            .forgetBroken(rt::forgetChannel));
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

    /** Where a record went, and its bytes: freed by {@link #release}. */
    public record Appended(Region region, int firstSlot, int slots, long lsn, UnsafeBuffer record) {
    }

    /**
     * A record's WRITE failed after it was posted: whether it landed is unknown, so the commit is in doubt. Its slots
     * stay taken and its sequence number unfinished (a landed record must not be truncated or overwritten) until the
     * committer gives it up to recovery (it is not written again: the failed WRITE might still land).
     */
    public static final class RecordInDoubtException extends io.vertx.core.VertxException {
        private final transient Appended appended;

        RecordInDoubtException(final Appended appended, final Throwable cause) {
            super("redo record " + appended.lsn + " in doubt: " + cause.getMessage(), cause, true);
            this.appended = appended;
        }

        public Appended appended() {
            return appended;
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
        if (writes.isEmpty()) {
            return Future.failedFuture(new IllegalArgumentException("redo record of transaction " + txnId
                + " without writes"));
        }
        final UnsafeBuffer record = encode(txnId, version, lockKind, writes, token);
        final String node = writes.get(0).partition.node();
        return FaultPoints.reached(FaultPoints.Point.BEFORE_REDO, txnId).compose(v -> region(node)).compose(region -> {
            final int slots = (record.capacity() + RedoRecordDescriptor.SLOT_BYTES - 1)
                / RedoRecordDescriptor.SLOT_BYTES;
            final int first = slots > region.slotCount ? -1 : region.take(slots);
            if (first < 0) {
                return Future.failedFuture(new AbortException(AbortReason.BACK_PRESSURE, "redo log region on "
                    + node + " has no room for " + record.capacity() + " bytes"));
            }
            final long lsn = nextLsn++;
            record.putLong(RedoRecordDescriptor.LSN_OFFSET, lsn);
            record.putLong(RedoRecordDescriptor.LOW_WATER_OFFSET, unfinished.isEmpty() ? lsn : unfinished.first());
            RedoRecordDescriptor.seal(record, 0, record.capacity());
            unfinished.add(lsn);
            final Appended appended = new Appended(region, first, slots, lsn, record);
            final java.util.function.Supplier<Future<Void>> gate = afterWrite;
            final Future<Void> written = write(appended);
            return (gate == null ? written : written.compose(v -> gate.get())).transform(ar -> {
                if (ar.failed()) {
                    if (io.scythe.txn.Refusal.forNow(ar.cause())) {
                        release(appended); // not posted: nothing of it is on the memory node
                        return Future.failedFuture(ar.cause());
                    }
                    return Future.failedFuture(new RecordInDoubtException(appended, ar.cause()));
                }
                records++;
                bytes += record.capacity();
                if (afterAppend != null) {
                    try {
                        afterAppend.run();
                    } catch (final RuntimeException e) { // the record is durable: in doubt, never an abort
                        return Future.failedFuture(new RecordInDoubtException(appended, e));
                    }
                }
                return FaultPoints.reached(FaultPoints.Point.AFTER_REDO, txnId).map(appended);
            });
        });
    }

    private Future<Void> write(final Appended a) {
        final Region region = a.region;
        return channels.apply(region.node).compose(ch -> ch.write(region.address
                + (long) a.firstSlot * RedoRecordDescriptor.SLOT_BYTES, region.rkey, a.record, 0, a.record.capacity())
            .onFailure(e -> {
                if (!io.scythe.txn.Refusal.forNow(e)) {
                    forgetBroken.accept(region.node, ch); // a failed verb may have broken the queue pair
                }
            }));
    }

    /** Tells {@code forget} of a channel a WRITE failed on, so that the next record connects anew. */
    public RedoLog forgetBroken(final java.util.function.BiConsumer<String, RdmaChannel> forget) {
        this.forgetBroken = forget;
        return this;
    }

    /** Frees a record's slots after its write-back and unlock. */
    public void release(final Appended appended) {
        appended.region.used.clear(appended.firstSlot, appended.firstSlot + appended.slots);
        unfinished.remove(appended.lsn);
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
        if (known != null && !known.failed()) {
            return known;
        }
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

    static UnsafeBuffer encode(final long txnId, final long version, final int lockKind, final List<Access> writes,
                               final ToLongFunction<Access> token) {
        int length = RedoRecordDescriptor.HEADER_BYTES + RedoRecordDescriptor.TRAILER_BYTES;
        final byte[][] names = new byte[writes.size()][];
        for (int i = 0; i < writes.size(); i++) {
            final Access a = writes.get(i);
            names[i] = a.partition.node().getBytes(StandardCharsets.UTF_8);
            length += RedoRecordDescriptor.entryBytes(names[i].length, valueBytes(a));
        }
        final UnsafeBuffer b = new UnsafeBuffer(new byte[length]);
        b.putInt(RedoRecordDescriptor.MAGIC_OFFSET, RedoRecordDescriptor.MAGIC);
        b.putInt(RedoRecordDescriptor.LENGTH_OFFSET, length);
        b.putLong(RedoRecordDescriptor.TXN_ID_OFFSET, txnId);
        b.putLong(RedoRecordDescriptor.VERSION_OFFSET, version);
        b.putInt(RedoRecordDescriptor.COUNT_OFFSET, writes.size());
        b.putInt(RedoRecordDescriptor.LOCK_KIND_OFFSET, lockKind);
        int at = RedoRecordDescriptor.HEADER_BYTES;
        for (int i = 0; i < writes.size(); i++) {
            final Access a = writes.get(i);
            final int value = valueBytes(a);
            b.putShort(at + RedoRecordDescriptor.ENTRY_NODE_LENGTH_OFFSET, (short) names[i].length);
            b.putShort(at + RedoRecordDescriptor.ENTRY_OP_OFFSET, (short) opOf(a));
            b.putInt(at + RedoRecordDescriptor.ENTRY_TABLE_OFFSET, a.partition.descriptor().schema().id());
            b.putLong(at + RedoRecordDescriptor.ENTRY_POINTER_OFFSET, a.pointer);
            b.putLong(at + RedoRecordDescriptor.ENTRY_TOKEN_OFFSET, token.applyAsLong(a));
            b.putInt(at + RedoRecordDescriptor.ENTRY_VALUE_LENGTH_OFFSET, value);
            b.putBytes(at + RedoRecordDescriptor.ENTRY_FIXED_BYTES, names[i]);
            if (value > 0) {
                b.putBytes(at + RedoRecordDescriptor.ENTRY_FIXED_BYTES + names[i].length, a.newValue, 0, value);
            }
            at += RedoRecordDescriptor.entryBytes(names[i].length, value);
        }
        return b; // sealed once its sequence number is known
    }

    private static int valueBytes(final Access a) {
        return a.dirty && !a.deleting ? a.newLength : 0;
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
        return op;
    }

    /**
     * Test fault point: {@code hook} runs after each record's WRITE completed, and a failure it returns fails that
     * WRITE as a lost acknowledgement would (the record landed, the node cannot know it); null clears it.
     */
    public void afterWrite(final java.util.function.Supplier<Future<Void>> hook) {
        this.afterWrite = hook;
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
