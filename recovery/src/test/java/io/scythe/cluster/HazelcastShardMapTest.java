package io.scythe.cluster;

import com.hazelcast.core.Hazelcast;
import com.hazelcast.core.HazelcastInstance;
import io.scythe.routing.Router;
import io.scythe.routing.RoutingMode;
import io.scythe.routing.ShardMap;
import io.scythe.routing.WrongOwnerException;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.UUID;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * The shard map of cluster mode on two real Hazelcast members of this JVM (TCP join on loopback, conf/cluster.xml:
 * never multicast): both see one map, a move by either is seen by the other under the next epoch, concurrent moves
 * from both take an epoch each, and a node whose shard moved away refuses with the new owner, which a stale router
 * then learns.
 */
class HazelcastShardMapTest {
    private static final String SECRET = "a test secret of the cluster";
    private static final int SHARDS = 64;
    private static final List<String> NODES = List.of("cn0", "cn1", "cn2", "cn3");

    private static final String CLUSTER = "shards" + UUID.randomUUID().toString().substring(0, 8);
    private static final List<HazelcastInstance> MEMBERS = new ArrayList<>();
    private static final List<String> ADDRESSES = new ArrayList<>();
    private static Vertx vertx;

    @BeforeAll
    static void start() throws Exception {
        vertx = Vertx.vertx();
        member("a");
        member("b");
    }

    @AfterAll
    static void stop() throws Exception {
        MEMBERS.forEach(m -> m.getLifecycleService().terminate());
        vertx.close().await(10, TimeUnit.SECONDS);
    }

    private static HazelcastInstance member(final String name) throws Exception {
        final int port = LocalCluster.freePort();
        ADDRESSES.add("127.0.0.1:" + port);
        final NodeConfig config = NodeConfig.of(new JsonObject().put("cluster", CLUSTER).put("secret", SECRET)
            .put("node", name).put("hazelcastPort", port).put("members", new JsonArray(List.of(ADDRESSES.get(0))))
            .put("httpPort", -1));
        final HazelcastInstance hz = Hazelcast.newHazelcastInstance(ClusterSetup.hazelcastConfig(config));
        MEMBERS.add(hz);
        return hz;
    }

    private static HazelcastShardMap open(final int member, final ShardMap initial) throws Exception {
        return HazelcastShardMap.open(vertx, MEMBERS.get(member), initial).await(30, TimeUnit.SECONDS);
    }

    private static ShardMap awaitEpoch(final HazelcastShardMap directory, final long epoch) throws Exception {
        final long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60); // a bound: loaded machines
        while (directory.current().epoch() < epoch && System.nanoTime() < deadline) {
            Thread.sleep(5);
        }
        return directory.current();
    }

    @Test
    void shouldShareOneMapMoveShardsByEpochAndRefuseWhatMovedAway() throws Exception {
        assertThat(MEMBERS.get(1).getCluster().getMembers()).hasSize(2);
        final ShardMap initial = ShardMap.roundRobin(SHARDS, NODES);
        try (HazelcastShardMap a = open(0, initial);
             HazelcastShardMap b = open(1, ShardMap.roundRobin(SHARDS, List.of("x", "y")))) {
            // The first to open wrote the map: the second member takes the cluster's, not its own.
            assertThat(b.current().nodes()).isEqualTo(NODES);
            assertThat(b.current().epoch()).isEqualTo(ShardMap.FIRST_EPOCH);
            assertThat(b.current().shardsPerNode()).containsExactly(16, 16, 16, 16);
            assertThatThrownBy(() -> open(1, ShardMap.roundRobin(SHARDS + 1, NODES)))
                .hasMessageContaining("has 64 shards, this node was configured with 65");

            // Key 5 is shard 5, cn1's. A router that cached the first map sends it there.
            final Router stale = new Router(RoutingMode.SHARD, b.current());
            final ShardMap moved = a.move(5, 3).await(30, TimeUnit.SECONDS);
            assertThat(moved.epoch()).isEqualTo(2);
            assertThat(moved.ownerOf(5)).isEqualTo(3);
            final ShardMap seen = awaitEpoch(b, 2);
            assertThat(seen.epoch()).as("the other member's cache follows the move").isEqualTo(2);
            assertThat(seen.ownerOf(5)).isEqualTo(3);
            final int routed = stale.route(5, false, new SplittableRandom(1));
            assertThat(routed).isEqualTo(1);
            final WrongOwnerException refused = b.refusal(routed, 5);
            assertThat(refused).isNotNull();
            assertThat(refused.owner()).isEqualTo("cn3");
            assertThat(refused.epoch()).isEqualTo(2);
            stale.learn(b.current());
            final int again = stale.route(5, false, new SplittableRandom(1));
            assertThat(again).isEqualTo(3);
            assertThat(b.refusal(again, 5)).isNull();

            // To its owner: nothing moves, no epoch.
            assertThat(b.move(5, 3).await(30, TimeUnit.SECONDS).epoch()).isEqualTo(2);
            assertThatThrownBy(() -> b.move(SHARDS, 0).await(30, TimeUnit.SECONDS)).hasMessageContaining("shard=64");

            // Both members move shards at once: each move takes an epoch, none is lost.
            final List<Future<ShardMap>> moves = new ArrayList<>();
            for (int i = 0; i < 12; i++) {
                final int shard = 16 + i;
                final int to = (shard + 1) % NODES.size(); // never its owner (shard mod 4)
                moves.add((i % 2 == 0 ? a : b).move(shard, to));
            }
            Future.all(moves).await(60, TimeUnit.SECONDS);
            final ShardMap end = b.refreshNow();
            assertThat(end.epoch()).isEqualTo(2 + 12);
            assertThat(awaitEpoch(a, 14).epoch()).isEqualTo(14);
            for (int s = 0; s < SHARDS; s++) {
                final int expected = s == 5 ? 3 : s >= 16 && s < 28 ? (s + 1) % 4 : s % 4;
                assertThat(end.ownerOf(s)).as("shard " + s).isEqualTo(expected);
                assertThat(a.current().ownerOf(s)).as("shard " + s + " on the other member").isEqualTo(expected);
            }
            // Every shard has exactly one owner: the counts add up to the shards.
            assertThat(java.util.Arrays.stream(end.shardsPerNode()).sum()).isEqualTo(SHARDS);
            final java.util.Set<Long> epochs = new java.util.TreeSet<>();
            for (final Future<ShardMap> f : moves) {
                epochs.add(f.result().epoch());
            }
            assertThat(epochs).as("each concurrent move its own epoch").hasSize(12);
        }
    }
}
