package io.scythe.sim;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A hundred seeds of each small contended workload per protocol (updates, keys that appear and disappear, TPC-C),
 * with jitter, every invariant and each run's history checked for serializability. The suite's sweeps are a
 * regression guard within `mvn verify`'s budget (issue 23: under 10 minutes); the long sweeps are the CLI's, e.g.
 * {@code scythe sim --explore 10000 --workload all --protocols scythe,ford-occ,farm-occ} (or
 * {@code -Dscythe.sim.seeds=N -Dscythe.sim.paperSeeds=N} here).
 */
class SeedSweepTest extends SimVertxTest {
    static final int SEEDS = Integer.getInteger("scythe.sim.seeds", 100);
    /**
     * Seeds per run in the sweeps of the papers' protocols, which run many forms each (RCC: 9 forms x 4 workloads):
     * fewer per form keeps `mvn verify` within its budget; the long runs are `scythe sim --explore N` (their notes),
     * e.g. {@code scythe sim --explore 10000 --workload all --protocols rcc-occ,rcc-occ:primitive=rpc}.
     */
    static final int PAPER_SEEDS = Integer.getInteger("scythe.sim.paperSeeds", 25);
    /**
     * Seeds of TPC-C in the sweeps above ({@link #SEEDS}' and {@link #PAPER_SEEDS}' share of it), a quarter of the
     * others' for scythe, ford-occ and farm-occ and 10 for the papers' forms: a TPC-C seed loads a warehouse and costs
     * ~10 times a seed of the other workloads, yet commits 1-2 transactions (25 seeds of each RCC form: 24-70
     * committed, 174-220 checked), so it was 48-65 % of each sweep class's time (issue 23, suitetime2: CPU of
     * SeedSweepTest's three TPC-C cases 227 of 474 s, RccSeedSweepTest's nine 222 of 349 s, RccTsSeedSweepTest's six
     * 177 of 271 s at load ~35). What TPC-C checks (its consistency conditions, inserts and deletes) stays in every
     * protocol's sweep; the long TPC-C runs are the CLI's, e.g. {@code scythe sim --explore 1000 --workload tpcc
     * --protocols scythe,ford-occ,farm-occ} ({@code -Dscythe.sim.tpccSeeds=N -Dscythe.sim.paperTpccSeeds=N} here).
     */
    static final int TPCC_SEEDS = Integer.getInteger("scythe.sim.tpccSeeds", 25);
    static final int PAPER_TPCC_SEEDS = Integer.getInteger("scythe.sim.paperTpccSeeds", 10);

    /** The seeds of {@code workload} in a sweep of scythe, ford-occ and farm-occ. */
    static int seeds(final Explorer.Workload workload) {
        return workload == Explorer.Workload.TPCC ? TPCC_SEEDS : SEEDS;
    }

    /** The seeds of {@code workload} in a sweep of the papers' protocols' forms. */
    static int paperSeeds(final Explorer.Workload workload) {
        return workload == Explorer.Workload.TPCC ? PAPER_TPCC_SEEDS : PAPER_SEEDS;
    }

    static Stream<Arguments> workloadsAndProtocols() {
        return everyWorkloadUnder("scythe", "ford-occ", "farm-occ");
    }

    /** Every small contended workload under each of {@code protocols}: the sweeps' cases. */
    static Stream<Arguments> everyWorkloadUnder(final String... protocols) {
        final List<Arguments> all = new ArrayList<>();
        for (final Explorer.Workload w : Explorer.Workload.swept()) {
            for (final String protocol : protocols) {
                all.add(Arguments.of(w, protocol));
            }
        }
        return all.stream();
    }

    @ParameterizedTest
    @MethodSource("workloadsAndProtocols")
    void shouldKeepEveryInvariantAndSerializabilityOverManySeeds(final Explorer.Workload workload,
                                                                 final String protocol) throws Exception {
        sweep(vertx, workload, protocol);
    }

    /** {@link #seeds} seeds of {@code workload} under {@code protocol}: no failure, and histories were checked. */
    static void sweep(final io.vertx.core.Vertx vertx, final Explorer.Workload workload, final String protocol)
        throws Exception {
        sweep(vertx, workload, protocol, seeds(workload));
    }

    /** {@code seeds} seeds of {@code workload} under {@code protocol}: no failure, and histories were checked. */
    static void sweep(final io.vertx.core.Vertx vertx, final Explorer.Workload workload, final String protocol,
                      final int seeds) throws Exception {
        sweep(vertx, workload, protocol, seeds, Explorer::options);
    }

    /** {@code seeds} seeds as {@link #sweep} does, each run with the options {@code optionsOf} gives. */
    static void sweep(final io.vertx.core.Vertx vertx, final Explorer.Workload workload, final String protocol,
                      final int seeds, final java.util.function.BiFunction<String, Long, SimOptions> optionsOf)
        throws Exception {
        final ByteArrayOutputStream printed = new ByteArrayOutputStream();
        final List<Explorer.Failure> failures = Explorer.explore(vertx, workload, List.of(protocol), 1, seeds,
            optionsOf, new PrintStream(printed, true));
        System.out.print(printed);
        assertThat(failures).isEmpty();
        // The checker saw the histories: a contended run commits several transactions per seed.
        final long perSeed = 5;
        final java.util.regex.Matcher m = java.util.regex.Pattern.compile("(\\d+) checked for serializability")
            .matcher(printed.toString());
        assertThat(m.find()).isTrue();
        assertThat(Long.parseLong(m.group(1))).isGreaterThan(seeds * perSeed);
    }
}
