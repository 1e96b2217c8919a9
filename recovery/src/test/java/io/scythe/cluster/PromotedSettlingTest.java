package io.scythe.cluster;

import com.hazelcast.core.Hazelcast;
import com.hazelcast.core.HazelcastInstance;
import io.scythe.txn.MemoryNodeConfiguration;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import org.junit.jupiter.api.Test;

import java.util.List;
import java.util.Map;
import java.util.UUID;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Cluster mode's settling of promoted copies (issue 18: RCC's MVCC and SUNDIAL floor their rts there): the clock a
 * memory node floors above is the largest its compute nodes drained with from the promotion's term on, and a compute
 * node serves a promoted copy only once its memory node said it settled it, under the copy's current term.
 */
class PromotedSettlingTest {
    @Test
    void shouldFloorAboveTheLargestClockDrainedFromThePromotionsTermOn() {
        final Map<String, String> drained = new java.util.HashMap<>();
        drained.put("0:cn1", new JsonObject().put("ms", 1).put("clock", 9_000).encode()); // before the promotion
        drained.put("1:cn0", new JsonObject().put("ms", 2).put("clock", 250).encode());
        drained.put("1:cn1", new JsonObject().put("ms", 3).put("clock", 400).encode());
        drained.put("2:cn2", "12345"); // written before the clock was kept: counts 0
        drained.put("3:cn0", new JsonObject().put("ms", 4).encode()); // a protocol without a clock
        assertThat(MemoryNodeFailover.clockBound(drained, 1)).isEqualTo(400);
        assertThat(MemoryNodeFailover.clockBound(drained, 0)).isEqualTo(9_000);
        assertThat(MemoryNodeFailover.clockBound(drained, 2)).isZero();
    }

    @Test
    void shouldWaitForEveryPromotedCopysSettlingUnderItsCurrentTerm() throws Exception {
        final int port = LocalCluster.freePort();
        final NodeConfig config = NodeConfig.of(new JsonObject().put("cluster", "settling" + UUID.randomUUID()
                .toString().substring(0, 8)).put("secret", "a test secret of the cluster").put("node", "cn0")
            .put("hazelcastPort", port).put("members", new JsonArray(List.of("127.0.0.1:" + port)))
            .put("httpPort", -1));
        final HazelcastInstance hz = Hazelcast.newHazelcastInstance(ClusterSetup.hazelcastConfig(config));
        try {
            final MemoryNodeFailover failover = new MemoryNodeFailover(hz, List.of("mn0", "mn1", "mn2"), 2);
            final MemoryNodeConfiguration initial = MemoryNodeConfiguration.initial(3, 2);
            assertThat(failover.copiesUnsettled(initial)).as("nothing promoted").isNull();
            final MemoryNodeConfiguration one = initial.without(2);
            assertThat(MemoryNodeFailover.settlingKey(one, 2)).isEqualTo("1:2");
            assertThat(failover.copiesUnsettled(one)).contains("[1:2]");
            failover.copiesSettled(List.of("1:2"), 400);
            assertThat(failover.copiesUnsettled(one)).isNull();
            // p2's promoted primary (mn0) dies too: its next copy is promoted in epoch 2, and settled again.
            final MemoryNodeConfiguration two = one.without(0);
            assertThat(failover.copiesUnsettled(two)).contains("2:0").contains("2:2").doesNotContain("1:2");
            failover.copiesSettled(List.of("2:0", "2:2"), 500);
            assertThat(failover.copiesUnsettled(two)).isNull();
            failover.drained(2, "cn0", 700);
            failover.drained(2, "cn1");
            assertThat(failover.clockBound(2)).isEqualTo(700);
        } finally {
            hz.getLifecycleService().terminate();
        }
    }
}
