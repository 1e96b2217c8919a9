package io.scythe.cli;

import io.scythe.cluster.ScytheClient;
import io.scythe.txn.api.TxnReply;
import io.vertx.core.json.JsonObject;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.function.Function;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * The reads of {@code scythe chaos}'s audits ({@link ServingReads}) and its fault schedule, on a simulated cluster view
 * with a virtual clock: no process is started.
 */
class ServingReadsTest {
    /** A cluster view whose health can change with the virtual time. */
    private static final class FakeCluster implements ServingReads.Cluster {
        final Map<String, Function<Long, JsonObject>> health = new HashMap<>();
        final Map<String, Boolean> visible = new HashMap<>();
        long nowMs;

        FakeCluster() {
            for (final String cn : cns()) {
                health.put(cn, t -> up());
            }
        }

        @Override
        public List<String> cns() {
            return List.of("cn0", "cn1", "cn2");
        }

        @Override
        public JsonObject health(final String cn) {
            return health.get(cn).apply(nowMs);
        }

        @Override
        public boolean visible(final String cn) {
            return visible.getOrDefault(cn, true);
        }

        @Override
        public long nanoTime() {
            return nowMs * 1_000_000;
        }

        @Override
        public void sleep(final long ms) {
            nowMs += ms;
        }
    }

    static JsonObject up() {
        return new JsonObject().put("status", "UP").put("lease", "held")
            .put("memoryNodes", new JsonObject().put("settling", false));
    }

    static ScytheClient.Outcome committed(final long result) {
        return new ScytheClient.Outcome.Committed(TxnReply.committed(result, 7, 1, 0, "test"));
    }

    @Test
    void shouldSayWhyAComputeNodeDoesNotServe() {
        assertThat(ServingReads.notServing("cn0", up(), true)).isNull();
        assertThat(ServingReads.notServing("cn0", null, true)).isEqualTo("does not answer");
        assertThat(ServingReads.notServing("cn0", up().put("status", "DOWN"), true)).isEqualTo("status DOWN");
        assertThat(ServingReads.notServing("cn0", up().put("lease", "lost"), true)).contains("fenced");
        assertThat(ServingReads.notServing("cn0", up().put("memoryNodes", new JsonObject().put("settling", true)),
            true)).contains("settling");
        assertThat(ServingReads.notServing("cn0", up(), false)).contains("cluster split");
    }

    /** Observed: "account 768 cannot be read ... fenced" from the CN asked, while others served. */
    @Test
    void shouldReadOnAnotherServingNodeWhenTheOneAskedWasFenced() throws Exception {
        final FakeCluster cluster = new FakeCluster();
        final List<String> log = new ArrayList<>();
        final ServingReads reads = new ServingReads(cluster, 60_000, log::add);
        final List<String> asked = new ArrayList<>();
        assertThat(reads.read("account 1", cn -> {
            asked.add(cn);
            return committed(5);
        }).reply().result()).isEqualTo(5);
        // cn0 is fenced now: it answers "fenced" and its health says its lease is lost; cn1 is gone.
        cluster.health.put("cn0", t -> up().put("lease", "lost"));
        cluster.health.put("cn1", t -> null);
        assertThat(reads.read("account 768", cn -> {
            asked.add(cn);
            return cn.equals("cn0") ? new ScytheClient.Outcome.Aborted("fenced") : committed(9);
        }).reply().result()).isEqualTo(9);
        assertThat(asked).containsExactly("cn0", "cn0", "cn2");
        assertThat(reads.retries()).isEqualTo(1);
        // The node that committed is asked first next time.
        asked.clear();
        reads.read("account 769", cn -> {
            asked.add(cn);
            return committed(1);
        });
        assertThat(asked).containsExactly("cn2");
    }

    /** Observed: "no coordinator is serving" after a cluster split, the audit not waiting for one. */
    @Test
    void shouldWaitBoundedAndLoggedForAServingNodeBeforeTheAudit() throws Exception {
        final FakeCluster cluster = new FakeCluster();
        for (final String cn : cluster.cns()) {
            cluster.visible.put(cn, false); // split: the client sees no CN
        }
        cluster.health.put("cn1", t -> t < 25_000 ? null : up());
        final List<String> log = new ArrayList<>();
        final ServingReads reads = new ServingReads(cluster, 60_000, log::add);
        cluster.visible.put("cn1", true);
        assertThat(reads.awaitServing("final audit")).isEqualTo("cn1");
        assertThat(cluster.nowMs).isBetween(25_000L, 25_200L);
        assertThat(log).hasSize(4); // at 0, 10 and 20 s, then the end of the wait
        assertThat(log.get(0)).contains("no compute node serves").contains("cn0: not seen by the client")
            .contains("cn1: does not answer");
        assertThat(log.get(3)).contains("cn1 serves after a wait of 25");
        assertThat(reads.waitedMs()).isBetween(25_000L, 25_200L);
    }

    @Test
    void shouldFailNamingWhyWhenNoNodeServesWithinTheBound() {
        final FakeCluster cluster = new FakeCluster();
        for (final String cn : cluster.cns()) {
            cluster.health.put(cn, t -> up().put("lease", "lost"));
        }
        final ServingReads reads = new ServingReads(cluster, 5_000, line -> { });
        assertThatThrownBy(() -> reads.read("account 3", cn -> committed(1)))
            .isInstanceOf(IllegalStateException.class).hasMessageContaining("no compute node serves after 5000 ms")
            .hasMessageContaining("cn2: lease lost (fenced)");
        assertThat(cluster.nowMs).isBetween(5_000L, 5_100L);
    }

    @Test
    void shouldGiveUpAReadThatNeverCommitsAfterTheBoundWithItsLastOutcome() {
        final FakeCluster cluster = new FakeCluster();
        final ServingReads reads = new ServingReads(cluster, 3_000, line -> { });
        final int[] calls = new int[1];
        assertThatThrownBy(() -> reads.read("account 4", cn -> {
            calls[0]++;
            cluster.nowMs += 50;
            if (calls[0] % 2 == 0) {
                throw new java.util.concurrent.TimeoutException("no reply");
            }
            return new ScytheClient.Outcome.Unknown("timeout");
        })).isInstanceOf(IllegalStateException.class).hasMessageContaining("account 4 cannot be read within 3000 ms")
            .hasMessageContaining("a lock left held?");
        assertThat(cluster.nowMs).isBetween(3_000L, 3_200L);
    }

    @Test
    void shouldScheduleFaultsAtTheMeanIntervalAndLeaveAComputeNodeServing() {
        final SplittableRandom random = new SplittableRandom(1);
        long sum = 0;
        for (int i = 0; i < 10_000; i++) {
            sum += ChaosCommand.nextGapNs(random, 2_000_000_000L);
        }
        assertThat(sum / 10_000 / 1_000_000).as("mean gap (ms)").isBetween(1_900L, 2_100L);
        // 3 h at one fault per 2 s on average: 5,400 scheduled.
        assertThat(ChaosCommand.pickVictims(List.of("cn0", "cn2"), 1, random)).hasSize(1);
        assertThat(ChaosCommand.pickVictims(List.of("cn0", "cn2"), 2, random)).as("none left to recover").isEmpty();
        assertThat(ChaosCommand.pickVictims(List.of("cn1"), 1, random)).isEmpty();
        assertThat(ChaosCommand.pickVictims(List.of("cn0", "cn1", "cn2"), 2, random)).doesNotHaveDuplicates()
            .hasSize(2);
    }

    @Test
    void shouldReportP99AndFaultsByKind() {
        final List<Long> values = new ArrayList<>();
        for (long v = 100; v >= 1; v--) {
            values.add(v);
        }
        assertThat(ChaosCommand.spread(values)).isEqualTo("min 1, median 51, P99 99, max 100 over 100");
        assertThat(ChaosCommand.spread(new ArrayList<>(List.of(7L)))).isEqualTo("min 7, median 7, P99 7, max 7 over 1");
        assertThat(ChaosCommand.byKind(List.of(new JsonObject().put("fault", "SIGKILL").put("cn", "cn0.e1"),
            new JsonObject().put("fault", "SIGSTOP").put("cn", "mn1").put("mn", true),
            new JsonObject().put("fault", "SIGKILL").put("cn", "cn1.e2"))))
            .isEqualTo("CN SIGKILL 2, MN SIGSTOP 1");
    }
}
