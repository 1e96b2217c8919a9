package io.scythe.cluster;

import io.vertx.core.json.JsonObject;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;
import org.junit.jupiter.api.io.TempDir;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static io.scythe.cluster.ProcessClusters.eventually;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * A cluster of real processes over the shm fabric (TSO, one MN, two CNs) and a client that joins it: transactions
 * over the event bus, metrics and health over HTTP, CN-to-CN messaging (probes), shard ownership, and a CN paused past
 * its lease that is fenced, cannot write, exits (its peer's calls to it failing as its member leaves), and rejoins
 * under a new epoch. Everything it starts is killed and its shm files removed in
 * {@link #stopCluster()}, even when a test fails.
 */
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class ClusterProcessTest {
    @TempDir
    static Path dir;
    static LocalCluster cluster;
    static ScytheClient client;
    static final HttpClient HTTP = HttpClient.newHttpClient();

    @BeforeAll
    static void startCluster() throws Exception {
        cluster = ProcessClusters.counters("t", 1, 2, 0, dir);
        // cn1 does not stop by itself when it outlived its lease: only the memory nodes' fence keeps it from writing.
        cluster.configure("cn1", "leaseCheck", false);
        // Calls between the CNs wait long (opening a ring on a loaded machine may take seconds): only a member
        // leaving can end them early.
        cluster.configure("cn0", "peerCallTimeoutMs", 60_000);
        cluster.configure("cn1", "peerCallTimeoutMs", 60_000);
        client = ProcessClusters.startAndJoin(cluster, 120_000, 10_000);
    }

    @AfterAll
    static void stopCluster() throws Exception {
        ProcessClusters.stop(client, cluster);
    }

    private static ScytheClient.Outcome call(final String procedure, final long... args) throws Exception {
        return client.call(procedure, args).await(20, TimeUnit.SECONDS);
    }

    private static long committed(final ScytheClient.Outcome outcome) {
        assertThat(outcome).isInstanceOf(ScytheClient.Outcome.Committed.class);
        return ((ScytheClient.Outcome.Committed) outcome).reply().result();
    }

    private static HttpResponse<String> get(final String node, final String path) throws Exception {
        return HTTP.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + cluster.node(node).httpPort()
            + path)).build(), HttpResponse.BodyHandlers.ofString());
    }

    @Test
    @Order(1)
    void shouldRunTransactionsFromAClientAcrossComputeNodesAndCountThem() throws Exception {
        long sum = 0;
        for (int i = 0; i < 20; i++) {
            sum += committed(call("add", i % 8, 1));
        }
        // Keys 0..7 got 20 adds of 1: values 1,2,3 per key in order; the last value of each key sums to 20.
        long total = 0;
        for (long k = 0; k < 8; k++) {
            total += committed(call("get", k));
        }
        assertThat(total).isEqualTo(20);
        assertThat(sum).isEqualTo(8 * 1 + 8 * 2 + 4 * 3);
        // Both CNs serve their own address too.
        assertThat(committed(client.callOn("cn0", "get", 0).await(20, TimeUnit.SECONDS))).isEqualTo(3);
        assertThat(committed(client.callOn("cn1", "get", 0).await(20, TimeUnit.SECONDS))).isEqualTo(3);
        // A bad request is rejected and changes nothing.
        assertThat(call("no-such-procedure", 1)).isInstanceOf(ScytheClient.Outcome.Rejected.class);
        assertThat(call("add", 1)).isInstanceOf(ScytheClient.Outcome.Rejected.class);
    }

    @Test
    @Order(2)
    void shouldExposeMetricsAndHealthOverHttp() throws Exception {
        final HttpResponse<String> health = get("cn0", "/health");
        assertThat(health.statusCode()).isEqualTo(200);
        final JsonObject h = new JsonObject(health.body());
        assertThat(h.getString("status")).isEqualTo("UP");
        assertThat(h.getString("role")).isEqualTo("cn");
        assertThat(h.getString("lease")).isEqualTo("held");
        assertThat(h.getInteger("members")).isEqualTo(5);
        // Transaction ids carry a slot unique to each CN.
        assertThat(h.getLong("slot")).isPositive()
            .isNotEqualTo(new JsonObject(get("cn1", "/health").body()).getLong("slot"));
        long committedOnCns = 0;
        for (final String cn : List.of("cn0", "cn1")) {
            final String metrics = get(cn, "/metrics").body();
            assertThat(metrics).contains("scythe_verbs_total{").contains("scythe_aborts_total{")
                // A histogram (buckets add up across nodes), Vert.x's own metrics and the JVM's on the same registry,
                // and each loop's lateness.
                .contains("scythe_transaction_latency_seconds_bucket{")
                .contains("vertx_eventbus_").contains("jvm_gc_").contains("jvm_memory_used_bytes")
                .contains("jvm_threads_live_threads").contains("process_cpu_usage")
                .contains("scythe_eventloop_delay_seconds_bucket{");
            // One latency sample per commit (counted just before it: a commit in flight may be in one, not yet both).
            final long committed = counter(metrics, "scythe_transactions_total", "outcome=\"committed\"");
            assertThat(counter(metrics, "scythe_transaction_latency_seconds_count", "node=\"" + cn + "\""))
                .as("latency samples on %s", cn).isPositive().isBetween(committed - 2, committed);
            committedOnCns += counter(metrics, "scythe_transactions_total", "outcome=\"committed\"");
        }
        assertThat(committedOnCns).isGreaterThanOrEqualTo(30);
        final String mn = get("mn0", "/metrics").body();
        assertThat(counter(mn, "scythe_lock_requests_total", "result=\"granted\"")).isPositive();
        assertThat(mn).contains("scythe_lock_waiting");
        assertThat(mn).contains("scythe_lock_heat_total").contains("scythe_lock_hot_requests_total");
        long byHeat = 0;
        for (final String line : mn.split("\n")) {
            if (line.startsWith("scythe_lock_heat_requests_total{")) {
                byHeat += (long) Double.parseDouble(line.substring(line.lastIndexOf(' ') + 1));
            }
        }
        // Every lock request lands in one heat bucket.
        assertThat(byHeat).isEqualTo(counter(mn, "scythe_lock_requests_total", "result=\"granted\"")
            + counter(mn, "scythe_lock_requests_total", "result=\"refused\""));
        assertThat(get("mn0", "/nothing").statusCode()).isEqualTo(404);
        dashboardShouldOnlyAskForMetricsTheNodesPublish(get("cn0", "/metrics").body() + mn
            + get("tso", "/metrics").body());
    }

    /**
     * docker/grafana/dashboards/scythe.json queries real series: every metric name in its expressions is in a scrape
     * of this cluster (a renamed metric would leave a panel empty with no error anywhere).
     */
    private static void dashboardShouldOnlyAskForMetricsTheNodesPublish(final String scrapes) throws Exception {
        final JsonObject dashboard = new JsonObject(java.nio.file.Files.readString(
            java.nio.file.Path.of("..", "docker", "grafana", "dashboards", "scythe.json")));
        final java.util.regex.Pattern metric = java.util.regex.Pattern.compile(
            "\\b((?:scythe|jvm|process|vertx)_[a-z0-9_]+)\\b");
        final java.util.Set<String> asked = new java.util.TreeSet<>();
        for (final Object p : dashboard.getJsonArray("panels")) {
            for (final Object t : ((JsonObject) p).getJsonArray("targets")) {
                final java.util.regex.Matcher m = metric.matcher(((JsonObject) t).getString("expr"));
                while (m.find()) {
                    asked.add(m.group(1));
                }
            }
        }
        assertThat(asked).hasSizeGreaterThan(15);
        final java.util.Set<String> published = new java.util.HashSet<>();
        for (final String line : scrapes.split("\n")) {
            if (!line.startsWith("#") && !line.isBlank()) {
                published.add(line.split("[{ ]", 2)[0]);
            }
        }
        // Series Vert.x registers at their first event (a reply that failed): asked for, not yet published.
        asked.removeAll(java.util.Set.of("vertx_eventbus_reply_failures_total"));
        assertThat(published).as("metrics the dashboard asks for").containsAll(asked);
    }

    private static long counter(final String prometheus, final String name, final String tag) {
        long sum = 0;
        for (final String line : prometheus.split("\n")) {
            if (line.startsWith(name + "{") && line.contains(tag)) {
                sum += (long) Double.parseDouble(line.substring(line.lastIndexOf(' ') + 1));
            }
        }
        return sum;
    }

    @Test
    @Order(3)
    void shouldLetEachComputeNodeCallTheOtherAndWriteIntoIt() throws Exception {
        for (final String[] pair : new String[][] {{"cn0", "cn1"}, {"cn1", "cn0"}}) {
            final HttpResponse<String> probe = get(pair[0], "/peers/probe?peer=" + pair[1]);
            assertThat(probe.statusCode()).as(probe.body()).isEqualTo(200);
            final JsonObject found = new JsonObject(probe.body());
            assertThat(found.getBoolean("readBack")).as("a WRITE into the peer, read back by its RPC").isTrue();
            assertThat(found.getString("fabricNode")).isEqualTo(pair[1] + ".e1");
            assertThat(found.getInteger("loop")).as("paired with the caller's loop 0").isZero();
        }
        final JsonObject peers = new JsonObject(get("cn1", "/health").body()).getJsonObject("peers");
        assertThat(peers.getJsonArray("known")).contains("cn0", "cn1");
        assertThat(peers.getLong("served")).isGreaterThanOrEqualTo(2);
        final HttpResponse<String> nobody = get("cn0", "/peers/probe?peer=cn9");
        assertThat(nobody.statusCode()).isEqualTo(503);
        assertThat(nobody.body()).contains("no compute node 'cn9'");
    }

    @Test
    @Order(4)
    void shouldGiveEveryComputeNodesLogsAnOwner() throws Exception {
        final var shards = client.vertx() == null ? null
            : ClusterSetup.hazelcast(client.vertx()).<String, String>getMap(ScytheNode.SHARDS);
        eventually("both CNs have a recovery owner", 60_000, () -> shards.size() == 2);
        assertThat(new JsonObject(shards.get("cn0")).getString("owner")).isEqualTo("cn1");
        assertThat(new JsonObject(shards.get("cn1")).getString("owner")).isEqualTo("cn0");
    }

    @Test
    @Order(5)
    void shouldFenceAPausedComputeNodeSoItCannotWriteAndLetItRejoinUnderANewEpoch() throws Exception {
        final long before = committed(call("get", 5));
        boolean fencedAndExited = false;
        cluster.signal("cn1", "STOP");
        final long stopped = System.nanoTime();
        // In flight to the paused CN (its WRITE lands in the mapped file, its RPCs wait): ends as its member leaves.
        final var probe = HTTP.sendAsync(HttpRequest.newBuilder(URI.create("http://127.0.0.1:"
            + cluster.node("cn0").httpPort() + "/peers/probe?peer=cn1")).build(), HttpResponse.BodyHandlers.ofString());
        try {
            // Sent to the paused CN only: it sits in its socket until the CN wakes, fenced.
            final var queued = client.callOn("cn1", "add", 5, 100);
            // Balanced by the client, round-robin over cn0 and cn1: one of the two sits in the paused CN.
            final var balanced = List.of(client.call("add", 6, 1), client.call("add", 6, 1));
            // Each fences when Hazelcast removes cn1's member (no fabric lease here: leaseRenewMs is 0): 8.0-9.0 s
            // after the STOP (helper cilogs: 4 runs at load 25-30; 12.7-12.8 s beside a busy loop; CI 189's passing
            // run 8.9 s by the nodes' logs), so 20 s is well above the wait. Each health read is bounded (a hung read would otherwise outlast the
            // bound unseen) and its last error, with which node had fenced when, is in the failure.
            final java.util.Map<String, Long> fencedAfterMs = new java.util.TreeMap<>();
            final java.util.Map<String, String> lastError = new java.util.TreeMap<>();
            try {
                eventually("mn0 and the TSO fence cn1.e1", 20_000, () -> {
                    for (final String node : List.of("mn0", "tso")) {
                        try {
                            if (!fencedAfterMs.containsKey(node) && new JsonObject(HTTP.send(HttpRequest.newBuilder(
                                URI.create("http://127.0.0.1:" + cluster.node(node).httpPort() + "/health"))
                                .timeout(java.time.Duration.ofSeconds(5)).build(), HttpResponse.BodyHandlers.ofString())
                                .body()).getJsonArray("fenced").contains("cn1.e1")) {
                                fencedAfterMs.put(node, TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - stopped));
                            }
                        } catch (final Exception e) {
                            lastError.put(node, e.toString());
                        }
                    }
                    return fencedAfterMs.size() == 2;
                });
            } catch (final AssertionError e) {
                throw new AssertionError(e.getMessage() + "; fenced after cn1 stopped (ms): " + fencedAfterMs
                    + "; health errors: " + lastError, e);
            }
            System.out.println("cn1.e1 fenced after it stopped (ms): " + fencedAfterMs);
            final var shards = ClusterSetup.hazelcast(client.vertx()).<String, String>getMap(ScytheNode.SHARDS);
            // The shard map learns of its member's removal (Hazelcast's heartbeat bound, 8 s in tests: the fences
            // above came with it, as this test has no fabric lease) later still: CI 182 at load 30 missed a 10 s bound.
            // A read that fails is tried again: the test's own (lite) member may be split off for a moment too (a run
            // at load 33 failed here at once with NoDataMemberInClusterException, "all nodes are lite members").
            // The nodes' threads at 10 s (the wedge of CI 193/195 starts as cn1's member is removed), shown on failure.
            eventually("cn1's logs go to cn0", 30_000, 10_000, () -> {
                try {
                    final String shard = shards.get("cn1");
                    return shard != null && !new JsonObject(shard).getBoolean("live")
                        && "cn0".equals(new JsonObject(shard).getString("owner"));
                } catch (final com.hazelcast.core.HazelcastException splitOff) {
                    return false;
                }
            });
            // cn0 owns cn1's logs: it recovers cn1.e1 (fences it on the memory node, rolls its log forward,
            // releases its tickets) while cn1 is still paused.
            // Within the duty's bounds (RecoveryDuty): an attempt is warned of every 5 s and handed over at 20 s, and a
            // Hazelcast call of its record that hangs (CI 193: cn0 logged its claim, then nothing for 20 s across a
            // membership split) is given up at 10 s and the recovery run again after a rescan (1 s): 40 s covers one.
            eventually("cn0 recovered cn1.e1", 40_000, 15_000, () -> {
                try {
                    return new JsonObject(get("cn0", "/health").body()).getJsonArray("recoveries").stream()
                        .map(JsonObject.class::cast).anyMatch(r -> "cn1.e1".equals(r.getString("cn"))
                            && r.getBoolean("ok"));
                } catch (final Exception e) {
                    return false;
                }
            });
            // The client learnt that cn1's member left: what it had sent there ended as unknown, without waiting
            // for its timeout (nor for cn1 to wake).
            eventually("the balanced request on cn1 ends", 10_000, () -> balanced.stream().allMatch(f -> f.isComplete()));
            // So did cn0's call to it, long before its 60 s bound.
            eventually("cn0's probe of cn1 ends", 10_000, probe::isDone);
            assertThat(probe.get().statusCode()).isEqualTo(503);
            // Failed as cn1's member left: by the peers' own word once cn0 had a ring to cn1 (the probes of the
            // scenario before), else as its event-bus directory request found cn1's address gone (this scenario run
            // alone: -Dtest=ClusterProcessTest#shouldFence..., 3 of 3 runs here).
            assertThat(probe.get().body()).containsAnyOf("cn1.e1 left: its member left the cluster",
                "No handlers for address " + io.scythe.rrpc.CnPeers.directoryAddress("cn1.e1"));
            assertThat(balanced.stream().map(f -> f.result().toString()))
                .anyMatch(o -> o.contains("Unknown") && o.contains("left the cluster"));
            cluster.signal("cn1", "CONT");
            // Awake, cn1 runs the queued transaction on its old queue pairs: every verb fails, nothing commits.
            final ScytheClient.Outcome late = queued.await(30, TimeUnit.SECONDS);
            assertThat(late).isNotInstanceOf(ScytheClient.Outcome.Committed.class);
            // Merging back into the cluster tells it that it lost its lease: it exits, to rejoin anew.
            assertThat(cluster.node("cn1").process().waitFor(40, TimeUnit.SECONDS)).isTrue();
            assertThat(cluster.node("cn1").process().exitValue()).isEqualTo(ScytheNode.EXIT_LEASE_LOST);
            assertThat(cluster.node("cn1").logText()).contains("lease of epoch 1 lost");
            System.out.println("queued transaction on the paused CN: " + late);
            fencedAndExited = true;
        } finally {
            if (cluster.node("cn1").process().isAlive()) {
                cluster.signal("cn1", "CONT");
            }
            if (!fencedAndExited) {
                restartAfterAFailedScenario("cn1");
            }
        }
        // Nothing the fenced CN did reached the data.
        assertThat(committed(call("get", 5))).isEqualTo(before);
        cluster.restart("cn1", 120_000);
        assertThat(cluster.node("cn1").logText()).contains("epoch 2, fabric cn1.e2");
        assertThat(committed(client.callOn("cn1", "add", 5, 1).await(20, TimeUnit.SECONDS))).isEqualTo(before + 1);
        assertThat(new JsonObject(get("cn1", "/health").body()).getLong("epoch")).isEqualTo(2);
        // cn0 finds cn1's new incarnation by name.
        final JsonObject again = new JsonObject(get("cn0", "/peers/probe?peer=cn1").body());
        assertThat(again.getString("fabricNode")).as(again.encode()).isEqualTo("cn1.e2");
        assertThat(again.getBoolean("readBack")).isTrue();
    }

    /**
     * Brings {@code cn} back when a scenario failed with it paused or fenced (CI 182: the fence scenario failed one
     * bound, woke cn1, which exited fenced, and the three scenarios after it failed for want of a second CN): woken,
     * it exits within its lease once it merges back; then it is restarted under a new epoch. The scenario's own
     * failure is what the run reports.
     */
    private static void restartAfterAFailedScenario(final String cn) {
        try {
            final Process p = cluster.node(cn).process();
            if (p.isAlive() && !p.waitFor(40, TimeUnit.SECONDS)) {
                p.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
            }
            cluster.restart(cn, 120_000);
        } catch (final Exception e) {
            System.out.println("could not bring " + cn + " back after a failed scenario: " + e);
        }
    }

    /**
     * A process without the secret and a client of an earlier run's client.json: each is refused by every node (another
     * Hazelcast cluster name), waits out its lite joins, and only then joins alone as a full member. Both waits are
     * timeouts on purpose (8 and 6 s), so the two run side by side, each on a thread of its own and each checked on its
     * own: both always run to the end, and a failure names which one failed (both, when both did).
     */
    @Test
    @Order(6)
    void shouldKeepAProcessWithoutTheSecretAndAClientOfAnEarlierRunOutOfTheCluster() throws Exception {
        // Two threads of its own (the common pool has one worker on 2 cores: the two would run one after the other).
        final var threads = java.util.concurrent.Executors.newFixedThreadPool(2);
        final AssertionError failed = new AssertionError("a refused process was let in (the causes below)");
        try {
            final var intruder = java.util.concurrent.CompletableFuture.runAsync(failing(
                ClusterProcessTest::keepAProcessWithoutTheSecretOut), threads);
            final var stale = java.util.concurrent.CompletableFuture.runAsync(failing(
                ClusterProcessTest::refuseAStaleClientJson), threads);
            for (final var scenario : List.of(intruder, stale)) {
                try {
                    scenario.get(120, TimeUnit.SECONDS);
                } catch (final java.util.concurrent.ExecutionException e) {
                    failed.addSuppressed(e.getCause() instanceof IllegalStateException r && r.getCause() != null
                        && "checked".equals(r.getMessage()) ? r.getCause() : e.getCause());
                }
            }
        } finally {
            threads.shutdownNow();
        }
        if (failed.getSuppressed().length > 0) {
            throw failed;
        }
        assertThat(committed(call("get", 1))).isEqualTo(committed(call("get", 1)));
        assertThat(Files.exists(cluster.shmDirectory())).isTrue();
    }

    /** A step that may throw, as a {@link Runnable} (its exception wrapped, message "checked"). */
    private interface Step {
        void run() throws Exception;
    }

    private static Runnable failing(final Step step) {
        return () -> {
            try {
                step.run();
            } catch (final RuntimeException | Error e) {
                throw e;
            } catch (final Exception e) {
                throw new IllegalStateException("checked", e);
            }
        };
    }

    private static void keepAProcessWithoutTheSecretOut() throws Exception {
        final NodeConfig mine = cluster.clientConfig();
        final JsonObject other = new JsonObject().put("cluster", mine.cluster()).put("secret", "not the secret at all")
            .put("node", "intruder").put("hazelcastPort", LocalCluster.freePort()).put("members",
                new io.vertx.core.json.JsonArray(mine.members())).put("httpPort", -1).put("readyTimeoutMs", 16_000);
        try (ScytheClient intruder = ScytheClient.join(NodeConfig.of(other).access(), 3_000)) {
            // It tried as a lite member (what a client is), again after each refusal, for the first 8 s of its 16 s
            // deadline (less the 1 s pause before a next try), and only then joined as a full member: a cluster of
            // its own. (A lower bound: a loaded machine only makes it later. 12 s left the full member's join 6 s,
            // which CI run 152 at load 50 did not make: TimeoutException in joinPatiently.)
            assertThat(ClusterAccess.FULL_MEMBER_AFTER_MS.get("intruder")).as("ms of lite joins before a full member")
                .isGreaterThanOrEqualTo(5_000);
            assertThat(ClusterSetup.hazelcast(intruder.vertx()).getCluster().getMembers()).hasSize(1);
            assertThat(ClusterSetup.hazelcast(intruder.vertx()).getCluster().getLocalMember().isLiteMember())
                .isFalse();
            assertThat(intruder.call("add", 1, 1).await(20, TimeUnit.SECONDS))
                .isInstanceOf(ScytheClient.Outcome.Rejected.class);
        }
    }

    /** An earlier run's client.json (another cluster name): it forms a cluster of its own and sees no CN. */
    private static void refuseAStaleClientJson() throws Exception {
        final Path json = Files.createTempFile("stale-client", ".json");
        try {
            Files.writeString(json, cluster.clientConfigJson().put("cluster", "an-earlier-run")
                // Lite joins for 10 s, then 10 s for a full member alone: 6 s for that (12 s in all) missed at load 25
                // (the lead's run, stop 56: TimeoutException in joinPatiently), as the intruder's did in CI 152.
                .put("readyTimeoutMs", 20_000).encode());
            org.assertj.core.api.Assertions.assertThatThrownBy(() -> ScytheClient.join(json, 2_000).close())
                .isInstanceOf(IllegalStateException.class).hasMessageContaining("no compute node is visible")
                .hasMessageContaining(json.toString());
        } finally {
            Files.deleteIfExists(json);
        }
    }

    @Test
    @Order(6)
    void shouldLetSeveralClientsJoinWithOneClientJsonAndRefuseAnUnreadableOne() throws Exception {
        final Path json = Files.createTempFile("client", ".json");
        try {
            Files.writeString(json, cluster.clientConfigJson().encodePrettily());
            try (ScytheClient a = ScytheClient.join(json, 30_000); ScytheClient b = ScytheClient.join(json, 30_000)) {
                assertThat(a.computeNodes()).contains("cn0");
                assertThat(b.computeNodes()).isEqualTo(a.computeNodes());
                final long before = committed(call("get", 4));
                assertThat(a.call("add", 4, 10).await(20, TimeUnit.SECONDS))
                    .isInstanceOf(ScytheClient.Outcome.Committed.class);
                assertThat(b.call("add", 4, 20).await(20, TimeUnit.SECONDS))
                    .isInstanceOf(ScytheClient.Outcome.Committed.class);
                assertThat(committed(call("get", 4))).isEqualTo(before + 30);
            }
            Files.writeString(json, "{ not json");
            org.assertj.core.api.Assertions.assertThatThrownBy(() -> ScytheClient.join(json, 2_000).close())
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("not a readable client.json");
        } finally {
            Files.deleteIfExists(json);
        }
    }

    @Test
    @Order(7)
    void shouldRefuseEventBusPeersWithoutTheClusterCertificate() throws Exception {
        final long before = committed(call("get", 3));
        // It knows the secret (so it joins Hazelcast and sees the coordinators) but not the event-bus key store.
        final JsonObject config = cluster.clientConfigJson().put("node", "nocert");
        config.remove("eventBusKeyStore");
        // Counted, not assumed: whether cn1 is back depends on the fencing scenario before, and each scenario must
        // stand on its own (issue 23). Compared until both views agree: a client that closed just before (the
        // scenario before) may still be in one member list and already gone from the other (counting our members
        // before it joined and expecting one more failed so).
        final var ours = ClusterSetup.hazelcast(client.vertx()).getCluster();
        try (ScytheClient nocert = ScytheClient.join(NodeConfig.of(config).access(), 3_000)) {
            final var theirs = ClusterSetup.hazelcast(nocert.vertx()).getCluster();
            try {
                eventually("nocert joined the cluster: our client sees it, and both see the same members", 60_000,
                    () -> ours.getMembers().contains(theirs.getLocalMember())
                        && theirs.getMembers().contains(ours.getLocalMember())
                        && theirs.getMembers().equals(ours.getMembers()));
            } catch (final AssertionError e) {
                throw new AssertionError(e.getMessage() + "; ours " + ours.getMembers() + ", theirs "
                    + theirs.getMembers(), e);
            }
            final ScytheClient.Outcome outcome = nocert.call("add", 3, 1000).await(20, TimeUnit.SECONDS);
            assertThat(outcome).isNotInstanceOf(ScytheClient.Outcome.Committed.class);
        }
        assertThat(committed(call("get", 3))).isEqualTo(before);
    }

    @Test
    @Order(8)
    void shouldRefuseToRestartAMemoryNodeIntoTheRunningCluster() throws Exception {
        // Its data died with it (TsoFailoverProcessTest restarts the TSO service, which may come back).
        cluster.signal("mn0", "KILL");
        assertThat(cluster.node("mn0").process().waitFor(10, TimeUnit.SECONDS)).isTrue();
        org.assertj.core.api.Assertions.assertThatThrownBy(() -> cluster.restart("mn0", 120_000))
            .hasMessageContaining("cannot be restarted into a running cluster");
    }
}
