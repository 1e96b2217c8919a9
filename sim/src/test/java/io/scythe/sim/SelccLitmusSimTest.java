package io.scythe.sim;

import io.scythe.bench.workload.GclSpec;
import io.scythe.txn.TxnRuntime;
import io.scythe.txn.selcc.Gcl;
import io.vertx.core.Future;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * SELCC's sequential consistency (§6.2, Fig. 11; digest §7.2 "Sequential consistency") as the three cross-node litmus
 * tests, message passing (MP), store buffering (SB) and independent reads of independent writes (IRIW), run on the
 * GCL API ({@link Gcl}: SLock/XLock, SUnlock/XUnlock) of SELCC's cache and of SEL over many simulator seeds (the
 * explorer's way: each seed another interleaving of verbs, invalidations and handovers), each role on its own compute
 * node. Tiny caches, a short lease and one receive slot a loop make lines leave by eviction and lease while
 * invalidations for them are in flight.
 *
 * <p>The tests run continuously, not in rounds: each writer writes 1, 2, 3, ... into its line, so values are
 * monotone and a read names the write it saw. The forbidden outcomes become:
 * <ul>
 *   <li>MP (writer: x := k, then y := k; reader: r1 = y, then r2 = x): a reader that saw y = k saw x &gt;= k.</li>
 *   <li>SB (A: x := k, then a_k = y; B: y := j, then b_j = x): never a_k &lt; j and b_j &lt; k (each read before
 *       the other's write: a cycle in any total order).</li>
 *   <li>IRIW (writers x := k and y := k on two nodes; R1 reads x then y, R2 y then x): never R1 = (a, b) and
 *       R2 = (c, d) with a &gt; d and c &gt; b (the two readers seeing the writes in opposite orders).</li>
 * </ul>
 * A layer that serves an operation's second read from a stale copy ({@code stale}: the checker's own check) is caught
 * by each of the three.
 */
class SelccLitmusSimTest extends SimVertxTest {
    private static final int SEEDS = 10;

    @AfterEach
    void defaults() {
        for (final String p : List.of("cacheFrames", "evictBatch", "leaseNs", "receiveSlots")) {
            System.clearProperty("scythe.selcc." + p);
        }
    }

    @ParameterizedTest(name = "{0} {1}")
    @CsvSource({"selcc-2pl, MP", "selcc-2pl, SB", "selcc-2pl, IRIW", "sel-2pl, MP", "sel-2pl, SB",
        "sel-2pl, IRIW"})
    void shouldForbidTheLitmusTestsNonSequentialOutcomes(final String protocol, final Litmus test) throws Exception {
        racy();
        long observed = 0;
        for (int seed = 1; seed <= SEEDS; seed++) {
            final Outcomes o = run(protocol, test, seed, false);
            assertThat(o.forbidden()).as(test + " seed " + seed + " on " + protocol).isEmpty();
            observed += o.observations();
        }
        assertThat(observed).as("reads observed over the seeds").isGreaterThanOrEqualTo(SEEDS * 4L);
    }

    /** The checks can fail: a second read served from its line's first copy shows each test's forbidden outcome. */
    @ParameterizedTest(name = "{0}")
    @CsvSource({"MP", "SB", "IRIW"})
    void shouldCatchAStaleSecondRead(final Litmus test) throws Exception {
        racy();
        assertThat(run("selcc-2pl", test, 1, true).forbidden()).as(test.name()).isNotEmpty();
    }

    private static void racy() {
        System.setProperty("scythe.selcc.cacheFrames", "2");
        System.setProperty("scythe.selcc.evictBatch", "1");
        System.setProperty("scythe.selcc.leaseNs", "20000");
        System.setProperty("scythe.selcc.receiveSlots", "1");
    }

    enum Litmus {
        MP(2), SB(2), IRIW(4);

        final int roles;

        Litmus(final int roles) {
            this.roles = roles;
        }
    }

    private Outcomes run(final String protocol, final Litmus test, final long seed, final boolean stale)
        throws Exception {
        // lines 0..3 (x, y and two lines for noise, which with 2-frame caches evict x and y now and then)
        final GclSpec spec = new GclSpec(4, 256, 2);
        final SimOptions options = new SimOptions().protocol(protocol).computeNodes(test.roles)
            .loopsPerComputeNode(1).clientsPerComputeNode(1).memoryNodes(2).durationNs(2_000_000).seed(seed);
        final Outcomes outcomes = new Outcomes(test, stale);
        final SimResult result = new Simulation(options, spec).operation((runtime, random) ->
            outcomes.step(runtime, random, GclSpec.kind(protocol))).run(vertx);
        assertThat(result.invariantsOk()).as(result.run().toJson().encodePrettily()).isTrue();
        System.out.println(protocol + " " + test + " seed " + seed + ": " + outcomes.observations() + " steps read, "
            + "next values written " + java.util.Arrays.toString(outcomes.next));
        return outcomes;
    }

    /** The roles' steps and what they saw; one role a compute node (one loop, one client each). */
    private static final class Outcomes {
        private final Litmus test;
        private final boolean stale;
        /** Per role: the next value it writes (from 1). */
        private final long[] next;
        /** Per role: the (first, second) values each of its steps read. */
        private final List<List<long[]>> seen = new ArrayList<>();
        /** The stale layer's first copy of each line, per role. */
        private final List<Map<Long, Long>> firstCopy = new ArrayList<>();

        Outcomes(final Litmus test, final boolean stale) {
            this.test = test;
            this.stale = stale;
            this.next = new long[test.roles];
            for (int i = 0; i < test.roles; i++) {
                seen.add(Collections.synchronizedList(new ArrayList<>()));
                firstCopy.add(new HashMap<>());
                next[i] = 1;
            }
        }

        long observations() {
            return seen.stream().mapToLong(List::size).sum();
        }

        Future<Long> step(final TxnRuntime runtime, final SplittableRandom random, final String kind) {
            // a pause of 0-10 us first: the roles' steps interleave differently (and a busy writer does not starve
            // SEL's readers, whose FAA it undoes by holding the line Exclusive back to back)
            return runtime.timers().after(1 + random.nextInt(10_000)).compose(p -> steps(runtime, random, kind));
        }

        private Future<Long> steps(final TxnRuntime runtime, final SplittableRandom random, final String kind) {
            final Gcl gcl = Gcl.of(kind, runtime);
            final int role = runtime.peerLoops().number() - 1;
            final long start = runtime.timers().nowNs();
            final long x = line(gcl, 0);
            final long y = line(gcl, 1);
            final Future<?> done;
            switch (test) {
                case MP: {
                    final long k = next[0]++;
                    done = role == 0 ? write(gcl, x, k).compose(v -> write(gcl, y, k)) : reads(gcl, role, y, x);
                    break;
                }
                case SB: {
                    final long k = next[role]++;
                    done = write(gcl, role == 0 ? x : y, k).compose(v -> read(gcl, role, role == 0 ? y : x, true))
                        .map(r -> seen.get(role).add(new long[] {k, r}));
                    break;
                }
                default: // IRIW: roles 0 and 1 write x and y, 2 reads x then y, 3 reads y then x
                    done = role < 2 ? write(gcl, role == 0 ? x : y, next[role]++)
                        : reads(gcl, role, role == 2 ? x : y, role == 2 ? y : x);
            }
            final long noise = line(gcl, 2 + random.nextInt(2));
            return done.compose(v -> random.nextBoolean() ? read(gcl, role, noise, false) : Future.succeededFuture())
                .map(v -> runtime.timers().nowNs() - start);
        }

        private static long line(final Gcl gcl, final int i) {
            return gcl.region().pointer(i % 2, 1 + i / 2);
        }

        private Future<Void> write(final Gcl gcl, final long line, final long value) {
            return gcl.xLock(line).compose(h -> {
                h.data().putLong(GclSpec.COUNTER, value);
                h.written(GclSpec.COUNTER, 8);
                return gcl.unlockWritten(h);
            });
        }

        private Future<Boolean> reads(final Gcl gcl, final int role, final long first, final long second) {
            return read(gcl, role, first, false).compose(a -> read(gcl, role, second, true)
                .map(b -> seen.get(role).add(new long[] {a, b})));
        }

        /** SLock, read the value, SUnlock; {@code second} read of a {@link #stale} run: the line's first copy. */
        private Future<Long> read(final Gcl gcl, final int role, final long line, final boolean second) {
            return gcl.sLock(line).map(h -> {
                final long v = h.data().getLong(GclSpec.COUNTER);
                gcl.unlock(h);
                final Long first = firstCopy.get(role).putIfAbsent(line, v);
                return stale && second && first != null ? first : v;
            });
        }

        /** The forbidden outcomes seen, described. */
        List<String> forbidden() {
            final List<String> bad = new ArrayList<>();
            switch (test) {
                case MP:
                    for (final long[] r : seen.get(1)) {
                        if (r[1] < r[0]) {
                            bad.add("MP: saw y = " + r[0] + " then x = " + r[1]);
                        }
                    }
                    break;
                case SB:
                    for (final long[] a : seen.get(0)) {
                        for (final long[] b : seen.get(1)) {
                            if (a[1] < b[0] && b[1] < a[0]) {
                                bad.add("SB: A wrote x = " + a[0] + " and read y = " + a[1] + ", B wrote y = " + b[0]
                                    + " and read x = " + b[1]);
                            }
                        }
                    }
                    break;
                default:
                    for (final long[] r1 : seen.get(2)) {
                        for (final long[] r2 : seen.get(3)) {
                            // r1 = (x, y), r2 = (y, x)
                            if (r1[0] > r2[1] && r2[0] > r1[1]) {
                                bad.add("IRIW: R1 saw x = " + r1[0] + ", y = " + r1[1] + "; R2 saw y = " + r2[0]
                                    + ", x = " + r2[1]);
                            }
                        }
                    }
            }
            return bad.size() > 5 ? bad.subList(0, 5) : bad;
        }
    }
}
