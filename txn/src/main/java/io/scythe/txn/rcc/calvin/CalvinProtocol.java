package io.scythe.txn.rcc.calvin;

import io.scythe.txn.Protocol;
import io.scythe.txn.Txn;
import io.scythe.txn.TxnRuntime;

import java.util.Locale;
import java.util.concurrent.TimeUnit;

/**
 * RCC's CALVIN (§4.6) in one form: {@code rcc-calvin} (one-sided, RCC's default form),
 * {@code rcc-calvin:primitive=rpc}, {@code :primitive=onesided}, with {@code epoch=<n>ns|us|ms} (default
 * {@link #DEFAULT_EPOCH_NS}) and {@code log=on|off} (the input log, {@link CalvinInputLog}; default on) after a
 * {@code +} or alone, e.g. {@code rcc-calvin:primitive=rpc+epoch=50us} (a {@code +} as RCC's forms take:
 * {@code --protocols} splits on commas). Hybrid codes are refused: CALVIN has no per-stage primitive choice in RCC
 * (its Figure 7 compares the RPC and one-sided forms only).
 */
public final class CalvinProtocol implements Protocol {
    /**
     * The default epoch: 10 us. Calvin's own is 10 ms; a simulated run lasts a millisecond or so, so the epoch is
     * scaled by 1/1000 ({@code epoch=10ms} gives Calvin's).
     */
    public static final long DEFAULT_EPOCH_NS = TimeUnit.MICROSECONDS.toNanos(10);
    static final String BASE = "rcc-calvin";

    private final boolean rpc;
    private final long epochNs;
    private final boolean inputLog;
    private final String name;

    CalvinProtocol(final boolean rpc, final long epochNs, final boolean inputLog, final String name) {
        this.rpc = rpc;
        this.epochNs = epochNs;
        this.inputLog = inputLog;
        this.name = name;
    }

    /** {@code rcc-calvin}: one-sided, default epoch. */
    public static CalvinProtocol base() {
        return new CalvinProtocol(false, DEFAULT_EPOCH_NS, true, BASE);
    }

    /** Its place in the total order: epoch, sending node, place in the node's batch (a commit timestamp). */
    static long orderTs(final long epoch, final int node, final int position) {
        if (node >= 1 << 12 || position >= 1 << 20) {
            throw new IllegalStateException("CALVIN order of node " + node + ", position " + position + " does not "
                + "fit (4096 nodes, 2^20 transactions per node and epoch)");
        }
        return (epoch + 1) << 32 | (long) node << 20 | position;
    }

    /** The epoch of place {@code orderTs} in the total order ({@link #orderTs}). */
    static long epochOf(final long orderTs) {
        return (orderTs >>> 32) - 1;
    }

    @Override
    public String name() {
        return name;
    }

    public boolean rpc() {
        return rpc;
    }

    public long epochNs() {
        return epochNs;
    }

    /**
     * Whether its sequencers write each batch to their input log before dispatching it ({@code log=on}, the default;
     * only where the loops keep a redo log: the simulator's {@code --redo-log}, cluster nodes).
     */
    public boolean inputLog() {
        return inputLog;
    }

    @Override
    public Txn begin(final TxnRuntime runtime, final boolean hint) {
        final CalvinNode.Lane lane = runtime.extensionOrNull(CalvinNode.LANE);
        if (lane == null) {
            throw new IllegalStateException("'" + name + "' needs its compute nodes wired to each other (CALVIN's "
                + "sequencers and schedulers): the simulator does it ('scythe sim'); this runtime has no CALVIN lane");
        }
        return new CalvinTxn(runtime, lane, name, epochNs, rpc, inputLog);
    }

    @Override
    public io.scythe.txn.RetryPolicy retryPolicy(final TxnRuntime runtime,
                                                 final io.vertx.core.json.JsonObject options) {
        return io.scythe.txn.RetryPolicy.NO_HINT;
    }

    /** {@code primitive=rpc|onesided} and {@code epoch=<n>ns|us|ms}, joined by {@code +}. */
    @Override
    public Protocol configured(final String options) {
        boolean r = false;
        boolean log = true;
        long epoch = DEFAULT_EPOCH_NS;
        final StringBuilder canonical = new StringBuilder();
        for (final String part : options.split("\\+")) {
            final String p = part.trim();
            if (p.equals("primitive=rpc") || p.equals("primitive=onesided")) {
                r = p.equals("primitive=rpc");
            } else if (p.equals("log=on") || p.equals("log=off")) {
                log = p.equals("log=on");
            } else if (p.startsWith("epoch=")) {
                epoch = parseEpoch(p.substring("epoch=".length()));
            } else if (p.startsWith("hybrid=")) {
                throw new IllegalArgumentException("rcc-calvin takes no hybrid code ('" + p + "'): CALVIN's stages "
                    + "have no per-stage primitive in RCC; use primitive=rpc or primitive=onesided");
            } else {
                throw new IllegalArgumentException("rcc-calvin option '" + p + "' unknown; it takes "
                    + "primitive=rpc|onesided, epoch=<n>ns|us|ms and log=on|off, joined by '+' (not a comma: "
                    + "--protocols splits on commas)");
            }
        }
        canonical.append("primitive=").append(r ? "rpc" : "onesided");
        if (epoch != DEFAULT_EPOCH_NS) {
            canonical.append("+epoch=").append(epoch).append("ns");
        }
        if (!log) {
            canonical.append("+log=off");
        }
        return new CalvinProtocol(r, epoch, log, BASE + ":" + canonical);
    }

    static long parseEpoch(final String text) {
        final String t = text.trim().toLowerCase(Locale.ROOT);
        final long unit;
        final String digits;
        if (t.endsWith("ns")) {
            unit = 1;
            digits = t.substring(0, t.length() - 2);
        } else if (t.endsWith("us")) {
            unit = 1_000;
            digits = t.substring(0, t.length() - 2);
        } else if (t.endsWith("ms")) {
            unit = 1_000_000;
            digits = t.substring(0, t.length() - 2);
        } else {
            throw new IllegalArgumentException("CALVIN epoch '" + text + "' needs a unit: ns, us or ms (e.g. 10us)");
        }
        final long n;
        try {
            n = Long.parseLong(digits);
        } catch (final NumberFormatException e) {
            throw new IllegalArgumentException("CALVIN epoch '" + text + "' is not a whole number of " + t.substring(
                t.length() - 2), e);
        }
        if (n <= 0 || n > Long.MAX_VALUE / unit) {
            throw new IllegalArgumentException("CALVIN epoch '" + text + "' must be positive");
        }
        return n * unit;
    }

    @Override
    public String toString() {
        return name;
    }
}
