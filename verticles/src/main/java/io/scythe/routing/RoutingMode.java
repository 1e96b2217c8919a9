package io.scythe.routing;

import java.util.Locale;

/**
 * How a router picks the compute node of a transaction (Lotus §4.3, level 1).
 *
 * <ul>
 *   <li>{@link #LOCAL}: no routing; each client's transactions run on the compute node it is attached to (the
 *       simulator's clients belong to a node; what every run before routing did).</li>
 *   <li>{@link #SHARD}: to the owner of the transaction's routing key's shard.</li>
 *   <li>{@link #RANDOM}: to a compute node chosen uniformly at random.</li>
 *   <li>{@link #HYBRID}: Lotus's: read-only transactions at random (they take no locks), read-write ones by shard,
 *       so that conflicting writers meet on one node.</li>
 * </ul>
 * A transaction without a routing key goes to a random node in every routed mode.
 */
public enum RoutingMode {
    LOCAL, SHARD, RANDOM, HYBRID;

    /** The name on the command line and in results.json. */
    public String label() {
        return name().toLowerCase(Locale.ROOT);
    }

    /** The mode named {@code name} (case-insensitive); a bad name fails listing the others. */
    public static RoutingMode named(final String name) {
        for (final RoutingMode m : values()) {
            if (m.label().equalsIgnoreCase(name)) {
                return m;
            }
        }
        throw new IllegalArgumentException("unknown routing '" + name + "'; choose local, shard, random or hybrid");
    }
}
