package io.scythe.fabric.local;

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
import io.scythe.fabric.QueuePair;
import io.scythe.fabric.emulated.EmulatedCompletionQueue;
import io.scythe.fabric.emulated.EmulatedPeer;
import io.scythe.fabric.emulated.EmulatedQueuePair;
import io.scythe.fabric.emulated.NicTimeline;
import io.scythe.fabric.emulated.RegionTable;
import io.scythe.fabric.emulated.RegionView;
import io.vertx.core.Future;
import org.agrona.BufferUtil;
import org.agrona.concurrent.UnsafeBuffer;

import java.util.ArrayList;
import java.util.Collection;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A virtual NIC of the local provider: regions are off-heap memory of this JVM, the NIC's timing state is an
 * off-heap {@link NicTimeline}, and its queue pairs connect to other NICs of the same JVM.
 */
final class LocalNic implements Nic, EmulatedPeer {
    private final String node;
    private final LocalFabric fabric;
    private final CostModel model;
    private final NicTimeline timeline;
    private final RegionTable regions;
    private final HostAndNicClocks clocks;
    private final Map<Integer, EmulatedQueuePair> queuePairs = new ConcurrentHashMap<>();
    private final Set<String> fenced = ConcurrentHashMap.newKeySet();
    private final AtomicInteger qpNumbers = new AtomicInteger();
    private volatile QpAcceptor acceptor;
    private volatile boolean closed;

    LocalNic(final String node, final LocalFabric fabric) {
        this.node = FabricOptions.checkName("node", node);
        this.fabric = fabric;
        this.model = fabric.costModel();
        this.regions = new RegionTable(node, model);
        this.timeline = new NicTimeline(
            new UnsafeBuffer(BufferUtil.allocateDirectAligned(NicTimeline.length(model), 64)), model);
        this.clocks = HostAndNicClocks.start(fabric, node);
    }

    @Override
    public DriftingClock nicClock() {
        return clocks.nic();
    }

    @Override
    public DriftingClock hostClock() {
        return clocks.host();
    }

    @Override
    public String node() {
        return node;
    }

    @Override
    public Fabric fabric() {
        return fabric;
    }

    @Override
    public NicTimeline timeline() {
        return timeline;
    }

    @Override
    public RegionView region(final int rkey) {
        return regions.byKey(rkey);
    }

    @Override
    public MemoryRegion register(final String name, final long length, final MemoryKind kind) {
        checkOpen();
        return regions.register(name, length, kind);
    }

    @Override
    public MemoryRegion region(final String name) {
        return regions.byName(name);
    }

    @Override
    public Collection<MemoryRegion> regions() {
        return regions.all();
    }

    @Override
    public void deregister(final MemoryRegion region) {
        regions.deregister(region);
    }

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
            throw new FabricException("completion queue " + cq + " does not belong to the local fabric");
        }
        final LocalNic remote = fabric.localNic(remoteNode);
        if (remote == null || remote.closed) {
            throw new FabricException("node " + remoteNode + " is not attached to the local fabric '"
                + fabric.options().cluster() + "'");
        }
        if (remote.fenced.contains(node)) {
            throw new FabricException("node " + node + " is fenced by node " + remoteNode + " and must rejoin");
        }
        if (fenced.contains(remoteNode)) {
            throw new FabricException("node " + remoteNode + " is fenced by node " + node);
        }
        final QpOptions qpOptions = new QpOptions(options).validate();
        final QpAcceptor remoteAcceptor = remote.acceptor;
        final CompletionQueue remoteCq = remoteAcceptor == null ? null : remoteAcceptor.completionQueueFor(node);
        if (remoteCq != null && !(remoteCq instanceof EmulatedCompletionQueue)) {
            throw new FabricException("acceptor of node " + remoteNode + " returned a foreign completion queue");
        }
        final LocalConnection connection = new LocalConnection();
        final LocalReceiveQueue localReceive = new LocalReceiveQueue(qpOptions.receiveQueueDepth());
        final LocalReceiveQueue remoteReceive = remoteCq == null ? null
            : new LocalReceiveQueue(qpOptions.receiveQueueDepth());
        final int remoteNumber = remote.qpNumbers.incrementAndGet();
        final int localNumber = qpNumbers.incrementAndGet();
        // The remote end is never shared: only its owner's loop posts on it.
        final EmulatedQueuePair remoteEnd = new EmulatedQueuePair(remoteNumber, localNumber, remoteNode, node,
            new QpOptions(qpOptions).shared(false), model, fabric.clock(), remote.timeline, this, connection,
            remoteReceive, localReceive, (EmulatedCompletionQueue) remoteCq);
        final EmulatedQueuePair localEnd = new EmulatedQueuePair(localNumber, remoteNumber, node, remoteNode,
            qpOptions, model, fabric.clock(), timeline, remote, connection, localReceive, remoteReceive,
            (EmulatedCompletionQueue) cq);
        if (fabric.options().colocated(node, remoteNode)) {
            localEnd.localPath(FabricOptions.LOCAL_PATH_NS);
            remoteEnd.localPath(FabricOptions.LOCAL_PATH_NS);
        }
        localEnd.delayInjector(fabric.options().delayInjector());
        remoteEnd.delayInjector(fabric.options().delayInjector());
        localEnd.verbFaultInjector(fabric.options().verbFaultInjector());
        remoteEnd.verbFaultInjector(fabric.options().verbFaultInjector());
        localReceive.owner(localEnd);
        if (remoteReceive != null) {
            remoteReceive.owner(remoteEnd);
        }
        remote.queuePairs.put(remoteEnd.qpNumber(), remoteEnd);
        queuePairs.put(localEnd.qpNumber(), localEnd);
        if (remoteAcceptor != null) {
            remoteAcceptor.accepted(remoteEnd);
        }
        return localEnd;
    }

    @Override
    public void acceptor(final QpAcceptor acceptor) {
        this.acceptor = acceptor;
    }

    @Override
    public int fence(final String peerNode) {
        fenced.add(peerNode);
        int revoked = 0;
        for (final EmulatedQueuePair qp : queuePairs.values()) {
            if (qp.remoteNode().equals(peerNode)) {
                qp.revoke();
                revoked++;
            }
        }
        return revoked;
    }

    @Override
    public boolean isFenced(final String peerNode) {
        return fenced.contains(peerNode);
    }

    @Override
    public void readmit(final String peerNode) {
        fenced.remove(peerNode);
    }

    @Override
    public Collection<QueuePair> queuePairs() {
        queuePairs.values().removeIf(qp -> qp.state() == io.scythe.fabric.QpState.CLOSED);
        return new ArrayList<>(queuePairs.values());
    }

    @Override
    public synchronized void close() {
        if (closed) {
            return;
        }
        closed = true;
        for (final EmulatedQueuePair qp : queuePairs.values()) {
            qp.close();
        }
        queuePairs.clear();
        regions.deregisterAll();
        fabric.detached(this);
    }

    private void checkOpen() {
        if (closed) {
            throw new FabricException("NIC of node " + node + " is closed");
        }
    }

    @Override
    public String toString() {
        return "LocalNic{" + node + '}';
    }
}
