package io.scythe.cluster;

import io.scythe.txn.FaultPoints;
import io.vertx.core.Future;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;
import org.junit.jupiter.api.io.TempDir;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.UUID;
import java.util.concurrent.TimeUnit;

import static io.scythe.cluster.ProcessClusters.eventually;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * Compute nodes of a cluster of processes (TSO, 2 MNs, 3 CNs over tcp: docker/compose.yaml's topology) die at exact points of a {@code move} that
 * spans both memory nodes, through the real path: SIGKILL (or a halt fault point), Hazelcast declaring the member
 * dead, the memory nodes fencing it, its log's owner recovering it, and the CN restarted under a new epoch. Killed
 * while holding its tickets (before its redo record: rolled back; another CN's move on those keys, which aborts or
 * queues behind them once its retry turns TOCC, never commits before the recovery and is served after it), while
 * queued behind another CN's tickets (its tickets skipped), and mid-commit (after its redo record, before
 * write-back: rolled forward). After each: every key
 * holds exactly what the acknowledged moves (and the decided in-doubt one) made, the sum is conserved, no lock or
 * ticket is left on either memory node, and the client never heard "aborted" for a transaction that may commit. The
 * points are {@link FaultPoints} armed from the CNs' configs; the cluster is stopped and its shm files removed even
 * when a test fails.
 *
 * <p>The scenarios share one cluster but not their outcomes: each reads the values of its keys when it starts and
 * checks those against its own ledger, and a scenario that did not finish leaves a cluster in an unknown state (a
 * CN holding tickets, a recovery under way), so the next one starts on a new cluster. Last, with its three CNs back,
 * the compose topology's own checks (was TcpClusterProcessTest, a cluster of its own): adds on every CN, and a
 * registration that outlived its node.
 */
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class CnKillProcessTest {
    private static final int KEYS = 64;
    /**
     * The holder of scenario 2 keeps its tickets until the scenario saw the queued CN killed, fenced and recovered,
     * and then creates this file of the cluster's folder (a fault point released on that event, not a fixed hold that
     * load outran: issue 23); {@link #HOLDER_HOLDS_AT_MOST_MS} bounds the hold, past it the holder's commit fails.
     */
    private static final String HOLDER_RELEASE = "release-holder";
    /** Longer than the scenario's waits before the release (queued, fenced, recovered: 80 s at most). */
    private static final long HOLDER_HOLDS_AT_MOST_MS = 120_000;
    /** When the holder locks (after executing) and when the queued CN does, from their execution. */
    private static final long HOLDER_LOCKS_AFTER_MS = 3_000;
    private static final long QUEUED_LOCKS_AFTER_MS = 4_000;

    @TempDir
    static Path dir;
    static LocalCluster cluster;
    static ScytheClient client;
    /** For requests to a CN about to die: its reply never comes, and "unknown" should not take long. */
    static ScytheClient impatient;
    /**
     * For a request that may queue behind a CN about to die: its reply comes once that CN is recovered, which takes
     * longer than the default timeout (the waits below: queued, fenced, recovered, then {@link #AFTER_RECOVERY_MS}).
     */
    static ScytheClient patient;
    /** How long a request queued behind a dead CN's tickets may take to finish once that CN is recovered. */
    private static final long AFTER_RECOVERY_MS = 20_000;
    static final HttpClient HTTP = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(2)).build();
    /** Clusters started so far (each in a folder of its own). */
    static int clusters;
    /** Whether the last scenario finished: otherwise the next one gets a new cluster. */
    static boolean clean;

    @BeforeAll
    static void startCluster() throws Exception {
        clusters++;
        // Over the tcp fabric: the topology of docker/compose.yaml (1 TSO, 2 MNs, 3 CNs), whose scenario runs last
        // on this cluster (folded in from TcpClusterProcessTest: one cluster boot less, issue 23).
        cluster = ProcessClusters.counters("k", 2, 3, 0, dir.resolve("cluster" + clusters),
            List.of("-D" + FaultPoints.ENABLE_PROPERTY + "=true"), "tcp");
        // No memory node is paused or killed here: a verb waits out a stall of the loaded machine (CI 201: mn1 answered
        // nothing for 2.5 s at load 11, the first move's write-back failed in doubt and cn1 lost its epoch) rather than
        // end the scenario's commits in doubt. Killed CNs' connections close at once, so no bound here waits for these.
        for (final String cn : List.of("cn0", "cn1", "cn2")) {
            cluster.configure(cn, "verbTimeoutMs", 12_000);
        }
        // Keys 10/20/30 live on mn0, 11/21/31 on mn1: every move below spans both memory nodes.
        cluster.configure("cn0", "faults", new JsonArray().add(fault(10, "beforeRedo", "hold", 0)));
        cluster.configure("cn1", "faults", new JsonArray()
            .add(fault(20, "afterExecute", "delay", HOLDER_LOCKS_AFTER_MS))
            .add(fault(20, "beforeRedo", "await", HOLDER_HOLDS_AT_MOST_MS)
                .put("file", holderRelease().toString()))
            .add(fault(30, "afterRedo", "halt", 0)));
        cluster.configure("cn2", "faults", new JsonArray()
            .add(fault(20, "afterExecute", "delay", QUEUED_LOCKS_AFTER_MS)));
        client = ProcessClusters.startAndJoin(cluster, 180_000, 30_000);
        impatient = new ScytheClient(client.vertx(), 10_000);
        patient = new ScytheClient(client.vertx(), 20_000 + 60_000 + AFTER_RECOVERY_MS + 10_000);
        clean = true;
    }

    @AfterAll
    static void stopCluster() throws Exception {
        try {
            if (impatient != null) {
                impatient.close();
            }
            if (patient != null) {
                patient.close();
            }
        } finally {
            ProcessClusters.stop(client, cluster);
            final java.util.concurrent.Future<Void> pending = relaunching;
            relaunching = null;
            if (pending != null) { // its node is gone now: its wait for readiness ends at once
                try {
                    pending.get(10, TimeUnit.SECONDS);
                } catch (final Exception ended) {
                    System.out.println("a restart no scenario waited for: " + ended);
                }
            }
        }
    }

    /**
     * A scenario that did not finish left the cluster in an unknown state: the next one starts on a new cluster. A CN
     * that exited although no scenario killed it lost its lease on its own (starved on a loaded machine): it is
     * restarted with its config, so the scenarios find three CNs (its faults not fired yet armed again).
     */
    @BeforeEach
    void startOnACleanClusterOfThreeComputeNodes() throws Exception {
        if (!clean) {
            System.out.println("the previous scenario did not finish: the next one gets a new cluster");
            try {
                stopCluster();
            } finally {
                startCluster();
            }
        }
        for (final String cn : List.of("cn0", "cn1", "cn2")) {
            if (!cluster.node(cn).process().isAlive()) {
                System.out.println(cn + " exited on its own (" + cluster.node(cn).process().exitValue()
                    + "); restarting it");
                cluster.restart(cn, 180_000);
            }
        }
    }

    /** The file whose creation releases scenario 2's holder, in the current cluster's folder. */
    private static Path holderRelease() {
        return dir.resolve("cluster" + clusters).resolve(HOLDER_RELEASE);
    }

    private static JsonObject fault(final long key, final String at, final String action, final long ms) {
        final JsonObject f = new JsonObject().put("procedure", "move").put("key", key).put("at", at)
            .put("action", action);
        return ms > 0 ? f.put("ms", ms) : f;
    }

    // ------------------------------------------------------------------------------------------------ helpers

    private static JsonObject health(final String node) {
        try {
            return new JsonObject(HTTP.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:"
                + cluster.node(node).httpPort() + "/health")).timeout(Duration.ofSeconds(5)).build(),
                HttpResponse.BodyHandlers.ofString()).body());
        } catch (final Exception unreachable) {
            return new JsonObject();
        }
    }

    private static long tickets(final String mn) {
        return health(mn).getLong("ticketsOutstanding", -1L);
    }

    /**
     * Runs {@code procedure} on {@code preferred}, or, when a CN refuses it before running it because it no longer
     * serves (a loaded machine can starve a member past its lease), on the next CN: nothing ran, so nothing is
     * ambiguous.
     */
    private static ScytheClient.Outcome call(final String preferred, final String procedure, final long... args)
        throws Exception {
        final List<String> order = new java.util.ArrayList<>(List.of(preferred));
        List.of("cn0", "cn1", "cn2").stream().filter(cn -> !cn.equals(preferred)).forEach(order::add);
        ScytheClient.Outcome o = null;
        for (final String cn : order) {
            o = client.callOn(cn, procedure, args).await(40, TimeUnit.SECONDS);
            if (!(o instanceof ScytheClient.Outcome.Rejected r && r.reason().startsWith("no coordinator"))) {
                return o;
            }
        }
        return o;
    }

    /**
     * A read-only {@code get} of key {@code k}, asked again while its outcome is Unknown (a get changes nothing, so
     * asking again is safe; what the check needs is the value, not that first request's fate). Added when, right after
     * a CN restarted, the clustered event bus routed requests to a killed incarnation's registration that had come back
     * ("Connecting to server ... failed: Not a member of the cluster", CI runs 69 and 120); the event bus now routes to
     * members only (MemberOnlyClusterManager), and a move after a restart ({@link #restarted}) needs no such retry.
     */
    private static ScytheClient.Outcome readOnce(final String readVia, final long k) throws Exception {
        ScytheClient.Outcome o = call(readVia, "get", k);
        for (int retry = 0; retry < 2 && o instanceof ScytheClient.Outcome.Unknown; retry++) {
            System.out.println("get " + k + " via " + readVia + " was " + o + "; asking again");
            o = call(readVia, "get", k);
        }
        return o;
    }

    private static long valueOf(final ScytheClient.Outcome o, final String what) {
        assertThat(o).as(what).isInstanceOf(ScytheClient.Outcome.Committed.class);
        return ((ScytheClient.Outcome.Committed) o).reply().result();
    }

    /**
     * What the keys of one scenario must hold: their values when it started, changed by its acknowledged moves and
     * the in-doubt one its redo record decided. A scenario reads its own, so what another left does not matter.
     */
    private static final class Ledger {
        private final Map<Long, Long> expected = new TreeMap<>();

        Ledger(final long... keys) throws Exception {
            for (final long key : keys) {
                expected.put(key, valueOf(readOnce("cn0", key), "get " + key));
            }
        }

        void moved(final long from, final long to, final long amount) {
            assertThat(expected).as("keys of this scenario").containsKeys(from, to);
            expected.merge(from, -amount, Long::sum);
            expected.merge(to, amount, Long::sum);
        }

        long of(final long key) {
            return expected.get(key);
        }

        /** A committed move (on {@code cn} if it serves), noted; returns {@code from}'s new value. */
        long move(final String cn, final long from, final long to, final long amount) throws Exception {
            return noted(call(cn, "move", from, to, amount), from, to, amount);
        }

        long noted(final ScytheClient.Outcome o, final long from, final long to, final long amount) {
            final long fromNow = valueOf(o, "move " + from + " -> " + to);
            moved(from, to, amount);
            return fromNow;
        }
    }

    /**
     * {@code cn}'s epoch from its /health, asked again while unanswered: a CN starved on a loaded machine can miss the
     * 5 s timeout of one request, and -1 then made the scenario wait for the fencing of incarnation "cn0.e-1", which
     * never comes (three failures at load ~55, "not within 30000 ms: mn0 and mn1 fence cn0.e-1").
     */
    private static long epochOf(final String cn) throws InterruptedException {
        final long[] epoch = {-1};
        eventually(cn + "'s /health names its epoch", 30_000,
            () -> (epoch[0] = health(cn).getLong("epoch", -1L)) >= 0);
        return epoch[0];
    }

    /**
     * Every key of the scenario holds what its ledger says (acknowledged moves present, none applied twice or in
     * part), the sum of all keys is 0 (every move conserves it), and neither memory node has a lock held or a ticket
     * outstanding.
     */
    private static void checkData(final Ledger ledger, final String readVia) throws Exception {
        eventually("no lock held nor ticket outstanding on mn0 and mn1", 60_000, () -> List.of("mn0", "mn1").stream()
            .allMatch(mn -> health(mn).getLong("locksHeld", -1L) == 0 && tickets(mn) == 0));
        long sum = 0;
        for (int k = 0; k < KEYS; k++) {
            final long value = valueOf(readOnce(readVia, k), "get " + k);
            if (ledger.expected.containsKey((long) k)) {
                assertThat(value).as("key %d", k).isEqualTo(ledger.of(k));
            }
            sum += value;
        }
        assertThat(sum).as("moves conserve the sum").isZero();
    }

    /** Waits until both memory nodes fenced {@code incarnation} and a live CN recovered it; returns its report. */
    private static JsonObject awaitFencedAndRecovered(final String incarnation) throws Exception {
        eventually("mn0 and mn1 fence " + incarnation, 30_000, () -> List.of("mn0", "mn1").stream()
            .allMatch(mn -> health(mn).getJsonArray("fenced", new JsonArray()).contains(incarnation)));
        final JsonObject[] report = new JsonObject[1];
        eventually("a live CN recovered " + incarnation, 30_000, () -> {
            for (final String cn : List.of("cn0", "cn1", "cn2")) {
                final LocalCluster.Node node = cluster.node(cn);
                final JsonArray recoveries = node.process() != null && node.process().isAlive()
                    ? health(cn).getJsonArray("recoveries", new JsonArray()) : new JsonArray();
                for (final Object r : recoveries) {
                    final JsonObject rec = (JsonObject) r;
                    if (incarnation.equals(rec.getString("cn")) && rec.getBoolean("ok", false)) {
                        report[0] = rec.put("by", cn);
                        return true;
                    }
                }
            }
            // A recoverer that finished and then lost its own lease (a starved machine) reports only in its log.
            for (final String cn : List.of("cn0", "cn1", "cn2")) {
                for (final String line : cluster.node(cn).logText().lines().toList()) {
                    final int at = line.indexOf(": recovery of {");
                    if (at >= 0) {
                        final JsonObject rec = new JsonObject(line.substring(at + ": recovery of ".length()));
                        if (incarnation.equals(rec.getString("cn")) && rec.getBoolean("ok", false)) {
                            report[0] = rec.put("by", cn + " (from its log)");
                            return true;
                        }
                    }
                }
            }
            return false;
        });
        System.out.println("recovery of " + incarnation + ": " + report[0].encode());
        return report[0];
    }

    /**
     * Starts dead CN {@code cn} again without fault points, on a thread of its own, once its incarnation is recovered:
     * its JVM boots (5-13 s here) while the scenario checks what the recovery left, instead of after it (issue 23
     * §1). {@link #restarted} waits for it.
     */
    private static java.util.concurrent.FutureTask<Void> relaunch(final String cn) throws Exception {
        assertThat(cluster.node(cn).process().waitFor(10, TimeUnit.SECONDS)).as(cn + " is gone").isTrue();
        cluster.configure(cn, "faults", new JsonArray());
        final java.util.concurrent.FutureTask<Void> restart = new java.util.concurrent.FutureTask<>(() -> {
            cluster.restart(cn, 180_000);
            return null;
        });
        final Thread t = new Thread(restart, "restart of " + cn);
        t.setDaemon(true);
        t.start();
        relaunching = restart;
        return restart;
    }

    /** A restart {@link #relaunch} began and no scenario waited for yet (a scenario that failed first). */
    static java.util.concurrent.Future<Void> relaunching;

    /** Dead CN {@code cn}, {@link #relaunch}ed, is ready; it came back under {@code epoch} and commits itself. */
    private static void restarted(final Ledger ledger, final String cn, final long epoch,
                                  final java.util.concurrent.Future<Void> restart) throws Exception {
        try {
            restart.get(200, TimeUnit.SECONDS);
        } catch (final java.util.concurrent.ExecutionException e) {
            throw new AssertionError("restarting " + cn + " failed: " + e.getCause(), e.getCause());
        }
        relaunching = null;
        assertThat(epochOf(cn)).isEqualTo(epoch);
        assertThat(cluster.node(cn).logText()).contains("epoch " + epoch + ", fabric " + cn + ".e" + epoch);
        ledger.noted(client.callOn(cn, "move", 40, 41, 1).await(40, TimeUnit.SECONDS), 40, 41, 1);
    }

    private static void assertUnknown(final Future<ScytheClient.Outcome> outcome, final String what)
        throws Exception {
        final ScytheClient.Outcome o = outcome.await(40, TimeUnit.SECONDS);
        System.out.println(what + ": " + o);
        assertThat(o).as(what + ": neither committed nor aborted, as far as the client can tell")
            .isInstanceOf(ScytheClient.Outcome.Unknown.class);
    }

    // ------------------------------------------------------------------------------------------------ scenarios

    @Test
    @Order(1)
    void shouldReleaseTheTicketsOfAComputeNodeKilledWhileHoldingThem() throws Exception {
        clean = false;
        final Ledger ledger = new Ledger(10, 11, 40, 41);
        ledger.move("cn1", 10, 11, 5);
        // cn0 locks keys 10 and 11 for its move, validates, and stops before its redo record.
        final Future<ScytheClient.Outcome> held = impatient.callOn("cn0", "move", 10, 11, 1000);
        eventually("cn0 holds the tickets of keys 10 (mn0) and 11 (mn1)", 20_000,
            () -> tickets("mn0") == 1 && tickets("mn1") == 1);
        // While it holds them another CN cannot commit on those keys. cn1's move finds them locked; after two aborts
        // on one object its retry turns TOCC (HotColdRetry) and queues behind cn0's tickets: an ordered wait, which
        // only cn0's unlock or its recovery ends (a queued ticket cannot leave the queue). Either it gave up (aborted)
        // or it waits, queued; it never commits while cn0 holds them.
        final Future<ScytheClient.Outcome> contender = patient.callOn("cn1", "move", 10, 11, 1);
        eventually("cn1's move aborted or queued behind cn0's tickets", 20_000,
            () -> contender.isComplete() || tickets("mn0") + tickets("mn1") > 2);
        if (contender.isComplete()) {
            assertThat(contender.result()).as("cn1's move while cn0 holds the tickets")
                .isInstanceOf(ScytheClient.Outcome.Aborted.class);
        }
        assertThat(held.isComplete()).isFalse();

        final long epoch = epochOf("cn0");
        cluster.signal("cn0", "KILL");
        final JsonObject report = awaitFencedAndRecovered("cn0.e" + epoch);
        assertThat(report.getLong("tickets")).as("its two held tickets released").isEqualTo(2);
        assertThat(report.getLong("applied")).as("nothing of it rolled forward").isZero();
        assertUnknown(held, "the killed holder's move");
        final java.util.concurrent.Future<Void> cn0Back = relaunch("cn0");
        // Nothing waits on the dead CN beyond its recovery: a queued move is served once its tickets are cancelled,
        // and commits (on the values without the dead move's 1000) or aborts, never unknown (cn1 is alive).
        final ScytheClient.Outcome contended = contender.await(AFTER_RECOVERY_MS, TimeUnit.MILLISECONDS);
        System.out.println("cn1's move contending with the killed holder: " + contended);
        if (contended instanceof ScytheClient.Outcome.Committed) {
            assertThat(ledger.noted(contended, 10, 11, 1)).isEqualTo(ledger.of(10));
        } else {
            assertThat(contended).isInstanceOf(ScytheClient.Outcome.Aborted.class);
        }
        // Released: another CN's move on the same keys commits, on the values without the dead move's 1000.
        assertThat(ledger.move("cn1", 10, 11, 1)).isEqualTo(ledger.of(10));
        checkData(ledger, "cn2");
        restarted(ledger, "cn0", epoch + 1, cn0Back);
        checkData(ledger, "cn0");
        clean = true;
    }

    @Test
    @Order(2)
    void shouldSkipTheTicketsOfAComputeNodeKilledWhileQueued() throws Exception {
        clean = false;
        final Ledger ledger = new Ledger(20, 21, 40, 41);
        ledger.move("cn0", 20, 21, 7);
        // cn1 executes at once, locks keys 20 and 21 HOLDER_LOCKS_AFTER_MS later and holds them before its redo
        // record until released below. cn2 executes its move (reads 20 and 21 while free, with a later timestamp) in
        // between, and asks for the locks after cn1 took them: it queues behind cn1's tickets.
        final Future<ScytheClient.Outcome> holder = patient.callOn("cn1", "move", 20, 21, 1);
        Thread.sleep(1_000);
        final Future<ScytheClient.Outcome> queued = impatient.callOn("cn2", "move", 20, 21, 1000);
        eventually("cn2 queued behind cn1 on keys 20 (mn0) and 21 (mn1)", 20_000,
            () -> tickets("mn0") == 2 && tickets("mn1") == 2);
        assertThat(queued.isComplete()).isFalse();

        final long epoch = epochOf("cn2");
        cluster.signal("cn2", "KILL");
        final JsonObject report = awaitFencedAndRecovered("cn2.e" + epoch);
        assertThat(report.getLong("tickets")).as("its two queued tickets cancelled").isEqualTo(2);
        assertThat(report.getLong("applied")).isZero();
        assertThat(holder.isComplete()).as("cn1 still holds its tickets: its unlock will reach cancelled ones")
            .isFalse();
        java.nio.file.Files.createFile(holderRelease()); // the holder goes on
        assertUnknown(queued, "the killed queued move");
        final java.util.concurrent.Future<Void> cn2Back = relaunch("cn2");
        // The holder commits; upper passes the cancelled tickets, so nothing is left held or queued.
        assertThat(ledger.noted(holder.await(40, TimeUnit.SECONDS), 20, 21, 1)).isEqualTo(ledger.of(20));
        eventually("no ticket outstanding after the holder's unlock", 60_000,
            () -> tickets("mn0") == 0 && tickets("mn1") == 0);
        // Later transactions on those keys commit.
        assertThat(ledger.move("cn0", 20, 21, 1)).isEqualTo(ledger.of(20));
        assertThat(ledger.move("cn1", 21, 20, 2)).isEqualTo(ledger.of(21));
        checkData(ledger, "cn0");
        restarted(ledger, "cn2", epoch + 1, cn2Back);
        checkData(ledger, "cn2");
        clean = true;
    }

    @Test
    @Order(3)
    void shouldRollForwardAComputeNodeKilledAfterItsRedoRecord() throws Exception {
        clean = false;
        final Ledger ledger = new Ledger(30, 31, 40, 41);
        ledger.move("cn1", 31, 30, 3); // key 31 first: the fault point waits for a move from key 30
        // cn1 halts once the redo record of this move is durable: decided, nothing written back.
        final long epoch = epochOf("cn1");
        final Future<ScytheClient.Outcome> inDoubt = impatient.callOn("cn1", "move", 30, 31, 1000);
        assertThat(cluster.node("cn1").process().waitFor(30, TimeUnit.SECONDS)).as("cn1 halted").isTrue();
        assertThat(cluster.node("cn1").process().exitValue()).isEqualTo(FaultPoints.HALT_EXIT_CODE);
        assertThat(cluster.node("cn1").logText()).contains("fault point afterRedo: halt");
        final JsonObject report = awaitFencedAndRecovered("cn1.e" + epoch);
        assertThat(report.getLong("applied")).as("both keys of the in-doubt move, once").isEqualTo(2);
        assertThat(report.getLong("incomplete")).isZero();
        assertUnknown(inDoubt, "the move whose CN died mid-commit");
        final java.util.concurrent.Future<Void> cn1Back = relaunch("cn1");
        ledger.moved(30, 31, 1000); // decided by its redo record: it must be in the data
        checkData(ledger, "cn0");
        assertThat(ledger.move("cn2", 30, 31, 1)).isEqualTo(ledger.of(30));
        restarted(ledger, "cn1", epoch + 1, cn1Back);
        checkData(ledger, "cn1");
        clean = true;
    }

    /**
     * The topology of docker/compose.yaml (1 TSO, 2 MNs, 3 CNs over the tcp fabric) as local processes: every CN adds
     * to keys 0..5 (on both memory nodes; no scenario above writes them, and none below reads their sum), and a
     * registration that outlived its node is neither picked nor waited on. After the kill scenarios, which each
     * leave three CNs (the killed one restarted).
     */
    @Test
    @Order(4)
    void shouldRunTheComposeTopologyOverTheTcpFabric() throws Exception {
        // Keys 0..5 live on both memory nodes (partitioned by key); every CN adds to each.
        final List<String> cns = List.of("cn0", "cn1", "cn2");
        for (final String cn : cns) {
            for (long k = 0; k < 6; k++) {
                final ScytheClient.Outcome o = client.callOn(cn, "add", k, k + 1).await(30, TimeUnit.SECONDS);
                assertThat(o).as(cn + " key " + k).isInstanceOf(ScytheClient.Outcome.Committed.class);
            }
        }
        final List<Long> values = new ArrayList<>();
        for (long k = 0; k < 6; k++) {
            final ScytheClient.Outcome o = client.call("get", k).await(30, TimeUnit.SECONDS);
            values.add(((ScytheClient.Outcome.Committed) o).reply().result());
        }
        assertThat(values).containsExactly(3L, 6L, 9L, 12L, 15L, 18L);
        shouldNeitherPickNorWaitOnARegistrationThatOutlivedItsNode(client);
    }

    /**
     * A registration of an event-bus node that is no longer a member (CI run 120: a CN's incarnation killed two
     * restarts earlier was in {@code __vertx.subs} again after the next restart, and every other request to that CN
     * waited out its 30 s timeout although it was never sent) is never picked, and a message routed to such a node
     * fails at once as not delivered while its registrations are removed. Before MemberOnlyClusterManager: half of
     * these requests timed out.
     */
    private static void shouldNeitherPickNorWaitOnARegistrationThatOutlivedItsNode(final ScytheClient client)
        throws Exception {
        final String gone = UUID.randomUUID().toString();
        final com.hazelcast.multimap.MultiMap<String, io.vertx.spi.cluster.hazelcast.impl.HazelcastRegistrationInfo>
            subs = ClusterAccess.hazelcast(client.vertx()).getMultiMap("__vertx.subs");
        subs.put("scythe.txn.cn0", new io.vertx.spi.cluster.hazelcast.impl.HazelcastRegistrationInfo(
            new io.vertx.core.spi.cluster.RegistrationInfo(gone, 1, false)));
        final long t0 = System.nanoTime();
        for (int i = 0; i < 6; i++) {
            assertThat(client.callOn("cn0", "get", 0).await(30, TimeUnit.SECONDS)).as("request " + i + " to cn0")
                .isInstanceOf(ScytheClient.Outcome.Committed.class);
        }
        assertThat(TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0)).as("6 requests, none waiting on %s", gone)
            .isLessThan(25_000); // below the 30 s registration wait it guards against, above a loaded machine's stalls
        final var manager = ((io.vertx.core.internal.VertxInternal) client.vertx()).clusterManager();
        final io.vertx.core.Promise<io.vertx.core.spi.cluster.NodeInfo> info = io.vertx.core.Promise.promise();
        manager.getNodeInfo(gone, info);
        ProcessClusters.eventually("the lookup of " + gone + " ends", 10_000, info.future()::isComplete);
        assertThat(info.future().cause()).as("the lookup of a node that is gone")
            .isInstanceOfSatisfying(io.vertx.core.eventbus.ReplyException.class, e -> assertThat(e.failureType())
                .isEqualTo(io.vertx.core.eventbus.ReplyFailure.NO_HANDLERS));
        // Removed after the message failed (off the event loop, one scan per node): waited for, bounded.
        ProcessClusters.eventually("the registration of " + gone + " removed", 10_000, () -> subs.get("scythe.txn.cn0")
            .stream().noneMatch(r -> r.unwrap().nodeId().equals(gone)));
        assertThat(subs.get("scythe.txn.cn0")).as("its registration, removed").isNotEmpty()
            .noneMatch(r -> r.unwrap().nodeId().equals(gone));
        System.out.println("a registration that outlived its node: checked in "
            + TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0) + " ms");
    }
}
