package io.scythe.sim;

import io.scythe.bench.history.HistoryCollector;
import io.scythe.bench.history.SerializabilityChecker;
import io.scythe.bench.workload.SmallBankSpec;
import io.scythe.bench.workload.YcsbSpec;
import io.vertx.core.Future;
import io.vertx.core.json.JsonObject;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * RCC's CALVIN in the simulator, in both forms (rcc-calvin:primitive=rpc and the one-sided
 * rcc-calvin:primitive=onesided), concurrent on 4 compute nodes of 2 loops: SmallBank's money conserved and every
 * history serializable over many seeds (the explorer's runs, with jitter, on 4 compute nodes), the same seed giving
 * the same run, no abort but the procedures' own, YCSB's writes conserved, every node's lock queues empty at the end
 * of every run (an invariant of the run: {@code run.endChecks}), the one-sided form sending no RPC on a message's
 * path, value-dependent transactions run by OLLP, and TPC-C with its inserts, deletes and rows larger than a message.
 */
class CalvinSimTest extends SimVertxTest {
    private static final String CALVIN = "rcc-calvin:primitive=rpc";
    private static final String ONE_SIDED = "rcc-calvin:primitive=onesided";

    private static SimOptions cluster(final String protocol, final long seed) {
        return new SimOptions().protocol(protocol).computeNodes(4).memoryNodes(4).loopsPerComputeNode(2)
            .clientsPerComputeNode(10).durationNs(300_000).seed(seed);
    }

    private static JsonObject metrics(final SimResult r) {
        final JsonObject json = r.run().toJson().copy();
        json.getJsonObject("sim").remove("wall_ms");
        json.getJsonObject("sim").remove("setup_wall_ms");
        return json;
    }

    /**
     * The explorer's seed options on 4 compute nodes of 2 loops, 3 clients each: its default single compute node
     * would send no CALVIN message at all.
     */
    private static SimOptions explored(final String protocol, final long seed) {
        return Explorer.options(protocol, seed).computeNodes(4).clientsPerComputeNode(3);
    }

    @Test
    void shouldConserveMoneyAndStaySerializableOverManySeeds() throws Exception {
        SeedSweepTest.sweep(vertx, Explorer.Workload.SMALLBANK, CALVIN, 60, CalvinSimTest::explored);
    }

    @Test
    void shouldConserveMoneyAndStaySerializableOverManySeedsOneSided() throws Exception {
        SeedSweepTest.sweep(vertx, Explorer.Workload.SMALLBANK, ONE_SIDED, 60, CalvinSimTest::explored);
    }

    /**
     * Without the input log survivors cannot agree on a dead node's epochs: such crashes are refused up front, naming
     * why, rather than stalling the run. With it any compute node may crash, an owner of a partition too (its
     * successor takes its lock queues over, issue 18 part 5).
     */
    @Test
    void shouldRefuseACrashNamingTheMissingRecovery() {
        for (final String form : new String[] {CALVIN, ONE_SIDED}) {
            final SimOptions off = crashOwningNone(form + "+log=off", 1);
            org.assertj.core.api.Assertions.assertThatThrownBy(off::validate).as(form)
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageStartingWith("protocol " + form + "+log=off: crashing a compute node (--crash-cn, --crashes) "
                    + "is not modelled").hasMessageContaining("log=off");
            assertThat(crashOwningNone(form, 1).validate().faults().crashCn()).isEqualTo(2);
            final SimOptions owner = cluster(form, 1).redoLog(true);
            owner.faults().crash(0, 100_000).recover(true, Faults.DEFAULT_DETECT_NS);
            assertThat(owner.validate().faults().crashCn()).as(form).isZero(); // 4 compute nodes, cn0 an owner
        }
        assertThat(cluster(CALVIN, 1).validate().protocol()).isEqualTo(CALVIN); // no crash: runs
    }

    /**
     * The explorer's crash options on 3 compute nodes over 2 memory nodes, crashing cn2 (it owns no partition); a
     * drain of 1 ms, not 50 (a crashed node's clients never finish, so a crash run always drains to the end, and its
     * recovery is over within 0.1 ms of the crash).
     */
    private static SimOptions crashOwningNone(final String protocol, final long seed) {
        return Explorer.crash(Explorer.crashOptions(protocol, seed).computeNodes(3).memoryNodes(2), 2)
            .drainNs(1_000_000);
    }

    /**
     * Issue 18 parts 2-4 (and 6 for them): a node owning no partition crashes at a time drawn from the seed, before,
     * during or after its executors' decisions are logged; once it is fenced and recovered, the survivors complete its
     * epochs from its input log and apply its logged decisions (releasing the rest): every seed conserves money (its
     * commits nobody heard of counted once each), stays serializable, leaves no lock queued at any survivor, and some
     * seeds commit transactions of the dead node that only recovery decided. Fails when survivors release a logged
     * decision instead of applying it (money not conserved, seeds 14 and 17 of the RPC form; 14 in the 5 run).
     */
    @Test
    void shouldRecoverTheCrashOfANodeOwningNoPartition() throws Exception {
        for (final String form : new String[] {CALVIN, ONE_SIDED}) {
            final java.io.ByteArrayOutputStream printed = new java.io.ByteArrayOutputStream();
            final List<Explorer.Failure> failures = Explorer.explore(vertx, Explorer.Workload.SMALLBANK, List.of(form),
                10, CRASH_SEEDS, CalvinSimTest::crashOwningNone, new java.io.PrintStream(printed, true));
            System.out.print(printed);
            assertThat(failures).as(form).isEmpty();
            final java.util.regex.Matcher m = java.util.regex.Pattern.compile("crashes recovered, by what the crashed "
                + "CN was doing: \\{(.*)\\}; (\\d+) of its commits decided by recovery").matcher(printed.toString());
            assertThat(m.find()).as(form).isTrue();
            assertThat(m.group(1)).as(form).contains("executing", "redo-posted"); // before and after its decisions
            assertThat(Integer.parseInt(m.group(2))).as(form).isPositive();
        }
    }

    /**
     * The explorer's TPC-C seeds of CALVIN run 4x its 150 us (they committed 15 transactions over 100 crash seeds
     * there); its other workloads, and TPC-C under any other protocol, as they were (the sim fingerprint unchanged).
     */
    @Test
    void shouldLengthenOnlyCalvinsExploredTpccRuns() {
        for (final String form : new String[] {CALVIN, ONE_SIDED}) {
            assertThat(Explorer.lengthened(Explorer.Workload.TPCC, Explorer.crashOptions(form, 1)).durationNs())
                .as(form).isEqualTo(600_000);
            assertThat(Explorer.lengthened(Explorer.Workload.SMALLBANK, Explorer.options(form, 1)).durationNs())
                .as(form).isEqualTo(150_000);
        }
        assertThat(Explorer.lengthened(Explorer.Workload.TPCC, Explorer.options("rcc-occ", 1)).durationNs())
            .isEqualTo(150_000);
    }

    /**
     * Issue 18 part 5 (and 6 for it): on 2 compute nodes over 2 memory nodes, each owning a partition, one of them
     * (alternating by seed) crashes at a time drawn from the seed; the survivor, its successor, runs a second scheduler
     * for its partitions, rebuilt from what its executors still wait for and the dead node's decision records, routes
     * its own later part of every epoch there and gets its unanswered writes applied where not installed: every seed
     * conserves money, stays serializable and leaves no lock queued and no part awaited. Fails (29 of 30 seeds per
     * form at 1 to 30) when the rebuilt input is not scheduled, and (7 to 9 of 30) when writes are re-applied over
     * installed ones.
     */
    @Test
    void shouldTakeOverTheLockQueuesOfADeadOwner() throws Exception {
        assertOwnerCrashesRecovered(OWNER_CRASH_SEEDS, CalvinSimTest::crashOwner);
    }

    /**
     * Seeds 1 to {@code seeds} of {@code optionsOf} in each form: none fails, each recovers its crash; what the
     * explorer printed.
     */
    private String assertOwnerCrashesRecovered(final int seeds,
                                             final java.util.function.BiFunction<String, Long, SimOptions> optionsOf)
        throws Exception {
        final StringBuilder all = new StringBuilder();
        for (final String form : new String[] {CALVIN, ONE_SIDED}) {
            final java.io.ByteArrayOutputStream printed = new java.io.ByteArrayOutputStream();
            final List<Explorer.Failure> failures = Explorer.explore(vertx, Explorer.Workload.SMALLBANK, List.of(form),
                1, seeds, optionsOf, new java.io.PrintStream(printed, true));
            System.out.print(printed);
            assertThat(failures).as(form).isEmpty();
            assertThat(printed.toString()).as(form).contains(seeds + " seeds, 0 failed", "crashes recovered");
            all.append(printed);
        }
        return all.toString();
    }

    /**
     * Issue 18 part 5 with more than 2 compute nodes: on 3 over 2 memory nodes an owner (cn0 or cn1, alternating by
     * seed) crashes early; its successor (cn1, or cn2, which owns none) takes its partitions
     * over while the other survivor routes the dead owner's part of its later epochs there, resends it the writes the
     * dead owner never acknowledged and contributes what its executors still wait for to the rebuilt input: every seed
     * conserves money, stays serializable and leaves no lock queued and no part awaited. The crash is early (at 7 and
     * 11 us), so the take-over is over well within the run. Fails (both seeds, both forms: the other survivor's
     * transactions on the dead owner's keys wait for ever) when the other survivor's routing is off; with the crash
     * drawn over the whole run as the explorer does, 1 of 10 seeds per form failed so.
     */
    @Test
    void shouldTakeOverADeadOwnerWhileAnotherSurvivorRoutesToItsSuccessor() throws Exception {
        assertOwnerCrashesRecovered(THREE_NODE_SEEDS, CalvinSimTest::crashOwnerOfThree);
    }

    /** The explorer's crash options on 3 compute nodes over 2 memory nodes, crashing owner cn{@code seed mod 2}. */
    private static SimOptions crashOwnerOfThree(final String protocol, final long seed) {
        final SimOptions o = Explorer.crash(Explorer.crashOptions(protocol, seed).computeNodes(3).memoryNodes(2),
            (int) (seed % 2)).drainNs(1_000_000);
        o.faults().crash((int) (seed % 2), 3_000 + seed * 4_000); // early: the take-over is over well within the run
        return o;
    }

    /**
     * Issue 18 part 5, two deaths in one run: on 3 compute nodes over 2 memory nodes, owner cn0 and cn2 (which owns
     * none and routes cn0's part to cn1, its successor) crash together at a time drawn from the seed in the first 75 us
     * of a 300 us run: both die at the same instant,
     * so cn2 never contributes, routes or resends anything for cn0's take-over; only the NEWS of the two deaths is
     * staggered (each death is told when its own recovery, both run on one survivor, is over; {@link
     * #crashOwnerAndAnother} delays the later-named one's detection, so its death is told about the other's
     * recovery length later, order not guaranteed); cn1 takes cn0's partitions over, waiting for no contribution of
     * cn2's, cn2's parts there decided from its decision records: every seed
     * conserves money, stays serializable and leaves no lock queued and no part awaited, and no
     * loop gives up. Failed before: under the former rule (any death during or after an owner's take-over given up)
     * 2 of 3 seeds per form gave a loop up and one-sided seed 3 did not conserve money; and with cn1 still waiting for
     * the contribution of a dead cn2, RPC seed 2 left the take-over waiting for ever (lock requests queued).
     */
    @Test
    void shouldTakeOverADeadOwnerWhenAnotherNodeDiesTooInTheSameRun() throws Exception {
        assertThat(assertOwnerCrashesRecovered(TWO_DEATH_SEEDS, CalvinSimTest::crashOwnerAndAnother))
            .doesNotContain("gave a loop up");
    }

    /**
     * The explorer's crash options on 3 compute nodes over 2 memory nodes, crashing cn0 and cn2 at one instant, seed 1
     * with both deaths detected together, seed 2 with cn2's detected 15 us after cn0's, seed 3 with cn0's detected
     * 15 us after cn2's ({@code --crash-stagger} delays detection only; the crashes are simultaneous). Not simulated:
     * a non-owner dying after it contributed to, routed to or resent for the take-over.
     */
    private static SimOptions crashOwnerAndAnother(final String protocol, final long seed) {
        final SimOptions o = Explorer.crash(Explorer.crashOptions(protocol, seed).computeNodes(3).memoryNodes(2), 0)
            .drainNs(1_000_000);
        o.faults().crash(seed % 3 == 0 ? new int[] {2, 0} : new int[] {0, 2}, 1 + o.faults().crashAtNs() / 2)
            .detectStagger(seed % 3 == 1 ? 0 : 15_000);
        return o.durationNs(300_000); // cn1 goes on alone well after both take-overs
    }

    /**
     * Two owners, or an owner and a node it may hand its partitions to, crashing together are refused up front,
     * naming the missing take-over (the successor of a successor); an owner with a node it cannot hand them to is
     * not.
     */
    @Test
    void shouldRefuseTwoDeathsOfNodesSchedulingPartitionsUpFront() {
        for (final int[] refused : new int[][] {{0, 1}, {1, 2}}) {
            final SimOptions o = Explorer.crash(Explorer.crashOptions(CALVIN, 1).computeNodes(3).memoryNodes(2), 0);
            o.faults().crash(refused, 50_000);
            assertThatThrownBy(o::validate).as(java.util.Arrays.toString(refused))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("is not built (issue 18 part 5)");
        }
        final SimOptions four = Explorer.crash(Explorer.crashOptions(CALVIN, 1).computeNodes(4).memoryNodes(2), 0);
        four.faults().crash(new int[] {1, 3}, 50_000);
        assertThat(four.validate().faults().crashCns()).containsExactly(1, 3);
        assertThat(crashOwnerAndAnother(ONE_SIDED, 1).validate().faults().crashCns()).containsExactly(0, 2);
    }

    /**
     * Issue 18 part 5, a non-owner dying after it contributed: on 3 compute nodes over 2 memory nodes owner cn0
     * crashes early and cn2 (which owns none) 60 us later ({@code --crash-at T,T+60us}), after cn1, cn0's successor,
     * rebuilt the take-over's input with cn2's contribution; cn1 is told of cn2's death with its rebuilt parts in place
     * ({@code CalvinNode#executorDiedDuringTakeover} after the rebuild: {@link
     * io.scythe.txn.rcc.calvin.CalvinModule#DIED_AFTER_REBUILD} counts it, once a run). Every run commits, conserves
     * money, leaves no lock queued and no part awaited, stays serializable, gives no loop up, and reports each
     * committed transaction once (the dead nodes' decided ones included). Fails before: the simulator crashed every
     * node at one instant, where cn2 never contributes and the count stays absent (seen with both at {@code T}).
     */
    @Test
    void shouldTakeOverADeadOwnerWhenANodeThatContributedDiesAfterTheRebuild() throws Exception {
        for (final String form : new String[] {CALVIN, ONE_SIDED}) {
            for (long seed = 1; seed <= 2; seed++) {
                final SimOptions o = Explorer.crash(Explorer.crashOptions(form, seed).computeNodes(3).memoryNodes(2),
                    0).drainNs(1_000_000).durationNs(300_000);
                final long first = 5_000 + seed * 3_000;
                o.faults().crash(new int[] {0, 2}, new long[] {first, first + 60_000});
                final HistoryCollector history = new HistoryCollector(io.scythe.storage.ObjectLayout.LOADED_VERSION,
                    form + " seed " + seed);
                final java.util.Map<Long, Integer> reported = new java.util.concurrent.ConcurrentHashMap<>();
                final Simulation sim = new Simulation(o.validate(), Explorer.Workload.SMALLBANK.spec(seed))
                    .recorder(history).recorder((txnId, commitTs, accesses) -> reported.merge(txnId, 1, Integer::sum));
                final SimResult r = sim.run(vertx);
                final JsonObject run = r.run().toJson();
                final String what = form + " seed " + seed + ": " + run.encode();
                assertThat(r.invariantsOk()).as(what).isTrue();
                assertThat(run.getJsonObject("sim").getJsonArray("violations")).as(what).isEmpty();
                assertThat(run.getLong("committed")).as(what).isGreaterThan(5);
                assertThat(SerializabilityChecker.check(history.history(), 3).serializable()).as(what).isTrue();
                assertThat(reported.values()).as(what).allMatch(n -> n == 1);
                assertThat(run.getJsonObject("sim").getJsonObject("crash").getJsonObject("recovery")
                    .getJsonArray("nodes")).as(what).hasSize(2);
                assertThat(sim.computeNodeShared().get(io.scythe.txn.rcc.calvin.CalvinModule.DIED_AFTER_REBUILD))
                    .as(what).hasToString("1");
                assertThat(run.getJsonObject("sim").containsKey("gave_up")).as(what).isFalse();
            }
        }
    }

    /**
     * Issue 18, restart: on 3 compute nodes over 2 memory nodes, owner cn0 crashes at 30 us and is restarted 40 us
     * later (before or after its take-over is over: it asks again until every survivor took it over). Its new
     * incarnation rejoins the total order at one epoch, its partitions staying with cn1, and its clients commit again
     * (transactions of incarnation 2); money conserved, serializable, each commit reported once, every transaction
     * queued at one place of the total order at every node that queued a part of it ({@code calvin.scheduledAt}), no
     * loop given up, nothing held at the end (the run's end checks, the new incarnation's included).
     */
    @Test
    void shouldLetARestartedOwnerRejoinTheTotalOrderAndCommitAgain() throws Exception {
        for (final String form : new String[] {CALVIN, ONE_SIDED}) {
            for (long seed = 1; seed <= 2; seed++) {
                final SimOptions o = Explorer.crash(Explorer.crashOptions(form, seed).computeNodes(3).memoryNodes(2),
                    0).drainNs(1_000_000).durationNs(600_000);
                o.faults().crash(0, 30_000).restartAfter(40_000);
                final String what0 = form + " seed " + seed;
                final HistoryCollector history = new HistoryCollector(io.scythe.storage.ObjectLayout.LOADED_VERSION,
                    what0);
                final java.util.Map<Long, Integer> reported = new java.util.concurrent.ConcurrentHashMap<>();
                final java.util.concurrent.atomic.AtomicLong again = new java.util.concurrent.atomic.AtomicLong();
                final Simulation sim = new Simulation(o.validate(), Explorer.Workload.SMALLBANK.spec(seed))
                    .recorder(history).recorder((txnId, commitTs, accesses) -> {
                        reported.merge(txnId, 1, Integer::sum);
                        if (txnId >>> 48 == 2 && CrashRecovery.computeNodeOf(txnId) == 0) {
                            again.incrementAndGet(); // cn0's restarted incarnation's
                        }
                    });
                final java.util.Map<Long, java.util.Set<Long>> places = new java.util.concurrent.ConcurrentHashMap<>();
                sim.computeNodeShared().put(io.scythe.txn.rcc.calvin.CalvinModule.SCHEDULED_AT, places);
                final SimResult r = sim.run(vertx);
                final JsonObject run = r.run().toJson();
                final String what = what0 + ": " + run.encode();
                assertThat(run.getJsonObject("sim").containsKey("gave_up")).as(what).isFalse();
                assertThat(r.invariantsOk()).as(what).isTrue();
                assertThat(run.getJsonObject("sim").getJsonArray("violations")).as(what).isEmpty();
                assertThat(SerializabilityChecker.check(history.history(), 3).serializable()).as(what).isTrue();
                assertThat(reported.values()).as(what).allMatch(n -> n == 1);
                assertThat(again.get()).as("commits of cn0's new incarnation, " + what).isGreaterThan(5);
                assertThat(String.valueOf(((java.util.Map<?, ?>) sim.computeNodeShared()
                    .get(io.scythe.txn.rcc.calvin.CalvinModule.JOINED_AT)).keySet())).as(what).isEqualTo("[0]");
                assertThat(places).as(what).isNotEmpty();
                places.forEach((id, at) -> assertThat(at).as(Long.toHexString(id) + ", " + what0).hasSize(1));
            }
        }
    }

    /**
     * A restarted owner's JOIN answers lost (the first 3 dropped by the joiner, {@code CalvinModule#LOSE_JOIN_ANSWERS},
     * as when the call times out): it asks again, and each survivor answers a repeated JOIN of the same incarnation as
     * it did the first (its floor and the consumed count, which have not moved: the joiner sends nothing before every
     * answer is in), so it rejoins, commits again, money conserved, serializable, one place in the order per
     * transaction. Fails without that: the survivor refused the second JOIN ("it rejoined already") and the joiner
     * gave the run up.
     */
    @Test
    void shouldLetARestartedOwnerRejoinWhenJoinAnswersAreLost() throws Exception {
        for (final String form : new String[] {CALVIN, ONE_SIDED}) {
            final SimOptions o = Explorer.crash(Explorer.crashOptions(form, 1).computeNodes(3).memoryNodes(2), 0)
                .drainNs(1_000_000).durationNs(600_000);
            o.faults().crash(0, 30_000).restartAfter(40_000);
            final HistoryCollector history = new HistoryCollector(io.scythe.storage.ObjectLayout.LOADED_VERSION, form);
            final java.util.concurrent.atomic.AtomicLong again = new java.util.concurrent.atomic.AtomicLong();
            final Simulation sim = new Simulation(o.validate(), Explorer.Workload.SMALLBANK.spec(1))
                .recorder(history).recorder((txnId, commitTs, accesses) -> {
                    if (txnId >>> 48 == 2 && CrashRecovery.computeNodeOf(txnId) == 0) {
                        again.incrementAndGet(); // cn0's restarted incarnation's
                    }
                });
            final java.util.concurrent.atomic.AtomicInteger lose = new java.util.concurrent.atomic.AtomicInteger(3);
            sim.computeNodeShared().put(io.scythe.txn.rcc.calvin.CalvinModule.LOSE_JOIN_ANSWERS, lose);
            final java.util.Map<Long, java.util.Set<Long>> places = new java.util.concurrent.ConcurrentHashMap<>();
            sim.computeNodeShared().put(io.scythe.txn.rcc.calvin.CalvinModule.SCHEDULED_AT, places);
            final SimResult r = sim.run(vertx);
            final JsonObject run = r.run().toJson();
            final String what = form + ": " + run.encode();
            assertThat(lose.get()).as("answers lost, " + what).isNegative();
            assertThat(run.getJsonObject("sim").containsKey("gave_up")).as(what).isFalse();
            assertThat(r.invariantsOk()).as(what).isTrue();
            assertThat(run.getJsonObject("sim").getJsonArray("violations")).as(what).isEmpty();
            assertThat(SerializabilityChecker.check(history.history(), 3).serializable()).as(what).isTrue();
            assertThat(again.get()).as("commits of cn0's new incarnation, " + what).isGreaterThan(5);
            assertThat(String.valueOf(((java.util.Map<?, ?>) sim.computeNodeShared()
                .get(io.scythe.txn.rcc.calvin.CalvinModule.JOINED_AT)).keySet())).as(what).isEqualTo("[0]");
            places.forEach((id, at) -> assertThat(at).as(Long.toHexString(id) + ", " + form).hasSize(1));
        }
    }

    /**
     * {@code CalvinNode#deadDecidedAfterRebuild} firing (forced here: it counts nothing as known) is a violation of the
     * run, so a sweep counts the seed failed, not only a loop given up (which {@code sim --explore} only tallies, and
     * whose node the end checks skip).
     */
    @Test
    void shouldReportTheDeadDecidedCheckFiringAsAViolation() throws Exception {
        final SimOptions o = Explorer.crash(Explorer.crashOptions(CALVIN, 1).computeNodes(3).memoryNodes(2), 0)
            .drainNs(1_000_000).durationNs(300_000);
        o.faults().crash(new int[] {0, 2}, new long[] {8_000, 108_000}); // cn2 decided a write at cn0 (seed 1)
        final Simulation sim = new Simulation(o.validate(), Explorer.Workload.SMALLBANK.spec(1));
        sim.computeNodeShared().put(io.scythe.txn.rcc.calvin.CalvinModule.FORCE_DEAD_DECIDED_CHECK, Boolean.TRUE);
        final JsonObject run = sim.run(vertx).run().toJson();
        assertThat(sim.computeNodeShared().get(io.scythe.txn.rcc.calvin.CalvinModule.DIED_AFTER_REBUILD))
            .as(run.encode()).hasToString("1");
        assertThat(run.getJsonObject("sim").getJsonArray("violations").encode()).as(run.encode())
            .contains("CalvinNode#deadDecidedAfterRebuild");
    }

    /** Seeds of {@link #shouldTakeOverADeadOwnerWhenAnotherNodeDiesTooInTheSameRun} per form (1 to 3). */
    private static final int TWO_DEATH_SEEDS = 3;

    /** Seeds of {@link #shouldTakeOverADeadOwnerWhileAnotherSurvivorRoutesToItsSuccessor} per form (1 to 2). */
    private static final int THREE_NODE_SEEDS = 2;

    /** The explorer's crash options (2 compute nodes, 2 memory nodes), crashing cn{@code seed mod 2}, a 1 ms drain. */
    private static SimOptions crashOwner(final String protocol, final long seed) {
        return Explorer.crash(Explorer.crashOptions(protocol, seed).memoryNodes(2), (int) (seed % 2))
            .drainNs(1_000_000);
    }

    /** Seeds of {@link #shouldRecoverTheCrashOfANodeOwningNoPartition} per form (10 to 14). */
    private static final int CRASH_SEEDS = 5;
    /** Seeds of {@link #shouldTakeOverTheLockQueuesOfADeadOwner} per form (1 to 3). */
    private static final int OWNER_CRASH_SEEDS = 3;

    @Test
    void shouldRepeatARunBitForBitWithNoAbortButTheProceduresOwn() throws Exception {
        repeatsBitForBit(CALVIN);
    }

    @Test
    void shouldRepeatARunBitForBitWithNoAbortButTheProceduresOwnOneSided() throws Exception {
        repeatsBitForBit(ONE_SIDED);
    }

    /**
     * Both runs keep redo logs: the one-sided one writes CALVIN's input log (every committed transaction is in its
     * executor's log at its place in the total order), the RPC one with {@code log=off} writes none.
     */
    @Test
    void shouldSendTheOneSidedFormsMessagesByWritesNotRpcs() throws Exception {
        final long[] served = new long[2];
        int i = 0;
        for (final String form : List.of(ONE_SIDED, CALVIN + "+log=off")) {
            final List<TxnRecord> done = new ArrayList<>();
            final Simulation sim = new Simulation(cluster(form, 7).redoLog(true), new SmallBankSpec(50, 0.99,
                "standard")).listener(done::add);
            final java.util.Map<Long, Long> ordered = new java.util.concurrent.ConcurrentHashMap<>(); // ts -> id
            sim.computeNodeShared().put("calvin.ordered", ordered);
            final SimResult r = sim.run(vertx);
            assertThat(r.invariantsOk()).as(r.run().toJson().encode()).isTrue();
            assertThat(r.run().toJson().getLong("committed")).isGreaterThan(50);
            final java.util.Map<Long, Long> placeOf = new java.util.HashMap<>(); // id -> ts
            ordered.forEach((ts, id) -> placeOf.put(id, ts));
            for (int cn = 0; cn < 4; cn++) {
                served[i] += sim.peersOf(cn).served();
                final java.util.Map<Long, List<List<Long>>> logged = io.scythe.txn.rcc.calvin.CalvinLogs.logged(
                    sim.runtimesOf(cn).get(0));
                if (i == 1) {
                    assertThat(logged).as("input log of cn%d under log=off", cn).isNull();
                    continue;
                }
                // Each record holds transactions this node ordered in that epoch, each destination's in place order.
                for (final java.util.Map.Entry<Long, List<List<Long>>> e : logged.entrySet()) {
                    for (final List<Long> ids : e.getValue()) {
                        long previous = -1;
                        for (final long id : ids) {
                            final Long ts = placeOf.get(id);
                            assertThat(ts).as("cn%d's record of epoch %d: %x", cn, e.getKey(), id).isNotNull();
                            assertThat(ts >>> 20).as("epoch and node of %x", id).isEqualTo((e.getKey() + 1) << 12 | cn);
                            assertThat(ts & 0xfffff).as("place of %x", id).isGreaterThan(previous);
                            previous = ts & 0xfffff;
                        }
                    }
                }
                int checked = 0;
                for (final TxnRecord t : done) { // commitTs: (epoch + 1) << 32 | node << 20 | place in its batch
                    if (t.kind() == TxnRecord.Kind.COMMITTED && (t.commitTs() >>> 20 & 0xfff) == cn) {
                        final Long id = ordered.get(t.commitTs());
                        assertThat(id).as("transaction at %x", t.commitTs()).isNotNull();
                        assertThat(logged.get((t.commitTs() >>> 32) - 1)).as("cn%d's batch of %x", cn, t.commitTs())
                            .isNotNull().anySatisfy(ids -> assertThat(ids).contains(id));
                        checked++;
                    }
                }
                assertThat(checked).as("committed by cn%d", cn).isPositive();
            }
            // Every node's end-of-run check ran and found its lock queues empty.
            @SuppressWarnings("unchecked")
            final List<java.util.Map.Entry<Integer, java.util.function.Supplier<String>>> checks =
                (List<java.util.Map.Entry<Integer, java.util.function.Supplier<String>>>) sim.computeNodeShared()
                    .get("run.endChecks");
            assertThat(checks).hasSize(4);
            for (final java.util.Map.Entry<Integer, java.util.function.Supplier<String>> c : checks) {
                assertThat(c.getValue().get()).isNull();
            }
            i++;
        }
        // One-sided: the only RPCs are the set-up's (each node asks each other where its inbox is: 4 x 3).
        assertThat(served[0]).isLessThanOrEqualTo(12);
        assertThat(served[1]).isGreaterThan(100);
    }

    private void repeatsBitForBit(final String form) throws Exception {
        final List<TxnRecord> first = new ArrayList<>();
        final List<TxnRecord> second = new ArrayList<>();
        final HistoryCollector history = new HistoryCollector(0, "calvin");
        final SimResult a = new Simulation(cluster(form, 42), new SmallBankSpec(50, 0.99, "standard"))
            .listener(first::add).recorder(history).run(vertx);
        final SimResult b = new Simulation(cluster(form, 42), new SmallBankSpec(50, 0.99, "standard"))
            .listener(second::add).run(vertx);
        final SimResult c = new Simulation(cluster(form, 43), new SmallBankSpec(50, 0.99, "standard"))
            .run(vertx);

        final JsonObject run = a.run().toJson();
        assertThat(a.invariantsOk()).as(run.encode()).isTrue();
        assertThat(run.getJsonObject("conserved").getBoolean("ok")).isTrue();
        assertThat(run.getLong("committed")).isGreaterThan(50);
        assertThat(first).hasSizeGreaterThan(50);
        assertThat(second).isEqualTo(first);
        assertThat(b.historyHash()).isEqualTo(a.historyHash());
        final JsonObject recorded = metrics(a);
        recorded.getJsonObject("sim").remove("history");
        assertThat(metrics(b).encode()).isEqualTo(recorded.encode());
        assertThat(c.historyHash()).isNotEqualTo(a.historyHash());
        assertThat(c.invariantsOk()).isTrue();
        // Deterministic locking in one total order: nothing aborts but SendPayment's insufficient funds (user).
        final JsonObject aborts = run.getJsonObject("aborts_by_reason");
        for (final String reason : aborts.fieldNames()) {
            if (!reason.equalsIgnoreCase("user")) {
                assertThat(aborts.getLong(reason)).as(reason + " in " + aborts.encode()).isZero();
            }
        }
        final JsonObject recordedHistory = run.getJsonObject("sim").getJsonObject("history");
        assertThat((long) history.history().transactions()).isEqualTo(recordedHistory.getLong("recorded"))
            .isEqualTo(recordedHistory.getLong("committed"));
        assertThat(SerializabilityChecker.check(history.history(), 3).serializable()).isTrue();
    }

    @Test
    void shouldRunYcsbWithItsWritesConservedAndSerializable() throws Exception {
        runsYcsb(CALVIN);
        runsYcsb(ONE_SIDED);
    }

    private void runsYcsb(final String form) throws Exception {
        final HistoryCollector history = new HistoryCollector(0, "calvin-ycsb");
        final SimResult r = new Simulation(cluster(form, 5), new YcsbSpec(1_000, 0.99, 4, 0.5)).recorder(history)
            .run(vertx);
        final JsonObject run = r.run().toJson();
        assertThat(r.invariantsOk()).as(run.encode()).isTrue();
        assertThat(run.getLong("committed")).isGreaterThan(20);
        assertThat(run.getLong("aborted")).isZero();
        assertThat(SerializabilityChecker.check(history.history(), 3).serializable()).isTrue();
    }

    /** Uniform SmallBank of {@code accounts} accounts, whose quantity and parameters a workload beside it keeps. */
    private abstract static class BesideSmallBank implements io.scythe.bench.workload.OltpSpec {
        final SmallBankSpec bank;

        BesideSmallBank(final long accounts) {
            bank = new SmallBankSpec(accounts, 0.0, "standard");
        }

        @Override
        public final String quantity() {
            return bank.quantity();
        }

        @Override
        public final JsonObject params() {
            return bank.params();
        }
    }

    /**
     * Dependent transfers only: read A's savings, then move 1 from A's checking to the checking of the account its
     * balance names (a key that depends on a value read: CALVIN's OLLP). Shifting: deposits of 1 into both instead
     * (the procedure's result 2), whose procedure names another second account on its second run only (the first
     * re-execution: a miss), the one of its first run on every later run.
     */
    private static final class DependentTransfers extends BesideSmallBank {
        private static final long ACCOUNTS = 50;
        private final boolean shifting;

        DependentTransfers(final boolean shifting) {
            super(ACCOUNTS);
            this.shifting = shifting;
        }

        @Override
        public String name() {
            return shifting ? "smallbank-shifting" : "smallbank-dependent";
        }

        @Override
        public void load(final io.scythe.storage.LogDb db, final int part, final int parts) {
            bank.load(db, part, parts);
        }

        @Override
        public long total(final List<io.scythe.storage.LogDb> dbs) {
            return bank.total(dbs);
        }

        @Override
        public Drawn draw(final java.util.SplittableRandom random) {
            final long a = random.nextLong(ACCOUNTS);
            final int[] runs = {0};
            return new Drawn(shifting ? "ShiftingDeposit" : "DependentTransfer", txn -> {
                final int run = ++runs[0];
                return txn.read(io.scythe.bench.workload.SmallBank.SAVINGS, a).compose(savings -> {
                    final long named = Math.floorMod(savings.getLong(0) + a * 7, ACCOUNTS);
                    final long first = named == a ? (a + 1) % ACCOUNTS : named;
                    final long shifted = (first + 1) % ACCOUNTS == a ? (first + 2) % ACCOUNTS : (first + 1) % ACCOUNTS;
                    final long b = shifting && run == 2 ? shifted : first;
                    final String checking = io.scythe.bench.workload.SmallBank.CHECKING;
                    return Future.all(txn.readForUpdate(checking, a), txn.readForUpdate(checking, b)).map(cf -> {
                        final org.agrona.concurrent.UnsafeBuffer v = new org.agrona.concurrent.UnsafeBuffer(
                            new byte[8]);
                        v.putLong(0, cf.<org.agrona.concurrent.UnsafeBuffer>resultAt(0).getLong(0)
                            + (shifting ? 1 : -1));
                        txn.write(checking, a, v, 0, 8);
                        final org.agrona.concurrent.UnsafeBuffer w = new org.agrona.concurrent.UnsafeBuffer(
                            new byte[8]);
                        w.putLong(0, cf.<org.agrona.concurrent.UnsafeBuffer>resultAt(1).getLong(0) + 1);
                        txn.write(checking, b, w, 0, 8);
                        return shifting ? 2L : 0L;
                    });
                });
            });
        }
    }

    @Test
    void shouldRunDependentTransactionsByReexecutionWithoutRestartWhenTheKeysStayTheSame() throws Exception {
        for (final String form : List.of(ONE_SIDED, CALVIN)) {
            final HistoryCollector history = new HistoryCollector(0, "calvin-ollp");
            final List<TxnRecord> first = new ArrayList<>();
            final List<TxnRecord> second = new ArrayList<>();
            final SimResult r = new Simulation(cluster(form, 11), new DependentTransfers(false)).recorder(history)
                .listener(first::add).run(vertx);
            final JsonObject run = r.run().toJson();
            assertThat(r.invariantsOk()).as(run.encode()).isTrue();
            assertThat(run.getJsonObject("conserved").getBoolean("ok")).isTrue();
            assertThat(run.getJsonObject("committed_by_type").getLong("DependentTransfer")).as(run.encode())
                .isGreaterThan(50);
            assertThat(run.getLong("aborted")).as(run.encode()).isZero();
            assertThat(SerializabilityChecker.check(history.history(), 3).serializable()).isTrue();
            new Simulation(cluster(form, 11), new DependentTransfers(false)).listener(second::add).run(vertx);
            assertThat(second).isEqualTo(first);
        }
    }

    /**
     * Dependent deposits whose re-execution names another key than their reconnaissance did (forced: the procedure's
     * second run, the first re-execution, names a key of its own): each restarts exactly once (ollp-restart), and
     * the restart commits its deposits once (money conserved: the missed run's writes never land).
     */
    @Test
    void shouldRestartWhenTheReexecutionNamesAKeyOutsideTheLockedSetAndCommitTheRestart() throws Exception {
        for (final String form : List.of(ONE_SIDED, CALVIN)) {
            final HistoryCollector history = new HistoryCollector(0, "calvin-ollp-miss");
            final SimResult r = new Simulation(cluster(form, 12), new DependentTransfers(true)).recorder(history)
                .run(vertx);
            final JsonObject run = r.run().toJson();
            assertThat(r.invariantsOk()).as(run.encode()).isTrue();
            assertThat(run.getJsonObject("sim").getLong("unfinished_clients")).isZero();
            assertThat(run.getJsonObject("conserved").getBoolean("ok")).as(run.encode()).isTrue();
            final long committed = run.getJsonObject("committed_by_type").getLong("ShiftingDeposit");
            assertThat(committed).as(run.encode()).isGreaterThan(20);
            assertThat(run.getLong("committed")).isEqualTo(committed);
            // Every commit took exactly 2 attempts; the restarts are those, and the last one of each of the 40
            // clients when the run ended (not retried after the duration).
            assertThat(run.getDouble("attempts_per_commit")).as(run.encode()).isEqualTo(2.0);
            assertThat(run.getJsonObject("aborts_by_reason").getLong("ollp-restart", 0L)).as(run.encode())
                .isBetween(committed, committed + 40).isEqualTo(run.getLong("aborted"));
            assertThat(SerializabilityChecker.check(history.history(), 3).serializable()).isTrue();
        }
    }

    /**
     * SmallBank beside a table of 680-byte rows (TPC-C's customer size, over an RRPC bucket), each holding a pattern
     * of its key; half the transactions read two such rows and fail if a byte is not the pattern's.
     */
    private static final class BigRows extends BesideSmallBank {
        private static final int ROWS = 40;
        private static final int BYTES = 680;
        private static final String TABLE = "big";

        BigRows() {
            super(50);
        }

        @Override
        public String name() {
            return "smallbank-bigrows";
        }

        @Override
        public void load(final io.scythe.storage.LogDb db, final int part, final int parts) {
            bank.load(db, part, parts);
            final io.scythe.storage.Table t = db.create(io.scythe.storage.TableSchema.fixed(77, TABLE, BYTES,
                ROWS / parts + 1));
            for (long k = part; k < ROWS; k += parts) {
                if (t.insert(k, pattern(k), 0, BYTES, io.scythe.storage.ObjectLayout.LOADED_VERSION) <= 0) {
                    throw new IllegalStateException("loading row " + k + " failed");
                }
            }
        }

        private static org.agrona.concurrent.UnsafeBuffer pattern(final long key) {
            final org.agrona.concurrent.UnsafeBuffer v = new org.agrona.concurrent.UnsafeBuffer(new byte[BYTES]);
            for (int i = 0; i < BYTES; i++) {
                v.putByte(i, (byte) (key * 31 + i));
            }
            return v;
        }

        @Override
        public long total(final List<io.scythe.storage.LogDb> dbs) {
            return bank.total(dbs);
        }

        @Override
        public Drawn draw(final java.util.SplittableRandom random) {
            if (random.nextBoolean()) {
                return bank.draw(random);
            }
            final long a = random.nextLong(ROWS);
            final long b = (a + 1 + random.nextLong(ROWS - 1)) % ROWS;
            return new Drawn("BigRead", txn -> Future.all(txn.read(TABLE, a), txn.read(TABLE, b)).map(cf -> {
                for (int r = 0; r < 2; r++) {
                    final org.agrona.concurrent.UnsafeBuffer v = cf.resultAt(r);
                    final org.agrona.concurrent.UnsafeBuffer want = pattern(r == 0 ? a : b);
                    if (v.capacity() != BYTES || v.compareTo(want) != 0) {
                        throw new IllegalStateException("row " + (r == 0 ? a : b) + " came back altered");
                    }
                }
                return 0L;
            }));
        }
    }

    @Test
    void shouldForwardRowsLargerThanABucketInPieces() throws Exception {
        for (final String form : List.of(CALVIN, ONE_SIDED)) {
            final SimResult r = new Simulation(cluster(form, 3), new BigRows()).run(vertx);
            final JsonObject run = r.run().toJson();
            assertThat(r.invariantsOk()).as(run.encode()).isTrue();
            assertThat(run.getJsonObject("sim").getLong("errors")).isZero();
            assertThat(run.getJsonObject("committed_by_type").getLong("BigRead")).as(run.encode())
                .isGreaterThan(20);
        }
    }

    /**
     * TPC-C (the standard mix: NewOrder, Payment, OrderStatus, Delivery, StockLevel) in both forms on 2 compute nodes:
     * inserts (orders, order lines, history) and deletes (Delivery's new-orders) as declared writes, the keys that
     * depend on values read (the district's next order id, the delivery cursor) by OLLP, customer rows (680 bytes)
     * read and written in pieces over RPC; TPC-C's consistency conditions, W_YTD grown by exactly the committed
     * payments, no lock queued at the end, a serializable history. Longer: {@code scythe sim --explore 100 --workload
     * tpcc --protocols rcc-calvin --cns 4 --check-history}.
     */
    @org.junit.jupiter.params.ParameterizedTest
    @org.junit.jupiter.params.provider.ValueSource(strings = {CALVIN, ONE_SIDED})
    void shouldRunTpccWithInsertsDeletesAndLargeRows(final String form) throws Exception {
        final HistoryCollector recorded = new HistoryCollector(io.scythe.storage.ObjectLayout.LOADED_VERSION,
            "tpcc " + form);
        final SimResult r = new Simulation(new SimOptions().protocol(form).computeNodes(2).loopsPerComputeNode(2)
            .clientsPerComputeNode(4).memoryNodes(2).durationNs(400_000).seed(3),
            new io.scythe.bench.workload.TpccSpec(new io.scythe.bench.workload.Tpcc.Scale(2, 30, 100,
                io.scythe.bench.workload.TpccSpec.headroomFor(0)), 0.99, 3,
                io.scythe.bench.workload.TpccSpec.Mix.STANDARD, 0.99,
                io.scythe.bench.workload.TpccSpec.Home.RANDOM)).recorder(recorded).run(vertx);
        final JsonObject run = r.run().toJson();
        System.out.println("TPC-C " + form + ": " + run.getJsonObject("committed_by_type") + ", aborts "
            + run.getJsonObject("aborts_by_reason"));
        assertThat(r.invariantsOk()).as(String.valueOf(run)).isTrue();
        assertThat(run.getJsonObject("sim").getLong("errors")).as(String.valueOf(run)).isZero();
        assertThat(run.getJsonObject("conserved").getBoolean("ok")).isTrue();
        final SerializabilityChecker.Result history = SerializabilityChecker.check(recorded.history(), 3);
        assertThat(Explorer.historyFails(history, run)).as(Explorer.verdict(history)).isFalse();
        final JsonObject byType = run.getJsonObject("committed_by_type");
        assertThat(byType.getLong("NewOrder", 0L)).as(byType.encode()).isPositive();
        assertThat(byType.getLong("Payment", 0L)).as(byType.encode()).isPositive();
    }
}
