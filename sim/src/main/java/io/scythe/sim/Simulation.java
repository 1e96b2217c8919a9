package io.scythe.sim;

import io.scythe.bench.report.RunResult;
import io.scythe.bench.workload.OltpSpec;
import io.scythe.bridge.Bridge;
import io.scythe.bridge.IdlePolicy;
import io.scythe.fabric.FabricOptions;
import io.scythe.fabric.Nic;
import io.scythe.fabric.RemoteRegion;
import io.scythe.fabric.local.LocalFabric;
import io.scythe.hotspot.Watermarks;
import io.scythe.rrpc.CnPeers;
import io.scythe.rrpc.RpcServer;
import io.scythe.rrpc.RrpcClient;
import io.scythe.rrpc.RrpcOptions;
import io.scythe.storage.LogDb;
import io.scythe.storage.Table;
import io.scythe.txn.mn.MemoryNodeServices;
import io.scythe.tso.DirectTsoSource;
import io.scythe.tso.TsoGroup;
import io.scythe.tso.TsoService;
import io.scythe.txn.AbortException;
import io.scythe.txn.AbortReason;
import io.scythe.txn.Catalog;
import io.scythe.txn.Coordinator;
import io.scythe.txn.Protocol;
import io.scythe.txn.Stage;
import io.scythe.txn.TxnRuntime;
import io.scythe.txn.runtime.LoopTimers;
import io.scythe.txn.scythe.TicketLedger;
import io.vertx.core.Context;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonObject;
import org.HdrHistogram.Histogram;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.TreeMap;

/**
 * One simulated run: a whole cluster (memory nodes with LogDb, the RRPC server, the Takeout Lock and lookup services;
 * a TSO node with its counter in NIC device memory; compute nodes whose loops run coordinators and closed-loop
 * clients) built from the same classes {@code scythe bench} deploys, on the local fabric with its cost model, but
 * every loop is a {@link SimLoop} of one {@link SimScheduler} and every clock reads the {@link VirtualClock}. The
 * protocol code is not changed: the runtime gives it simulated loops' bridges and timers.
 *
 * <p>Control-plane set-up (RRPC rings opened over the Vert.x event bus) happens before virtual time starts, on the
 * one Vert.x context the whole simulation runs in; from then on nothing but the scheduler runs, on that one thread.
 * Same options and seed, same run: the history hash, the counts and the latencies are identical.
 */
public final class Simulation {
    private final SimOptions options;
    private final OltpSpec spec;
    private final SimScheduler scheduler;
    private final VirtualClock clock;
    private final SplittableRandom faultRandom;
    /** Draws of verb failures only: runs without them keep every other draw (jitter) as it was. */
    private final SplittableRandom verbFaultRandom;
    /**
     * In a partition run without a crash, the versions reported to the history: a live coordinator cut off is
     * suspected, and a recovery that commits its transaction reports it in doubt beside the coordinator's report.
     */
    private final ReportedVersions partitionReports;
    /** Batches the partition held: [0] how many, [1] their total time held (ns). */
    private final long[] partitionHeld = new long[2];
    private final List<LogDb> memoryNodes = new ArrayList<>();
    private final List<SimLoop> mnLoops = new ArrayList<>();
    /** The participant queues of each co-located server's memory node, by memory node (none otherwise). */
    private final List<QueueCores> queueCores = new ArrayList<>();
    /** Objects the memory nodes reclaimed ({@link SimOptions#reclaimEveryNs}). */
    private long reclaimed;
    /** Each memory node's record of who holds which Takeout ticket (with verb faults only), by memory node. */
    private final List<TicketLedger> ticketLedgers = new ArrayList<>();
    /** Objects inserted locked with a ticket (the ledger knows granted tickets only), by LocksLeftHeld#objectKey. */
    private final Map<Long, LocksLeftHeld.Insert> ticketInserts = new java.util.HashMap<>();
    private final List<RpcServer> servers = new ArrayList<>();
    /** Each compute node's peer messaging ({@link #peers}), in node order; empty unless asked for. */
    private final List<CnPeers> peers = new ArrayList<>();
    private RrpcOptions peerOptions;
    private java.util.function.Consumer<CnPeers> peerSetUp;
    /** Whether every loop may call every loop, its own node's included (a module's peers), not only paired loops. */
    private boolean everyLoopPair;
    private final List<RrpcClient> rrpcClients = new ArrayList<>();
    private final List<io.scythe.tso.TsoProxy> proxies = new ArrayList<>();
    private final List<String> proxyNodes = new ArrayList<>();
    private final QueueSampler queues = new QueueSampler();
    private final List<Coordinator> coordinators = new ArrayList<>();
    private final List<Client> clients = new ArrayList<>();
    private final List<List<SimLoop>> cnLoops = new ArrayList<>();
    /** Every compute node's coordinators, by loop index: where routed clients send transactions. */
    private final List<List<Coordinator>> coordinatorsOfCn = new ArrayList<>();
    /** Which compute node owns which shard (routed runs only). */
    private io.scythe.routing.ShardMap shardMap;
    /** Transactions committed while measuring, by the compute node that ran them (routed runs only). */
    private long[] committedByCn;
    /** Salt of the routers' random streams: a route never draws from a client's workload stream. */
    private static final long ROUTE_SEED_SALT = 0x6A09E667F3BCC909L;
    /** Salt of the shard mover's stream. */
    private static final long MOVE_SEED_SALT = 0xBB67AE8584CAA73BL;

    /**
     * Wall-clock bound on opening a ring over the event bus, which every ring does before virtual time starts: at
     * Lotus's topology (9 CNs x 10 loops, 3 MNs) on a machine at load 30-50 the default 10 s ran out (mn0's and a CN
     * peer's open timed out, so the run failed before its first event). Not a virtual-time bound: runs are unchanged.
     * Not for the compute nodes' RPC client (to memory nodes, the TSO node and proxies) in a run crashing a memory
     * node ({@code --crash-mn}): there it keeps the call bound, as before this bound existed.
     */
    static final long SETUP_OPEN_TIMEOUT_MS = 120_000;
    private final Histogram latencyNs = new Histogram(3_600_000_000_000L, 3);
    /** Per transaction type, its commits in the measured window: which type makes the tail ({@link TypeLatency}). */
    private final Map<String, TypeLatency> committedByType = new TreeMap<>();
    private final List<HistoryListener> listeners = new ArrayList<>();
    private LocalFabric fabric;
    /** Each compute node's NIC, by number: whose queue pairs {@link #verbsInFlight} counts. */
    private final List<Nic> cnNics = new ArrayList<>();
    /** Virtual time past the end the run drained for; more than the drain when it was extended. */
    private long drainedNs;
    private TsoService tso;
    private Protocol protocol;
    private final List<io.scythe.txn.HistoryRecorder> recorders = new ArrayList<>();
    /** Commits the recorders were told of, against the clients' committed transactions (each must be told once). */
    private long recordedCommits;
    private long committedTransactions;
    private Operation operation;
    private long startNs;
    private long endNs;
    private long measureFromNs;
    /** The CN loops' verbs when the warm-up ended (null: no warm-up, or not ended yet). */
    private io.scythe.bridge.VerbStats verbsBeforeMeasuring;
    private long committed;
    private long attemptsOfCommitted;
    private long delta;
    private long gaveUp;
    private long userRollbacks;
    private long errors;
    private String firstError;
    private long historyHash = 0xcbf29ce484222325L;
    private long inFlightAtCrash = -1;
    /** The catalog every compute node shares (the memory-node configuration it serves). */
    private Catalog catalog;
    /**
     * After a memory-node crash: each partition's serving copy as the workload's checks read it (the promoted backup's
     * view where the primary died); null without one.
     */
    private List<LogDb> servingNodes;
    /** The crashed memory node's RPC server, stopped when it died. */
    private RpcServer deadServer;
    /** In a crash run (else null): what the crashed node's transactions did that their clients never heard. */
    private final CrashedOutcomes crashed;
    /** Commits by bucket of virtual time ({@link SimOptions#timelineNs}), or {@code null}. */
    private Timeline timeline;
    /** Recovery of the crashed compute node ({@link Faults#recover}), or {@code null}. */
    private final CrashRecovery recovery;
    /**
     * What the recoveries of crashed compute nodes decided, for the checks: the host's ({@link #recovery}) or, in a
     * crash run with redo records but without it, a protocol module's own (Lotus's lease recovery reports through
     * {@code run.recoveryObserver} and {@code run.moduleRecovered}); null in a run without both.
     */
    private final CrashRecovery tally;
    /** Restarted incarnations of crashed compute nodes ({@link Faults#restartAfterNs}), built dormant; in crash order. */
    private final List<Incarnation> restarts = new ArrayList<>();
    /** The module whose compute nodes message each other (null: none), and the nodes' names: for restarts. */
    private io.scythe.txn.spi.ProtocolModule cnModule;
    private List<String> cnNames;

    /** A restarted incarnation of crashed compute node {@link #cn}, built before time starts. */
    private static final class Incarnation {
        final int cn;
        CnPeers cnPeers;
        List<SimLoop> loops;
        List<TxnRuntime> runtimes;
        List<Coordinator> coordinators;
        final List<Client> clients = new ArrayList<>();
        /** Virtual time it was restarted at, or -1. */
        long restartedAtNs = -1;

        Incarnation(final int cn) {
            this.cn = cn;
        }
    }

    /** Compute nodes that gave up (a loop could not go on safely), with the first give-up of each. */
    private final Map<Integer, JsonObject> givenUp = new TreeMap<>();
    /** Each compute node's loops' runtimes: a node stops serving on all of them at once. */
    private final List<List<TxnRuntime>> runtimesOfCn = new ArrayList<>();
    private long giveUps;
    /** Virtual time the last transaction finished. */
    private long lastFinishedNs;
    /** Transactions whose commit was given up past its point of no return (the client hears "outcome unknown"). */
    private long outcomeUnknown;
    /** Transactions a given-up loop did not commit: refused, or aborted when a lock verb failed ("not serving"). */
    private long notServed;
    /** Transactions failed by a verb that failed (aborted before their point of no return, nothing committed). */
    private long failedByVerb;
    private final Map<String, long[]> verbFailuresInjected = new TreeMap<>();
    private long initialTotal;
    private long setupWallNs;

    public Simulation(final SimOptions options, final OltpSpec spec) {
        this.options = options.validate();
        this.spec = spec;
        this.scheduler = new SimScheduler(options.seed());
        this.clock = scheduler.clock();
        this.faultRandom = new SplittableRandom(options.seed() ^ 0x5DEECE66DL);
        this.verbFaultRandom = new SplittableRandom(options.seed() ^ 0x2545F4914F6CDD1DL);
        this.recovery = options.faults().recover() ? new CrashRecovery(options.loopsPerComputeNode()) : null;
        this.tally = recovery != null ? recovery : options.faults().crashCn() != Faults.NO_CRASH && options.redoLog()
            ? new CrashRecovery(options.loopsPerComputeNode()) : null;
        this.crashed = options.faults().crashCn() == Faults.NO_CRASH ? null : new CrashedOutcomes();
        this.partitionReports = crashed == null && !options.faults().partitioned().isEmpty() ? new ReportedVersions()
            : null;
    }

    /** Receives every finished transaction (committed, rolled back or given up), in virtual-time order. */
    public Simulation listener(final HistoryListener listener) {
        listeners.add(listener);
        return this;
    }

    /**
     * Installs {@code recorder} on every loop's {@code TxnRuntime} (the hook {@code scythe bench --history} uses), from
     * the data load on: every committed transaction reaches it with its reads (versions read) and writes (version made
     * over the version read), in virtual-time commit order. E.g. a {@code HistoryCollector} for the serializability
     * checker, a {@code HistoryWriter} for a file; several may be installed. The run then also checks that every
     * transaction a client saw commit was reported exactly once ({@code sim.history}). Before {@link #run}.
     */
    public Simulation recorder(final io.scythe.txn.HistoryRecorder recorder) {
        recorders.add(recorder);
        return this;
    }

    /**
     * Replaces the clients' transactions by {@code operation} (a micro-benchmark such as Fig. 27's lock and hold): each
     * client runs it again and again; the latency it returns is what is recorded. Before {@link #run}.
     */
    public Simulation operation(final Operation operation) {
        this.operation = operation;
        return this;
    }

    /** What a client does instead of a transaction; its Future holds the latency to record, in ns. */
    @FunctionalInterface
    public interface Operation {
        Future<Long> run(TxnRuntime runtime, SplittableRandom random);
    }

    /**
     * Gives every compute node CN-to-CN messaging ({@link CnPeers}: an RRPC server on each of its loops, polled as a
     * memory node's core polls, and a client to its peers, named {@code cn0}, {@code cn1}, ...), set up by
     * {@code setUp} (its handlers) before time starts, with every paired ring and channel opened then. Calls
     * {@code options}' bound in virtual time. Without this nothing of it exists, so runs are as they were. Before
     * {@link #run}.
     */
    public Simulation peers(final RrpcOptions options, final java.util.function.Consumer<CnPeers> setUp) {
        this.peerOptions = options;
        this.peerSetUp = setUp;
        return this;
    }

    /** The peer messaging of the compute node whose loop runs now (in an {@link #operation}), or {@code null}. */
    public CnPeers peersHere() {
        for (final CnPeers p : peers) {
            if (p.loopIndex() >= 0) {
                return p;
            }
        }
        return null;
    }

    /**
     * What the compute nodes of this run share ({@code ComputeNodeContext#shared}): a protocol's options may be put
     * here before {@link #run} (Lotus: {@code LotusCluster.OPTIONS}); the run adds its routing layer's move listener
     * ({@code routing.moved}, routed runs) and whether the run is over ({@code run.over}).
     */
    public java.util.Map<String, Object> computeNodeShared() {
        return computeNodeShared;
    }

    private final java.util.Map<String, Object> computeNodeShared = new java.util.concurrent.ConcurrentHashMap<>();
    /**
     * What compute nodes' modules check once the run is over ({@code run.endChecks} in {@link #computeNodeShared}):
     * by node, what a node still holds that it should not (null: nothing), e.g. CALVIN's lock queues.
     */
    private final List<java.util.Map.Entry<Integer, java.util.function.Supplier<String>>> endChecks =
        java.util.Collections.synchronizedList(new ArrayList<>());
    /**
     * What compute nodes' modules found broken as it happened ({@code run.violations} in {@link #computeNodeShared}):
     * violations of the run whatever became of the node after (one that gave up is not end-checked), e.g. CALVIN's
     * {@code CalvinNode#deadDecidedAfterRebuild} firing.
     */
    private final List<String> moduleViolations = java.util.Collections.synchronizedList(new ArrayList<>());

    /** The memory nodes' stores (after {@link #run}: as the run left them), for tests' end-of-run checks. */
    List<LogDb> memoryNodes() {
        return java.util.Collections.unmodifiableList(memoryNodes);
    }

    /** Compute node {@code cn}'s peer messaging (after {@link #run} began), or {@code null} without {@link #peers}. */
    public CnPeers peersOf(final int cn) {
        return cn < peers.size() ? peers.get(cn) : null;
    }

    /**
     * Compute node {@code cn}'s loops' runtimes, by loop index (after {@link #run} began; read them only from the
     * simulation's callbacks, e.g. a {@link #listener}, which run in virtual time).
     */
    public List<TxnRuntime> runtimesOf(final int cn) {
        return java.util.Collections.unmodifiableList(runtimesOfCn.get(cn));
    }

    /** The compute nodes' loops' bridges, for {@link #cnVerbs}. */
    private final List<Bridge> cnBridges = new ArrayList<>();

    /** The verbs and RRPC calls every compute-node loop posted so far, summed (after {@link #run}: measurements). */
    public io.scythe.bridge.VerbStats cnVerbs() {
        final io.scythe.bridge.VerbStats sum = new io.scythe.bridge.VerbStats();
        for (final Bridge b : cnBridges) {
            sum.add(b.stats());
        }
        return sum;
    }

    /** Stands in for the protocol {@code options} names (e.g. one that exists only in a test). Before {@link #run}. */
    public Simulation protocol(final Protocol protocol) {
        this.protocol = protocol;
        return this;
    }

    /**
     * Runs the simulation on {@code vertx} (its own context; Vert.x is used only for the control plane before virtual
     * time starts) and returns the result. Call from a thread that is not one of {@code vertx}'s event loops.
     */
    public SimResult run(final Vertx vertx) throws Exception {
        final Context context = vertx.getOrCreateContext();
        final Promise<SimResult> done = Promise.promise();
        context.runOnContext(v -> {
            final long wallStart = System.nanoTime(); // reported only: never steers the run
            final Future<Void> built;
            try {
                built = build(vertx);
            } catch (final Throwable t) {
                // Thrown while building (e.g. loading a table larger than the direct memory: OutOfMemoryError):
                // the run fails with it instead of waiting forever on a future nothing completes.
                try {
                    close();
                } finally {
                    done.fail(t);
                }
                return;
            }
            built.compose(ignored -> {
                setupWallNs = System.nanoTime() - wallStart;
                simulate();
                return Future.succeededFuture(result(System.nanoTime() - wallStart));
            }).eventually(() -> {
                close();
                return Future.succeededFuture();
            }).onComplete(done);
        });
        return done.future().await();
    }

    // ------------------------------------------------------------------------------------------------ building

    private SimLoop.Cpu cnCpu() {
        // requests: RPCs a loop served for its peers (none without peer messaging), each a completion's work.
        return (loop, poll, work, requests) -> (poll ? options.cnPollNs() + work * options.cnWorkNs()
            : options.cnWorkNs()) + requests * options.cnWorkNs();
    }

    /**
     * A memory node's core: its polls, and (unless co-located) each request it serves at {@code mnRequestNs}.
     * Co-located ({@code --colocate}), the node is a symmetric server's participant, whose requests the server's
     * threads serve as they poll (Aurogon §3, §4.1: each thread is coordinator and participant), each thread its own
     * queue ({@link QueueCores}, charged there, not here); their coordinators are not charged for that work.
     */
    private SimLoop.Cpu mnCpu() {
        return (loop, poll, work, requests) -> {
            final long ns = poll ? options.mnPollNs() : options.cnWorkNs();
            return ns + requests * mnRequestNsAt(clock.nanoTime(), options.mnRequestNs());
        };
    }

    /** A request's cost {@code requestNs} at virtual time {@code nowNs}, a slowed memory node's factor applied. */
    private long mnRequestNsAt(final long nowNs, final long requestNs) {
        return options.faults().mnSlowAt(nowNs - startNs)
            ? Math.round(requestNs * options.faults().mnSlowFactor()) : requestNs;
    }

    private Bridge bridgeOn(final SimLoop loop) {
        final Bridge bridge = new Bridge(Thread.currentThread(), loop, clock, IdlePolicy.BACKOFF, 0);
        bridge.deferredExecutor(loop);
        loop.bridge(bridge);
        Bridge.switchCurrent(bridge);
        return bridge;
    }

    private Future<Void> build(final Vertx vertx) {
        try {
            if (protocol == null) {
                protocol = io.scythe.txn.spi.ProtocolRegistry.protocol(options.protocol());
            }
            // Fixed node names: they key hash maps whose order steers the run (so a per-run name would break
            // determinism), and they are event-bus addresses, so simulations on one Vert.x run one at a time.
            final FabricOptions fabricOptions = new FabricOptions().costModel(options.costModel()).clock(clock)
                .clocks(options.clocks()).cluster("sim");
            if (!options.faults().partitioned().isEmpty()) {
                fabricOptions.delayInjector(new PartitionDelays(options.faults().jitterNs()));
            } else if (options.faults().jitterNs() > 0) {
                final long jitter = options.faults().jitterNs();
                fabricOptions.delayInjector((from, to, qp) -> faultRandom.nextLong(jitter));
            }
            if (options.faults().verbFailRate() > 0) {
                fabricOptions.verbFaultInjector(this::injectedVerbFailure);
            }
            if (options.colocate()) {
                for (int s = 0; s < options.computeNodes(); s++) {
                    fabricOptions.colocate("server" + s, "cn" + s, "mn" + s);
                }
            }
            fabric = new LocalFabric(fabricOptions);
            // Rings for exactly the loops that exist (the defaults size for any cluster, and zeroing 8 MiB of inbox
            // per memory node would dominate a short simulated run); the ring geometry itself is the default.
            // Restarted incarnations (built dormant before time starts) have rings of their own.
            final int cnLoopCount = (options.computeNodes() + restartedNodes()) * options.loopsPerComputeNode();
            final RrpcOptions rrpcOptions = new RrpcOptions().maxRings(cnLoopCount)
                .maxReplyRings(options.loopsPerComputeNode() * (options.memoryNodes() + options.tsoProxies() + 1));
            if (options.faults().crashMn() != Faults.NO_CRASH || !options.faults().partitioned().isEmpty()) {
                // Calls across a partition wait for its heal: bounded as in an MN crash run (4 ms, the bound a cut-off
                // coordinator's parked readers need: Faults#mnCallTimeoutNs), so a window past it times them out.
                // Refused by SimOptions#validate for a protocol that does not handle it. A request the dead node took is never answered: compute nodes' calls get a bound.
                // Its ring opens keep the call bound too (RrpcClient's default, as before SETUP_OPEN_TIMEOUT_MS): a ring
                // opened to a node crashed during the run (after a promotion) must fail fast, not wait 2 min (review).
                rrpcOptions.callTimeoutNs(options.faults().mnCallTimeoutNs());
            } else {
                rrpcOptions.openTimeoutMs(SETUP_OPEN_TIMEOUT_MS);
            }
            final Watermarks watermarks = options.watermarks();
            final List<Future<?>> started = new ArrayList<>();
            final String prefix = "";
            for (int p = 0; p < options.memoryNodes(); p++) {
                final String node = prefix + "mn" + p;
                final SimLoop loop = scheduler.newLoop(node, mnCpu());
                mnLoops.add(loop);
                bridgeOn(loop);
                final Nic mn = fabric.attachNow(node);
                final LogDb db = new LogDb(mn);
                final Protocol run = protocol;
                db.objectRoom(run::objectRoom); // 0 for every protocol but those keeping state beside the value
                // The header words of the protocol's format (its module's, per table), and only those.
                db.objectFormat(schema -> io.scythe.txn.spi.ProtocolRegistry.objectFormat(run, schema));
                spec.load(db, p, options.memoryNodes());
                memoryNodes.add(db);
                final RpcServer server = new RpcServer(vertx, mn, rrpcOptions);
                // No recovery service unless commits write redo records (its log regions): a crashed compute node is
                // recovered only with them (Faults#recover).
                final MemoryNodeServices services = MemoryNodeServices.start(db, server, watermarks,
                    options.redoLog());
                if (options.faults().verbFailRate() > 0 || recovery != null) {
                    final int memoryNode = p;
                    // Loops may give up: know whose tickets are granted, to tell whose locks are left held.
                    services.logDb().observeInserts((client, table, key, pointer, lock, word, ticket) -> {
                        if (lock == Table.InsertLock.TICKET) {
                            ticketInserts.put(LocksLeftHeld.objectKey(memoryNode, table, table.offsetOf(pointer)),
                                new LocksLeftHeld.Insert(client, ticket));
                        }
                    });
                    ticketLedgers.add(services.service(TicketLedger.class));
                }
                if (options.colocate()) {
                    // One participant queue and core per loop of the server, each request at mnRequestNs there.
                    final QueueCores cores = new QueueCores(options.loopsPerComputeNode(),
                        nowNs -> mnRequestNsAt(nowNs, options.mnRequestNs()));
                    server.ringQueues(cores);
                    queueCores.add(cores);
                } else {
                    loop.requestCounter(server::requests);
                }
                started.add(server.start());
                servers.add(server);
            }
            // Backup copies of every partition (replication): tables of their own on the memory nodes the placement
            // names, served by the same LogDB services.
            if (options.replicas() > 0) {
                io.scythe.storage.BackupTables.replicate(memoryNodes, options.replicas());
            }
            final Map<String, List<io.scythe.storage.TableDescriptor>> tablesOf = new LinkedHashMap<>();
            for (final LogDb db : memoryNodes) {
                tablesOf.put(db.nic().node(), db.tables().stream().map(Table::describe).toList());
            }
            final Catalog catalog = Catalog.fromMemoryNodes(new ArrayList<>(tablesOf.keySet()), tablesOf);
            this.catalog = catalog;
            if (spec.placement() != io.scythe.txn.Placement.MOD) {
                catalog.placement(spec.placement()); // where the workload loaded its keys (TPC-C by warehouse)
            }
            final String tsoNode = prefix + "tso";
            tso = new TsoService(vertx, fabric.attachNow(tsoNode), List.of(), 1000);
            return Future.all(started).compose(v -> tso.start())
                .compose(counter -> startProxies(vertx, counter, rrpcOptions, tsoNode).map(counter))
                .compose(counter -> connectComputeNodes(vertx, catalog, counter, rrpcOptions, watermarks, prefix,
                    tsoNode));
        } catch (final RuntimeException e) {
            return Future.failedFuture(e);
        }
    }

    /** TSO proxies (Scythe §4.5 (3)), each an RPC server on its own simulated core, FAAing the service's counter. */
    private Future<Void> startProxies(final Vertx vertx, final RemoteRegion counter, final RrpcOptions rrpcOptions,
                                      final String tsoNode) {
        final List<Future<?>> started = new ArrayList<>();
        for (int i = 0; i < options.tsoProxies(); i++) {
            final String node = "tsoproxy" + i;
            final SimLoop loop = scheduler.newLoop(node, mnCpu());
            bridgeOn(loop);
            final Nic nic = fabric.attachNow(node);
            final RpcServer server = new RpcServer(vertx, nic, rrpcOptions);
            final RrpcClient toService = new RrpcClient(vertx, nic, new RrpcOptions().maxReplyRings(1)
                .openTimeoutMs(SETUP_OPEN_TIMEOUT_MS));
            rrpcClients.add(toService);
            final io.scythe.tso.TsoProxy proxy = new io.scythe.tso.TsoProxy(node, counter,
                () -> toService.oneSided(tsoNode));
            proxies.add(proxy);
            started.add(proxy.register(vertx, server));
            started.add(server.start());
            started.add(toService.oneSided(tsoNode));
            servers.add(server);
            loop.requestCounter(server::requests);
            proxyNodes.add(node);
        }
        Bridge.switchCurrent(null);
        return Future.all(started).mapEmpty();
    }

    /**
     * A TSO group: of one loop, or ({@code perComputeNode}) of every loop of a CN, which fetches on the connection of
     * whichever loop leads a group ({@link TsoGroup#perComputeNode}).
     */
    private io.scythe.txn.runtime.TimestampOracle tsoGroupFor(final RrpcClient rrpc, final RemoteRegion counter,
                                                      final String tsoNode, final boolean perComputeNode) {
        if (proxyNodes.isEmpty()) {
            final io.scythe.tso.TsoSource direct = new DirectTsoSource(counter, () -> rrpc.oneSided(tsoNode));
            return perComputeNode ? TsoGroup.perComputeNode(1024, null, direct) : new TsoGroup(1024, direct);
        }
        final io.scythe.tso.TsoSource[] sources = new io.scythe.tso.TsoSource[proxyNodes.size()];
        for (int i = 0; i < sources.length; i++) {
            final String node = proxyNodes.get(i);
            sources[i] = new io.scythe.tso.ProxyTsoSource(node, () -> rrpc.rocket(node));
        }
        final SplittableRandom random = new SplittableRandom(faultRandom.nextLong());
        return perComputeNode ? TsoGroup.perComputeNode(1024, random, sources) : new TsoGroup(1024, random, sources);
    }

    private Future<Void> connectComputeNodes(final Vertx vertx, final Catalog catalog, final RemoteRegion counter,
                                             final RrpcOptions rrpcOptions, final Watermarks watermarks,
                                             final String prefix, final String tsoNode) {
        final List<Future<?>> connected = new ArrayList<>();
        if (options.routing() != io.scythe.routing.RoutingMode.LOCAL) {
            if (operation != null) {
                throw new IllegalArgumentException("routing " + options.routing().label() + " routes transactions: "
                    + "this workload runs operations, not transactions; use routing local");
            }
            final List<String> names = new ArrayList<>();
            for (int c = 0; c < options.computeNodes(); c++) {
                names.add(prefix + "cn" + c);
            }
            shardMap = io.scythe.routing.ShardMap.roundRobin(options.shards(), names);
            committedByCn = new long[options.computeNodes()];
        }
        // The module of the protocol run when its compute nodes talk to each other (ProtocolModule#peerMessaging):
        // they then get peer messaging and its compute-node services (none for a protocol only a test has).
        final io.scythe.txn.spi.ProtocolModule cnModule = io.scythe.txn.spi.ProtocolRegistry.peerModuleOf(protocol);
        if (cnModule != null) {
            final boolean everyLoop = cnModule.peerMessaging(protocol)
                == io.scythe.txn.spi.PeerMessaging.EVERY_LOOP;
            if (peerSetUp == null) { // unless a test set peers up itself (peers)
                // Its bound is wall-clock time opening rings before time starts; in virtual time it is far beyond a
                // run (these modules' compute nodes are never crashed yet).
                peerOptions = io.scythe.txn.ComputeNodePeers.options(cnModule, protocol)
                    .openTimeoutMs(SETUP_OPEN_TIMEOUT_MS);
                peerSetUp = p -> { };
            }
            everyLoopPair = everyLoop;
            // What these nodes share: whether the run is over (periodic tasks stop) and, routed, the routing layer
            // (its shard count, and a listener a module that moves shards itself tells: Lotus's resharding; the
            // routers learn the newer map when refused).
            computeNodeShared.put("run.over", (java.util.function.BooleanSupplier) () -> endNs != 0
                && clock.nanoTime() - endNs >= 0);
            computeNodeShared.put("run.endChecks", endChecks);
            computeNodeShared.put("run.violations", moduleViolations);
            if (recovery != null) { // a crash recovered: modules hear of the dead node once it is fenced (CALVIN)
                final List<java.util.Map.Entry<Integer, java.util.function.IntConsumer>> peerDied =
                    java.util.Collections.synchronizedList(new ArrayList<>());
                computeNodeShared.put("run.peerDied", peerDied);
                computeNodeShared.put("run.recoveredCommit", (java.util.function.LongConsumer) recovery::committedLater);
                computeNodeShared.put("run.recoveryState", (java.util.function.IntFunction<String>) recovery::state);
                recovery.onPeerDied(peerDied);
            } else if (tally != null) { // no host recovery: a module that recovers dead nodes itself says what it found
                computeNodeShared.put("run.recoveryObserver", tally.observer());
                computeNodeShared.put("run.moduleRecovered", (java.util.function.BiConsumer<Integer,
                    io.scythe.txn.recovery.CnRecovery.Report>) (cn, report) -> tally.recoveredByModule(cn, report,
                    clock.nanoTime(), recorders));
            }
            if (shardMap != null) {
                computeNodeShared.put("routing.shards", options.shards());
                computeNodeShared.put("routing.moveShardEveryNs", options.moveShardEveryNs());
                computeNodeShared.put("routing.moved", (java.util.function.BiConsumer<Integer, Integer>)
                    (shard, to) -> shardMap = shardMap.moved(shard, to));
            }
        }
        final List<String> cnNames = new ArrayList<>();
        for (int c = 0; c < options.computeNodes(); c++) {
            cnNames.add(prefix + "cn" + c);
        }
        this.cnModule = cnModule;
        this.cnNames = cnNames;
        for (int c = 0; c < options.computeNodes(); c++) {
            buildComputeNode(vertx, catalog, counter, rrpcOptions, watermarks, tsoNode, cnModule, cnNames, c,
                prefix + "cn" + c, null, connected);
        }
        // Restarted incarnations (--crash-restart-after) are built now too, dormant: their rings open over the event
        // bus, which carries the control plane before time starts only. Their module starts at the restart.
        if (options.faults().restartAfterNs() >= 0) {
            for (final int c : options.faults().crashCns()) {
                final Incarnation next = new Incarnation(c);
                buildComputeNode(vertx, catalog, counter, rrpcOptions, watermarks, tsoNode, cnModule, cnNames, c,
                    prefix + "restarted-cn" + c, next, connected);
                restarts.add(next);
            }
        }
        Bridge.switchCurrent(null);
        return Future.all(connected).compose(v -> connectPeers());
    }

    /**
     * Builds compute node {@code c} on a NIC named {@code nicName}: its RPC client, peers, loops, runtimes,
     * coordinators and clients, and opens its rings (into {@code connected}). {@code restart} non-null: a restarted
     * incarnation of crashed node {@code c}, built dormant (nothing runs on its loops, its module is not started, its
     * clients wait) and kept there, not in the node lists: {@link #restart} swaps it in at its time.
     */
    private void buildComputeNode(final Vertx vertx, final Catalog catalog, final RemoteRegion counter,
                                  final RrpcOptions rrpcOptions, final Watermarks watermarks, final String tsoNode,
                                  final io.scythe.txn.spi.ProtocolModule cnModule, final List<String> cnNames,
                                  final int c, final String nicName, final Incarnation restart,
                                  final List<Future<?>> connected) {
        final Nic cn = fabric.attachNow(nicName);
        cnNics.add(cn);
        final RrpcClient rrpc = new RrpcClient(vertx, cn, rrpcOptions);
        rrpcClients.add(rrpc);
        final CnPeers cnPeers = peerSetUp == null ? null : restart != null ? restartPeers(vertx, cn)
            : newPeers(vertx, cn);
        // A restarted incarnation's module starts at its restart (restart), with the loops built here.
        final io.scythe.txn.spi.ComputeNodeContext.LoopSetUp loopSetUp = cnModule == null || restart != null
            ? io.scythe.txn.spi.ComputeNodeContext.LoopSetUp.NONE
            : cnModule.startComputeNode(io.scythe.txn.ComputeNodePeers.context(c, cnNames, cnPeers,
                computeNodeShared));
        final io.scythe.txn.runtime.TimestampOracle cnTso = options.tsoGroupPerComputeNode()
            ? tsoGroupFor(rrpc, counter, tsoNode, true) : null;
        final List<SimLoop> loops = new ArrayList<>();
        final List<TxnRuntime> runtimes = new ArrayList<>();
        final List<Coordinator> cnCoordinators = new ArrayList<>();
        if (restart == null) {
            runtimesOfCn.add(runtimes);
            coordinatorsOfCn.add(cnCoordinators);
        } else {
            restart.cnPeers = cnPeers;
            restart.loops = loops;
            restart.runtimes = runtimes;
            restart.coordinators = cnCoordinators;
        }
        for (int l = 0; l < options.loopsPerComputeNode(); l++) {
            final SimLoop loop = scheduler.newLoop(cn.node() + "/" + l, cnCpu());
            final Bridge bridge = bridgeOn(loop);
            cnBridges.add(bridge);
            loops.add(loop);
            if (cnPeers != null) {
                final int index = l;
                connected.add(cnPeers.serveHere(index));
                loop.requestCounter(() -> cnPeers.servedOn(index));
            }
            final int loopNumber = io.scythe.txn.ComputeNodePeers.loopNumber(c, l, options.loopsPerComputeNode());
            // With recovery, ids carry the CN's slot as a cluster CN's do: recovery frees CAS words by it. A
            // restarted incarnation's carry epoch 2 (SimOptions asks it for the redo log, so tally exists).
            final TxnRuntime runtime = new TxnRuntime(catalog, rrpc, LoopTimers.on(bridge),
                cnTso != null ? cnTso : tsoGroupFor(rrpc, counter, tsoNode, false), watermarks,
                tally != null ? CrashRecovery.idBase(c, l, restart == null ? 1 : 2) : (long) loopNumber << 40);
            if (tally == null && c < 0xff && l < 0xff) {
                // Loops numbered across the cluster carry no CN slot: name it as a recovery run's ids do (slot c + 1,
                // loop l + 1), so Aurogon's timestamps carry a server id and a loop id as the paper's (§4.1). Past 254
                // CNs or loops the ids do not fit 8 bits: left to idBase, as before, where past 255 loops in all two
                // loops share a (server, loop) pair and may draw equal timestamps (unreachable with today's limits;
                // not refused yet).
                runtime.coordinatorIds(c + 1, l + 1);
            }
            runtime.lookupMode(options.lookup());
            if (options.faults().crashMn() != Faults.NO_CRASH) {
                // A request to the dead node fails, or times out; the configuration removes it detectNs after.
                runtime.failoverWaitNs(2 * options.faults().mnCallTimeoutNs() + options.faults().detectNs());
            }
            if (options.redoLog()) {
                final io.scythe.txn.recovery.RedoLog log = io.scythe.txn.recovery.RedoLog.enable(runtime,
                    io.scythe.txn.recovery.RedoLog.DEFAULT_REGION_BYTES);
                if (tally != null && operation == null) {
                    // An operation run (the B-link tree's transactions) has no transaction results to settle: its
                    // check judges the dead node's commits itself (TreeSim.Ledger), recovery's report counts records.
                    log.onPosting(tally::posting);
                }
            }
            runtime.clocks(io.scythe.bridge.NodeClocks.onLoop(cn)); // this loop's bridge is current (bridgeOn)
            if (!recorders.isEmpty() || crashed != null) {
                runtime.recorder(new io.scythe.txn.HistoryRecorder() {
                    @Override
                    public void committed(final long txnId, final long commitTs,
                                          final List<io.scythe.txn.Access> accesses) {
                        recordCommit(txnId, commitTs, accesses, false);
                    }

                    @Override
                    public void committedReadCommitted(final long txnId, final long commitTs,
                                                       final List<io.scythe.txn.Access> accesses) {
                        recordCommit(txnId, commitTs, accesses, true); // checked at its level (stop-58 review 1)
                    }

                    @Override
                    public void inDoubt(final long txnId, final List<io.scythe.txn.Access> given) {
                        final List<io.scythe.txn.Access> accesses = crashed != null ? crashed.inDoubt(txnId, given)
                            : partitionReports != null && partitionReports.repeats(given) ? List.of() : given;
                        if (accesses.isEmpty()) {
                            return; // a recovery's repeat of a commit already reported: the same transaction
                        }
                        if (tally != null) {
                            tally.recorded(txnId);
                        }
                        for (final io.scythe.txn.HistoryRecorder r : recorders) {
                            r.inDoubt(txnId, accesses);
                        }
                    }
                });
            }
            if (cnPeers != null) {
                runtime.peerLoops(io.scythe.txn.ComputeNodePeers.loop(peers, cnPeers, loopNumber, l,
                    options.loopsPerComputeNode()));
            }
            final int computeNode = c;
            runtime.onGiveUp(why -> computeNodeGaveUp(computeNode, loop, why));
            runtime.onPathTaken(name -> pathsTaken.computeIfAbsent(name, n -> new long[1])[0]++);
            runtimes.add(runtime);
            loopSetUp.startLoop(l, runtime, loop);
            // The harness's rule for an aborted attempt, one for every protocol (OnAbort): retry, or one attempt.
            final Coordinator coordinator = new Coordinator(runtime, protocol,
                options.onAbort().attempts(options.maxAttempts()));
            coordinator.onAbort(this::abortedAttempt);
            if (restart == null) {
                coordinators.add(coordinator);
            }
            cnCoordinators.add(coordinator); // a restarted incarnation's: its own list (restart)
            // Open every ring and channel now: the event bus carries the control plane before time starts.
            for (final LogDb db : memoryNodes) {
                connected.add(rrpc.rocket(db.nic().node()));
                connected.add(rrpc.oneSided(db.nic().node()));
            }
            connected.add(rrpc.oneSided(tsoNode));
            for (final String proxy : proxyNodes) {
                connected.add(rrpc.rocket(proxy));
            }
            for (int k = l; k < options.clientsPerComputeNode(); k += options.loopsPerComputeNode()) {
                final Client client = new Client(clients.size(), c, l, loop, coordinator, runtime,
                    new SplittableRandom(options.seed() * 1_000_003L + clients.size()));
                if (shardMap != null) {
                    client.routeBy(new io.scythe.routing.Router(options.routing(), shardMap),
                        new SplittableRandom((options.seed() * 1_000_003L + client.id) ^ ROUTE_SEED_SALT));
                }
                clients.add(client);
                if (restart != null) {
                    client.dormant = true;
                    restart.clients.add(client);
                }
            }
        }
        if (restart == null) {
            cnLoops.add(loops);
        }
    }

    /** Compute nodes restarted in this run (their new incarnations each need rings of their own). */
    private int restartedNodes() {
        return options.faults().restartAfterNs() >= 0 ? options.faults().crashCns().length : 0;
    }

    /** A restarted incarnation's peer messaging, not among {@link #peers} (those stay by node: survivors call them). */
    private CnPeers restartPeers(final Vertx vertx, final Nic cn) {
        return openPeers(vertx, cn);
    }

    private CnPeers newPeers(final Vertx vertx, final Nic cn) {
        final CnPeers p = openPeers(vertx, cn);
        peers.add(p);
        return p;
    }

    /** A CN's peer messaging, with rings for every CN and every restarted incarnation. */
    private CnPeers openPeers(final Vertx vertx, final Nic cn) {
        final CnPeers p = io.scythe.txn.ComputeNodePeers.open(vertx, cn, peerOptions, options.computeNodes()
            + restartedNodes(), options.loopsPerComputeNode());
        peerSetUp.accept(p);
        return p;
    }

    /** Opens each CN loop's ring to the paired loop of every other CN, and its channel there, before time starts. */
    private Future<Void> connectPeers() {
        final List<Future<?>> connected = new ArrayList<>();
        for (int c = 0; c < peers.size(); c++) {
            for (final SimLoop loop : cnLoops.get(c)) {
                Bridge.switchCurrent(loop.bridge());
                connected.addAll(io.scythe.txn.ComputeNodePeers.connectFrom(peers, c, options.loopsPerComputeNode(),
                    everyLoopPair));
            }
        }
        for (final Incarnation next : restarts) { // from each restarted incarnation's loops to every other node
            for (final SimLoop loop : next.loops) {
                Bridge.switchCurrent(loop.bridge());
                for (int d = 0; d < peers.size(); d++) {
                    if (d != next.cn) {
                        connected.add(next.cnPeers.connect(peers.get(d).node()));
                    }
                    for (int m = 0; everyLoopPair && m < options.loopsPerComputeNode(); m++) {
                        connected.add(next.cnPeers.rocket(peers.get(d).node(), m));
                    }
                }
            }
        }
        // And from every other node's loops to each restarted incarnation: a rejoined Lotus node is asked at its own
        // address (handoffs giving its shards back, lock requests for them), and rings open before time starts only.
        for (final Incarnation next : restarts) {
            for (int d = 0; d < peers.size(); d++) {
                if (d == next.cn) {
                    continue;
                }
                for (final SimLoop loop : cnLoops.get(d)) {
                    Bridge.switchCurrent(loop.bridge());
                    connected.add(peers.get(d).connect(next.cnPeers.node()));
                }
            }
            for (final Incarnation other : restarts) { // several restarted at once (Fig. 15): to each other too
                for (int l = 0; other != next && l < other.loops.size(); l++) {
                    Bridge.switchCurrent(other.loops.get(l).bridge());
                    connected.add(other.cnPeers.connect(next.cnPeers.node()));
                }
            }
        }
        Bridge.switchCurrent(null);
        return Future.all(connected).mapEmpty();
    }

    // ------------------------------------------------------------------------------------------------- running

    private void recordCommit(final long txnId, final long commitTs, final List<io.scythe.txn.Access> accesses,
                              final boolean readCommitted) {
        recordedCommits++;
        if (crashed != null ? crashed.committed(txnId, accesses)
            : partitionReports != null && partitionReports.commitRepeats(accesses)) {
            // A recovery reported it in doubt under its id first (its coordinator was cut off past the orphan lease):
            // that record stands for it in the history; the client heard the commit, so it counts as one.
            return;
        }
        if (tally != null) {
            tally.recorded(txnId);
        }
        for (final io.scythe.txn.HistoryRecorder r : recorders) {
            if (readCommitted) {
                r.committedReadCommitted(txnId, commitTs, accesses);
            } else {
                r.committed(txnId, commitTs, accesses);
            }
        }
    }

    private void simulate() {
        initialTotal = spec.total(memoryNodes);
        startNs = clock.nanoTime();
        lastFinishedNs = startNs;
        measureFromNs = startNs + options.warmupNs();
        endNs = measureFromNs + options.durationNs();
        if (options.timelineNs() > 0) {
            timeline = new Timeline(options.timelineNs(), endNs - startNs);
        }
        for (final SimLoop loop : scheduler.loops()) {
            loop.markCpuAt(endNs);
        }
        for (final Client client : clients) {
            if (!client.dormant) { // a restarted incarnation's clients begin at its restart
                client.loop.execute(() -> next(client));
            }
        }
        if (options.reclaimEveryNs() > 0) {
            for (int i = 0; i < mnLoops.size(); i++) {
                final LogDb db = memoryNodes.get(i);
                final SimLoop loop = mnLoops.get(i);
                loop.schedule(() -> reclaimRound(loop, db), options.reclaimEveryNs(),
                    java.util.concurrent.TimeUnit.NANOSECONDS);
            }
        }
        if (options.queueSampleNs() > 0) {
            final SimLoop observer = scheduler.newLoop("observer", (loop, poll, work, requests) -> 0);
            sampleQueues(observer);
        }
        if (shardMap != null && options.moveShardEveryNs() > 0) {
            final SimLoop mover = scheduler.newLoop("shard-mover", (loop, poll, work, requests) -> 0);
            final SplittableRandom random = new SplittableRandom(options.seed() ^ MOVE_SEED_SALT);
            mover.schedule(() -> moveShard(mover, random), options.moveShardEveryNs(),
                java.util.concurrent.TimeUnit.NANOSECONDS);
        }
        final Faults faults = options.faults();
        // A memory node and a compute node may both crash: each at its time, the earlier first (a tie: the MN).
        final boolean mnFirst = faults.crashCn() == Faults.NO_CRASH || faults.crashMnAtNs() <= faults.crashAtNs();
        if (faults.crashMn() != Faults.NO_CRASH && mnFirst) {
            scheduler.runUntil(startNs + faults.crashMnAtNs(), this::failed);
            crashMemoryNode(faults);
        }
        if (faults.crashCn() != Faults.NO_CRASH) {
            // The CNs crashing at one instant crash together (--crash-cn a,b,..), each as one would, in the order
            // given; with one --crash-at time per CN (Faults#staggered) each group at its own time, later ones dying
            // while the earlier ones' deaths are detected, recovered or taken over.
            final int[] all = faults.crashCns();
            SimLoop membership = null;
            inFlightAtCrash = 0;
            for (int first = 0; first < all.length;) {
                int end = first + 1;
                while (end < all.length && faults.crashAtNs(end) == faults.crashAtNs(first)) {
                    end++;
                }
                final int[] group = java.util.Arrays.copyOfRange(all, first, end);
                scheduler.runUntil(startNs + faults.crashAtNs(first), this::failed);
                first = end;
                for (final Client client : clients) {
                    if (contains(group, client.computeNode) && client.busy) {
                        crashed.inFlight(client.lastAttempt, client.lastResult);
                        inFlightAtCrash++;
                    }
                }
                if (tally != null) {
                    for (final int cn : group) {
                        crashForRecovery(cn);
                    }
                }
                for (final int cn : group) {
                    for (final SimLoop loop : cnLoops.get(cn)) {
                        loop.crash();
                    }
                }
                if (first == all.length && !restarts.isEmpty()) { // one crash time (Faults#validate)
                    final SimLoop restarter = scheduler.newLoop("restarter", (loop, poll, work, requests) -> 0);
                    restarter.schedule(() -> restarts.forEach(this::restart), faults.restartAfterNs(),
                        java.util.concurrent.TimeUnit.NANOSECONDS);
                }
                if (recovery != null) {
                    if (membership == null) {
                        membership = scheduler.newLoop("membership", (loop, poll, work, requests) -> 0);
                    }
                    recovery.detectLater(membership, faults.detectNs(), faults.detectStaggerNs(),
                        options.computeNodes(), cn -> !cnLoops.get(cn).get(0).crashed() && !givenUp.containsKey(cn),
                        runtimesOfCn, cnLoops, clock::nanoTime, recorders);
                }
            }
        }
        if (faults.crashMn() != Faults.NO_CRASH && !mnFirst) {
            scheduler.runUntil(startNs + faults.crashMnAtNs(), this::failed);
            crashMemoryNode(faults);
        }
        scheduler.runUntil(endNs + options.drainNs(), () -> failed() || drainedBesideGivenUp());
        if (!failed() && givenUp.isEmpty() && busyServingClients() > 0 && options.drainMaxNs() > options.drainNs()) {
            // Still busy after the drain (a retry storm behind a hot address, say): keep going, within the bound, until
            // every client finished. A run quiescent within the drain never gets here (its events are unchanged).
            scheduler.runUntil(endNs + options.drainMaxNs(), () -> failed() || busyServingClients() == 0);
            // Stopped the moment the last client finished: what a module holds lazily (SELCC's cached latches,
            // until their idle lease ends) would read as locks left held. Let it go first.
            final long settle = settleNs();
            if (!failed() && busyServingClients() == 0 && settle > 0) {
                scheduler.runUntil(clock.nanoTime() + settle, this::failed);
            }
        } else if (!failed() && givenUp.isEmpty() && busyServingClients() == 0 && clock.nanoTime()
            - (lastFinishedNs + settleNs()) < 0) {
            // The drain is sized from the module's settle time too: a lease longer than the drain (SELCC's
            // scythe.selcc.leaseNs at 1 s against the 50 ms drain) kept latches cached past it, and the end-of-run
            // checks read them as locks held and their unflushed writes as lost. Runs whose settle time ends within
            // the drain (every other protocol, SELCC's default 1 ms lease) are untouched.
            scheduler.runUntil(lastFinishedNs + settleNs(), this::failed);
        }
        drainedNs = clock.nanoTime() - endNs;
        Bridge.switchCurrent(null);
    }

    private static boolean contains(final int[] values, final int value) {
        for (final int v : values) {
            if (v == value) {
                return true;
            }
        }
        return false;
    }

    /**
     * Crashed node {@code next.cn} comes back as its new incarnation: its module starts on it with
     * {@code awaitsOwnRecovery} (empty state; it must not serve before its old incarnation is recovered), each loop is
     * equipped, and its clients resume there. It takes the node's place in the node lists (checks, tests).
     */
    private void restart(final Incarnation next) {
        next.restartedAtNs = clock.nanoTime();
        final io.scythe.txn.spi.ComputeNodeContext.LoopSetUp setUp = cnModule == null
            ? io.scythe.txn.spi.ComputeNodeContext.LoopSetUp.NONE
            : cnModule.startComputeNode(io.scythe.txn.ComputeNodePeers.context(next.cn, cnNames, next.cnPeers,
                computeNodeShared, null, true));
        cnLoops.set(next.cn, next.loops);
        runtimesOfCn.set(next.cn, next.runtimes);
        coordinatorsOfCn.set(next.cn, next.coordinators);
        coordinators.addAll(next.coordinators);
        for (int l = 0; l < next.loops.size(); l++) {
            final int index = l;
            final SimLoop loop = next.loops.get(l);
            loop.execute(() -> setUp.startLoop(index, next.runtimes.get(index), loop));
        }
        for (final Client client : next.clients) {
            client.dormant = false;
            client.loop.execute(() -> next(client));
        }
    }

    /**
     * Each restarted incarnation, after its crash: when it was restarted, and (Lotus) when it began to serve, which it
     * must not before its old incarnation's recovery handed its shards on; null: not (yet).
     */
    private io.vertx.core.json.JsonArray restartsJson() {
        final io.vertx.core.json.JsonArray out = new io.vertx.core.json.JsonArray();
        final long crashNs = startNs + options.faults().crashAtNs();
        for (final Incarnation next : restarts) {
            final JsonObject json = new JsonObject().put("cn", next.cn).put("restarted_after_ns",
                next.restartedAtNs < 0 ? null : next.restartedAtNs - crashNs);
            final io.scythe.txn.lotus.LotusNode lotus = next.cnPeers == null ? null
                : io.scythe.txn.lotus.LotusNode.of(next.cnPeers);
            if (lotus != null) {
                json.put("serving_after_ns", lotus.servingSinceNs() < 0 ? null : lotus.servingSinceNs() - crashNs);
            }
            out.add(json);
        }
        return out;
    }

    /** The virtual time the run started (its crash and timeline times count from here), for tests. */
    public long startNs() {
        return startNs;
    }

    /** Compute node {@code cn}'s peer messaging now: its restarted incarnation's once restarted (else as peersOf). */
    public CnPeers currentPeers(final int cn) {
        for (final Incarnation next : restarts) {
            if (next.cn == cn && next.restartedAtNs >= 0) {
                return next.cnPeers;
            }
        }
        return peers.get(cn);
    }

    /** The protocol module's {@link io.scythe.txn.spi.ProtocolModule#settleNs}, 0 for an unregistered protocol. */
    private long settleNs() {
        final io.scythe.txn.spi.ProtocolModule owner = owner();
        return owner == null ? 0 : owner.settleNs();
    }

    /**
     * The run's protocol module, or null for a protocol given as an object under an unregistered name (tests): no
     * statistics or settle time of its own.
     */
    private io.scythe.txn.spi.ProtocolModule owner() {
        try {
            return io.scythe.txn.spi.ProtocolRegistry.moduleOf(options.protocol());
        } catch (final io.scythe.txn.UnknownKeyException onlyATest) {
            return null;
        }
    }

    /**
     * Memory node {@code faults.crashMn()} dies now: its loop stops with its services' state, its NIC closes (verbs to
     * it fail, calls it took time out). {@code detectNs} later the configuration removes it, as cluster mode's
     * {@code MemoryNodeFailover} writes it ({@link io.scythe.txn.MemoryNodeConfiguration#without}): on the loop of the
     * node whose backup copy is promoted, the protocol module's promotion step runs
     * ({@link io.scythe.txn.spi.ProtocolModule#promoted}), then every compute node's catalog serves the new
     * configuration. The end-of-run checks read each partition's serving copy ({@link #servingNodes}).
     */
    private void crashMemoryNode(final Faults faults) {
        final int dead = faults.crashMn();
        final int n = memoryNodes.size();
        mnLoops.get(dead).crash();
        Bridge.switchCurrent(null);
        servers.get(dead).stop(); // its handlers and rings go with it (before its NIC: stopping deregisters there)
        deadServer = servers.get(dead);
        memoryNodes.get(dead).nic().close();
        final io.scythe.txn.MemoryNodeConfiguration now = catalog.configuration() != null ? catalog.configuration()
            : io.scythe.txn.MemoryNodeConfiguration.initial(n, options.replicas());
        final io.scythe.txn.MemoryNodeConfiguration next = now.without(dead);
        // The partition whose primary died (one a node), its promoted copy and where that copy's tables are.
        servingNodes = new ArrayList<>(memoryNodes);
        final Map<Integer, java.util.Set<Integer>> promoted = new java.util.TreeMap<>();
        for (int p = 0; p < n; p++) {
            final int copy = next.primaryCopy(p);
            if (copy != now.primaryCopy(p)) {
                final int node = next.nodeOf(p, copy);
                servingNodes.set(p, memoryNodes.get(node).backupView(copy));
                for (final Catalog.Table t : catalog.tables()) {
                    promoted.computeIfAbsent(node, k -> new java.util.TreeSet<>())
                        .add(t.partitions().get(p).backups().get(copy - 1).descriptor().schema().id());
                }
            }
        }
        final List<TxnRuntime> live = new ArrayList<>();
        runtimesOfCn.forEach(live::addAll);
        final io.scythe.txn.spi.ProtocolModule module = io.scythe.txn.spi.ProtocolRegistry
            .moduleOf(options.protocol());
        // The copies serve once every one is promoted: the promotion to finish last, whichever loop runs it, switches
        // the catalog (no coordinator may be sent to a copy whose promote step has not run).
        final java.util.concurrent.atomic.AtomicInteger unpromoted =
            new java.util.concurrent.atomic.AtomicInteger(promoted.size());
        for (final Map.Entry<Integer, java.util.Set<Integer>> e : promoted.entrySet()) {
            final LogDb db = memoryNodes.get(e.getKey());
            mnLoops.get(e.getKey()).schedule(() -> {
                module.promoted(db, e.getValue(), live);
                if (unpromoted.decrementAndGet() == 0) {
                    catalog.reconfigure(next);
                    final io.scythe.txn.Protocol protocol = io.scythe.txn.spi.ProtocolRegistry
                        .protocol(options.protocol());
                    if (module.promotedCopiesServeAtOnce(protocol)) {
                        catalog.settled(next.epoch()); // its own locks keep the commits in flight (the module says)
                    } else if (module.simulatorSettlesPromotedCopies(protocol)) {
                        settleWhenDrained(mnLoops.get(e.getKey()), next.epoch(), () -> promoted.forEach((node, ids) ->
                            module.promotedSettling(memoryNodes.get(node), ids, live)));
                    }
                }
            }, faults.detectNs(), java.util.concurrent.TimeUnit.NANOSECONDS);
        }
        if (promoted.isEmpty()) {
            mnLoops.get((dead + 1) % n).schedule(() -> catalog.reconfigure(next), faults.detectNs(),
                java.util.concurrent.TimeUnit.NANOSECONDS);
        }
    }

    /** How often {@link #settleWhenDrained} looks at the commits in flight (virtual time). */
    private static final long SETTLE_POLL_NS = 1_000;

    /**
     * Settles the copies configuration {@code epoch} promoted ({@code Catalog#settled}) once no commit of an older
     * epoch is past its point of no return and unfinished, looking every {@link #SETTLE_POLL_NS} on {@code loop}
     * ({@code ProtocolModule#simulatorSettlesPromotedCopies}; cluster mode's {@code MemoryNodeFailover} settles
     * once every compute node drained), running {@code settling} first. One catalog serves every compute node here, so its count is all of theirs.
     */
    private void settleWhenDrained(final SimLoop loop, final long epoch, final Runnable settling) {
        if (catalog.inFlightBefore(epoch) == 0) {
            settling.run(); // ProtocolModule#promotedSettling (one loop runs every promoted node's: one process here)
            catalog.settled(epoch);
            return;
        }
        loop.schedule(() -> settleWhenDrained(loop, epoch, settling), SETTLE_POLL_NS,
            java.util.concurrent.TimeUnit.NANOSECONDS);
    }

    /** Clients of compute nodes still serving whose transaction has not finished. */
    private long busyServingClients() {
        long busy = 0;
        for (final Client c : clients) {
            if (c.busy && serving(c)) {
                busy++;
            }
        }
        return busy;
    }

    /** Work requests posted on compute nodes' and memory nodes' queue pairs whose completion is not yet polled. */
    private long verbsInFlight() {
        long n = 0;
        for (final Nic nic : cnNics) {
            for (final io.scythe.fabric.QueuePair qp : nic.queuePairs()) {
                n += qp.outstanding();
            }
        }
        for (final LogDb db : memoryNodes) {
            for (final io.scythe.fabric.QueuePair qp : db.nic().queuePairs()) {
                n += qp.outstanding();
            }
        }
        return n;
    }

    /**
     * What the crash of compute node {@code cn} hits, before its loops vanish: its transactions in flight (each
     * client's last attempt and its result), the locks and tickets it holds or queues for, its redo records not
     * finished; then {@link CrashRecovery#crashed}.
     */
    private void crashForRecovery(final int cn) {
        final String name = "cn" + cn;
        final Map<Long, Long> inFlight = new TreeMap<>();
        long clientsInFlight = 0; // its clients' (all of the run's when it crashes alone: inFlightAtCrash)
        for (final Client client : clients) {
            if (client.ranOn == cn && client.busy && client.lastAttempt != 0) {
                inFlight.put(client.lastAttempt, client.lastResult);
            }
            clientsInFlight += client.computeNode == cn && client.busy ? 1 : 0;
        }
        final LocksLeftHeld held = LocksLeftHeld.census(memoryNodes, ticketLedgers, ticketInserts,
            this::computeNodeOf, name::equals);
        int tickets = 0;
        int shared = 0;
        for (final TicketLedger ledger : ticketLedgers) {
            tickets += ledger == null ? 0 : ledger.heldBy(name);
            shared += ledger == null ? 0 : ledger.sharedHeldBy(name);
        }
        int unfinished = 0;
        for (final TxnRuntime runtime : runtimesOfCn.get(cn)) {
            final io.scythe.txn.recovery.RedoLog log = io.scythe.txn.recovery.RedoLog.of(runtime);
            unfinished += log == null ? 0 : log.unfinishedRecords();
        }
        final JsonObject census = new JsonObject().put("in_flight", clientsInFlight).put("locks_held", held.byGivenUp)
            .put("tickets_queued", Math.max(0, tickets - held.byGivenUp)).put("redo_unfinished", unfinished);
        if (shared > 0) { // scythe's reader tickets: recovery must release each once (sim.crash.shared_tickets)
            census.put("shared_held", shared);
        }
        tally.crashed(cn, clock.nanoTime(), inFlight, census);
        census.put("stage", CrashRecovery.stage(census));
    }

    /** How long after the end a run whose nodes gave up waits for their transactions in flight before it stops. */
    static final long GIVEN_UP_DRAIN_NS = 5_000_000;

    /**
     * Whether the drain is over although transactions of nodes that gave up are still in flight: every client of a
     * serving node is done, and none finished for {@link #GIVEN_UP_DRAIN_NS}. What those transactions still do is
     * wait, without end, for locks their own node holds (only recovery frees them); a commit past its point of no
     * return finishes or gives up in microseconds.
     */
    private boolean drainedBesideGivenUp() {
        if (givenUp.isEmpty() || clock.nanoTime() - endNs < 0 || clock.nanoTime() - lastFinishedNs
            < GIVEN_UP_DRAIN_NS) {
            return false;
        }
        for (final Client c : clients) {
            if (c.busy && serving(c)) {
                return false;
            }
        }
        return true;
    }

    /**
     * One reclamation round on a memory node's loop, as the eviction verticle does: no horizon holds deleted objects
     * back (the one-sided protocols read no older versions), only their locks and queues do.
     */
    private void reclaimRound(final SimLoop loop, final LogDb db) {
        if (clock.nanoTime() - (endNs + options.drainNs()) >= 0) {
            return;
        }
        reclaimed += db.reclaim(Long.MAX_VALUE);
        loop.schedule(() -> reclaimRound(loop, db), options.reclaimEveryNs(), java.util.concurrent.TimeUnit.NANOSECONDS);
    }

    /**
     * Moves a shard drawn from {@code random} to another compute node (the next epoch's map: routers that cached the
     * older one are refused by its old owner), every {@code moveShardEveryNs} until the end.
     */
    private void moveShard(final SimLoop mover, final SplittableRandom random) {
        if (clock.nanoTime() - endNs >= 0) {
            return;
        }
        final int shard = random.nextInt(shardMap.shards());
        final int cns = shardMap.computeNodes();
        shardMap = shardMap.moved(shard, (shardMap.ownerOf(shard) + 1 + random.nextInt(cns - 1)) % cns);
        mover.schedule(() -> moveShard(mover, random), options.moveShardEveryNs(),
            java.util.concurrent.TimeUnit.NANOSECONDS);
    }

    /** Reads every object's lock words, like an MN-side observer with no cost (Table 2), until the end. */
    private void sampleQueues(final SimLoop observer) {
        if (clock.nanoTime() - endNs >= 0) {
            return;
        }
        if (clock.nanoTime() - measureFromNs >= 0) {
            queues.sample(memoryNodes);
        }
        observer.schedule(() -> sampleQueues(observer), options.queueSampleNs(),
            java.util.concurrent.TimeUnit.NANOSECONDS);
    }

    private boolean failed() {
        return scheduler.failure() != null;
    }

    /**
     * The verb fault ({@link Faults#verbFailRate}): a verb of the chosen kinds that a compute node's transaction
     * channel ({@code RdmaChannel}: not an RRPC ring) posted to a memory node, which just landed, reports failure.
     */
    private io.scythe.fabric.WcStatus injectedVerbFailure(final io.scythe.fabric.QueuePair requester,
                                                         final io.scythe.fabric.Opcode opcode) {
        final Faults faults = options.faults();
        if (!faults.verbFailKinds().contains(opcode)
            || !(requester.attachment() instanceof io.scythe.bridge.RdmaChannel)
            || !requester.localNode().startsWith("cn") || !requester.remoteNode().startsWith("mn")
            || verbFaultRandom.nextDouble() >= faults.verbFailRate()) {
            return null;
        }
        verbFailuresInjected.computeIfAbsent(Faults.kindName(opcode), k -> new long[1])[0]++;
        return io.scythe.fabric.WcStatus.TRANSPORT_RETRY_EXCEEDED;
    }

    /**
     * The jitter and the partition ({@link Faults#partitioned}) as the fabric asks them: a batch posted across the
     * partition while it holds is held until it heals, as RC's transport retries deliver it then.
     */
    private final class PartitionDelays implements io.scythe.fabric.DelayInjector {
        private final long jitterNs;

        PartitionDelays(final long jitterNs) {
            this.jitterNs = jitterNs;
        }

        @Override
        public long extraNs(final String localNode, final String remoteNode, final int qpNumber) {
            return jitterNs > 0 ? faultRandom.nextLong(jitterNs) : 0;
        }

        @Override
        public long heldNs(final String localNode, final String remoteNode, final int qpNumber) {
            final Faults faults = options.faults();
            final long sinceStart = clock.nanoTime() - startNs;
            if (!faults.cut(localNode, remoteNode, sinceStart)) {
                return 0;
            }
            partitionHeld[0]++;
            final long held = faults.partitionAtNs() + faults.partitionForNs() - sinceStart;
            partitionHeld[1] += held;
            return held;
        }
    }

    /**
     * A loop of compute node {@code cn} cannot go on safely ({@code TxnRuntime#onGiveUp}): the node stops serving, as
     * a cluster node does by losing its lease. Its clients begin nothing more; what is in flight finishes, or waits.
     * There is no recovery yet, so what it holds stays held: the run reports it ({@code sim.gave_up}), not as a bug.
     */
    private void computeNodeGaveUp(final int cn, final SimLoop loop, final String why) {
        if (givenUp.containsKey(cn)) {
            giveUps += why.startsWith(NODE_STOPPED) ? 0 : 1;
            return;
        }
        giveUps++;
        givenUp.put(cn, new JsonObject().put("cn", cn).put("loop", loop.name())
            .put("at_ns", clock.nanoTime() - startNs).put("why", why));
        for (final TxnRuntime other : runtimesOfCn.get(cn)) {
            other.giveUp(NODE_STOPPED + " (" + loop.name() + " gave up)"); // its loops retry nothing more either
        }
    }

    private static final String NODE_STOPPED = "the compute node stopped serving";

    /** The compute node whose loop ran transaction {@code txnId} (its loop number is the id's bits 40 and up). */
    private String computeNodeOf(final long txnId) {
        if (tally != null) {
            final int cn = CrashRecovery.computeNodeOf(txnId);
            return cn < 0 ? null : "cn" + cn;
        }
        final long loop = txnId >>> 40;
        return loop < 1 ? null : "cn" + (loop - 1) / options.loopsPerComputeNode();
    }

    private boolean nodeGaveUp(final String computeNode) {
        return computeNode.startsWith("cn") && givenUp.containsKey(Integer.parseInt(computeNode.substring(2)));
    }

    /** A failure of a verb the run injected, or of one flushed after it: the attempt aborted, nothing committed. */
    private boolean injectedVerbFailed(final Throwable cause) {
        return options.faults().verbFailRate() > 0 && cause instanceof io.scythe.bridge.VerbException v
            && (v.status() == io.scythe.fabric.WcStatus.TRANSPORT_RETRY_EXCEEDED
            || v.status() == io.scythe.fabric.WcStatus.WR_FLUSH_ERROR);
    }

    private void next(final Client client) {
        if (clock.nanoTime() - endNs >= 0 || client.loop.crashed() || givenUp.containsKey(client.computeNode)) {
            client.busy = false;
            return;
        }
        client.busy = true;
        if (operation != null) {
            runOperation(client);
            return;
        }
        final OltpSpec.Drawn drawn = spec.draw(client.random, client.computeNode,
            client.computeNode * options.loopsPerComputeNode() + client.loopIndex);
        final long seq = client.sequence++;
        client.lastAttempt = 0;
        client.lastResult = null;
        final long began = clock.nanoTime();
        client.type = drawn.type();
        client.since = began;
        if (client.router == null) {
            run(client, client.coordinator, drawn, seq, began);
        } else {
            routed(client, drawn, seq, began, MAX_REROUTES);
        }
    }

    /** Refusals one routed transaction may meet (each after learning the current map) before it fails. */
    static final int MAX_REROUTES = 8;

    /**
     * Sends {@code drawn} where the client's router routes it: to that compute node's loop of the client's loop index
     * (one event later, at the same virtual time), which refuses it when routed by a shard it does not own; the router
     * then learns the current map and sends it again.
     */
    private void routed(final Client client, final OltpSpec.Drawn drawn, final long seq, final long began,
                        final int reroutes) {
        final io.scythe.routing.Router router = client.router;
        final int cn = router.route(drawn.routingKey(), drawn.readOnly(), client.routeRandom);
        final boolean checked = router.byShard(drawn.routingKey(), drawn.readOnly());
        cnLoops.get(cn).get(client.loopIndex).execute(() -> {
            final io.scythe.routing.WrongOwnerException refused = checked
                ? shardMap.refusal(cn, drawn.routingKey()) : null;
            if (refused == null) {
                client.ranOn = cn;
                run(client, coordinatorsOfCn.get(cn).get(client.loopIndex), drawn, seq, began);
            } else if (reroutes > 0) {
                router.learn(shardMap);
                routed(client, drawn, seq, began, reroutes - 1);
            } else {
                client.ranOn = cn;
                finished(client, failed(client, seq, drawn.type(), refused, began, clock.nanoTime()));
            }
        });
    }

    /** The type of each procedure in flight (by identity; a count each), for the aborts' breakdown by type. */
    private final Map<Object, InFlight> typeInFlight = new java.util.IdentityHashMap<>();

    /** A procedure's transaction type, and how many transactions run it now. */
    private static final class InFlight {
        final String type;
        int running;

        InFlight(final String type) {
            this.type = type;
        }
    }
    /** Aborted attempts by transaction type and reason ({@code aborts_by_type}). */
    private final Map<String, Map<String, long[]>> abortsByType = new java.util.TreeMap<>();

    /**
     * Aborted attempts by transaction type, then the table of the object they aborted on ({@code AbortException#table},
     * {@code unnamed} when the protocol names none), then reason ({@code aborts_by_table}).
     */
    private final Map<String, Map<String, Map<String, long[]>>> abortsByTable = new java.util.TreeMap<>();

    /**
     * Rare paths the loops reported taking ({@code TxnRuntime#tookPath}), by name, over every runtime of the run
     * (those of a restarted compute node too): {@code sim.paths_taken}, absent when none was.
     */
    private final Map<String, long[]> pathsTaken = new java.util.TreeMap<>();

    private void abortedAttempt(final Object procedure, final io.scythe.txn.AbortException abort) {
        final InFlight typed = typeInFlight.get(procedure);
        final String type = typed == null ? "unknown" : typed.type;
        abortsByType.computeIfAbsent(type, t -> new java.util.TreeMap<>())
            .computeIfAbsent(abort.reason().label(), r -> new long[1])[0]++;
        abortsByTable.computeIfAbsent(type, t -> new java.util.TreeMap<>())
            .computeIfAbsent(abort.table() == null ? "unnamed" : abort.table(), t -> new java.util.TreeMap<>())
            .computeIfAbsent(abort.reason().label(), r -> new long[1])[0]++;
    }

    /**
     * One transaction type's commits in the measured window: their latency (first attempt to commit, retries
     * included) and attempts, and how many of them lie in the run's tail (at or above its P99): the per-type
     * breakdown that names what makes the tail (issue 22). Bookkeeping only: nothing here is simulated.
     */
    static final class TypeLatency {
        final Histogram latency = new Histogram(3_600_000_000_000L, 3);
        long attempts;

        void committed(final long latencyNs, final int attemptsOfIt) {
            latency.recordValue(Math.max(1, latencyNs));
            attempts += attemptsOfIt;
        }

        /** {@code p50}, {@code p99}, {@code max} (us), {@code attempts_per_commit} and {@code in_tail}. */
        JsonObject json(final long tailFromNs) {
            final long n = latency.getTotalCount();
            return new JsonObject().put("p50", RunResult.round(latency.getValueAtPercentile(50.0) / 1000.0, 1))
                .put("p99", RunResult.round(latency.getValueAtPercentile(99.0) / 1000.0, 1))
                .put("max", RunResult.round(latency.getMaxValue() / 1000.0, 1))
                .put("attempts_per_commit", RunResult.round((double) attempts / Math.max(1, n), 2))
                .put("in_tail", latency.getCountBetweenValues(Math.max(1, tailFromNs), latency.getMaxValue()));
        }
    }

    /** {@code counts} as nested JSON objects, the counts as numbers. */
    @SuppressWarnings("unchecked")
    private static JsonObject countsJson(final Map<String, ?> counts) {
        final JsonObject json = new JsonObject();
        counts.forEach((name, value) -> json.put(name, value instanceof long[] n ? (Object) n[0]
            : countsJson((Map<String, ?>) value)));
        return json;
    }

    /** Runs {@code drawn} on {@code coordinator} (of the calling loop) and records how it ended. */
    private void run(final Client client, final Coordinator coordinator, final OltpSpec.Drawn drawn, final long seq,
                     final long began) {
        final java.util.function.Function<io.scythe.txn.Txn, Future<Long>> body = drawn.declaredBody();
        final java.util.function.Function<io.scythe.txn.Txn, Future<Long>> ran = recovery == null && crashed == null
            ? body : attempts(client, body);
        final InFlight typed = typeInFlight.computeIfAbsent(ran, f -> new InFlight(drawn.type()));
        typed.running++;
        coordinator.run(ran, options.onAbort().attempts(options.maxAttempts(), drawn.type())).onComplete(ar -> {
            if (--typed.running == 0) {
                typeInFlight.remove(ran);
            }
            final long now = clock.nanoTime();
            if (tally != null) {
                tally.heard(client.attempts);
                client.attempts.clear();
            }
            final TxnRecord record;
            if (ar.succeeded()) {
                final Coordinator.Outcome<Long> o = ar.result();
                delta += o.result();
                committedTransactions++;
                record = new TxnRecord(client.id, seq, drawn.type(), TxnRecord.Kind.COMMITTED, o.result(),
                    o.commitTs(), o.attempts(), o.latencyNs(), began, now);
                if (timeline != null && now - endNs < 0) {
                    timeline.committed(now - startNs);
                }
                if (now - measureFromNs >= 0 && now - endNs < 0) {
                    committed++;
                    if (committedByCn != null) {
                        committedByCn[client.ranOn]++;
                    }
                    attemptsOfCommitted += o.attempts();
                    latencyNs.recordValue(Math.max(1, o.latencyNs()));
                    committedByType.computeIfAbsent(drawn.type(), t -> new TypeLatency())
                        .committed(o.latencyNs(), o.attempts());
                }
            } else if (ar.cause() instanceof AbortException a && (a.reason() == AbortReason.USER
                || a.reason() == AbortReason.DUPLICATE_KEY && spec.duplicateKeyIsAnOutcome())) {
                userRollbacks++;
                record = new TxnRecord(client.id, seq, drawn.type(), TxnRecord.Kind.ROLLED_BACK, 0, 0, 0,
                    now - began, began, now);
            } else if (ar.cause() instanceof AbortException a) {
                gaveUp++;
                record = new TxnRecord(client.id, seq, drawn.type(), TxnRecord.Kind.GAVE_UP, 0, 0,
                    a.attempts(), now - began, began, now);
            } else if (ar.cause() instanceof io.scythe.txn.OutcomeUnknownException
                && givenUp.containsKey(client.ranOn)) {
                outcomeUnknown++;
                record = new TxnRecord(client.id, seq, drawn.type(), TxnRecord.Kind.OUTCOME_UNKNOWN, 0, 0, 0,
                    now - began, began, now);
            } else if (ar.cause() instanceof io.scythe.txn.NotServingException
                && givenUp.containsKey(client.ranOn)) {
                notServed++;
                record = new TxnRecord(client.id, seq, drawn.type(), TxnRecord.Kind.NOT_SERVED, 0, 0, 0,
                    now - began, began, now);
            } else if (injectedVerbFailed(ar.cause())) {
                failedByVerb++;
                record = new TxnRecord(client.id, seq, drawn.type(), TxnRecord.Kind.VERB_FAILED, 0, 0, 0,
                    now - began, began, now);
            } else {
                record = failed(client, seq, drawn.type(), ar.cause(), began, now);
            }
            finished(client, record);
        });
    }

    /** {@code body}, noting each attempt's id and result in {@code client} (what a crash leaves in doubt). */
    private static java.util.function.Function<io.scythe.txn.Txn, Future<Long>> attempts(final Client client,
            final java.util.function.Function<io.scythe.txn.Txn, Future<Long>> body) {
        return txn -> {
            client.lastAttempt = txn.id();
            client.lastResult = null;
            client.attempts.add(txn.id());
            return body.apply(txn).onSuccess(result -> {
                if (client.lastAttempt == txn.id()) {
                    client.lastResult = result;
                }
            });
        };
    }

    private void runOperation(final Client client) {
        final long seq = client.sequence++;
        final long began = clock.nanoTime();
        client.type = "operation";
        client.since = began;
        operation.run(client.runtime, client.random).onComplete(ar -> {
            final long now = clock.nanoTime();
            final TxnRecord record;
            if (ar.succeeded()) {
                record = new TxnRecord(client.id, seq, "operation", TxnRecord.Kind.COMMITTED, 0, 0, 1, ar.result(),
                    began, now);
                if (timeline != null && now - endNs < 0) {
                    timeline.committed(now - startNs);
                }
                if (now - measureFromNs >= 0 && now - endNs < 0) {
                    committed++;
                    attemptsOfCommitted++;
                    latencyNs.recordValue(Math.max(1, ar.result()));
                }
            } else {
                record = failed(client, seq, "operation", ar.cause(), began, now);
            }
            finished(client, record);
        });
    }

    /** A transaction or operation that failed with an error (not an abort): the run reports it. */
    private TxnRecord failed(final Client client, final long seq, final String type, final Throwable cause,
                             final long began, final long now) {
        errors++;
        if (firstError == null) {
            firstError = String.valueOf(cause);
        }
        return new TxnRecord(client.id, seq, type, TxnRecord.Kind.ERROR, 0, 0, 0, now - began, began, now);
    }

    /** Hashes and publishes {@code record}, then starts the client's next transaction. */
    private void finished(final Client client, final TxnRecord record) {
        lastFinishedNs = record.finishedNs();
        if (verbsBeforeMeasuring == null && options.warmupNs() > 0 && record.finishedNs() - measureFromNs >= 0) {
            verbsBeforeMeasuring = cnVerbs(); // the warm-up's verbs, left out of verbs_per_txn (no event added)
        }
        historyHash = record.mixInto(historyHash);
        for (int i = 0; i < listeners.size(); i++) { // indexed: no iterator per transaction
            listeners.get(i).finished(record);
        }
        next(client);
    }

    // ------------------------------------------------------------------------------------------------- results

    private SimResult result(final long wallNs) {
        final long initial = initialTotal;
        // After a memory-node crash the checks read each partition's serving copy: the dead node's memory stopped
        // at the crash (the consistency conditions read it until the explorer sweep on 262ad729 found every Aurogon
        // TPC-C seed with --crash-mn "broken" by it while conservation, which read the serving copies, held).
        final List<LogDb> checked = servingNodes != null ? servingNodes : memoryNodes;
        final long finalSum = spec.total(checked);
        final long rolledDelta = tally == null ? 0 : tally.rolledDelta();
        final boolean conservedOk = finalSum == initial + delta + rolledDelta || crashed != null
            && crashed.explains(finalSum - initial - delta - rolledDelta);
        final long busyClients = busyServingClients();
        final boolean quiescent = busyClients == 0;
        // Not quiescent after the drain: a busy node's locks may be its transactions' in flight, not leaked. Judged by
        // node, not by transaction (a ticket ledger knows only the holder's node): a lock a finished attempt leaked
        // on a node whose other clients still spin on it is reported as "not quiescent", not as a lock left held
        // (the run fails either way, unless a node gave up: then neither is reported, as before the extended drain). Nothing is reclaimed past the drain (reclaimRound), so a run waiting on free
        // slots stays not quiescent.
        final java.util.Set<String> busyNodes = new java.util.HashSet<>();
        for (final Client c : clients) {
            if (c.busy && serving(c)) {
                busyNodes.add("cn" + c.computeNode);
            }
        }
        // The copies serving (after a memory-node failover the promoted ones): a dead node's words count for nothing.
        final LocksLeftHeld left = LocksLeftHeld.census(checked, ticketLedgers, ticketInserts,
            this::computeNodeOf, this::nodeGaveUp, busyNodes::contains);
        final long held = left.total;
        final Map<String, List<String>> conditions = operation == null ? spec.consistency(checked) : Map.of();
        final long verbsInFlight = quiescent ? 0 : verbsInFlight();
        final String notQuiescent = quiescent || !givenUp.isEmpty() ? null : "not quiescent after drain: "
            + busyClients + " transactions, " + verbsInFlight + " verbs in flight (drained "
            + RunResult.round(drainedNs / 1e6, 3) + " ms virtual past the end; their locks and writes are not settled, "
            + "so conservation, consistency conditions and their locks are not judged)";
        final io.vertx.core.json.JsonArray stuck = new io.vertx.core.json.JsonArray();
        for (final Client c : clients) {
            if (c.busy && serving(c) && stuck.size() < 8) {
                stuck.add(new JsonObject().put("client", c.id).put("loop", c.loop.name()).put("type", c.type)
                    .put("since_ns", c.since - startNs));
            }
        }
        long aborted = 0;
        final JsonObject aborts = new JsonObject();
        for (final AbortReason reason : io.scythe.txn.spi.ProtocolRegistry.abortReasons()) {
            long n = 0;
            for (final Coordinator c : coordinators) {
                n += c.aborts(reason);
            }
            if (n > 0) {
                aborts.put(reason.label(), n);
            }
            aborted += reason == AbortReason.USER ? 0 : n;
        }
        final double seconds = options.durationNs() / 1e9;
        final int totalClients = options.computeNodes() * options.clientsPerComputeNode();
        final String label = protocol.name();
        final RunResult run = new RunResult(label, totalClients).measured(committed, aborted, seconds, latencyNs);
        // A protocol whose commits bypass the recorder would leave the checker a partial history: refuse it. (A
        // crashed CN's last commits may be reported with nobody left to see them: not compared then.)
        final boolean historyComplete = recorders.isEmpty() || inFlightAtCrash >= 0
            || recordedCommits == committedTransactions;
        final JsonObject conserved = new JsonObject().put("quantity", spec.quantity()).put("initial", initial)
            .put("final", finalSum).put("committed_delta", delta).put("ok", conservedOk);
        if (tally != null) {
            conserved.put("recovered_delta", rolledDelta);
        }
        if (crashed != null) {
            conserved.put("crashed_unheard_delta", crashed.unheardDelta())
                .put("crashed_recovered_in_doubt", crashed.recoveredInDoubt())
                .put("crashed_recovered_by_id", crashed.recoveredById());
        }
        final List<String> violations = new ArrayList<>();
        // A protocol that promises snapshot isolation only is not judged on what write skew breaks (reported only).
        final java.util.Set<String> notJudged = io.scythe.bench.micro.OltpWorkload.writeSkewNotJudged(protocol, spec);
        final JsonObject notJudgedJson = io.scythe.bench.micro.OltpWorkload.notJudgedJson(notJudged, spec.quantity(),
            conservedOk, conditions);
        // A commit given up past its point of no return may be half written back: only its recovery settles it.
        if (!conservedOk && outcomeUnknown == 0 && notQuiescent == null && !notJudged.contains(spec.quantity())) {
            violations.add(spec.quantity() + " not conserved " + conserved.encode());
        }
        conditions.forEach((condition, broken) -> {
            // Without recovery, a loop that gave up leaves what recovery would settle: a half written-back commit,
            // inserts it never abandoned. Those break the conditions, as they do conservation.
            if (!notJudged.contains(condition) && !broken.isEmpty() && givenUp.isEmpty() && notQuiescent == null) {
                violations.add("consistency condition '" + condition + "' broken " + broken.size() + " times (first: "
                    + broken.get(0) + ")");
            }
        });
        // Lotus's own lease-based recoveries: one that failed left a dead node's commits or locks unsettled (reported
        // whether or not the host recovered anything itself).
        final io.scythe.txn.lotus.LotusCluster lotusCluster = peers.isEmpty() ? null
            : io.scythe.txn.lotus.LotusCluster.of(peers.get(0));
        if (lotusCluster != null) {
            // Reported here, not by one node's end check: that node may be dormant or crashed (review).
            if (!lotusCluster.violations().isEmpty()) {
                violations.add("cn0: shard ownership: " + lotusCluster.violations());
            }
            for (final io.scythe.txn.lotus.LotusCluster.Recovery r : lotusCluster.recoveries()) {
                if (r.failure() != null) {
                    violations.add("Lotus recovery of cn" + r.cn() + " failed: " + r.failure());
                }
            }
        }
        // Lotus keeps its locks in compute nodes' lock tables, which the memory nodes' lock words do not show.
        for (int cn = 0; cn < peers.size(); cn++) {
            final io.scythe.txn.lotus.LotusNode lotus = io.scythe.txn.lotus.LotusNode.of(currentPeers(cn));
            if (lotus != null && !givenUp.containsKey(cn) && !cnLoops.get(cn).get(0).crashed()) {
                final String broken = lotus.endOfRunViolation();
                if (broken != null) {
                    violations.add("cn" + cn + ": " + broken);
                }
            }
        }
        synchronized (moduleViolations) { // reported even by a node that gave up since (review of issue 18 part 5)
            violations.addAll(moduleViolations);
        }
        // What modules keep in compute nodes (CALVIN's lock queues) is released once every transaction finished.
        for (final java.util.Map.Entry<Integer, java.util.function.Supplier<String>> check : endChecks) {
            final int cn = check.getKey();
            if (!givenUp.containsKey(cn) && !cnLoops.get(cn).get(0).crashed()) {
                final String broken = check.getValue().get();
                if (broken != null) {
                    violations.add("cn" + cn + ": " + broken);
                }
            }
        }
        // Every object carries only the header words of its table's format (its protocol module's, per table).
        for (final LogDb db : memoryNodes) {
            for (final Table t : db.tables()) {
                final String stray = io.scythe.storage.ObjectFormat.strayIn(t);
                if (stray != null) {
                    violations.add(db.nic().node() + ": a header word outside its table's format "
                        + t.format().name() + " was written: " + stray);
                }
            }
        }
        if (left.unexplained()) {
            violations.add((left.releasedPast + left.onLiveNodes) + " locks left held" + (left.byGivenUp == 0 ? ""
                : " beyond the " + left.byGivenUp + " of compute nodes that gave up") + " (first: " + left.first()
                + ")");
        }
        // Clients of nodes that serve may wait forever behind a lock a node that gave up holds (no recovery yet).
        if (notQuiescent != null) {
            violations.add(notQuiescent + " " + stuck.encode());
        } else if (!quiescent && left.byGivenUp == 0) {
            violations.add(busyClients + " transactions never finished " + stuck.encode());
        }
        if (errors != 0) {
            violations.add(errors + " transactions failed with errors: " + firstError);
        }
        if (scheduler.failure() != null) {
            violations.add("a task failed: " + failureText());
        }
        if (options.replicas() > 0) {
            // Every copy of a partition holds what its primary holds (lock words aside) once commits are done.
            final List<String> differences = servingNodes == null
                ? io.scythe.storage.BackupTables.compare(memoryNodes, options.replicas())
                : io.scythe.storage.BackupTables.compare(memoryNodes, options.replicas(),
                    node -> catalog.removed(memoryNodes.get(node).nic().node()));
            if (!differences.isEmpty() && givenUp.isEmpty()) {
                violations.add(differences.size() + " objects differ between a primary and its backups (first: "
                    + differences.get(0) + ")");
            }
            run.put("replica_differences", differences.size());
        }
        if (recovery != null || tally != null && tally.anyReport()) { // a module's: of the nodes it recovered
            violations.addAll(tally.violations());
        }
        if (!historyComplete) {
            violations.add("history incomplete: " + recordedCommits + " recorded, " + committedTransactions
                + " committed");
        }
        final boolean ok = violations.isEmpty();
        run.invariantsOk(ok);
        final JsonObject byType = new JsonObject();
        committedByType.forEach((t, n) -> byType.put(t, n.latency.getTotalCount()));
        final JsonObject latencyByType = new JsonObject();
        final long tailFromNs = latencyNs.getValueAtPercentile(99.0);
        committedByType.forEach((t, n) -> latencyByType.put(t, n.json(tailFromNs)));
        final io.scythe.txn.lotus.LotusCluster lotus = lotusCluster;
        if (lotus != null) {
            final io.vertx.core.json.JsonArray handoffs = new io.vertx.core.json.JsonArray();
            for (final io.scythe.txn.lotus.LotusCluster.Handoff h : lotus.handoffs()) {
                handoffs.add(new JsonObject().put("shard", h.shard()).put("from", h.from()).put("to", h.to())
                    .put("at_ns", h.startNs() - startNs).put("pause_ns", h.pauseNs())
                    .put("holders_aborted", h.holdersAborted()));
            }
            final JsonObject lotusJson = new JsonObject().put("map_epoch", lotus.epoch()).put("handoffs", handoffs);
            // Its own lease-based recoveries of dead nodes (lotus.md §2.7), in virtual ns from the run's start.
            final io.vertx.core.json.JsonArray recoveries = new io.vertx.core.json.JsonArray();
            for (final io.scythe.txn.lotus.LotusCluster.Recovery r : lotus.recoveries()) {
                recoveries.add(new JsonObject().put("cn", r.cn()).put("declared_dead_at_ns", r.detectedNs() - startNs)
                    .put("logs_done_at_ns", r.logsDoneNs() < 0 ? null : r.logsDoneNs() - startNs)
                    .put("served_again_at_ns", r.servedAgainNs() < 0 ? null : r.servedAgainNs() - startNs)
                    .put("by_host", r.byHost())
                    .put("committed_records", r.committedRecords()).put("incomplete_records", r.incompleteRecords())
                    .put("locks_released", r.locksReleased()).put("survivors_aborted", r.survivorsAborted())
                    .put("slots_reclaimed", r.slotsReclaimed() < 0 ? null : r.slotsReclaimed())
                    .put("slots_reclaim_failure", r.slotsReclaimFailure())
                    .put("failure", r.failure()));
            }
            if (!recoveries.isEmpty()) {
                lotusJson.put("recoveries", recoveries);
            }
            run.put("lotus", lotusJson);
        }
        // every CN loop's verbs from the end of the warm-up (the first transaction to finish after it; the commits
        // counted are the measured window's) to the end of the drain, per commit: with the warm-up's verbs counted
        // too, a --warmup 3ms --duration 3ms run reported about twice the verbs per commit it made
        run.verbs(verbsBeforeMeasuring == null ? cnVerbs() : cnVerbs().subtract(verbsBeforeMeasuring), committed);
        run.put("aborts_by_reason", aborts).put("aborts_by_type", countsJson(abortsByType))
            .put("aborts_by_table", countsJson(abortsByTable)).put("committed_by_type", byType)
            .put("latency_by_type_us", latencyByType)
            .put("attempts_per_commit", RunResult.round((double) attemptsOfCommitted / Math.max(1, committed), 3))
            .put("gave_up", gaveUp).put("user_rollbacks", userRollbacks)
            .put("conserved", conserved)
            .put("locks_left_held", held);
        if (!conditions.isEmpty()) {
            run.put("consistency", io.scythe.bench.micro.OltpWorkload.consistencyJson(conditions));
        }
        final long[] stageSums = new long[Stage.count()];
        long staged = 0;
        for (final Coordinator c : coordinators) {
            final long[] s = c.stageNanos();
            for (int i = 0; i < s.length; i++) {
                stageSums[i] += s[i];
            }
            staged += c.stagedCommits();
        }
        final JsonObject stages = new JsonObject();
        double stagedMeanUs = 0;
        for (final Stage stage : io.scythe.txn.spi.ProtocolRegistry.stages()) {
            final double us = stageSums[stage.index()] / 1000.0 / Math.max(1, staged);
            stagedMeanUs += us;
            stages.put(stage.label(), RunResult.round(us, 2));
        }
        stages.put("retries", RunResult.round(Math.max(0, latencyNs.getMean() / 1000.0 - stagedMeanUs), 2));
        run.put("stages_us", stages);
        spec.params().forEach(e -> run.put(e.getKey(), e.getValue()));
        final JsonObject sim = new JsonObject()
            .put("virtual_time", true).put("seed", options.seed()).put("cns", options.computeNodes())
            .put("clients_per_cn", options.clientsPerComputeNode()).put("loops_per_cn", options.loopsPerComputeNode())
            .put("memory_nodes", options.memoryNodes())
            .put("history_hash", Long.toHexString(historyHash)).put("events", scheduler.executed())
            .put("quiescent", quiescent).put("unfinished_clients", busyClients).put("errors", errors)
            .put("drained_ms", RunResult.round(drainedNs / 1e6, 3))
            .put("wall_ms", RunResult.round(wallNs / 1e6, 1))
            .put("setup_wall_ms", RunResult.round(setupWallNs / 1e6, 1))
            .put("faults", options.faults().toJson());
        if (!stuck.isEmpty()) {
            sim.put("unfinished", stuck);
        }
        if (notQuiescent != null) {
            sim.put("not_quiescent", new JsonObject().put("transactions", busyClients).put("verbs", verbsInFlight)
                .put("drained_ms", RunResult.round(drainedNs / 1e6, 3)).put("locks_held_by_busy_nodes",
                    left.byInFlight).put("conserved_unsettled", !conservedOk));
            // Which records the busy transactions may be stuck on: the module's undecided state (Aurogon's pending
            // versions), by memory node; a leaked one is what a client retrying to the end meets (issue 20).
            final io.scythe.txn.spi.ProtocolModule module = owner();
            if (module != null) {
                final io.vertx.core.json.JsonArray undecided = new io.vertx.core.json.JsonArray();
                for (int m = 0; m < memoryNodes.size() && undecided.size() < 16; m++) {
                    for (final String d : module.unsettledDescribed(memoryNodes.get(m), 16 - undecided.size())) {
                        undecided.add("mn" + m + " " + d);
                    }
                }
                if (!undecided.isEmpty()) {
                    sim.getJsonObject("not_quiescent").put("undecided", undecided);
                }
            }
        }
        if (shardMap != null) {
            long rerouted = 0;
            for (final Client c : clients) {
                rerouted += c.router.refusals();
            }
            sim.put("routing", new JsonObject().put("mode", options.routing().label()).put("shards", shardMap.shards())
                .put("committed_by_cn", new io.vertx.core.json.JsonArray(java.util.Arrays.stream(committedByCn).boxed()
                    .toList())).put("rerouted", rerouted).put("shard_map_epoch", shardMap.epoch()));
        }
        if (firstError != null) {
            sim.put("first_error", firstError);
        }
        if (!recorders.isEmpty()) {
            sim.put("history", new JsonObject().put("recorded", recordedCommits)
                .put("committed", committedTransactions).put("complete", historyComplete));
        }
        if (scheduler.failure() != null) {
            sim.put("failure", failureText());
        }
        sim.put("violations", new io.vertx.core.json.JsonArray(violations));
        if (!pathsTaken.isEmpty()) {
            sim.put("paths_taken", countsJson(pathsTaken));
        }
        if (!notJudgedJson.isEmpty()) {
            sim.put("write_skew_not_judged", notJudgedJson);
        }
        if (left.unexplained()) {
            sim.put("locks_unexplained", left.unexplainedJson());
        }
        if (options.faults().verbFailRate() > 0) {
            final JsonObject byKind = new JsonObject();
            long injected = 0;
            for (final Map.Entry<String, long[]> e : verbFailuresInjected.entrySet()) {
                byKind.put(e.getKey(), e.getValue()[0]);
                injected += e.getValue()[0];
            }
            sim.put("verb_faults", new JsonObject().put("injected", injected).put("by_kind", byKind)
                .put("transactions_failed", failedByVerb));
        }
        if (!options.faults().partitioned().isEmpty()) {
            sim.put("partition", new JsonObject().put("batches_held", partitionHeld[0])
                .put("mean_held_us", partitionHeld[0] == 0 ? 0 : partitionHeld[1] / 1e3 / partitionHeld[0]));
        }
        if (!givenUp.isEmpty()) {
            sim.put("gave_up", new JsonObject().put("cns", new io.vertx.core.json.JsonArray(new ArrayList<>(
                    givenUp.values()))).put("give_ups", giveUps).put("outcome_unknown", outcomeUnknown)
                .put("not_served", notServed).put("locks_left_held", left.byGivenUp)
                .put("recovery", "none yet: what a node that gave up holds stays held (its recovery would free it), "
                    + "and a commit given up mid-write-back stays as it is"));
        }
        if (timeline != null) {
            sim.put("timeline", timeline.toJson(options.warmupNs(), options.faults().crashCn() == Faults.NO_CRASH ? -1
                : options.faults().crashAtNs()));
        }
        if (inFlightAtCrash >= 0) {
            final int[] crashCns = options.faults().crashCns();
            sim.put("crash", new JsonObject().put("cn", crashCns.length == 1 ? (Object) crashCns[0]
                    : new io.vertx.core.json.JsonArray(java.util.Arrays.stream(crashCns).boxed().toList()))
                .put("at_ns", options.faults().crashAtNs()).put("transactions_in_flight", inFlightAtCrash)
                .put("locks_left_held", held).put("conserved_ok", conservedOk)
                .put("recovery", recovery != null ? recovery.toJson() : tally != null && tally.anyReport()
                    ? tally.toJson().put("by", "the protocol's own recovery")
                    : "none yet: what the crash left is reported, not repaired"));
            if (!restarts.isEmpty()) {
                sim.getJsonObject("crash").put("restarts", restartsJson());
            }
            long sharedCancelled = 0;
            long sharedSkipped = 0;
            for (final TicketLedger ledger : ticketLedgers) {
                sharedCancelled += ledger == null ? 0 : ledger.sharedCancelled();
                sharedSkipped += ledger == null ? 0 : ledger.sharedSkipped();
            }
            if (sharedCancelled > 0) { // the crashed node's shared tickets recovery cancelled, and skipped (+1 each)
                sim.getJsonObject("crash").put("shared_tickets", new JsonObject().put("cancelled", sharedCancelled)
                    .put("skipped", sharedSkipped));
            }
        }
        final io.scythe.txn.spi.ProtocolModule owner = owner();
        final JsonObject protocolStats = owner == null ? null : owner.runStats(memoryNodes);
        if (protocolStats != null) {
            sim.put("protocol_stats", protocolStats);
        }
        long mnCpu = 0;
        for (final SimLoop loop : scheduler.loops()) {
            if (loop.name().startsWith("mn")) {
                mnCpu = Math.max(mnCpu, loop.cpuNs());
            }
        }
        for (int p = 0; p < queueCores.size(); p++) {
            // co-located: the polls plus the participant queues' work, per core of the server's loops
            final QueueCores cores = queueCores.get(p);
            mnCpu = Math.max(mnCpu, mnLoops.get(p).cpuNs() + cores.busyNs() / cores.queues());
        }
        sim.put("busiest_mn_cpu_utilization", RunResult.round((double) mnCpu / Math.max(1, clock.nanoTime() - startNs),
            3));
        // CN loops (cores): their modelled CPU time until the end of the measured window (warm-up included, drain
        // not), idle polls left out: a core near 1 is the bound
        long cnCpuMax = 0;
        long cnCpuSum = 0;
        int cnLoops = 0;
        for (final SimLoop loop : scheduler.loops()) {
            if (loop.name().startsWith("cn")) {
                cnCpuMax = Math.max(cnCpuMax, loop.cpuBeforeMarkNs());
                cnCpuSum += loop.cpuBeforeMarkNs();
                cnLoops++;
            }
        }
        final double runNs = Math.max(1, endNs - startNs);
        sim.put("busiest_cn_cpu_utilization", RunResult.round(cnCpuMax / runNs, 3));
        sim.put("mean_cn_cpu_utilization", RunResult.round(cnCpuSum / Math.max(1, cnLoops) / runNs, 3));
        if (options.queueSampleNs() > 0) {
            run.put("queues", queues.toJson(memoryNodes));
        }
        if (options.reclaimEveryNs() > 0) {
            sim.put("reclaimed", reclaimed);
        }
        if (!proxies.isEmpty()) {
            long faas = 0;
            long served = 0;
            for (final io.scythe.tso.TsoProxy p : proxies) {
                faas += p.faas();
                served += p.served();
            }
            sim.put("tso", new JsonObject().put("proxies", proxies.size()).put("counter_faas", faas)
                .put("timestamps_served", served));
        }
        run.put("sim", sim);
        return new SimResult(run, historyHash, ok);
    }


    private String failureText() {
        return String.valueOf(scheduler.failure().getCause() != null ? scheduler.failure().getCause()
            : scheduler.failure());
    }

    /** Whether {@code c}'s node still serves: it neither crashed nor gave up. */
    private boolean serving(final Client c) {
        return !c.loop.crashed() && !givenUp.containsKey(c.computeNode);
    }

    private void close() {
        Bridge.switchCurrent(null);
        for (final SimLoop loop : scheduler.loops()) {
            loop.shutdown();
        }
        for (final RpcServer server : servers) {
            Bridge.switchCurrent(null);
            if (server != deadServer) {
                server.stop();
            }
        }
        for (final RrpcClient client : rrpcClients) {
            client.forgetThreadCache();
        }
        for (final CnPeers p : peers) {
            p.close(); // on this thread, the loops': at once, so the next run on this Vert.x finds its addresses free
        }
        for (final Incarnation next : restarts) {
            if (next.cnPeers != null) {
                next.cnPeers.close(); // its addresses too (others connect to it: a later run's would find the old one)
            }
        }
        Bridge.switchCurrent(null);
        for (final io.scythe.tso.TsoProxy proxy : proxies) {
            proxy.close();
        }
        if (tso != null) {
            tso.stop();
        }
        if (fabric != null) {
            fabric.close();
        }
    }

    /** One closed-loop client: one transaction at a time on its CN loop. */
    private static final class Client {
        final int id;
        /** The compute node and loop the client is attached to (where it runs its transactions unless routed). */
        final int computeNode;
        final int loopIndex;
        final SimLoop loop;
        final Coordinator coordinator;
        final TxnRuntime runtime;
        final SplittableRandom random;
        /** The client's routing layer, or {@code null} when it runs every transaction on its own node. */
        io.scythe.routing.Router router;
        SplittableRandom routeRandom;
        /** The compute node running its current transaction. */
        int ranOn;
        long sequence;
        /** With recovery: the attempts of the current transaction, the last one's id and its body's result. */
        final List<Long> attempts = new ArrayList<>(2);
        long lastAttempt;
        Long lastResult;
        boolean busy;
        /** A restarted incarnation's client before its restart ({@link #restart}): it runs nothing. */
        boolean dormant;
        String type;
        long since;

        Client(final int id, final int computeNode, final int loopIndex, final SimLoop loop,
               final Coordinator coordinator, final TxnRuntime runtime, final SplittableRandom random) {
            this.runtime = runtime;
            this.id = id;
            this.computeNode = computeNode;
            this.loopIndex = loopIndex;
            this.loop = loop;
            this.coordinator = coordinator;
            this.random = random;
            this.ranOn = computeNode;
        }

        void routeBy(final io.scythe.routing.Router router, final SplittableRandom random) {
            this.router = router;
            this.routeRandom = random;
        }
    }
}
