package io.scythe.cluster;

import io.scythe.fabric.FabricOptions;
import io.scythe.txn.FaultPoints;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.TreeSet;

/**
 * One node's configuration (YAML or JSON file; an example: docker/conf/cluster.yaml; README "Cluster mode"). Unknown keys and
 * bad values are refused with a message naming them; nothing starts.
 *
 * @param cluster        cluster name; with the secret it makes the Hazelcast cluster name
 * @param secret         the cluster secret (at least 16 characters): who proves it may join and connect
 * @param node           this node's name (also its fabric name; a CN's fabric name adds its epoch)
 * @param host           the one address this node binds (Hazelcast, event bus, verbs server, HTTP); loopback default
 * @param hazelcastPort  Hazelcast member port
 * @param members        {@code host:port} of the Hazelcast members to join by TCP
 * @param eventBusPort   clustered event bus port (0: any free port)
 * @param httpPort       metrics and health port (0: any free port; -1: none)
 * @param loops          event loops (a coordinator per loop on a CN)
 * @param fabric         fabric options ({@link FabricOptions} JSON; {@code provider} shm on one host, tcp across)
 * @param memoryNodes    the memory nodes holding the tables, in partition order
 * @param tsoNode        the node holding the timestamp counter
 * @param tsoProxies     the TSO proxy nodes; a CN's TSO groups fetch from them and from the counter directly
 * @param stateDir       where a node keeps what must outlive its process (the TSO's counter checkpoint)
 * @param workload       what the memory nodes load and the compute nodes can run ({@code {"name": ...}})
 * @param protocol       concurrency control the CNs run
 * @param maxAttempts    attempts per transaction before it reports aborted
 * @param readyTimeoutMs how long a CN waits for the MNs and the TSO at start
 * @param eventBusKeyStore PKCS12 key store (password: the secret) with the cluster's event-bus key and certificate
 *                       ({@link ClusterSetup#createEventBusKeyStore}); when set, the event bus runs TLS and accepts
 *                       only peers presenting that certificate. {@code null}: plaintext event bus
 * @param leaseCheck     a CN stops by itself once it finds it outlived its lease (default); {@code false} only in
 *                       tests that show the memory nodes' fence alone keeps a woken CN from writing
 * @param faults         test-only fault points a CN arms ({@link FaultPoints}); refused unless the JVM runs with
 *                       {@code -Dscythe.faultPoints=true}. Default none
 * @param peerCallTimeoutMs how long a CN's call to another CN ({@code CnPeers}) waits for its reply before it fails;
 *                       a peer whose member leaves fails its calls at once. Default 1000
 * @param memoryNodeTimeoutMs how long a CN's RRPC call to a memory node waits for its reply before it fails (the
 *                       transaction then aborts, or ends "outcome unknown" past its point of no return). Default
 *                       4000 ({@code RrpcOptions.DEFAULT_MEMORY_NODE_CALL_TIMEOUT_NS}); verbs have {@code verbTimeoutMs}
 * @param verbTimeoutMs  the transport timeout of a CN's queue pairs to memory nodes ({@code QpOptions.transportTimeoutMs}):
 *                       a verb the memory node answers nothing for this long fails and its connection is given up; a
 *                       write-back verb that fails so is in doubt (it may still land), its commit left to recovery and
 *                       the CN's loop to a new epoch. Default 2500 ({@code QpOptions.DEFAULT_TRANSPORT_TIMEOUT_MS}) or
 *                       {@code memoryNodeTimeoutMs} if that is shorter. Raise it where the machine stalls a process for seconds
 *                       (the process tests on 2 loaded cores: CI 201 lost a CN's epoch to one such 2.5 s stall)
 * @param replicas       backups per partition (each on another memory node, primary-backup: data and redo logs),
 *                       or -1 (the default): 2 when there are at least 3 memory nodes, else as many as there are
 *                       other memory nodes ({@link #backups()})
 * @param computeNodes   the compute nodes, in index order, of a protocol whose compute nodes message each other
 *                       (Lotus spreads its lock shards over them); required for such a protocol, every CN of it listed,
 *                       and the same on every node. Default none
 * @param leaseRenewMs   how often a CN renews its lease on the fabric ({@link FabricLease}: a one-sided WRITE of its
 *                       epoch and a sequence number into its slot on every memory node); 0: no fabric lease, Hazelcast
 *                       membership alone detects a dead CN. Default 0: on the loaded 2-core machine (load 50-70) a
 *                       chaos run with 50 ms renewals and an 850 ms expiry saw live CNs' renewer threads stall past
 *                       their lease (5 CN incarnations lost it in 6 minutes with no fault aimed at them), so it is
 *                       opt-in ({@link FabricLease.Options#DEFAULT}'s 50 is what to ask for). On tcp the memory
 *                       node's own event loops execute the WRITE, so a paused memory node would lapse every CN's
 *                       lease there (not measured)
 * @param leaseMs        how long a CN serves after sending its last acknowledged renewal (default 750)
 * @param leaseGraceMs   how much longer a memory node waits before it fences a CN whose word stopped changing
 *                       (default 100): a paused or dead CN is fenced {@code leaseMs + leaseGraceMs} after its last
 *                       renewal landed
 * @param memoryNodeFailoverWaitMs how long a CN's commit in doubt on a memory node (a verb failed after it was
 *                       posted) waits for a configuration that removes the node before its loop gives up (default
 *                       twice the Hazelcast lease: the node's detection and the configuration's spread)
 */
public record NodeConfig(String cluster, String secret, String node, String host, int hazelcastPort,
                         List<String> members, int eventBusPort, int httpPort, int loops, JsonObject fabric,
                         List<String> memoryNodes, String tsoNode, List<String> tsoProxies, String stateDir,
                         JsonObject workload, String protocol, int maxAttempts, long readyTimeoutMs,
                         String eventBusKeyStore, boolean leaseCheck, List<FaultPoints.Fault> faults,
                         long peerCallTimeoutMs, long memoryNodeTimeoutMs, long verbTimeoutMs, int replicas,
                         List<String> computeNodes, long leaseRenewMs, long leaseMs, long leaseGraceMs,
                         long memoryNodeFailoverWaitMs) {
    private static final Set<String> KEYS = Set.of("cluster", "secret", "node", "host", "hazelcastPort", "members",
        "eventBusPort", "httpPort", "loops", "fabric", "memoryNodes", "tsoNode", "tsoProxies", "stateDir", "workload",
        "protocol",
        "maxAttempts", "readyTimeoutMs", "eventBusKeyStore", "leaseCheck", "faults", "peerCallTimeoutMs",
        "memoryNodeTimeoutMs", "verbTimeoutMs", "replicas", "computeNodes", "leaseRenewMs", "leaseMs", "leaseGraceMs",
        "memoryNodeFailoverWaitMs");
    /** Backups per partition by default, where there are enough memory nodes (3-way, as FORD, Lotus and RCC run). */
    public static final int DEFAULT_BACKUPS = 2;
    public static final int MIN_SECRET_CHARS = ClusterAccess.MIN_SECRET_CHARS;

    /** Parses and checks {@code json}. */
    public static NodeConfig of(final JsonObject json) {
        final Set<String> unknown = new TreeSet<>(json.fieldNames());
        unknown.removeAll(KEYS);
        if (!unknown.isEmpty()) {
            throw new IllegalArgumentException("unknown node config keys " + unknown + "; known: "
                + new TreeSet<>(KEYS));
        }
        try {
            final String secret = json.getString("secret");
            if (secret == null || secret.length() < MIN_SECRET_CHARS) {
                throw new IllegalArgumentException("secret must be set, at least " + MIN_SECRET_CHARS
                    + " characters (every node of the cluster has the same)");
            }
            final List<String> members = strings(json, "members", List.of("127.0.0.1:5701"));
            for (final String m : members) {
                FabricOptions.parseAddress("member", m);
            }
            final List<String> mns = strings(json, "memoryNodes", List.of("mn0", "mn1"));
            if (mns.isEmpty()) {
                throw new IllegalArgumentException("memoryNodes must name at least one memory node");
            }
            for (final String mn : mns) {
                FabricOptions.checkName("memory node", mn);
            }
            final List<String> cns = strings(json, "computeNodes", List.of());
            for (final String cn : cns) {
                FabricOptions.checkName("compute node", cn);
            }
            if (new java.util.HashSet<>(cns).size() != cns.size()) {
                throw new IllegalArgumentException("computeNodes " + cns + " names a compute node twice");
            }
            final List<String> proxies = strings(json, "tsoProxies", List.of());
            for (final String proxy : proxies) {
                FabricOptions.checkName("TSO proxy", proxy);
            }
            final JsonObject fabric = json.getJsonObject("fabric", new JsonObject().put("provider", "shm"));
            new FabricOptions(fabric.copy()); // validates
            final FabricLease.Options lease = FabricLease.Options.DEFAULT;
            final long memoryNodeTimeoutMs = json.getLong("memoryNodeTimeoutMs",
                java.util.concurrent.TimeUnit.NANOSECONDS.toMillis(io.scythe.rrpc.RrpcOptions.DEFAULT_MEMORY_NODE_CALL_TIMEOUT_NS));
            final NodeConfig c = new NodeConfig(
                FabricOptions.checkName("cluster", json.getString("cluster", "scythe")),
                secret,
                FabricOptions.checkName("node", json.getString("node")),
                json.getString("host", "127.0.0.1"),
                port(json, "hazelcastPort", 5701, false),
                members,
                port(json, "eventBusPort", 0, false),
                port(json, "httpPort", 0, true),
                positive(json, "loops", 1),
                fabric,
                List.copyOf(mns),
                FabricOptions.checkName("tso node", json.getString("tsoNode", "tso")),
                List.copyOf(proxies),
                json.getString("stateDir", java.nio.file.Path.of(System.getProperty("java.io.tmpdir"),
                    "scythe-state").toString()),
                json.getJsonObject("workload", new JsonObject().put("name", "counters")),
                json.getString("protocol", "scythe").toLowerCase(Locale.ROOT),
                positive(json, "maxAttempts", 1000),
                json.getLong("readyTimeoutMs", 60_000L),
                json.getString("eventBusKeyStore"),
                json.getBoolean("leaseCheck", true),
                FaultPoints.Fault.list(json.getJsonArray("faults")),
                json.getLong("peerCallTimeoutMs", 1_000L),
                memoryNodeTimeoutMs,
                json.getLong("verbTimeoutMs", Math.min(io.scythe.fabric.QpOptions.DEFAULT_TRANSPORT_TIMEOUT_MS,
                    memoryNodeTimeoutMs)),
                json.getInteger("replicas", -1),
                List.copyOf(cns),
                json.getLong("leaseRenewMs", 0L),
                json.getLong("leaseMs", lease.leaseMs()),
                json.getLong("leaseGraceMs", lease.graceMs()),
                json.getLong("memoryNodeFailoverWaitMs", ScytheNode.MN_FAILOVER_WAIT_MS));
            c.fabricLease(); // validates
            if (c.memoryNodeFailoverWaitMs() < 0) {
                throw new IllegalArgumentException("memoryNodeFailoverWaitMs=" + c.memoryNodeFailoverWaitMs()
                    + " must not be negative");
            }
            if (c.peerCallTimeoutMs() <= 0) {
                throw new IllegalArgumentException("peerCallTimeoutMs=" + c.peerCallTimeoutMs() + " must be positive");
            }
            if (c.memoryNodeTimeoutMs() <= 0) {
                throw new IllegalArgumentException("memoryNodeTimeoutMs=" + c.memoryNodeTimeoutMs()
                    + " must be positive: a call to a memory node that stops answering must end");
            }
            if (c.verbTimeoutMs() <= 0) {
                throw new IllegalArgumentException("verbTimeoutMs=" + c.verbTimeoutMs()
                    + " must be positive: a verb a memory node never answers must end");
            }
            if (c.replicas() < -1 || c.replicas() >= c.memoryNodes().size()
                || c.replicas() > io.scythe.storage.BackupTables.MAX_BACKUPS) {
                throw new IllegalArgumentException("replicas=" + c.replicas() + " must be -1 (the default) or "
                    + "within [0, " + Math.min(io.scythe.storage.BackupTables.MAX_BACKUPS,
                    c.memoryNodes().size() - 1) + "] with " + c.memoryNodes().size() + " memory node(s): each copy of "
                    + "a partition needs a memory node of its own");
            }
            if (!c.faults().isEmpty() && !Boolean.getBoolean(FaultPoints.ENABLE_PROPERTY)) {
                throw new IllegalArgumentException("faults are test-only fault points (they halt or stall the node); "
                    + "this JVM was not started with -D" + FaultPoints.ENABLE_PROPERTY + "=true");
            }
            if (c.eventBusKeyStore() != null && !java.nio.file.Files.isRegularFile(
                java.nio.file.Path.of(c.eventBusKeyStore()))) {
                throw new IllegalArgumentException("eventBusKeyStore " + c.eventBusKeyStore() + " not found");
            }
            // Unknown names are named here, before any node starts; so is a protocol whose compute nodes message
            // each other (CN peers: SELCC's invalidations, Lotus's lock RPCs) while its module says what it lacks on
            // cluster nodes (ProtocolModule#clusterRefusal: what a compute node dying leaves on the others is not
            // recovered). Refused at start, not per transaction.
            final io.scythe.txn.Protocol run = io.scythe.txn.spi.ProtocolRegistry.protocol(c.protocol());
            final io.scythe.txn.spi.ProtocolModule peerModule = io.scythe.txn.spi.ProtocolRegistry.peerModuleOf(run);
            if (peerModule != null) {
                final String refusal = peerModule.clusterRefusal(run);
                if (refusal != null) {
                    throw new IllegalArgumentException("protocol " + c.protocol() + " needs CN-to-CN messaging ("
                        + peerModule.peerMessaging(run) + "), and cluster nodes cannot run it yet: " + refusal
                        + "; run it with `scythe bench --cns N` or `scythe sim --cns N`");
                }
                if (cns.isEmpty()) {
                    throw new IllegalArgumentException("protocol " + c.protocol() + " needs CN-to-CN messaging ("
                        + peerModule.peerMessaging(run) + "): name the compute nodes, in the same order on every "
                        + "node (computeNodes: [cn0, cn1, ...])");
                }
            }
            // Any module may say what its protocol lacks on cluster nodes (where a compute node dies and restarts
            // under a new epoch), not only one whose compute nodes message each other.
            final io.scythe.txn.spi.ProtocolModule owner = io.scythe.txn.spi.ProtocolRegistry.moduleOf(c.protocol());
            final String ownRefusal = peerModule != null || owner == null ? null : owner.clusterRefusal(run);
            if (ownRefusal != null) {
                throw new IllegalArgumentException("protocol " + c.protocol() + " cannot run on cluster nodes yet: "
                    + ownRefusal + "; run it with `scythe bench` or `scythe sim`");
            }
            if (c.node().contains(".e")) {
                throw new IllegalArgumentException("node name " + c.node() + " must not contain '.e' (a CN's "
                    + "fabric name is node.eEPOCH)");
            }
            return c;
        } catch (final ClassCastException e) {
            throw new IllegalArgumentException("node config: a value has the wrong type (" + e.getMessage() + ")");
        }
    }

    /** The timing of a CN's lease on the fabric ({@link FabricLease}); off when {@code leaseRenewMs} is 0. */
    FabricLease.Options fabricLease() {
        return new FabricLease.Options(leaseRenewMs, leaseMs, leaseGraceMs);
    }

    /**
     * Refuses a compute node or TSO proxy whose own Hazelcast address is in {@link #members}: that list is the seeds
     * only (TSO, memory nodes). Every member's split-brain search dials it (every 5 s), and a dial to a paused process
     * wedges a Hazelcast output I/O thread (issue 23 §1, PausedPeerIoSpinTest, UPSTREAM.md); a compute node is paused
     * and fenced as a matter of course (chaos), and the cluster's seed watchdog ({@code MemberWatchdog}) counts any
     * listed member as a seed.
     *
     * @throws IllegalArgumentException naming the node, its address and the list
     */
    public void checkSeedRole(final NodeRole role) {
        if ((role == NodeRole.CN || role == NodeRole.PROXY) && access().isSeed()) {
            throw new IllegalArgumentException((role == NodeRole.CN ? "compute node " : "TSO proxy ") + node
                + ": its Hazelcast address " + host + ":" + hazelcastPort + " is in members " + members
                + "; members lists the seeds only (the TSO and the memory nodes), never a compute node or TSO proxy "
                + "(a paused one would wedge the other members' split-brain search: README, issue 23 §1)");
        }
    }

    /** What this node joins the cluster's Vert.x cluster with (its name, address, ports, members, key store). */
    public ClusterAccess access() {
        return new ClusterAccess(cluster, secret, node, host, hazelcastPort, members, eventBusPort, loops,
            eventBusKeyStore, readyTimeoutMs);
    }

    /** The fabric options this node opens, with its cluster and secret. */
    public FabricOptions fabricOptions() {
        final JsonObject json = fabric.copy();
        json.put("cluster", cluster);
        json.put("secret", secret);
        return new FabricOptions(json);
    }

    /**
     * Backups per partition this cluster runs with: {@link #replicas()} when given, else {@value #DEFAULT_BACKUPS}
     * with at least {@value #DEFAULT_BACKUPS} + 1 memory nodes, else one per other memory node (0 with one); 0 by
     * default for a protocol that does not replicate ({@code ProtocolModule#replicates}).
     *
     * @throws IllegalArgumentException when backups are asked of a protocol that does not replicate
     */
    public int backups() {
        final boolean replicates = io.scythe.txn.spi.ProtocolRegistry.moduleOf(protocol).replicates();
        if (replicas > 0 && !replicates) {
            throw new IllegalArgumentException("replicas=" + replicas + ": protocol " + protocol + " does not write "
                + "backup copies yet (replication and MN failover not supported for " + protocol + "); run it with "
                + "replicas 0");
        }
        if (replicas >= 0) {
            return replicas;
        }
        return replicates ? Math.min(DEFAULT_BACKUPS, memoryNodes.size() - 1) : 0;
    }

    /** The line a node logs about its replication: how many copies, and why fewer than the default. */
    public String replicationLine() {
        final int k = backups();
        final String copies = "replication: " + k + " backup(s) per partition (" + (k + 1) + "-way) over "
            + memoryNodes.size() + " memory node(s), data and redo logs";
        if (replicas >= 0) {
            return copies + (k == 0 ? "; replicas 0 in the config: a memory node that dies loses its partition" : "");
        }
        if (!io.scythe.txn.spi.ProtocolRegistry.moduleOf(protocol).replicates()) {
            return copies + "; protocol " + protocol + " does not write backups yet: a memory node that dies loses "
                + "its partition";
        }
        return k < DEFAULT_BACKUPS ? copies + "; fewer than the default " + DEFAULT_BACKUPS + " because the cluster "
            + "has only " + memoryNodes.size() + " memory node(s)" + (k == 0 ? ": a memory node that dies loses its "
            + "partition" : "") : copies;
    }

    /** The memory node's partition number: its place in {@link #memoryNodes}. */
    public int partitionOf(final String memoryNode) {
        final int at = memoryNodes.indexOf(memoryNode);
        if (at < 0) {
            throw new IllegalArgumentException("node " + memoryNode + " is not in memoryNodes " + memoryNodes);
        }
        return at;
    }

    private static List<String> strings(final JsonObject json, final String key, final List<String> fallback) {
        final JsonArray array = json.getJsonArray(key);
        if (array == null) {
            return fallback;
        }
        final List<String> out = new ArrayList<>();
        for (final Object o : array) {
            if (!(o instanceof String)) {
                throw new IllegalArgumentException(key + " must be a list of strings, not " + array);
            }
            out.add((String) o);
        }
        return out;
    }

    private static int port(final JsonObject json, final String key, final int fallback, final boolean allowNone) {
        final int port = json.getInteger(key, fallback);
        if (port < (allowNone ? -1 : 0) || port > 65535) {
            throw new IllegalArgumentException(key + "=" + port + " is not a port");
        }
        return port;
    }

    private static int positive(final JsonObject json, final String key, final int fallback) {
        final int value = json.getInteger(key, fallback);
        if (value <= 0) {
            throw new IllegalArgumentException(key + "=" + value + " must be positive");
        }
        return value;
    }
}
