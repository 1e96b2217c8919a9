package io.scythe.routing;

import org.junit.jupiter.api.Test;

import java.util.List;
import java.util.SplittableRandom;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class ShardMapTest {
    private static final List<String> FOUR = List.of("cn0", "cn1", "cn2", "cn3");

    @Test
    void shouldAssignShardsRoundRobinAndPlaceKeysByTheirRemainder() {
        final ShardMap map = ShardMap.roundRobin(10, FOUR);
        assertThat(map.epoch()).isEqualTo(ShardMap.FIRST_EPOCH);
        assertThat(map.shardsPerNode()).containsExactly(3, 3, 2, 2);
        assertThat(map.shardOf(23)).isEqualTo(3);
        assertThat(map.ownerOfKey(23)).isEqualTo(3);
        assertThat(map.ownerOfKey(9)).isEqualTo(1); // shard 9
        assertThat(map.shardOf(-1)).isEqualTo(9); // never negative
        assertThat(ShardMap.roundRobin(ShardMap.DEFAULT_SHARDS, FOUR).ownerOfKey(4096 + 4097)).isEqualTo(1);
    }

    @Test
    void shouldMoveAShardUnderTheNextEpochAndLeaveTheOldMapAsItWas() {
        final ShardMap before = ShardMap.roundRobin(8, FOUR);
        final ShardMap after = before.moved(5, 3);
        assertThat(after.epoch()).isEqualTo(before.epoch() + 1);
        assertThat(after.ownerOf(5)).isEqualTo(3);
        assertThat(before.ownerOf(5)).isEqualTo(1);
        assertThat(after.shardsPerNode()).containsExactly(2, 1, 2, 3);
        // Nothing else moved.
        for (int s = 0; s < 8; s++) {
            if (s != 5) {
                assertThat(after.ownerOf(s)).isEqualTo(before.ownerOf(s));
            }
        }
        assertThat(after.moved(5, 3)).as("to its owner: nothing moves, no new epoch").isSameAs(after);
        assertThat(before.newer(after)).isSameAs(after);
        assertThat(after.newer(before)).isSameAs(after);
        assertThatThrownBy(() -> before.moved(8, 0)).hasMessageContaining("shard=8");
        assertThatThrownBy(() -> before.moved(0, 4)).hasMessageContaining("compute node 4");
    }

    @Test
    void shouldRefuseAKeyOfAShardANodeDoesNotOwnNamingTheOwnerAndEpoch() {
        final ShardMap map = ShardMap.roundRobin(8, FOUR).moved(6, 0);
        assertThat(map.refusal(0, 14)).isNull(); // shard 6, moved to cn0
        final WrongOwnerException refused = map.refusal(2, 14);
        assertThat(refused.shard()).isEqualTo(6);
        assertThat(refused.owner()).isEqualTo("cn0");
        assertThat(refused.epoch()).isEqualTo(2);
        assertThat(refused.getMessage()).isEqualTo("wrong owner, epoch 2: shard 6 is owned by cn0, not by cn2");
    }

    @Test
    void shouldEncodeAndDecodeToTheSameMap() {
        final ShardMap map = ShardMap.roundRobin(4096, FOUR).moved(17, 2).moved(4095, 0);
        final ShardMap back = ShardMap.decode(map.encode());
        assertThat(back.epoch()).isEqualTo(3);
        assertThat(back.nodes()).isEqualTo(FOUR);
        for (int s = 0; s < 4096; s++) {
            assertThat(back.ownerOf(s)).isEqualTo(map.ownerOf(s));
        }
        assertThatThrownBy(() -> ShardMap.decode("{\"epoch\": 1}")).hasMessageStartingWith("not a shard map");
        assertThatThrownBy(() -> ShardMap.roundRobin(4, List.of("a", "a"))).hasMessageContaining("repeat");
        assertThatThrownBy(() -> ShardMap.roundRobin(0, FOUR)).hasMessageContaining("shards=0");
    }

    @Test
    void shouldRouteByShardAtRandomOrHybridAndLearnNewerMapsOnly() {
        final ShardMap map = ShardMap.roundRobin(16, FOUR);
        final SplittableRandom random = new SplittableRandom(3);
        final Router shard = new Router(RoutingMode.SHARD, map);
        final Router hybrid = new Router(RoutingMode.HYBRID, map);
        final Router anywhere = new Router(RoutingMode.RANDOM, map);
        final int[] randomCounts = new int[4];
        final int[] readOnlyCounts = new int[4];
        for (long key = 0; key < 4000; key++) {
            assertThat(shard.route(key, key % 2 == 0, random)).isEqualTo(map.ownerOfKey(key));
            assertThat(hybrid.route(key, false, random)).isEqualTo(map.ownerOfKey(key));
            readOnlyCounts[hybrid.route(4 * key, true, random)]++; // every such key is cn0's
            randomCounts[anywhere.route(4 * key, false, random)]++;
        }
        for (int cn = 0; cn < 4; cn++) {
            assertThat(randomCounts[cn]).as("random spreads: cn" + cn).isBetween(850, 1150);
            assertThat(readOnlyCounts[cn]).as("hybrid read-only anywhere: cn" + cn).isBetween(850, 1150);
        }
        assertThat(shard.byShard(Router.NO_ROUTING_KEY, false)).isFalse();
        assertThat(hybrid.byShard(7, true)).isFalse();
        assertThat(hybrid.byShard(7, false)).isTrue();
        assertThat(anywhere.byShard(7, false)).isFalse();
        // A stale route: the router learns the newer map, never an older one.
        final ShardMap moved = map.moved(7, 0);
        shard.learn(moved);
        assertThat(shard.route(7, false, random)).isZero();
        shard.learn(map);
        assertThat(shard.map()).isSameAs(moved);
        assertThat(shard.refusals()).isEqualTo(2);
        assertThatThrownBy(() -> new Router(RoutingMode.LOCAL, map)).hasMessageContaining("no router");
        assertThat(RoutingMode.named("Hybrid")).isEqualTo(RoutingMode.HYBRID);
        assertThatThrownBy(() -> RoutingMode.named("owner")).hasMessageContaining("local, shard, random or hybrid");
    }

    @Test
    void shouldGiveEveryConcurrentMoveItsOwnEpochInTheLocalDirectory() throws Exception {
        final LocalShardDirectory directory = new LocalShardDirectory(ShardMap.roundRobin(64, FOUR));
        final java.util.Set<Long> epochs = java.util.concurrent.ConcurrentHashMap.newKeySet();
        final List<Thread> threads = new java.util.ArrayList<>();
        for (int t = 0; t < 4; t++) {
            final int first = t * 16;
            final Thread thread = new Thread(() -> {
                for (int s = first; s < first + 16; s++) {
                    epochs.add(directory.moveNow(s, (s + 1) % 4).epoch());
                }
            });
            thread.start();
            threads.add(thread);
        }
        for (final Thread t : threads) {
            t.join();
        }
        assertThat(epochs).hasSize(64);
        assertThat(directory.current().epoch()).isEqualTo(65);
        assertThat(directory.current().shardsPerNode()).containsExactly(16, 16, 16, 16);
        for (int s = 0; s < 64; s++) {
            assertThat(directory.current().ownerOf(s)).isEqualTo((s + 1) % 4);
        }
        assertThat(directory.refusal(0, 3)).as("shard 3 moved to cn0").isNull();
        assertThat(directory.refusal(3, 3).owner()).isEqualTo("cn0");
        assertThat(directory.move(64, 0).cause()).hasMessageContaining("shard=64");
        assertThat(directory.move(0, 1).result().epoch()).as("to its owner: no new epoch").isEqualTo(65);
    }

    @Test
    void shouldSendAgainOnTheLearntMapAfterARefusalAndGiveUpAfterTheLastReroute() {
        final LocalShardDirectory directory = new LocalShardDirectory(ShardMap.roundRobin(8, FOUR));
        final Router router = new Router(RoutingMode.SHARD, directory.current());
        directory.moveNow(5, 2).epoch(); // key 5: cn1's in the router's map, cn2's now
        final List<Integer> sentTo = new java.util.ArrayList<>();
        final Router.Sender<String> node = (cn, byShard) -> {
            sentTo.add(cn);
            final WrongOwnerException refused = byShard ? directory.refusal(cn, 5) : null;
            return refused != null ? io.vertx.core.Future.failedFuture(refused)
                : io.vertx.core.Future.succeededFuture("ran on cn" + cn);
        };
        assertThat(router.send(5, false, new SplittableRandom(1), directory::current, 3, node).result())
            .isEqualTo("ran on cn2");
        assertThat(sentTo).containsExactly(1, 2);
        assertThat(router.refusals()).isEqualTo(1);
        // A node that refuses whatever it is sent: the last refusal is the outcome after the reroutes allowed.
        sentTo.clear();
        final io.vertx.core.Future<String> never = router.send(5, false, new SplittableRandom(1), directory::current,
            2, (cn, byShard) -> {
                sentTo.add(cn);
                return io.vertx.core.Future.failedFuture(new WrongOwnerException(5, "cn2", "cn" + cn, 2));
            });
        assertThat(never.cause()).isInstanceOf(WrongOwnerException.class);
        assertThat(sentTo).hasSize(3);
        assertThat(router.refusals()).isEqualTo(3);
        // Anything else fails as it is, sent once.
        sentTo.clear();
        assertThat(router.send(5, false, new SplittableRandom(1), directory::current, 2, (cn, byShard) -> {
            sentTo.add(cn);
            return io.vertx.core.Future.<String>failedFuture(new IllegalStateException("down"));
        }).cause()).hasMessage("down");
        assertThat(sentTo).hasSize(1);
    }
}
