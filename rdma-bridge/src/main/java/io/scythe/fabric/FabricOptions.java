package io.scythe.fabric;

import io.vertx.core.json.JsonObject;
import org.agrona.concurrent.NanoClock;
import org.agrona.concurrent.SystemNanoClock;

import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Pattern;

/**
 * Configuration of a {@link Fabric}. JSON form (every key optional):
 * <pre>
 * {
 *   "provider":  "local" | "shm" | "tcp" | "disni",   default local
 *   "cluster":   name; namespaces shm files and must match between peers, default "scythe"
 *   "costModel": { "profile": "cx5" | "zero", ...overrides },  see CostModel and conf/fabric/
 *   "shmDirectory": where the shm provider keeps region files, default /dev/shm
 *   "addresses": { "node": "host:port", ... }  where tcp/disni nodes listen (loopback by default)
 *   "qp": { "sendQueueDepth", "receiveQueueDepth", "maxInlineBytes", "maxMessageBytes" }
 *   "secret": the cluster secret; tcp verbs servers then accept only peers that prove it (never in toJson)
 *   "clocks": { "nic", "host", "spread", "nodes" }  every node's host and NIC clock, see ClockOptions and
 *              conf/fabric/clocks.yaml; default: every clock reads true time
 * }
 * </pre>
 */
public final class FabricOptions {
    public static final String DEFAULT_PROVIDER = "local";
    public static final String DEFAULT_CLUSTER = "scythe";
    public static final String DEFAULT_SHM_DIRECTORY = "/dev/shm";
    /**
     * One-way cost of a request between co-located nodes ({@link #colocate}): a cache line moving between two cores
     * of one host. A local RPC (request and reply) then costs about 100 ns, the local access Aurogon (FAST'22 §3)
     * sets against about 2 us for a remote one.
     */
    public static final long LOCAL_PATH_NS = 50;
    /** Per byte of a request or reply between co-located nodes: a memory copy at 10 GB/s. */
    public static final double LOCAL_NS_PER_BYTE = 0.1;

    private static final Set<String> KEYS = Set.of("provider", "cluster", "costModel", "shmDirectory", "addresses",
        "qp", "secret", "clocks");
    private static final Pattern NAME = Pattern.compile("[A-Za-z0-9][A-Za-z0-9._-]{0,63}");

    private String provider = DEFAULT_PROVIDER;
    private String cluster = DEFAULT_CLUSTER;
    private CostModel costModel = CostModel.cx5();
    private String shmDirectory = DEFAULT_SHM_DIRECTORY;
    private Map<String, String> addresses = new LinkedHashMap<>();
    private QpOptions qpOptions = new QpOptions();
    private NanoClock clock = new SystemNanoClock();
    private DelayInjector delayInjector;
    private VerbFaultInjector verbFaultInjector;
    private ClusterSecret secret;
    private ClockOptions clocks = new ClockOptions();
    /** Co-located nodes: node to the server it shares (clocks and a local path); empty: every node its own. */
    private final Map<String, String> servers = new LinkedHashMap<>();

    public FabricOptions() {
    }

    public FabricOptions(final JsonObject json) {
        final Set<String> unknown = new TreeSet<>(json.fieldNames());
        unknown.removeAll(KEYS);
        if (!unknown.isEmpty()) {
            throw new IllegalArgumentException("unknown fabric keys " + unknown + "; known keys are "
                + new TreeSet<>(KEYS));
        }
        provider = json.getString("provider", provider);
        cluster = json.getString("cluster", cluster);
        if (json.containsKey("costModel")) {
            costModel = CostModel.fromJson(json.getJsonObject("costModel"));
        }
        shmDirectory = json.getString("shmDirectory", shmDirectory);
        final JsonObject addr = json.getJsonObject("addresses", new JsonObject());
        for (final String node : addr.fieldNames()) {
            addresses.put(node, addr.getString(node));
        }
        if (json.containsKey("qp")) {
            qpOptions = new QpOptions(json.getJsonObject("qp"));
        }
        if (json.containsKey("secret")) {
            secret = new ClusterSecret(json.getString("secret"));
        }
        if (json.containsKey("clocks")) {
            clocks = new ClockOptions(json.getJsonObject("clocks"));
        }
        validate();
    }

    public JsonObject toJson() {
        final JsonObject addr = new JsonObject();
        addresses.forEach(addr::put);
        return new JsonObject()
            .put("provider", provider)
            .put("cluster", cluster)
            .put("costModel", costModel.toJson())
            .put("shmDirectory", shmDirectory)
            .put("addresses", addr)
            .put("qp", qpOptions.toJson())
            .put("clocks", clocks.toJson());
    }

    /** @throws IllegalArgumentException naming the first bad value */
    public FabricOptions validate() {
        if (provider == null || provider.isBlank()) {
            throw new IllegalArgumentException("fabric provider must be set (local, shm, tcp or disni)");
        }
        checkName("cluster", cluster);
        if (costModel == null) {
            throw new IllegalArgumentException("costModel must be set");
        }
        if (clock == null) {
            throw new IllegalArgumentException("clock must be set");
        }
        for (final Map.Entry<String, String> e : addresses.entrySet()) {
            checkName("node", e.getKey());
            parseAddress(e.getKey(), e.getValue());
        }
        qpOptions.validate();
        if (clocks == null) {
            throw new IllegalArgumentException("clocks must be set");
        }
        clocks.validate();
        return this;
    }

    /** Checks a node, region or cluster name: it becomes part of file names and wire frames. */
    public static String checkName(final String what, final String name) {
        if (name == null || !NAME.matcher(name).matches()) {
            throw new IllegalArgumentException(what + " name '" + name
                + "' must be 1-64 characters of letters, digits, '.', '_' or '-', starting with a letter or digit");
        }
        return name;
    }

    /**
     * Parses {@code host:port} (IPv6 hosts in brackets) of a node's address.
     *
     * @return {@code [host, port]}
     */
    public static String[] parseAddress(final String node, final String address) {
        if (address == null) {
            throw new IllegalArgumentException("node " + node + " has no address");
        }
        final int colon = address.lastIndexOf(':');
        if (colon <= 0 || colon == address.length() - 1) {
            throw new IllegalArgumentException("address of node " + node + " '" + address + "' must be host:port");
        }
        String host = address.substring(0, colon);
        if (host.startsWith("[") && host.endsWith("]")) {
            host = host.substring(1, host.length() - 1);
        }
        final int port;
        try {
            port = Integer.parseInt(address.substring(colon + 1));
        } catch (final NumberFormatException e) {
            throw new IllegalArgumentException("address of node " + node + " '" + address + "' has a bad port");
        }
        if (port < 0 || port > 65535) {
            throw new IllegalArgumentException("address of node " + node + " '" + address + "' has a bad port");
        }
        return new String[] {host, Integer.toString(port)};
    }

    public String provider() {
        return provider;
    }

    public FabricOptions provider(final String provider) {
        this.provider = provider;
        return this;
    }

    public String cluster() {
        return cluster;
    }

    public FabricOptions cluster(final String cluster) {
        this.cluster = cluster;
        return this;
    }

    public CostModel costModel() {
        return costModel;
    }

    public FabricOptions costModel(final CostModel costModel) {
        this.costModel = costModel;
        return this;
    }

    public String shmDirectory() {
        return shmDirectory;
    }

    public FabricOptions shmDirectory(final String shmDirectory) {
        this.shmDirectory = shmDirectory;
        return this;
    }

    /** Node name to {@code host:port}, for the tcp and disni providers. */
    public Map<String, String> addresses() {
        return addresses;
    }

    public FabricOptions address(final String node, final String hostPort) {
        addresses.put(node, hostPort);
        return this;
    }

    public QpOptions qpOptions() {
        return qpOptions;
    }

    public FabricOptions qpOptions(final QpOptions qpOptions) {
        this.qpOptions = qpOptions;
        return this;
    }

    /** The cluster secret peers must prove, or {@code null} (then the tcp verbs server accepts any peer). */
    public ClusterSecret secret() {
        return secret;
    }

    public FabricOptions secret(final ClusterSecret secret) {
        this.secret = secret;
        return this;
    }

    /**
     * How each node's host and NIC clock deviate from true time ({@link #clock()}); by default not at all. Every
     * process of a cluster must be given the same (the spread's draws depend only on the seed and a node's name).
     */
    public ClockOptions clocks() {
        return clocks;
    }

    public FabricOptions clocks(final ClockOptions clocks) {
        this.clocks = clocks;
        return this;
    }

    /**
     * True time: the clock verbs are timed against and nodes' clocks deviate from; the simulator passes a virtual
     * one. Not part of the JSON form.
     */
    public NanoClock clock() {
        return clock;
    }

    public FabricOptions clock(final NanoClock clock) {
        this.clock = clock;
        return this;
    }

    /**
     * Puts {@code nodes} on one server named {@code server} (the local provider; the simulator's co-located servers):
     * they read the same host and NIC clocks (those {@link #clocks()} gives {@code server}), and a queue pair between
     * two of them is a local path ({@link #LOCAL_PATH_NS}), not a verb on the NICs. Not part of the JSON form.
     */
    public FabricOptions colocate(final String server, final String... nodes) {
        checkName("server", server);
        for (final String node : nodes) {
            checkName("node", node);
            final String before = servers.putIfAbsent(node, server);
            if (before != null && !before.equals(server)) {
                throw new IllegalArgumentException("node " + node + " is already on server " + before
                    + ", not " + server);
            }
        }
        return this;
    }

    /** The server {@code node} shares with co-located nodes ({@link #colocate}), or {@code node} itself. */
    public String serverOf(final String node) {
        return servers.getOrDefault(node, node);
    }

    /** Whether {@code a} and {@code b} are distinct nodes on one server ({@link #colocate}). */
    public boolean colocated(final String a, final String b) {
        final String server = servers.get(a);
        return server != null && !a.equals(b) && server.equals(servers.get(b));
    }

    /** Extra delay per doorbell batch (the simulator's fault injection), or {@code null}. Not part of the JSON form. */
    public DelayInjector delayInjector() {
        return delayInjector;
    }

    public FabricOptions delayInjector(final DelayInjector delayInjector) {
        this.delayInjector = delayInjector;
        return this;
    }

    /** Verbs that land but report failure (the simulator's fault injection), or {@code null}. Not in the JSON form. */
    public VerbFaultInjector verbFaultInjector() {
        return verbFaultInjector;
    }

    public FabricOptions verbFaultInjector(final VerbFaultInjector verbFaultInjector) {
        this.verbFaultInjector = verbFaultInjector;
        return this;
    }
}
