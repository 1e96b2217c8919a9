package io.scythe.cli;

import io.scythe.cluster.LocalCluster;
import io.scythe.cluster.ScytheClient;
import io.scythe.cluster.ScytheNode;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.security.SecureRandom;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicLongArray;

/**
 * {@code scythe chaos}: a local cluster of node processes under SmallBank from this (client) process over the event
 * bus, while compute nodes are SIGKILLed and SIGSTOPped/SIGCONTed and restarted; then the checks. The accounts are
 * split in two: the first half only pays each other ({@code SendPayment}: their total must not move, so no payment
 * was applied in part), the second half only gets deposits of 1 ({@code DepositChecking}), whose ledger bounds each
 * account: at least its acknowledged deposits (none lost), at most those plus the ones whose outcome is unknown
 * (none applied twice).
 *
 * <p>With {@code --mn-faults} two rounds of three fault a memory node instead (first): a SIGSTOP/SIGCONT shorter
 * than the lease on any live one, or (alternating, while fewer than k are down, k the backups per partition) a
 * SIGKILL. Each kill is checked for its failover (every CN promoted the backups and settled, and the load resumed
 * within {@link #MN_RESUME_BOUND_MS}); then, {@link #MN_REJOIN_DELAY_MS} later, a replacement process starts under
 * the killed node's name and must rejoin (re-replicated, a full copy on every CN) within the same bound, so a run
 * kills as many memory nodes as it has rounds for, at most k down at once. A pause the cluster failed over anyway
 * counts as a kill (STONITH's counterpart for memory nodes: a removed memory node exits when it runs again).
 *
 * <p>The faults come one at a time by default; with {@code --fault-interval} on a seeded Poisson schedule, each CN
 * fault handled on a thread of its own ({@link #handle}), the victims among the CNs no fault is busy with. The audits
 * read through {@link ServingReads}: on a CN that serves, the next one when a read does not commit, waiting (bounded,
 * logged) while none does.
 *
 * <p>A protocol that survives only so many compute-node faults per run on cluster nodes
 * ({@code ProtocolModule#clusterComputeNodeFaultLimit}: rcc-calvin, one) gets no more than that; the run says so and
 * drives the load to the end without more faults, and {@code --together} above it is refused. A CN that exits on its
 * own, or a start chaos kills after it timed out, counts toward that limit too; one past it fails the run naming the
 * limit ({@link #beyondFaultLimit}).
 */
@Command(name = "chaos", mixinStandardHelpOptions = true,
    description = {"Starts a local cluster (like `scythe cluster`), drives SmallBank from this process over the event "
        + "bus, repeatedly SIGKILLs a random compute node and pauses another (SIGSTOP past its lease, SIGCONT), "
        + "restarting each (with --mn-faults memory nodes too: paused, and killed and replaced); at the end checks "
        + "money conservation, every acknowledged transaction present, none applied twice or in part, no lock left "
        + "held, and prints the time from each fault to detection (fenced), to recovery done, and to throughput "
        + "back (for a memory node: to the backups promoted, settled, load resumed). Exit code 1 when a check "
        + "fails."})
public final class ChaosCommand implements Callable<Integer> {
    @Accepts(min = "1s")
    @Option(names = "--duration", defaultValue = "60s", description = "How long to inject faults (default: "
        + "${DEFAULT-VALUE}).")
    Duration duration;

    @Accepts(min = "1", max = "64")
    @Option(names = "--mns", defaultValue = "2", description = "Memory nodes (default: ${DEFAULT-VALUE}).")
    int mns;

    @Accepts(min = "2", max = "64")
    @Option(names = "--cns", defaultValue = "3", description = "Compute nodes, at least 2 (default: "
        + "${DEFAULT-VALUE}).")
    int cns;

    @Accepts(min = "4")
    @Option(names = "--accounts", defaultValue = "1000", description = "SmallBank accounts (default: "
        + "${DEFAULT-VALUE}).")
    long accounts;

    @Accepts(names = OptionChecks.ChaosProtocols.class)
    @Option(names = "--protocol", defaultValue = "scythe", description = "scythe (shared reader "
        + "tickets), scythe:exclusive (the paper's exclusive tickets), scythe-occ, ford-occ, farm-occ (protocols with "
        + "a redo log), lotus (its locks on compute nodes), motor (Lotus's baseline), rcc-nowait, "
        + "rcc-waitdie, rcc-occ, rcc-mvcc or rcc-sundial (RCC's, with their coordinator logs), selcc-2pl, selcc-occ, "
        + "selcc-to, sel-2pl (SELCC's latches) or aurogon (a dead coordinator's transactions resolved through the "
        + "backups; with --mn-faults a promoted memory node floors its reads first, and a killed one's replacement "
        + "rejoins, re-replicated by Aurogon's COPY) or rcc-calvin (one compute-node fault a run: a restarted node "
        + "rejoins the total order; with --mn-faults its memory nodes fail over, but a replacement cannot rejoin: "
        + "no re-replication for it) (default: "
        + "${DEFAULT-VALUE}).")
    String protocol;

    @Accepts(min = "1", max = "10000")
    @Option(names = "--outstanding", defaultValue = "16", description = "Transactions the client keeps in flight "
        + "(default: ${DEFAULT-VALUE}).")
    int outstanding;

    @Option(names = "--no-pauses", description = "Only SIGKILLs (default: SIGKILLs alternate with SIGSTOP/SIGCONT "
        + "pauses).")
    boolean noPauses;

    @Accepts(min = "1", max = "63")
    @Option(names = "--together", defaultValue = "1", description = "Compute nodes SIGKILLed at once in each "
        + "kill (fewer than --cns; Lotus Fig. 15 crashes 3 at once; default: ${DEFAULT-VALUE}).")
    int together;

    @Accepts(min = "1", max = "64")
    @Option(names = "--tso", defaultValue = "1", description = "TSO nodes: the service and a TSO proxy per further "
        + "node (default: ${DEFAULT-VALUE}).")
    int tso;

    @Option(names = "--tso-faults", description = "Also kill (and restart) TSO proxies and the TSO service; checks "
        + "that every commit after the service's restart has a larger timestamp than every commit before.")
    boolean tsoFaults;

    @Option(names = "--mn-faults", description = "Also fault memory nodes, two rounds of three: SIGSTOP/SIGCONT pauses "
        + "shorter than the lease on any live memory node, alternating with SIGKILLs while fewer than k (the backups "
        + "per partition) are down; a killed memory node's replacement process starts " + MN_REJOIN_DELAY_MS / 1000
        + " s after its failover settled and rejoins (re-replicated). A paused memory node the cluster failed over "
        + "anyway counts as a kill. Checks after each kill that every compute node promoted the backups and load "
        + "resumed, and that the replacement started and rejoined, each within " + MN_RESUME_BOUND_MS / 1000
        + " s. Needs "
        + "--mns >= 2 and a protocol that replicates.")
    boolean mnFaults;

    @Accepts(min = "100ms")
    @Option(names = "--fault-interval", description = "Mean time between faults: each next one is injected after an "
        + "exponentially distributed gap with this mean, on a compute node no other fault is busy with, while the "
        + "earlier ones are still being watched and restarted (so faults overlap; at least one compute node is left "
        + "serving). Default: none, one fault at a time, the next 2 s after the previous one's node was restarted "
        + "and throughput came back. For a soak: --duration 3h --fault-interval 2s.")
    Duration faultInterval;

    @Accepts(value = "any integer")
    @Option(names = "--seed", defaultValue = "1", description = "Picks accounts and victims (default: "
        + "${DEFAULT-VALUE}).")
    long seed;

    @Accepts(value = "a directory to write")
    @Option(names = "--dir", description = "Where node configs and logs go (default: ./chaos-NAME).")
    Path dir;

    /** Where the nodes' logs are (the recovery fallback reads them). */
    private Path logsDir;

    @picocli.CommandLine.Mixin
    LeaseOptions leaseOptions = new LeaseOptions();

    @Accepts(value = "JVM options")
    @Option(names = "--node-java-opts", defaultValue = "-Xmx384m -XX:+UseParallelGC",
        description = "JVM options of each node process (default: ${DEFAULT-VALUE}).")
    String nodeJavaOpts;

    private static final HttpClient HTTP = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(1)).build();
    private static final long CLIENT_TIMEOUT_MS = 3_000;
    private static final long WINDOW_MS = 200;
    /** An MN pause: well under the lease ({@link ScytheNode#LEASE_MS}), so the memory node should stay a member. */
    static final long MN_PAUSE_MS = ScytheNode.LEASE_MS / 3;
    /**
     * After an MN kill, every CN promoted and settled and the load back at half its rate within this bound. Not
     * seconds: a CN whose Lock RPC to the killed node failed after it was sent gives up its lease (its ticket may be
     * queued there), under load every CN, and settling waits for their recovery, so the pause includes restarting
     * CN processes (40-70 s each at load 40 on this machine).
     */
    static final long MN_RESUME_BOUND_MS = 120_000;
    /** How long a killed (or failed-over) memory node stays down before its replacement process starts. */
    static final long MN_REJOIN_DELAY_MS = 2_000;

    /**
     * How many compute-node faults the protocol survives per run on cluster nodes
     * ({@code ProtocolModule#clusterComputeNodeFaultLimit}; rcc-calvin: 1), and why: no more are injected, the load
     * going on to the end.
     */
    private int cnFaultLimit = Integer.MAX_VALUE;
    private String cnFaultLimitReason;
    /**
     * Compute nodes faulted so far: each victim of a kill, each pause, and each CN that exited on its own or whose
     * start chaos killed after it timed out (an incarnation lost all the same: the protocol's limit counts it too).
     * Handler and restart threads add to it beside the schedule.
     */
    private final java.util.concurrent.atomic.AtomicInteger cnFaulted = new java.util.concurrent.atomic.AtomicInteger();

    /** Backups per partition the memory nodes run with (read from mn0 once started): how many may be down at once. */
    private int backups;
    /** Memory nodes killed or failed over and not rejoined (a replacement that did not rejoin stays here). */
    private final java.util.Set<String> removedMns = new java.util.TreeSet<>();

    private LocalCluster cluster;
    private ScytheClient client;
    private final AtomicBoolean driving = new AtomicBoolean(true);
    private final long startNs = System.nanoTime();
    /** Commits per {@link #WINDOW_MS} window since the start. */
    private final AtomicLongArray commitsByWindow = new AtomicLongArray(1 << 16);
    private AtomicLongArray depositsAcked;
    private AtomicLongArray depositsUnknown;
    private final AtomicLong committed = new AtomicLong();
    private final AtomicLong aborted = new AtomicLong();
    private final AtomicLong unknown = new AtomicLong();
    /** Aborted and rejected outcomes by the start of their reason. */
    private final java.util.Map<String, java.util.concurrent.atomic.LongAdder> abortReasons =
        new java.util.concurrent.ConcurrentHashMap<>();
    /** The largest commit timestamp acknowledged so far. */
    private final AtomicLong lastCommitTs = new AtomicLong();
    /** The TSO restart being watched: commits sent after it must carry larger timestamps than any before. */
    private volatile TsoWatch tsoWatch;

    private static final class TsoWatch {
        final long lastBefore;
        volatile long restartedNs = Long.MAX_VALUE;
        final AtomicLong firstAfter = new AtomicLong(Long.MAX_VALUE);

        TsoWatch(final long lastBefore) {
            this.lastBefore = lastBefore;
        }
    }

    @Override
    public Integer call() throws Exception {
        if (cns < 2 || mns < 1 || accounts < 4 || outstanding < 1 || together < 1 || together >= cns) {
            throw new IllegalArgumentException("chaos needs --cns >= 2, --mns >= 1, --accounts >= 4, --outstanding >= 1 "
                + "and 1 <= --together < --cns");
        }
        final io.scythe.txn.Protocol run = io.scythe.txn.spi.ProtocolRegistry.protocol(protocol);
        final io.scythe.txn.spi.ProtocolModule peerModule = io.scythe.txn.spi.ProtocolRegistry.peerModuleOf(run);
        final String clusterRefusal = peerModule == null ? null : peerModule.clusterRefusal(run);
        final String faultRefusal = clusterRefusal != null ? clusterRefusal
            : io.scythe.txn.spi.ProtocolRegistry.moduleOf(protocol).clusterComputeNodeFaultRefusal(run);
        if (faultRefusal != null) { // refused before any process starts, naming what is missing (rcc-calvin)
            throw new IllegalArgumentException("chaos --protocol " + protocol + ": "
                + (clusterRefusal != null ? "cluster nodes cannot run it yet: "
                : "cluster nodes run it, but not through the compute-node kills, pauses and restarts chaos injects: ")
                + faultRefusal + "; its compute-node crashes are tested in the simulator (scythe sim --explore N "
                + "--crashes --cns 3 --mns 2 --protocols " + protocol + ")");
        }
        final io.scythe.txn.spi.ProtocolModule module = io.scythe.txn.spi.ProtocolRegistry.moduleOf(protocol);
        cnFaultLimit = module.clusterComputeNodeFaultLimit(run);
        cnFaultLimitReason = module.clusterComputeNodeFaultLimitReason(run);
        if (together > cnFaultLimit) {
            throw new IllegalArgumentException("chaos --protocol " + protocol + " --together " + together + ": cluster "
                + "nodes survive at most " + cnFaultLimit + " compute-node fault(s) per run: " + cnFaultLimitReason);
        }
        if (mnFaults && mns < 2) {
            throw new IllegalArgumentException("--mn-faults needs --mns >= 2: a memory node fails over to backups on "
                + "other memory nodes");
        }
        if (mnFaults) {
            final String refused = io.scythe.txn.spi.ProtocolRegistry.moduleOf(protocol)
                .clusterMemoryNodeFailoverRefusal(io.scythe.txn.spi.ProtocolRegistry.protocol(protocol));
            if (refused != null) {
                throw new IllegalArgumentException("--mn-faults with protocol " + protocol + ": cluster nodes do not "
                    + "fail its memory nodes over: " + refused);
            }
        }
        final String name = "chaos-" + ProcessHandle.current().pid();
        final Path where = dir != null ? dir : Path.of(name);
        logsDir = where;
        final byte[] secret = new byte[24];
        new SecureRandom().nextBytes(secret);
        if (tso < 1) {
            throw new IllegalArgumentException("--tso " + tso + ": the service is one node, proxies the rest");
        }
        final Thread hook = new Thread(() -> {
            final LocalCluster c = cluster;
            if (c != null) {
                c.close();
            }
        }, "scythe-chaos-stop");
        Runtime.getRuntime().addShutdownHook(hook);
        try {
            startedWithRetries(START_ATTEMPTS, attempt -> {
                cluster = new LocalCluster(attempt == 1 ? name : name + "-" + attempt,
                    HexFormat.of().formatHex(secret), mns, cns, tso - 1,
                    new JsonObject().put("name", "smallbank").put("accounts", accounts),
                    new JsonObject().put("provider", "shm").put("costModel", new JsonObject().put("profile", "zero")),
                    protocol, where, ClusterCommand.nodeLauncher(nodeJavaOpts));
                leaseOptions.apply(cluster);
                return cluster;
            }, c -> c.start(180_000), where);
            logToFile(where.resolve("client.log"));
            client = ScytheClient.join(cluster.clientConfig().access(), CLIENT_TIMEOUT_MS);
            System.out.printf("chaos: cluster %s ready: %d MN, %d CN, 1 TSO (shm fabric, %s); logs in %s%n", cluster.cluster(),
                mns, cns, protocol, where.toAbsolutePath());
            if (mnFaults) {
                // Asked again while mn0 does not answer (at load 50 here its HTTP did not within the 1 s connect
                // timeout, and the run refused itself for "0 backups").
                JsonObject copies = get("mn0", "/copies");
                for (int tries = 1; copies == null && tries < 20; tries++) {
                    Thread.sleep(500);
                    copies = get("mn0", "/copies");
                }
                if (copies == null) {
                    throw new IllegalStateException("--mn-faults: mn0 did not say how many backups the memory nodes "
                        + "run with (GET /copies unanswered for 10 s)");
                }
                backups = copies.getInteger("backups", 0);
                if (backups < 1) {
                    throw new IllegalArgumentException("--mn-faults: the memory nodes run with " + backups + " backups "
                        + "(protocol " + protocol + ", " + mns + " memory nodes): a killed memory node would lose its "
                        + "partitions; use a protocol that replicates");
                }
                System.out.printf("chaos: memory-node faults: %d backup(s) per partition, so at most %d MN(s) down at "
                    + "once (a killed MN's replacement starts %d ms after its failover settled and rejoins); pauses "
                    + "of %d ms (lease %d ms) on any live MN%n",
                    backups, backups, MN_REJOIN_DELAY_MS, MN_PAUSE_MS, ScytheNode.LEASE_MS);
            }
            return run();
        } finally {
            driving.set(false);
            if (client != null) {
                try {
                    client.close();
                } catch (final Exception e) {
                    System.out.println("chaos: client did not leave the cluster cleanly: " + e);
                }
            }
            Runtime.getRuntime().removeShutdownHook(hook);
            if (cluster != null) {
                cluster.close();
            }
            System.out.println("chaos: cluster stopped");
        }
    }

    /** How many times chaos starts a fresh cluster before it gives the run up (issue 23 §3). */
    static final int START_ATTEMPTS = 3;

    /** Makes attempt number {@code attempt} (from 1) of a cluster. */
    @FunctionalInterface
    interface ClusterMaker<C> {
        C make(int attempt) throws Exception;
    }

    /** Starts a cluster made by {@link ClusterMaker}. */
    @FunctionalInterface
    interface ClusterStart<C> {
        void start(C cluster) throws Exception;
    }

    /**
     * Makes and starts a cluster, and when its start fails (on a loaded machine a node's first Hazelcast map call can
     * run out of retries while the membership settles, and the node exits: 5 of 8 chaos starts in stop 45), says so,
     * stops it and starts a fresh one (new name, new ports), at most {@code attempts} in all; the last failure is
     * thrown. Interruption is not retried.
     */
    static <C extends AutoCloseable> C startedWithRetries(final int attempts, final ClusterMaker<C> make,
        final ClusterStart<C> start, final Path logs) throws Exception {
        for (int attempt = 1; ; attempt++) {
            final C c = make.make(attempt);
            try {
                start.start(c);
                return c;
            } catch (final InterruptedException e) {
                throw e;
            } catch (final Exception e) {
                if (attempt >= attempts) {
                    System.out.printf("chaos: cluster start failed (attempt %d of %d): %s; giving the run up%n",
                        attempt, attempts, firstLine(e));
                    throw e;
                }
                System.out.printf("chaos: cluster start failed (attempt %d of %d): %s; stopping it and starting a "
                    + "fresh cluster (new ports; the node logs in %s go on below this attempt's)%n", attempt, attempts,
                    firstLine(e), logs);
                c.close();
            }
        }
    }

    private static String firstLine(final Exception e) {
        final String m = e.getMessage();
        return e.getClass().getSimpleName() + ": " + (m == null ? "" : m.lines().findFirst().orElse(""));
    }

    /** Loggers whose records go to the client's log file (held here: the logging framework keeps them weakly). */
    private final List<java.util.logging.Logger> fileLoggers = new ArrayList<>();

    /**
     * The client's Hazelcast and Vert.x warnings (members suspected, connections refused: what chaos causes) go to
     * {@code file}, so the summary stays readable.
     */
    private void logToFile(final Path file) throws java.io.IOException {
        java.nio.file.Files.createDirectories(file.getParent());
        final java.util.logging.FileHandler handler = new java.util.logging.FileHandler(file.toString(), true);
        handler.setFormatter(new java.util.logging.SimpleFormatter());
        for (final String name : List.of("com.hazelcast", "io.vertx", "io.netty")) {
            final java.util.logging.Logger logger = java.util.logging.Logger.getLogger(name);
            logger.setUseParentHandlers(false);
            logger.addHandler(handler);
            fileLoggers.add(logger);
        }
    }

    private int run() throws Exception {
        final long[] initial = audit("start-up audit");
        depositsAcked = new AtomicLongArray((int) accounts);
        depositsUnknown = new AtomicLongArray((int) accounts);
        final CountDownLatch stopped = drive();
        final SplittableRandom random = new SplittableRandom(seed);
        final List<JsonObject> faults = new java.util.concurrent.CopyOnWriteArrayList<>();
        Thread.sleep(4_000); // a baseline to compare throughput with
        final long end = System.nanoTime() + duration.toNanos();
        boolean kill = true;
        int round = 0;
        int mnRound = 0;
        final boolean scheduled = faultInterval != null;
        long nextFaultNs = System.nanoTime();
        final List<Thread> handlers = new ArrayList<>();
        while (System.nanoTime() < end) {
            reviveUnplanned(faults);
            if (scheduled) {
                // The next fault an exponential gap after the later of the last one's time and now (no burst after
                // a fault that held the schedule up: a memory node's failover, an unplanned restart).
                nextFaultNs = Math.max(nextFaultNs, System.nanoTime())
                    + nextGapNs(random, faultInterval.toNanos());
                while (!handlerFailed && System.nanoTime() < Math.min(nextFaultNs, end)) {
                    Thread.sleep(Math.max(1, Math.min(50, (nextFaultNs - System.nanoTime()) / 1_000_000)));
                }
                if (handlerFailed || System.nanoTime() >= end) {
                    break;
                }
            }
            if (tsoFaults && round++ % 2 == 1) {
                // Every other round a TSO fault first: a proxy killed (if there is one), then the service.
                try {
                    faults.add(tso > 1 && round % 4 == 2 ? killProxy("proxy" + (1 + random.nextInt(tso - 1)))
                        : killTsoService());
                } catch (final Exception e) {
                    faults.add(new JsonObject().put("fault", "TSO").put("cn", "tso").put("error", String.valueOf(e)));
                    System.out.println("chaos: TSO fault: " + e);
                    break;
                }
                pauseBetween(scheduled);
            }
            final boolean killMn = mnFaults && (noPauses ? removedMns.size() < backups
                : mnKillTurn(faults, removedMns.size(), backups));
            // Two rounds of three fault a memory node, first (with --no-pauses only while kills are left): they take
            // seconds, a CN fault's restart of a JVM takes tens of seconds on a loaded machine.
            if (mnFaults && mnRound++ % 3 != 2 && (killMn || !noPauses)) {
                final String mn = liveMn(random);
                try {
                    faults.add(killMn ? killMn(mn) : pauseMn(mn));
                } catch (final Exception e) {
                    faults.add(new JsonObject().put("fault", killMn ? "SIGKILL" : "SIGSTOP").put("cn", mn)
                        .put("mn", true).put("error", String.valueOf(e)));
                    System.out.println("chaos: " + mn + ": " + e);
                    break;
                }
                pauseBetween(scheduled);
                continue;
            }
            if (cnFaulted.get() + (kill ? together : 1) > cnFaultLimit) {
                System.out.printf("chaos: protocol %s survives %d compute-node fault(s) per run on cluster nodes, all "
                    + "injected; the load goes on without more until the end (%s)%n", protocol, cnFaultLimit,
                    cnFaultLimitReason);
                while (!handlerFailed && System.nanoTime() < end) {
                    reviveUnplanned(faults);
                    Thread.sleep(Math.max(1, Math.min(500, (end - System.nanoTime()) / 1_000_000)));
                }
                break;
            }
            cnFaulted.addAndGet(kill ? together : 1);
            if (scheduled) {
                final List<String> victims = idleVictims(random, kill ? together : 1, end);
                if (victims.isEmpty()) {
                    break; // the run ended while every compute node was busy with a fault
                }
                handlers.add(handle(victims, kill, faults));
                kill = !kill || noPauses;
                continue;
            }
            final String victim = "cn" + random.nextInt(cns);
            try {
                if (kill) {
                    final List<String> victims = new ArrayList<>(List.of(victim));
                    while (victims.size() < together) {
                        final String other = "cn" + random.nextInt(cns);
                        if (!victims.contains(other)) {
                            victims.add(other);
                        }
                    }
                    faults.addAll(kill(victims));
                } else {
                    faults.add(pause(victim));
                }
            } catch (final Exception e) {
                // The cluster did not come back as expected: stop injecting, still check what the data says.
                faults.add(new JsonObject().put("fault", kill ? "SIGKILL" : "SIGSTOP").put("cn", victim)
                    .put("error", String.valueOf(e)));
                System.out.println("chaos: " + victim + ": " + e);
                break;
            }
            kill = !kill || noPauses;
            Thread.sleep(2_000);
        }
        for (final Thread t : handlers) {
            t.join(TimeUnit.MINUTES.toMillis(5)); // each handler's waits are bounded (restart 180 s, watch 60 s)
        }
        if (scheduled) {
            System.out.printf("chaos: faults injected every %s on average: %d handled side by side; %d ms waited "
                + "for an idle compute node%n", faultInterval, handlers.size(), victimWaitMs);
        }
        reviveUnplanned(faults);
        driving.set(false);
        stopped.await(CLIENT_TIMEOUT_MS * 3, TimeUnit.MILLISECONDS);
        Thread.sleep(1_000);
        return check(initial, faults);
    }

    /** Compute nodes a fault handler is busy with (killed or paused, being watched and restarted). */
    private final java.util.Set<String> busy = java.util.concurrent.ConcurrentHashMap.newKeySet();
    /** Set when a fault handler running beside the schedule failed: no more faults are injected. */
    private volatile boolean handlerFailed;
    /** Time the schedule waited for a compute node no fault was busy with (ms). */
    private long victimWaitMs;

    /** Between two faults one at a time: 2 s; with {@code --fault-interval} the schedule waits instead. */
    private static void pauseBetween(final boolean scheduled) throws InterruptedException {
        if (!scheduled) {
            Thread.sleep(2_000);
        }
    }

    /** An exponentially distributed gap with mean {@code meanNs} (the faults a Poisson process). */
    static long nextGapNs(final SplittableRandom random, final long meanNs) {
        return Math.round(-Math.log(1 - random.nextDouble()) * meanNs);
    }

    /**
     * {@code count} compute nodes, picked at random among those no fault is busy with and running, leaving at least
     * one more of them serving (a recovery needs a live CN): waits for that many until {@code endNs}.
     *
     * @return the victims, or none when the run ended first
     */
    private List<String> idleVictims(final SplittableRandom random, final int count, final long endNs)
        throws InterruptedException {
        final long t0 = System.nanoTime();
        while (System.nanoTime() < endNs) {
            final List<String> idle = new ArrayList<>();
            for (int c = 0; c < cns; c++) {
                final Process p = cluster.node("cn" + c).process();
                if (!busy.contains("cn" + c) && !restarting.contains("cn" + c) && p != null && p.isAlive()) {
                    idle.add("cn" + c);
                }
            }
            final List<String> victims = pickVictims(idle, count, random);
            if (!victims.isEmpty()) {
                victimWaitMs += ms(t0);
                return victims;
            }
            Thread.sleep(50);
        }
        victimWaitMs += ms(t0);
        return List.of();
    }

    /** {@code count} of {@code idle} at random, or none when fewer than {@code count + 1} are idle. */
    static List<String> pickVictims(final List<String> idle, final int count, final SplittableRandom random) {
        if (idle.size() < count + 1) {
            return List.of();
        }
        final List<String> pool = new ArrayList<>(idle);
        final List<String> victims = new ArrayList<>();
        while (victims.size() < count) {
            victims.add(pool.remove(random.nextInt(pool.size())));
        }
        return victims;
    }

    /** Kills (together) or pauses {@code victims} on a thread of its own, busy with them until it is done. */
    private Thread handle(final List<String> victims, final boolean kill, final List<JsonObject> faults) {
        busy.addAll(victims);
        final Thread t = new Thread(() -> {
            try {
                faults.addAll(kill ? kill(victims) : List.of(pause(victims.get(0))));
            } catch (final Exception e) {
                faults.add(new JsonObject().put("fault", kill ? "SIGKILL" : "SIGSTOP").put("cn", victims.get(0))
                    .put("error", String.valueOf(e)));
                System.out.println("chaos: " + victims + ": " + e);
                handlerFailed = true;
            } finally {
                busy.removeAll(victims);
            }
        }, "scythe-chaos-fault-" + String.join("-", victims));
        t.start();
        return t;
    }

    /** SIGKILLs a TSO proxy and restarts it; transactions must go on through the other sources meanwhile. */
    private JsonObject killProxy(final String proxy) throws Exception {
        final double baseline = rateBefore(System.nanoTime(), 10);
        final long t0 = System.nanoTime();
        cluster.signal(proxy, "KILL");
        cluster.node(proxy).process().waitFor(10, TimeUnit.SECONDS);
        final JsonObject fault = new JsonObject().put("fault", "SIGKILL").put("cn", proxy).put("tso", true)
            .put("baselinePerS", Math.round(baseline));
        cluster.restart(proxy, 180_000);
        fault.put("restartedMs", ms(t0));
        awaitThroughput(fault, t0, baseline);
        print(fault);
        return fault;
    }

    /**
     * SIGKILLs the TSO service and restarts it into the running cluster; every commit sent after the restart must carry
     * a larger timestamp than every commit acknowledged before the kill (the restarted counter starts above them).
     */
    private JsonObject killTsoService() throws Exception {
        final double baseline = rateBefore(System.nanoTime(), 10);
        final long t0 = System.nanoTime();
        final TsoWatch watch = new TsoWatch(lastCommitTs.get());
        cluster.signal("tso", "KILL");
        cluster.node("tso").process().waitFor(10, TimeUnit.SECONDS);
        final JsonObject fault = new JsonObject().put("fault", "SIGKILL").put("cn", "tso").put("tso", true)
            .put("baselinePerS", Math.round(baseline)).put("lastTsBefore", watch.lastBefore);
        cluster.restart("tso", 180_000);
        watch.restartedNs = System.nanoTime();
        tsoWatch = watch;
        fault.put("restartedMs", ms(t0));
        // No timestamps while it was down: throughput is back no sooner than the restart (transactions that had
        // theirs finish meanwhile, which must not count).
        awaitThroughput(fault, t0, watch.restartedNs, baseline);
        Thread.sleep(1_000);
        tsoWatch = null;
        final long firstAfter = watch.firstAfter.get();
        fault.put("firstTsAfter", firstAfter == Long.MAX_VALUE ? null : firstAfter);
        if (firstAfter == Long.MAX_VALUE) {
            fault.put("error", "no commit after the TSO service restarted");
        } else if ((protocol.equals("scythe") || protocol.startsWith("scythe:")) && firstAfter <= watch.lastBefore) {
            // (Scythe's commit timestamps come from the TSO; FORD's and FaRM's do not.)
            fault.put("error", "a commit after the TSO restart has timestamp " + firstAfter + ", not above "
                + watch.lastBefore + " acknowledged before it");
        }
        print(fault);
        System.out.printf("chaos: TSO restart: last timestamp acknowledged before %d, first sent after %s%n",
            watch.lastBefore, fault.getValue("firstTsAfter"));
        return fault;
    }

    /** Each CN's epoch when last asked (what a CN that exits on its own was). */
    private final java.util.Map<String, Long> knownEpochs = new java.util.concurrent.ConcurrentHashMap<>();

    /**
     * A CN that exited although no fault was aimed at it lost its lease on its own (the cluster declared it dead:
     * on a loaded machine a starved member misses its heartbeats). That is a fault too: it must be fenced and
     * recovered like the others, and it is restarted under a new epoch, as `scythe cluster` does.
     */
    private void reviveUnplanned(final List<JsonObject> faults) throws Exception {
        faults.addAll(causedFaults);
        causedFaults.clear();
        for (int m = 0; m < mns && mnFaults; m++) {
            // A memory node that exited unasked (failed over: its lease lost to starvation) is a kill: failed over, then replaced.
            final String mn = "mn" + m;
            final Process p = cluster.node(mn).process();
            if (removedMns.contains(mn) || p == null || p.isAlive()) {
                continue;
            }
            final long t0 = System.nanoTime();
            removedMns.add(mn);
            final JsonObject fault = new JsonObject().put("fault", "lost (unplanned, exit " + p.exitValue() + ")")
                .put("cn", mn).put("mn", true).put("unplanned", true);
            System.out.println("chaos: " + mn + " exited on its own (" + fault.getString("fault") + ")");
            if (removedMns.size() > backups) {
                fault.put("error", "memory nodes " + removedMns + " lost, more than the " + backups + " backup(s) "
                    + "per partition");
            } else {
                failedOver(fault, mn, t0, rateBefore(t0, 10));
                rejoin(fault, mn);
            }
            print(fault);
            faults.add(fault);
        }
        for (int c = 0; c < cns; c++) {
            final String cn = "cn" + c;
            final Process p = cluster.node(cn).process();
            if (busy.contains(cn) || restarting.contains(cn)) {
                continue; // a fault handler beside the schedule watches and restarts it
            }
            if (p != null && p.isAlive()) {
                final JsonObject h = health(cn);
                if (h != null && h.getLong("epoch") != null) {
                    knownEpochs.put(cn, h.getLong("epoch"));
                }
                continue;
            }
            final long t0 = System.nanoTime();
            final String fabricNode = exitedIncarnation(logsDir, cn, p == null ? -1 : p.pid(),
                knownEpochs.getOrDefault(cn, 1L));
            final JsonObject fault = new JsonObject().put("fault", "lease lost (unplanned, exit "
                + (p == null ? "-" : p.exitValue()) + ")").put("cn", fabricNode).put("unplanned", true);
            System.out.println("chaos: " + cn + " exited on its own (" + fault.getString("fault") + "); restarting");
            countUnplanned(fault);
            observe(fault, cn, fabricNode, t0);
            if (restartNoting(() -> restartPatiently(cn, fault), fault)) {
                fault.put("restartedMs", ms(t0));
            }
            print(fault);
            faults.add(fault);
        }
    }

    /**
     * Counts a compute-node fault chaos did not schedule (an exit on its own, a timed-out start killed) toward the
     * protocol's per-run limit: no more are injected once it is reached, and one past it fails the run naming why,
     * since the protocol does not claim to survive it (before, such a run gave up later with a less clear error).
     */
    private void countUnplanned(final JsonObject fault) {
        beyondFaultLimit(fault, cnFaulted.incrementAndGet(), cnFaultLimit, cnFaultLimitReason, protocol);
    }

    /**
     * Marks {@code fault} failed when it is compute-node fault number {@code faulted} and the protocol survives only
     * {@code limit} per run; returns whether it did.
     */
    static boolean beyondFaultLimit(final JsonObject fault, final int faulted, final int limit, final String reason,
                                    final String protocol) {
        if (faulted <= limit) {
            return false;
        }
        final String beyond = "compute-node fault " + faulted + " of this run, beyond the " + limit + " protocol "
            + protocol + " survives on cluster nodes (" + reason + ")";
        fault.put("error", fault.containsKey("error") ? fault.getString("error") + "; " + beyond : beyond);
        return true;
    }

    /** A restart of a compute node (it may fail). */
    @FunctionalInterface
    interface Restart {
        void run() throws Exception;
    }

    /**
     * Runs {@code restart} of a CN that exited on its own; when it fails (twice, {@link #restartPatiently}: a starved
     * cluster's Hazelcast calls at a start fail within their bounds), notes that in {@code fault} as its error, a
     * failure the end checks list, and returns false: the CN stays down and the next round tries again. A soak
     * (issue 23 section 3) ended with no end checks at all when a CN's second restart in a round failed (its
     * {@code nextEpoch} lock call against a partition owner that had left).
     */
    static boolean restartNoting(final Restart restart, final JsonObject fault) throws InterruptedException {
        try {
            restart.run();
            return true;
        } catch (final InterruptedException stop) {
            throw stop;
        } catch (final Exception e) {
            final String first = String.valueOf(e.getMessage()).lines().findFirst().orElse("");
            System.out.println("chaos: " + fault.getString("cn") + ": restart failed again (" + first + "); left down "
                + "until the next round");
            fault.put("error", "restart after it exited failed: " + first);
            return false;
        }
    }

    /**
     * The incarnation ({@code cnX.eN}) of compute node {@code cn} whose process ({@code pid}; -1 when none) ended on its own: the
     * one its log's last "scythe node cnX ready: ..., fabric cnX.eN, ..., pid P" line names for that process's pid
     * (every start prints it, NodeMain#run). The epoch last polled ({@code knownEpoch}) only when the log names none:
     * it is stale after a restart the schedule did not poll (soakports' soak: cn0.e2, restarted after a SIGKILL, lost
     * its lease and was reported as cn0.e1, "recovered 0 ms" by the old incarnation's recovery).
     */
    static String exitedIncarnation(final Path logsDir, final String cn, final long pid, final long knownEpoch) {
        if (logsDir != null && pid > 0) {
            final String ready = "scythe node " + cn + " ready: ";
            final String ofPid = ", pid " + pid;
            try (java.util.stream.Stream<String> lines = java.nio.file.Files.lines(logsDir.resolve("node-" + cn
                + ".log"), java.nio.charset.StandardCharsets.ISO_8859_1)) {
                final String last = lines.filter(l -> l.startsWith(ready) && l.endsWith(ofPid))
                    .reduce((a, b) -> b).orElse(null);
                final int at = last == null ? -1 : last.indexOf(", fabric ");
                if (at >= 0) {
                    final int end = last.indexOf(',', at + 9);
                    return last.substring(at + 9, end < 0 ? last.length() : end);
                }
            } catch (final java.io.IOException | java.io.UncheckedIOException unreadable) {
                // no log: the epoch last polled below
            }
        }
        return cn + ".e" + knownEpoch;
    }

    /** CN faults a memory-node fault caused (CNs that gave up), added at the next round. */
    private final List<JsonObject> causedFaults = new java.util.concurrent.CopyOnWriteArrayList<>();
    private final java.util.Set<String> restarting = java.util.concurrent.ConcurrentHashMap.newKeySet();

    /**
     * Restarts, each on a thread of its own added to {@code restarts}, the CNs that exited while a memory node's
     * failover is watched: a CN whose Lock RPC to the lost memory node failed after it was sent gives up its lease (its
     * ticket may be queued there), under load every CN at once, and the failover settles only once they are
     * recovered, which needs a live CN. So they are restarted at once, not after their recovery as between rounds;
     * each is a fault of its own ({@code unplanned}, noted with the memory node it followed).
     */
    private void restartExitedCns(final List<Thread> restarts) {
        for (int c = 0; c < cns; c++) {
            final String cn = "cn" + c;
            final Process p = cluster.node(cn).process();
            if (p == null || p.isAlive() || busy.contains(cn) || !restarting.add(cn)) {
                continue;
            }
            final long t0 = System.nanoTime();
            final String fabricNode = exitedIncarnation(logsDir, cn, p == null ? -1 : p.pid(),
                knownEpochs.getOrDefault(cn, 1L));
            final JsonObject fault = new JsonObject().put("fault", "lease lost (unplanned, exit " + p.exitValue()
                + ")").put("cn", fabricNode).put("unplanned", true).put("note", "exited during a memory node's "
                + "failover");
            System.out.println("chaos: " + cn + " exited during a memory node's failover (" + fault.getString("fault")
                + "); restarting at once");
            countUnplanned(fault);
            final Thread t = new Thread(() -> {
                try {
                    if (restartNoting(() -> restartPatiently(cn, fault), fault)) {
                        fault.put("restartedMs", ms(t0));
                        observe(fault, "", fabricNode, t0); // restarted: its new incarnation may recover the old
                    }
                } catch (final Exception e) {
                    fault.put("error", "watching it after its restart: " + e.getMessage());
                } finally {
                    restarting.remove(cn);
                    print(fault);
                    causedFaults.add(fault);
                }
            }, "scythe-chaos-restart-" + cn);
            t.start();
            restarts.add(t);
        }
    }

    /**
     * How long one account read of an audit, or the wait for a serving compute node before it, may take: CN
     * restarts after a memory node's failover take 40-70 s each at load 40 on this machine.
     */
    static final long READ_BOUND_MS = 180_000;

    /** Reads (see {@link ServingReads}) on the compute nodes that serve, by this client over the event bus. */
    private ServingReads servingReads() {
        return new ServingReads(new ServingReads.Cluster() {
            private final List<String> names = java.util.stream.IntStream.range(0, cns).mapToObj(c -> "cn" + c)
                .toList();

            @Override
            public List<String> cns() {
                return names;
            }

            @Override
            public JsonObject health(final String cn) {
                return ChaosCommand.this.health(cn);
            }

            @Override
            public boolean visible(final String cn) {
                final List<String> seen = client.computeNodes();
                return seen.isEmpty() || seen.contains(cn); // empty: the client does not know, the event bus may
            }

            @Override
            public long nanoTime() {
                return System.nanoTime();
            }

            @Override
            public void sleep(final long ms) throws InterruptedException {
                Thread.sleep(ms);
            }
        }, READ_BOUND_MS, line -> System.out.println("chaos: " + line));
    }

    /**
     * Every account's money (savings plus checking), read by committed Audit transactions on a serving compute node
     * (another one when it does not commit there; waiting, bounded and logged, while none serves).
     */
    private long[] audit(final String purpose) throws Exception {
        final long[] money = new long[(int) accounts];
        final ServingReads reads = servingReads();
        reads.awaitServing(purpose);
        for (int a = 0; a < accounts; a++) {
            final long account = a;
            money[a] = reads.read(purpose + ": account " + a, cn -> client.callOn(cn, "Audit", account)
                .await(CLIENT_TIMEOUT_MS * 2, TimeUnit.MILLISECONDS)).reply().result();
        }
        if (reads.retries() > 0 || reads.waitedMs() > 0) {
            System.out.printf("chaos: %s: %d read(s) retried on another compute node, %d ms waited for one to "
                + "serve%n", purpose, reads.retries(), reads.waitedMs());
        }
        return money;
    }

    /** The client: {@link #outstanding} closed loops, half payments in the first half, half deposits in the second. */
    private CountDownLatch drive() {
        final CountDownLatch stopped = new CountDownLatch(outstanding);
        final long half = accounts / 2;
        for (int i = 0; i < outstanding; i++) {
            final SplittableRandom random = new SplittableRandom(seed * 1_000 + i);
            final Runnable[] next = new Runnable[1];
            next[0] = () -> {
                if (!driving.get()) {
                    stopped.countDown();
                    return;
                }
                final boolean deposit = random.nextBoolean();
                final long a = deposit ? half + random.nextLong(accounts - half) : random.nextLong(half);
                final long b = (a + 1 + random.nextLong(half - 1)) % half;
                final long sentNs = System.nanoTime();
                final var call = deposit ? client.call("DepositChecking", a, 0, 1)
                    : client.call("SendPayment", a, b, 1);
                call.onComplete(ar -> {
                    final ScytheClient.Outcome o = ar.succeeded() ? ar.result()
                        : new ScytheClient.Outcome.Unknown(String.valueOf(ar.cause()));
                    if (o instanceof ScytheClient.Outcome.Committed c) {
                        final long ts = c.reply().commitTs();
                        lastCommitTs.accumulateAndGet(ts, Math::max);
                        final TsoWatch watch = tsoWatch;
                        if (watch != null && sentNs > watch.restartedNs) {
                            watch.firstAfter.accumulateAndGet(ts, Math::min);
                        }
                        committed.incrementAndGet();
                        commitsByWindow.incrementAndGet(window(System.nanoTime()));
                        if (deposit) {
                            depositsAcked.incrementAndGet((int) a);
                        }
                    } else if (o instanceof ScytheClient.Outcome.Unknown) {
                        unknown.incrementAndGet();
                        if (deposit) {
                            depositsUnknown.incrementAndGet((int) a);
                        }
                    } else {
                        aborted.incrementAndGet(); // aborted or rejected: it did not and will not commit
                        final String why = o.toString();
                        abortReasons.computeIfAbsent(why.substring(0, Math.min(90, why.length())),
                            k -> new java.util.concurrent.atomic.LongAdder()).increment();
                    }
                    if (o instanceof ScytheClient.Outcome.Rejected) {
                        // No coordinator took it (one starting or leaving): a short pause, not a spin.
                        client.vertx().setTimer(10, t -> next[0].run());
                        return;
                    }
                    next[0].run();
                });
            };
            client.vertx().runOnContext(v -> next[0].run());
        }
        return stopped;
    }

    private int window(final long nowNs) {
        return (int) Math.min(commitsByWindow.length() - 1, TimeUnit.NANOSECONDS.toMillis(nowNs - startNs)
            / WINDOW_MS);
    }

    /** Commits per second over the {@code windows} windows before {@code nowNs}. */
    private double rateBefore(final long nowNs, final int windows) {
        final int last = window(nowNs);
        long sum = 0;
        for (int w = Math.max(0, last - windows); w < last; w++) {
            sum += commitsByWindow.get(w);
        }
        return sum * 1000.0 / (windows * WINDOW_MS);
    }

    /** SIGKILLs {@code victims} at once; one fault each, all timed from the same signal. */
    private List<JsonObject> kill(final List<String> victims) throws Exception {
        final List<String> fabricNodes = new ArrayList<>();
        for (final String victim : victims) {
            fabricNodes.add(victim + ".e" + epochOf(victim));
        }
        final double baseline = rateBefore(System.nanoTime(), 10);
        final long t0 = System.nanoTime();
        for (final String victim : victims) {
            cluster.signal(victim, "KILL");
        }
        final List<JsonObject> group = new ArrayList<>();
        for (final String fabricNode : fabricNodes) {
            group.add(atWall(new JsonObject().put("fault", victims.size() == 1 ? "SIGKILL" : "SIGKILL x"
                + victims.size()).put("cn", fabricNode).put("baselinePerS", Math.round(baseline)), t0));
        }
        final long deadline = t0 + TimeUnit.SECONDS.toNanos(60);
        boolean all = false;
        while (!all && System.nanoTime() < deadline) {
            all = true;
            for (int i = 0; i < victims.size(); i++) {
                all &= observed(group.get(i), victims.get(i), fabricNodes.get(i), t0);
            }
            Thread.sleep(10);
        }
        group.forEach(f -> recoveredInLogs(f, logsDir, cns)); // a recoverer faulted before it was polled
        // Restarted side by side: each JVM takes seconds to start.
        final List<Thread> restarts = new ArrayList<>();
        final List<Exception> failed = new java.util.concurrent.CopyOnWriteArrayList<>();
        for (int i = 0; i < victims.size(); i++) {
            final String victim = victims.get(i);
            final JsonObject fault = group.get(i);
            final Thread t = new Thread(() -> {
                try {
                    cluster.node(victim).process().waitFor(10, TimeUnit.SECONDS);
                    restartPatiently(victim, fault);
                    fault.put("restartedMs", ms(t0));
                } catch (final Exception e) {
                    failed.add(e);
                }
            }, "scythe-chaos-restart-" + victim);
            t.start();
            restarts.add(t);
        }
        for (final Thread t : restarts) {
            t.join();
        }
        if (!failed.isEmpty()) {
            throw failed.get(0);
        }
        awaitThroughput(group.get(0), t0, baseline);
        for (final JsonObject fault : group) {
            fault.put("throughputBackMs", group.get(0).getValue("throughputBackMs"));
            print(fault);
        }
        return group;
    }

    /** A memory node neither killed nor failed over, picked at random. */
    private String liveMn(final SplittableRandom random) {
        final List<String> live = new ArrayList<>();
        for (int m = 0; m < mns; m++) {
            if (!removedMns.contains("mn" + m)) {
                live.add("mn" + m);
            }
        }
        return live.get(random.nextInt(live.size()));
    }

    /**
     * Whether the next memory-node fault is a kill: planned MN faults alternate, a pause first, then a kill while
     * fewer than {@code backups} memory nodes are lost ({@code lost}: killed, or failed over after a pause or on
     * their own), then pauses only: a memory node lost past the k backups would take partitions with it.
     */
    static boolean mnKillTurn(final List<JsonObject> faults, final int lost, final int backups) {
        if (lost >= backups) {
            return false;
        }
        for (int i = faults.size() - 1; i >= 0; i--) {
            final JsonObject f = faults.get(i);
            if (f.getBoolean("mn", false) && !f.getBoolean("unplanned", false)) {
                return f.getString("fault").startsWith("SIGSTOP");
            }
        }
        return false;
    }

    /**
     * SIGKILLs memory node {@code mn}; the failover is watched ({@link #failedOver}), then a replacement process
     * started ({@link #rejoin}).
     */
    private JsonObject killMn(final String mn) throws Exception {
        final double baseline = rateBefore(System.nanoTime(), 10);
        final long t0 = System.nanoTime();
        cluster.signal(mn, "KILL");
        cluster.node(mn).process().waitFor(10, TimeUnit.SECONDS);
        removedMns.add(mn);
        final JsonObject fault = new JsonObject().put("fault", "SIGKILL").put("cn", mn).put("mn", true)
            .put("baselinePerS", Math.round(baseline));
        failedOver(fault, mn, t0, baseline);
        rejoin(fault, mn);
        print(fault);
        return fault;
    }

    /**
     * SIGSTOPs memory node {@code mn} for {@link #MN_PAUSE_MS} (under its lease) and SIGCONTs it; transactions that
     * need it wait or end by their timeout, and the load comes back. If the cluster failed it over all the same (on a
     * starved machine the pause can outlast Hazelcast's heartbeat bound; a removed memory node exits when it runs
     * again), it was a kill: it counts against the k backups, stays down, and its failover is checked like a kill's.
     */
    private JsonObject pauseMn(final String mn) throws Exception {
        final double baseline = rateBefore(System.nanoTime(), 10);
        final long t0 = System.nanoTime();
        final JsonObject fault = new JsonObject().put("fault", "SIGSTOP").put("cn", mn).put("mn", true)
            .put("baselinePerS", Math.round(baseline)).put("pauseMs", MN_PAUSE_MS);
        cluster.signal(mn, "STOP");
        try {
            Thread.sleep(MN_PAUSE_MS);
        } finally {
            wake(mn, fault);
        }
        final long wokeNs = System.nanoTime();
        final Process process = cluster.node(mn).process();
        final long watchUntil = wokeNs + TimeUnit.MILLISECONDS.toNanos(ScytheNode.LEASE_MS + 2_000);
        boolean removed = false;
        while (!removed && System.nanoTime() < watchUntil) {
            removed = !process.isAlive() || mnViews(mn)[1] > 0;
            Thread.sleep(20);
        }
        if (!removed) {
            awaitRate(fault, "resumedMs", t0, wokeNs, baseline, 0.5,
                t0 + TimeUnit.MILLISECONDS.toNanos(MN_RESUME_BOUND_MS));
            awaitThroughput(fault, t0, wokeNs, baseline);
            print(fault);
            return fault;
        }
        removedMns.add(mn);
        fault.put("fault", "SIGSTOP, failed over: a kill").put("note", "the cluster removed it although the pause was "
            + "shorter than the lease");
        if (removedMns.size() > backups) {
            fault.put("error", "memory nodes " + removedMns + " lost, more than the " + backups + " backup(s) per "
                + "partition");
        } else {
            failedOver(fault, mn, t0, baseline);
        }
        if (!process.waitFor(10, TimeUnit.SECONDS)) { // it exits on its own once it sees itself removed
            cluster.signal(mn, "KILL");
            process.waitFor(10, TimeUnit.SECONDS);
        }
        rejoin(fault, mn);
        print(fault);
        return fault;
    }

    /**
     * After memory node {@code mn} was lost at {@code t0}: waits until every compute node that answers serves with a
     * configuration without it (its partitions' backups promoted: {@code promotedMs}) and has settled it
     * ({@code settledMs}: the commits in flight at the failover resolved, the promoted partitions serve), then until
     * the load resumed (from the settlement on, the first {@value #WINDOW_MS} ms window at half the baseline rate:
     * {@code resumedMs}) and came back (80 %, also from the settlement on: {@code throughputBackMs}; windows before
     * it can be at full rate, transactions that do not need the lost node's partitions or its CPU going on). Promoted, settled and resumed must all come
     * within {@link #MN_RESUME_BOUND_MS} of the loss, or the fault has an error.
     */
    private void failedOver(final JsonObject fault, final String mn, final long t0, final double baseline)
        throws InterruptedException {
        final List<Thread> restarts = new ArrayList<>();
        try {
            failedOver(fault, mn, t0, baseline, restarts);
        } finally {
            for (final Thread t : restarts) {
                t.join();
            }
        }
    }

    private void failedOver(final JsonObject fault, final String mn, final long t0, final double baseline,
                            final List<Thread> restarts) throws InterruptedException {
        final long deadline = t0 + TimeUnit.MILLISECONDS.toNanos(MN_RESUME_BOUND_MS);
        long settledNs = 0;
        while (settledNs == 0 && System.nanoTime() < deadline) {
            restartExitedCns(restarts);
            final int[] views = mnViews(mn);
            if (views[0] > 0 && views[1] == views[0] && !fault.containsKey("promotedMs")) {
                fault.put("promotedMs", ms(t0));
            }
            if (views[0] > 0 && views[2] == views[0]) {
                settledNs = System.nanoTime();
                fault.put("settledMs", ms(t0));
            }
            Thread.sleep(20);
        }
        if (settledNs == 0) {
            fault.put("error", "the compute nodes did not " + (fault.containsKey("promotedMs") ? "settle" : "promote "
                + "the backups of") + " " + mn + "'s partitions within " + MN_RESUME_BOUND_MS + " ms");
            return;
        }
        if (!awaitRate(fault, "resumedMs", t0, settledNs, baseline, 0.5, deadline)) {
            fault.put("error", "the load did not resume (half the baseline of " + Math.round(baseline) + "/s) within "
                + MN_RESUME_BOUND_MS + " ms of losing " + mn);
            return;
        }
        awaitThroughput(fault, t0, settledNs, baseline);
    }

    /**
     * Once memory node {@code mn}'s failover settled (no error so far): {@link #MN_REJOIN_DELAY_MS} later starts a
     * replacement process under its name (ready within {@link #MN_RESUME_BOUND_MS}) and waits until every CN that
     * answers serves with it back as a full copy (rejoined: re-replicated), within {@link #MN_RESUME_BOUND_MS} of its
     * readiness ({@code replacementReadyMs}, {@code rejoinedMs}: from the replacement's start). Rejoined, it is no longer down; otherwise the fault has an error and it stays down.
     */
    private void rejoin(final JsonObject fault, final String mn) throws Exception {
        if (fault.containsKey("error") || !fault.containsKey("settledMs")) {
            return;
        }
        Thread.sleep(MN_REJOIN_DELAY_MS);
        final long t0 = System.nanoTime();
        try {
            cluster.restart(mn, MN_RESUME_BOUND_MS);
        } catch (final Exception e) {
            fault.put("error", "the replacement of " + mn + " did not start: " + e.getMessage().lines().findFirst()
                .orElse(""));
            return;
        }
        fault.put("replacementReadyMs", ms(t0));
        // Bounded from its readiness: starting a JVM took 89 s at load 50 here, the rejoin itself 29 s.
        final long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(MN_RESUME_BOUND_MS);
        while (System.nanoTime() < deadline) {
            final int[] views = mnViews(mn);
            if (views[0] > 0 && views[3] == views[0]) {
                fault.put("rejoinedMs", ms(t0));
                removedMns.remove(mn);
                return;
            }
            Thread.sleep(20);
        }
        fault.put("error", "the replacement of " + mn + " did not rejoin on every compute node within "
            + MN_RESUME_BOUND_MS + " ms of being ready");
    }

    /**
     * The compute nodes' view of memory node {@code mn}: how many answer with their memory-node configuration, how
     * many of those removed {@code mn}, how many of those have it settled, and how many serve with it as a full
     * copy (neither removed nor rejoining).
     */
    private int[] mnViews(final String mn) {
        final int[] views = new int[4];
        for (int c = 0; c < cns; c++) {
            final JsonObject h = health("cn" + c);
            final JsonObject v = h == null ? null : h.getJsonObject("memoryNodes");
            if (v == null) {
                continue;
            }
            views[0]++;
            if (v.getJsonArray("removed", new JsonArray()).contains(mn)) {
                views[1]++;
                if (!v.getBoolean("settling", true)) {
                    views[2]++;
                }
            } else if (!v.getJsonArray("rejoining", new JsonArray()).contains(mn)) {
                views[3]++;
            }
        }
        return views;
    }

    private JsonObject pause(final String victim) throws Exception {
        final long epoch = epochOf(victim);
        final String fabricNode = victim + ".e" + epoch;
        final double baseline = rateBefore(System.nanoTime(), 10);
        final long t0 = System.nanoTime();
        final JsonObject fault = new JsonObject().put("fault", "SIGSTOP").put("cn", fabricNode)
            .put("baselinePerS", Math.round(baseline));
        cluster.signal(victim, "STOP");
        try {
            // Paused past its lease (and Hazelcast's max-no-heartbeat), not longer: a long pause stalls every
            // Hazelcast operation that waits on its partitions, which is not what this measures. Detection and
            // recovery are watched meanwhile: both must come while it sleeps.
            final long wake = t0 + TimeUnit.MILLISECONDS.toNanos(ScytheNode.LEASE_MS + 2_000);
            while (System.nanoTime() < wake) {
                observed(fault, victim, fabricNode, t0);
                Thread.sleep(10);
            }
        } finally {
            wake(victim, fault);
        }
        observe(fault, victim, fabricNode, t0);
        // Awake past its lease it finds itself fenced and exits; it comes back under a new epoch.
        if (!cluster.node(victim).process().waitFor(60, TimeUnit.SECONDS)) {
            fault.put("note", "did not exit after losing its lease; killed");
            cluster.signal(victim, "KILL");
            cluster.node(victim).process().waitFor(10, TimeUnit.SECONDS);
        }
        restartPatiently(victim, fault);
        fault.put("restartedMs", ms(t0));
        awaitThroughput(fault, t0, baseline);
        print(fault);
        return fault;
    }

    /**
     * Restarts compute node {@code cn}, once more when the first start fails (several JVMs joining a starved machine
     * at once: one may time out joining, as a chaos run at load 30 saw), noted in {@code fault}: an odd interleaving
     * to go on through, not the end of the run. A first start still running past its timeout is SIGKILLed first
     * (stop 43's soak: the retry found it alive and failed "still running").
     */
    private void restartPatiently(final String cn, final JsonObject fault) throws Exception {
        try {
            cluster.restart(cn, 180_000);
        } catch (final IllegalStateException startFailed) {
            final String first = String.valueOf(startFailed.getMessage()).lines().findFirst().orElse("");
            System.out.println("chaos: " + cn + ": restart failed (" + first + "); once more");
            fault.put("note", (fault.containsKey("note") ? fault.getString("note") + "; " : "")
                + "first restart failed: " + first);
            final Process slow = cluster.node(cn).process();
            if (slow != null && slow.isAlive()) { // not ready in time but running: the retry starts a fresh one
                countUnplanned(fault); // that start may have joined as an incarnation: killing it is one more fault
                slow.destroyForcibly();
                if (!slow.waitFor(30, TimeUnit.SECONDS)) {
                    throw new IllegalStateException("node " + cn + " (pid " + slow.pid() + ") did not end after "
                        + "SIGKILL within 30 s");
                }
            }
            cluster.restart(cn, 180_000);
        }
    }

    /**
     * SIGCONT to a paused node. It may be gone already: an MN's fence barrier SIGKILLs (STONITH) a CN it fences while
     * that CN is paused, so a pause can become a kill. That is a fault like any other, noted and gone on with; a
     * SIGCONT that fails on a node still alive is a harness failure.
     */
    private void wake(final String victim, final JsonObject fault) throws Exception {
        final Process process = cluster.node(victim).process();
        try {
            cluster.signal(victim, "CONT");
        } catch (final IllegalStateException e) {
            if (process.waitFor(1, TimeUnit.SECONDS)) {
                fault.put("note", "killed while paused (exit " + process.exitValue() + "): fenced by a memory node's "
                    + "barrier before the pause ended");
                return;
            }
            throw e;
        }
    }

    /** Whether {@code fabricNode} is fenced on the first memory node still serving (mn0 unless it was killed). */
    private boolean fencedOnMn0(final String fabricNode) {
        for (int m = 0; m < mns; m++) {
            if (!removedMns.contains("mn" + m)) {
                final JsonObject mn = health("mn" + m);
                return mn != null && mn.getJsonArray("fenced", new JsonArray()).contains(fabricNode);
            }
        }
        return false;
    }

    /** Waits until {@code fabricNode} is fenced on mn0 and some CN recovered it; notes when, in {@code fault}. */
    private void observe(final JsonObject fault, final String victim, final String fabricNode, final long t0)
        throws Exception {
        final long deadline = t0 + TimeUnit.SECONDS.toNanos(60);
        atWall(fault, t0);
        while (System.nanoTime() < deadline && !observed(fault, victim, fabricNode, t0)) {
            Thread.sleep(10);
        }
        recoveredInLogs(fault, logsDir, cns);
    }

    /**
     * Notes in {@code fault} its wall-clock time ({@code atWallMs}, from its {@link System#nanoTime()} {@code t0}), by
     * which {@link #recoveredInLogs} finds its recovery in the node logs (whose lines carry wall-clock times).
     */
    private static JsonObject atWall(final JsonObject fault, final long t0) {
        return fault.put("atWallMs", System.currentTimeMillis() - TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0));
    }

    /**
     * The fallback when no serving CN's health listed the recovery of {@code fault} (its {@code cn}, from its
     * {@code atWallMs}), noted in it as found in the logs of {@code logsDir}'s {@code cns} compute nodes: the recoverer
     * may have been faulted itself (or restarted) before it was polled, and its new incarnation's health lists nothing
     * (soak of stop 43: cn3 recovered cn2.e1 2 s after the fault and was killed before the next look, so the run
     * reported it "not recovered"). Every recovery a node finishes is in its log ({@code RecoveryDuty}: "recovery of
     * {json}"), which every incarnation of that node appends to; its line's time says when. Looked at when the 60 s
     * watch ends, and again by the end checks for a fault still without one: a recovery later than the watch (stop 45's
     * soak: cn0.e1, cn1.e1 and cn2.e1 recovered 75-90 s after their faults by cn1's next incarnation, all four CNs down
     * meanwhile) is then reported with its time ("recovered only after"), not as never recovered.
     */
    static void recoveredInLogs(final JsonObject fault, final Path logsDir, final int cns) {
        if (logsDir == null || fault.containsKey("recoveredMs") || !fault.containsKey("atWallMs")) {
            return;
        }
        final String fabricNode = fault.getString("cn");
        final long t0WallMs = fault.getLong("atWallMs");
        for (int c = 0; c < cns && !fault.containsKey("recoveredMs"); c++) {
            final Path log = logsDir.resolve("node-cn" + c + ".log");
            try (java.util.stream.Stream<String> lines = java.nio.file.Files.lines(log,
                java.nio.charset.StandardCharsets.UTF_8)) {
                final JsonObject found = recoveryInLog(lines, fabricNode, t0WallMs);
                if (found != null) {
                    fault.put("recoveredMs", found.getLong("recoveredMs")).put("recoveredBy", "cn" + c + " (its log)")
                        .put("recovery", found.getJsonObject("recovery"));
                }
            } catch (final java.io.IOException | RuntimeException unreadable) { // no log, or a torn last line
                // the check below then reports it not recovered
            }
        }
    }

    /** The end check's failure for a CN fault's recovery (none, later than 60 s, or not yet) or null. */
    static String recoveryFailure(final JsonObject f) {
        if (f.getBoolean("tso", false) || f.getBoolean("mn", false)) {
            return null;
        }
        if (!f.containsKey("recoveredMs")) {
            return f.getString("cn") + " (" + f.getString("fault") + ") was not recovered by the end of the run";
        }
        return f.getLong("recoveredMs") > 60_000 ? f.getString("cn") + " (" + f.getString("fault") + ") was recovered "
            + "only after " + f.getLong("recoveredMs") + " ms (bound 60 s; by " + f.getString("recoveredBy") + ")"
            : null;
    }

    /** One look: notes detection (fenced on mn0), then recovery (a CN's report); true once both are noted. */
    private boolean observed(final JsonObject fault, final String victim, final String fabricNode, final long t0) {
        if (!fault.containsKey("detectedMs")) {
            if (!fencedOnMn0(fabricNode)) {
                return false;
            }
            fault.put("detectedMs", ms(t0));
        }
        for (int c = 0; c < cns && !fault.containsKey("recoveredMs"); c++) {
            final String cn = "cn" + c;
            final JsonObject h = cn.equals(victim) ? null : health(cn);
            if (h == null) {
                continue;
            }
            for (final Object r : h.getJsonArray("recoveries", new JsonArray())) {
                final JsonObject rec = (JsonObject) r;
                if (fabricNode.equals(rec.getString("cn")) && rec.getBoolean("ok", false)) {
                    fault.put("recoveredMs", ms(t0)).put("recoveredBy", cn).put("recovery", rec);
                }
            }
        }
        return fault.containsKey("recoveredMs");
    }

    /**
     * The first successful recovery of {@code fabricNode} a node's log lines report ("TIME scythe node cnX: recovery
     * of {json}"), with {@code recoveredMs} counted from {@code t0WallMs}; null if none (a torn line is skipped).
     */
    static JsonObject recoveryInLog(final java.util.stream.Stream<String> lines, final String fabricNode,
        final long t0WallMs) {
        final String marker = "recovery of {\"cn\":\"" + fabricNode + "\"";
        return lines.filter(l -> l.contains(marker)).map(l -> {
            try {
                final JsonObject rec = new JsonObject(l.substring(l.indexOf('{', l.indexOf("recovery of "))));
                final long atMs = java.time.Instant.parse(l.substring(0, l.indexOf(' '))).toEpochMilli();
                return rec.getBoolean("ok", false) ? new JsonObject().put("recoveredMs", Math.max(0, atMs - t0WallMs))
                    .put("recovery", rec) : null;
            } catch (final RuntimeException torn) {
                return null;
            }
        }).filter(java.util.Objects::nonNull).findFirst().orElse(null);
    }

    /** Throughput back: the first window after the fault at 80 % of the baseline or more. */
    private void awaitThroughput(final JsonObject fault, final long t0, final double baseline)
        throws InterruptedException {
        awaitThroughput(fault, t0, t0, baseline);
    }

    /** The same, looking only at windows from {@code lookFromNs} on (after an outage the fault itself caused). */
    private void awaitThroughput(final JsonObject fault, final long t0, final long lookFromNs, final double baseline)
        throws InterruptedException {
        awaitRate(fault, "throughputBackMs", t0, lookFromNs, baseline, 0.8,
            System.nanoTime() + TimeUnit.SECONDS.toNanos(20));
    }

    /**
     * Notes as {@code key} in {@code fault} the end of the first window from {@code lookFromNs} on (ms after
     * {@code t0}) with at least {@code fraction} of the {@code baseline} rate; waits for one until {@code deadlineNs}.
     *
     * @return whether there was one
     */
    private boolean awaitRate(final JsonObject fault, final String key, final long t0, final long lookFromNs,
                              final double baseline, final double fraction, final long deadlineNs)
        throws InterruptedException {
        final int from = window(t0);
        final int first = Math.max(from + 1, window(lookFromNs));
        while (true) {
            final int now = window(System.nanoTime());
            for (int w = first; w < now; w++) {
                if (commitsByWindow.get(w) * 1000.0 / WINDOW_MS >= fraction * baseline) {
                    fault.put(key, (w + 1 - from) * WINDOW_MS);
                    return true;
                }
            }
            if (System.nanoTime() >= deadlineNs) {
                return false;
            }
            Thread.sleep(50);
        }
    }

    /** The current epoch of CN {@code node}, asked until it answers (it may be busy or still starting). */
    private long epochOf(final String node) throws InterruptedException {
        final long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        String last = null;
        while (System.nanoTime() < deadline) {
            final JsonObject h = health(node);
            if (h != null && h.getLong("epoch") != null) {
                return h.getLong("epoch");
            }
            last = String.valueOf(h);
            Thread.sleep(100);
        }
        throw new IllegalStateException(node + " did not report its epoch within 30 s: " + last);
    }

    private JsonObject health(final String node) {
        return get(node, "/health");
    }

    /** {@code path} of {@code node}'s HTTP server as JSON, or null when it does not answer. */
    private JsonObject get(final String node, final String path) {
        try {
            final HttpResponse<String> r = HTTP.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:"
                + cluster.node(node).httpPort() + path)).timeout(Duration.ofSeconds(2)).build(),
                HttpResponse.BodyHandlers.ofString());
            return new JsonObject(r.body());
        } catch (final Exception unreachable) {
            return null;
        }
    }

    private static void print(final JsonObject f) {
        if (f.getBoolean("mn", false)) {
            System.out.printf("chaos: %-7s %-8s %spromoted on every CN %s ms, settled %s ms, load resumed %s ms, "
                + "throughput back %s ms%s%s%s%n", f.getString("fault"), f.getString("cn"),
                f.containsKey("pauseMs") ? "paused " + f.getValue("pauseMs") + " ms; " : "",
                f.getValue("promotedMs", "-"), f.getValue("settledMs", "-"), f.getValue("resumedMs", "-"),
                f.getValue("throughputBackMs", "-"), f.containsKey("replacementReadyMs") ? "; replacement ready "
                    + f.getValue("replacementReadyMs") + " ms, rejoined " + f.getValue("rejoinedMs", "-") + " ms after "
                    + "its start" : "", f.containsKey("note") ? " (" + f.getString("note") + ")" : "",
                f.containsKey("error") ? " FAILED: " + f.getString("error") : "");
            return;
        }
        if (f.getBoolean("tso", false)) {
            System.out.printf("chaos: %-7s %-8s restarted %s ms, throughput back %s ms%s%n", f.getString("fault"),
                f.getString("cn"), f.getValue("restartedMs", "-"), f.getValue("throughputBackMs", "-"),
                f.containsKey("error") ? " FAILED: " + f.getString("error") : "");
            return;
        }
        System.out.printf("chaos: %-7s %-8s detected %s ms, recovered %s ms (by %s: %s), restarted %s ms, "
            + "throughput back %s ms%n", f.getString("fault"), f.getString("cn"), f.getValue("detectedMs", "-"),
            f.getValue("recoveredMs", "-"), f.getValue("recoveredBy", "-"), f.getValue("recovery", "-"),
            f.getValue("restartedMs", "-"), f.getValue("throughputBackMs", "-"));
    }

    private int check(final long[] initial, final List<JsonObject> faults) throws Exception {
        if (removedMns.size() > backups && mnFaults) {
            faults.stream().filter(f -> f.containsKey("error")).forEach(f -> System.out.println("chaos: FAIL "
                + f.getString("cn") + " (" + f.getString("fault") + "): " + f.getString("error")));
            System.out.println("chaos: FAIL memory nodes " + removedMns + " lost with " + backups + " backup(s) per "
                + "partition: partitions without a copy, the data cannot be checked");
            return 1;
        }
        final long[] finalMoney;
        try {
            finalMoney = audit("final audit");
        } catch (final IllegalStateException unreadable) {
            faults.stream().filter(f -> f.containsKey("error")).forEach(f -> System.out.println("chaos: FAIL "
                + f.getString("cn") + " (" + f.getString("fault") + "): " + f.getString("error")));
            System.out.println("chaos: FAIL the data cannot be checked: " + unreadable.getMessage());
            return 1;
        }
        final long half = accounts / 2;
        final List<String> failures = new ArrayList<>();
        long paymentsBefore = 0;
        long paymentsAfter = 0;
        for (int a = 0; a < half; a++) {
            paymentsBefore += initial[a];
            paymentsAfter += finalMoney[a];
        }
        if (paymentsBefore != paymentsAfter) {
            failures.add("money not conserved among the paying accounts: " + paymentsBefore + " -> " + paymentsAfter);
        }
        long lost = 0;
        long twice = 0;
        long acked = 0;
        long inDoubt = 0;
        long inDoubtApplied = 0;
        for (int a = (int) half; a < accounts; a++) {
            final long delta = finalMoney[a] - initial[a];
            acked += depositsAcked.get(a);
            inDoubt += depositsUnknown.get(a);
            if (delta < depositsAcked.get(a)) {
                lost += depositsAcked.get(a) - delta;
            } else if (delta > depositsAcked.get(a) + depositsUnknown.get(a)) {
                twice += delta - depositsAcked.get(a) - depositsUnknown.get(a);
            } else {
                inDoubtApplied += delta - depositsAcked.get(a);
            }
        }
        if (lost > 0) {
            failures.add(lost + " acknowledged deposits missing from the data");
        }
        if (twice > 0) {
            failures.add(twice + " deposits applied more than once");
        }
        long locks = 0;
        final List<String> lockedNamed = new ArrayList<>();
        java.util.function.Function<String, String> holderState = null; // the CNs' health, read only if needed
        for (int m = 0; m < mns; m++) {
            if (removedMns.contains("mn" + m)) {
                continue; // not serving: its partitions are served by the promoted backups
            }
            final JsonObject h = checkedHealth("mn" + m);
            locks += h == null ? 0 : h.getLong("locksHeld", 0L);
            final io.vertx.core.json.JsonArray locked = h == null ? null : h.getJsonArray("locked");
            for (int i = 0; locked != null && i < locked.size(); i++) {
                holderState = holderState != null ? holderState : holderStates(faults);
                lockedNamed.add(describeLocked("mn" + m, locked.getJsonObject(i), holderState));
            }
        }
        if (locks > 0) {
            failures.add(locks + " objects still locked or queued on after the run" + (lockedNamed.size() < locks
                ? " (" + lockedNamed.size() + " named below)" : ""));
        }
        lockedNamed.forEach(l -> System.out.printf("chaos: left locked: %s%n", l));
        final long unsettled = unsettledOnMns();
        if (unsettled > 0) {
            failures.add(unsettled + " objects still hold a write left unsettled (Lotus: an INVISIBLE cell) after the "
                + "run");
        }
        final long moduleUnsettled = moduleUnsettledOnMns();
        if (moduleUnsettled != 0) {
            failures.add(moduleUnsettled < 0 ? "a memory node could not count the writes its protocol holds undecided"
                : moduleUnsettled + " writes still undecided in the protocol's own state on the memory nodes (Aurogon: "
                + "pending versions, held replications) after the run");
        }
        final List<String> cnLocks = cnLocksLeft();
        failures.addAll(cnLocks);
        if (!unchecked.isEmpty()) { // a check that could not look is not a pass
            failures.add("the end checks could not read the health of " + unchecked + ": their locks and unsettled "
                + "writes were not checked");
        }
        for (final JsonObject f : faults) {
            if (f.containsKey("error")) {
                failures.add(f.getString("cn") + " (" + f.getString("fault") + "): " + f.getString("error"));
            } else {
                recoveredInLogs(f, logsDir, cns); // a recovery later than the fault's watch
                final String late = recoveryFailure(f);
                if (late != null) {
                    failures.add(late);
                }
            }
        }
        System.out.printf("chaos: %d faults in %s; client: %d committed, %d aborted, %d outcome unknown%n",
            faults.size(), duration, committed.get(), aborted.get(), unknown.get());
        System.out.printf("chaos: faults by kind: %s%n", faults.isEmpty() ? "none" : byKind(faults));
        abortReasons.entrySet().stream()
            .sorted((x, y) -> Long.compare(y.getValue().sum(), x.getValue().sum())).limit(3)
            .forEach(e -> System.out.printf("chaos:   %d x %s%n", e.getValue().sum(), e.getKey()));
        System.out.printf("chaos: money among the paying accounts %d -> %d (%s)%n", paymentsBefore, paymentsAfter,
            paymentsBefore == paymentsAfter ? "conserved" : "NOT conserved");
        System.out.printf("chaos: deposits: %d acknowledged, all present: %s; %d of %d in doubt applied; applied "
            + "twice: %d%n", acked, lost == 0 ? "yes" : "NO (" + lost + " missing)", inDoubtApplied, inDoubt, twice);
        System.out.printf("chaos: locks or tickets held at the end%s: %d; objects with a write unsettled: %d%s%n",
            removedMns.isEmpty() ? "" : " on the serving memory nodes (" + removedMns + " down)", locks, unsettled,
            cnLocksChecked ? "; compute nodes' locks held: " + (cnLocks.isEmpty() ? "none" : cnLocks) : "");
        final java.util.function.Predicate<JsonObject> cn = f -> !f.getBoolean("mn", false);
        summarize(faults, "detectedMs", "detection", cn);
        summarize(faults, "recoveredMs", "recovery done", cn);
        summarize(faults, "throughputBackMs", "throughput back", cn);
        if (mnFaults) {
            final long pauses = faults.stream().filter(f -> f.getBoolean("mn", false)
                && "SIGSTOP".equals(f.getString("fault"))).count();
            final long rejoined = faults.stream().filter(f -> f.containsKey("rejoinedMs")).count();
            System.out.printf("chaos: memory nodes: %d rejoined as replacement processes, %d down at the end %s of %d "
                + "allowed at once (%d backup(s)), %d paused %d ms and kept%n", rejoined, removedMns.size(), removedMns,
                backups, backups, pauses, MN_PAUSE_MS);
            final java.util.function.Predicate<JsonObject> failed = f -> f.getBoolean("mn", false)
                && f.containsKey("settledMs");
            summarize(faults, "promotedMs", "MN failover: backups promoted on every CN", failed);
            summarize(faults, "settledMs", "MN failover: settled on every CN", failed);
            summarize(faults, "resumedMs", "MN failover: load resumed (the pause)", failed);
            summarize(faults, "replacementReadyMs", "MN rejoin: replacement process ready", failed);
            summarize(faults, "rejoinedMs", "MN rejoin: replacement start to rejoined on every CN", failed);
            summarize(faults, "resumedMs", "MN pause: load resumed", f -> f.getBoolean("mn", false)
                && "SIGSTOP".equals(f.getString("fault")));
        }
        summarizeRecoveries(faults);
        if (failures.isEmpty()) {
            System.out.println("chaos: PASS");
            return 0;
        }
        failures.forEach(f -> System.out.println("chaos: FAIL " + f));
        return 1;
    }

    /** Nodes whose health an end check needed and could not read (a failure of the run, not a zero). */
    private final java.util.Set<String> unchecked = new java.util.TreeSet<>();

    /** How long the end checks ask a node's health again while it does not answer ({@link #checkedHealth}). */
    static final long HEALTH_BOUND_MS = 20_000;

    /**
     * {@link #health} of a node the end checks must see, asked again for up to {@link #HEALTH_BOUND_MS} while it does
     * not answer (a memory node's /health scans its tables on its HTTP loop, which a loaded machine can hold past one
     * read's 2 s timeout: rcc-calvin chaos, issue 18); one that never answers is noted as unchecked.
     */
    private JsonObject checkedHealth(final String node) {
        final JsonObject h = retried(() -> health(node), HEALTH_BOUND_MS, System::nanoTime, ms -> {
            try {
                Thread.sleep(ms);
            } catch (final InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }, n -> System.out.printf("chaos: %s's health answered after %d tries%n", node, n));
        if (h == null) {
            unchecked.add(node);
        }
        return h;
    }

    /**
     * {@code read} until it gives a value or {@code boundMs} passed (half a second apart), or the thread is
     * interrupted; null: none. {@code late} is told the tries when more than one was needed.
     */
    static <T> T retried(final java.util.function.Supplier<T> read, final long boundMs,
                         final java.util.function.LongSupplier nanoTime, final java.util.function.LongConsumer sleep,
                         final java.util.function.IntConsumer late) {
        final long until = nanoTime.getAsLong() + TimeUnit.MILLISECONDS.toNanos(boundMs);
        for (int tries = 1; ; tries++) {
            final T value = read.get();
            if (value != null) {
                if (tries > 1) {
                    late.accept(tries);
                }
                return value;
            }
            if (nanoTime.getAsLong() >= until || Thread.currentThread().isInterrupted()) {
                return null;
            }
            sleep.accept(500);
        }
    }

    /** Objects with a write left unsettled (MN health's {@code unsettled}: Lotus's INVISIBLE cells), summed. */
    private long unsettledOnMns() {
        long unsettled = 0;
        for (int m = 0; m < mns; m++) {
            if (!removedMns.contains("mn" + m)) {
                final JsonObject h = checkedHealth("mn" + m);
                unsettled += h == null ? 0 : h.getLong("unsettled", 0L);
            }
        }
        return unsettled;
    }

    /**
     * Writes the protocol holds undecided in its own state on the serving memory nodes (MN health's
     * {@code moduleUnsettled}: Aurogon's pending versions and held replications), summed; -1 when a node could not
     * count them. Looked at for up to 10 s while not 0: a dead coordinator's last transactions are resolved a lease
     * after its death, by a live coordinator's heartbeat that a node names a suspect to.
     */
    private long moduleUnsettledOnMns() throws InterruptedException {
        final long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (true) {
            long sum = 0;
            boolean uncounted = false;
            for (int m = 0; m < mns; m++) {
                if (!removedMns.contains("mn" + m)) {
                    final JsonObject h = checkedHealth("mn" + m);
                    final long n = h == null ? 0 : h.getLong("moduleUnsettled", 0L);
                    uncounted |= n < 0;
                    sum += Math.max(0, n);
                }
            }
            if (sum == 0 && !uncounted || System.nanoTime() > until) {
                return uncounted && sum == 0 ? -1 : sum;
            }
            Thread.sleep(500);
        }
    }

    /**
     * What became of each compute-node incarnation that may hold a lock left at the end: {@code live} (the CN's
     * current incarnation), {@code recovered by cnX} (a CN's health lists its recovery as done, what
     * {@code scythe.recovered} records), {@code recovered (its log said so)} (a fault's recovery was seen in the logs,
     * its recoverer since restarted), or {@code owed: never seen recovered}.
     */
    private java.util.function.Function<String, String> holderStates(final List<JsonObject> faults) {
        final java.util.Map<String, String> states = new java.util.HashMap<>();
        for (final JsonObject f : faults) {
            if (f.getString("cn") != null && f.containsKey("recoveredMs")) {
                states.put(f.getString("cn"), "recovered (its log said so)");
            }
        }
        for (int c = 0; c < cns; c++) {
            final JsonObject h = health("cn" + c);
            if (h == null) {
                continue;
            }
            if (h.getLong("epoch") != null) {
                states.put("cn" + c + ".e" + h.getLong("epoch"), "live");
            }
            final io.vertx.core.json.JsonArray done = h.getJsonArray("recoveries");
            for (int i = 0; done != null && i < done.size(); i++) {
                if (done.getValue(i) instanceof JsonObject r && r.getBoolean("ok", false) && r.getString("cn") != null) {
                    states.put(r.getString("cn"), "recovered by cn" + c);
                }
            }
        }
        return holder -> states.getOrDefault(holder, "owed: never seen recovered");
    }

    /**
     * One object left locked or queued on, as a memory node's health names it ({@code locked}: table, key, object,
     * lower, upper, cas, holder): where it is, what its lock words say (Takeout tickets {@code upper..lower-1}
     * outstanding, the first held, or {@code upper} past {@code lower}: released once more than taken; a CAS word) and
     * whose the held ticket is, with {@code stateOf} its incarnation's fate.
     */
    static String describeLocked(final String mn, final JsonObject o,
                                 final java.util.function.Function<String, String> stateOf) {
        final long lower = o.getLong("lower", 0L);
        final long upper = o.getLong("upper", 0L);
        final StringBuilder b = new StringBuilder(mn).append(' ').append(o.getString("table")).append(" key ")
            .append(o.getValue("key") == null ? "? (not in the index)" : o.getValue("key"))
            .append(" (object at ").append(o.getValue("object")).append("): ");
        if (upper > lower) {
            b.append("upper ").append(upper).append(" passed lower ").append(lower).append(" (released once more than "
                + "taken)");
        } else if (upper < lower) {
            b.append(lower - upper).append(lower - upper == 1 ? " ticket" : " tickets").append(" outstanding (")
                .append(upper).append("..").append(lower - 1).append("), ticket ").append(upper).append(" held by ");
            final String holder = o.getString("holder");
            b.append(holder == null ? "nobody the ledger recorded (an insert's ticket, or cancelled)"
                : holder + " (" + stateOf.apply(holder) + ")");
        } else {
            b.append("tickets free");
        }
        if (o.getString("cas") != null) {
            b.append("; CAS word 0x").append(o.getString("cas"));
        }
        return b.toString();
    }

    /** Whether some compute node reported locks of its own ({@code module.locksHeld}: Lotus's lock tables). */
    private boolean cnLocksChecked;

    /**
     * The compute nodes' own locks left (a protocol whose locks live there: Lotus's lock tables, whose holders on a
     * survivor are freed once a dead holder's recovery finished), one failure per node holding any or whose lock
     * words disagree with its lock state. Looked at for up to 10 s: a coordinator returns before its remote unlocks
     * are answered, and a recovery's frees may still be under way.
     */
    private List<String> cnLocksLeft() throws InterruptedException {
        final long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (true) {
            final List<String> left = new ArrayList<>();
            final List<String> unseen = new ArrayList<>(); // CNs whose lock tables (Lotus's) could not be looked at
            for (int c = 0; c < cns; c++) {
                final JsonObject h = health("cn" + c);
                if (h == null && protocol != null && protocol.startsWith("lotus")) {
                    unseen.add("cn" + c);
                }
                final JsonObject module = h == null ? null : h.getJsonObject("module");
                if (module == null || module.getValue("locksHeld") == null) {
                    continue;
                }
                cnLocksChecked = true;
                if (module.getLong("locksHeld") > 0) {
                    left.add("cn" + c + " still holds " + module.getLong("locksHeld") + " lock(s) (first: "
                        + module.getString("firstHeld") + ")");
                }
                if (module.getString("lockInvariant") != null) {
                    left.add("cn" + c + "'s lock table disagrees with its lock state: "
                        + module.getString("lockInvariant"));
                }
            }
            if ((left.isEmpty() && unseen.isEmpty()) || System.nanoTime() > deadline) {
                unchecked.addAll(unseen); // not looked at is not empty
                return left;
            }
            Thread.sleep(200);
        }
    }

    private static void summarize(final List<JsonObject> faults, final String key, final String label,
                                  final java.util.function.Predicate<JsonObject> which) {
        final List<Long> values = new ArrayList<>();
        for (final JsonObject f : faults) {
            if (which.test(f) && (f.getBoolean("mn", false) || !f.getBoolean("unplanned", false))
                && !f.getBoolean("tso", false) && f.getValue(key) instanceof Number n) {
                values.add(n.longValue());
            }
        }
        if (values.isEmpty()) {
            System.out.printf("chaos: time to %s: none measured%n", label);
            return;
        }
        System.out.printf("chaos: time to %s (ms after the fault): %s faults%n", label, spread(values));
    }

    /**
     * The recoverer's own time (fence and list on every memory node, read the logs, roll forward, release), without
     * detection and the wait for its claim: what Lotus Fig. 15 reports (233 ms for 3 CNs at once).
     */
    private static void summarizeRecoveries(final List<JsonObject> faults) {
        final List<Long> values = new ArrayList<>();
        for (final JsonObject f : faults) {
            if (f.getValue("recovery") instanceof JsonObject r && r.getValue("recoverMs") instanceof Number n) {
                values.add(Math.round(n.doubleValue()));
            }
        }
        if (!values.isEmpty()) {
            System.out.printf("chaos: recovery itself (claim to done, ms): %s recoveries%n", spread(values));
        }
    }

    /** "min A, median B, P99 C, max D over N" of {@code values} (sorts them; P99 the nearest rank). */
    static String spread(final List<Long> values) {
        values.sort(Long::compare);
        final int n = values.size();
        return String.format("min %d, median %d, P99 %d, max %d over %d", values.get(0), values.get(n / 2),
            values.get((int) Math.ceil(0.99 * n) - 1), values.get(n - 1), n);
    }

    /** The faults counted by kind: "CN SIGKILL 12, CN SIGSTOP 11, MN SIGSTOP 2", most first. */
    static String byKind(final List<JsonObject> faults) {
        final java.util.Map<String, Integer> counts = new java.util.TreeMap<>();
        for (final JsonObject f : faults) {
            final String node = f.getBoolean("mn", false) ? "MN" : f.getBoolean("tso", false) ? "TSO" : "CN";
            counts.merge(node + " " + f.getString("fault"), 1, Integer::sum);
        }
        return counts.entrySet().stream().sorted((x, y) -> Integer.compare(y.getValue(), x.getValue()))
            .map(e -> e.getKey() + " " + e.getValue()).collect(java.util.stream.Collectors.joining(", "));
    }

    private static long ms(final long sinceNs) {
        return TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - sinceNs);
    }
}
