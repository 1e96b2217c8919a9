package io.scythe.cluster;

import com.hazelcast.core.Hazelcast;
import com.hazelcast.core.HazelcastInstance;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import org.junit.jupiter.api.Test;

import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A member whose cluster executor (its heartbeats' two threads) is held up logs its threads, once per stall, naming
 * what holds them (issue 23 §1: the fence scenario's live member whose heartbeats stopped); nothing while it runs.
 */
class HazelcastStallWatchTest {
    @Test
    void shouldLogTheThreadsOnceWhenTheClusterExecutorIsHeldUpAndSayWhenItRunsAgain() throws Exception {
        final int port = LocalCluster.freePort();
        final NodeConfig config = NodeConfig.of(new JsonObject().put("cluster", "stall" + ProcessHandle.current().pid())
            .put("secret", "stall-watch-secret-0123").put("node", "mnS").put("hazelcastPort", port)
            .put("members", new JsonArray(List.of("127.0.0.1:" + port))).put("httpPort", -1));
        final HazelcastInstance hz = Hazelcast.newHazelcastInstance(ClusterSetup.hazelcastConfig(config));
        final List<String> log = new java.util.concurrent.CopyOnWriteArrayList<>();
        final CountDownLatch release = new CountDownLatch(1);
        final HazelcastStallWatch watch = HazelcastStallWatch.start(hz, "mnS", log::add);
        try {
            assertThat(watch).isNotNull();
            Thread.sleep(HazelcastStallWatch.STALL_MS + 1_000);
            assertThat(log).as("quiet while the executor runs").isEmpty();
            // Both of its threads held, as a blocking call made on them would.
            final var executors = ((com.hazelcast.instance.impl.HazelcastInstanceProxy) hz).getOriginal().node
                .getNodeEngine().getExecutionService();
            for (int i = 0; i < 2; i++) {
                executors.execute("hz:cluster", heldUp(release));
            }
            final long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
            while (log.isEmpty() && System.nanoTime() < deadline) {
                Thread.sleep(100);
            }
            assertThat(log).hasSize(1);
            assertThat(log.get(0)).startsWith("WARN Hazelcast's cluster executor (hz:cluster: this member's heartbeats) "
                + "has not run for ").contains(ThreadDump.BEGIN + " of mnS with hz:cluster stalled ")
                .contains("HazelcastStallWatchTest.lambda$heldUp").endsWith(ThreadDump.END);
            Thread.sleep(2_000);
            assertThat(log).as("once per stall").hasSize(1);
            release.countDown();
            final long again = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
            while (log.size() < 2 && System.nanoTime() < again) {
                Thread.sleep(100);
            }
            assertThat(log).hasSize(2).last().isEqualTo("Hazelcast's cluster executor runs again");
        } finally {
            release.countDown();
            if (watch != null) {
                watch.close();
            }
            hz.getLifecycleService().terminate();
        }
    }

    private static Runnable heldUp(final CountDownLatch release) {
        return () -> {
            try {
                release.await();
            } catch (final InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        };
    }

    @Test
    void shouldTellAStoppedProcessFromAStalledExecutor() {
        // cn1 woken after its SIGSTOP in the fence scenario: the executor 18.5 s behind, this watch as late.
        assertThat(HazelcastStallWatch.processStood(18_516, 18_100)).isTrue();
        // The executor held up while this watch ran on time: a stall, dumped.
        assertThat(HazelcastStallWatch.processStood(3_200, 10)).isFalse();
        assertThat(HazelcastStallWatch.processStood(9_000, 4_000)).isFalse();
        assertThat(HazelcastStallWatch.processStood(2_000, 2_000)).as("no gap to speak of").isFalse();
    }
}
