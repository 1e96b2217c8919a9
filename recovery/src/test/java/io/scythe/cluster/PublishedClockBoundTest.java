package io.scythe.cluster;

import com.hazelcast.core.Hazelcast;
import com.hazelcast.core.HazelcastInstance;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import org.junit.jupiter.api.Test;

import java.util.List;
import java.util.UUID;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The clock bounds compute nodes publish (issue 18, review R1): a node's bound only rises, and the settling of a
 * promoted RCC MVCC copy floors above the bound of every compute node that is down instead of waiting for it to come
 * back (and above a deregistered one's); one that is down and published none is waited for only when it may have
 * served (scythe.cnserving: then its bound was lost), and a live node's bound is not used (its drained clock is exact).
 */
class PublishedClockBoundTest {
    @Test
    void shouldFloorAboveTheBoundsOfTheComputeNodesDownAndWaitOnlyForThoseThatPublishedNone() throws Exception {
        final HazelcastInstance hz = member();
        try {
            final MemoryNodeFailover failover = new MemoryNodeFailover(hz, List.of("mn0", "mn1", "mn2"), 2);
            final String live = hz.getCluster().getLocalMember().getUuid().toString();
            final com.hazelcast.map.IMap<String, String> nodes = hz.getMap(ScytheNode.NODES);
            nodes.put("cn0", new JsonObject().put("role", NodeRole.CN.label()).put("member", live).encode());
            nodes.put("cn1", new JsonObject().put("role", NodeRole.CN.label())
                .put("member", UUID.randomUUID().toString()).encode());
            nodes.put("mn1", new JsonObject().put("role", NodeRole.MN.label())
                .put("member", UUID.randomUUID().toString()).encode());
            assertThat(failover.downClocks().down()).containsExactly("cn1");
            // rcc-unbounded-cn: neither a record that it may serve nor a bound: it never served, nothing to wait for.
            assertThat(failover.downClocks().waitsFor()).as("cn1 never served").isNull();
            assertThat(failover.downClocks().neverServed()).containsExactly("cn1");
            assertThat(failover.downClocks().bound()).isZero();
            // It may have served (the record is written before its first bound) and its bound is missing: lost.
            failover.mayServe("cn1", 3);
            failover.mayServe("cn1", 2);
            assertThat(hz.<String, Long>getMap(MemoryNodeFailover.SERVING).get("cn1")).as("only rises").isEqualTo(3);
            assertThat(failover.downClocks().waitsFor()).as("cn1 may have served, no bound").isEqualTo("cn1");
            assertThat(failover.downClocks().neverServed()).isEmpty();

            assertThat(failover.publishClockBound("cn1", 5_000)).isEqualTo(5_000);
            assertThat(failover.publishClockBound("cn1", 4_000)).as("never lowered").isEqualTo(5_000);
            assertThat(failover.publishClockBound("cn0", 90_000)).isEqualTo(90_000);
            MemoryNodeFailover.DownClocks down = failover.downClocks();
            assertThat(down.waitsFor()).as("settles with cn1 down").isNull();
            assertThat(down.bound()).as("cn1's bound; cn0 is live: its drain counts, not its bound").isEqualTo(5_000);

            nodes.put("cn2", new JsonObject().put("role", NodeRole.CN.label()).encode()); // never joined: no member
            assertThat(failover.downClocks().waitsFor()).isNull();
            assertThat(failover.downClocks().neverServed()).containsExactly("cn2");
            failover.mayServe("cn2", 1);
            assertThat(failover.downClocks().waitsFor()).isEqualTo("cn2");
            failover.publishClockBound("cn2", 7_000);
            down = failover.downClocks();
            assertThat(down.waitsFor()).isNull();
            assertThat(down.bound()).isEqualTo(7_000);
            assertThat(down.down()).containsExactly("cn1", "cn2");
            // A CN that died and was deregistered since: its reads may have raised rts on the primary that died now.
            failover.publishClockBound("cn9", 8_000);
            assertThat(failover.downClocks().bound()).isEqualTo(8_000);
        } finally {
            hz.getLifecycleService().terminate();
        }
    }

    /** A one-member Hazelcast cluster of its own on loopback. */
    private static HazelcastInstance member() throws Exception {
        final int port = LocalCluster.freePort();
        final NodeConfig config = NodeConfig.of(new JsonObject().put("cluster", "bounds" + UUID.randomUUID()
                .toString().substring(0, 8)).put("secret", "a test secret of the cluster").put("node", "mn0")
            .put("hazelcastPort", port).put("members", new JsonArray(List.of("127.0.0.1:" + port)))
            .put("httpPort", -1));
        return Hazelcast.newHazelcastInstance(ClusterSetup.hazelcastConfig(config));
    }
}
