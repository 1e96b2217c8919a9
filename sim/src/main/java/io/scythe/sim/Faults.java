package io.scythe.sim;

import io.vertx.core.json.JsonObject;

/**
 * Faults injected into a simulated run, all drawn from the run's seed:
 * <ul>
 *   <li>{@code jitterNs}: every doorbell batch gets an extra one-way delay, uniform in [0, jitterNs), on its requests
 *       and responses. A queue pair keeps its order (RC), so this reorders verbs across queue pairs only.</li>
 *   <li>{@code crashCn} at {@code crashAtNs} (virtual, from the start): that CN's loops vanish with their state, its
 *       posted but unexecuted verbs die with its NIC. There is no recovery yet: the run reports what the crash left
 *       (locks held, the conserved quantity).</li>
 *   <li>{@code mnSlowFactor} from {@code mnSlowFromNs} to {@code mnSlowToNs}: memory nodes' CPU time per RPC is
 *       multiplied (MN-side RPC slowness: Takeout Lock, lookups).</li>
 * </ul>
 */
public final class Faults {
    public static final int NO_CRASH = -1;

    private long jitterNs;
    private int crashCn = NO_CRASH;
    private long crashAtNs;
    private double mnSlowFactor = 1;
    private long mnSlowFromNs;
    private long mnSlowToNs = Long.MAX_VALUE;

    void validate(final int computeNodes) {
        if (jitterNs < 0) {
            throw new IllegalArgumentException("jitter=" + jitterNs + " ns must not be negative");
        }
        if (crashCn != NO_CRASH && (crashCn < 0 || crashCn >= computeNodes)) {
            throw new IllegalArgumentException("crash-cn=" + crashCn + " must name one of the " + computeNodes
                + " CNs (0-based)");
        }
        if (crashAtNs < 0) {
            throw new IllegalArgumentException("crash-at must not be negative");
        }
        if (!(mnSlowFactor >= 1) || Double.isInfinite(mnSlowFactor)) {
            throw new IllegalArgumentException("mn-slow factor=" + mnSlowFactor + " must be a number >= 1");
        }
    }

    public JsonObject toJson() {
        final JsonObject json = new JsonObject().put("jitter_ns", jitterNs);
        if (crashCn != NO_CRASH) {
            json.put("crash_cn", crashCn).put("crash_at_ns", crashAtNs);
        }
        if (mnSlowFactor != 1) {
            json.put("mn_slow_factor", mnSlowFactor).put("mn_slow_from_ns", mnSlowFromNs)
                .put("mn_slow_to_ns", mnSlowToNs);
        }
        return json;
    }

    public long jitterNs() {
        return jitterNs;
    }

    public Faults jitterNs(final long jitterNs) {
        this.jitterNs = jitterNs;
        return this;
    }

    public int crashCn() {
        return crashCn;
    }

    public long crashAtNs() {
        return crashAtNs;
    }

    public Faults crash(final int computeNode, final long atNs) {
        this.crashCn = computeNode;
        this.crashAtNs = atNs;
        return this;
    }

    public double mnSlowFactor() {
        return mnSlowFactor;
    }

    public Faults mnSlow(final double factor, final long fromNs, final long toNs) {
        this.mnSlowFactor = factor;
        this.mnSlowFromNs = fromNs;
        this.mnSlowToNs = toNs;
        return this;
    }

    boolean mnSlowAt(final long sinceStartNs) {
        return mnSlowFactor != 1 && sinceStartNs >= mnSlowFromNs && sinceStartNs < mnSlowToNs;
    }
}
