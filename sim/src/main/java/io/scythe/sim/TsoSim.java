package io.scythe.sim;

import io.scythe.bench.workload.OltpSpec;
import io.scythe.storage.LogDb;
import io.scythe.tso.PhysicalClockOracle;
import io.scythe.txn.TxnRuntime;
import io.vertx.core.json.JsonObject;

import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;

/**
 * Scythe Fig. 28 in virtual time: every client takes one timestamp after another and the latency of each is recorded.
 * Variant {@code tso} takes it from the compute node's timestamp oracle as transactions do (a TSO group, through the
 * TSO proxies when there are any: {@code --tso-proxies}, {@code --tso-group}); {@code physical-clock} is FaRMv2's
 * (the loop's clock reading, released after the clock uncertainty, {@link PhysicalClockOracle}). No transaction.
 */
public final class TsoSim {
    /** What a client takes timestamps from, as {@code --protocols} names them. */
    public static final List<String> VARIANTS = List.of("tso", "physical-clock");

    private TsoSim() {
    }

    /** Nothing to load: the TSO counter is the cluster's own. */
    public static final class Spec implements OltpSpec {
        private final String variant;

        public Spec(final String variant) {
            if (!VARIANTS.contains(variant)) {
                throw new IllegalArgumentException("the tso workload takes timestamps from " + String.join(" or ",
                    VARIANTS) + ", not '" + variant + "'");
            }
            this.variant = variant;
        }

        @Override
        public String name() {
            return "tso";
        }

        @Override
        public String quantity() {
            return "none";
        }

        @Override
        public JsonObject params() {
            return new JsonObject().put("variant", variant)
                .put("uncertainty_ns", PhysicalClockOracle.DEFAULT_UNCERTAINTY_NS);
        }

        @Override
        public void load(final LogDb db, final int part, final int parts) {
            // no table: timestamps only
        }

        @Override
        public Drawn draw(final SplittableRandom random) {
            throw new UnsupportedOperationException("the tso workload takes timestamps, not transactions");
        }

        @Override
        public long total(final List<LogDb> dbs) {
            return 0;
        }

        /** One timestamp; the latency recorded is from asking to having it. */
        Simulation.Operation operation() {
            final Map<TxnRuntime, PhysicalClockOracle> clocks = new IdentityHashMap<>();
            return (runtime, random) -> {
                final long start = runtime.timers().nowNs();
                final io.scythe.txn.runtime.TimestampOracle oracle = "tso".equals(variant) ? runtime.tso()
                    : clocks.computeIfAbsent(runtime, r -> new PhysicalClockOracle(r.timers(),
                        PhysicalClockOracle.DEFAULT_UNCERTAINTY_NS, clocks.size() & 0xff));
                return oracle.next().map(ts -> runtime.timers().nowNs() - start);
            };
        }
    }

    /** Builds the run of one variant; {@code options}' clients take the timestamps. */
    public static Simulation simulation(final SimOptions options, final Spec spec) {
        return new Simulation(options, spec).operation(spec.operation());
    }
}
