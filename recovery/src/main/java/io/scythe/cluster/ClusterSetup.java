package io.scythe.cluster;

import com.hazelcast.config.Config;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.VertxOptions;

import java.io.IOException;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;

/**
 * How a node joins a Scythe cluster: as {@link ClusterAccess} (in scythe-client, which clients share) from the node's
 * config, plus Vert.x's metrics on the node's registry, and the cluster's event-bus key store.
 */
public final class ClusterSetup {
    /** Hazelcast properties the split-brain merge needs to bring a paused member back within seconds. */
    public static final String MERGE_DELAY_SECONDS = ClusterAccess.MERGE_DELAY_SECONDS;

    private ClusterSetup() {
    }

    /** The Hazelcast cluster name of {@code cluster} under {@code secret}. */
    public static String hazelcastClusterName(final String cluster, final String secret) {
        return ClusterAccess.hazelcastClusterName(cluster, secret);
    }

    public static Config hazelcastConfig(final NodeConfig node) {
        return node.access().hazelcastConfig();
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
        final ClusterAccess access = node.access();
        if (metrics == null) {
            return access.join();
        }
        final VertxOptions options = access.vertxOptions().setMetricsOptions(NodeMetrics.vertxMetrics());
        return Vertx.builder().with(options).withClusterManager(access.clusterManager())
            .withMetrics(new io.vertx.micrometer.MicrometerMetricsFactory(metrics)).buildClustered();
    }

    /**
     * As {@link #join(NodeConfig, io.micrometer.core.instrument.MeterRegistry)}, joining again while Hazelcast refuses
     * the join because the membership is changing, until {@code timeoutMs} passed ({@link ClusterAccess#joinPatiently}).
     * Blocks: call it from a thread that is not an event loop.
     */
    public static Vertx joinPatiently(final NodeConfig node, final io.micrometer.core.instrument.MeterRegistry metrics,
                                      final long timeoutMs, final Consumer<String> log) throws Exception {
        return node.access().joinPatiently(() -> join(node, metrics), timeoutMs, log);
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
        return ClusterAccess.hazelcast(vertx);
    }
}
