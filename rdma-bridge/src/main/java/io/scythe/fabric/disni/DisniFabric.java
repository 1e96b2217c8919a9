package io.scythe.fabric.disni;

import com.ibm.disni.verbs.RdmaCmEvent;
import com.ibm.disni.verbs.RdmaCmId;
import com.ibm.disni.verbs.RdmaEventChannel;
import io.scythe.fabric.CostModel;
import io.scythe.fabric.Fabric;
import io.scythe.fabric.FabricException;
import io.scythe.fabric.FabricOptions;
import io.scythe.fabric.Nic;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.internal.logging.Logger;
import io.vertx.core.internal.logging.LoggerFactory;
import org.agrona.concurrent.NanoClock;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;

/**
 * The {@code disni} provider: real RDMA through IBM DiSNI. One RDMA CM event channel per fabric, served by a daemon
 * thread that hands connection events to the calls waiting for them (connection setup runs on worker threads, never
 * on an event loop) and incoming connections to their node. Starting it where libdisni or an RDMA device is missing
 * fails at once with one sentence naming what is missing ({@link DisniSupport}).
 *
 * <p>Setting (system property): {@code scythe.disni.atomicResultBigEndian} (default true), the byte order the device
 * writes an atomic's old value in; ConnectX writes the wire order, big-endian.
 */
public final class DisniFabric implements Fabric {
    public static final String NAME = "disni";
    private static final Logger LOG = LoggerFactory.getLogger(DisniFabric.class);

    private final Vertx vertx;
    private final FabricOptions options;
    private final RdmaEventChannel channel;
    private final Map<String, DisniNic> nics = new ConcurrentHashMap<>();
    private final Map<RdmaCmId, DisniNic> listeners = new ConcurrentHashMap<>();
    private final Map<RdmaCmId, BlockingQueue<RdmaCmEvent>> waiting = new ConcurrentHashMap<>();
    private final boolean atomicResultBigEndian =
        Boolean.parseBoolean(System.getProperty("scythe.disni.atomicResultBigEndian", "true"));
    private final Thread cm;
    private volatile boolean closed;

    public DisniFabric(final Vertx vertx, final FabricOptions options) {
        DisniSupport.check();
        if (vertx == null) {
            throw new FabricException("the disni fabric needs a Vert.x instance for connection setup");
        }
        this.vertx = vertx;
        this.options = options.validate();
        try {
            this.channel = RdmaEventChannel.createEventChannel();
        } catch (final IOException e) {
            throw new FabricException("the disni fabric cannot start: rdma_create_event_channel failed ("
                + e.getMessage() + ")", e);
        }
        this.cm = new Thread(this::serveEvents, "scythe-disni-cm");
        cm.setDaemon(true);
        cm.start();
    }

    Vertx vertx() {
        return vertx;
    }

    RdmaEventChannel eventChannel() {
        return channel;
    }

    boolean atomicResultBigEndian() {
        return atomicResultBigEndian;
    }

    void listening(final RdmaCmId listener, final DisniNic nic) {
        listeners.put(listener, nic);
    }

    InetSocketAddress addressOf(final String node) {
        final String address = options.addresses().get(node);
        if (address == null) {
            return null;
        }
        final String[] hostPort = FabricOptions.parseAddress(node, address);
        return new InetSocketAddress(hostPort[0], Integer.parseInt(hostPort[1]));
    }

    /** Waits (on a worker thread) for {@code id}'s next RDMA CM event, which must be {@code expected}. */
    void await(final RdmaCmId id, final RdmaCmEvent.EventType expected, final String peer) throws IOException {
        final BlockingQueue<RdmaCmEvent> events = waiting.computeIfAbsent(id, i -> new ArrayBlockingQueue<>(8));
        try {
            final RdmaCmEvent event = events.poll(DisniNic.CM_TIMEOUT_MS * 2L, TimeUnit.MILLISECONDS);
            if (event == null) {
                throw new FabricException("node " + peer + ": no answer from RDMA CM (waiting for " + expected + ")");
            }
            final int type = event.getEvent();
            event.ackEvent();
            if (type != expected.ordinal()) {
                throw new FabricException("node " + peer + ": RDMA CM answered " + RdmaCmEvent.EventType.values()[type]
                    + " instead of " + expected);
            }
        } catch (final InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new FabricException("interrupted while connecting to " + peer, e);
        }
    }

    private void serveEvents() {
        while (!closed) {
            try {
                final RdmaCmEvent event = channel.getCmEvent(100);
                if (event == null) {
                    continue;
                }
                if (event.getEvent() == RdmaCmEvent.EventType.RDMA_CM_EVENT_CONNECT_REQUEST.ordinal()) {
                    final DisniNic nic = listeners.get(event.getListenIdPriv());
                    if (nic != null) {
                        nic.connectRequest(event);
                    }
                    event.ackEvent();
                    continue;
                }
                final BlockingQueue<RdmaCmEvent> events = waiting.computeIfAbsent(event.getConnIdPriv(),
                    i -> new ArrayBlockingQueue<>(8));
                if (!events.offer(event)) {
                    event.ackEvent();
                }
            } catch (final IOException | RuntimeException e) {
                if (!closed) {
                    LOG.warn("RDMA CM event loop: " + e);
                }
            }
        }
    }

    @Override
    public String provider() {
        return NAME;
    }

    @Override
    public FabricOptions options() {
        return options;
    }

    /** The configured model; real hardware applies its own costs. */
    @Override
    public CostModel costModel() {
        return options.costModel();
    }

    @Override
    public NanoClock clock() {
        return options.clock();
    }

    @Override
    public Future<Nic> attach(final String node) {
        final InetSocketAddress address;
        try {
            FabricOptions.checkName("node", node);
            address = addressOf(node);
        } catch (final IllegalArgumentException e) {
            return Future.failedFuture(e);
        }
        if (address == null) {
            return Future.failedFuture(new FabricException("node " + node + " has no address in the disni fabric's "
                + "addresses"));
        }
        return vertx.executeBlocking(() -> {
            final DisniNic nic = new DisniNic(this, node, address);
            if (nics.putIfAbsent(node, nic) != null) {
                nic.close();
                throw new FabricException("node " + node + " is already attached to this fabric");
            }
            return (Nic) nic;
        });
    }

    @Override
    public Nic nic(final String node) {
        return nics.get(node);
    }

    void detached(final DisniNic nic) {
        nics.remove(nic.node(), nic);
    }

    @Override
    public void close() {
        for (final DisniNic nic : List.copyOf(nics.values())) {
            nic.close();
        }
        closed = true;
        cm.interrupt();
        channel.close();
    }
}
