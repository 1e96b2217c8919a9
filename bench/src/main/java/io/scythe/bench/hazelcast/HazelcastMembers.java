package io.scythe.bench.hazelcast;

import com.hazelcast.config.Config;
import com.hazelcast.config.JoinConfig;
import com.hazelcast.config.MapConfig;
import com.hazelcast.config.NetworkConfig;
import com.hazelcast.core.Hazelcast;
import com.hazelcast.core.HazelcastInstance;

import java.util.ArrayList;
import java.util.List;
import java.util.logging.Level;
import java.util.logging.Logger;

/**
 * Embedded Hazelcast members in this JVM, joined by TCP on 127.0.0.1 (multicast and auto-detection off, phone-home
 * off, bound to loopback only), under a cluster name of their own so that no other cluster on the host merges with
 * them. Maps keep no backup copy. Closing shuts every member down.
 */
public final class HazelcastMembers implements AutoCloseable {
    /** Held so that the level set on it stays (JUL keeps loggers weakly). */
    private static final Logger HAZELCAST_LOG = Logger.getLogger("com.hazelcast");
    private static final int BASE_PORT = 5901; // away from 5701, where membership tests run their clusters
    private static final int PORT_COUNT = 30;

    private final List<HazelcastInstance> members = new ArrayList<>();
    private final String clusterName;

    public HazelcastMembers(final int count) {
        if (count < 1 || count > 16) {
            throw new IllegalArgumentException("hazelcast members=" + count + " must be within [1, 16]");
        }
        HAZELCAST_LOG.setLevel(Level.WARNING);
        clusterName = "scythe-bench-" + ProcessHandle.current().pid() + "-" + System.nanoTime();
        try {
            for (int i = 0; i < count; i++) {
                members.add(Hazelcast.newHazelcastInstance(config(clusterName)));
            }
        } catch (final RuntimeException e) {
            close();
            throw e;
        }
    }

    static Config config(final String clusterName) {
        final Config config = new Config().setClusterName(clusterName);
        config.setProperty("hazelcast.phone.home.enabled", "false");
        config.setProperty("hazelcast.logging.type", "jdk");
        config.setProperty("hazelcast.socket.bind.any", "false");
        config.setProperty("hazelcast.wait.seconds.before.join", "0");
        config.setProperty("hazelcast.max.wait.seconds.before.join", "0");
        config.setProperty("hazelcast.heartbeat.interval.seconds", "1");
        config.setProperty("hazelcast.max.no.heartbeat.seconds", "3");
        // No backup copies: Scythe's memory nodes keep one copy of each record (no replication yet), so Hazelcast
        // keeps one too; a Java user's default (one synchronous backup) would only slow the baseline down.
        config.addMapConfig(new MapConfig("*").setBackupCount(0).setAsyncBackupCount(0));
        final NetworkConfig network = config.getNetworkConfig();
        network.setPort(BASE_PORT).setPortAutoIncrement(true).setPortCount(PORT_COUNT);
        network.getInterfaces().setEnabled(true).addInterface("127.0.0.1");
        final JoinConfig join = network.getJoin();
        join.getMulticastConfig().setEnabled(false);
        join.getAutoDetectionConfig().setEnabled(false);
        join.getTcpIpConfig().setEnabled(true).addMember("127.0.0.1");
        return config;
    }

    public List<HazelcastInstance> members() {
        return members;
    }

    public String clusterName() {
        return clusterName;
    }

    @Override
    public void close() {
        // The last members warn that the first ones left ("suspected to be dead"): expected while shutting down.
        HAZELCAST_LOG.setLevel(Level.SEVERE);
        for (final HazelcastInstance member : members) {
            try {
                member.shutdown();
            } catch (final RuntimeException e) {
                // shutting down the others matters more
            }
        }
        members.clear();
        HAZELCAST_LOG.setLevel(Level.WARNING);
    }
}
