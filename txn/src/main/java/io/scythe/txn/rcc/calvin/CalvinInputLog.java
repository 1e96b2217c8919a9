package io.scythe.txn.rcc.calvin;

import io.scythe.rrpc.RpcReply;
import io.scythe.txn.TxnRuntime;
import io.scythe.txn.rcc.calvin.CalvinWire.Decl;
import io.scythe.txn.recovery.RecoveryRpc;
import io.vertx.core.Future;
import org.agrona.DirectBuffer;
import org.agrona.concurrent.UnsafeBuffer;

import java.util.ArrayList;
import java.util.List;
import java.util.zip.CRC32;

/**
 * CALVIN's input log (issue 18 part 1): before a node's sequencer dispatches its batch of an epoch to anyone (itself
 * included), the batch goes to the node's input-log region on a memory node and on each of that node's backups, one
 * one-sided WRITE per copy, and the dispatch waits until every copy is durable. So any batch some node received is in
 * the log, on k + 1 memory nodes: what Calvin does by replicating its input (its sequencers' batches) before they
 * reach the schedulers; RCC runs no recovery and is silent on it.
 *
 * <p>A record is node {@code from}'s batch of {@code epoch} as dispatched, one list of declarations per destination
 * node ({@link #encode}), framed by a magic word, its length and a CRC-32 so a scan ({@link #scan}) finds every
 * complete record and no torn one. Records start at {@link #SLOT_BYTES} boundaries of the region, appended in epoch
 * order, wrapping round. An empty batch is not logged: a scan that finds no record of an epoch of that node reads it
 * as empty, which is what it was. The region is opened by the recovery service's {@link RecoveryRpc#LOG_OPEN} (so it
 * exists where the loops' redo logs do: the simulator's {@code --redo-log}, cluster nodes), with the home loop's id
 * base, as a region of its own kind ({@link RecoveryRpc#KIND_INPUT_LOG}): not listed as a redo log nor freed when the
 * node is released, as survivors read it. A record is overwritten only once its epoch is complete at every live node
 * (each batch carries its sender's newest complete epoch, {@link Epochs#lowWater}), else the node gives up, naming
 * why. Executors log their decisions here too ({@link #encodeDecision}, issue 18 part 4), in slots held until the
 * transaction finished; survivors read a dead node's region ({@link #readDead}). Not built yet: reclamation beyond
 * the ring, and freeing the region once no one needs it. The
 * I/O part is loop-confined to the node's home loop; the encoding is sans-IO.
 */
final class CalvinInputLog {
    /** "CLVI". */
    static final int MAGIC = 0x49564C43;
    static final int SLOT_BYTES = 512;
    /** magic u32, length u32 (whole record), epoch u64, from u16, nodes u16. */
    static final int HEADER_BYTES = 4 + 4 + 8 + 2 + 2;
    /**
     * CRC-32 of everything before it (u32), then the magic word inverted (u32): no byte of the tail is 0, so a WRITE
     * torn before its last byte into a zeroed slot is not taken for a record.
     */
    static final int TRAILER_BYTES = 8;
    /** Region bytes per node and copy: 2048 slots. */
    static final int DEFAULT_REGION_BYTES = 1 << 20;

    /** A record found in a region: node {@code from}'s batch of {@code epoch}, by destination node. */
    record Entry(long epoch, int from, List<List<Decl>> byNode) {
    }

    /** "CLVW": an executor's decision record (issue 18 part 4). */
    static final int DECISION_MAGIC = 0x57564C43;

    /**
     * An executor's decision record (issue 18 part 4): node {@code from} commits transaction {@code id} at
     * {@code commitTs} with {@code writes} (by active participant node), logged before it sends any of them.
     */
    record Decision(long id, long commitTs, int from, java.util.Map<Integer, List<CalvinWire.Write>> writes) {
    }

    /** What a scan of a region found: the batches by epoch and the decisions by transaction id. */
    record Scan(java.util.NavigableMap<Long, Entry> batches, java.util.Map<Long, Decision> decisions) {
        static final Scan EMPTY = new Scan(java.util.Collections.emptyNavigableMap(), java.util.Map.of());
    }

    private final TxnRuntime home;
    private final List<String> copies;
    private final int regionBytes;
    /** Per copy, once open: its address, rkey and bytes. */
    private final List<Future<long[]>> regions = new ArrayList<>();
    /**
     * Per copy, its memory node's catalog incarnation when the region was opened: a replacement process under that
     * name (a memory node back after a failover, {@code Catalog#incarnationOf}) holds no such region.
     */
    private final int[] openedIn;
    /** The regions as registered, by memory node, where the fabric keeps them in this process (for tests). */
    private final java.util.Map<String, io.scythe.fabric.MemoryRegion> local = new java.util.HashMap<>();
    private final Ring ring;
    private long records;
    private long decisions;
    private long bytes;

    /** {@code copies}: the memory nodes holding a copy of this node's region (a primary and its backups). */
    CalvinInputLog(final TxnRuntime home, final List<String> copies, final int regionBytes) {
        if (copies.isEmpty()) {
            throw new IllegalArgumentException("CALVIN input log on no memory node");
        }
        this.home = home;
        this.copies = List.copyOf(copies);
        this.regionBytes = regionBytes;
        this.ring = new Ring(regionBytes / SLOT_BYTES);
        this.openedIn = new int[this.copies.size()];
        for (int i = 0; i < openedIn.length; i++) {
            openedIn[i] = home.catalog().incarnationOf(this.copies.get(i));
        }
        final UnsafeBuffer request = new UnsafeBuffer(new byte[RecoveryRpc.LOG_OPEN_KIND_REQUEST_BYTES]);
        request.putLong(0, home.idBase());
        request.putInt(8, regionBytes);
        request.putInt(12, RecoveryRpc.KIND_INPUT_LOG); // its own region: not a redo log, listed or released as one
        for (final String node : this.copies) {
            regions.add(home.rocket(node).compose(r -> r.call(RecoveryRpc.LOG_OPEN, request)).map((RpcReply reply) -> {
                if (reply.length() < RecoveryRpc.LOG_OPEN_REPLY_BYTES) {
                    throw new IllegalStateException("LOG_OPEN reply of " + reply.length() + " bytes from " + node);
                }
                final UnsafeBuffer p = reply.payload();
                final io.scythe.fabric.Nic nic = home.fabric().nic(node); // only where it is in this process
                if (nic != null) {
                    local.put(node, io.scythe.txn.recovery.RecoveryService.inputLogRegion(nic, p.getInt(8)));
                }
                return new long[] {p.getLong(0), p.getInt(8), p.getInt(12)};
            }));
        }
    }

    /**
     * The memory nodes of node {@code index}'s input log: partition {@code index mod partitions} of the catalog's
     * first table (by name) on its primary and each backup node.
     */
    static List<String> copiesOf(final io.scythe.txn.Catalog catalog, final int index) {
        io.scythe.txn.Catalog.Table first = null;
        for (final io.scythe.txn.Catalog.Table t : catalog.tables()) {
            if (first == null || t.name().compareTo(first.name()) < 0) {
                first = t;
            }
        }
        if (first == null) {
            throw new IllegalStateException("CALVIN input log: the catalog has no table, so no memory node");
        }
        final io.scythe.txn.Catalog.Partition p = first.partitions().get(index % first.partitions().size());
        final List<String> nodes = new ArrayList<>();
        nodes.add(p.node());
        p.backups().forEach(b -> nodes.add(b.node()));
        return nodes;
    }

    List<String> copies() {
        return copies;
    }

    /** Batch records and bytes (decisions' too) written (each copy counted), for tests and results. */
    long records() {
        return records;
    }

    /** Decision records written, for tests. */
    long decisions() {
        return decisions;
    }

    long bytes() {
        return bytes;
    }

    /** Whether the ring wrapped round (records written may have been overwritten since), for tests. */
    boolean wrapped() {
        return ring.wrapped();
    }

    /**
     * The slots of a region's records, sans-IO: records go at slot boundaries in epoch order, wrapping round, and a
     * slot is reused only when the epoch of the record starting there is at or below the low-water mark (complete at
     * every live node, {@link Epochs#lowWater}): a survivor of this node's death may need any later one.
     */
    static final class Ring {
        /** The epoch whose record starts at each slot (-1: none), to refuse overwriting one still needed. */
        private final long[] slotEpoch;
        private int cursor;
        private boolean wrapped;

        Ring(final int slots) {
            slotEpoch = new long[slots];
            java.util.Arrays.fill(slotEpoch, -1);
        }

        /** The first of {@code slots} slots now holding the record of {@code epoch}; throws when none are free. */
        int claim(final long epoch, final int slots, final long lowWater) {
            if (slots > slotEpoch.length) {
                throw new IllegalStateException("CALVIN input log record of " + slots + " slots exceeds its region of "
                    + slotEpoch.length + " slots");
            }
            final int at = cursor + slots > slotEpoch.length ? 0 : cursor;
            for (int s = at; s < at + slots; s++) {
                if (slotEpoch[s] > lowWater) {
                    throw new IllegalStateException("CALVIN input log region full: slot " + s + " holds "
                        + (slotEpoch[s] == Long.MAX_VALUE ? "the decision of a transaction not finished"
                        : "epoch " + slotEpoch[s]) + ", not yet complete at every node (all complete up to " + lowWater + "), and "
                        + "a survivor may need it; a larger region or reclamation beyond the ring is not built "
                        + "(issue 18)");
                }
            }
            for (int s = at; s < at + slots; s++) {
                slotEpoch[s] = -1;
            }
            slotEpoch[at] = epoch;
            wrapped |= at < cursor;
            cursor = at + slots;
            return at;
        }

        /**
         * The first of {@code slots} slots now holding a decision record, held (never overwritten) until
         * {@link #free}d: survivors need it until its transaction finished everywhere.
         */
        int claimHeld(final int slots, final long lowWater) {
            return claim(Long.MAX_VALUE, slots, lowWater);
        }

        /** The held record starting at {@code slot} may be overwritten now. */
        void free(final int slot) {
            if (slotEpoch[slot] != Long.MAX_VALUE) {
                throw new IllegalStateException("CALVIN input log slot " + slot + " holds no held record");
            }
            slotEpoch[slot] = -1;
        }

        /** Whether a record went back to slot 0 (so older records may have been overwritten). */
        boolean wrapped() {
            return wrapped;
        }
    }

    /**
     * Writes {@code record} (of {@code epoch}) to every copy; completes once every copy is durable. Fails when the
     * region has no room without overwriting a record of an epoch above {@code lowWater} (the newest epoch complete at
     * every live node, {@link Epochs#lowWater}), or when a WRITE fails.
     */
    Future<Void> append(final long epoch, final UnsafeBuffer record, final long lowWater) {
        final int first;
        try {
            first = ring.claim(epoch, (record.capacity() + SLOT_BYTES - 1) / SLOT_BYTES, lowWater);
        } catch (final IllegalStateException full) {
            return Future.failedFuture(full);
        }
        return writeAt(first, record).onSuccess(v -> records++);
    }

    /**
     * Writes a decision record ({@link #encodeDecision}) to every copy, in slots held until {@link #free}d with what
     * this returns (its first slot); completes once every copy is durable.
     */
    Future<Integer> appendDecision(final UnsafeBuffer record, final long lowWater) {
        final int first;
        try {
            first = ring.claimHeld((record.capacity() + SLOT_BYTES - 1) / SLOT_BYTES, lowWater);
        } catch (final IllegalStateException full) {
            return Future.failedFuture(full);
        }
        return writeAt(first, record).map(v -> {
            decisions++;
            return first;
        });
    }

    /** The decision record at {@code slot} ({@link #appendDecision}) is needed no more: its slots may be reused. */
    void free(final int slot) {
        ring.free(slot);
    }

    /** Where copy {@code copy}'s region is ({address, rkey, bytes}), or null when it is not open (yet, or failed). */
    long[] region(final int copy) {
        final Future<long[]> r = regions.get(copy);
        return r.succeeded() ? r.result() : null;
    }

    /**
     * Reads a dead node's log (issue 18 part 3): its first copy whose region is open ({@code log}'s coordinates; the
     * node itself is not asked), by one-sided READs from {@code runtime}'s loop in chunks, then {@link #scanAll}.
     * Every survivor reads the same copy, so all find the same records (the dead node fenced first: nothing more
     * lands).
     */
    static Future<Scan> readDead(final TxnRuntime runtime, final CalvinInputLog log) {
        for (int copy = 0; copy < log.copies.size(); copy++) {
            final long[] r = log.region(copy);
            if (r != null) {
                return readRegion(runtime, log.copies.get(copy), r);
            }
        }
        return Future.succeededFuture(Scan.EMPTY); // none open: its WRITEs wait for an open region, so none landed
    }

    /**
     * Reads the input log of a dead incarnation in another process (cluster nodes, where no survivor holds its
     * {@link CalvinInputLog}): asks each of {@code copies} in order, by {@link RecoveryRpc#INPUT_LOG_FIND}, where the
     * region {@code incarnation} opened there is, and reads the first found as {@link #readDead} does. None found: it
     * logged nothing (it opened its region before its first WRITE, and dispatched nothing logged before every copy's
     * WRITE was durable), so every batch of its is empty. Every survivor asks the same copies in the same order; the
     * dead incarnation is fenced first, so all read the same records.
     */
    static Future<Scan> readDead(final TxnRuntime runtime, final List<String> copies, final String incarnation) {
        final byte[] name = incarnation.getBytes(java.nio.charset.StandardCharsets.UTF_8);
        final UnsafeBuffer request = new UnsafeBuffer(name);
        return findFrom(runtime, copies, 0, request).compose(found -> found == null
            ? Future.succeededFuture(Scan.EMPTY)
            : readRegion(runtime, copies.get((int) found[3]), found));
    }

    /** The first of {@code copies} from {@code copy} on holding the region asked for: {address, rkey, bytes, copy}. */
    private static Future<long[]> findFrom(final TxnRuntime runtime, final List<String> copies, final int copy,
                                           final UnsafeBuffer request) {
        if (copy == copies.size()) {
            return Future.succeededFuture(null);
        }
        final String node = copies.get(copy);
        if (runtime.catalog().removed(node)) {
            // A memory node failed over (issue 18): its copy counts for nothing, as in writeAt, and asking it would
            // fail the read; every serving copy holds every record that was durable.
            return findFrom(runtime, copies, copy + 1, request);
        }
        return runtime.rocket(node).compose(r -> r.call(RecoveryRpc.INPUT_LOG_FIND, request)).compose(reply -> {
            if (reply.length() < RecoveryRpc.LOG_OPEN_REPLY_BYTES) {
                return findFrom(runtime, copies, copy + 1, request);
            }
            final UnsafeBuffer p = reply.payload();
            return Future.succeededFuture(new long[] {p.getLong(0), p.getInt(8), p.getInt(12), copy});
        });
    }

    /** Reads region {@code r} ({address, rkey, bytes}) on {@code node} by one-sided READs, then {@link #scanAll}. */
    private static Future<Scan> readRegion(final TxnRuntime runtime, final String node, final long[] r) {
        final int bytes = (int) r[2];
        final UnsafeBuffer region = new UnsafeBuffer(new byte[bytes]);
        final List<Future<Void>> reads = new ArrayList<>();
        for (int at = 0; at < bytes; at += READ_CHUNK_BYTES) {
            final int offset = at;
            final int length = Math.min(READ_CHUNK_BYTES, bytes - at);
            final io.vertx.core.Promise<Void> done = io.vertx.core.Promise.promise();
            io.scythe.txn.onesided.Verbs.read(runtime.channel(node), r[0] + offset, (int) r[1], region, offset,
                length, (v, failure) -> {
                    if (failure == null) {
                        done.complete();
                    } else {
                        done.fail(failure);
                    }
                });
            reads.add(done.future());
        }
        return Future.all(reads).map(v -> scanAll(region, bytes));
    }

    /** The READ size when a survivor reads a dead node's region. */
    static final int READ_CHUNK_BYTES = 64 * 1024;

    private Future<Void> tookPath(final String name) {
        home.tookPath(name);
        return Future.succeededFuture();
    }

    /**
     * {@code record} WRITTEN at slot {@code first} of every copy. A copy on a memory node the configuration removes
     * (now, or within the failover wait after its WRITE failed: the simulator's {@code --crash-mn}, issue 18) counts
     * for nothing and is not waited for, as a redo record's copy there is not ({@code RedoStep}): the record is durable
     * once every copy that serves has it, at least one.
     */
    private Future<Void> writeAt(final int first, final UnsafeBuffer record) {
        final List<Future<Void>> written = new ArrayList<>(copies.size());
        int serving = 0;
        for (int i = 0; i < copies.size(); i++) {
            final String node = copies.get(i);
            if (home.catalog().removed(node) || home.catalog().incarnationOf(node) != openedIn[i]) {
                // Removed, or back as a replacement process (chaos --mn-faults, helper rcc21): the region this node
                // opened went with the old process (a WRITE to it fails, the node is no longer removed, and the loop
                // gave up), so the copy counts for nothing, as a removed node's; the serving copies hold the record.
                continue;
            }
            serving++;
            written.add(regions.get(i).compose(r -> {
                final io.vertx.core.Promise<Void> done = io.vertx.core.Promise.promise();
                io.scythe.txn.onesided.Verbs.write(home.channel(node), r[0] + (long) first * SLOT_BYTES, (int) r[1],
                    record, 0, record.capacity(), (v, failure) -> {
                        if (failure == null) {
                            done.complete();
                        } else {
                            done.fail(failure);
                        }
                    });
                return done.future();
            }).recover(e -> !io.scythe.txn.onesided.OneSidedTxn.mayBeGone(e) ? Future.<Void>failedFuture(e)
                : home.removedWithin(List.of(node)).compose(gone -> gone ? tookPath(CalvinModule.LOG_COPY_ON_REMOVED_NODE)
                : Future.<Void>failedFuture(e))));
        }
        if (serving == 0) {
            return Future.failedFuture(new IllegalStateException("CALVIN input log: every copy's memory node "
                + copies + " is removed or replaced"));
        }
        final int wrote = serving;
        return Future.all(written).<Void>mapEmpty().onSuccess(v -> bytes += (long) record.capacity() * wrote);
    }

    /**
     * What copy {@code copy} of this log holds now, read straight from the memory node's registered region as it was
     * found when opened (where the fabric keeps memory in this process: the simulator, the embedded cluster): for
     * tests. Once its region is open.
     */
    List<Entry> readBack(final int copy) {
        final long[] r = regions.get(copy).result();
        final io.scythe.fabric.MemoryRegion region = local.get(copies.get(copy));
        if (region == null) {
            throw new IllegalStateException("CALVIN input log region of rkey " + r[1] + " not on " + copies.get(copy));
        }
        return scan(new UnsafeBuffer(region.buffer(), (int) (r[0] - region.address()), regionBytes), regionBytes);
    }

    /** Node {@code from}'s batch of {@code epoch}: the declarations dispatched to each node, by node. */
    static UnsafeBuffer encode(final long epoch, final int from, final List<List<Decl>> byNode) {
        final CalvinWire.Out o = new CalvinWire.Out().u32(MAGIC).u32(0).u64(epoch).u16(from).u16(byNode.size());
        for (final List<Decl> decls : byNode) {
            CalvinWire.decls(o, decls);
        }
        return seal(o, MAGIC);
    }

    /**
     * Node {@code from}'s decision to commit {@code id} at {@code commitTs} with {@code writes} (by node): framed as a
     * batch record (its epoch field the transaction's epoch), {@link #DECISION_MAGIC}, then id u64, commitTs u64, and
     * per node: node u16, n u16, n x (key, kind u8, value).
     */
    static UnsafeBuffer encodeDecision(final long id, final long commitTs, final int from,
                                       final java.util.Map<Integer, List<CalvinWire.Write>> writes) {
        final CalvinWire.Out o = new CalvinWire.Out().u32(DECISION_MAGIC).u32(0).u64((commitTs >>> 32) - 1).u16(from)
            .u16(writes.size()).u64(id).u64(commitTs);
        for (final java.util.Map.Entry<Integer, List<CalvinWire.Write>> e : new java.util.TreeMap<>(writes)
            .entrySet()) {
            o.u16(e.getKey()).u16(e.getValue().size());
            for (final CalvinWire.Write w : e.getValue()) {
                o.key(w.key()).u8(w.kind()).bytes(w.value());
            }
        }
        return seal(o, DECISION_MAGIC);
    }

    private static UnsafeBuffer seal(final CalvinWire.Out o, final int magic) {
        final int length = o.at + TRAILER_BYTES;
        o.buffer.putInt(4, length);
        final CRC32 crc = new CRC32();
        for (int i = 0; i < o.at; i++) {
            crc.update(o.buffer.getByte(i));
        }
        o.u32((int) crc.getValue()).u32(~magic);
        return o.done();
    }

    /** The decision record at {@code offset} of {@code region}, or null when none complete is there. */
    static Decision decodeDecision(final DirectBuffer region, final int offset, final int limit) {
        final CalvinWire.In in = framed(region, offset, limit, DECISION_MAGIC);
        if (in == null) {
            return null;
        }
        in.u64(); // the epoch
        final int from = in.u16();
        final int n = in.u16();
        final long id = in.u64();
        final long commitTs = in.u64();
        final java.util.Map<Integer, List<CalvinWire.Write>> writes = new java.util.TreeMap<>();
        for (int i = 0; i < n; i++) {
            final int node = in.u16();
            final int count = in.u16();
            final List<CalvinWire.Write> w = new ArrayList<>(count);
            for (int j = 0; j < count; j++) {
                w.add(new CalvinWire.Write(in.key(), (byte) in.u8(), in.bytes()));
            }
            writes.put(node, w);
        }
        return new Decision(id, commitTs, from, writes);
    }

    /** The body (after magic and length) of a complete record of {@code magic} at {@code offset}, or null. */
    private static CalvinWire.In framed(final DirectBuffer region, final int offset, final int limit, final int magic) {
        if (offset + HEADER_BYTES + TRAILER_BYTES > limit || region.getInt(offset) != magic) {
            return null;
        }
        final int length = region.getInt(offset + 4);
        if (length < HEADER_BYTES + TRAILER_BYTES || offset + length > limit) {
            return null;
        }
        final CRC32 crc = new CRC32();
        for (int i = offset; i < offset + length - TRAILER_BYTES; i++) {
            crc.update(region.getByte(i));
        }
        if ((int) crc.getValue() != region.getInt(offset + length - TRAILER_BYTES)
            || region.getInt(offset + length - 4) != ~magic) {
            return null;
        }
        return new CalvinWire.In(region, offset + 8, length - 8 - TRAILER_BYTES);
    }

    /** Every complete batch record (by epoch) and decision record (by transaction) of a region of {@code limit}. */
    static Scan scanAll(final DirectBuffer region, final int limit) {
        final java.util.TreeMap<Long, Entry> batches = new java.util.TreeMap<>();
        final java.util.Map<Long, Decision> decisions = new java.util.HashMap<>();
        for (int offset = 0; offset < limit; offset += SLOT_BYTES) {
            final Entry e = decode(region, offset, limit);
            if (e != null) {
                batches.putIfAbsent(e.epoch(), e);
                continue;
            }
            final Decision d = decodeDecision(region, offset, limit);
            if (d != null) {
                decisions.putIfAbsent(d.id(), d);
            }
        }
        return new Scan(batches, decisions);
    }

    /** The record at {@code offset} of {@code region} (of {@code limit} bytes), or null when none complete is there. */
    static Entry decode(final DirectBuffer region, final int offset, final int limit) {
        final CalvinWire.In body = framed(region, offset, limit, MAGIC);
        if (body == null) {
            return null;
        }
        return decodeBody(body);
    }

    private static Entry decodeBody(final CalvinWire.In in) { // after magic and length
        final long epoch = in.u64();
        final int from = in.u16();
        final int nodes = in.u16();
        final List<List<Decl>> byNode = new ArrayList<>(nodes);
        for (int d = 0; d < nodes; d++) {
            byNode.add(CalvinWire.readBatch(in));
        }
        return new Entry(epoch, from, byNode);
    }

    /** Every complete batch record of a region of {@code limit} bytes, by epoch (a record found twice, once). */
    static List<Entry> scan(final DirectBuffer region, final int limit) {
        return List.copyOf(scanAll(region, limit).batches().values());
    }
}
