package io.scythe.txn.recovery;

import io.scythe.bridge.Bridge;
import io.scythe.fabric.MemoryKind;
import io.scythe.fabric.MemoryRegion;
import io.scythe.rrpc.RpcException;
import io.scythe.rrpc.RpcRequest;
import io.scythe.rrpc.RpcResponder;
import io.scythe.rrpc.RpcServer;
import io.scythe.storage.LogDb;
import io.scythe.storage.ObjectLayout;
import io.scythe.storage.Table;
import io.scythe.storage.remote.LogDbService;
import io.scythe.txn.spi.MemoryNodeContext;
import io.vertx.core.Future;
import org.agrona.concurrent.AtomicBuffer;
import org.agrona.concurrent.UnsafeBuffer;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.Iterator;
import java.util.List;
import java.util.Map;

/**
 * A memory node's side of redo logging and CN-failure recovery ({@link RecoveryRpc}): registers the compute nodes'
 * log regions, knows which inserts are still locked by whom, and on {@link RecoveryRpc#RELEASE_NODE} releases
 * everything a dead compute node held: the protocol modules' release steps ({@link #onDeadNode}: Scythe's tickets,
 * FORD's CAS words) around its locked inserts. Both listing and releasing fence the dead node on this memory node
 * first, so nothing it sent can land afterwards, and admit one recoverer per dead node at a time
 * ({@link RecoveryRpc}). Runs on the RPC server's loop, with the LogDB service of the same server.
 */
public final class RecoveryService {
    /** Largest log region a loop may ask for. */
    public static final int MAX_REGION_BYTES = 64 << 20;
    /** How the names of the log regions this service registers begin ({@link #logRegion}). */
    public static final String LOG_REGION_PREFIX = "redo.";
    /** How the names of the input-log regions this service registers begin ({@link RecoveryRpc#KIND_INPUT_LOG}). */
    public static final String INPUT_LOG_REGION_PREFIX = "input.";

    private final LogDb db;
    private final List<Step> steps = new ArrayList<>();
    private final Map<String, List<LogRegion>> regions = new HashMap<>();
    private final Map<String, List<LockedInsert>> inserts = new HashMap<>();
    /** The compute node recovering each dead node here, from its first LOG_LIST or RELEASE_NODE to its release. */
    private final Map<String, Recovery> recovering = new HashMap<>();
    private final UnsafeBuffer reply = new UnsafeBuffer(new byte[4096]);
    private long released;

    private record LogRegion(MemoryRegion region, long idBase) {
    }

    private record Step(MemoryNodeContext.Phase phase, String counted, MemoryNodeContext.DeadNodeStep release) {
    }

    private record Recovery(String recoverer, long claim) {
    }

    private record LockedInsert(Table table, long key, long pointer, Table.InsertLock lock, long lockWord,
                                long ticket) {
    }

    public RecoveryService(final LogDb db) {
        this.db = db;
    }

    /** Serves the recovery RPCs on {@code server} and hooks into the node's LogDB service. */
    public RecoveryService register(final RpcServer server, final LogDbService logDb) {
        server.handle(RecoveryRpc.LOG_OPEN, this::open);
        server.handle(RecoveryRpc.LOG_LIST, this::list);
        server.handle(RecoveryRpc.RELEASE_NODE, this::release);
        server.handle(RecoveryRpc.INPUT_LOG_FIND, this::findInputLog);
        logDb.observeInserts(this::lockedInsert);
        return this;
    }

    /**
     * Told, on this node's loop, each time the release of a dead compute node ran here (its fabric identity and id
     * prefixes; the steps ran, nothing of it lands any more), or null: what the host publishes to the compute nodes
     * ({@code MemoryNodeServices#onReleased}).
     */
    private java.util.function.BiConsumer<String, long[]> onReleased;

    /** Tells {@code listener} of every release of a dead compute node from now on (one listener). */
    public void onReleased(final java.util.function.BiConsumer<String, long[]> listener) {
        this.onReleased = listener;
    }

    /** Adds a protocol module's step to every release of a dead compute node ({@link MemoryNodeContext#onDeadNode}). */
    public void onDeadNode(final MemoryNodeContext.Phase phase, final String counted,
                           final MemoryNodeContext.DeadNodeStep release) {
        steps.add(new Step(phase, counted, release));
    }

    private int[] runSteps(final MemoryNodeContext.Phase phase, final String node, final long[] idPrefixes,
                           final int[] counts) {
        for (int i = 0; i < steps.size(); i++) {
            if (steps.get(i).phase == phase) {
                counts[i] = steps.get(i).release.release(node, idPrefixes);
            }
        }
        return counts;
    }

    private void lockedInsert(final String client, final Table table, final long key, final long pointer,
                              final Table.InsertLock lock, final long lockWord, final long ticket) {
        final List<LockedInsert> mine = inserts.computeIfAbsent(client, c -> new ArrayList<>());
        if (mine.size() >= 64) {
            mine.removeIf(i -> !stillLocked(i)); // committed or abandoned since: forget them
        }
        mine.add(new LockedInsert(table, key, pointer, lock, lockWord, ticket));
    }

    private static boolean stillLocked(final LockedInsert i) {
        final int at = i.table.offsetOf(i.pointer);
        if (at < 0) {
            return false;
        }
        final AtomicBuffer m = i.table.objectMemory();
        return i.lock == Table.InsertLock.CAS_WORD
            ? m.getLongVolatile(at + ObjectLayout.CAS_LOCK_OFFSET) == i.lockWord
            : m.getLongVolatile(at + ObjectLayout.UPPER_OFFSET) == i.ticket;
    }

    private void open(final RpcRequest request, final RpcResponder responder) {
        final int length = request.payloadLength();
        if (length != RecoveryRpc.LOG_OPEN_REQUEST_BYTES && length != RecoveryRpc.LOG_OPEN_KIND_REQUEST_BYTES) {
            responder.fail(RecoveryRpc.BAD_REQUEST, "LOG_OPEN takes " + RecoveryRpc.LOG_OPEN_REQUEST_BYTES + " or "
                + RecoveryRpc.LOG_OPEN_KIND_REQUEST_BYTES + " bytes, got " + length);
            return;
        }
        final long idBase = request.payload().getLong(request.payloadOffset());
        final int bytes = request.payload().getInt(request.payloadOffset() + 8);
        final int kind = length == RecoveryRpc.LOG_OPEN_REQUEST_BYTES ? RecoveryRpc.KIND_REDO
            : request.payload().getInt(request.payloadOffset() + 12);
        if (kind != RecoveryRpc.KIND_REDO && kind != RecoveryRpc.KIND_INPUT_LOG) {
            responder.fail(RecoveryRpc.BAD_REQUEST, "LOG_OPEN of unknown kind " + kind);
            return;
        }
        if (bytes < RedoRecordDescriptor.SLOT_BYTES || bytes > MAX_REGION_BYTES
            || bytes % RedoRecordDescriptor.SLOT_BYTES != 0) {
            responder.fail(RecoveryRpc.BAD_REQUEST, "log region of " + bytes + " bytes (a multiple of "
                + RedoRecordDescriptor.SLOT_BYTES + " up to " + MAX_REGION_BYTES + ")");
            return;
        }
        final boolean redo = kind == RecoveryRpc.KIND_REDO;
        final MemoryRegion region;
        try {
            region = db.nic().register((redo ? LOG_REGION_PREFIX : INPUT_LOG_REGION_PREFIX) + request.client() + "."
                + Long.toHexString(idBase), bytes, MemoryKind.HOST);
        } catch (final RuntimeException e) {
            responder.fail(RecoveryRpc.NO_SPACE, "log region of " + bytes + " bytes for " + request.client()
                + ": " + e.getMessage());
            return;
        }
        if (redo) { // an input log is neither listed nor released: survivors read it after the node's release
            regions.computeIfAbsent(request.client(), c -> new ArrayList<>()).add(new LogRegion(region, idBase));
        }
        reply.putLong(0, region.address());
        reply.putInt(8, region.rkey());
        reply.putInt(12, bytes);
        responder.reply(reply, 0, RecoveryRpc.LOG_OPEN_REPLY_BYTES);
    }

    /** {@link RecoveryRpc#INPUT_LOG_FIND}: where the input-log region the named incarnation opened here is, if any. */
    private void findInputLog(final RpcRequest request, final RpcResponder responder) {
        final int length = request.payloadLength();
        if (length < 1 || length > RecoveryRpc.MAX_NODE_NAME_BYTES) {
            responder.fail(RecoveryRpc.BAD_REQUEST, "INPUT_LOG_FIND takes a node name of 1 to "
                + RecoveryRpc.MAX_NODE_NAME_BYTES + " bytes, got " + length);
            return;
        }
        final byte[] name = new byte[length];
        request.payload().getBytes(request.payloadOffset(), name);
        final String prefix = INPUT_LOG_REGION_PREFIX + new String(name, java.nio.charset.StandardCharsets.UTF_8)
            + ".";
        for (final MemoryRegion r : db.nic().regions()) {
            if (r.isRegistered() && r.name().startsWith(prefix)) {
                reply.putLong(0, r.address());
                reply.putInt(8, r.rkey());
                reply.putInt(12, (int) r.length());
                responder.reply(reply, 0, RecoveryRpc.LOG_OPEN_REPLY_BYTES);
                return;
            }
        }
        responder.reply();
    }

    /**
     * The registered log region of {@code rkey} on {@code nic} (one this service opened for a compute node's loop),
     * or {@code null}: where a protocol that logs by RPC (RCC's LOG) copies a record its coordinator would otherwise
     * WRITE.
     */
    public static MemoryRegion logRegion(final io.scythe.fabric.Nic nic, final int rkey) {
        return region(nic, rkey, LOG_REGION_PREFIX);
    }

    /** The registered input-log region of {@code rkey} on {@code nic} ({@link RecoveryRpc#KIND_INPUT_LOG}), or null. */
    public static MemoryRegion inputLogRegion(final io.scythe.fabric.Nic nic, final int rkey) {
        return region(nic, rkey, INPUT_LOG_REGION_PREFIX);
    }

    private static MemoryRegion region(final io.scythe.fabric.Nic nic, final int rkey, final String prefix) {
        for (final MemoryRegion r : nic.regions()) {
            if (r.rkey() == rkey && r.isRegistered() && r.name().startsWith(prefix)) {
                return r;
            }
        }
        return null;
    }

    private String nodeOf(final RpcRequest request, final RpcResponder responder, final int skip) {
        final int length = request.payloadLength() - skip;
        if (length < 1 || length > RecoveryRpc.MAX_NODE_NAME_BYTES) {
            responder.fail(RecoveryRpc.BAD_REQUEST, "node name of " + length + " bytes");
            return null;
        }
        final byte[] name = new byte[length];
        request.payload().getBytes(request.payloadOffset() + skip, name);
        final String node = new String(name, StandardCharsets.UTF_8);
        if (node.equals(request.client())) {
            responder.fail(RecoveryRpc.BAD_REQUEST, "node " + node + " cannot recover itself");
            return null;
        }
        return node;
    }

    private void list(final RpcRequest request, final RpcResponder responder) {
        if (request.payloadLength() < RecoveryRpc.LIST_REQUEST_HEADER_BYTES) {
            responder.fail(RecoveryRpc.BAD_REQUEST, "malformed LOG_LIST");
            return;
        }
        final String node = nodeOf(request, responder, RecoveryRpc.LIST_REQUEST_HEADER_BYTES);
        if (node == null) {
            return;
        }
        final long claim = request.payload().getLong(request.payloadOffset());
        fenceAndAdmit(node, request.client(), claim, responder, () -> listFenced(node, responder));
    }

    /**
     * Fences dead {@code node} and runs {@code then} once nothing of it can land any more, if {@code client} is (or
     * may become) its one recoverer here: the first to ask, the same again, or one with a claim no smaller once the
     * previous recoverer is fenced too (then also once nothing of that one can land). Otherwise refuses.
     */
    private void fenceAndAdmit(final String node, final String client, final long claim,
                               final RpcResponder responder, final Runnable then) {
        final Recovery current = recovering.get(node);
        Future<Void> previousGone = Future.succeededFuture();
        if (current == null || current.recoverer.equals(client)) {
            recovering.put(node, new Recovery(client, current == null ? claim : Math.max(claim, current.claim)));
        } else if (claim >= current.claim && db.nic().isFenced(current.recoverer)) {
            // An equal claim from another CN is admitted too once the current recoverer is fenced: the owed map is
            // the claims' arbiter, and Hazelcast can lose an entry when the member owning its partition dies during a
            // migration (CI 207: cnB's claim 1 vanished with cnB, the entry was owed again with claim 0, and cnC's
            // claim 1 was refused for good). Only a fenced recoverer can share a claim number, so nothing of it lands.

            recovering.put(node, new Recovery(client, claim));
            previousGone = db.nic().fenceBarrier(current.recoverer);
        } else {
            responder.fail(RecoveryRpc.RECOVERY_BUSY, node + " is being recovered by " + current.recoverer + " (claim "
                + current.claim + "), which is not fenced here; refused " + client + " (claim " + claim + ")");
            return;
        }
        db.nic().fence(node);
        // A barrier may complete on a fabric's own thread (shm's connection manager, once a verb the dead node was
        // inside is waited out): what follows touches this service's maps, the tables and the responder, which are
        // this loop's, so it runs back on the loop that took the request.
        final Bridge loop = Bridge.currentOrNull();
        Future.all(previousGone, db.nic().fenceBarrier(node)).onComplete(barrier -> {
            final Runnable admitted = () -> admitted(node, barrier.failed() ? barrier.cause() : null, responder, then);
            if (loop != null) {
                loop.execute(admitted);
            } else {
                admitted.run();
            }
        });
    }

    /** Runs {@code then} for admitted {@code node} once its fence barrier passed (or answers its failure). */
    private static void admitted(final String node, final Throwable barrierFailed, final RpcResponder responder,
                                 final Runnable then) {
        if (barrierFailed != null) {
            responder.fail(RecoveryRpc.BAD_REQUEST, "fence of " + node + " did not complete: " + barrierFailed);
            return;
        }
        try {
            then.run();
        } catch (final RuntimeException e) {
            // Past the handler's return the RPC server's guard is gone: unanswered, the call would wait for ever.
            if (!responder.answered()) {
                responder.fail(RpcException.HANDLER_FAILED, "recovery RPC for " + node + " failed on this memory "
                    + "node: " + e);
            }
        }
    }

    /** Lists the log regions of {@code node}, fenced and with nothing of its still landing. */
    private void listFenced(final String node, final RpcResponder responder) {
        final List<LogRegion> logs = regions.getOrDefault(node, List.of());
        final int bytes = RecoveryRpc.LIST_HEADER_BYTES + logs.size() * RecoveryRpc.LIST_ENTRY_BYTES;
        if (bytes > responder.maxReplyBytes()) {
            responder.fail(RecoveryRpc.BAD_REQUEST, node + " has " + logs.size() + " log regions, more than a reply "
                + "holds");
            return;
        }
        reply.putInt(0, logs.size());
        reply.putInt(4, 0);
        int at = RecoveryRpc.LIST_HEADER_BYTES;
        for (final LogRegion log : logs) {
            reply.putLong(at, log.region.address());
            reply.putInt(at + 8, log.region.rkey());
            reply.putInt(at + 12, (int) log.region.length());
            reply.putLong(at + 16, log.idBase);
            at += RecoveryRpc.LIST_ENTRY_BYTES;
        }
        responder.reply(reply, 0, bytes);
    }

    private void release(final RpcRequest request, final RpcResponder responder) {
        final int header = RecoveryRpc.RELEASE_REQUEST_HEADER_BYTES;
        final int owners = request.payloadLength() < header ? -1
            : request.payload().getInt(request.payloadOffset() + 8);
        if (owners < 0 || owners > 1024 || request.payloadLength() < header + owners * 8) {
            responder.fail(RecoveryRpc.BAD_REQUEST, "malformed RELEASE_NODE");
            return;
        }
        final String node = nodeOf(request, responder, header + owners * 8);
        if (node == null) {
            return;
        }
        final long claim = request.payload().getLong(request.payloadOffset());
        final long[] idPrefixes = new long[owners];
        for (int i = 0; i < owners; i++) {
            idPrefixes[i] = request.payload().getLong(request.payloadOffset() + header + i * 8)
                & RecoveryRpc.NODE_ID_MASK;
        }
        final String client = request.client();
        fenceAndAdmit(node, client, claim, responder, () -> releaseFenced(node, client, idPrefixes, responder));
    }

    /** Releases everything {@code node} held, once fenced and with nothing of its still landing. */
    private void releaseFenced(final String node, final String recoverer, final long[] idPrefixes,
                               final RpcResponder responder) {
        final int[] counts = runSteps(MemoryNodeContext.Phase.BEFORE_INSERTS, node, idPrefixes,
            new int[steps.size()]);
        int abandoned = 0;
        for (final LockedInsert i : inserts.getOrDefault(node, List.of())) {
            if (stillLocked(i) && i.table.abandonInsert(i.key, i.pointer, i.lock) == Table.OK) {
                abandoned++;
            }
        }
        inserts.remove(node);
        runSteps(MemoryNodeContext.Phase.AFTER_INSERTS, node, idPrefixes, counts);
        final List<LogRegion> logs = regions.getOrDefault(node, new ArrayList<>());
        final int freedRegions = logs.size();
        for (final Iterator<LogRegion> it = logs.iterator(); it.hasNext(); ) {
            db.nic().deregister(it.next().region);
            it.remove();
        }
        regions.remove(node);
        // Over here: a later recovery of the node (owed again, or re-run) finds nothing left and changes nothing.
        final Recovery current = recovering.get(node);
        if (current != null && current.recoverer.equals(recoverer)) {
            recovering.remove(node);
        }
        released++;
        if (onReleased != null) {
            onReleased.accept(node, idPrefixes.clone());
        }
        reply.putInt(0, abandoned);
        reply.putInt(4, freedRegions);
        reply.putInt(8, steps.size());
        reply.putInt(12, 0);
        int at = RecoveryRpc.RELEASE_REPLY_BYTES;
        for (int i = 0; i < steps.size(); i++) {
            final byte[] name = steps.get(i).counted.getBytes(StandardCharsets.UTF_8);
            reply.putInt(at, counts[i]);
            reply.putShort(at + 4, (short) name.length);
            reply.putBytes(at + 6, name);
            at += 6 + name.length;
        }
        responder.reply(reply, 0, at);
    }

    /** Compute nodes released so far. */
    public long released() {
        return released;
    }
}
