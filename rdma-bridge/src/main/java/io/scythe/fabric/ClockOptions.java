package io.scythe.fabric;

import io.vertx.core.json.JsonObject;

import java.util.Map;
import java.util.Set;
import java.util.SplittableRandom;
import java.util.TreeMap;
import java.util.TreeSet;

/**
 * The clocks of a fabric's nodes. Every node has two: a <b>host clock</b> (what its CPUs read) and a <b>NIC clock</b>
 * (its RDMA NIC's hardware clock, in which completions are timestamped and which peers read one-sided), each with
 * its own {@link ClockDeviation} from true time. The default is every clock perfect, as before nodes had clocks of
 * their own. JSON form (the {@code clocks} key of {@link FabricOptions}; every key optional; documented with sources
 * in {@code conf/fabric/clocks.yaml}):
 * <pre>
 * {
 *   "nic":    {"offsetNs": 0, "driftPpm": 0},      every node's NIC clock
 *   "host":   {"offsetNs": 0, "driftPpm": 0},      every node's host clock
 *   "spread": {"nic": {"offsetNs", "driftPpm"}, "host": {...}, "seed": 1}
 *             each node's clock adds an offset drawn uniformly from [-offsetNs, offsetNs] and a drift from
 *             [-driftPpm, driftPpm], drawn from the seed and the node's name (every process draws the same)
 *   "nodes":  {"mn0": {"nic": {...}, "host": {...}}}   one node's clock exactly (neither default nor spread)
 * }
 * </pre>
 */
public final class ClockOptions {
    public static final long DEFAULT_SEED = 1;

    private static final Set<String> KEYS = Set.of("nic", "host", "spread", "nodes");
    private static final Set<String> SPREAD_KEYS = Set.of("nic", "host", "seed");
    private static final Set<String> NODE_KEYS = Set.of("nic", "host");
    private static final int NIC = 0;
    private static final int HOST = 1;

    private ClockDeviation nic = ClockDeviation.NONE;
    private ClockDeviation host = ClockDeviation.NONE;
    private ClockDeviation nicSpread = ClockDeviation.NONE;
    private ClockDeviation hostSpread = ClockDeviation.NONE;
    private long seed = DEFAULT_SEED;
    private final Map<String, ClockDeviation> nodeNic = new TreeMap<>();
    private final Map<String, ClockDeviation> nodeHost = new TreeMap<>();

    public ClockOptions() {
    }

    public ClockOptions(final ClockOptions other) {
        nic = other.nic;
        host = other.host;
        nicSpread = other.nicSpread;
        hostSpread = other.hostSpread;
        seed = other.seed;
        nodeNic.putAll(other.nodeNic);
        nodeHost.putAll(other.nodeHost);
    }

    /** @throws IllegalArgumentException naming the first unknown key or bad value */
    public ClockOptions(final JsonObject json) {
        refuseUnknown(json, KEYS, "clocks");
        nic = deviation(json, "nic", "clocks");
        host = deviation(json, "host", "clocks");
        final JsonObject spread = json.getJsonObject("spread", new JsonObject());
        refuseUnknown(spread, SPREAD_KEYS, "clocks.spread");
        nicSpread = deviation(spread, "nic", "clocks.spread");
        hostSpread = deviation(spread, "host", "clocks.spread");
        final Object seedValue = spread.getValue("seed", DEFAULT_SEED);
        if (!(seedValue instanceof Number) || ((Number) seedValue).doubleValue() != ((Number) seedValue).longValue()) {
            throw new IllegalArgumentException("clocks.spread.seed=" + seedValue + " must be an integer");
        }
        seed = ((Number) seedValue).longValue();
        final JsonObject nodes = json.getJsonObject("nodes", new JsonObject());
        for (final String node : nodes.fieldNames()) {
            final JsonObject clocks = nodes.getJsonObject(node);
            final String where = "clocks.nodes." + node;
            refuseUnknown(clocks, NODE_KEYS, where);
            if (clocks.containsKey("nic")) {
                nodeNic(node, deviation(clocks, "nic", where));
            }
            if (clocks.containsKey("host")) {
                nodeHost(node, deviation(clocks, "host", where));
            }
        }
        validate();
    }

    private static void refuseUnknown(final JsonObject json, final Set<String> known, final String where) {
        final Set<String> unknown = new TreeSet<>(json.fieldNames());
        unknown.removeAll(known);
        if (!unknown.isEmpty()) {
            throw new IllegalArgumentException("unknown keys " + unknown + " in " + where + "; known keys are "
                + new TreeSet<>(known));
        }
    }

    private static ClockDeviation deviation(final JsonObject json, final String key, final String where) {
        final Object value = json.getValue(key);
        if (value == null) {
            return ClockDeviation.NONE;
        }
        if (!(value instanceof JsonObject)) {
            throw new IllegalArgumentException(where + "." + key + " must be an object {offsetNs, driftPpm}");
        }
        return ClockDeviation.fromJson((JsonObject) value, where + "." + key);
    }

    public JsonObject toJson() {
        final JsonObject nodes = new JsonObject();
        final Set<String> named = new TreeSet<>(nodeNic.keySet());
        named.addAll(nodeHost.keySet());
        for (final String node : named) {
            final JsonObject clocks = new JsonObject();
            if (nodeNic.containsKey(node)) {
                clocks.put("nic", nodeNic.get(node).toJson());
            }
            if (nodeHost.containsKey(node)) {
                clocks.put("host", nodeHost.get(node).toJson());
            }
            nodes.put(node, clocks);
        }
        return new JsonObject().put("nic", nic.toJson()).put("host", host.toJson())
            .put("spread", new JsonObject().put("nic", nicSpread.toJson()).put("host", hostSpread.toJson())
                .put("seed", seed))
            .put("nodes", nodes);
    }

    /** @throws IllegalArgumentException when a spread is negative or a default plus its spread is out of range */
    public ClockOptions validate() {
        checkSpread("nic", nic, nicSpread);
        checkSpread("host", host, hostSpread);
        for (final String node : nodeNic.keySet()) {
            FabricOptions.checkName("node", node);
        }
        for (final String node : nodeHost.keySet()) {
            FabricOptions.checkName("node", node);
        }
        return this;
    }

    private static void checkSpread(final String which, final ClockDeviation base, final ClockDeviation spread) {
        if (spread.offsetNs() < 0 || spread.driftPpm() < 0) {
            throw new IllegalArgumentException("clocks.spread." + which + " (" + spread.offsetNs() + " ns, "
                + spread.driftPpm() + " ppm) must not be negative: it is a half-width");
        }
        // Every draw must be a valid deviation: the widest ones are the default plus or minus the spread.
        new ClockDeviation(Math.abs(base.offsetNs()) + spread.offsetNs(), 0);
        new ClockDeviation(0, Math.abs(base.driftPpm()) + spread.driftPpm());
    }

    /** Whether every clock of every node reads true time. */
    public boolean isPerfect() {
        return nic.isNone() && host.isNone() && nicSpread.isNone() && hostSpread.isNone()
            && nodeNic.values().stream().allMatch(ClockDeviation::isNone)
            && nodeHost.values().stream().allMatch(ClockDeviation::isNone);
    }

    /** How {@code node}'s NIC clock deviates from true time. */
    public ClockDeviation nicOf(final String node) {
        final ClockDeviation exact = nodeNic.get(node);
        return exact != null ? exact : drawn(nic, nicSpread, node, NIC);
    }

    /** How {@code node}'s host clock deviates from true time. */
    public ClockDeviation hostOf(final String node) {
        final ClockDeviation exact = nodeHost.get(node);
        return exact != null ? exact : drawn(host, hostSpread, node, HOST);
    }

    /** The default plus this node's own draw from the spread: a function of the seed and the name alone. */
    private ClockDeviation drawn(final ClockDeviation base, final ClockDeviation spread, final String node,
                                 final int which) {
        if (spread.isNone()) {
            return base;
        }
        final SplittableRandom random = new SplittableRandom(
            seed * 0x9E3779B97F4A7C15L + node.hashCode() * 0xBF58476D1CE4E5B9L + which);
        final long offset = random.nextLong(-spread.offsetNs(), spread.offsetNs() + 1);
        final double drift = (2 * random.nextDouble() - 1) * spread.driftPpm();
        return new ClockDeviation(base.offsetNs() + offset, base.driftPpm() + drift);
    }

    /** Every node's NIC clock, unless named in {@link #nodeNic}. */
    public ClockOptions nic(final ClockDeviation nic) {
        this.nic = nic;
        return this;
    }

    /** Every node's host clock, unless named in {@link #nodeHost}. */
    public ClockOptions host(final ClockDeviation host) {
        this.host = host;
        return this;
    }

    /** Half-widths of the per-node draws added to the NIC and host defaults. */
    public ClockOptions spread(final ClockDeviation nicSpread, final ClockDeviation hostSpread) {
        this.nicSpread = nicSpread;
        this.hostSpread = hostSpread;
        return this;
    }

    /** Seed of the per-node draws. */
    public ClockOptions seed(final long seed) {
        this.seed = seed;
        return this;
    }

    /** {@code node}'s NIC clock exactly (no default, no spread). */
    public ClockOptions nodeNic(final String node, final ClockDeviation deviation) {
        nodeNic.put(node, deviation);
        return this;
    }

    /** {@code node}'s host clock exactly (no default, no spread). */
    public ClockOptions nodeHost(final String node, final ClockDeviation deviation) {
        nodeHost.put(node, deviation);
        return this;
    }

    public ClockDeviation nicDefault() {
        return nic;
    }

    public ClockDeviation hostDefault() {
        return host;
    }

    public ClockDeviation nicSpread() {
        return nicSpread;
    }

    public ClockDeviation hostSpread() {
        return hostSpread;
    }

    public long seed() {
        return seed;
    }

    @Override
    public String toString() {
        return "ClockOptions" + toJson().encode();
    }
}
