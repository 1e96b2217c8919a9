package io.scythe.storage.mv;

import io.scythe.bridge.Doorbell;
import io.scythe.bridge.RdmaChannel;
import io.scythe.rrpc.RpcReply;
import io.scythe.rrpc.Rocket;
import io.scythe.storage.ObjectLayout;
import io.scythe.storage.VersionLayout;
import io.scythe.storage.remote.RemoteTable;
import io.vertx.core.Future;
import org.agrona.DirectBuffer;
import org.agrona.collections.Long2LongHashMap;
import org.agrona.concurrent.UnsafeBuffer;

import java.util.function.Supplier;

import static io.scythe.storage.mv.MvSlotDescriptor.ABORTED;
import static io.scythe.storage.mv.MvSlotDescriptor.COMMITTED;
import static io.scythe.storage.mv.MvSlotDescriptor.PENDING;
import static io.scythe.storage.mv.MvSlotDescriptor.head;
import static io.scythe.storage.mv.MvSlotDescriptor.state;
import static io.scythe.storage.mv.MvSlotDescriptor.wts;

/**
 * A multi-version table as one compute-node event loop reaches it: every operation one-sided (the verbs and their
 * order are in the package documentation), and the same operations by RPC ({@link MvRpc}) for protocols that run a
 * stage two-sided; the two may be mixed per operation. Loop-confined; results are Futures of a non-negative value
 * or an {@link MvStatus} code, never exceptions for outcomes of timestamp ordering.
 */
public final class MvRemoteTable {
    private final MvTableDescriptor table;
    private final Supplier<Future<RdmaChannel>> channel;
    private final Supplier<Future<Rocket>> rocket;
    private final RemoteTable index;
    private final MvObject view;
    private final int objectBytes;
    private final int slotBytes;
    private final int rkey;
    /** Per object, a read timestamp an atomic found it at or above: the next raise's guess, or proof enough. */
    private final Long2LongHashMap rtsSeen = new Long2LongHashMap(0);
    private long reads;
    private long atomics;
    private long writes;
    private long rpcs;
    private long raiseRetries;

    /**
     * @param channel this loop's one-sided channel to the table's memory node
     * @param rocket  this loop's RRPC Rocket to it
     */
    public MvRemoteTable(final MvTableDescriptor table, final Supplier<Future<RdmaChannel>> channel,
                         final Supplier<Future<Rocket>> rocket) {
        this.table = table;
        this.channel = channel;
        this.rocket = rocket;
        this.index = new RemoteTable(table.indexDescriptor(), channel, rocket);
        this.view = new MvObject(table.schema().inlineSlots(), table.schema().maxValueBytes());
        this.objectBytes = table.objectBytes();
        this.slotBytes = MvSlotDescriptor.slotBytes(table.schema().maxValueBytes());
        this.rkey = table.objects().rkey();
    }

    public MvTableDescriptor descriptor() {
        return table;
    }

    private long address(final long pointer, final int offsetInObject) {
        return (pointer & ObjectLayout.ADDRESS_MASK) + offsetInObject;
    }

    // ------------------------------------------------------------------------------------------------ lookups

    /** The object pointer of {@code key} (0 if absent): cached, else one-sided READs of the table's LogDB index. */
    public Future<Long> lookup(final long key) {
        return index.lookup(key, RemoteTable.LookupMode.ONE_SIDED);
    }

    /** The object pointer of {@code key} (0 if absent) by one LOOKUP RPC, uncached. */
    public Future<Long> lookupRpc(final long key) {
        final UnsafeBuffer request = request(MvRpc.POINTER_REQUEST_BYTES);
        request.putLong(8, key);
        return call(MvRpc.LOOKUP, request).map(reply -> reply.payload().getLong(0));
    }

    // ------------------------------------------------------------------------------------------------ reads

    /**
     * Reads the version visible at {@code ts} one-sided, as a read that counts: the object's rts is raised to
     * {@code ts} by a CAS doorbell-batched with the READ of the object (retried with the value found until it holds),
     * or not at all when an earlier atomic already found it there; then the image decides, and the overflow chain is
     * READ record by record when it must.
     */
    public Future<MvRead> read(final long pointer, final long ts) {
        final UnsafeBuffer image = new UnsafeBuffer(new byte[objectBytes]);
        return channel.get().compose(ch -> raiseAndRead(ch, pointer, ts, image, rtsSeen.get(pointer)));
    }

    /** What {@link #read} would find now, from one READ, raising nothing: a probe that claims no read. */
    public Future<MvRead> peek(final long pointer, final long ts) {
        final UnsafeBuffer image = new UnsafeBuffer(new byte[objectBytes]);
        return channel.get().compose(ch -> {
            reads++;
            return ch.read(address(pointer, 0), rkey, image, 0, objectBytes).compose(v -> decide(ch, ts, image));
        });
    }

    private Future<MvRead> raiseAndRead(final RdmaChannel ch, final long pointer, final long ts,
                                        final UnsafeBuffer image, final long expected) {
        if (expected >= ts) {
            // An atomic already found rts at or above ts, and rts only grows: this READ is ordered after that raise.
            reads++;
            return ch.read(address(pointer, 0), rkey, image, 0, objectBytes).compose(v -> decide(ch, ts, image));
        }
        final Doorbell batch = ch.doorbell();
        final int cas = batch.compareAndSwap(address(pointer, MvObjectDescriptor.RTS_OFFSET), rkey, expected, ts);
        batch.read(address(pointer, 0), rkey, image, 0, objectBytes); // executes after the CAS (fenced on hardware)
        atomics++;
        reads++;
        return batch.post().compose(b -> {
            final long found = b.result(cas);
            if (found == expected || found >= ts) {
                seen(pointer, Math.max(found, ts));
                return decide(ch, ts, image);
            }
            raiseRetries++; // another reader raised it meanwhile, below ts: the image may predate our raise
            return raiseAndRead(ch, pointer, ts, image, found);
        });
    }

    private void seen(final long pointer, final long rts) {
        if (rts > rtsSeen.get(pointer)) {
            rtsSeen.put(pointer, rts);
        }
    }

    private Future<MvRead> decide(final RdmaChannel ch, final long ts, final UnsafeBuffer image) {
        view.wrap(image, 0);
        final int slot = view.find(ts);
        final long head = view.foundHead();
        final long chain = table.versions() == null ? 0 : view.chainToSearch();
        if (chain != 0) {
            // Not bounded by the image's overflowWts: the READ may have copied it before a move and the chain's
            // head after. The chain itself only ever descends.
            return walk(ch, chain, ts, slot, head, image, Long.MAX_VALUE);
        }
        return Future.succeededFuture(fromSlot(image, slot, head));
    }

    private MvRead fromSlot(final UnsafeBuffer image, final int slot, final long head) {
        if (slot == MvObject.NONE) {
            return new MvRead(MvStatus.NOT_VISIBLE, 0, MvRead.OVERFLOW, null);
        }
        if (state(head) == PENDING) {
            return new MvRead(MvStatus.PENDING, wts(head), slot, null);
        }
        view.wrap(image, 0);
        final int length = view.valueLength(slot);
        return new MvRead(length, wts(head), slot, new UnsafeBuffer(image, view.valueOffset(slot), length));
    }

    /** READs the chain from {@code address} down to the first record at or below {@code ts}. */
    private Future<MvRead> walk(final RdmaChannel ch, final long address, final long ts, final int slot,
                                final long head, final UnsafeBuffer image, final long above) {
        final UnsafeBuffer record = new UnsafeBuffer(new byte[table.versionRecordBytes()]);
        reads++;
        return ch.read(address, table.versions().rkey(), record, 0, record.capacity()).compose(v -> {
            final long version = record.getLong(VersionLayout.VERSION_OFFSET);
            final int length = record.getInt(VersionLayout.VALUE_LENGTH_OFFSET);
            if (version >= above || length < 0 || length > table.schema().maxValueBytes()) {
                // Records are immutable while a reader at or above the horizon can reach them: this one was freed.
                return Future.failedFuture(new IllegalStateException("overflow chain of " + table.schema().name()
                    + " broken at record " + address + " (version " + version + " after one of " + above
                    + "): a read below the reclamation horizon?"));
            }
            if (version <= ts) {
                if (slot == MvObject.NONE || version > wts(head)) {
                    return Future.succeededFuture(new MvRead(length, version, MvRead.OVERFLOW,
                        new UnsafeBuffer(record, VersionLayout.VALUE_OFFSET, length)));
                }
                return Future.succeededFuture(fromSlot(image, slot, head));
            }
            final long older = record.getLong(VersionLayout.OLDER_OFFSET) & ObjectLayout.ADDRESS_MASK;
            return older == 0 ? Future.succeededFuture(fromSlot(image, slot, head))
                : walk(ch, older, ts, slot, head, image, version);
        });
    }

    // ------------------------------------------------------------------------------------------------ writes

    /**
     * Installs a pending version at {@code ts} for {@code owner} one-sided, with {@code value} or none yet when
     * {@code length} is negative (pre-attached). Two doorbells: CAS the latch and READ the object; then WRITE the
     * slot's body, WRITE its head (pending), FAA 0 on rts (an atomic read after the version is published) and CAS the
     * latch free. If that rts is at or above {@code ts} a reader got there first: a third WRITE rolls the version
     * back ({@link MvStatus#TOO_LATE}). When no slot is free the install goes to the memory node by RPC instead, which
     * moves a version to the overflow chain and installs in one round trip.
     *
     * @return the slot, or an {@link MvStatus} code ({@link MvStatus#LATCHED}: another installer holds the object)
     */
    public Future<Integer> install(final long pointer, final long ts, final long owner, final DirectBuffer value,
                                   final int offset, final int length, final boolean exclusive) {
        checkInstall(ts, owner);
        if (length >= 0 && !table.schema().lengthOk(length)) {
            return Future.succeededFuture(MvStatus.BAD_LENGTH);
        }
        final UnsafeBuffer image = new UnsafeBuffer(new byte[objectBytes]);
        return channel.get().compose(ch -> {
            final Doorbell latch = ch.doorbell();
            final int cas = latch.compareAndSwap(address(pointer, MvObjectDescriptor.LATCH_OFFSET), rkey, 0, owner);
            latch.read(address(pointer, 0), rkey, image, 0, objectBytes);
            atomics++;
            reads++;
            return latch.post().compose(b -> {
                if (b.result(cas) != 0) {
                    return Future.succeededFuture(MvStatus.LATCHED);
                }
                final int slot = view.wrap(image, 0).installSlot(ts, exclusive);
                if (slot == MvStatus.FULL) {
                    return unlatch(ch, pointer, owner).compose(v -> installRpc(pointer, ts, owner, value, offset,
                        length, exclusive));
                }
                if (slot < 0) {
                    return unlatch(ch, pointer, owner).map(slot);
                }
                return publish(ch, pointer, ts, owner, value, offset, length, slot, image);
            });
        });
    }

    private Future<Integer> publish(final RdmaChannel ch, final long pointer, final long ts, final long owner,
                                    final DirectBuffer value, final int offset, final int length, final int slot,
                                    final UnsafeBuffer image) {
        view.wrap(image, 0).fillSlot(slot, owner, value, offset, length, length >= 0 ? head(COMMITTED, ts) : 0);
        final int body = view.slotOffset(slot) + MvSlotDescriptor.OWNER_OFFSET;
        final int headAt = view.headAt(slot);
        image.putLong(headAt, head(PENDING, ts));
        final Doorbell batch = ch.doorbell();
        batch.write(address(pointer, body), rkey, image, body, slotBytes - MvSlotDescriptor.OWNER_OFFSET);
        batch.write(address(pointer, headAt), rkey, image, headAt, Long.BYTES);
        final int faa = batch.fetchAndAdd(address(pointer, MvObjectDescriptor.RTS_OFFSET), rkey, 0);
        batch.compareAndSwap(address(pointer, MvObjectDescriptor.LATCH_OFFSET), rkey, owner, 0);
        writes += 2;
        atomics += 2;
        return batch.post().compose(b -> {
            final long rts = b.result(faa);
            seen(pointer, rts);
            if (rts < ts) {
                return Future.succeededFuture(slot);
            }
            return writeHead(ch, pointer, slot, head(ABORTED, ts)).map(MvStatus.TOO_LATE);
        });
    }

    private Future<Void> unlatch(final RdmaChannel ch, final long pointer, final long owner) {
        atomics++;
        return ch.compareAndSwap(address(pointer, MvObjectDescriptor.LATCH_OFFSET), rkey, owner, 0).mapEmpty();
    }

    /**
     * Commits the pending version at {@code ts} in {@code slot} one-sided: WRITE the value and tail (when
     * {@code length} is non-negative: a pre-attached version's value, or a new one), then WRITE the head; one
     * doorbell, executed in order. Only the installer commits its version, and nobody else writes a pending slot.
     */
    public Future<Void> commit(final long pointer, final int slot, final long ts, final DirectBuffer value,
                               final int offset, final int length) {
        if (length >= 0 && !table.schema().lengthOk(length)) {
            return Future.failedFuture(new IllegalArgumentException("value of " + length + " bytes for "
                + table.schema().name()));
        }
        return channel.get().compose(ch -> {
            final int slotAt = MvObjectDescriptor.slotOffset(slot, table.schema().maxValueBytes());
            final UnsafeBuffer bytes = new UnsafeBuffer(new byte[slotBytes]);
            bytes.putLong(MvSlotDescriptor.HEAD_OFFSET, head(COMMITTED, ts));
            final Doorbell batch = ch.doorbell();
            if (length >= 0) {
                final int tail = MvSlotDescriptor.tailOffset(table.schema().maxValueBytes());
                bytes.putInt(MvSlotDescriptor.VALUE_LENGTH_OFFSET, length);
                bytes.putBytes(MvSlotDescriptor.VALUE_OFFSET, value, offset, length);
                bytes.putLong(tail, head(COMMITTED, ts));
                batch.write(address(pointer, slotAt + MvSlotDescriptor.VALUE_LENGTH_OFFSET), rkey, bytes,
                    MvSlotDescriptor.VALUE_LENGTH_OFFSET, tail + Long.BYTES - MvSlotDescriptor.VALUE_LENGTH_OFFSET);
                writes++;
            }
            batch.write(address(pointer, slotAt), rkey, bytes, MvSlotDescriptor.HEAD_OFFSET, Long.BYTES);
            writes++;
            return batch.post().mapEmpty();
        });
    }

    /** Rolls back the pending version at {@code ts} in {@code slot} one-sided: one WRITE of its head. */
    public Future<Void> rollback(final long pointer, final int slot, final long ts) {
        return channel.get().compose(ch -> writeHead(ch, pointer, slot, head(ABORTED, ts)));
    }

    private Future<Void> writeHead(final RdmaChannel ch, final long pointer, final int slot, final long head) {
        final UnsafeBuffer word = new UnsafeBuffer(new byte[Long.BYTES]);
        word.putLong(0, head);
        writes++;
        return ch.write(address(pointer, MvObjectDescriptor.slotOffset(slot, table.schema().maxValueBytes())), rkey,
            word, 0, Long.BYTES);
    }

    private static void checkInstall(final long ts, final long owner) {
        if (owner == 0 || owner == MvObjectDescriptor.MEMORY_NODE_OWNER) {
            throw new IllegalArgumentException("owner=" + owner + " is reserved (0 free, -1 the memory node)");
        }
        head(PENDING, ts); // checks the timestamp's range
    }

    // ------------------------------------------------------------------------------------------------ RPCs

    private UnsafeBuffer request(final int bytes) {
        final UnsafeBuffer request = new UnsafeBuffer(new byte[bytes]); // the call may wait for the Rocket to open
        request.putInt(0, table.schema().id());
        return request;
    }

    /**
     * A request of {@code header} bytes followed by the value, if any ({@code length >= 0}): the value flag set and
     * the value's length in the header's last word, as INSTALL and COMMIT take them.
     */
    private UnsafeBuffer withValue(final int header, final DirectBuffer value, final int offset, final int length) {
        final UnsafeBuffer request = request(header + Math.max(length, 0));
        request.putInt(4, length >= 0 ? MvRpc.FLAG_VALUE : 0);
        request.putInt(header - Integer.BYTES, Math.max(length, 0));
        if (length > 0) {
            request.putBytes(header, value, offset, length);
        }
        return request;
    }

    private Future<RpcReply> call(final int rpcId, final UnsafeBuffer request) {
        rpcs++;
        // The Rocket wakes its own loop's bridge after it posts a call (a quiet loop would not see the reply land).
        return rocket.get().compose(r -> r.call(rpcId, request, 0, request.capacity()));
    }

    private static int status(final RpcReply reply) {
        return reply.payload().getInt(0);
    }

    /** {@link MvTable#read} by RPC: the memory node raises rts (when {@code raiseRts}) and reads in one handler. */
    public Future<MvRead> readRpc(final long pointer, final long ts, final boolean raiseRts) {
        final UnsafeBuffer request = request(MvRpc.READ_REQUEST_BYTES);
        request.putInt(4, raiseRts ? MvRpc.FLAG_RAISE_RTS : 0);
        request.putLong(8, pointer);
        request.putLong(16, ts);
        return call(MvRpc.READ, request).map(reply -> {
            final UnsafeBuffer payload = reply.payload();
            final int status = payload.getInt(0);
            final UnsafeBuffer value = status < 0 ? null : new UnsafeBuffer(new byte[status]);
            if (value != null) {
                value.putBytes(0, payload, MvRpc.READ_REPLY_HEADER_BYTES, status);
            }
            return new MvRead(status, payload.getLong(8), payload.getInt(4), value);
        });
    }

    /** {@link MvTable#install} by RPC. */
    public Future<Integer> installRpc(final long pointer, final long ts, final long owner, final DirectBuffer value,
                                      final int offset, final int length, final boolean exclusive) {
        checkInstall(ts, owner);
        final UnsafeBuffer request = withValue(MvRpc.INSTALL_HEADER_BYTES, value, offset, length);
        request.putInt(4, request.getInt(4) | (exclusive ? MvRpc.FLAG_EXCLUSIVE : 0));
        request.putLong(8, pointer);
        request.putLong(16, ts);
        request.putLong(24, owner);
        return call(MvRpc.INSTALL, request).map(MvRemoteTable::status);
    }

    /** {@link MvTable#commit} by RPC. */
    public Future<Integer> commitRpc(final long pointer, final int slot, final long ts, final DirectBuffer value,
                                     final int offset, final int length) {
        final UnsafeBuffer request = withValue(MvRpc.COMMIT_HEADER_BYTES, value, offset, length);
        request.putLong(8, pointer);
        request.putLong(16, ts);
        request.putInt(24, slot);
        return call(MvRpc.COMMIT, request).map(MvRemoteTable::status);
    }

    /** {@link MvTable#rollback} by RPC. */
    public Future<Integer> rollbackRpc(final long pointer, final int slot, final long ts) {
        final UnsafeBuffer request = request(MvRpc.ROLLBACK_REQUEST_BYTES);
        request.putLong(8, pointer);
        request.putLong(16, ts);
        request.putInt(24, slot);
        return call(MvRpc.ROLLBACK, request).map(MvRemoteTable::status);
    }

    /** {@link MvTable#makeRoom} by RPC: frees a slot of the object, moving a version to the overflow chain. */
    public Future<Integer> makeRoom(final long pointer) {
        final UnsafeBuffer request = request(MvRpc.POINTER_REQUEST_BYTES);
        request.putLong(8, pointer);
        return call(MvRpc.MAKE_ROOM, request).map(MvRemoteTable::status);
    }

    // ------------------------------------------------------------------------------------------------ counters

    /** READs posted (objects, overflow records). */
    public long reads() {
        return reads;
    }

    /** CAS and FAA posted. */
    public long atomics() {
        return atomics;
    }

    /** WRITEs posted. */
    public long writes() {
        return writes;
    }

    /** RPCs called. */
    public long rpcs() {
        return rpcs;
    }

    /** Raise CASes that found another value below the timestamp and were posted again. */
    public long raiseRetries() {
        return raiseRetries;
    }
}
