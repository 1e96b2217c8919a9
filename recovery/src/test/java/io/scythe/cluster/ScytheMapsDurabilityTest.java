package io.scythe.cluster;

import com.hazelcast.core.Hazelcast;
import com.hazelcast.core.HazelcastInstance;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.UUID;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Issue 18 (rcc20): the cluster's own maps whose entries must outlive their members keep conf/cluster.xml's backups
 * (1 synchronous + 5 asynchronous), not Hazelcast's default single backup, under which an entry whose two replicas were
 * on two members that died together was lost (CI 207 lost an owed entry so, one member dying mid-migration), and the
 * merge policy each needs. Loss is checked by value: three members, entries in every such map, the partitions safe,
 * then two members killed one right after the other, every entry read back on the survivor: a check of the backup
 * count (with one backup about a third of the partitions had both replicas on the two killed members), not of a
 * death during a migration itself (review of rcc20, #6).
 */
class ScytheMapsDurabilityTest {
    private static final String SECRET = "a test secret of the cluster";
    private static final int ENTRIES = 60;

    private final String cluster = "maps" + UUID.randomUUID().toString().substring(0, 8);
    private final List<HazelcastInstance> members = new ArrayList<>();
    private final List<String> addresses = new ArrayList<>();

    @AfterEach
    void stop() {
        members.forEach(m -> m.getLifecycleService().terminate());
    }

    /** The maps whose loss this guards against: the recovery records, the settling's marks, the lease words. */
    private static final List<String> MAPS = List.of(RecoveryDuty.RECOVERED, RecoveryDuty.RECOVERED_BY_PREFIX,
        MemoryNodeFailover.DRAINED, MemoryNodeFailover.SETTLED_COPIES, ScytheNode.LEASES, MemoryNodeFailover.SERVING,
        MemoryNodeFailover.CLOCK_BOUNDS, MemoryNodeFailover.MAP, MemoryNodeFailover.TABLES, MemoryNodeFailover.REJOIN,
        RecoveryDuty.OWED, HazelcastShardMap.MAP);

    @Test
    void shouldKeepEveryEntryOfTheClustersMapsWhenTwoOfThreeMembersDieTogether() throws Exception {
        final HazelcastInstance survivor = member("mn0");
        final HazelcastInstance a = member("cn0");
        final HazelcastInstance b = member("cn1");
        eventually("three members", () -> survivor.getCluster().getMembers().size() == 3);
        final Map<String, Integer> written = new TreeMap<>();
        for (final String map : MAPS) {
            // Written through a member that dies: what a CN writes of itself.
            for (int i = 0; i < ENTRIES; i++) {
                a.<String, String>getMap(map).put(map + ":" + i, "v" + i);
            }
            written.put(map, ENTRIES);
        }
        eventually("the partitions safe (backups in place)", () -> survivor.getPartitionService().isClusterSafe());
        a.getLifecycleService().terminate();
        b.getLifecycleService().terminate();
        eventually("alone", () -> survivor.getCluster().getMembers().size() == 1);
        final Map<String, Integer> kept = new TreeMap<>();
        for (final String map : MAPS) {
            int n = 0;
            for (int i = 0; i < ENTRIES; i++) {
                if (("v" + i).equals(survivor.<String, String>getMap(map).get(map + ":" + i))) {
                    n++;
                }
            }
            kept.put(map, n);
        }
        assertThat(kept).as("entries kept per map").isEqualTo(written);
    }

    @Test
    void shouldMergeEachMapAsItsEntriesNeed() throws Exception {
        final com.hazelcast.config.Config config = ClusterSetup.hazelcastConfig(config("mn0", LocalCluster.freePort()));
        final Map<String, String> policies = new TreeMap<>();
        for (final String map : List.of(RecoveryDuty.RECOVERED, RecoveryDuty.RECOVERED_BY_PREFIX,
            MemoryNodeFailover.DRAINED, MemoryNodeFailover.SETTLED_COPIES, ScytheNode.LEASES,
            MemoryNodeFailover.SERVING, MemoryNodeFailover.CLOCK_BOUNDS, MemoryNodeFailover.MAP,
            HazelcastShardMap.MAP)) {
            final com.hazelcast.config.MapConfig m = config.getMapConfig(map);
            assertThat(m.getBackupCount() + m.getAsyncBackupCount()).as(map).isEqualTo(6);
            policies.put(map, m.getMergePolicyConfig().getPolicy().replaceAll(".*\\.", ""));
        }
        assertThat(policies).containsExactlyInAnyOrderEntriesOf(Map.of(
            RecoveryDuty.RECOVERED, "PutIfAbsentMergePolicy", RecoveryDuty.RECOVERED_BY_PREFIX, "PutIfAbsentMergePolicy",
            MemoryNodeFailover.DRAINED, "PutIfAbsentMergePolicy", MemoryNodeFailover.SETTLED_COPIES,
            "PutIfAbsentMergePolicy", ScytheNode.LEASES, "LatestUpdateMergePolicy",
            MemoryNodeFailover.SERVING, "HigherValueMergePolicy", MemoryNodeFailover.CLOCK_BOUNDS,
            "HigherValueMergePolicy", MemoryNodeFailover.MAP, "HigherEpochMergePolicy", HazelcastShardMap.MAP,
            "HigherEpochMergePolicy"));
        assertThat(config.getMapConfig(MemoryNodeFailover.SERVING).getAsyncBackupCount())
            .as("on every replica once written (review of rcc20, #1)").isZero();
        // The configuration's and the shard map's merge (issue 18): the newer epoch stays, whichever side holds it.
        final HigherEpochMergePolicy newer = new HigherEpochMergePolicy();
        final String epoch1 = MemoryNodeFailover.encode(io.scythe.txn.MemoryNodeConfiguration.initial(3, 2).without(2));
        final String epoch2 = MemoryNodeFailover.encode(MemoryNodeFailover.decode(epoch1).without(1));
        assertThat(newer.merge(merging(epoch2), merging(epoch1))).as("the merging side's newer one").isEqualTo(epoch2);
        assertThat(newer.merge(merging(epoch1), merging(epoch2))).as("the existing side's newer one").isEqualTo(epoch2);
        assertThat(newer.merge(merging(epoch1), null)).as("one side only").isEqualTo(epoch1);
        assertThat(newer.merge(merging("not json"), merging(epoch1))).isEqualTo(epoch1);
        assertThat(newer.merge(merging(epoch1), merging("not json"))).as("no epoch ranks lowest").isEqualTo(epoch1);
        final String moved = io.scythe.routing.ShardMap.roundRobin(8, List.of("cn0", "cn1")).encode();
        final String movedOn = io.scythe.routing.ShardMap.decode(moved).moved(3, 0).encode();
        assertThat(newer.merge(merging(moved), merging(movedOn))).as("the shard map's newer epoch").isEqualTo(movedOn);
        assertThat(newer.merge(merging(movedOn), merging(moved))).isEqualTo(movedOn);
        assertThat(config.getMapConfig(ScytheNode.LEASES).isPerEntryStatsEnabled())
            .as("LatestUpdateMergePolicy needs each entry's update time").isTrue();
    }

    /** A map entry's value as a merge sees it (the raw and the deserialized value alike: a String). */
    private static com.hazelcast.spi.merge.MergingValue<Object> merging(final String value) {
        return new com.hazelcast.spi.merge.MergingValue<>() {
            @Override
            public Object getDeserializedValue() {
                return value;
            }

            @Override
            public Object getRawValue() {
                return value;
            }
        };
    }

    private NodeConfig config(final String name, final int port) {
        return NodeConfig.of(new JsonObject().put("cluster", cluster).put("secret", SECRET).put("node", name)
            .put("hazelcastPort", port).put("members", new JsonArray(List.of(addresses.isEmpty()
                ? "127.0.0.1:" + port : addresses.get(0)))).put("httpPort", -1));
    }

    private HazelcastInstance member(final String name) throws Exception {
        final int port = LocalCluster.freePort();
        final NodeConfig config = config(name, port);
        addresses.add("127.0.0.1:" + port);
        final HazelcastInstance hz = Hazelcast.newHazelcastInstance(ClusterSetup.hazelcastConfig(config));
        members.add(hz);
        return hz;
    }

    private static void eventually(final String what, final java.util.function.BooleanSupplier check)
        throws InterruptedException {
        final long until = System.nanoTime() + 60_000_000_000L;
        while (!check.getAsBoolean()) {
            if (System.nanoTime() > until) {
                throw new AssertionError("not within 60 s: " + what);
            }
            Thread.sleep(50);
        }
    }
}
