package io.scythe.cluster;

import com.hazelcast.config.Config;
import com.hazelcast.config.JoinConfig;
import com.hazelcast.config.NetworkConfig;
import com.hazelcast.config.XmlConfigBuilder;
import io.scythe.fabric.ClusterSecret;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.VertxOptions;
import io.vertx.core.eventbus.EventBusOptions;
import io.vertx.spi.cluster.hazelcast.HazelcastClusterManager;

import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;
import io.vertx.core.http.ClientAuth;
import io.vertx.core.net.PfxOptions;
import java.util.logging.Level;
import java.util.logging.Logger;

/**
 * How a process joins a Scythe cluster: Hazelcast from {@code conf/cluster.xml} (TCP join, never multicast; binds only
 * the node's address; fast failure detection) with this node's name, address and members, and a clustered Vert.x
 * whose event bus binds the same address. The Hazelcast cluster name carries a tag derived from the cluster secret:
 * a process without the secret computes another name and is refused at join.
 */
public final class ClusterSetup {
    /** Hazelcast properties the split-brain merge needs to bring a paused member back within seconds. */
    public static final String MERGE_DELAY_SECONDS = "5";

    /** Held so the level set on it is not lost with a collected logger. */
    private static final Logger HAZELCAST_LOG = Logger.getLogger("com.hazelcast");

    private ClusterSetup() {
    }

    /** The Hazelcast cluster name of {@code cluster} under {@code secret}. */
    public static String hazelcastClusterName(final String cluster, final String secret) {
        return cluster + "-" + new ClusterSecret(secret).tag("hazelcast-cluster:" + cluster, 16);
    }

    public static Config hazelcastConfig(final NodeConfig node) {
        final Config hz;
        try (InputStream xml = ClusterSetup.class.getResourceAsStream("cluster.xml")) {
            if (xml == null) {
                throw new IllegalStateException("io/scythe/cluster/cluster.xml (conf/cluster.xml) is not on the "
                    + "classpath");
            }
            hz = new XmlConfigBuilder(xml).build();
        } catch (final IOException e) {
            throw new IllegalStateException("cannot read cluster.xml: " + e.getMessage(), e);
        }
        hz.setClusterName(hazelcastClusterName(node.cluster(), node.secret()));
        hz.setInstanceName(node.cluster() + "-" + node.node() + "-" + ProcessHandle.current().pid());
        hz.setProperty("hazelcast.merge.first.run.delay.seconds", MERGE_DELAY_SECONDS);
        hz.setProperty("hazelcast.merge.next.run.delay.seconds", MERGE_DELAY_SECONDS);
        final NetworkConfig network = hz.getNetworkConfig();
        network.setPort(node.hazelcastPort()).setPortAutoIncrement(false);
        network.getInterfaces().setEnabled(true).clear().addInterface(node.host());
        final JoinConfig join = network.getJoin();
        join.getMulticastConfig().setEnabled(false);
        join.getAutoDetectionConfig().setEnabled(false);
        join.getTcpIpConfig().setEnabled(true).setMembers(node.members());
        return hz;
    }

    /** Starts a clustered Vert.x for {@code node}; completes once it has joined. */
    public static Future<Vertx> join(final NodeConfig node) {
        return join(node, null);
    }

    /**
     * As {@link #join(NodeConfig)}, with Vert.x's and the JVM's metrics on {@code metrics} ({@code null}: no Vert.x
     * metrics).
     */
    public static Future<Vertx> join(final NodeConfig node, final io.micrometer.core.instrument.MeterRegistry metrics) {
        quietHazelcastLogs();
        final HazelcastClusterManager manager = new HazelcastClusterManager(hazelcastConfig(node));
        final EventBusOptions eventBus = new EventBusOptions().setHost(node.host()).setPort(node.eventBusPort())
            .setClusterPublicHost(node.host());
        if (node.eventBusKeyStore() != null) {
            // Mutual TLS with the cluster's one certificate: a peer that does not hold it cannot connect.
            final PfxOptions store = new PfxOptions().setPath(node.eventBusKeyStore()).setPassword(node.secret());
            eventBus.setSsl(true).setKeyCertOptions(store).setTrustOptions(store).setClientAuth(ClientAuth.REQUIRED);
        }
        final VertxOptions options = new VertxOptions().setEventLoopPoolSize(node.loops())
            .setEventBusOptions(eventBus);
        if (metrics == null) {
            return Vertx.builder().with(options).withClusterManager(manager).buildClustered();
        }
        options.setMetricsOptions(NodeMetrics.vertxMetrics());
        return Vertx.builder().with(options).withClusterManager(manager)
            .withMetrics(new io.vertx.micrometer.MicrometerMetricsFactory(metrics)).buildClustered();
    }

    /**
     * Creates the cluster's event-bus key store: a PKCS12 file at {@code file} holding one EC key pair and its
     * self-signed certificate, protected by the secret (made with the JDK's keytool). Install the same file on
     * every node ({@code eventBusKeyStore}).
     */
    public static void createEventBusKeyStore(final Path file, final String cluster, final String secret)
        throws IOException, InterruptedException {
        final Path keytool = Path.of(System.getProperty("java.home"), "bin", "keytool");
        final ProcessBuilder builder = new ProcessBuilder(keytool.toString(), "-genkeypair", "-alias", "scythe",
            "-keyalg", "EC", "-groupname", "secp256r1", "-dname", "CN=scythe-" + cluster, "-validity", "3650",
            "-storetype", "PKCS12", "-keystore", file.toString(), "-storepass:env", "SCYTHE_KEYSTORE_PASSWORD")
            .redirectErrorStream(true).redirectOutput(ProcessBuilder.Redirect.DISCARD);
        // The secret reaches keytool through its environment, never its command line (visible to every user).
        builder.environment().put("SCYTHE_KEYSTORE_PASSWORD", secret);
        final Process p = builder.start();
        if (!p.waitFor(60, TimeUnit.SECONDS) || p.exitValue() != 0) {
            throw new IllegalStateException("keytool could not create the event-bus key store " + file);
        }
    }

    /** The Hazelcast instance behind a clustered Vert.x made by {@link #join}. */
    public static com.hazelcast.core.HazelcastInstance hazelcast(final Vertx vertx) {
        final var manager = ((io.vertx.core.internal.VertxInternal) vertx).clusterManager();
        if (!(manager instanceof HazelcastClusterManager hz)) {
            throw new IllegalStateException("this Vert.x is not clustered through Hazelcast");
        }
        return hz.getHazelcastInstance();
    }

    private static void quietHazelcastLogs() {
        if (System.getProperty("scythe.hazelcast.log") == null) {
            HAZELCAST_LOG.setLevel(Level.WARNING);
        }
    }
}
