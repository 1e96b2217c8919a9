package io.scythe.fabric.disni;

import com.ibm.disni.verbs.IbvCompChannel;
import com.ibm.disni.verbs.IbvContext;
import com.ibm.disni.verbs.IbvMr;
import com.ibm.disni.verbs.IbvPd;
import com.ibm.disni.verbs.IbvQP;
import com.ibm.disni.verbs.IbvQPInitAttr;
import com.ibm.disni.verbs.RdmaCm;
import com.ibm.disni.verbs.RdmaCmEvent;
import com.ibm.disni.verbs.RdmaCmId;
import com.ibm.disni.verbs.RdmaConnParam;
import com.ibm.disni.verbs.SVCRegMr;
import io.scythe.fabric.CompletionQueue;
import io.scythe.fabric.DriftingClock;
import io.scythe.fabric.Fabric;
import io.scythe.fabric.FabricException;
import io.scythe.fabric.FabricOptions;
import io.scythe.fabric.MemoryKind;
import io.scythe.fabric.MemoryRegion;
import io.scythe.fabric.Nic;
import io.scythe.fabric.QpOptions;
import io.scythe.fabric.QpState;
import io.scythe.fabric.QueuePair;
import io.vertx.core.Future;
import org.agrona.BufferUtil;
import org.agrona.concurrent.NanoClock;
import org.agrona.concurrent.UnsafeBuffer;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * A node on the RDMA device: a listening RDMA CM id bound to its address, the device context and protection domain
 * that come with it, regions registered as memory regions, and RC queue pairs set up through RDMA CM (the connecting
 * node's name travels in the connection's private data).
 */
final class DisniNic implements Nic {
    static final int ACCESS = IbvMr.IBV_ACCESS_LOCAL_WRITE | IbvMr.IBV_ACCESS_REMOTE_WRITE
        | IbvMr.IBV_ACCESS_REMOTE_READ | IbvMr.IBV_ACCESS_REMOTE_ATOMIC;
    static final int BOUNCE_BYTES = 1 << 20;
    static final int CM_TIMEOUT_MS = 2000;

    private final DisniFabric fabric;
    private final String node;
    private final RdmaCmId listener;
    private final IbvContext context;
    private final IbvPd pd;
    private final IbvCompChannel channel;
    private final Map<String, DisniRegion> regions = new ConcurrentHashMap<>();
    private final Set<DisniQueuePair> queuePairs = ConcurrentHashMap.newKeySet();
    private final Set<String> fenced = ConcurrentHashMap.newKeySet();
    private final DisniCompletionQueue passive;
    private volatile QpAcceptor acceptor;
    private volatile boolean closed;
    private final DriftingClock hostClock;

    /** Binds {@code node} to {@code address} and opens its device; blocking, call off the event loop. */
    DisniNic(final DisniFabric fabric, final String node, final InetSocketAddress address) throws IOException {
        this.fabric = fabric;
        this.node = node;
        this.hostClock = new DriftingClock(fabric.clock(), fabric.options().clocks().hostOf(node));
        this.listener = fabric.eventChannel().createId(RdmaCm.RDMA_PS_TCP);
        listener.bindAddr(address);
        listener.listen(128);
        this.context = listener.getVerbs();
        if (context == null) {
            throw new FabricException("node " + node + ": address " + address + " is not on an RDMA device");
        }
        this.pd = context.allocPd();
        this.channel = context.createCompChannel();
        this.passive = new DisniCompletionQueue(context.createCQ(channel, 16, 0), 16);
        fabric.listening(listener, this);
    }

    @Override
    public String node() {
        return node;
    }

    @Override
    public Fabric fabric() {
        return fabric;
    }

    /** @throws FabricException always: {@link DisniSupport#NO_NIC_CLOCK} */
    @Override
    public NanoClock nicClock() {
        throw new FabricException("node " + node + ": " + DisniSupport.NO_NIC_CLOCK);
    }

    /** The host's own clock, with the deviation configured for this node (none by default). */
    @Override
    public NanoClock hostClock() {
        return hostClock;
    }

    @Override
    public synchronized MemoryRegion register(final String name, final long length, final MemoryKind kind) {
        FabricOptions.checkName("region", name);
        if (kind == MemoryKind.DEVICE) {
            throw new FabricException("region " + name + "@" + node + ": NIC device memory is not supported by the "
                + "disni provider (DiSNI 2.0 has no ibv_alloc_dm)");
        }
        if (length <= 0 || length > Integer.MAX_VALUE - 8) {
            throw new FabricException("region " + name + "@" + node + ": length=" + length + " out of range");
        }
        if (regions.containsKey(name)) {
            throw new FabricException("region " + name + " is already registered on node " + node);
        }
        final ByteBuffer memory = BufferUtil.allocateDirectAligned((int) length, 4096);
        try {
            final SVCRegMr call = pd.regMr(memory, ACCESS);
            call.execute();
            final IbvMr mr = call.getMr();
            call.free();
            final DisniRegion region = new DisniRegion(name, node, mr, new UnsafeBuffer(memory));
            regions.put(name, region);
            return region;
        } catch (final IOException e) {
            throw new FabricException("region " + name + "@" + node + " could not be registered: " + e.getMessage(),
                e);
        }
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
        if (!(region instanceof DisniRegion) || regions.get(region.name()) != region) {
            throw new FabricException("region " + region.name() + " is not registered on node " + node);
        }
        regions.remove(region.name());
        ((DisniRegion) region).deregistered();
        try {
            ((DisniRegion) region).mr().deregMr().execute().free();
        } catch (final IOException e) {
            throw new FabricException("region " + region.name() + " could not be deregistered: " + e.getMessage(), e);
        }
    }

    /** The registered region holding virtual addresses {@code [address, address + bytes)}, or {@code null}. */
    DisniRegion regionHolding(final long address, final int bytes) {
        for (final DisniRegion region : regions.values()) {
            if (region.holds(address, bytes)) {
                return region;
            }
        }
        return null;
    }

    @Override
    public CompletionQueue createCompletionQueue(final int capacity) {
        try {
            return new DisniCompletionQueue(context.createCQ(channel, capacity, 0), capacity);
        } catch (final IOException e) {
            throw new FabricException("node " + node + ": ibv_create_cq failed: " + e.getMessage(), e);
        }
    }

    @Override
    public Future<QueuePair> connect(final String remoteNode, final CompletionQueue cq, final QpOptions options) {
        if (!(cq instanceof DisniCompletionQueue)) {
            return Future.failedFuture(new FabricException("completion queue does not belong to the disni fabric"));
        }
        if (fenced.contains(remoteNode)) {
            return Future.failedFuture(new FabricException("node " + remoteNode + " is fenced by node " + node));
        }
        final InetSocketAddress address = fabric.addressOf(remoteNode);
        if (address == null) {
            return Future.failedFuture(new FabricException("node " + remoteNode + " has no address"));
        }
        return fabric.vertx().executeBlocking(() -> {
            final RdmaCmId id = fabric.eventChannel().createId(RdmaCm.RDMA_PS_TCP);
            try {
                id.resolveAddr(null, address, CM_TIMEOUT_MS);
                fabric.await(id, RdmaCmEvent.EventType.RDMA_CM_EVENT_ADDR_RESOLVED, remoteNode);
                id.resolveRoute(CM_TIMEOUT_MS);
                fabric.await(id, RdmaCmEvent.EventType.RDMA_CM_EVENT_ROUTE_RESOLVED, remoteNode);
                id.createQP(pd, initAttributes((DisniCompletionQueue) cq, options));
                final ByteBuffer name = ByteBuffer.allocateDirect(64);
                name.put(node.getBytes(StandardCharsets.UTF_8));
                id.connect(parameters(name));
                fabric.await(id, RdmaCmEvent.EventType.RDMA_CM_EVENT_ESTABLISHED, remoteNode);
                return (QueuePair) add(new DisniQueuePair(this, id, remoteNode, options, (DisniCompletionQueue) cq,
                    bounce("qp-bounce-" + System.nanoTime()), fabric.atomicResultBigEndian()));
            } catch (final IOException | RuntimeException e) {
                id.destroyId();
                throw e instanceof FabricException ? (FabricException) e
                    : new FabricException("node " + remoteNode + " is unreachable over RDMA: " + e.getMessage(), e);
            }
        });
    }

    /** An incoming connection, on the fabric's RDMA CM thread. */
    void connectRequest(final RdmaCmEvent event) throws IOException {
        final RdmaCmId id = event.getConnIdPriv();
        final RdmaConnParam param = event.getConn();
        final String peer = new UnsafeBuffer(param.getPrivate_data(), Math.max(0, param.getPrivate_data_len()))
            .getStringWithoutLengthUtf8(0, Math.max(0, param.getPrivate_data_len())).trim();
        if (fenced.contains(peer) || closed) {
            id.destroyId(); // DiSNI has no rdma_reject: the connecting side sees its connect fail
            return;
        }
        final QpAcceptor a = acceptor;
        final CompletionQueue chosen = a == null ? null : a.completionQueueFor(peer);
        final DisniCompletionQueue cq = chosen instanceof DisniCompletionQueue ? (DisniCompletionQueue) chosen : null;
        id.createQP(pd, initAttributes(cq != null ? cq : passive, new QpOptions()));
        id.accept(parameters(ByteBuffer.allocateDirect(1)));
        final DisniQueuePair end = add(new DisniQueuePair(this, id, peer, new QpOptions(), cq,
            bounce("accepted-bounce-" + System.nanoTime()), fabric.atomicResultBigEndian()));
        if (a != null && cq != null) {
            a.accepted(end);
        }
    }

    private DisniRegion bounce(final String name) {
        return (DisniRegion) register(name, BOUNCE_BYTES, MemoryKind.HOST);
    }

    private static IbvQPInitAttr initAttributes(final DisniCompletionQueue cq, final QpOptions options) {
        final IbvQPInitAttr attr = new IbvQPInitAttr();
        attr.setQp_type(IbvQP.IBV_QPT_RC);
        attr.setSend_cq(cq.device());
        attr.setRecv_cq(cq.device());
        attr.cap().setMax_send_wr(options.sendQueueDepth());
        attr.cap().setMax_recv_wr(options.receiveQueueDepth());
        attr.cap().setMax_send_sge(1);
        attr.cap().setMax_recv_sge(1);
        attr.cap().setMax_inline_data(options.maxInlineBytes());
        return attr;
    }

    private static RdmaConnParam parameters(final ByteBuffer privateData) throws IOException {
        final RdmaConnParam param = new RdmaConnParam();
        param.setInitiator_depth((byte) 16); // outstanding READs and atomics (Scythe's doorbell batches)
        param.setResponder_resources((byte) 16);
        param.setRetry_count((byte) 7);
        param.setRnr_retry_count((byte) 7);
        param.setPrivate_data(BufferUtil.address(privateData));
        param.setPrivate_data_len((byte) privateData.capacity());
        return param;
    }

    private DisniQueuePair add(final DisniQueuePair qp) {
        queuePairs.add(qp);
        return qp;
    }

    void forget(final DisniQueuePair qp) {
        queuePairs.remove(qp);
    }

    @Override
    public void acceptor(final QpAcceptor acceptor) {
        this.acceptor = acceptor;
    }

    @Override
    public int fence(final String peerNode) {
        fenced.add(peerNode);
        int revoked = 0;
        for (final DisniQueuePair qp : queuePairs) {
            if (qp.remoteNode().equals(peerNode) && qp.state() != QpState.CLOSED) {
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
        return new ArrayList<>(queuePairs);
    }

    @Override
    public synchronized void close() {
        if (closed) {
            return;
        }
        closed = true;
        for (final DisniQueuePair qp : List.copyOf(queuePairs)) {
            qp.close();
        }
        for (final DisniRegion region : List.copyOf(regions.values())) {
            deregister(region);
        }
        listener.close();
        fabric.detached(this);
    }
}
