package io.scythe.sim;

import io.scythe.fabric.ClockDeviation;
import io.scythe.fabric.ClockOptions;
import io.scythe.txn.Protocol;
import io.scythe.txn.Txn;
import io.scythe.txn.TxnRuntime;
import io.scythe.txn.aurogon.AurogonModule;
import io.vertx.core.Future;
import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The paper's reordering scenarios (ATC'23 Fig. 2(a)-(c), Fig. 4) replayed in the simulator: two transactions, Tx0 on
 * cn0 and Tx1 on cn1, on one record X (key 0 of {@link AurogonSimTest.HotCounter}'s table), each run once (no retry)
 * at set virtual times after a warm-up (2LClock's first probes; 40 reads of X, which make it hot). Each scenario
 * without the technique that answers it aborts Tx0; with it, both commit and Tx1 reads what it must.
 * <ul>
 *   <li>(a) inaccurate clocks: cn1's host clock 20 us ahead; Tx1 reads X, Tx0 reads and writes X 3 us later but
 *       with the smaller timestamp on raw host clocks ({@code aurogon-base}); 2LClock ({@code aurogon-2l}) orders
 *       them as real time does (Tx0's read is a plain read: pre-attaching, on in aurogon-2l, plays no part).</li>
 *   <li>(b) and Fig. 4, nonuniform latency: Tx0 (timestamp first) reads X for update 5 us after taking its
 *       timestamp (a farther server, modelled as a delay before sending), Tx1 starts 1 us later and reads X at
 *       once; without deferral ({@code aurogon-2l}) the read raises X's rts and Tx0's late pre-attach is refused;
 *       with it ({@code aurogon}) the hot X's read waits, Tx0's version gets in and Tx1 reads its value. The pair
 *       runs in {@link #LATENCY_ROUNDS} rounds: X's deferral starts low (2 us, shorter than Tx0's lateness) and grows
 *       by a step at each refusal (§4.2), so with deferral the first round is refused and the last one commits.</li>
 *   <li>(c) dependent requests: Tx0 reads X, computes 2 us, writes X+1; Tx1 reads X in between; without
 *       pre-attaching ({@code aurogon-base}) Tx1's read lands in Tx0's vulnerable interval and Tx0 aborts; with it
 *       ({@code aurogon-pre}) Tx0's pending version is there first and Tx1 reads X+1.</li>
 * </ul>
 */
class AurogonReorderSimTest extends SimVertxTest {
    private static final String TABLE = AurogonSimTest.HotCounter.TABLE;
    private static final long X = 0;
    /** Virtual time the scenario starts at (after the warm-up). */
    private static final long START_NS = VirtualClock.EPOCH_NS + 600_000;

    enum Scenario { CLOCKS, LATENCY, DEPENDENCY }

    /** Rounds of the LATENCY pair, {@link #ROUND_NS} apart (the other scenarios run once). */
    private static final int LATENCY_ROUNDS = 4;
    private static final long ROUND_NS = 50_000;

    /**
     * What the scenario's two transactions did in its last round (Tx0 writes 42 plus the round), and whether Tx0
     * committed in the first.
     */
    record Outcome(boolean tx0Committed, boolean tx1Committed, long tx1Read, boolean firstTx0Committed) {
    }

    private static Protocol protocol(final String name) {
        for (final Protocol p : new AurogonModule().protocols()) {
            if (p.name().equals(name)) {
                return p;
            }
        }
        throw new IllegalArgumentException(name);
    }

    static Outcome replay(final Scenario scenario, final String protocolName) throws Exception {
        final Protocol protocol = protocol(protocolName);
        final ClockOptions clocks = scenario == Scenario.CLOCKS
            ? new ClockOptions().nodeHost("cn1", new ClockDeviation(20_000, 0)) : new ClockOptions();
        final Simulation[] sim = new Simulation[1];
        final Set<TxnRuntime> started = new HashSet<>();
        final Map<String, Object> results = new ConcurrentHashMap<>();
        sim[0] = new Simulation(new SimOptions().protocol(protocolName).computeNodes(2).loopsPerComputeNode(1)
            .clientsPerComputeNode(1).memoryNodes(1)
            .durationNs(scenario == Scenario.LATENCY ? 1_000_000 : 800_000).seed(1).clocks(clocks),
            new AurogonSimTest.HotCounter()).operation((runtime, random) -> {
                if (!started.add(runtime)) {
                    return runtime.timers().after(10_000_000).map(v -> 0L); // once only
                }
                final boolean tx0 = sim[0].runtimesOf(0).contains(runtime);
                final int rounds = scenario == Scenario.LATENCY ? LATENCY_ROUNDS : 1;
                return warmUp(runtime, protocol, 0).compose(v -> rounds(scenario, runtime, protocol, tx0, 0, rounds,
                    results)).map(v -> 1L).onFailure(e -> results.put("error", String.valueOf(e)));
            });
        final SimResult r = sim[0].run(vertx);
        final int last = (scenario == Scenario.LATENCY ? LATENCY_ROUNDS : 1) - 1;
        assertThat(results).doesNotContainKey("error").containsKeys("tx0-" + last, "tx1-" + last);
        return new Outcome((Boolean) results.get("tx0-" + last), (Boolean) results.get("tx1-" + last),
            (Long) results.getOrDefault("read-" + last, -1L), (Boolean) results.get("tx0-0"));
    }

    /** Round {@code round} of the pair at {@code START_NS + round * ROUND_NS}, then the next ones. */
    private static Future<Void> rounds(final Scenario scenario, final TxnRuntime runtime, final Protocol protocol,
                                       final boolean tx0, final int round, final int rounds,
                                       final Map<String, Object> results) {
        if (round == rounds) {
            return Future.succeededFuture();
        }
        return runtime.timers().after(START_NS + round * ROUND_NS - runtime.timers().nowNs())
            .compose(v -> tx0 ? tx0(scenario, runtime, protocol, round) : tx1(scenario, runtime, protocol, results,
                round)).compose(committed -> {
                    results.put((tx0 ? "tx0-" : "tx1-") + round, committed);
                    return rounds(scenario, runtime, protocol, tx0, round + 1, rounds, results);
                });
    }

    /** 20 read-only transactions of X, 20 us apart: 2LClock probes, and X counts 40 reads (hot at 32). */
    private static Future<Void> warmUp(final TxnRuntime runtime, final Protocol protocol, final int done) {
        if (done == 20) {
            return Future.succeededFuture();
        }
        final Txn txn = protocol.begin(runtime, false);
        return txn.read(TABLE, X).compose(v -> txn.commit()).<Void>mapEmpty().recover(e -> Future.succeededFuture())
            .compose(v -> runtime.timers().after(20_000)).compose(v -> warmUp(runtime, protocol, done + 1));
    }

    private static Future<Boolean> tx0(final Scenario scenario, final TxnRuntime runtime, final Protocol protocol,
                                       final int round) {
        switch (scenario) {
            case CLOCKS:
                return runtime.timers().after(3_000).compose(v -> {
                    final Txn txn = protocol.begin(runtime, false);
                    return txn.read(TABLE, X).compose(x -> {
                        txn.write(TABLE, X, value(42), 0, 8);
                        return committed(txn);
                    }, e -> Future.succeededFuture(false));
                });
            case LATENCY: {
                final Txn txn = protocol.begin(runtime, false);
                return runtime.timers().after(5_000).compose(v -> txn.readForUpdate(TABLE, X)).compose(x -> {
                    txn.write(TABLE, X, value(42 + round), 0, 8);
                    return committed(txn);
                }, e -> Future.succeededFuture(false));
            }
            default: {
                final Txn txn = protocol.begin(runtime, false);
                return txn.readForUpdate(TABLE, X).compose(v -> {
                    final long next = v.getLong(0) + 1;
                    return runtime.timers().after(2_000).compose(w -> {
                        txn.write(TABLE, X, value(next), 0, 8);
                        return committed(txn);
                    });
                }, e -> Future.succeededFuture(false));
            }
        }
    }

    private static Future<Boolean> tx1(final Scenario scenario, final TxnRuntime runtime, final Protocol protocol,
                                       final Map<String, Object> results, final int round) {
        final long delay = scenario == Scenario.CLOCKS ? 0 : scenario == Scenario.LATENCY ? 1_000 : 500;
        return runtime.timers().after(delay).compose(v -> {
            final Txn txn = protocol.begin(runtime, false);
            return txn.read(TABLE, X).compose(value -> {
                results.put("read-" + round, value.getLong(0));
                return committed(txn);
            }, e -> Future.succeededFuture(false));
        });
    }

    private static Future<Boolean> committed(final Txn txn) {
        return txn.commit().map(ts -> true).recover(e -> txn.abort().map(v -> false).recover(f ->
            Future.succeededFuture(false)));
    }

    private static UnsafeBuffer value(final long v) {
        final UnsafeBuffer b = new UnsafeBuffer(new byte[8]);
        b.putLong(0, v);
        return b;
    }

    @Test
    void shouldReplayFig2aInaccurateClocks() throws Exception {
        final Outcome without = replay(Scenario.CLOCKS, "aurogon-base");
        final Outcome with = replay(Scenario.CLOCKS, "aurogon-2l");
        System.out.println("Fig. 2(a): raw host clocks " + without + ", 2LClock " + with);
        assertThat(without.tx1Committed()).isTrue();
        assertThat(without.tx0Committed()).as("Tx0's smaller timestamp lands inside Tx1's read").isFalse();
        assertThat(with.tx0Committed()).isTrue();
        assertThat(with.tx1Committed()).isTrue();
    }

    @Test
    void shouldReplayFig2bAndFig4NonuniformLatency() throws Exception {
        final Outcome without = replay(Scenario.LATENCY, "aurogon-2l");
        final Outcome with = replay(Scenario.LATENCY, "aurogon");
        System.out.println("Fig. 2(b)/4: without deferral " + without + ", with " + with);
        assertThat(without.tx1Committed()).isTrue();
        assertThat(without.tx0Committed()).as("the late write is refused").isFalse();
        assertThat(without.firstTx0Committed()).isFalse();
        assertThat(with.firstTx0Committed()).as("the deferral starts low: 2 us is too short at first").isFalse();
        assertThat(with.tx0Committed()).as("grown by the refusals, the deferral lets the late write in").isTrue();
        assertThat(with.tx1Committed()).isTrue();
        assertThat(with.tx1Read()).as("the deferred read returns the straggler's value")
            .isEqualTo(42 + LATENCY_ROUNDS - 1);
    }

    @Test
    void shouldReplayFig2cDependentRequests() throws Exception {
        final Outcome without = replay(Scenario.DEPENDENCY, "aurogon-base");
        final Outcome with = replay(Scenario.DEPENDENCY, "aurogon-pre");
        System.out.println("Fig. 2(c): without pre-attaching " + without + ", with " + with);
        assertThat(without.tx1Committed()).isTrue();
        assertThat(without.tx0Committed()).as("the dependent write arrives after Tx1's read").isFalse();
        assertThat(with.tx0Committed()).isTrue();
        assertThat(with.tx1Committed()).isTrue();
        assertThat(with.tx1Read()).as("Tx1 waits for the pre-attached version").isEqualTo(1);
    }
}
