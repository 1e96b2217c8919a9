package io.scythe.cluster;

import com.hazelcast.config.Config;
import com.hazelcast.config.JoinConfig;
import com.hazelcast.config.ListenerConfig;
import com.hazelcast.config.InvalidConfigurationException;
import com.hazelcast.config.NetworkConfig;
import com.hazelcast.config.XmlConfigBuilder;
import com.hazelcast.core.Hazelcast;
import com.hazelcast.core.HazelcastException;
import com.hazelcast.core.HazelcastInstance;
import com.hazelcast.partition.NoDataMemberInClusterException;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.VertxOptions;
import io.vertx.core.eventbus.EventBusOptions;
import io.vertx.core.http.ClientAuth;
import io.vertx.core.json.DecodeException;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import io.vertx.core.net.PfxOptions;
import io.vertx.spi.cluster.hazelcast.HazelcastClusterManager;

import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;
import java.io.IOException;
import java.io.InputStream;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Consumer;
import java.util.function.Supplier;
import java.util.logging.Level;
import java.util.logging.Logger;

/**
 * What a process needs to join a Scythe cluster's Vert.x cluster, node or client: the cluster's name and secret, this
 * process's name, address and ports, the Hazelcast members to join and the event bus's key store. Hazelcast starts
 * from {@code conf/cluster.xml} (in this jar: TCP join, never multicast; binds only {@link #host}; a hung member is
 * declared dead after 3 s), and the clustered Vert.x's event bus binds the same address. The Hazelcast cluster name
 * carries a tag derived from the secret: a process without it computes another name and is refused at join.
 *
 * <p>A client builds one from the {@code client.json} that {@code scythe cluster} writes ({@link #ofClientJson});
 * a node's {@code NodeConfig.access()} gives its own.
 *
 * @param cluster          the cluster's name
 * @param secret           the cluster secret (at least {@value #MIN_SECRET_CHARS} characters)
 * @param node             this process's name in the cluster (Hazelcast instance name)
 * @param host             the one address this process binds (Hazelcast and event bus)
 * @param hazelcastPort    this process's Hazelcast member port
 * @param members          {@code host:port} of the Hazelcast members to join by TCP
 * @param eventBusPort     the clustered event bus's port (0: any free one)
 * @param loops            event loops
 * @param eventBusKeyStore the cluster's PKCS12 event-bus key store (password: the secret), or {@code null} for a
 *                         plaintext event bus
 * @param joinTimeoutMs    how long a join may take
 */
public record ClusterAccess(String cluster, String secret, String node, String host, int hazelcastPort,
                            List<String> members, int eventBusPort, int loops, String eventBusKeyStore,
                            long joinTimeoutMs) {
    /** The Hazelcast map of the cluster's nodes (name to a JSON entry: {@code role}, {@code member}, ...). */
    public static final String NODE_REGISTRY = "scythe.nodes";
    public static final int MIN_SECRET_CHARS = 16;
    /** Hazelcast properties the split-brain merge needs to bring a paused member back within seconds. */
    public static final String MERGE_DELAY_SECONDS = "5";

    /**
     * A system property that, when set, replaces cluster.xml's {@code hazelcast.max.no.heartbeat.seconds} (3 s): how
     * long a member may send no heartbeat before it is declared dead. The recovery module's process tests set it
     * (its pom says why); {@code LocalCluster} passes it on to the node JVMs it starts.
     */
    public static final String MAX_NO_HEARTBEAT_PROPERTY = "scythe.hazelcast.maxNoHeartbeatSeconds";
    /**
     * How many heartbeat timeouts ({@link #maxNoHeartbeatSeconds()}) a member's cluster may have no seed member (no
     * configured TCP {@link #members} address) before its master looks for the seeds' cluster to merge into
     * ({@link MemberWatchdog}).
     */
    public static final int SEEDLESS_HEARTBEAT_TIMEOUTS = 3;
    /**
     * How long a member connection this process opened may go without a byte from its peer (not even Hazelcast's
     * protocol bytes, which a live peer sends at once) before it is closed ({@link MemberWatchdog}): a paused peer
     * pins an output I/O thread for as long as such a connection lives, and the other connections that thread serves
     * send no heartbeat meanwhile: well below the heartbeat timeout (3 s, heartbeats every 1 s). Measured
     * (PausedPeerIoSpinTest, a paused seed, load 37-40): output-thread CPU in 12 s 3.8 s without, 0.87 s with 2 s,
     * 0.23 s with 1 s. A live peer answers at once; one too slow for this only costs a new dial.
     */
    public static final long HANDSHAKE_TIMEOUT_MS = 1_000;
    /** conf/cluster.xml's {@code hazelcast.max.no.heartbeat.seconds}. */
    public static final int DEFAULT_MAX_NO_HEARTBEAT_SECONDS = 3;

    /**
     * How long a member may send no heartbeat before Hazelcast declares it dead here: {@link #MAX_NO_HEARTBEAT_PROPERTY}
     * when set, else {@link #DEFAULT_MAX_NO_HEARTBEAT_SECONDS}. A CN's own lease and the wait for a memory node's
     * failover follow it ({@code ScytheNode#LEASE_MS}).
     */
    public static int maxNoHeartbeatSeconds() {
        final String value = System.getProperty(MAX_NO_HEARTBEAT_PROPERTY);
        if (value == null) {
            return DEFAULT_MAX_NO_HEARTBEAT_SECONDS;
        }
        if (!value.matches("[1-9][0-9]{0,3}")) {
            throw new IllegalArgumentException(MAX_NO_HEARTBEAT_PROPERTY + " must be whole seconds from 1 to 9999, not '"
                + value + "'");
        }
        return Integer.parseInt(value);
    }

    /** Held so the level set on it is not lost with a collected logger. */
    private static final Logger HAZELCAST_LOG = Logger.getLogger("com.hazelcast");
    private static final AtomicInteger CLIENTS = new AtomicInteger();

    public ClusterAccess {
        if (cluster == null || cluster.isEmpty()) {
            throw new IllegalArgumentException("cluster name must be set");
        }
        if (secret == null || secret.length() < MIN_SECRET_CHARS) {
            throw new IllegalArgumentException("secret must be set, at least " + MIN_SECRET_CHARS
                + " characters (every node of the cluster has the same)");
        }
        members = List.copyOf(members);
        if (members.isEmpty()) {
            throw new IllegalArgumentException("members must name at least one host:port to join");
        }
        for (final String m : members) {
            checkMember(m);
        }
        if (loops <= 0) {
            throw new IllegalArgumentException("loops=" + loops + " must be positive");
        }
    }

    /**
     * A client's access from a {@code client.json} ({@code scythe cluster} writes it into its directory; any node
     * config of the cluster will do): its {@code cluster}, {@code secret}, {@code members}, {@code host} (default
     * 127.0.0.1), {@code eventBusKeyStore} and {@code readyTimeoutMs} (how long the join may take, default 60 s). Its
     * other keys configure nodes and are not a client's business. The client gets a name and free ports of its own,
     * so several processes may join with one file.
     */
    public static ClusterAccess ofClientJson(final Path clientJson) {
        final JsonObject json;
        try {
            json = new JsonObject(Files.readString(clientJson));
        } catch (final IOException | DecodeException e) {
            throw new IllegalArgumentException(clientJson + " is not a readable client.json: " + e.getMessage());
        }
        try {
            return ofClientJson(json);
        } catch (final IllegalArgumentException e) {
            throw new IllegalArgumentException(clientJson + ": " + e.getMessage(), e);
        }
    }

    /** As {@link #ofClientJson(Path)}, from the file's content. */
    public static ClusterAccess ofClientJson(final JsonObject json) {
        try {
            final JsonArray array = json.getJsonArray("members", new JsonArray().add("127.0.0.1:5701"));
            final List<String> members = new ArrayList<>();
            for (final Object o : array) {
                if (!(o instanceof String s)) {
                    throw new IllegalArgumentException("members must be a list of host:port strings, not " + array);
                }
                members.add(s);
            }
            final String keyStore = json.getString("eventBusKeyStore");
            if (keyStore != null && !Files.isRegularFile(Path.of(keyStore))) {
                throw new IllegalArgumentException("eventBusKeyStore " + keyStore + " not found");
            }
            return new ClusterAccess(json.getString("cluster", "scythe"), json.getString("secret"),
                "client-" + ProcessHandle.current().pid() + "-" + CLIENTS.incrementAndGet(),
                json.getString("host", "127.0.0.1"), freePort(), members, 0, 1, keyStore,
                json.getLong("readyTimeoutMs", 60_000L));
        } catch (final ClassCastException e) {
            throw new IllegalArgumentException("client.json: a value has the wrong type (" + e.getMessage() + ")");
        }
    }

    /** The Hazelcast cluster name of {@code cluster} under {@code secret}: {@code cluster-TAG}. */
    public static String hazelcastClusterName(final String cluster, final String secret) {
        // HMAC-SHA256 of the length-prefixed purpose, as io.scythe.fabric.ClusterSecret#tag computes its tags.
        final byte[] purpose = ("hazelcast-cluster:" + cluster).getBytes(StandardCharsets.UTF_8);
        try {
            final Mac mac = Mac.getInstance("HmacSHA256");
            mac.init(new SecretKeySpec(secret.getBytes(StandardCharsets.UTF_8), "HmacSHA256"));
            mac.update(new byte[] {(byte) (purpose.length >>> 24), (byte) (purpose.length >>> 16),
                (byte) (purpose.length >>> 8), (byte) purpose.length});
            return cluster + "-" + HexFormat.of().formatHex(mac.doFinal(purpose)).substring(0, 16);
        } catch (final GeneralSecurityException e) {
            throw new IllegalStateException("HmacSHA256 is unavailable in this JVM", e);
        }
    }

    /** Hazelcast's configuration: conf/cluster.xml with this process's name, address, port and members. */
    public Config hazelcastConfig() {
        final Config hz;
        try (InputStream xml = ClusterAccess.class.getResourceAsStream("cluster.xml")) {
            if (xml == null) {
                throw new IllegalStateException("io/scythe/cluster/cluster.xml (conf/cluster.xml) is not on the "
                    + "classpath");
            }
            hz = new XmlConfigBuilder(xml).build();
        } catch (final IOException e) {
            throw new IllegalStateException("cannot read cluster.xml: " + e.getMessage(), e);
        }
        hz.setClusterName(hazelcastClusterName(cluster, secret));
        hz.setInstanceName(hazelcastInstanceName());
        hz.setProperty("hazelcast.merge.first.run.delay.seconds", MERGE_DELAY_SECONDS);
        hz.setProperty("hazelcast.merge.next.run.delay.seconds", MERGE_DELAY_SECONDS);
        if (System.getProperty(MAX_NO_HEARTBEAT_PROPERTY) != null) {
            hz.setProperty("hazelcast.max.no.heartbeat.seconds", Integer.toString(maxNoHeartbeatSeconds()));
        }
        final NetworkConfig network = hz.getNetworkConfig();
        network.setPort(hazelcastPort).setPortAutoIncrement(false);
        network.getInterfaces().setEnabled(true).clear().addInterface(host);
        final JoinConfig join = network.getJoin();
        join.getMulticastConfig().setEnabled(false);
        join.getAutoDetectionConfig().setEnabled(false);
        join.getTcpIpConfig().setEnabled(true).setMembers(members);
        // A side of the cluster left without any seed merges into the seeds' cluster once it finds it (MemberWatchdog).
        hz.addListenerConfig(new ListenerConfig(new MemberWatchdog(members,
            SEEDLESS_HEARTBEAT_TIMEOUTS * 1_000L * maxNoHeartbeatSeconds(), HANDSHAKE_TIMEOUT_MS)));
        return hz;
    }

    /**
     * Whether this process's own Hazelcast address ({@link #host}:{@link #hazelcastPort}) is one of the {@link #members}
     * it joins by: a seed. Names are resolved; one that does not resolve now is compared as written.
     */
    public boolean isSeed() {
        final InetSocketAddress self = memberAddress(host + ":" + hazelcastPort);
        return members.stream().map(ClusterAccess::memberAddress).anyMatch(self::equals);
    }

    /** {@code host:port} (checked by the constructor) as a socket address, resolved when it can be. */
    static InetSocketAddress memberAddress(final String member) {
        final int colon = member.lastIndexOf(':');
        return new InetSocketAddress(member.substring(0, colon), Integer.parseInt(member.substring(colon + 1)));
    }

    /** Vert.x's options: {@link #loops} event loops, the event bus on {@link #host} (mutual TLS with a key store). */
    public VertxOptions vertxOptions() {
        final EventBusOptions eventBus = new EventBusOptions().setHost(host).setPort(eventBusPort)
            .setClusterPublicHost(host);
        if (eventBusKeyStore != null) {
            // Mutual TLS with the cluster's one certificate: a peer that does not hold it cannot connect.
            final PfxOptions store = new PfxOptions().setPath(eventBusKeyStore).setPassword(secret);
            eventBus.setSsl(true).setKeyCertOptions(store).setTrustOptions(store).setClientAuth(ClientAuth.REQUIRED);
        }
        return new VertxOptions().setEventLoopPoolSize(loops).setEventBusOptions(eventBus);
    }

    /**
     * A Hazelcast cluster manager for {@link #hazelcastConfig()} (Hazelcast's own logs quieted to warnings) that routes
     * event-bus messages to members only ({@link MemberOnlyClusterManager}).
     */
    public HazelcastClusterManager clusterManager() {
        return clusterManager(false);
    }

    private HazelcastClusterManager clusterManager(final boolean liteMember) {
        if (System.getProperty("scythe.hazelcast.log") == null) {
            HAZELCAST_LOG.setLevel(Level.WARNING);
        }
        return new MemberOnlyClusterManager(hazelcastConfig().setLiteMember(liteMember));
    }

    /** Starts a clustered Vert.x; completes once it has joined. */
    public Future<Vertx> join() {
        return Vertx.builder().with(vertxOptions()).withClusterManager(clusterManager(false)).buildClustered();
    }

    /**
     * As {@link #join()}, as a Hazelcast lite member: a member that owns no partition and holds no backup, what a
     * client is. The nodes' data members alone hold the registry and Vert.x's subscriptions, so a client that stalls
     * (a test JVM or load generator starved of CPU), leaves or dies moves no partition and loses no backup, and the
     * partition migrations that follow a node's death or restart involve only the nodes. A client used to be a full
     * member (issue 23): in TsoFailoverProcessTest at load 60 the starved test JVM missed heartbeats, split off as a
     * cluster of its own with partitions of the node registry and Vert.x's maps, and merged back with a new member id
     * while the TSO and a CN were killed and restarted; the restarted CN then sent to an event-bus peer that was "not a
     * member of the cluster" for two minutes and was never ready (CI runs 72 and 76: the restarted CN refused at join).
     *
     * <p>A lite member alone (no node of this cluster answered) cannot hold Vert.x's own maps, and Hazelcast refuses it
     * with {@link NoDataMemberInClusterException}. That is transient while the cluster's members are busy (a starved
     * machine, a membership change): the refused member is shut down and a lite member joins again, every
     * {@link #JOIN_RETRY_PAUSE_MS}, until {@link #liteJoinReserveMs()} before the join deadline
     * ({@link #joinTimeoutMs}). Only then (a stale client.json, another secret: no node of this cluster will ever
     * answer) does it join as a full member, a cluster of its own, so the caller sees what it would have seen before:
     * a cluster without any node. Before, the first refusal made the client a full member at once, which a client must
     * not be (above).
     */
    public Future<Vertx> joinAsLiteMember() {
        final long start = System.nanoTime();
        return joinAsLiteMember(start, start + TimeUnit.MILLISECONDS.toNanos(joinTimeoutMs - liteJoinReserveMs()));
    }

    /**
     * What a lite join leaves of the join deadline for the full-member join that ends it when no node answered: a
     * member alone forms its cluster in ~3.5 s (../shared/DEPENDENCIES.md), more on a loaded machine. Half the join
     * timeout, at most 10 s.
     */
    long liteJoinReserveMs() {
        return Math.min(joinTimeoutMs / 2, 10_000);
    }

    private Future<Vertx> joinAsLiteMember(final long start, final long liteUntil) {
        return Vertx.builder().with(vertxOptions()).withClusterManager(clusterManager(true)).buildClustered()
            .recover(failure -> {
                if (!causedBy(failure, NoDataMemberInClusterException.class)) {
                    return Future.failedFuture(failure);
                }
                // Shutting the refused member down blocks: not on the thread that completed the attempt (a loop).
                final io.vertx.core.Promise<Vertx> next = io.vertx.core.Promise.promise();
                final Thread again = new Thread(() -> {
                    final HazelcastInstance refused = Hazelcast.getHazelcastInstanceByName(hazelcastInstanceName());
                    if (refused != null) {
                        refused.getLifecycleService().terminate();
                    }
                    if (liteUntil - System.nanoTime() > TimeUnit.MILLISECONDS.toNanos(JOIN_RETRY_PAUSE_MS)) {
                        try {
                            Thread.sleep(JOIN_RETRY_PAUSE_MS);
                        } catch (final InterruptedException e) {
                            Thread.currentThread().interrupt();
                            next.fail(e);
                            return;
                        }
                        joinAsLiteMember(start, liteUntil).onComplete(next);
                    } else {
                        FULL_MEMBER_AFTER_MS.put(node, TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start));
                        join().onComplete(next);
                    }
                }, "scythe-join-again");
                again.setDaemon(true);
                again.start();
                return next.future();
            });
    }

    /**
     * For tests: by {@link #node} name, how long after its first lite join a client that found no node last joined as
     * a full member instead. By name, not one value per JVM: a test joins two refused clients side by side
     * (ClusterProcessTest), each checked on its own.
     */
    static final java.util.Map<String, Long> FULL_MEMBER_AFTER_MS = new java.util.concurrent.ConcurrentHashMap<>();

    private static boolean causedBy(final Throwable failure, final Class<? extends Throwable> type) {
        for (Throwable t = failure; t != null; t = t.getCause() == t ? null : t.getCause()) {
            if (type.isInstance(t)) {
                return true;
            }
        }
        return false;
    }

    /** This process's Hazelcast member's name: {@code cluster-node-pid}. */
    private String hazelcastInstanceName() {
        return cluster + "-" + node + "-" + ProcessHandle.current().pid();
    }

    /** How long a process waits before it tries to join again after Hazelcast refused it while membership changed. */
    static final long JOIN_RETRY_PAUSE_MS = 1_000;

    /** As {@link #join()}, joining again while Hazelcast refuses ({@link #joinPatiently(Supplier, long, Consumer)}). */
    public Vertx joinPatiently(final long timeoutMs, final Consumer<String> log) throws Exception {
        return joinPatiently(this::join, timeoutMs, log);
    }

    /**
     * Joins by {@code attempt} (a {@link #join()} of this access, maybe with more options) until it succeeds or
     * {@code timeoutMs} passed, shutting a refused attempt's Hazelcast member down before the next. Blocks: call it
     * from a thread that is not an event loop.
     */
    public Vertx joinPatiently(final Supplier<Future<Vertx>> attempt, final long timeoutMs, final Consumer<String> log)
        throws Exception {
        final String instance = hazelcastInstanceName();
        return joinPatiently(attempt, () -> {
            final HazelcastInstance leftover = Hazelcast.getHazelcastInstanceByName(instance);
            if (leftover != null) {
                try {
                    leftover.shutdown();
                } catch (final RuntimeException slow) { // a graceful shutdown can time out while partitions move
                    leftover.getLifecycleService().terminate();
                }
            }
        }, timeoutMs, JOIN_RETRY_PAUSE_MS, log);
    }

    /**
     * Joins by {@code attempt} until it succeeds or {@code timeoutMs} passed. A process started while members split off
     * or merge back (a killed member, a starved one missing heartbeats) can be refused with "Cluster topology was not
     * stable for 100 retries" (CI run 72: a restarted CN, refused so, then sat as a live process that never served,
     * its half-made Hazelcast member keeping the JVM up). That refusal is transient: join again, as a supervisor would
     * restart the process, after {@code cleanup} shut the refused attempt's member down. So is a clustered Vert.x
     * whose start failed on a Hazelcast operation (its node-info put finding the partition's owner gone, a member that
     * left while the partition table still named it: a chaos soak's restarts failed so), whatever wraps the
     * Hazelcast exception; and a cleanup that fails is logged, not thrown (its failure, a graceful shutdown timing out,
     * ended the process: the restart failed). A configuration Hazelcast rejects is not transient and fails at once.
     */
    static Vertx joinPatiently(final Supplier<Future<Vertx>> attempt, final Runnable cleanup, final long timeoutMs,
                               final long pauseMs, final Consumer<String> log) throws Exception {
        final long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(timeoutMs);
        for (int tries = 1; ; tries++) {
            final long left = TimeUnit.NANOSECONDS.toMillis(deadline - System.nanoTime());
            try {
                return attempt.get().await(Math.max(1, left), TimeUnit.MILLISECONDS);
            } catch (final Exception failed) { // no half-joined member left behind in this process, whatever failed
                try {
                    cleanup.run();
                } catch (final RuntimeException e) {
                    log.accept("shutting the failed attempt's member down failed too (" + e + ")");
                }
                final HazelcastException refused = hazelcastCause(failed);
                if (refused == null || refused instanceof InvalidConfigurationException
                    || TimeUnit.NANOSECONDS.toMillis(deadline - System.nanoTime()) <= pauseMs) {
                    throw failed; // timed out, say, or not Hazelcast's refusal
                }
                log.accept("joining the cluster failed at attempt " + tries + " (" + refused.getMessage()
                    + "); trying again in " + pauseMs + " ms");
                Thread.sleep(pauseMs);
            }
        }
    }

    /** The first Hazelcast exception in {@code e}'s cause chain, or null. */
    private static HazelcastException hazelcastCause(final Throwable e) {
        Throwable t = e;
        for (int depth = 0; t != null && depth < 16; depth++, t = t.getCause()) {
            if (t instanceof HazelcastException h) {
                return h;
            }
        }
        return null;
    }

    /** The Hazelcast instance behind a clustered Vert.x made by {@link #join}. */
    public static com.hazelcast.core.HazelcastInstance hazelcast(final Vertx vertx) {
        final var manager = ((io.vertx.core.internal.VertxInternal) vertx).clusterManager();
        if (!(manager instanceof HazelcastClusterManager hz)) {
            throw new IllegalStateException("this Vert.x is not clustered through Hazelcast");
        }
        return hz.getHazelcastInstance();
    }

    @Override
    public String toString() {
        return "ClusterAccess{cluster=" + cluster + ", node=" + node + ", host=" + host + ", members=" + members
            + ", secret hidden}";
    }

    private static void checkMember(final String member) {
        final int colon = member == null ? -1 : member.lastIndexOf(':');
        if (colon <= 0) {
            throw new IllegalArgumentException("member '" + member + "' must be host:port");
        }
        final int port;
        try {
            port = Integer.parseInt(member.substring(colon + 1));
        } catch (final NumberFormatException e) {
            throw new IllegalArgumentException("member '" + member + "' must be host:port");
        }
        if (port <= 0 || port > 65535) {
            throw new IllegalArgumentException("member '" + member + "': " + port + " is not a port");
        }
    }

    private static int freePort() {
        try (ServerSocket socket = new ServerSocket(0)) {
            return socket.getLocalPort();
        } catch (final IOException e) {
            throw new IllegalStateException("no free port for the client's Hazelcast member: " + e.getMessage(), e);
        }
    }
}
