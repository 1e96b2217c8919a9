package io.scythe.cli;

import io.scythe.cluster.LocalCluster;
import picocli.CommandLine.Option;

import java.io.IOException;
import java.time.Duration;

/**
 * The compute nodes' lease on the fabric (issue 23 §3, {@code NodeConfig}'s {@code leaseRenewMs}, {@code leaseMs},
 * {@code leaseGraceMs}), for the commands that start a local cluster; unset options keep the nodes' defaults.
 */
final class LeaseOptions {
    @Accepts(min = "0s")
    @Option(names = "--lease-renew", description = "How often a compute node renews its lease on the fabric (a "
        + "one-sided WRITE on every memory node); 0s: no fabric lease, Hazelcast's heartbeat alone detects a paused "
        + "or dead compute node (default: 0s, off; 50ms turns it on). On, the lease threads and each node JVM's "
        + "VM and GC threads run at real-time priority where allowed (root): a collection then takes the host's "
        + "CPUs for its length.")
    Duration renew;

    @Accepts(min = "1ms")
    @Option(names = "--lease", description = "How long a compute node serves after its last acknowledged renewal "
        + "(default: 750ms).")
    Duration lease;

    @Accepts(min = "1ms")
    @Option(names = "--lease-grace", description = "How much longer a memory node waits before it fences a compute "
        + "node whose renewals stopped (default: 100ms).")
    Duration grace;

    /** Writes the options given into every node's config of {@code cluster} (before it starts). */
    void apply(final LocalCluster cluster) throws IOException {
        final io.vertx.core.json.JsonObject check = cluster.clientConfigJson();
        put(check);
        try {
            io.scythe.cluster.NodeConfig.of(check);
        } catch (final IllegalArgumentException e) {
            throw new IllegalArgumentException("--lease-renew, --lease, --lease-grace: " + e.getMessage(), e);
        }
        for (final String node : cluster.nodes().keySet()) {
            final io.vertx.core.json.JsonObject keys = new io.vertx.core.json.JsonObject();
            put(keys);
            for (final String key : keys.fieldNames()) {
                cluster.configure(node, key, keys.getValue(key));
            }
        }
    }

    private void put(final io.vertx.core.json.JsonObject config) {
        if (renew != null) {
            config.put("leaseRenewMs", renew.toMillis());
        }
        if (lease != null) {
            config.put("leaseMs", lease.toMillis());
        }
        if (grace != null) {
            config.put("leaseGraceMs", grace.toMillis());
        }
    }
}
