package io.scythe.sim;

import io.scythe.bench.history.HistoryCollector;
import io.scythe.bench.history.SerializabilityChecker;
import io.scythe.bench.workload.SmallBankSpec;
import io.scythe.fabric.Opcode;
import io.scythe.storage.ObjectLayout;
import io.scythe.txn.lotus.LotusNode;
import io.vertx.core.json.JsonObject;
import org.junit.jupiter.api.Test;

import java.util.Set;

import static org.assertj.core.api.Assertions.assertThat;

/** Lotus's lock-first protocol in the simulator, on several compute nodes whose lock tables hold the locks. */
class LotusSimTest extends SimVertxTest {
    private static SimOptions options(final String protocol, final long seed, final int cns) {
        return new SimOptions().protocol(protocol).computeNodes(cns).loopsPerComputeNode(2).clientsPerComputeNode(4)
            .memoryNodes(2).durationNs(200_000).seed(seed);
    }

    @Test
    void shouldCommitSerializablyOnSeveralComputeNodesAndLeaveNoLockHeld() throws Exception {
        for (final long seed : new long[] {1, 2, 3}) {
            final Simulation sim = new Simulation(options("lotus", seed, 3).faults(new Faults().jitterNs(1_000)),
                new SmallBankSpec(1000, 0.99, "scythe"));
            final HistoryCollector history = new HistoryCollector(ObjectLayout.LOADED_VERSION, "lotus seed " + seed);
            sim.recorder(history);
            final JsonObject run = sim.run(vertx).run().toJson();
            assertThat(run.getJsonObject("sim").getJsonArray("violations")).as("seed " + seed).isEmpty();
            assertThat(run.getJsonObject("conserved").getBoolean("ok")).as("money, seed " + seed).isTrue();
            assertThat(run.getLong("committed")).as("seed " + seed).isGreaterThan(20);
            final SerializabilityChecker.Result verdict = SerializabilityChecker.check(history.history(), 10);
            assertThat(verdict.serializable()).as(String.join("\n", verdict.lines())).isTrue();
            long sent = 0;
            long served = 0;
            for (int cn = 0; cn < 3; cn++) {
                final LotusNode node = LotusNode.of(sim.peersOf(cn));
                assertThat(node.locks().held()).as("locks left in cn" + cn + ", seed " + seed).isEmpty();
                assertThat(node.locks().checkInvariant()).isNull();
                final long[] counts = node.counts();
                assertThat(counts[0]).as("messages cannot carry fewer than one key").isLessThanOrEqualTo(counts[1]);
                assertThat(counts[2]).as("local locks on cn" + cn).isPositive();
                sent += counts[0];
                served += counts[3];
            }
            assertThat(sent).as("lock messages between compute nodes").isPositive();
            assertThat(served).as("acquires and releases served").isGreaterThanOrEqualTo(sent);
        }
    }

    @Test
    void shouldRunTheSameWayEveryTime() throws Exception {
        final SimResult a = new Simulation(options("lotus", 9, 2), new SmallBankSpec(500, 0.9, "scythe")).run(vertx);
        final SimResult b = new Simulation(options("lotus", 9, 2), new SmallBankSpec(500, 0.9, "scythe")).run(vertx);
        assertThat(a.historyHash()).isEqualTo(b.historyHash());
        assertThat(a.run().toJson().getJsonObject("latency_us").encode())
            .isEqualTo(b.run().toJson().getJsonObject("latency_us").encode());
        // Lotus's periodic tasks (the membership lease, the resharding round) wait with Timers#afterIdle: loop 0 of
        // each node sleeps until they are due instead of polling every poll interval. With after() this run took
        // 1,003,480 events (its 50 ms drain spent polling: the explorer's seeds took seconds each); now 3,617.
        assertThat(a.run().toJson().getJsonObject("sim").getLong("events")).isLessThan(50_000);
    }

    /**
     * The keys a transaction asks for together go in one message to the compute node that owns them: cn0's client
     * locks three of cn1's keys (odd accounts, two tables) and cn1's three of cn0's, in one message each time.
     */
    @Test
    void shouldSendOneLockMessagePerComputeNodePerLockPhase() throws Exception {
        final SimOptions o = options("lotus", 5, 2).clientsPerComputeNode(1);
        final Simulation sim = new Simulation(o, new SmallBankSpec(100, 0.5, "scythe"));
        final java.util.List<String> wrong = new java.util.ArrayList<>();
        final long[] transactions = new long[1];
        sim.operation((runtime, random) -> {
            final LotusNode node = LotusNode.of(sim.peersHere());
            final long base = node.index() == 0 ? 1 : 2; // the other node's accounts
            final long[] before = node.counts();
            final io.scythe.txn.Txn txn = io.scythe.txn.lotus.LotusModule.LOTUS.begin(runtime, false);
            final long start = runtime.timers().nowNs();
            return io.vertx.core.Future.all(txn.readForUpdate("checking", base), txn.readForUpdate("checking",
                    base + 2), txn.read("savings", base + 4))
                .compose(v -> {
                    final long[] after = node.counts();
                    if (after[0] - before[0] != 1 || after[1] - before[1] != 3 || after[2] != before[2]) {
                        wrong.add("cn" + node.index() + ": " + (after[0] - before[0]) + " messages, "
                            + (after[1] - before[1]) + " keys, " + (after[2] - before[2]) + " local");
                    }
                    final org.agrona.concurrent.UnsafeBuffer b = v.resultAt(0);
                    txn.write("checking", base, b, 0, b.capacity());
                    return txn.commit();
                }).map(ts -> {
                    transactions[0]++;
                    return runtime.timers().nowNs() - start;
                });
        });
        final JsonObject run = sim.run(vertx).run().toJson();
        assertThat(run.getJsonObject("sim").getJsonArray("violations")).isEmpty();
        assertThat(wrong).isEmpty();
        assertThat(transactions[0]).isGreaterThan(10);
        for (int cn = 0; cn < 2; cn++) {
            assertThat(LotusNode.of(sim.peersOf(cn)).locks().held()).isEmpty();
        }
    }

    /**
     * No RDMA CAS or FAA reaches a memory node: every one-sided atomic from a compute node to a memory node is made to
     * fail, and none is issued (FORD, which locks with CAS, shows the probe sees them).
     */
    @Test
    void shouldSendNoAtomicVerbToMemoryNodes() throws Exception {
        final Set<Opcode> atomics = Set.of(Opcode.COMPARE_AND_SWAP, Opcode.FETCH_AND_ADD);
        final JsonObject lotus = new Simulation(options("lotus", 4, 2).faults(new Faults().verbFail(1.0, atomics)),
            new SmallBankSpec(1000, 0.5, "scythe")).run(vertx).run().toJson();
        assertThat(lotus.getJsonObject("sim").getJsonObject("verb_faults").getLong("injected")).isZero();
        assertThat(lotus.getJsonObject("sim").getJsonArray("violations")).isEmpty();
        assertThat(lotus.getLong("committed")).isGreaterThan(50);
        final JsonObject ford = new Simulation(options("ford-occ", 4, 2).faults(new Faults().verbFail(1.0, atomics)),
            new SmallBankSpec(1000, 0.5, "scythe")).run(vertx).run().toJson();
        assertThat(ford.getJsonObject("sim").getJsonObject("verb_faults").getLong("injected")).isPositive();
    }

    /**
     * Inserts and deletes (issue 19): TPC-C (NewOrder inserts orders, new-order and order-line rows; Delivery deletes
     * new-order rows), the phantom pattern and insert/delete churn, on one and on three compute nodes: every seed ends
     * with TPC-C's consistency conditions or the money kept, no lock left, and a serializable history.
     */
    @org.junit.jupiter.params.ParameterizedTest
    @org.junit.jupiter.params.provider.CsvSource({"TPCC,1", "TPCC,3", "PHANTOM,1", "PHANTOM,3", "CHURN,1", "CHURN,3",
        "SMALLBANK,3"})
    void shouldRunEveryWorkloadWithInsertsAndDeletesOverManySeeds(final Explorer.Workload workload, final int cns)
        throws Exception {
        // TPC-C two seeds fewer: the suite's time for lotus-si's TPC-C crash case below.
        final int seeds = workload == Explorer.Workload.TPCC ? Math.max(1, SWEEP_SEEDS - 2) : SWEEP_SEEDS;
        final java.io.ByteArrayOutputStream printed = new java.io.ByteArrayOutputStream();
        final java.util.List<Explorer.Failure> failures = Explorer.explore(vertx, workload, java.util.List.of("lotus"),
            1, seeds, (p, seed) -> Explorer.options(p, seed).computeNodes(cns).clientsPerComputeNode(6 / cns + 2),
            new java.io.PrintStream(printed, true));
        System.out.print(printed);
        assertThat(failures).as(printed.toString()).isEmpty();
        final java.util.regex.Matcher m = java.util.regex.Pattern.compile(
            "(\\d+) transactions committed, (\\d+) checked for serializability").matcher(printed.toString());
        assertThat(m.find()).as(printed.toString()).isTrue();
        // Churn (one counter, every client on it, no waiting) commits a few a run; the others far more. TPC-C on
        // one warehouse commits one or two a run since the CVT store: its INVISIBLE writes hold the district's lock
        // one round trip longer before T_commit (48 and 52 in 30 seeds when measured; ford-occ: 3 in seed 1).
        // Churn's count is of its histories' transactions (every commit of the run, warm-up included): its measured
        // window committed 1 in 10 seeds on three nodes with the INSERT RPC and 0 one-sided (helper lotus20), while
        // its histories held 87 and 97 commits, and a long run (sim --workload churn --keys 1 --cns 3 --clients 4)
        // 70,000 and 66,500 txn/s at abort rates 0.830 and 0.828: the window's count is noise, not a slower path.
        if (workload == Explorer.Workload.CHURN) {
            assertThat(Long.parseLong(m.group(2))).as(printed.toString()).isGreaterThan(seeds);
            return;
        }
        assertThat(Long.parseLong(m.group(1))).as(printed.toString())
            .isGreaterThan(workload == Explorer.Workload.TPCC ? seeds : SWEEP_SEEDS * 2L);
    }

    /**
     * lotus-si on the phantom workload: its write-skew condition (no group flagged and marked, and the conserved count
     * of such groups) is the only one not judged; every history is checked and none has a lost update, a G0 or G1c
     * cycle or an impossible read (snapshot isolation forbids them), nor does any other invariant break.
     */
    @Test
    void shouldJudgeSnapshotIsolationOnPhantomButForItsWriteSkewCondition() throws Exception {
        final java.io.ByteArrayOutputStream printed = new java.io.ByteArrayOutputStream();
        final java.util.List<Explorer.Failure> failures = Explorer.explore(vertx, Explorer.Workload.PHANTOM,
            java.util.List.of("lotus-si"), 1, 2, Explorer::options,
            new java.io.PrintStream(printed, true));
        final String text = printed.toString();
        assertThat(failures).as(text).isEmpty();
        final java.util.regex.Matcher m = java.util.regex.Pattern.compile(
            "lotus-si   phantom   2 seeds, 0 failed, (\\d+) transactions committed, (\\d+) checked").matcher(text);
        assertThat(m.find()).as(text).isTrue();
        assertThat(Long.parseLong(m.group(1))).as(text).isGreaterThan(30);
        assertThat(Long.parseLong(m.group(2))).as(text).isGreaterThanOrEqualTo(Long.parseLong(m.group(1)));
        assertThat(text).doesNotContain("G0").doesNotContain("G1").doesNotContain("impossible")
            .contains("not judged (write skew, which snapshot isolation allows), seeds broken in: "
                + "{flagged_and_marked_groups: ");
        final java.util.regex.Matcher skipped = java.util.regex.Pattern.compile("seeds broken in: \\{(.*)}")
            .matcher(text);
        assertThat(skipped.find()).as(text).isTrue();
        assertThat(skipped.group(1).replaceAll(": \\d+", "").split(", ")).as(text)
            .containsExactly("flagged_and_marked_groups", "no group flagged and marked");
    }

    /**
     * Seeds per workload in the suite (its budget, issue 23); the long sweep is the CLI's, e.g. {@code scythe sim
     * --explore 10000 --workload all --protocols lotus --cns 3 --clients 4}.
     */
    private static final int SWEEP_SEEDS = Integer.getInteger("scythe.sim.lotusSeeds", 10);

    /** Lotus's locks left held at the end of a run on any compute node (checked by each run's own end). */
    static void assertNoLockLeft(final Simulation sim, final int cns) {
        for (int cn = 0; cn < cns; cn++) {
            final LotusNode node = LotusNode.of(sim.peersOf(cn));
            assertThat(node.locks().held()).as("locks left in cn" + cn).isEmpty();
            assertThat(node.locks().checkInvariant()).isNull();
        }
    }

    /** One SmallBank run of lotus on 3 compute nodes with {@code routing}, checked; returns it with its simulation. */
    private static JsonObject checkedRun(final Simulation sim, final String what) throws Exception {
        final HistoryCollector history = new HistoryCollector(ObjectLayout.LOADED_VERSION, what);
        sim.recorder(history);
        final JsonObject run = sim.run(vertx).run().toJson();
        assertThat(run.getJsonObject("sim").getJsonArray("violations")).as(what).isEmpty();
        assertThat(run.getJsonObject("conserved").getBoolean("ok")).as(what).isTrue();
        final SerializabilityChecker.Result verdict = SerializabilityChecker.check(history.history(), 10);
        assertThat(verdict.serializable()).as(String.join("\n", verdict.lines())).isTrue();
        assertNoLockLeft(sim, 3);
        return run;
    }

    /**
     * Hybrid routing (lotus.md §2.2, level 1): read-write transactions run on the owner of their first record's shard,
     * so most of their locks are taken in that node's own table; routed locally (each client's own node), two thirds
     * of the locks travel to other nodes.
     */
    @Test
    void shouldTakeMostLocksLocallyWhenReadWriteTransactionsGoToTheirShardsOwner() throws Exception {
        final long[] localShare = new long[2];
        int i = 0;
        for (final io.scythe.routing.RoutingMode routing : new io.scythe.routing.RoutingMode[] {
            io.scythe.routing.RoutingMode.LOCAL, io.scythe.routing.RoutingMode.HYBRID}) {
            final Simulation sim = new Simulation(options("lotus", 7, 3).routing(routing), new SmallBankSpec(3000, 0.5,
                "scythe"));
            checkedRun(sim, routing.label());
            long local = 0;
            long remote = 0;
            for (int cn = 0; cn < 3; cn++) {
                final long[] c = LotusNode.of(sim.peersOf(cn)).counts();
                local += c[2];
                remote += c[1];
            }
            localShare[i++] = 100 * local / Math.max(1, local + remote);
        }
        assertThat(localShare[0]).as("percent of locks taken locally, routed locally").isLessThan(50);
        assertThat(localShare[1]).as("percent of locks taken locally, routed hybrid").isGreaterThan(70);
    }

    /**
     * Resharding (lotus.md §2.2, level 2) under a skewed load: the overload rule at a short interval (every 20 us,
     * any node above the mean for one interval) hands shards between nodes while transactions run. Each handoff is
     * recorded with its pause; no shard ever has two servers (the run's end checks the record of every change); the
     * routing layer's map moved once per handoff and the routers followed it; money, history and locks as always.
     */
    @Test
    void shouldHandHotShardsToTheFastestNodeWithOneServerPerShardAtEveryMoment() throws Exception {
        final Simulation sim = new Simulation(options("lotus", 11, 3).routing(io.scythe.routing.RoutingMode.HYBRID)
            .durationNs(400_000), new SmallBankSpec(1000, 0.99, "scythe"));
        sim.computeNodeShared().put(io.scythe.txn.lotus.LotusCluster.OPTIONS, new io.scythe.txn.lotus.LotusOptions(
            20_000, 1.01, 1, 5_000, 1_000, 1_000_000));
        final JsonObject run = checkedRun(sim, "resharding");
        final io.vertx.core.json.JsonArray handoffs = run.getJsonObject("lotus").getJsonArray("handoffs");
        System.out.println("lotus handoffs: " + handoffs.encode());
        assertThat(handoffs.size()).isPositive();
        for (int i = 0; i < handoffs.size(); i++) {
            final JsonObject h = handoffs.getJsonObject(i);
            assertThat(h.getLong("pause_ns")).isPositive();
            assertThat(h.getInteger("from")).isNotEqualTo(h.getInteger("to"));
        }
        assertThat(run.getJsonObject("lotus").getLong("map_epoch")).isEqualTo(1L + handoffs.size());
        assertThat(run.getJsonObject("sim").getJsonObject("routing").getLong("shard_map_epoch"))
            .as("the routers' map").isEqualTo(1L + handoffs.size());
        final io.scythe.txn.lotus.LotusCluster cluster = io.scythe.txn.lotus.LotusCluster.of(sim.peersOf(0));
        for (int shard = 0; shard < io.scythe.txn.lotus.LotusKey.SHARDS; shard++) {
            int servers = 0;
            for (int cn = 0; cn < 3; cn++) {
                servers += LotusNode.of(sim.peersOf(cn)).serves(shard) ? 1 : 0;
            }
            assertThat(servers).as("servers of shard " + shard).isEqualTo(1);
        }
        assertThat(cluster.violations()).isEmpty();
    }

    /**
     * Lock-rebuild-free recovery (lotus.md §2.7) on leases: cn1 of 3 crashes mid-run while its transactions hold
     * locks in the others' tables and theirs hold locks in its table. The survivors see its lease run out, fail their
     * calls to it, abort their attempts that asked it (those past T_commit finish), finish its logged commits from the
     * redo records (its incomplete ones are dropped), free the locks it held from their lock state, and serve its
     * shards again (handed to the survivors; this run does not restart the node: LotusRestartSimTest does). Money is conserved, nothing is left
     * locked on the survivors, every shard has one live server, and the survivors commit after the crash.
     */
    @Test
    void shouldRecoverFromACrashedComputeNodeWithoutRebuildingLocks() throws Exception {
        // (seed 3 dropped for the explorer's crash case below, seed 2 for LotusCvtSimTest's home-word case: seed 1
        // is the one whose money the checks missed before they heard Lotus's own recovery)
        for (final long seed : new long[] {1}) {
            final Simulation sim = new Simulation(options("lotus", seed, 3).redoLog(true).durationNs(500_000)
                .faults(new Faults().jitterNs(1_000).crash(1, 100_000)), new SmallBankSpec(1000, 0.9, "scythe"));
            sim.computeNodeShared().put(io.scythe.txn.lotus.LotusCluster.OPTIONS,
                io.scythe.txn.lotus.LotusOptions.PAPER.lease(100_000));
            final JsonObject run = sim.run(vertx).run().toJson();
            final String what = "seed " + seed + ": " + run.getJsonObject("sim").encode();
            final io.scythe.txn.lotus.LotusCluster cluster = io.scythe.txn.lotus.LotusCluster.of(sim.peersOf(0));
            cluster.recoveries().forEach(x -> System.out.println("lotus recovery of cn" + x.cn() + " seed " + seed
                + ": detected at " + x.detectedNs() + ", logs done " + x.logsDoneNs() + ", served again "
                + x.servedAgainNs() + ", failure " + x.failure()));
            assertThat(cluster.recoveries()).as(what).hasSize(1);
            final io.scythe.txn.lotus.LotusCluster.Recovery r = cluster.recoveries().get(0);
            assertThat(r.failure()).as(what).isNull();
            System.out.println("lotus recovery seed " + seed + ": detected +" + (r.detectedNs() - 0) + " ns, logs "
                + (r.logsDoneNs() - r.detectedNs()) + " ns (" + r.committedRecords() + " records finished, "
                + r.incompleteRecords() + " dropped), served again after " + (r.servedAgainNs() - r.detectedNs())
                + " ns, " + r.locksReleased() + " locks freed, " + r.survivorsAborted() + " survivors' attempts aborted");
            assertThat(r.cn()).isEqualTo(1);
            assertThat(r.logsDoneNs()).as(what).isGreaterThanOrEqualTo(r.detectedNs());
            assertThat(r.servedAgainNs()).as(what).isGreaterThanOrEqualTo(r.logsDoneNs());
            // The crashed node's commits that recovery finished were never reported to their clients: Lotus's own
            // recovery tells the run's checks which they were (run.recoveryObserver, run.moduleRecovered; no
            // --crash-recover here), so the money is their results beyond the reported deltas, exactly. Before, the
            // checks were not told and money was short by them (seed 1: 50, its recovery's one unheard commit).
            final JsonObject conserved = run.getJsonObject("conserved");
            final long unreported = conserved.getLong("final") - conserved.getLong("initial")
                - conserved.getLong("committed_delta");
            assertThat(conserved.getBoolean("ok")).as(what).isTrue();
            assertThat(conserved.getLong("recovered_delta")).as(what).isEqualTo(unreported);
            assertThat(run.getJsonObject("sim").getJsonObject("crash").getJsonObject("recovery")
                .getString("by")).as(what).isEqualTo("the protocol's own recovery");
            assertThat(run.getJsonObject("sim").getJsonArray("violations")).as(what).isEmpty();
            for (final int cn : new int[] {0, 2}) {
                final LotusNode node = LotusNode.of(sim.peersOf(cn));
                assertThat(node.locks().held()).as("locks left in cn" + cn + ", " + what).isEmpty();
            }
            for (int shard = 0; shard < io.scythe.txn.lotus.LotusKey.SHARDS; shard++) {
                final int s = shard;
                assertThat(LotusNode.of(sim.peersOf(0)).serves(s) ^ LotusNode.of(sim.peersOf(2)).serves(s))
                    .as("shard " + s + " has one live server").isTrue();
            }
            assertThat(cluster.violations()).isEmpty();
            assertThat(run.getLong("committed")).as(what).isGreaterThan(20);
        }
    }

    /**
     * Three of four nodes dead at once (issue 19 A, Fig. 15's three): a dead node's shards are served again only once
     * every dead node's logs are done (before, each waited only for its own: a complete redo record of cn2 on a key of
     * cn0's shards was then unprotected once cn0's shards were served). Seed 2 detects cn1 a quarter lease after cn0
     * and cn2, and cn0's own logs are done first: without {@code LotusNode#serveAgain}'s wait for every dead node's
     * logs, cn0's shards are served 5 us before cn2's logs and 17 us before cn1's are done (seen failing so; the case
     * of two of three nodes, seed 1, passed without that wait).
     */
    @Test
    void shouldServeADeadNodesShardsOnlyOnceEveryDeadNodesLogsAreDone() throws Exception {
        final Simulation sim = new Simulation(options("lotus", 2, 4).redoLog(true).durationNs(300_000)
            .faults(new Faults().jitterNs(1_000).crash(new int[] {0, 1, 2}, 100_000)), new SmallBankSpec(1000, 0.9,
            "scythe"));
        sim.computeNodeShared().put(io.scythe.txn.lotus.LotusCluster.OPTIONS,
            io.scythe.txn.lotus.LotusOptions.PAPER.lease(100_000));
        final JsonObject run = sim.run(vertx).run().toJson();
        final String what = run.getJsonObject("sim").encode();
        final java.util.List<io.scythe.txn.lotus.LotusCluster.Recovery> all =
            io.scythe.txn.lotus.LotusCluster.of(sim.peersOf(3)).recoveries();
        assertThat(all).as(what).hasSize(3);
        final long lastLogs = all.stream().mapToLong(io.scythe.txn.lotus.LotusCluster.Recovery::logsDoneNs).max()
            .orElseThrow();
        for (final io.scythe.txn.lotus.LotusCluster.Recovery r : all) {
            assertThat(r.failure()).as(what).isNull();
            assertThat(r.servedAgainNs()).as("cn" + r.cn() + "'s shards served again once every dead node's logs are "
                + "done, " + what).isGreaterThanOrEqualTo(lastLogs);
        }
        assertThat(run.getJsonObject("conserved").getBoolean("ok")).as(what).isTrue();
    }

    /**
     * Lotus's leases beside the host's own recovery ({@code --crash-recover}, stop 42: the Fig. 15 run's first bug):
     * the host's recoverer holds the memory nodes' claim on each dead node, so the lease leader of each does not run a
     * second log recovery; it waits while the host's says {@code recovering} ({@code run.recoveryState}), takes
     * {@code recovered} as its logs done, and only then are the dead node's locks freed and its shards served again.
     * Before, the leader was refused the claim and gave the recovery up as failed: the dead nodes' locks stayed held in
     * the survivors' tables and almost every later attempt aborted on them.
     */
    @Test
    void shouldWaitForTheHostsRecoveryOfEachDeadNodeBeforeFreeingItsLocks() throws Exception {
        final Simulation sim = new Simulation(options("lotus", 1, 3).redoLog(true).durationNs(300_000)
            .faults(new Faults().jitterNs(1_000).crash(new int[] {0, 1}, 100_000).recover(true, 100_000)),
            new SmallBankSpec(1000, 0.9, "scythe"));
        sim.computeNodeShared().put(io.scythe.txn.lotus.LotusCluster.OPTIONS,
            io.scythe.txn.lotus.LotusOptions.PAPER.lease(100_000));
        final JsonObject run = sim.run(vertx).run().toJson();
        final String what = run.getJsonObject("sim").encode();
        System.out.println("lotus beside the host's recovery: " + what);
        final JsonObject host = run.getJsonObject("sim").getJsonObject("crash").getJsonObject("recovery");
        final java.util.Map<Integer, Long> hostDoneNs = new java.util.HashMap<>();
        for (final Object o : host.getJsonArray("nodes")) {
            final JsonObject n = (JsonObject) o;
            hostDoneNs.put(n.getInteger("cn"), sim.startNs() + 100_000 + n.getLong("recovered_after_ns")); // absolute, as logsDoneNs
        }
        final java.util.List<io.scythe.txn.lotus.LotusCluster.Recovery> all =
            io.scythe.txn.lotus.LotusCluster.of(sim.peersOf(2)).recoveries();
        assertThat(all).as(what).hasSize(2);
        for (final io.scythe.txn.lotus.LotusCluster.Recovery r : all) {
            assertThat(r.failure()).as(what).isNull();
            assertThat(r.byHost()).as("cn" + r.cn() + "'s logs settled by the host's recovery, " + what).isTrue();
            assertThat(r.logsDoneNs()).as("cn" + r.cn() + ": its leader waited for the host's recovery, " + what)
                .isGreaterThanOrEqualTo(hostDoneNs.get(r.cn()));
        }
        assertThat(LotusNode.of(sim.peersOf(2)).locks().held()).as("locks left in cn2, " + what).isEmpty();
        for (int shard = 0; shard < io.scythe.txn.lotus.LotusKey.SHARDS; shard++) {
            assertThat(LotusNode.of(sim.peersOf(2)).serves(shard)).as("shard " + shard + " served by cn2").isTrue();
        }
        assertThat(run.getJsonObject("conserved").getBoolean("ok")).as(what).isTrue();
        assertThat(run.getJsonObject("sim").getJsonArray("violations")).as(what).isEmpty();
    }

    /**
     * The explorer's crash setting (issue 23 §4: 2 CNs, SmallBank 50 accounts θ 0.99, 150 us, the paper's 1 ms lease,
     * the shared recovery too): the crash came before the end but the lease ran out only after it, in the drain,
     * where the survivors' membership task had stopped (no recovery was under way at the end), so their attempts that
     * asked the dead node waited on it for ever ("not quiescent after drain") and its locks stayed held in their
     * tables. Seed 1 crashes cn1 at 104.5 us; it failed so before the fix.
     */
    @Test
    void shouldJudgeTheLeaseOfANodeCrashedBeforeTheEndInTheDrain() throws Exception {
        final SimOptions o = Explorer.crash(Explorer.crashOptions("lotus", 1)).validate();
        final Explorer.Outcome outcome = Explorer.check(vertx, Explorer.Workload.SMALLBANK, o);
        assertThat(outcome.failure()).as(String.valueOf(outcome.failure())).isNull();
        assertThat(outcome.run().getLong("locks_left_held")).isZero();
        assertThat(outcome.committed()).isGreaterThan(5);
    }

    /**
     * lotus-si's inserts across a compute node's crash (the crash explorer: 3 of 400 seeds failed, lotus passed them).
     * TPC-C seed 52: a crash cut a NewOrder's write-back batch after an inserted order line's home (version at the
     * record's token) and before its CAS word's clear, so recovery took the write-back for landed, RELEASE_NODE then
     * abandoned the committed insert and reclamation freed it ("sum(O_OL_CNT) = 309 but 308 ORDER-LINE rows"); the
     * word is now cleared before the home. Phantom seed 65: a Claim's mark insert, abandoned by recovery (no redo
     * record), was made visible at the ABANDON's version by the next locked read settling its INVISIBLE cell (a G1a);
     * an insert's cell is now made visible only over a live, unlocked home; cleared instead, it left a CVT with no
     * valid cell, which every read then refused (1.37M events, abort rate 0.998) until the home answers it (absent):
     * 51K events. Both seeds failed before the fix. Since the redo record goes with the INVISIBLE writes, before
     * T_commit (lotuslog), seed 65's crash comes after that Claim's write-back landed: recovery finds it committed
     * (already done, 1 recovered) and abandons no insert, so this row no longer reaches the settling it was for.
     * Both seeds are of the INSERT RPC's path (its CAS word, its ABANDON): their pins run with it (helper lotus20,
     * one-sided inserts on by default); one-sided, the same seeds reach other crash points (0 committed by recovery in
     * both; phantom 65's record already done) and are checked for a clean outcome only ({@code recovered} -1).
     */
    @org.junit.jupiter.params.ParameterizedTest
    @org.junit.jupiter.params.provider.CsvSource({"TPCC,52,2,0,false", "PHANTOM,65,1,0,false", "TPCC,52,-1,0,true",
        "PHANTOM,65,-1,0,true"})
    void shouldKeepInsertsAtomicAcrossACrashUnderSnapshotIsolation(final Explorer.Workload workload, final long seed,
                                                                   final int recovered, final int abandoned,
                                                                   final boolean oneSided)
        throws Exception {
        final SimOptions o = Explorer.crash(Explorer.crashOptions("lotus-si", seed)).validate();
        final Explorer.Outcome outcome;
        io.scythe.txn.lotus.LotusModule.oneSidedInserts(oneSided);
        try {
            outcome = Explorer.check(vertx, workload, o);
        } finally {
            io.scythe.txn.lotus.LotusModule.defaultOneSidedInserts();
        }
        assertThat(outcome.failure()).as(String.valueOf(outcome.failure())).isNull();
        final JsonObject recovery = outcome.run().getJsonObject("sim").getJsonObject("crash").getJsonObject("recovery");
        if (recovered >= 0) {
            assertThat(recovery.getInteger("committed_by_recovery")).as(recovery.encode()).isEqualTo(recovered);
        }
        assertThat(recovery.getJsonObject("report").getInteger("inserts_abandoned")).as(recovery.encode())
            .isEqualTo(abandoned);
        assertThat(outcome.run().getJsonObject("sim").getLong("events")).isLessThan(200_000L);
    }
}
