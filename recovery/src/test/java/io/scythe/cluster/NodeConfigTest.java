package io.scythe.cluster;

import io.scythe.config.ConfigFiles;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import org.junit.jupiter.api.Test;

import java.nio.file.Path;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** Node configs are checked before anything starts; the shard assignment follows the live CNs. */
class NodeConfigTest {
    private static JsonObject valid() {
        return new JsonObject().put("node", "cn0").put("secret", "sixteen chars at least");
    }

    /** A node's HTTP idle timeout outlasts its own peer-call bound (a /peers/probe waits that long): floor 5 s. */
    @Test
    void shouldKeepTheHttpIdleTimeoutAboveThePeerCallBound() {
        assertThat(NodeMetrics.httpIdleTimeoutSeconds(1_000)).isEqualTo(NodeMetrics.HTTP_IDLE_TIMEOUT_S);
        assertThat(NodeMetrics.httpIdleTimeoutSeconds(4_000)).isEqualTo(NodeMetrics.HTTP_IDLE_TIMEOUT_S);
        assertThat(NodeMetrics.httpIdleTimeoutSeconds(4_001)).isEqualTo(6);
        assertThat(NodeMetrics.httpIdleTimeoutSeconds(60_000)).isEqualTo(61);
        assertThat(NodeMetrics.httpIdleTimeoutSeconds(Long.MAX_VALUE / 2)).isEqualTo(3600);
    }

    @Test
    void shouldReadAValidConfigWithItsDefaults() {
        final NodeConfig c = NodeConfig.of(valid());
        assertThat(c.host()).isEqualTo("127.0.0.1");
        assertThat(c.members()).containsExactly("127.0.0.1:5701");
        assertThat(c.memoryNodes()).containsExactly("mn0", "mn1");
        assertThat(c.partitionOf("mn1")).isEqualTo(1);
        assertThat(c.fabricOptions().provider()).isEqualTo("shm");
        assertThat(c.fabricOptions().secret()).isNotNull();
        assertThat(c.leaseCheck()).isTrue();
    }

    @Test
    void shouldRefuseBadConfigsNamingWhatIsWrong() {
        assertThatThrownBy(() -> NodeConfig.of(valid().put("colour", "red"))).hasMessageContaining("colour");
        assertThatThrownBy(() -> NodeConfig.of(valid().put("secret", "short"))).hasMessageContaining("secret");
        final JsonObject noSecret = valid();
        noSecret.remove("secret");
        assertThatThrownBy(() -> NodeConfig.of(noSecret)).hasMessageContaining("secret");
        assertThatThrownBy(() -> NodeConfig.of(valid().put("members", new JsonArray().add("nohost"))))
            .hasMessageContaining("host:port");
        assertThatThrownBy(() -> NodeConfig.of(valid().put("httpPort", 70000))).hasMessageContaining("httpPort");
        assertThatThrownBy(() -> NodeConfig.of(valid().put("node", "cn0.e2"))).hasMessageContaining(".e");
        assertThatThrownBy(() -> NodeConfig.of(valid().put("node", "bad name"))).hasMessageContaining("node name");
        assertThatThrownBy(() -> NodeConfig.of(valid().put("fabric", new JsonObject().put("provder", "tcp"))))
            .hasMessageContaining("provder");
        assertThatThrownBy(() -> NodeConfig.of(valid().put("loops", 0))).hasMessageContaining("loops");
        assertThatThrownBy(() -> NodeConfig.of(valid().put("eventBusKeyStore", "/no/such.p12")))
            .hasMessageContaining("not found");
        assertThatThrownBy(() -> NodeConfig.of(valid()).partitionOf("mn7")).hasMessageContaining("mn7");
        assertThatThrownBy(() -> NodeWorkload.of(new JsonObject().put("name", "tpcc")))
            .hasMessageContaining("unknown workload 'tpcc'");
        assertThatThrownBy(() -> NodeRole.of("gpu")).hasMessageContaining("mn, cn, tso or proxy");
        assertThatThrownBy(() -> NodeConfig.of(valid().put("protocol", "no-such"))).hasMessageContaining(
            "unknown protocol 'no-such'");
    }

    /**
     * CALVIN runs on cluster nodes with no compute-node fault (issue 18; it was refused here before, naming what they
     * lack for a death, which chaos still names: ScytheCommandTest), in both forms; it still needs the compute nodes
     * named, as every protocol whose compute nodes message each other does.
     */
    @Test
    void shouldAcceptCalvinOnClusterNodesWithItsComputeNodesNamed() {
        final JsonArray cns = new JsonArray().add("cn0").add("cn1");
        for (final String protocol : new String[] {"rcc-calvin", "rcc-calvin:primitive=rpc"}) {
            assertThat(NodeConfig.of(valid().put("protocol", protocol).put("computeNodes", cns)).protocol())
                .as(protocol).isEqualTo(protocol);
        }
        assertThatThrownBy(() -> NodeConfig.of(valid().put("protocol", "rcc-calvin")))
            .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("name the compute nodes");
        assertThat(NodeConfig.of(valid().put("protocol", "ford-occ")).protocol()).isEqualTo("ford-occ");
    }

    /**
     * Every RCC protocol but CALVIN runs on cluster nodes, in any form: WAIT-DIE's and MVCC's tts words carry the
     * node's incarnation (issue 18), so a restarted node's words are not its dead incarnation's (DeadWordsTest).
     */
    @Test
    void shouldAcceptTheRccLockProtocolsOnClusterNodes() {
        for (final String protocol : new String[] {"rcc-waitdie", "rcc-mvcc:primitive=rpc", "rcc-waitdie:hybrid=111011",
            "rcc-nowait", "rcc-occ:primitive=rpc", "rcc-sundial"}) {
            assertThat(NodeConfig.of(valid().put("protocol", protocol)).protocol()).as(protocol).isEqualTo(protocol);
        }
    }

    /**
     * SELCC's four protocols run on cluster nodes with their compute nodes named (issue 21: the memory nodes number a
     * dead node's loops by that list, MemoryNodeContext#loopNumbers), and are refused without.
     */
    @Test
    void shouldAcceptSelccOnClusterNodesOnlyWithItsComputeNodesNamed() {
        final JsonArray cns = new JsonArray().add("cn0").add("cn1");
        for (final String protocol : new String[] {"selcc-2pl", "sel-2pl", "selcc-occ", "selcc-to"}) {
            assertThat(NodeConfig.of(valid().put("protocol", protocol).put("computeNodes", cns)).protocol())
                .as(protocol).isEqualTo(protocol);
            assertThatThrownBy(() -> NodeConfig.of(valid().put("protocol", protocol))).as(protocol)
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("name the compute nodes");
        }
    }

    @Test
    void shouldAcceptLotusOnClusterNodesOnlyWithItsComputeNodesNamed() {
        assertThatThrownBy(() -> NodeConfig.of(valid().put("protocol", "lotus")))
            .isInstanceOf(IllegalArgumentException.class)
            .hasMessage("protocol lotus needs CN-to-CN messaging (LOOP_PAIRS): name the compute nodes, in the same "
                + "order on every node (computeNodes: [cn0, cn1, ...])");
        final NodeConfig lotus = NodeConfig.of(valid().put("protocol", "lotus")
            .put("computeNodes", new JsonArray().add("cn0").add("cn1")));
        assertThat(lotus.computeNodes()).containsExactly("cn0", "cn1");
        assertThatThrownBy(() -> NodeConfig.of(valid().put("computeNodes", new JsonArray().add("cn0").add("cn0"))))
            .hasMessageContaining("names a compute node twice");
        assertThatThrownBy(() -> NodeConfig.of(valid().put("computeNodes", new JsonArray().add("bad name"))))
            .hasMessageContaining("compute node");
    }

    @Test
    void shouldReplicateByDefaultWithTwoBackupsWhereThreeMemoryNodesHoldThemAndSayWhyFewer() {
        final JsonArray three = new JsonArray().add("mn0").add("mn1").add("mn2").add("mn3");
        final NodeConfig four = NodeConfig.of(valid().put("memoryNodes", three));
        assertThat(four.backups()).as("3-way where the cluster has the nodes").isEqualTo(2);
        assertThat(four.replicationLine()).contains("2 backup(s) per partition (3-way) over 4 memory node(s)");
        final NodeConfig two = NodeConfig.of(valid());
        assertThat(two.backups()).as("as many as the other memory nodes").isEqualTo(1);
        assertThat(two.replicationLine()).contains("fewer than the default 2").contains("only 2 memory node(s)");
        final NodeConfig one = NodeConfig.of(valid().put("memoryNodes", new JsonArray().add("mn0")));
        assertThat(one.backups()).isZero();
        assertThat(one.replicationLine()).contains("loses its partition");
        assertThat(NodeConfig.of(valid().put("replicas", 0)).backups()).isZero();
        assertThat(NodeConfig.of(valid().put("memoryNodes", three).put("replicas", 3)).backups()).isEqualTo(3);
        assertThat(NodeConfig.of(valid().put("protocol", "ford-occ")).backups()).isEqualTo(1);
        // A protocol that does not write backups: none by default, and asking for them is refused by name.
        assertThat(NodeConfig.of(valid().put("protocol", "selcc-2pl").put("computeNodes", new JsonArray().add("cn0"))).backups()).isZero();
        assertThat(NodeConfig.of(valid().put("protocol", "selcc-2pl").put("computeNodes", new JsonArray().add("cn0"))).replicationLine())
            .contains("protocol selcc-2pl does not write backups yet");
        assertThatThrownBy(() -> NodeConfig.of(valid().put("protocol", "selcc-2pl").put("computeNodes", new JsonArray().add("cn0")).put("replicas", 1)).backups())
            .hasMessageContaining("replication and MN failover not supported for selcc-2pl");
        // RCC's five write their backups (issue 18: without them no memory node of theirs could fail over).
        assertThat(NodeConfig.of(valid().put("protocol", "rcc-mvcc").put("memoryNodes", three)).backups())
            .isEqualTo(2);
        // Aurogon keeps its own backups on cluster nodes (REPLICATE/APPLY): §4.5's recovery of a dead coordinator
        // decides from them, and only a node holding backups suspects a pending version at all.
        assertThat(NodeConfig.of(valid().put("protocol", "aurogon").put("memoryNodes", three)).backups())
            .isEqualTo(2);
        assertThatThrownBy(() -> NodeConfig.of(valid().put("replicas", 2)))
            .hasMessageContaining("replicas=2").hasMessageContaining("within [0, 1] with 2 memory node(s)");
        assertThatThrownBy(() -> NodeConfig.of(valid().put("replicas", -2))).hasMessageContaining("replicas=-2");
        assertThatThrownBy(() -> NodeConfig.of(valid().put("memoryNodeTimeoutMs", 0)))
            .hasMessageContaining("memoryNodeTimeoutMs=0 must be positive");
        assertThat(NodeConfig.of(valid()).memoryNodeTimeoutMs()).isEqualTo(4_000);
        assertThat(NodeConfig.of(valid()).verbTimeoutMs()).isEqualTo(2_500);
        assertThat(NodeConfig.of(valid().put("verbTimeoutMs", 8_000)).verbTimeoutMs()).isEqualTo(8_000);
        assertThat(NodeConfig.of(valid().put("memoryNodeTimeoutMs", 800)).verbTimeoutMs()).isEqualTo(800);
        assertThatThrownBy(() -> NodeConfig.of(valid().put("verbTimeoutMs", 0)))
            .hasMessageContaining("verbTimeoutMs=0 must be positive");
    }

    @Test
    void shouldRefuseFaultPointsUnlessTheJvmAllowsThemAndCheckEachFault() {
        final JsonArray faults = new JsonArray().add(new JsonObject().put("procedure", "move").put("key", 3)
            .put("at", "afterRedo").put("action", "halt"));
        assertThat(NodeConfig.of(valid()).faults()).isEmpty();
        assertThatThrownBy(() -> NodeConfig.of(valid().put("faults", faults)))
            .hasMessageContaining("test-only").hasMessageContaining("-D" + io.scythe.txn.FaultPoints.ENABLE_PROPERTY);
        System.setProperty(io.scythe.txn.FaultPoints.ENABLE_PROPERTY, "true");
        try {
            assertThat(NodeConfig.of(valid().put("faults", faults)).faults()).hasSize(1);
            assertThatThrownBy(() -> NodeConfig.of(valid().put("faults", new JsonArray().add(new JsonObject()
                .put("procedure", "move").put("at", "sometime").put("action", "halt")))))
                .hasMessageContaining("at must be");
        } finally {
            System.clearProperty(io.scythe.txn.FaultPoints.ENABLE_PROPERTY);
        }
    }

    @Test
    void shouldRefuseAMoveOfAKeyOntoItself() {
        assertThatThrownBy(() -> NodeWorkload.of(new JsonObject().put("name", "counters")).procedures()
            .bind("move", new long[] {4, 4, 1})).hasMessageContaining("two different keys");
    }

    @Test
    void shouldGiveEachCnsLogsToALiveCnAndNoneWhenAllAreGone() {
        final UUID a = UUID.randomUUID();
        final UUID b = UUID.randomUUID();
        final UUID c = UUID.randomUUID();
        final Map<String, JsonObject> cns = Map.of(
            "cn0", new JsonObject().put("member", a.toString()).put("epoch", 1),
            "cn1", new JsonObject().put("member", b.toString()).put("epoch", 4),
            "cn2", new JsonObject().put("member", c.toString()).put("epoch", 2));
        final Map<String, JsonObject> all = ShardOwnership.assign(cns, Set.of(a, b, c));
        assertThat(all.get("cn0").getString("owner")).isEqualTo("cn1");
        assertThat(all.get("cn1").getString("owner")).isEqualTo("cn2");
        assertThat(all.get("cn2").getString("owner")).isEqualTo("cn0");
        final Map<String, JsonObject> oneDead = ShardOwnership.assign(cns, Set.of(a, c));
        assertThat(oneDead.get("cn1").getBoolean("live")).isFalse();
        assertThat(oneDead.get("cn1").getString("owner")).isIn("cn0", "cn2");
        assertThat(oneDead.get("cn0").getString("owner")).isEqualTo("cn2");
        assertThat(oneDead.get("cn2").getString("owner")).isEqualTo("cn0");
        assertThat(oneDead.get("cn0").getLong("ownerEpoch")).isEqualTo(2);
        final Map<String, JsonObject> alone = ShardOwnership.assign(cns, Set.of(b));
        assertThat(alone.values()).allSatisfy(o -> assertThat(o.getString("owner")).isEqualTo("cn1"));
        assertThat(ShardOwnership.assign(cns, Set.of()).get("cn0").getString("owner")).isNull();
    }

    /** The node config of docker/compose.yaml (was TcpClusterProcessTest's), checked as every container reads it. */
    @Test
    void shouldAcceptTheComposeFilesNodeConfig() throws Exception {
        final Vertx vertx = Vertx.vertx();
        try {
            final JsonObject json = ConfigFiles.read(vertx, Path.of("../docker/conf/cluster.yaml"))
                .await(30, TimeUnit.SECONDS);
            // What each container's environment adds; the key store is mounted in the container only.
            json.put("node", "cn2").put("host", "172.28.0.23").put("secret", "from SCYTHE_SECRET, 16+ chars");
            assertThat(json.getString("eventBusKeyStore")).isEqualTo("/opt/scythe/conf/eventbus.p12");
            json.remove("eventBusKeyStore");
            final NodeConfig config = NodeConfig.of(json);
            assertThat(config.fabricOptions().provider()).isEqualTo("tcp");
            assertThat(config.fabricOptions().addresses()).containsKeys("tso", "proxy1", "mn0", "mn1", "cn0", "cn1",
                "cn2");
            assertThat(config.tsoProxies()).containsExactly("proxy1");
            assertThat(config.memoryNodes()).containsExactly("mn0", "mn1");
            assertThat(config.stateDir()).as("the TSO's checkpoint, on a volume").isEqualTo("/var/lib/scythe");
            assertThat(config.members()).hasSize(3);
            // smallbank: registered by the scythe command the image runs (cli's ClusterWorkloads).
            assertThat(config.workload().getString("name")).isEqualTo("smallbank");
        } finally {
            vertx.close().await(10, TimeUnit.SECONDS);
        }
    }

    /**
     * Issue 23 §1: a compute node or TSO proxy whose own Hazelcast address is in {@code members} is refused at start
     * (the default config, 127.0.0.1:5701 joining 127.0.0.1:5701, is a seed's); the TSO and memory nodes are seeds.
     */
    @Test
    void shouldRefuseAComputeNodeOrProxyListedInMembers() {
        final NodeConfig listed = NodeConfig.of(valid().put("hazelcastPort", 5702)
            .put("members", new JsonArray().add("127.0.0.1:5701").add("localhost:5702")));
        assertThatThrownBy(() -> listed.checkSeedRole(NodeRole.CN)).isInstanceOf(IllegalArgumentException.class)
            .hasMessageContaining("compute node cn0").hasMessageContaining("127.0.0.1:5702 is in members")
            .hasMessageContaining("seeds only");
        assertThatThrownBy(() -> listed.checkSeedRole(NodeRole.PROXY)).hasMessageContaining("TSO proxy cn0");
        listed.checkSeedRole(NodeRole.MN);
        listed.checkSeedRole(NodeRole.TSO);
        final NodeConfig notListed = NodeConfig.of(valid().put("hazelcastPort", 5703)
            .put("members", new JsonArray().add("127.0.0.1:5701").add("localhost:5702")));
        notListed.checkSeedRole(NodeRole.CN);
        notListed.checkSeedRole(NodeRole.PROXY);
    }

    /** docker/compose.yaml: every container's role against the one node config; CNs and the proxy are no seeds. */
    @Test
    void shouldListOnlyTheComposeFilesSeedsInMembers() throws Exception {
        final String compose = java.nio.file.Files.readString(Path.of("../docker/compose.yaml"));
        final java.util.regex.Matcher service = java.util.regex.Pattern.compile(
            "\\[\"node\", \"--role\", \"([a-z]+)\".*\\n.*SCYTHE_NODE: ([a-z0-9]+), SCYTHE_HOST: ([0-9.]+)")
            .matcher(compose);
        final Vertx vertx = Vertx.vertx();
        try {
            final JsonObject json = ConfigFiles.read(vertx, Path.of("../docker/conf/cluster.yaml"))
                .await(30, TimeUnit.SECONDS);
            json.remove("eventBusKeyStore");
            final Map<String, Boolean> seeds = new java.util.TreeMap<>();
            while (service.find()) {
                final NodeConfig config = NodeConfig.of(json.copy().put("node", service.group(2))
                    .put("host", service.group(3)).put("secret", "from SCYTHE_SECRET, 16+ chars"));
                config.checkSeedRole(NodeRole.of(service.group(1)));
                seeds.put(service.group(2), config.access().isSeed());
            }
            assertThat(seeds).containsExactlyEntriesOf(new java.util.TreeMap<>(Map.of("tso", true, "mn0", true,
                "mn1", true, "proxy1", false, "cn0", false, "cn1", false, "cn2", false)));
        } finally {
            vertx.close().await(10, TimeUnit.SECONDS);
        }
    }
}
