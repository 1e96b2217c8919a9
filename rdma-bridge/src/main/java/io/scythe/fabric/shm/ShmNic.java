package io.scythe.fabric.shm;

import io.scythe.fabric.CompletionQueue;
import io.scythe.fabric.CostModel;
import io.scythe.fabric.DriftingClock;
import io.scythe.fabric.Fabric;
import io.scythe.fabric.FabricException;
import io.scythe.fabric.FabricOptions;
import io.scythe.fabric.HostAndNicClocks;
import io.scythe.fabric.MemoryKind;
import io.scythe.fabric.MemoryRegion;
import io.scythe.fabric.Nic;
import io.scythe.fabric.QpOptions;
import io.scythe.fabric.QpState;
import io.scythe.fabric.QueuePair;
import io.scythe.fabric.emulated.EmulatedCompletionQueue;
import io.scythe.fabric.emulated.EmulatedQueuePair;
import io.scythe.fabric.emulated.KeyAndAddressAllocator;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.internal.ContextInternal;
import org.agrona.concurrent.UnsafeBuffer;

import java.lang.invoke.VarHandle;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Queue;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;

import static io.scythe.fabric.shm.ShmLayout.*;

/**
 * A node this process attached to the shm fabric: it owns the node's control file and region files. Its connection
 * manager (a daemon thread, as RDMA CM's event thread) takes incoming connections to the acceptor, closes those whose
 * initiator died, frees closed slots, and watches fence barriers.
 *
 * <p>Fencing on shm: a one-sided verb is executed by the initiator's own process, which writes into this node's mapped
 * files after checking that its connection is not revoked. A fence revokes first; a verb already past its check is
 * counted in the slot ({@link ShmLayout#CONN_EXECUTING}), and {@link #fenceBarrier} waits for the count to drop. An
 * initiator that stays inside a verb longer than {@link #STUCK_NS} is stopped or starved (SIGSTOP, a long GC pause):
 * it could write whenever it wakes, which a real NIC's queue pair in the error state would never let through. So it
 * is killed (SIGKILL, the classic STONITH fence, possible because shm peers share one host) and the barrier completes
 * once the process is gone. A process never kills itself: nodes of this process finish their verbs on their own.
 *
 * <p>Fencing against a concurrent connect: a connector claims a slot (CAS free to claimed), writes its name, publishes
 * the slot ready (CAS claimed to ready), then re-checks both fence tables before it returns the queue pair and
 * refuses (revokes and closes the slot) if it was fenced meanwhile. {@link #fence} records the fence, then revokes the
 * ready slots named after the peer. Each side writes, full fence, then reads what the other writes, so a slot the
 * fence's scan missed was published after the record, and its connector sees the record. Claimed slots are left to
 * their claimer: their name may be unwritten or the last occupant's, and revoking by it would refuse or, once the
 * connection manager freed the slot, corrupt another node's connect. The connection manager revokes ready slots of
 * fenced initiators it finds (a connector stopped between publishing and re-checking) and never accepts them.
 */
final class ShmNic implements Nic {
    private static final long CM_PERIOD_MS = 1;
    /** How long a fenced initiator may stay inside a verb before it is taken for stopped and killed. */
    static final long STUCK_NS = 50_000_000L;
    /** {@link #STUCK_NS} unless a test that races fences against a live child (not a stopped one) sets it longer. */
    private volatile long stuckNs = STUCK_NS;
    private static final long CLOSED_SLOT_GRACE_NS = 1_000_000_000L;

    private final ShmFabric fabric;
    private final String node;
    private final CostModel model;
    final ShmNodeFile file;

    /**
     * For tests: how long a fenced initiator may stay inside a verb before it is killed. A test whose child process
     * must live through every round sets it long: at load 60 a live child was descheduled 53 ms inside a verb and
     * killed, as designed, ending that test's rounds.
     */
    void stuckNs(final long ns) {
        stuckNs = ns;
    }
    private final KeyAndAddressAllocator keys = new KeyAndAddressAllocator();
    private final Map<String, ShmRegion> regions = new ConcurrentHashMap<>();
    private final Collection<ShmRegion> registered = new CopyOnWriteArrayList<>();
    private final Map<Integer, EmulatedQueuePair> ends = new ConcurrentHashMap<>();
    private final boolean[] accepted = new boolean[CONNECTION_SLOTS];
    private final long[] closedSince = new long[CONNECTION_SLOTS];
    private final AtomicInteger qpNumbers = new AtomicInteger();
    private final Thread connectionManager;
    private long deviceBytes;
    private final HostAndNicClocks clocks;
    private volatile QpAcceptor acceptor;
    private final Queue<Barrier> barriers = new ConcurrentLinkedQueue<>();
    private volatile boolean closed;
    /** Called at each {@link ConnectStep} of a connect this node makes; tests stop there to interleave a fence. */
    volatile ConnectHook connectHook = step -> { };

    /** Points of {@link #connect} between which a fence may come. */
    enum ConnectStep {
        /** Checked that neither end fenced the other; no slot yet. */
        CHECKED,
        /** Slot claimed, initiator not written yet. */
        CLAIMED,
        /** Initiator written, slot not ready yet. */
        NAMED,
        /** Slot ready, fencing not re-checked yet. */
        PUBLISHED,
        /** Re-checked: the queue pair is about to be returned. */
        RECHECKED
    }

    @FunctionalInterface
    interface ConnectHook {
        void reached(ConnectStep step);
    }

    ShmNic(final ShmFabric fabric, final String node, final ShmNodeFile file, final HostAndNicClocks clocks) {
        this.fabric = fabric;
        this.node = node;
        this.clocks = clocks;
        this.model = fabric.costModel();
        this.file = file;
        this.connectionManager = new Thread(this::manageConnections, "scythe-shm-cm-" + node);
        connectionManager.setDaemon(true);
        connectionManager.start();
    }

    static String regionFile(final int rkey) {
        return String.format("region-%08x", rkey);
    }

    @Override
    public String node() {
        return node;
    }

    @Override
    public Fabric fabric() {
        return fabric;
    }

    /** This node's NIC clock; peers in other processes read the same one from its published parameters. */
    @Override
    public DriftingClock nicClock() {
        return clocks.nic();
    }

    /** The host's clock (shared by every process of the host) with this node's deviation. */
    @Override
    public DriftingClock hostClock() {
        return clocks.host();
    }

    // ------------------------------------------------------------------------------------------------- regions

    @Override
    public synchronized MemoryRegion register(final String name, final long length, final MemoryKind kind) {
        checkOpen();
        FabricOptions.checkName("region", name);
        if (length <= 0 || length > Integer.MAX_VALUE - 8) {
            throw new FabricException("region " + name + "@" + node + ": length=" + length + " must be within [1, "
                + (Integer.MAX_VALUE - 8) + "]");
        }
        if (regions.containsKey(name)) {
            throw new FabricException("region " + name + " is already registered on node " + node);
        }
        if (kind == MemoryKind.DEVICE && deviceBytes + length > model.deviceMemoryBytes()) {
            throw new FabricException("region " + name + "@" + node + ": NIC device memory exhausted ("
                + deviceBytes + " of " + model.deviceMemoryBytes() + " bytes used, " + length + " asked)");
        }
        final int slot = file.freeRegionSlot();
        if (slot < 0) {
            throw new FabricException("node " + node + " has no free region slot (" + REGION_SLOTS + ")");
        }
        final int rkey = keys.nextKey();
        final Path path = file.dir.resolve(regionFile(rkey));
        final UnsafeBuffer memory = MappedFiles.create(path, length);
        final long address = keys.nextAddress(length);
        final int at = file.regionEntry(slot);
        file.memory.putInt(at + REGION_KIND, kind == MemoryKind.DEVICE ? 1 : 0);
        file.memory.putInt(at + REGION_RKEY, rkey);
        final int lkey = keys.nextKey();
        file.memory.putInt(at + REGION_LKEY, lkey);
        file.memory.putLong(at + REGION_ADDRESS, address);
        file.memory.putLong(at + REGION_LENGTH, length);
        file.name(at + REGION_NAME, name);
        file.memory.putIntVolatile(at + REGION_STATE, REGION_REGISTERED);
        final ShmRegion region = new ShmRegion(file, slot, name, node, address, length, rkey, lkey, kind, memory,
            path);
        if (kind == MemoryKind.DEVICE) {
            deviceBytes += length;
        }
        regions.put(name, region);
        registered.add(region);
        return region;
    }

    @Override
    public MemoryRegion region(final String name) {
        return regions.get(name);
    }

    @Override
    public Collection<MemoryRegion> regions() {
        return List.copyOf(regions.values());
    }

    @Override
    public synchronized void deregister(final MemoryRegion region) {
        if (!(region instanceof ShmRegion) || regions.get(region.name()) != region) {
            throw new FabricException("region " + region.name() + " is not registered on node " + node);
        }
        final ShmRegion shm = (ShmRegion) region;
        file.memory.putIntVolatile(file.regionEntry(shm.slot()) + REGION_STATE, REGION_DEREGISTERED);
        regions.remove(region.name());
        registered.remove(shm);
        MappedFiles.deleteQuietly(shm.file);
        if (region.kind() == MemoryKind.DEVICE) {
            deviceBytes -= region.length();
        }
    }

    // ---------------------------------------------------------------------------------------------- connecting

    @Override
    public CompletionQueue createCompletionQueue(final int capacity) {
        checkOpen();
        return new EmulatedCompletionQueue(capacity, clocks.nic());
    }

    @Override
    public Future<QueuePair> connect(final String remoteNode, final CompletionQueue cq, final QpOptions options) {
        try {
            return Future.succeededFuture(connectNow(remoteNode, cq, options));
        } catch (final RuntimeException e) {
            return Future.failedFuture(e);
        }
    }

    private QueuePair connectNow(final String remoteNode, final CompletionQueue cq, final QpOptions options) {
        checkOpen();
        if (!(cq instanceof EmulatedCompletionQueue)) {
            throw new FabricException("completion queue " + cq + " does not belong to the shm fabric");
        }
        final ShmPeer peer = fabric.peer(remoteNode);
        if (peer.file.isFenced(node)) {
            throw new FabricException("node " + node + " is fenced by node " + remoteNode + " and must rejoin");
        }
        if (file.isFenced(remoteNode)) {
            throw new FabricException("node " + remoteNode + " is fenced by node " + node);
        }
        final QpOptions qpOptions = new QpOptions(options).validate();
        final int number = qpNumbers.incrementAndGet();
        connectHook.reached(ConnectStep.CHECKED);
        final int slot = peer.file.claimSlot();
        if (slot < 0) {
            throw new FabricException("node " + remoteNode + " has no free connection slot (" + CONNECTION_SLOTS
                + ")");
        }
        connectHook.reached(ConnectStep.CLAIMED);
        peer.file.fillClaim(slot, node, ProcessHandle.current().pid(), number);
        connectHook.reached(ConnectStep.NAMED);
        if (!peer.file.publish(slot)) {
            throw new FabricException("node " + remoteNode + " took connection slot " + slot + " from node " + node
                + " before it was ready");
        }
        connectHook.reached(ConnectStep.PUBLISHED);
        final int connection = peer.file.connection(slot);
        final EmulatedQueuePair end = new EmulatedQueuePair(number, slot, node, remoteNode, qpOptions, model,
            fabric.clock(), file.timeline, peer, new ShmConnection(peer.file, slot, peer.file.pid(), peer.file),
            new ShmReceiveQueue(peer.file.memory, ShmLayout.receiveRingsOffset(connection, true), registered, null),
            new ShmReceiveQueue(peer.file.memory, ShmLayout.receiveRingsOffset(connection, false), null,
                peer::region),
            (EmulatedCompletionQueue) cq);
        ends.put(number, end);
        // A fence that came after the checks above may have scanned before the slot was ready or the end listed:
        // fence() records first and scans after, this publishes first and re-checks after (full fences between),
        // so a fence the scan-side missed is seen here.
        VarHandle.fullFence();
        final boolean fencedThere = peer.file.isFenced(node);
        if (fencedThere || file.isFenced(remoteNode)) {
            ends.remove(number);
            end.revoke();
            end.close();
            peer.file.transition(slot, CONN_REVOKED, CONN_CLOSED); // no verb ran on it: the slot may be reused
            throw new FabricException(fencedThere
                ? "node " + node + " is fenced by node " + remoteNode + " and must rejoin"
                : "node " + remoteNode + " is fenced by node " + node);
        }
        connectHook.reached(ConnectStep.RECHECKED);
        final ShmNic local = fabric.localNic(remoteNode);
        if (local != null) {
            local.accept(slot); // the responder lives in this process: take the connection now
        }
        return end;
    }

    /** Creates this node's end of the connection in slot {@code slot}, when the acceptor wants one. */
    private synchronized void accept(final int slot) {
        if (accepted[slot] || file.connectionState(slot) != CONN_READY) {
            return;
        }
        accepted[slot] = true;
        if (file.initiatorFenced(slot)) {
            // Published after the fence's scan; its connector refuses it once it re-checks. Defensive: both callers
            // come after a revocation check of their own (the connector's re-check, the manager's cycle).
            file.transition(slot, CONN_READY, CONN_REVOKED);
            return;
        }
        final QpAcceptor a = acceptor;
        final String initiator = file.initiator(slot);
        final CompletionQueue cq = a == null ? null : a.completionQueueFor(initiator);
        if (!(cq instanceof EmulatedCompletionQueue)) {
            return; // passive: the slot serves the initiator's one-sided verbs without an end here
        }
        final ShmPeer initiatorPeer;
        try {
            initiatorPeer = fabric.peer(initiator);
        } catch (final FabricException gone) {
            return;
        }
        final int number = qpNumbers.incrementAndGet();
        final int connection = file.connection(slot);
        final EmulatedQueuePair end = new EmulatedQueuePair(number, file.initiatorQp(slot), node, initiator,
            new QpOptions(), model, fabric.clock(), file.timeline, initiatorPeer,
            new ShmConnection(file, slot, file.initiatorPid(slot), initiatorPeer.file),
            new ShmReceiveQueue(file.memory, ShmLayout.receiveRingsOffset(connection, false), registered, null),
            new ShmReceiveQueue(file.memory, ShmLayout.receiveRingsOffset(connection, true), null,
                initiatorPeer::region),
            (EmulatedCompletionQueue) cq);
        file.responderQp(slot, number);
        ends.put(number, end);
        a.accepted(end);
    }

    @Override
    public void acceptor(final QpAcceptor acceptor) {
        this.acceptor = acceptor;
    }

    /** The connection manager's duty: accept, notice dead initiators, free closed slots. */
    private void manageConnections() {
        while (!closed) {
            final long now = System.nanoTime();
            final boolean anyFenced = file.anyFenced();
            for (int slot = 0; slot < CONNECTION_SLOTS; slot++) {
                int state = file.connectionState(slot);
                if (state == CONN_READY && anyFenced && file.initiatorFenced(slot)
                    && file.transition(slot, CONN_READY, CONN_REVOKED)) {
                    state = CONN_REVOKED; // published after the fence's scan by a connector not yet re-checked
                }
                if (state == CONN_READY || state == CONN_REVOKED) {
                    closedSince[slot] = 0;
                    if (state == CONN_READY && !accepted[slot] && acceptor != null) {
                        accept(slot);
                    }
                    if (!ProcessHandle.of(file.initiatorPid(slot)).map(ProcessHandle::isAlive).orElse(false)) {
                        file.transition(slot, state, CONN_CLOSED);
                    }
                } else if (state == CONN_CLOSED) {
                    if (closedSince[slot] == 0) {
                        closedSince[slot] = now;
                    } else if (now - closedSince[slot] > CLOSED_SLOT_GRACE_NS && noVerbInside(slot)
                        && file.transition(slot, CONN_CLOSED, CONN_FREE)) {
                        synchronized (this) {
                            accepted[slot] = false;
                        }
                        closedSince[slot] = 0;
                    }
                }
            }
            barriers.removeIf(b -> b.passed(now));
            try {
                Thread.sleep(CM_PERIOD_MS);
            } catch (final InterruptedException e) {
                return;
            }
        }
    }

    /**
     * Whether no verb of a closed slot's initiator is still inside its execution. A live initiator stuck there (stopped
     * after the other end closed) keeps the slot, so that a reuse never meets its late decrement and the count a later
     * fence barrier relies on stays exact; a gone one never ends its verb, so its count is dropped.
     */
    private boolean noVerbInside(final int slot) {
        if (file.executing(slot) == 0) {
            return true;
        }
        if (gone(file.initiatorPid(slot))) {
            file.clearExecuting(slot);
            return true;
        }
        return false;
    }

    // ---------------------------------------------------------------------------------------------- fencing

    @Override
    public int fence(final String peerNode) {
        long pid = 0;
        for (int slot = 0; slot < CONNECTION_SLOTS && pid == 0; slot++) {
            final int state = file.connectionState(slot);
            if (state != CONN_FREE && state != CONN_CLAIMED && peerNode.equals(file.initiator(slot))) {
                pid = file.initiatorPid(slot);
            }
        }
        // Recorded first: a connection it asks for meanwhile is refused by its own re-check (connectNow), and one
        // published before the record is revoked below.
        FabricException full = null;
        try {
            file.fence(peerNode, pid == ProcessHandle.current().pid() ? 0 : pid);
        } catch (final FabricException e) {
            full = e; // what it has is revoked all the same
        }
        int revoked = 0;
        for (int slot = 0; slot < CONNECTION_SLOTS; slot++) {
            final int state = file.connectionState(slot);
            if (state == CONN_READY && peerNode.equals(file.initiator(slot))
                && file.transition(slot, CONN_READY, CONN_REVOKED)) {
                revoked++;
            }
        }
        for (final EmulatedQueuePair end : ends.values()) {
            if (end.remoteNode().equals(peerNode) && end.state() != QpState.REVOKED
                && end.state() != QpState.CLOSED) {
                end.revoke();
                revoked++;
            }
        }
        if (full != null) {
            throw full;
        }
        return revoked;
    }

    @Override
    public Future<Void> fenceBarrier(final String peerNode) {
        final List<int[]> busy = new ArrayList<>();
        for (int slot = 0; slot < CONNECTION_SLOTS; slot++) {
            final int state = file.connectionState(slot);
            if (state != CONN_FREE && state != CONN_READY && file.executing(slot) > 0
                && peerNode.equals(file.initiator(slot))) {
                busy.add(new int[] {slot, file.generation(slot)});
            }
        }
        if (busy.isEmpty()) {
            return Future.succeededFuture();
        }
        final ContextInternal context = ContextInternal.current();
        final Barrier barrier = new Barrier(peerNode, busy, context != null ? context.promise() : Promise.promise());
        barriers.add(barrier);
        return barrier.promise.future();
    }

    /** Slots of a fenced initiator whose verbs were still executing when the fence came. */
    private final class Barrier {
        private final String peer;
        private final List<int[]> slots;
        private final Promise<Void> promise;
        private final long since = System.nanoTime();
        private long killed;

        Barrier(final String peer, final List<int[]> slots, final Promise<Void> promise) {
            this.peer = peer;
            this.slots = slots;
            this.promise = promise;
        }

        /** True (and completed) once no verb of the slots can land any more. */
        boolean passed(final long now) {
            long stuckPid = 0;
            for (final int[] s : slots) {
                if (file.generation(s[0]) == s[1] && file.executing(s[0]) > 0) {
                    final long pid = file.initiatorPid(s[0]);
                    if (gone(pid)) {
                        continue; // died inside the verb: it writes nothing more
                    }
                    stuckPid = pid;
                }
            }
            if (stuckPid == 0) {
                promise.tryComplete();
                return true;
            }
            if (killed == 0 && now - since > stuckNs && stuckPid != ProcessHandle.current().pid()) {
                killed = stuckPid;
                System.err.println("shm fabric: " + peer + " (pid " + stuckPid + ") was fenced by " + node
                    + " but stayed inside a verb for " + (now - since) / 1_000_000 + " ms (stopped or starved); "
                    + "killed so that nothing it started can land");
                ProcessHandle.of(stuckPid).ifPresent(ProcessHandle::destroyForcibly);
            }
            return false;
        }
    }

    /** Whether process {@code pid} no longer runs code: absent, or a zombie (killed, not yet reaped). */
    static boolean gone(final long pid) {
        try {
            final String stat = Files.readString(Path.of("/proc", Long.toString(pid), "stat"));
            final int end = stat.lastIndexOf(')');
            final char state = end >= 0 && end + 2 < stat.length() ? stat.charAt(end + 2) : '?';
            return state == 'Z' || state == 'X';
        } catch (final java.io.IOException | RuntimeException absent) {
            return true;
        }
    }

    @Override
    public boolean isFenced(final String peerNode) {
        return file.isFenced(peerNode);
    }

    @Override
    public void readmit(final String peerNode) {
        file.readmit(peerNode);
    }

    @Override
    public Collection<QueuePair> queuePairs() {
        ends.values().removeIf(qp -> qp.state() == QpState.CLOSED);
        return new ArrayList<>(ends.values());
    }

    @Override
    public synchronized void close() {
        if (closed) {
            return;
        }
        closed = true;
        connectionManager.interrupt();
        for (final Barrier b : barriers) {
            b.promise.tryFail(new FabricException("NIC of node " + node + " closed before the fence of " + b.peer
                + " was through"));
        }
        barriers.clear();
        for (final EmulatedQueuePair end : ends.values()) {
            end.close();
        }
        ends.clear();
        file.closed();
        for (final ShmRegion region : List.copyOf(regions.values())) {
            deregister(region);
        }
        fabric.detached(this);
    }

    private void checkOpen() {
        if (closed) {
            throw new FabricException("NIC of node " + node + " is closed");
        }
    }

    @Override
    public String toString() {
        return "ShmNic{" + node + " at " + file.dir + '}';
    }
}
