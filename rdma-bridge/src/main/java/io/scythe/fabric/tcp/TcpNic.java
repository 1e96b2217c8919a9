package io.scythe.fabric.tcp;

import io.scythe.fabric.ClusterSecret;
import io.scythe.fabric.CompletionQueue;
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
import io.scythe.fabric.emulated.RegionTable;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.net.NetClient;
import io.vertx.core.net.NetClientOptions;
import io.vertx.core.net.NetServer;
import io.vertx.core.net.NetSocket;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A node on the tcp fabric: its regions in this JVM's off-heap memory, a verbs server on its address that executes
 * peers' requests, and client connections to peers. Every connection starts with a HELLO naming the cluster and both
 * nodes; a mismatch, a fenced peer or a malformed first frame is refused and closed. With a cluster secret, the HELLO
 * carries an HMAC of its fields, a fresh nonce and the time, and HELLO_OK an HMAC over that nonce: both ends prove
 * the secret without sending it; a HELLO without a valid proof, older than a minute, or replayed is refused.
 */
public final class TcpNic implements Nic {
    static final long HANDSHAKE_TIMEOUT_MS = 10_000;

    private final TcpFabric fabric;
    private final Vertx vertx;
    private final String node;
    private final RegionTable regions;
    private final Set<TcpConnection> connections = ConcurrentHashMap.newKeySet();
    private final Set<String> fenced = ConcurrentHashMap.newKeySet();
    private final java.util.Map<String, Long> seenNonces = new ConcurrentHashMap<>();
    private final AtomicInteger qpNumbers = new AtomicInteger();
    private final java.util.concurrent.atomic.AtomicLong requestFrames = new java.util.concurrent.atomic.AtomicLong();
    private final NetClient client;
    private final HostAndNicClocks clocks;
    private NetServer server;
    /** Periodic check of the queue pairs' transport timeouts ({@link QpOptions#transportTimeoutMs()}). */
    private final long timeoutSweep;
    /** When the last sweep ran ({@link System#nanoTime()}); only the sweep's timer thread touches it. */
    private long lastSweepNs = System.nanoTime();
    private volatile QpAcceptor acceptor;
    private volatile boolean closed;

    TcpNic(final TcpFabric fabric, final Vertx vertx, final String node) {
        this.fabric = fabric;
        this.vertx = vertx;
        this.node = node;
        this.regions = new RegionTable(node, fabric.costModel());
        this.clocks = HostAndNicClocks.start(fabric, node);
        this.client = vertx.createNetClient(new NetClientOptions().setTcpNoDelay(true).setConnectTimeout(5000));
        this.timeoutSweep = vertx.setPeriodic(TIMEOUT_SWEEP_MS, t -> sweepTimeouts());
    }

    /** How often the queue pairs' oldest requests are checked against their transport timeout. */
    static final long TIMEOUT_SWEEP_MS = 50;

    /** Gives up the connections whose oldest request waited past its queue pair's transport timeout. */
    private void sweepTimeouts() {
        final long now = System.nanoTime();
        final long gap = now - lastSweepNs;
        lastSweepNs = now;
        if (gap > java.util.concurrent.TimeUnit.MILLISECONDS.toNanos(4 * TIMEOUT_SWEEP_MS)) {
            // This node itself did not run (paused, or starved on a loaded host): the responses that came meanwhile
            // are still unread, so silence now says nothing about the peers. Judged again on the next sweep.
            return;
        }
        for (final TcpConnection connection : connections) {
            final TcpQueuePair end = connection.end();
            if (end != null && end.overdue(now)) {
                connection.timedOut();
            }
        }
    }

    /** Starts the verbs server on {@code host:port}; completes with the port bound. */
    Future<Integer> listen(final String host, final int port) {
        server = vertx.createNetServer(new io.vertx.core.net.NetServerOptions().setHost(host).setPort(port)
            .setTcpNoDelay(true));
        server.connectHandler(this::incoming);
        return server.listen().map(NetServer::actualPort);
    }

    RegionTable regionTable() {
        return regions;
    }

    @Override
    public String node() {
        return node;
    }

    @Override
    public Fabric fabric() {
        return fabric;
    }

    /** The NIC clock the verbs server reads for a peer's READ of the clock word (soft verbs: the host's clock). */
    @Override
    public DriftingClock nicClock() {
        return clocks.nic();
    }

    @Override
    public DriftingClock hostClock() {
        return clocks.host();
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
        if (capacity <= 0) {
            throw new IllegalArgumentException("completion queue capacity=" + capacity + " must be positive");
        }
        return new TcpCompletionQueue(clocks.nic());
    }

    // ------------------------------------------------------------------------------------------ connecting out

    @Override
    public Future<QueuePair> connect(final String remoteNode, final CompletionQueue cq, final QpOptions options) {
        if (closed) {
            return Future.failedFuture(new FabricException("NIC of node " + node + " is closed"));
        }
        if (!(cq instanceof TcpCompletionQueue)) {
            return Future.failedFuture(new FabricException("completion queue " + cq
                + " does not belong to the tcp fabric"));
        }
        if (fenced.contains(remoteNode)) {
            return Future.failedFuture(new FabricException("node " + remoteNode + " is fenced by node " + node));
        }
        final String address = fabric.addressOf(remoteNode);
        if (address == null) {
            return Future.failedFuture(new FabricException("node " + remoteNode + " has no address in the tcp "
                + "fabric's addresses"));
        }
        final QpOptions qpOptions;
        try {
            // A shared QP (RRPC's straws) is safe here: posts are serialised by the QP's lock, completions reach
            // the owner's queue through a lock-free inbox and wake its loop, and socket writes may come from any thread.
            qpOptions = new QpOptions(options).validate();
        } catch (final RuntimeException e) {
            return Future.failedFuture(e);
        }
        final String[] hostPort = FabricOptions.parseAddress(remoteNode, address);
        final int number = qpNumbers.incrementAndGet();
        final Promise<QueuePair> connected = Promise.promise();
        client.connect(Integer.parseInt(hostPort[1]), hostPort[0]).onComplete(ar -> {
            if (ar.failed()) {
                connected.fail(new FabricException("node " + remoteNode + " at " + address + " is unreachable: "
                    + ar.cause().getMessage(), ar.cause()));
                return;
            }
            handshake(ar.result(), remoteNode, number, qpOptions, (TcpCompletionQueue) cq, connected);
        });
        return connected.future();
    }

    private void handshake(final NetSocket socket, final String remoteNode, final int number,
                           final QpOptions options, final TcpCompletionQueue cq, final Promise<QueuePair> connected) {
        final byte[] nonce = ClusterSecret.nonce(TcpFrames.NONCE_BYTES);
        final long timer = vertx.setTimer(HANDSHAKE_TIMEOUT_MS, t -> {
            if (connected.tryFail(new FabricException("node " + remoteNode + " did not answer the handshake"))) {
                socket.close();
            }
        });
        final TcpConnection connection = new TcpConnection(this, socket, remoteNode);
        final TcpConnection.FrameReader[] reader = new TcpConnection.FrameReader[1];
        reader[0] = new TcpConnection.FrameReader(socket, TcpFrames.MAX_HELLO_BYTES, frame -> {
            vertx.cancelTimer(timer);
            if (frame.getByte(0) == TcpFrames.HELLO_OK && frame.length() >= 5
                && !responderProved(frame, remoteNode, nonce)) {
                connected.tryFail(new FabricException("node " + remoteNode + " did not prove it knows the cluster "
                    + "secret"));
                socket.close();
            } else if (frame.getByte(0) == TcpFrames.HELLO_OK && frame.length() >= 5) {
                final TcpQueuePair end = new TcpQueuePair(connection, number, node, remoteNode, options, cq);
                connection.start(end, reader[0]);
                connections.add(connection);
                if (!connected.tryComplete(end)) {
                    connection.close();
                }
            } else if (frame.getByte(0) == TcpFrames.HELLO_REFUSED && frame.length() >= 5) {
                final String why = readString(frame, 3);
                connected.tryFail(new FabricException("node " + remoteNode + " refused the connection: " + why));
                socket.close();
            } else {
                connected.tryFail(new FabricException("node " + remoteNode + " answered the handshake with a "
                    + "malformed frame"));
                socket.close();
            }
        }, why -> {
            connected.tryFail(new FabricException("node " + remoteNode + " answered with " + why));
            socket.close();
        });
        socket.closeHandler(v -> connected.tryFail(new FabricException("node " + remoteNode
            + " closed the connection during the handshake")));
        socket.write(hello(remoteNode, number, nonce));
    }

    private Buffer hello(final String target, final int number, final byte[] nonce) {
        final Buffer body = Buffer.buffer().appendByte(TcpFrames.HELLO)
            .appendIntLE(TcpFrames.MAGIC).appendShortLE((short) TcpFrames.VERSION);
        final ClusterSecret secret = fabric.options().secret();
        if (secret == null) {
            body.appendShortLE((short) 0);
        } else {
            final long now = System.currentTimeMillis();
            body.appendShortLE((short) TcpFrames.AUTH_BYTES).appendLongLE(now).appendBytes(nonce)
                .appendBytes(helloMac(secret, fabric.options().cluster(), node, target, now, nonce));
        }
        appendString(body, fabric.options().cluster());
        appendString(body, node);
        appendString(body, target);
        body.appendIntLE(number);
        return Buffer.buffer().appendIntLE(body.length()).appendBuffer(body);
    }

    // --------------------------------------------------------------------------------------------- incoming

    private void incoming(final NetSocket socket) {
        final TcpConnection.FrameReader[] reader = new TcpConnection.FrameReader[1];
        final long timer = vertx.setTimer(HANDSHAKE_TIMEOUT_MS, t -> socket.close());
        reader[0] = new TcpConnection.FrameReader(socket, TcpFrames.MAX_HELLO_BYTES, frame -> {
            vertx.cancelTimer(timer);
            accept(socket, frame, reader[0]);
        }, why -> refuse(socket, TcpFrames.REFUSED_PROTOCOL, "malformed handshake: " + why));
    }

    private void accept(final NetSocket socket, final Buffer frame, final TcpConnection.FrameReader reader) {
        final String cluster;
        final String initiator;
        final String target;
        final byte[] auth;
        try {
            if (frame.getByte(0) != TcpFrames.HELLO || frame.getIntLE(1) != TcpFrames.MAGIC) {
                refuse(socket, TcpFrames.REFUSED_PROTOCOL, "not a Scythe tcp fabric handshake");
                return;
            }
            if (frame.getShortLE(5) != TcpFrames.VERSION) {
                refuse(socket, TcpFrames.REFUSED_PROTOCOL, "protocol version " + frame.getShortLE(5)
                    + " is not " + TcpFrames.VERSION);
                return;
            }
            final int authLength = frame.getShortLE(7) & 0xffff;
            auth = frame.getBytes(9, 9 + authLength);
            int at = 9 + authLength;
            cluster = readString(frame, at);
            at += 2 + cluster.getBytes(StandardCharsets.UTF_8).length;
            initiator = readString(frame, at);
            at += 2 + initiator.getBytes(StandardCharsets.UTF_8).length;
            target = readString(frame, at);
            FabricOptions.checkName("node", initiator);
        } catch (final RuntimeException e) {
            refuse(socket, TcpFrames.REFUSED_PROTOCOL, "malformed handshake");
            return;
        }
        if (!fabric.options().cluster().equals(cluster)) {
            refuse(socket, TcpFrames.REFUSED_CLUSTER, "cluster '" + cluster + "' is not '"
                + fabric.options().cluster() + "'");
            return;
        }
        final String unproved = unproved(auth, cluster, initiator, target);
        if (unproved != null) {
            refuse(socket, TcpFrames.REFUSED_AUTH, unproved);
            return;
        }
        if (!node.equals(target)) {
            refuse(socket, TcpFrames.REFUSED_NODE, "this is node " + node + ", not " + target);
            return;
        }
        if (fenced.contains(initiator) || closed) {
            refuse(socket, TcpFrames.REFUSED_FENCED, "node " + initiator + " is fenced by node " + node
                + " and must rejoin");
            return;
        }
        final TcpConnection connection = new TcpConnection(this, socket, initiator);
        final QpAcceptor a = acceptor;
        final CompletionQueue cq = a == null ? null : a.completionQueueFor(initiator);
        final int number = qpNumbers.incrementAndGet();
        final TcpQueuePair end = new TcpQueuePair(connection, number, node, initiator, new QpOptions(),
            cq instanceof TcpCompletionQueue ? (TcpCompletionQueue) cq : null);
        connection.start(end, reader);
        connections.add(connection);
        final Buffer ok = Buffer.buffer().appendByte(TcpFrames.HELLO_OK).appendIntLE(number);
        final ClusterSecret secret = fabric.options().secret();
        if (secret != null) {
            ok.appendBytes(okMac(secret, cluster, target, initiator, java.util.Arrays.copyOfRange(auth, 8,
                8 + TcpFrames.NONCE_BYTES)));
        }
        socket.write(Buffer.buffer().appendIntLE(ok.length()).appendBuffer(ok));
        if (a != null && cq != null) {
            a.accepted(end);
        }
    }

    // ------------------------------------------------------------------------------------------ authentication

    /** Why the initiator did not prove the cluster secret, or {@code null} when it did (or no secret is set). */
    private String unproved(final byte[] auth, final String cluster, final String initiator, final String target) {
        final ClusterSecret secret = fabric.options().secret();
        if (secret == null) {
            return null;
        }
        if (auth.length != TcpFrames.AUTH_BYTES) {
            return "node " + initiator + " did not prove it knows the cluster secret";
        }
        final Buffer a = Buffer.buffer(auth);
        final long sentAt = a.getLongLE(0);
        final byte[] nonce = a.getBytes(8, 8 + TcpFrames.NONCE_BYTES);
        final byte[] mac = a.getBytes(8 + TcpFrames.NONCE_BYTES, auth.length);
        if (!ClusterSecret.same(mac, helloMac(secret, cluster, initiator, target, sentAt, nonce))) {
            return "node " + initiator + " did not prove it knows the cluster secret";
        }
        final long now = System.currentTimeMillis();
        if (Math.abs(now - sentAt) > TcpFrames.AUTH_WINDOW_MS) {
            return "handshake of node " + initiator + " is stale (clocks more than "
                + TcpFrames.AUTH_WINDOW_MS / 1000 + " s apart, or replayed)";
        }
        // A replayed HELLO carries a nonce already seen within the window.
        seenNonces.values().removeIf(t -> now - t > 2 * TcpFrames.AUTH_WINDOW_MS);
        if (seenNonces.putIfAbsent(java.util.HexFormat.of().formatHex(nonce), now) != null) {
            return "handshake of node " + initiator + " was replayed";
        }
        return null;
    }

    private boolean responderProved(final Buffer ok, final String remoteNode, final byte[] nonce) {
        final ClusterSecret secret = fabric.options().secret();
        if (secret == null) {
            return true;
        }
        return ok.length() == 5 + ClusterSecret.MAC_BYTES && ClusterSecret.same(ok.getBytes(5, ok.length()),
            okMac(secret, fabric.options().cluster(), remoteNode, node, nonce));
    }

    private static byte[] helloMac(final ClusterSecret secret, final String cluster, final String initiator,
                                   final String target, final long sentAt, final byte[] nonce) {
        return secret.mac(ClusterSecret.utf8("scythe-tcp-hello"), ClusterSecret.utf8(cluster),
            ClusterSecret.utf8(initiator), ClusterSecret.utf8(target), ClusterSecret.utf8(Long.toString(sentAt)),
            nonce);
    }

    private static byte[] okMac(final ClusterSecret secret, final String cluster, final String responder,
                                final String initiator, final byte[] nonce) {
        return secret.mac(ClusterSecret.utf8("scythe-tcp-ok"), ClusterSecret.utf8(cluster),
            ClusterSecret.utf8(responder), ClusterSecret.utf8(initiator), nonce);
    }

    private static void refuse(final NetSocket socket, final int code, final String message) {
        final Buffer body = Buffer.buffer().appendByte(TcpFrames.HELLO_REFUSED).appendShortLE((short) code);
        appendString(body, message);
        socket.write(Buffer.buffer().appendIntLE(body.length()).appendBuffer(body)).onComplete(v -> socket.close());
    }

    private static void appendString(final Buffer buffer, final String value) {
        final byte[] bytes = value.getBytes(StandardCharsets.UTF_8);
        buffer.appendShortLE((short) bytes.length).appendBytes(bytes);
    }

    private static String readString(final Buffer buffer, final int at) {
        final int length = buffer.getShortLE(at) & 0xffff;
        if (at + 2 + length > buffer.length()) {
            throw new IllegalArgumentException("string past the frame");
        }
        return buffer.getString(at + 2, at + 2 + length, "UTF-8");
    }

    /** REQUEST frames this node's verbs server executed (one per doorbell batch). */
    public long requestFrames() {
        return requestFrames.get();
    }

    void executedFrame() {
        requestFrames.incrementAndGet();
    }

    void forget(final TcpConnection connection) {
        connections.remove(connection);
    }

    // ---------------------------------------------------------------------------------------- fencing, closing

    @Override
    public void acceptor(final QpAcceptor acceptor) {
        this.acceptor = acceptor;
    }

    @Override
    public int fence(final String peerNode) {
        fenced.add(peerNode);
        int revoked = 0;
        for (final TcpConnection connection : connections) {
            if (connection.peer().equals(peerNode)) {
                connection.revokeHere();
                revoked++;
            }
        }
        return revoked;
    }

    /** The peer's frames run on this node's loops: a frame executing when the fence came finishes within moments. */
    @Override
    public Future<Void> fenceBarrier(final String peerNode) {
        final Promise<Void> done = Promise.promise();
        awaitIdle(peerNode, done);
        return done.future();
    }

    private void awaitIdle(final String peerNode, final Promise<Void> done) {
        for (final TcpConnection connection : connections) {
            if (connection.peer().equals(peerNode) && connection.executing()) {
                vertx.setTimer(1, t -> awaitIdle(peerNode, done));
                return;
            }
        }
        done.complete();
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
        final Collection<QueuePair> ends = new ArrayList<>();
        for (final TcpConnection connection : connections) {
            if (connection.end() != null && connection.end().state() != QpState.CLOSED) {
                ends.add(connection.end());
            }
        }
        return ends;
    }

    @Override
    public void close() {
        if (closed) {
            return;
        }
        closed = true;
        vertx.cancelTimer(timeoutSweep);
        for (final TcpConnection connection : connections) {
            connection.close();
        }
        if (server != null) {
            server.close();
        }
        client.close();
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
        return "TcpNic{" + node + '}';
    }
}
