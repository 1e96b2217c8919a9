package io.scythe.cluster;

import com.hazelcast.cluster.Member;
import com.hazelcast.cluster.MembershipEvent;
import com.hazelcast.cluster.MembershipListener;
import com.hazelcast.core.EntryEvent;
import com.hazelcast.core.HazelcastInstance;
import com.hazelcast.map.IMap;
import com.hazelcast.map.listener.EntryAddedListener;
import com.hazelcast.map.listener.EntryUpdatedListener;
import io.scythe.bridge.BridgeVerticle;
import io.scythe.fabric.Fabric;
import io.scythe.fabric.Nic;
import io.scythe.fabric.RemoteRegion;
import io.scythe.hotspot.Watermarks;
import io.scythe.node.CoordinatorDeployment;
import io.scythe.node.CoordinatorVerticle;
import io.scythe.node.TableDirectory;
import io.scythe.rrpc.CnPeers;
import io.scythe.rrpc.RpcServer;
import io.scythe.rrpc.RrpcClient;
import io.scythe.rrpc.RrpcOptions;
import io.scythe.storage.LogDb;
import io.scythe.storage.TableDescriptor;
import io.scythe.tso.TsoService;
import io.scythe.txn.Catalog;
import io.scythe.txn.Coordinator;
import io.scythe.txn.Protocol;
import io.scythe.txn.scythe.TakeoutLockService;
import io.vertx.core.Context;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;
import io.vertx.core.eventbus.MessageConsumer;
import io.vertx.core.json.JsonObject;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.UUID;
import java.util.concurrent.Callable;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import java.util.function.Supplier;

/**
 * One Scythe node as its own process: joins the cluster (Vert.x over Hazelcast, {@link ClusterSetup}), attaches to
 * the fabric, and plays its role.
 *
 * <ul>
 *   <li>MN: loads its partition of the workload's tables, serves RRPC (LogDB lookups, Takeout Lock) and says where its
 *       tables are over the event bus ({@link TableDirectory}).</li>
 *   <li>TSO: holds the timestamp counter in NIC device memory ({@link TsoService}).</li>
 *   <li>CN: takes a new epoch, attaches as {@code node.eEPOCH}, learns the tables and the TSO counter from the other
 *       nodes by event-bus requests, and runs a coordinator per event loop on {@link CoordinatorVerticle#ADDRESS}
 *       (shared, load-balanced) and {@code scythe.txn.NODE} (this node only). Each of its loops also serves the other
 *       CNs ({@link CnPeers}): peers are found by name in the {@value #NODES} registry (their current incarnation),
 *       connect lazily, and a peer whose member leaves (or whose newer epoch registers) fails its calls at once. A
 *       protocol whose compute nodes message each other (Lotus) gets its compute-node services there, placed by the
 *       config's {@code computeNodes}, and hears when a dead peer incarnation has been recovered.</li>
 * </ul>
 *
 * <p>Leases and fencing: a CN's lease is its Hazelcast membership under its epoch, registered in the
 * {@value #NODES} map, and, when {@code leaseRenewMs} is set (off by default), its lease on the fabric
 * ({@link FabricLease}): it renews a word on every serving MN every {@code leaseRenewMs} ({@link LeaseRenewer}), and an
 * MN whose word for it stopped changing for {@code leaseMs + leaseGraceMs} fences it and owes its recovery
 * ({@link #leaseExpired}); the CN tries to stop serving a grace before that (best effort: the fence, and recovery's
 * fencing of every MN, are what keep a late CN out). Hazelcast's membership is the fallback detector.
 * When Hazelcast removes a CN's member (killed, or hung longer than max-no-heartbeat), every
 * MN and the TSO fence the CN's fabric identity first (its queue pairs revoked, new connections refused), so a CN that
 * was only paused cannot write when it wakes; a newer epoch of the same CN supersedes (and fences) the older one. A CN
 * keeps its lease by renewing it every {@value #LEASE_RENEW_MS} ms; when it finds it was not running for longer than
 * the lease (it was paused; timed on a {@link LivenessTimer} thread of its own, so an event loop kept busy does not
 * count) or that the cluster dropped it, it stops serving and exits with {@link #EXIT_LEASE_LOST}:
 * it must rejoin as a new process, under a new epoch. The oldest member keeps the {@value #SHARDS} map (which live CN
 * has recovery duty for each CN's logs) balanced as members come and go ({@link ShardOwnership}); a dead or
 * superseded incarnation is owed recovery in {@value RecoveryDuty#OWED} until a CN recovered it ({@link RecoveryDuty}).
 */
public final class ScytheNode implements AutoCloseable {
    public static final String NODES = ClusterAccess.NODE_REGISTRY;
    public static final String EPOCHS = "scythe.epochs";
    public static final String SHARDS = "scythe.shards";
    /** Where each memory node's {@value FabricLease#REGION} region is: node name to {address, length, rkey}. */
    static final String LEASES = "scythe.leases";
    /**
     * Event-bus address on which each memory node publishes every release of a dead CN incarnation it ran (its
     * modules' dead-node steps done there): {@code {"incarnation", "prefixes", "memoryNode"}}. CNs of a peer protocol
     * tell their module ({@code ComputeNodeContext#onPeerReleased}), per memory node, before the whole recovery is
     * over (SELCC: a handover that landed after that node's step is taken back, a cached copy of an insert it buried
     * is READ again).
     */
    static final String RELEASED = "scythe.recovery.released";
    /** Exit code of a CN that lost its lease (and must rejoin under a new epoch). */
    public static final int EXIT_LEASE_LOST = 3;
    public static final long LEASE_RENEW_MS = 250;
    /**
     * A CN's lease: Hazelcast's max-no-heartbeat (conf/cluster.xml's 3 s, or {@code ClusterAccess}'s property, 8 s
     * in the process tests); after that others may have fenced it.
     */
    public static final long LEASE_MS = ClusterAccess.maxNoHeartbeatSeconds() * 1_000L;
    /**
     * How long a transaction whose lock verb is in doubt on a memory node waits for the configuration that removes
     * the node before its loop gives up ({@code TxnRuntime#failoverWaitNs}): two leases ({@link #LEASE_MS}, the
     * compute nodes' lease: a memory node leaves the cluster within Hazelcast's max-no-heartbeat, one lease, and the
     * configuration removing it then spreads).
     */
    static final long MN_FAILOVER_WAIT_MS = 2 * LEASE_MS;
    static final long LOOKUP_RETRY_MS = 200;
    /** How long a CN's group waits for a TSO proxy's answer before it fetches elsewhere. */
    static final long PROXY_TIMEOUT_MS = 1_000;
    /** How long a FAA on the TSO counter (with locating and connecting) may take before the fetch goes elsewhere. */
    static final long COUNTER_TIMEOUT_MS = 2_000;
    /** Key of the CN slot counter in {@value #EPOCHS} (node names cannot contain ':'). */
    static final String SLOTS = "slots";
    private static final long MAX_CN_SLOTS = 255;

    private final NodeConfig config;
    private final NodeRole role;
    private final NodeWorkload workload;
    private final Runnable onLeaseLost;
    /** CNs whose fence was asked for (each fenced once). */
    private final Set<String> fencing = ConcurrentHashMap.newKeySet();
    /** CNs whose queue pairs the NIC has revoked: what health reports, so "fenced" there means done, not asked. */
    private final Set<String> fenced = ConcurrentHashMap.newKeySet();
    /** Fabric identity of each CN member this node has seen register (what to fence when it goes). */
    private final Map<UUID, String> cnByMember = new ConcurrentHashMap<>();
    /** Every registered node's member, as this node last saw its registry entry (the quorum {@link #fence} needs). */
    private final Map<String, UUID> registeredMembers = new ConcurrentHashMap<>();
    /**
     * Judges members leaving (an MN's, the TSO's): acts while this view holds a majority of the registered nodes, and
     * remembers those seen leaving from a minority until it holds one again (issue 23). Set by {@link #watchMembers}.
     */
    private volatile MemberLeaves memberLeaves;
    private final List<Coordinator> coordinators = new CopyOnWriteArrayList<>();
    private final List<String> deployments = new ArrayList<>();
    private final List<MessageConsumer<Object>> consumers = new ArrayList<>();
    private Vertx vertx;
    private HazelcastInstance hazelcast;
    /** Logs this node's threads if Hazelcast's heartbeat executor stalls (issue 23 §1; diagnostic only). */
    private HazelcastStallWatch stallWatch;
    private Fabric fabric;
    private Nic nic;
    private long epoch;
    private long slot;
    /** A CN incarnation's token on its epoch and slot claims ({@link EpochClaims}). */
    private long claimToken;
    /** Why another incarnation shares its epoch or slot (a split handed it out twice), once found; else null. */
    private volatile String claimConflict;
    private String fabricNode;
    private RpcServer rpcServer;
    private io.scythe.txn.mn.MemoryNodeServices memoryNodeServices;
    private TsoService tso;
    private io.scythe.tso.TsoProxy tsoProxy;
    /** A CN's TSO groups, one per loop: the largest timestamp they handed out is its high water. */
    private final List<io.scythe.tso.TsoGroup> tsoGroups = new CopyOnWriteArrayList<>();
    private NodeMetrics metrics;
    /** A CN's messaging with the other CNs, and where each of them is now (name to incarnation). */
    private CnPeers peers;
    /**
     * The module of a protocol whose compute nodes message each other ({@code ProtocolModule#peerMessaging}), with
     * what it equips each loop with, and what it asked to hear of recovered peers; {@code null} otherwise.
     */
    private io.scythe.txn.spi.ProtocolModule peerModule;
    private io.scythe.txn.spi.ComputeNodeContext.LoopSetUp peerLoopSetUp;
    private final List<io.scythe.txn.spi.ComputeNodeContext.PeerRecovered> peerRecovered =
        new CopyOnWriteArrayList<>();
    private final List<io.scythe.txn.spi.ComputeNodeContext.PeerReleased> peerReleased = new CopyOnWriteArrayList<>();
    private final Map<String, Peer> peerNodes = new ConcurrentHashMap<>();
    private ShardOwnership shards;
    private volatile boolean ready;
    private volatile boolean leaseLost;
    /** Set when it closes: a module's periodic tasks stop ({@code run.over}). */
    private volatile boolean closing;
    private long leaseTimer = -1;
    /** Times the lease: whether this process ran, on a thread of its own (not an event loop, which may be busy). */
    private LivenessTimer liveness;
    /** A lease timer or loop check later than this is logged (how late they run is what a shorter lease needs). */
    static final long LATE_LOG_MS = 1_000;
    /**
     * The loop recovery runs on, with that loop's runtime: taken together by the first coordinator made (the loops
     * make theirs at once, so "the first" must be one atomic choice, or the loop and the runtime could be two loops').
     */
    /** Every coordinator loop of this CN: read for its clock when it drains a configuration ({@link #settle}). */
    private final List<RecoveryLoop> clockLoops = new CopyOnWriteArrayList<>();
    private final java.util.concurrent.atomic.AtomicReference<RecoveryLoop> recoveryLoop =
        new java.util.concurrent.atomic.AtomicReference<>();
    private RecoveryDuty recoveryDuty;
    /** A CN's rejoin driver (null on other roles, and until it starts): stopped when the lease is lost. */
    private volatile MemoryNodeRejoin rejoins;
    /** The cluster's memory-node configuration (MN failover); null on the TSO and proxies. */
    private MemoryNodeFailover failover;
    /** An MN started as the replacement of a process the cluster removed ({@link #replaceMemoryNode}). */
    private volatile boolean replacement;
    /** A replacement MN that a configuration took back (it is not removed any more): removed again, it stops. */
    private volatile boolean servesAgain;
    /** A replacement MN whose copies count as full copies (said once). */
    private volatile boolean rejoinedFully;
    /** How often a CN checks whether a memory-node failover's commits in flight are settled ({@link #settle}). */
    private static final long SETTLE_POLL_MS = 20;
    /**
     * How often a CN publishes its clock bound ({@link #publishClockBounds}): a twentieth of {@code RccClock}'s lead
     * (5 s: a Hazelcast stall of seconds aborts no commit; review of rcc18, W3), so a loop's clock meets the published
     * bound only when it jumped (a larger remote timestamp seen).
     */
    private static final long CLOCK_BOUND_PUBLISH_MS = 250;
    /**
     * How long one publication of the clock bound may take before it is given up and a fresh one started
     * ({@link ClockBoundPublisher}): under the bound's 5 s lead, so a call hung on a stalled partition leaves time
     * for another before the loops' clocks reach the bound.
     */
    private static final long CLOCK_BOUND_CALL_MS = 2_000;
    /** A CN's catalog, which each new memory-node configuration reconfigures. */
    private Catalog catalog;
    private LogDb memoryDb;
    /** When the CN's loop last ran its lease check (only to log how late the loop is). */
    private long lastCheckNs;
    /**
     * The thread of the lease on the fabric ({@link FabricLease}): a CN's renewer, or a memory node's watcher; null
     * when the fabric lease is off.
     */
    private LivenessTimer fabricLeaseThread;
    private LeaseRenewer leaseRenewer;
    /** A CN's memory nodes' lease regions, all of them; those it renews on now (the serving ones). */
    private final LeaseRegions leaseRegions = new LeaseRegions();
    /** A memory node's view of the registry's CNs by slot (their latest entry, with "name"): whom an expiry names. */
    private final Map<Long, JsonObject> cnBySlot = new ConcurrentHashMap<>();

    private ScytheNode(final NodeConfig config, final NodeRole role, final NodeWorkload workload,
                       final Runnable onLeaseLost) {
        this.config = config;
        this.role = role;
        this.workload = workload;
        this.onLeaseLost = onLeaseLost;
    }

    /**
     * Starts the node. Blocks the calling thread (not an event loop) until it serves, or fails and releases what it
     * took.
     *
     * @param onLeaseLost what a CN does once it lost its lease (a process exits with {@link #EXIT_LEASE_LOST})
     */
    public static ScytheNode start(final NodeConfig config, final NodeRole role, final Runnable onLeaseLost)
        throws Exception {
        config.checkSeedRole(role);
        final NodeWorkload workload = NodeWorkload.of(config.workload());
        final ScytheNode node = new ScytheNode(config, role, workload, onLeaseLost);
        try {
            node.startNow();
            return node;
        } catch (final Exception e) {
            node.close();
            throw e;
        }
    }

    /**
     * Runs blocking start step {@code step} (a Hazelcast listener registration, a map operation that can wait on a
     * member) with the start's bound, {@code readyTimeoutMs}: {@link BoundedCall}.
     */
    private void bounded(final String step, final BoundedCall.Step body) throws Exception {
        BoundedCall.run(config.node() + "'s start step " + step, config.readyTimeoutMs(), this::log, body);
    }

    /** {@link #bounded} for a step with a result. */
    private <T> T boundedCall(final String step, final java.util.concurrent.Callable<T> body) throws Exception {
        return BoundedCall.call(config.node() + "'s start step " + step, config.readyTimeoutMs(),
            BoundedCall.REPORT_EVERY_MS, this::log, body);
    }

    /** Notes the end of a start phase, for the start's {@code started:} line; nothing once started. */
    private Consumer<String> startPhase = name -> { };

    private void startNow() throws Exception {
        final long timeout = config.readyTimeoutMs();
        // A start that already knows its epoch or slot is another's stops at the end of the phase it learnt it in.
        final StartPhases phases = new StartPhases(System::nanoTime,
            () -> claimConflict == null ? null : notItsOwn(claimConflict));
        final Consumer<String> phase = startPhase = phases::end;
        final long jvmMs = System.currentTimeMillis()
            - java.lang.management.ManagementFactory.getRuntimeMXBean().getStartTime();
        final io.micrometer.prometheusmetrics.PrometheusMeterRegistry registry = NodeMetrics.newRegistry(config, role);
        try {
            vertx = ClusterSetup.joinPatiently(config, registry, timeout, this::log);
        } catch (final Exception e) {
            registry.close();
            throw e;
        }
        phase.accept("cluster join");
        BridgeVerticle.deployOnEveryEventLoop(vertx, new JsonObject()).await(timeout, TimeUnit.MILLISECONDS);
        hazelcast = ClusterSetup.hazelcast(vertx);
        stallWatch = HazelcastStallWatch.start(hazelcast, config.node(), this::log);
        fabric = Fabric.open(vertx, config.fabricOptions());
        metrics = new NodeMetrics(this, registry);
        metrics.probeLoops(BridgeVerticle.eventLoopContexts(vertx));
        phase.accept("loops and fabric");
        if (role == NodeRole.CN) {
            claimToken = EpochClaims.newToken();
            epoch = nextEpoch();
            slot = slotOf();
            // From now on a merge may show that a split handed its epoch or slot out twice: the other side's claim
            // reaches the watch, and this member's own merge reads the merged map. A merge before these two is seen
            // by the start's last check, which reads the merged map too.
            bounded("the watch of its epoch claims", () ->
                EpochClaims.watch(hazelcast.getMap(EPOCHS), config.node(), epoch, slot, claimToken, this::claimLost));
            final int pruned = EpochClaims.pruneEpochClaimsBelow(hazelcast.getMap(EPOCHS), config.node(), epoch);
            if (pruned > 0) {
                log("removed " + pruned + " epoch claim(s) of earlier incarnations (slot " + slot + " is this one's)");
            }
            final long claimedEpoch = epoch;
            final long claimedSlot = slot;
            hazelcast.getLifecycleService().addLifecycleListener(event -> {
                if (event.getState() == com.hazelcast.core.LifecycleEvent.LifecycleState.MERGE_FAILED) {
                    // This side did not join the other: what the other side gave out stays unseen, so this
                    // incarnation's claims cannot be checked (the start's last check would read this side's map).
                    claimLost("a merge after a split failed, so its epoch and slot claims cannot be checked against "
                        + "the other side's");
                } else if (event.getState() == com.hazelcast.core.LifecycleEvent.LifecycleState.MERGED) {
                    vertx.executeBlocking(() -> {
                        final String why = EpochClaims.conflict(hazelcast.getMap(EPOCHS), config.node(), claimedEpoch,
                            claimedSlot, claimToken);
                        if (why != null) {
                            claimLost(why);
                        }
                        return null;
                    }).onFailure(e -> log("could not check epoch " + claimedEpoch + "'s claims after a merge: " + e));
                }
            });
            fabricNode = config.node() + ".e" + epoch;
        } else {
            epoch = 0;
            fabricNode = config.node();
        }
        phase.accept("epoch and slot");
        nic = fabric.attach(fabricNode).await(timeout, TimeUnit.MILLISECONDS);
        bounded("the watch of the registry and members", this::watchMembers);
        // Registered before it serves: whoever sees this member leave can then fence it.
        // Twice the bound: a replacement memory node waits up to readyTimeoutMs in it for its predecessor's removal,
        // and says so itself when that does not come.
        BoundedCall.run(config.node() + "'s start step its registration", 2 * config.readyTimeoutMs(), this::log,
            this::register);
        phase.accept("attach and register");
        switch (role) {
            case MN -> startMemoryNode();
            case TSO -> startTso();
            case PROXY -> startProxy();
            case CN -> startComputeNode();
            default -> throw new IllegalStateException(role.toString());
        }
        phase.accept("role");
        shards = new ShardOwnership(vertx, hazelcast);
        bounded("the watch of shard ownership", shards::start);
        metrics.startHttp(config.host(), config.httpPort()).await(timeout, TimeUnit.MILLISECONDS);
        phase.accept("shards and http");
        // Where a start's time goes (issue 23 section 3: CN restarts took 84-99 s in chaos).
        log("started: JVM to start " + jvmMs + " ms, then " + phases);
        startPhase = name -> { };
        if (role == NodeRole.CN) {
            // A merge during the start (its epoch step on a split side) that gave its epoch or slot to another too.
            final String why = claimConflict != null ? claimConflict
                : EpochClaims.conflict(hazelcast.getMap(EPOCHS), config.node(), epoch, slot, claimToken);
            if (why != null) {
                throw new IllegalStateException(notItsOwn(why));
            }
        }
        ready = true;
        if (claimConflict != null) {
            claimLost(claimConflict); // found between the check and ready
        }
    }

    private String notItsOwn(final String why) {
        return "epoch " + epoch + " of " + config.node() + " is not its own: " + why
            + "; start it again for a fresh epoch";
    }

    // ---------------------------------------------------------------------------------------------------- roles

    private void startMemoryNode() throws Exception {
        final int part = config.partitionOf(config.node());
        final LogDb db = new LogDb(nic);
        // Slots with the room and header the protocol's format asks for (Lotus's CVTs, RCC's versions), as the
        // simulator and the embedded cluster lay them out: without it such a protocol reads its state past the slot.
        final Protocol protocol = io.scythe.txn.spi.ProtocolRegistry.protocol(config.protocol());
        db.objectRoom(protocol::objectRoom);
        db.objectFormat(schema -> io.scythe.txn.spi.ProtocolRegistry.objectFormat(protocol, schema));
        memoryDb = db;
        // Loading writes registered memory only: done here, before the node serves, on this (non-loop) thread.
        final int n = config.memoryNodes().size();
        workload.load(db, part, n);
        // Replication (primary-backup): this node also holds backup b of the partition of the b-th node before it
        // (BackupTables' placement), loaded by the same deterministic loader, so every copy starts identical.
        final int backups = config.backups();
        for (int b = 1; b <= backups; b++) {
            workload.load(db.backupView(b), Math.floorMod(part - b, n), n);
        }
        log(config.replicationLine());
        rpcServer = new RpcServer(vertx, nic, new RrpcOptions());
        memoryNodeServices = io.scythe.txn.mn.MemoryNodeServices.start(db, rpcServer,
            new Watermarks(Watermarks.DEFAULT_COLD, Watermarks.DEFAULT_HOT), true);
        memoryNodeServices.loopNumbers(this::loopNumbersOf);
        if (replacement) {
            memoryNodeServices.replacement(config.protocol()); // none of its copies serves as primary until promoted
        }
        final String memoryNode = db.nic().node();
        // On the RPC loop, once the steps ran: a publish does not block.
        memoryNodeServices.onReleased((incarnation, prefixes) -> vertx.eventBus().publish(RELEASED, new JsonObject()
            .put("incarnation", incarnation).put("memoryNode", memoryNode)
            .put("prefixes", new io.vertx.core.json.JsonArray(java.util.Arrays.stream(prefixes).boxed().toList()))));
        onLoop(BridgeVerticle.eventLoopContexts(vertx).get(0), rpcServer::start);
        if (config.fabricLease().on()) {
            // Published before the tables: a CN that found the tables finds the lease words too.
            watchFabricLeases(config.fabricLease());
        }
        consumers.add(TableDirectory.serve(vertx, config.node(), db).await(10, TimeUnit.SECONDS));
        MemoryNodeFailover.publishTables(hazelcast, config.node(),
            db.tables().stream().map(io.scythe.storage.Table::describe).toList());
        // A memory node a configuration removed (its lease expired: it was paused or cut off) must not serve again:
        // its copies were replaced by promoted backups, and what it holds is stale from then on.
        failover = new MemoryNodeFailover(hazelcast, config.memoryNodes(), backups);
        // The current one too, queued behind those heard; each only if newer than the one applied (an older one heard
        // late must not remove this node again). A failure is logged there, and the current one applied again later.
        final Consumer<io.scythe.txn.MemoryNodeConfiguration> applyHere = MemoryNodeFailover.newerOnly(c -> {
            final io.scythe.txn.MemoryNodeConfiguration before = promotionsSeen;
            if (!failover.removed(c).contains(config.node())) {
                promoteWhenDrained(c, before, part, db);
                // Only once handed over: a callback that threw is retried with the same promotions still unseen.
                promotionsSeen = c;
                if (replacement && !servesAgain) {
                    log("rejoins in memory-node configuration epoch " + c.epoch() + " (its copies are written from "
                        + "now on and re-replicated)");
                }
                servesAgain = true;
                if (replacement && !c.rejoining().contains(part) && !rejoinedFully) {
                    rejoinedFully = true;
                    memoryNodeServices.rejoined(); // e.g. Aurogon's delete pruning, held while its copies were copied
                    log("rejoined in memory-node configuration epoch " + c.epoch() + ": its copies are full copies");
                }
            } else if (removesThisProcess(failover.removed(c), config.node(), replacement, servesAgain)) {
                promotionsSeen = c;
                vertx.runOnContext(v -> loseLease("memory-node configuration epoch " + c.epoch() + " removed it (a "
                    + "backup of each partition it was primary of serves now)"));
            }
        });
        bounded("the watch of the memory-node configuration", () -> failover.watch(vertx, applyHere, this::log));
        if (replacement) {
            // Asked once the tables are published: the CN driving the rejoin switches the catalogs to them.
            askToRejoin("");
        }
        if (config.leaseCheck()) {
            liveness = LivenessTimer.start("scythe-lease-" + config.node(), LEASE_RENEW_MS, sinceMs -> {
                if (sinceMs > LEASE_MS / 2) {
                    renewMemoryNodeLease(sinceMs);
                }
            });
        }
    }

    /**
     * Asks the compute nodes to drive this replacement's rejoin ({@link MemoryNodeRejoin}): its request names its
     * Hazelcast member, so after a merge (a new member UUID) it asks again, or the driver finds the member named gone
     * and stops. Blocking.
     */
    private void askToRejoin(final String why) {
        askedToRejoin = true;
        hazelcast.<String, String>getMap(MemoryNodeFailover.REJOIN).put(config.node(), new JsonObject()
            .put("pid", ProcessHandle.current().pid()).put("member", hazelcast.getCluster().getLocalMember()
                .getUuid().toString()).encode());
        log("asks to rejoin the cluster (" + MemoryNodeFailover.REJOIN + ")" + why);
    }

    /**
     * Whether a configuration that removed the memory nodes {@code removed} removed this process of memory node
     * {@code node}: an original process, or a {@code replacement} that served already ({@code servesAgain}: a
     * configuration had it back) must stop. A replacement that has not served yet is removed by the configuration
     * that removed the process it replaces (it waited for it to start): that is no reason to stop. Its merge after a
     * split took it for one (chaos, stop 45: mn2's replacement joined a minority during the split, merged back, and
     * stopped 0.4 s after asking to rejoin, "split from the cluster, and configuration epoch 5 removed it", the very
     * epoch that removed its predecessor).
     */
    static boolean removesThisProcess(final List<String> removed, final String node, final boolean replacement,
                                      final boolean servesAgain) {
        return removed.contains(node) && (servesAgain || !replacement);
    }

    /** Whether this replacement asked to rejoin (its tables are published): a merge back asks again. */
    private volatile boolean askedToRejoin;

    /** The configuration a memory node last looked at for copies of its own that it promoted. */
    private volatile io.scythe.txn.MemoryNodeConfiguration promotionsSeen;

    /**
     * Configuration {@code c} made copies on this memory node (partition number {@code part}) the primaries of their
     * partitions, since {@code before} (null: the one the cluster started with): once every live CN drained it
     * (applied it: none sends the removed primary anything new, {@link MemoryNodeFailover#drainWaitsFor}), the
     * modules' promotion runs on the RPC loop ({@code MemoryNodeContext.Promotion}: Aurogon's read floor and its
     * adoption of the transactions the copies held). Polled every {@value #SETTLE_POLL_MS} ms on a worker; what it
     * waits for is said every 5 s; it never gives up (the copies stay unserved by such a module meanwhile).
     */
    private void promoteWhenDrained(final io.scythe.txn.MemoryNodeConfiguration c,
                                    final io.scythe.txn.MemoryNodeConfiguration before, final int part, final LogDb db) {
        final io.scythe.txn.MemoryNodeConfiguration older = before != null ? before
            : io.scythe.txn.MemoryNodeConfiguration.initial(config.memoryNodes().size(), config.backups());
        final Set<Integer> tables = new java.util.TreeSet<>();
        final Set<Integer> partitions = new java.util.TreeSet<>();
        for (final int p : c.promotedSince(older)) {
            final int copy = c.primaryCopy(p);
            if (c.nodeOf(p, copy) == part) {
                partitions.add(p);
                for (final io.scythe.storage.Table t : db.tables()) {
                    if (t.schema().id() / io.scythe.storage.BackupTables.ID_STRIDE == copy) {
                        tables.add(t.schema().id());
                    }
                }
            }
        }
        if (tables.isEmpty()) {
            return;
        }
        final long startNs = System.nanoTime();
        log("memory-node configuration epoch " + c.epoch() + " promoted copies " + tables + " here: promotes them once "
            + "every live compute node applied it");
        pollUntilNothingWaits("promotion of copies " + tables + " (configuration epoch " + c.epoch() + ")",
            () -> vertx.executeBlocking(() -> failover.drainWaitsFor(c.epoch()), false), () ->
                BridgeVerticle.eventLoopContexts(vertx).get(0).runOnContext(v -> {
                    final List<String> refused = memoryNodeServices.promote(config.protocol(), tables);
                    log(refused.isEmpty() ? "promoted copies " + tables + " of configuration epoch " + c.epoch()
                        + " " + TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - startNs) + " ms after it applied"
                        : "copies " + tables + " of configuration epoch " + c.epoch() + " NOT promoted: "
                        + refused + "; their partitions stay unavailable");
                    if (refused.isEmpty()) {
                        settleCopiesWhenSettled(c, partitions, tables, db);
                    }
                }));
    }

    /**
     * Publishes {@code bound}'s next value every {@value #CLOCK_BOUND_PUBLISH_MS} ms on a worker (one at a time), and
     * tells the loops only once it is durable ({@link MemoryNodeFailover#publishClockBound}); stops when this node
     * lost its lease. A publication that fails, or does not answer within {@value #CLOCK_BOUND_CALL_MS} ms (a Hazelcast
     * stall), is said (at most every 5 s) and tried again ({@link ClockBoundPublisher}): meanwhile the loops commit
     * nothing above the last bound published (those commits abort and are retried).
     */
    private void publishClockBounds(final io.scythe.txn.spi.ClockBound bound) {
        final ClockBoundPublisher publisher = new ClockBoundPublisher(vertx, bound,
            next -> failover.publishClockBound(config.node(), next), CLOCK_BOUND_CALL_MS, () -> leaseLost, this::log);
        // A loop refused a commit above the bound (stop 56 review, 13): published now, not at the next period, so the
        // attempts retried meanwhile (after a settling's floor, every commit on the floored tables) are few.
        bound.onWant(() -> vertx.runOnContext(v -> publisher.publish()));
        vertx.setPeriodic(CLOCK_BOUND_PUBLISH_MS, t -> {
            if (leaseLost) {
                vertx.cancelTimer(t);
                return;
            }
            publisher.publish();
        });
    }

    /**
     * Runs {@code step} every {@value #SETTLE_POLL_MS} ms (one at a time) until it gives null (nothing waited for),
     * then {@code done}; says every 5 s what {@code what} still waits for (the step's answer, or its failure); never
     * gives up, stops when this node lost its lease.
     */
    private void pollUntilNothingWaits(final String what, final java.util.function.Supplier<Future<String>> step,
                                       final Runnable done) {
        final long[] lastSaidNs = {System.nanoTime()};
        final boolean[] asking = {false};
        vertx.setPeriodic(SETTLE_POLL_MS, t -> {
            if (leaseLost) {
                vertx.cancelTimer(t);
                return;
            }
            if (asking[0]) {
                return;
            }
            asking[0] = true;
            step.get().onComplete(ar -> {
                asking[0] = false;
                if (ar.succeeded() && ar.result() == null) {
                    vertx.cancelTimer(t);
                    done.run();
                } else if (System.nanoTime() - lastSaidNs[0] > TimeUnit.SECONDS.toNanos(5)) {
                    lastSaidNs[0] = System.nanoTime();
                    log(what + " waits for " + (ar.succeeded() ? ar.result() : "the cluster's maps or its step ("
                        + ar.cause() + ")"));
                }
            });
        });
    }

    /**
     * The settling of copies {@code tables} of {@code partitions} that configuration {@code c} promoted on this memory
     * node, for a protocol that settles them here ({@code ProtocolModule#clusterSettlesPromotedCopies}: RCC's MVCC and
     * SUNDIAL floor their rts, issue 18; nothing for the others). Once the configuration is settled (every live CN
     * drained it, every dead one recovered, no recovery owed: {@link MemoryNodeFailover#settlementWaitsFor(long, long)}
     * from the partitions' term on), runs the module's {@code promotedSettling} on the RPC loop with the largest clock
     * the CNs drained with ({@link MemoryNodeFailover#clockBound}), then tells the cluster
     * ({@link MemoryNodeFailover#copiesSettled}): no CN serves the copies before (its settlement waits for it).
     *
     * <p>A CN that does not answer is not waited for by its clock: the settlement waits for it to be fenced and
     * recovered instead (its member left; every memory node fences it, so nothing it sends lands any more, and
     * recovery decides its commits). Its undecided attempts never commit, so their reads on the dead primary order
     * nothing. What is left is a commit of the dead CN that read the dead primary at a timestamp above every live CN's
     * clock: the floor is also above the clock bound each CN that is down published ({@link
     * MemoryNodeFailover#downClocks}: it committed nothing above it; MVCC's clock bound, SUNDIAL's bound on its logical
     * commit timestamps, issue 18); one down with no bound and no record that it may serve never served, and one
     * that may have served whose bound is missing is waited for until it is back. Polls every
     * {@value #SETTLE_POLL_MS} ms like {@link #promoteWhenDrained}, never gives up; a failed step is tried again.
     */
    private void settleCopiesWhenSettled(final io.scythe.txn.MemoryNodeConfiguration c, final Set<Integer> partitions,
                                         final Set<Integer> tables, final LogDb db) {
        final io.scythe.txn.spi.ProtocolModule module = io.scythe.txn.spi.ProtocolRegistry.moduleOf(config.protocol());
        if (!module.clusterSettlesPromotedCopies(io.scythe.txn.spi.ProtocolRegistry.protocol(config.protocol()))) {
            return;
        }
        long since = 0;
        long firstTerm = Long.MAX_VALUE;
        final List<String> keys = new ArrayList<>();
        for (final int p : partitions) {
            since = Math.max(since, c.primarySince(p));
            firstTerm = Math.min(firstTerm, c.primarySince(p));
            keys.add(MemoryNodeFailover.settlingKey(c, p));
        }
        final long drainedSince = since;
        final long clockSince = firstTerm;
        final long startNs = System.nanoTime();
        final long[] floored = {-1};
        final String[] downFloored = {""};
        pollUntilNothingWaits("settling of promoted copies " + tables + " (configuration epoch " + c.epoch() + ")",
            // The settlement's wait ("waits for ..."), or once it waits for nothing the clock to floor above.
            () -> vertx.<Object>executeBlocking(() -> {
                final String waits = failover.settlementWaitsFor(c.epoch(), drainedSince);
                if (waits != null) {
                    return (Object) waits;
                }
                // A registered compute node that is down left no drained clock: a read it made on the dead primary at
                // a timestamp above every live clock would go unfloored (a read-only commit logs nothing recovery
                // could add; review of issue 18, R1). So the floor is also above the last clock bound each such node
                // published (MemoryNodeFailover#CLOCK_BOUNDS: it committed no timestamp above it,
                // RccTsTxn#commitInStages; MVCC's and SUNDIAL's alike). One with no bound and no record that it may
                // serve (MemoryNodeFailover#SERVING, written before its first bound) never served: nothing to floor.
                // One that may have served but whose bound is missing (lost) holds the copies, unavailable and said
                // so every 5 s, until it is back (MemoryNodeFailover#downClocks).
                final MemoryNodeFailover.DownClocks down = failover.downClocks();
                if (down.waitsFor() != null) {
                    return (Object) ("compute nodes " + down.waitsFor() + " to come back (down, may have served, and "
                        + "their clock bound is missing)");
                }
                downFloored[0] = down.down().isEmpty() ? "" : "; compute nodes " + down.down() + " down, their "
                    + "published clock bound " + down.bound();
                return (Object) Math.max(failover.clockBound(clockSince), down.bound());
            }, false).compose(waitsOrClock -> {
                if (waitsOrClock instanceof String waits) {
                    return Future.succeededFuture(waits);
                }
                final long clock = (Long) waitsOrClock;
                final Promise<Void> step = Promise.promise();
                final io.vertx.core.Context rpcLoop = BridgeVerticle.eventLoopContexts(vertx).get(0);
                // In steps, one task each: the loop serves its other requests between them (review R3).
                rpcLoop.runOnContext(v -> {
                    try {
                        settleInSteps(rpcLoop, module.promotedSettlingSteps(db, tables, clock), step);
                    } catch (final RuntimeException e) { // e.g. a table with no room for rts
                        step.fail(e);
                    }
                });
                return step.future().compose(done -> vertx.<String>executeBlocking(() -> {
                    floored[0] = clock;
                    failover.copiesSettled(keys, clock);
                    return null;
                }, false));
            }), () -> log("settled promoted copies " + tables + " of configuration epoch " + c.epoch() + " "
                + TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - startNs) + " ms after their promotion: "
                + "promotedSettling above clock " + floored[0] + " (the largest the compute nodes drained with, or "
                + "published as their bound if down" + downFloored[0] + ")"));
    }

    /** Runs {@code steps} on {@code loop}, one task each, until it says none is left; then completes {@code done}. */
    private static void settleInSteps(final io.vertx.core.Context loop, final java.util.function.BooleanSupplier steps,
                                      final Promise<Void> done) {
        try {
            if (steps.getAsBoolean()) {
                loop.runOnContext(v -> settleInSteps(loop, steps, done));
            } else {
                done.complete();
            }
        } catch (final RuntimeException e) {
            done.fail(e);
        }
    }

    /**
     * A memory node's side of the CNs' leases on the fabric ({@link FabricLease}): registers the words, says where they
     * are ({@value #LEASES}), and watches them on a thread of its own, every half renewal period. A CN whose word did
     * not change for lease + grace is fenced here and owed recovery ({@link #leaseExpired}), as when Hazelcast drops
     * its member (which stays the fallback detector). A memory node that lost its own lease (removed by a
     * configuration) judges no lease any more; one that sees no majority of the registered members, or whose watcher
     * did not run for longer than the expiry, judges none until it does, and then starts every silence afresh.
     */
    private void watchFabricLeases(final FabricLease.Options lease) {
        final io.scythe.fabric.MemoryRegion words = nic.register(FabricLease.REGION, FabricLease.REGION_BYTES,
            io.scythe.fabric.MemoryKind.HOST);
        final RemoteRegion where = words.describe();
        hazelcast.<String, String>getMap(LEASES).put(config.node(), new JsonObject().put("address", where.address())
            .put("length", where.length()).put("rkey", where.rkey()).encode());
        final FabricLease.Watcher watcher = new FabricLease.Watcher(lease);
        final org.agrona.concurrent.AtomicBuffer buffer = words.buffer();
        fabricLeaseThread = LivenessTimer.start("scythe-lease-watch-" + config.node(),
            Math.max(5, lease.renewMs() / 2), sinceMs -> {
                if (leaseLost || closing) {
                    return;
                }
                // A memory node cut off in a minority, or paused (and so perhaps removed by a configuration it has
                // not heard of yet), sees no renewals because the CNs renew elsewhere or its own thread did not run,
                // not because they died: it judges no lease until it sees a majority again, and then, like after a
                // watcher stall longer than the expiry, starts every silence afresh (as the member-left path fences
                // nothing in a minority).
                final List<FabricLease.Expired> expired = watcher.scan(
                    slot -> buffer.getLongVolatile(FabricLease.offset(slot)), System::nanoTime,
                    () -> sinceMs <= lease.expiryMs()
                        && ShardOwnership.isMajority(registeredMembers.values(), liveMembers(null)));
                for (final FabricLease.Expired e : expired) {
                    leaseExpired(e);
                }
            });
        fabricLeaseThread.raisePriority("the fabric lease's watcher", this::log);
        log(lease.describe());
    }

    /**
     * The lease of the CN incarnation in slot {@code e.slot()} expired on this memory node: fences it here (no
     * Hazelcast call on the way: a map operation can wait on the paused CN's own partitions), then owes its recovery,
     * marked as a lease expiry so that recovery does not wait for its member to leave. An epoch the registry has moved
     * past was superseded, and fenced when its successor registered.
     */
    private void leaseExpired(final FabricLease.Expired e) {
        final JsonObject entry = cnBySlot.get((long) e.slot());
        if (entry == null || (entry.getLong("epoch", -1L) & 0xffff) != e.epoch()) {
            log("fabric lease of CN slot " + e.slot() + " epoch " + e.epoch() + " expired (no renewal for "
                + e.silentMs() + " ms); the registry names " + (entry == null ? "no CN there" : entry.getString(
                "fabricNode")) + ": left to the registry's own fencing");
            return;
        }
        final String why = "its fabric lease expired: no renewal for " + e.silentMs() + " ms";
        fence(entry.getString("fabricNode"), why);
        vertx.executeBlocking(() -> RecoveryDuty.owe(hazelcast, entry.getString("name"), entry, why, true), false)
            .onFailure(f -> log("owing recovery of " + entry.getString("fabricNode") + ": " + f));
    }

    /**
     * A compute node's lease on the fabric ({@link FabricLease}): renewed on every serving memory node by a
     * {@link LeaseRenewer} on a thread of its own; it loses its lease when the renewals stop being acknowledged in
     * time or a memory node refuses one (fenced). Renews on the memory nodes the applied configuration serves with.
     */
    private void renewFabricLease(final FabricLease.Options lease) {
        // No configuration applied yet: the initial one, which removed nothing.
        leaseRegions.start(config.memoryNodes(), this::leaseRegionOf, () -> {
            final io.scythe.txn.MemoryNodeConfiguration applied = catalog.configuration();
            return applied == null ? List.of() : failover.removed(applied);
        });
        leaseRenewer = new LeaseRenewer(nic, lease, epoch, slot, leaseRegions::targets, why -> {
            if (config.leaseCheck()) {
                loseLease(why);
            } else {
                log("fabric lease lost (" + why + "); leaseCheck is off: serves on until a memory node fences it");
            }
        });
        fabricLeaseThread = LivenessTimer.start("scythe-lease-renew-" + config.node(), lease.renewMs(),
            sinceMs -> leaseRenewer.round());
        fabricLeaseThread.raisePriority("the fabric lease's renewer", this::log);
        log(lease.describe() + "; renews on " + leaseRegions.targets().keySet());
    }

    /** Where memory node {@code mn} keeps its lease words ({@value #LEASES}), {@code null} if nowhere. Blocks. */
    private RemoteRegion leaseRegionOf(final String mn) {
        final String value = hazelcast.<String, String>getMap(LEASES).get(mn);
        return value == null ? null : leaseRegion(mn, new JsonObject(value));
    }

    private static RemoteRegion leaseRegion(final String mn, final JsonObject at) {
        return new RemoteRegion(mn, FabricLease.REGION, at.getLong("address"), at.getLong("length"),
            at.getInteger("rkey"), io.scythe.fabric.MemoryKind.HOST);
    }

    /**
     * A memory node's lease is its Hazelcast membership: once it did not run for a while (it was paused) the compute
     * nodes may have failed it over meanwhile, so it asks at once whether the current configuration still has it, and
     * stops serving (exit {@link #EXIT_LEASE_LOST}) rather than serve copies a promoted backup replaced when it does
     * not, when its member is no longer listed, or when it cannot tell. Called from the {@link LivenessTimer} thread
     * when it did not run for {@code sinceMs} ms (more than half the lease).
     */
    private void renewMemoryNodeLease(final long sinceMs) {
        if (leaseLost) {
            return;
        }
        vertx.executeBlocking(() -> {
            final UUID self = hazelcast.getCluster().getLocalMember().getUuid();
            if (!hazelcast.getLifecycleService().isRunning()
                || hazelcast.getCluster().getMembers().stream().noneMatch(m -> m.getUuid().equals(self))) {
                return "the cluster no longer lists its member";
            }
            final io.scythe.txn.MemoryNodeConfiguration c = failover.current();
            return removesThisProcess(failover.removed(c), config.node(), replacement, servesAgain)
                ? "memory-node configuration epoch " + c.epoch() + " removed it" : null;
        }, false).onComplete(ar -> {
            if (ar.failed() || ar.result() != null) {
                loseLease("this process did not run for " + sinceMs + " ms and "
                    + (ar.failed() ? "cannot tell whether it was failed over (" + ar.cause() + ")" : ar.result()));
            } else {
                log("did not run for " + sinceMs + " ms; the configuration still has it: serves on");
            }
        });
    }

    /**
     * Starts the TSO service above every timestamp handed out before: it asks each live issuer (every CN, whose groups
     * fetch from the counter directly, and every proxy) for its high water, and adds its own checkpoint (for issuers
     * that died meanwhile); it refuses to start while a live issuer does not answer.
     */
    private void startTso() throws Exception {
        final Set<UUID> live = new java.util.HashSet<>();
        hazelcast.getCluster().getMembers().forEach(m -> live.add(m.getUuid()));
        final Map<String, UUID> issuers = new LinkedHashMap<>();
        for (final Map.Entry<String, String> e : hazelcast.<String, String>getMap(NODES).entrySet()) {
            final JsonObject entry = new JsonObject(e.getValue());
            final String member = entry.getString("member");
            final String role = entry.getString("role");
            if ((NodeRole.CN.label().equals(role) || NodeRole.PROXY.label().equals(role)) && member != null
                && live.contains(UUID.fromString(member))) {
                issuers.put(e.getKey(), UUID.fromString(member));
            }
        }
        final java.nio.file.Path state = java.nio.file.Path.of(config.stateDir());
        java.nio.file.Files.createDirectories(state);
        // Named after the cluster too: clusters sharing the default stateDir must not share a checkpoint.
        tso = new TsoService(vertx, nic, List.copyOf(issuers.keySet()), 1_000)
            .checkpoint(state.resolve("tso-" + config.cluster() + "-" + config.node() + ".checkpoint"))
            // An issuer whose member left while it was asked died: the checkpoint covers it (the local view of the
            // membership, no remote call: this runs on an event loop).
            .issuerGone(issuer -> hazelcast.getCluster().getMembers().stream()
                .noneMatch(m -> m.getUuid().equals(issuers.get(issuer))));
        tso.start().await(config.readyTimeoutMs(), TimeUnit.MILLISECONDS);
        log("TSO service started at timestamp " + tso.startedAt() + " (high water asked of " + issuers.keySet()
            + ")");
    }

    /**
     * A TSO proxy (Scythe §4.5 (3)): serves the CNs' groups over RRPC, one FAA on the service's counter per batch,
     * and answers the high-water query a restarting service asks. It finds the counter again when the service
     * restarts.
     */
    private void startProxy() throws Exception {
        rpcServer = new RpcServer(vertx, nic, new RrpcOptions());
        final RrpcClient toService = new RrpcClient(vertx, nic, new RrpcOptions().maxReplyRings(1));
        final String service = config.tsoNode();
        onLoop(BridgeVerticle.eventLoopContexts(vertx).get(0), () -> {
            tsoProxy = new io.scythe.tso.TsoProxy(config.node(), io.scythe.tso.DirectTsoSource.relocating(service,
                () -> TsoService.locate(vertx, service, 2_000), () -> toService.oneSided(service),
                ch -> toService.forgetOneSided(service, ch), COUNTER_TIMEOUT_MS));
            return tsoProxy.register(vertx, rpcServer).compose(v -> rpcServer.start());
        });
    }

    private void startComputeNode() throws Exception {
        io.scythe.txn.FaultPoints.arm(config.faults()); // test-only; empty unless the config asks (NodeConfig)
        if (!config.faults().isEmpty()) {
            log("fault points armed: " + config.faults());
        }
        final int backups = config.backups();
        failover = new MemoryNodeFailover(hazelcast, config.memoryNodes(), backups);
        final io.scythe.txn.MemoryNodeConfiguration current = failover.current();
        final List<String> removed = failover.removed(current);
        final Map<String, List<TableDescriptor>> tablesOf = new LinkedHashMap<>();
        for (final String mn : config.memoryNodes()) {
            if (removed.contains(mn)) {
                tablesOf.put(mn, publishedTables(mn, current));
                continue;
            }
            // Asked of the node itself, unless a configuration removes it while this node waits: CI run 95 lost a
            // restarting CN that way (the MN, starved at load 8, split off the Hazelcast cluster, was failed over
            // and stopped serving; the CN asked it for 120 s and gave up). Once removed, its published placement.
            tablesOf.put(mn, retry(() -> TableDirectory.lookup(vertx, mn, 2_000).map(t -> List.of(t.tables())),
                "memory node " + mn + " to say where its tables are", () -> {
                    final io.scythe.txn.MemoryNodeConfiguration now = failover.current();
                    if (!failover.removed(now).contains(mn)) {
                        return null;
                    }
                    log("memory node " + mn + " was removed by configuration epoch " + now.epoch()
                        + " while this node asked where its tables are: takes the placement it published");
                    return publishedTables(mn, now);
                }));
        }
        // Primaries and backups as the memory nodes publish them (Catalog's placement); every partition must have
        // the backups this config asks for.
        catalog = Catalog.fromMemoryNodes(config.memoryNodes(), tablesOf);
        if (io.scythe.txn.spi.ProtocolRegistry.moduleOf(config.protocol()).clusterPromotedCopiesServeAtOnce(
            io.scythe.txn.spi.ProtocolRegistry.protocol(config.protocol()))) {
            catalog.servePromotedAtOnce(); // before the watch applies any configuration (CALVIN, issue 18)
        }
        for (final Catalog.Table table : catalog.tables()) {
            final int held = table.partitions().get(0).backups().size();
            if (held != backups) {
                throw new IllegalStateException("table " + table.name() + " has " + held + " backup(s) per "
                    + "partition on the memory nodes, but this node's config asks for " + backups + ": give every "
                    + "node the same replicas and memoryNodes");
            }
        }
        log(config.replicationLine());
        startPhase.accept("(tables)");
        // Applied on a worker, in order (publishedTables is an IMap.get: not on a Hazelcast event thread), the current
        // one too, which this thread waits for (review 41: applied here it could finish after a newer one the watch
        // applied meanwhile, and leave the lease targets and the settlement of the older one).
        boundedCall("the watch of the memory-node configuration",
            () -> failover.watch(vertx, this::applyConfiguration, this::log))
            .await(config.readyTimeoutMs(), TimeUnit.MILLISECONDS);
        watchMemoryNodes();
        // What a restarting TSO service asks: the largest timestamp this CN's groups handed out (0 before they run).
        // Answered before this CN waits for the service below: a service restarting meanwhile asks every registered
        // CN and would not start without this one's answer.
        consumers.add(vertx.eventBus().consumer(io.scythe.tso.TsoLayout.highWaterAddress(config.node()),
            m -> m.reply(tsoGroups.stream().mapToLong(io.scythe.tso.TsoGroup::highWater).max().orElse(0))));
        log("asking TSO node " + config.tsoNode() + " where its counter is (answering its high-water query)");
        startPhase.accept("(configuration)");
        final RemoteRegion counter = retry(() -> TsoService.locate(vertx, config.tsoNode(), 2_000),
            "TSO node " + config.tsoNode() + " to say where its counter is");
        startPhase.accept("(TSO)");
        final Protocol protocol = io.scythe.txn.spi.ProtocolRegistry.protocol(config.protocol());
        startPeers(protocol);
        // Every call to a memory node is bounded: one that stops answering ends the transaction (abort, or "outcome
        // unknown" past its point of no return) instead of leaving it pending for ever.
        // Verbs within their own bound (verbTimeoutMs: by default the queue pairs' transport timeout, or the call
        // bound if that is shorter).
        final RrpcClient rrpc = new RrpcClient(vertx, nic, RrpcOptions.forMemoryNodes()
            .callTimeoutNs(TimeUnit.MILLISECONDS.toNanos(config.memoryNodeTimeoutMs()))
            .verbTransportTimeoutMs(config.verbTimeoutMs()));
        final String service = config.tsoNode();
        // Each loop's group fetches from the counter directly or through a proxy, chosen at random per group, and
        // fails over to another when one fails (TsoGroup).
        final Supplier<io.scythe.txn.runtime.TimestampOracle> oracles = () -> {
            final List<io.scythe.tso.TsoSource> sources = new ArrayList<>();
            sources.add(io.scythe.tso.DirectTsoSource.relocating(service,
                () -> TsoService.locate(vertx, service, 2_000), () -> rrpc.oneSided(service),
                ch -> rrpc.forgetOneSided(service, ch), COUNTER_TIMEOUT_MS));
            for (final String proxy : config.tsoProxies()) {
                sources.add(new io.scythe.tso.ProxyTsoSource(proxy, () -> rrpc.rocket(proxy),
                    r -> rrpc.forgetRocket(proxy, r), PROXY_TIMEOUT_MS));
            }
            final io.scythe.tso.TsoGroup group = new io.scythe.tso.TsoGroup(1024,
                sources.toArray(new io.scythe.tso.TsoSource[0]));
            tsoGroups.add(group);
            return group;
        };
        // A protocol whose commits carry a clock's timestamps (RCC MVCC; SUNDIAL's logical ones) bounds them, published
        // before any loop serves (issue 18, review R1): a memory node's settling floors above it once this node is down.
        final io.scythe.txn.spi.ProtocolModule boundModule = io.scythe.txn.spi.ProtocolRegistry.moduleOf(
            config.protocol());
        // System.nanoTime: the clock of every loop's bridge on a cluster node (BridgeVerticle's SystemNanoClock).
        final io.scythe.txn.spi.ClockBound clockBound = boundModule.clockBound(protocol, System::nanoTime);
        if (clockBound != null) {
            // First the positive record that this incarnation may serve, then its first bound, then the loops: a node
            // down with neither record never served (rcc-unbounded-cn, MemoryNodeFailover#SERVING).
            failover.mayServe(config.node(), epoch);
            clockBound.published(failover.publishClockBound(config.node(), clockBound.nextBound()));
        }
        // Transaction ids: epoch in bits 48-63, this CN's cluster-unique slot in bits 32-39, the loop in 40-47.
        final long idBase = RecoveryDuty.idPrefix(epoch, slot);
        deployments.addAll(new CoordinatorDeployment(catalog, rrpc, counter, config.tsoNode(), protocol,
                config.maxAttempts(), new Watermarks(Watermarks.DEFAULT_COLD, Watermarks.DEFAULT_HOT),
                new io.vertx.core.json.JsonObject(),
                workload.procedures(), idBase, metrics::observe, oracles)
            .deploy(vertx, BridgeVerticle.eventLoopContexts(vertx),
                List.of(CoordinatorVerticle.ADDRESS, CoordinatorVerticle.ADDRESS + "." + config.node()),
                c -> {
                    io.scythe.txn.recovery.RedoLog.enable(c.runtime(), io.scythe.txn.recovery.RedoLog.DEFAULT_REGION_BYTES);
                    // A commit it cannot finish (or ids used up): it stops serving, its incarnation is recovered
                    // by another node, which finishes the redo record; it rejoins with a new epoch.
                    c.runtime().onGiveUp(why -> loseLease("a loop cannot go on: " + why));
                    // A lock verb in doubt on a memory node that died aborts once the cluster removes the node (its
                    // member leaves within max-no-heartbeat, then the configuration spreads): waited for that long
                    // before the loop gives up (chaos: promoted on every CN ~2.5 s after an MN's SIGKILL).
                    c.runtime().failoverWaitNs(TimeUnit.MILLISECONDS.toNanos(config.memoryNodeFailoverWaitMs()));
                    recoveryLoop.compareAndSet(null, new RecoveryLoop(Vertx.currentContext(), c.runtime()));
                    clockLoops.add(new RecoveryLoop(Vertx.currentContext(), c.runtime()));
                    if (clockBound != null) {
                        boundModule.useClockBound(c.runtime(), clockBound);
                    }
                    if (peerModule != null) {
                        equipForPeers(c);
                    }
                    coordinators.add(c);
                })
            .await(config.readyTimeoutMs(), TimeUnit.MILLISECONDS));
        startPhase.accept("(coordinators)");
        if (clockBound != null) {
            publishClockBounds(clockBound);
        }
        final RecoveryLoop loop = recoveryLoop.get();
        recoveryDuty = new RecoveryDuty(vertx, hazelcast, config.node(), epoch, config.memoryNodes(),
            RecoveryDuty.onLoop(loop.context(), loop.runtime()), this::log, this::loseLease);
        recoveryDuty.onRecorded(metrics::recovered);
        recoveryDuty.memoryNodeRemoved(catalog::removed);
        if (leaseLost) {
            recoveryDuty.stop(); // lost earlier in start: loseLease found no duty to stop (review, stop 41)
        }
        bounded("the recovery duty's watch", recoveryDuty::start);
        rejoins = new MemoryNodeRejoin(hazelcast, failover, config.node(), config.protocol(), catalog, loop.context(),
            loop.runtime(), this::log);
        if (leaseLost) {
            rejoins.stop();
        }
        bounded("the watch of memory-node rejoin requests", rejoins::start);
        if (config.leaseCheck()) {
            // Whether it ran is timed on a thread of its own; what the cluster says is checked on a loop.
            liveness = LivenessTimer.start("scythe-lease-" + config.node(), LEASE_RENEW_MS, sinceMs -> {
                final String why = outlived(sinceMs, LEASE_MS);
                if (why != null) {
                    loseLease(why);
                } else if (sinceMs >= LATE_LOG_MS && !leaseLost) {
                    log("lease timer ran " + sinceMs + " ms after the previous (lease " + LEASE_MS + " ms): keeps it");
                }
            });
            lastCheckNs = System.nanoTime();
            leaseTimer = vertx.setPeriodic(LEASE_RENEW_MS, t -> renewLease());
        }
        if (config.fabricLease().on()) {
            renewFabricLease(config.fabricLease());
        }
    }

    /**
     * Applies memory-node configuration {@code c} to this CN's catalog, if it is newer than the one applied. Blocks
     * (a rejoining node's published tables): on a worker thread, in order ({@link MemoryNodeFailover#watch}).
     */
    private void applyConfiguration(final io.scythe.txn.MemoryNodeConfiguration c) {
        // Only ever called from the watch's ordered queue (MemoryNodeFailover#watch): nothing else reconfigures the
        // catalog, so what it applied before stays so until this returns.
        final io.scythe.txn.MemoryNodeConfiguration before = catalog.configuration();
        // A memory node back (a replacement process rejoining) serves from the tables it published: new regions,
        // read here, before Catalog#reconfigure takes the catalog's lock (review 41: an IMap.get under it would hold
        // up an event loop calling Catalog#settled).
        final Map<String, java.util.Collection<TableDescriptor>> published = new java.util.HashMap<>();
        if (before != null && c.epoch() > before.epoch()) {
            for (final String mn : failover.removed(before)) {
                if (!failover.removed(c).contains(mn)) {
                    published.put(mn, publishedTables(mn, c));
                }
            }
        }
        final List<String> back = new ArrayList<>();
        if (catalog.reconfigure(c, mn -> {
            back.add(mn);
            if (!published.containsKey(mn)) {
                throw new IllegalStateException("memory node " + mn + " is back in configuration epoch " + c.epoch()
                    + " but its tables were not read before");
            }
            return published.get(mn);
        })) {
            for (final String mn : back) {
                log("memory node " + mn + " is back (a replacement process): its copies are reached at the tables it "
                    + "published (catalog incarnation " + catalog.incarnationOf(mn) + ")");
            }
            // A replacement's new lease words, and renewing only where c serves: one change under the regions' lock,
            // which the CN's start may be making at the same time (LeaseRegions).
            leaseRegions.applied(back, this::leaseRegionOf, failover.removed(c));
            log("memory-node configuration " + c.describe(config.memoryNodes()) + " applied"
                + (before == null && c.epoch() == 0 ? "" : "; partitions with a promoted primary: "
                + c.promotedSince(before == null ? io.scythe.txn.MemoryNodeConfiguration.initial(
                    config.memoryNodes().size(), config.backups()) : before)));
            // A rejoin is drained too: the commits decided before it do not write the new copies, and its
            // re-replication (MemoryNodeRejoin) starts once every CN drained them.
            final MemoryNodeFailover.Settlement settlement = MemoryNodeFailover.settlementOf(before, c,
                io.scythe.txn.MemoryNodeConfiguration.initial(config.memoryNodes().size(), config.backups()),
                !back.isEmpty());
            vertx.runOnContext(v -> settle(settlement));
        }
    }

    /**
     * Settles {@code settlement} on this CN ({@link MemoryNodeFailover#settle}), until its lease is lost. For a
     * protocol whose promoted copies are settled on their memory nodes
     * ({@code ProtocolModule#clusterSettlesPromotedCopies}: RCC's MVCC and SUNDIAL floor their rts, issue 18) its drain
     * carries the largest clock of its loops ({@link #loopClock}), and it serves a promoted copy only once its memory
     * node settled it ({@link MemoryNodeFailover#copiesUnsettled}, read from the configuration current at each poll:
     * a later configuration's settlement may take this one's over).
     */
    private void settle(final MemoryNodeFailover.Settlement settlement) {
        final io.scythe.txn.spi.ProtocolModule module = io.scythe.txn.spi.ProtocolRegistry.moduleOf(config.protocol());
        final boolean settlesCopies = module.clusterSettlesPromotedCopies(
            io.scythe.txn.spi.ProtocolRegistry.protocol(config.protocol()));
        MemoryNodeFailover.settle(vertx, catalog, new MemoryNodeFailover.Drains() {
            @Override
            public void drained(final long epoch) {
                if (settlesCopies) {
                    final long clock = loopClock(module);
                    failover.drained(epoch, config.node(), clock);
                    log("drained memory-node configuration epoch " + epoch + " with clock " + clock);
                } else {
                    failover.drained(epoch, config.node());
                }
            }

            @Override
            public String waitsFor(final long epoch, final long drainedSince) {
                final String waits = failover.settlementWaitsFor(epoch, drainedSince);
                return waits != null || !settlesCopies ? waits : failover.copiesUnsettled(catalog.configuration());
            }
        }, () -> leaseLost, this::log, SETTLE_POLL_MS, settlement);
    }

    /**
     * The largest {@code ProtocolModule#settlingClock} of this CN's coordinator loops, each read on its own loop (a
     * runtime is confined to it). Blocking (a worker): waits up to 10 s for the loops, then throws, and the drain is
     * tried again at the settlement's next poll.
     */
    private long loopClock(final io.scythe.txn.spi.ProtocolModule module) {
        final List<io.vertx.core.Future<Long>> reads = new ArrayList<>();
        for (final RecoveryLoop loop : clockLoops) {
            final io.vertx.core.Promise<Long> read = io.vertx.core.Promise.promise();
            loop.context().runOnContext(v -> read.complete(module.settlingClock(loop.runtime())));
            reads.add(read.future());
        }
        long clock = 0;
        try {
            for (final io.vertx.core.Future<Long> read : reads) {
                clock = Math.max(clock, read.toCompletionStage().toCompletableFuture().get(10, TimeUnit.SECONDS));
            }
        } catch (final InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while reading the loops' clocks", e);
        } catch (final java.util.concurrent.ExecutionException | java.util.concurrent.TimeoutException e) {
            throw new IllegalStateException("the loops' clocks not read: " + e, e);
        }
        return clock;
    }

    /**
     * A memory node's lease is its Hazelcast membership, as a CN's: when its member leaves (killed, or paused longer
     * than max-no-heartbeat) this CN, if it sees a majority, makes the configuration without it current
     * ({@link MemoryNodeFailover}): a backup of each partition it was primary of is promoted, and every CN switches
     * to it for reads, locks and write-back; the promoted partitions stay blocked until the commits in flight are
     * settled ({@link #settle}). A replacement process started under the node's name later rejoins
     * ({@link MemoryNodeRejoin}).
     */
    private void watchMemoryNodes() {
        hazelcast.getCluster().addMembershipListener(new MembershipListener() {
            @Override
            public void memberAdded(final MembershipEvent event) {
            }

            @Override
            public void memberRemoved(final MembershipEvent event) {
                final UUID gone = event.getMember().getUuid();
                final String member = gone.toString();
                final long seenNs = System.nanoTime();
                vertx.executeBlocking(() -> {
                    final Set<Map.Entry<String, String>> registry = hazelcast.<String, String>getMap(NODES).entrySet();
                    // A member cut off in a minority sees the others leave: it must not fail them over.
                    final List<UUID> registered = new ArrayList<>();
                    for (final Map.Entry<String, String> e : registry) {
                        final String m = new JsonObject(e.getValue()).getString("member");
                        if (m != null) {
                            registered.add(UUID.fromString(m));
                        }
                    }
                    final Set<UUID> live = new java.util.HashSet<>();
                    hazelcast.getCluster().getMembers().forEach(m -> live.add(m.getUuid()));
                    live.remove(gone);
                    for (final Map.Entry<String, String> e : registry) {
                        final JsonObject entry = new JsonObject(e.getValue());
                        if (!NodeRole.MN.label().equals(entry.getString("role"))
                            || !member.equals(entry.getString("member"))) {
                            continue;
                        }
                        if (!ShardOwnership.isMajority(registered, live)) {
                            log("memory node " + e.getKey() + " left this member's view, which holds no majority: "
                                + "the majority decides its failover");
                            continue;
                        }
                        final String refused = io.scythe.txn.spi.ProtocolRegistry.moduleOf(config.protocol())
                            .clusterMemoryNodeFailoverRefusal(io.scythe.txn.spi.ProtocolRegistry.protocol(
                                config.protocol()));
                        if (refused != null) {
                            log("memory node " + e.getKey() + " lost its lease (its member left the cluster) and is "
                                + "NOT failed over: protocol " + config.protocol() + " refuses it on cluster nodes ("
                                + refused + "); its partitions stay unavailable");
                            continue;
                        }
                        try {
                            final io.scythe.txn.MemoryNodeConfiguration next = failover.remove(e.getKey());
                            log("memory node " + e.getKey() + " lost its lease (its member left the cluster): "
                                + "configuration epoch " + next.epoch() + " without it is current ("
                                + TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - seenNs) + " ms after the "
                                + "member left)");
                        } catch (final IllegalStateException lost) {
                            log("memory node " + e.getKey() + " lost its lease and cannot be failed over: "
                                + lost.getMessage());
                        }
                    }
                    return null;
                }, false);
            }
        });
    }

    /**
     * Serves the other CNs on every loop and learns where they are: the registry's CN entries as they come, change
     * and go, and members that leave (whose calls then fail at once rather than at their bound).
     */
    private void startPeers(final Protocol protocol) throws Exception {
        final List<Context> loops = BridgeVerticle.eventLoopContexts(vertx);
        peerModule = io.scythe.txn.spi.ProtocolRegistry.peerModuleOf(protocol);
        final RrpcOptions options = CnPeers.defaultOptions().callTimeoutNs(
            TimeUnit.MILLISECONDS.toNanos(config.peerCallTimeoutMs()));
        peers = new CnPeers(vertx, nic, peerModule == null ? options : peerModule.peerOptions(options), loops.size(),
            this::peerFabricNode);
        final IMap<String, String> nodes = hazelcast.getMap(NODES);
        bounded("the watch of its peers", () -> nodes.addEntryListener(new PeerListener(), true));
        hazelcast.getCluster().addMembershipListener(new MembershipListener() {
            @Override
            public void memberAdded(final MembershipEvent event) {
            }

            @Override
            public void memberRemoved(final MembershipEvent event) {
                for (final Map.Entry<String, Peer> e : peerNodes.entrySet()) {
                    if (e.getValue().member().equals(event.getMember().getUuid())
                        && peerNodes.remove(e.getKey(), e.getValue())) {
                        peers.peerLeft(e.getValue().fabricNode(), "its member left the cluster");
                    }
                }
            }
        });
        for (final Map.Entry<String, String> e : nodes.entrySet()) {
            notePeer(e.getKey(), new JsonObject(e.getValue()));
        }
        if (peerModule != null) {
            startPeerModule(protocol, loops.size());
        }
        peers.start(loops).await(config.readyTimeoutMs(), TimeUnit.MILLISECONDS);
    }

    /**
     * Gives the protocol's module its compute-node services (ProtocolModule#startComputeNode) before the loops serve
     * peers, as the embedded cluster and the simulator do ({@code ComputeNodePeers}): this node is index
     * {@code computeNodes.indexOf(node)} of the config's compute nodes, named there (the directory maps a name to its
     * current incarnation), each in a process of its own. A peer incarnation whose recovery finished (its entry in
     * {@value RecoveryDuty#OWED} removed on success) is told to the module, which frees what it held here.
     */
    private void startPeerModule(final Protocol protocol, final int loops) throws Exception {
        final List<String> names = config.computeNodes();
        final int index = names.indexOf(config.node());
        if (index < 0) {
            throw new IllegalStateException("compute node " + config.node() + " is not in computeNodes " + names
                + ": protocol " + protocol.name() + " places its compute nodes by that list; add it (the same list "
                + "on every node)");
        }
        if ((long) names.size() * loops > 0xff) {
            throw new IllegalStateException(protocol.name() + " numbers the compute nodes' loops (1 to 255): "
                + names.size() + " compute nodes x " + loops + " loops are too many");
        }
        final Map<String, Object> shared = new java.util.concurrent.ConcurrentHashMap<>();
        peerShared = shared;
        shared.put("run.over", (java.util.function.BooleanSupplier) () -> leaseLost || closing);
        shared.put("clock.wall", true); // its loops' timers run on wall-clock time
        // What a module asks when it missed the news of a recovery (a release message, the owed entry's removal).
        shared.put(io.scythe.txn.spi.ComputeNodeContext.RECOVERY_RECORD,
            new io.scythe.txn.spi.ComputeNodeContext.RecoveryRecord() {
                @Override
                public io.vertx.core.Future<Boolean> recovered(final String incarnation) {
                    return vertx.executeBlocking(() -> RecoveryDuty.wasRecovered(hazelcast, incarnation), false);
                }

                @Override
                public io.vertx.core.Future<String> recoveredWithPrefix(final long idPrefix) {
                    return vertx.executeBlocking(() -> RecoveryDuty.recoveredWithPrefix(hazelcast, idPrefix), false);
                }

                @Override
                public io.vertx.core.Future<Boolean> recoveredOrNeverRegistered(final String cn) {
                    return vertx.executeBlocking(() -> RecoveryDuty.recoveredOrNeverRegistered(hazelcast, cn), false);
                }
            });
        final IMap<String, String> owedMap = hazelcast.getMap(RecoveryDuty.OWED);
        bounded("the watch of owed recoveries", () -> owedMap.addEntryListener(
            (com.hazelcast.map.listener.EntryRemovedListener<String, String>) event -> {
            if (event.getOldValue() == null) {
                return;
            }
            final JsonObject owed = new JsonObject(event.getOldValue());
            final String cn = owed.getString("cn");
            if (cn.equals(config.node())) {
                ownRecovered(event.getKey());
            } else {
                tellPeerRecovered(event.getKey(), cn, owed.getLong("prefix", 0L));
            }
        }, true));
        // A restarted CN: its earlier incarnations (owed since it registered) must be recovered before the module
        // serves what they held. Listened for first, then looked up (an entry gone meanwhile is no longer waited for).
        final Map<String, Long> earlier = new java.util.TreeMap<>(); // identity -> id prefix
        for (final Map.Entry<String, String> e : owedMap.entrySet()) {
            final JsonObject owed = new JsonObject(e.getValue());
            if (config.node().equals(owed.getString("cn"))) {
                ownOwed.add(e.getKey());
                earlier.put(e.getKey(), owed.getLong("prefix", 0L));
            }
        }
        ownOwed.removeIf(k -> !owedMap.containsKey(k));
        // Issue 21: a restart after the old incarnation's recovery finished awaits too (told at once, below), so a
        // module's barrier after its own recovery (SELCC: every live survivor acknowledges its take-backs first) runs
        // on every restart within RESTART_GRACE_SCOPE_MS of the record's atMs, not only when this node found itself
        // still owed; the incarnations recovered within it are named to the module with the owed ones.
        final long[] lastRecoveredMs = new long[1];
        final long graceScopeMs = restartGraceScopeMs(peerModule.restartAlwaysRejoins(protocol));
        final long now = System.currentTimeMillis();
        earlier.putAll(RecoveryDuty.recoveredOf(hazelcast, config.node(), now - graceScopeMs, lastRecoveredMs));
        final boolean awaits = awaitsOwnRecovery(!ownOwed.isEmpty(), lastRecoveredMs[0], now, graceScopeMs);
        consumers.add(vertx.eventBus().<Object>consumer(RELEASED, m -> tellPeerReleased((JsonObject) m.body())));
        peerLoopSetUp = peerModule.startComputeNode(io.scythe.txn.ComputeNodePeers.context(index, names, peers,
            shared, peerRecovered::add, peerReleased::add, awaits, Map.copyOf(earlier)));
        log("protocol " + protocol.name() + ": compute node " + index + " of " + names + ", peers "
            + peerModule.peerMessaging(protocol) + (awaits ? "; serves what its earlier incarnations held once they "
            + "are recovered: " + (ownOwed.isEmpty() ? "recovered already (" + lastRecoveredMs[0] + " ms epoch), told "
            + "now" : new TreeSet<>(ownOwed)) : ""));
        if (awaits) {
            ownRecovered(null); // recovered meanwhile
        }
    }

    /**
     * The state this CN shares with its protocol module ({@code ComputeNodeContext#shared}): its own only (each node a
     * process); a module may put {@value #MODULE_HEALTH} there (a supplier of what /health shows under "module").
     */
    private volatile Map<String, Object> peerShared;
    /** The key of {@link #peerShared} under which a module puts what its node's health shows. */
    public static final String MODULE_HEALTH = io.scythe.txn.spi.ComputeNodeContext.MODULE_HEALTH;

    /**
     * How long after an earlier incarnation's recovery (its {@code atMs}) a restarted CN still awaits its own recovery
     * news (told at once) so that its module's barrier runs ({@link #startPeerModule}; SELCC: survivors acknowledge
     * their take-backs of what names its reused participant numbers before it takes a latch).
     */
    static final long RESTART_GRACE_SCOPE_MS = 600_000;

    /** {@link #RESTART_GRACE_SCOPE_MS}, or no bound for a module whose restart always rejoins (CALVIN). */
    static long restartGraceScopeMs(final boolean alwaysRejoins) {
        return alwaysRejoins ? Long.MAX_VALUE / 2 : RESTART_GRACE_SCOPE_MS;
    }

    /**
     * Whether a starting CN is a restart its module must hold back ({@code ComputeNodeContext#awaitsOwnRecovery}):
     * earlier incarnations still owed, or one recovered ({@code lastRecoveredMs}, -1: none) within {@code scopeMs}.
     */
    static boolean awaitsOwnRecovery(final boolean owed, final long lastRecoveredMs, final long nowMs,
                                     final long scopeMs) {
        return owed || lastRecoveredMs >= 0 && nowMs - lastRecoveredMs < scopeMs;
    }

    /** This CN's earlier incarnations still owed recovery (a restarted CN of a peer protocol waits for them). */
    private final Set<String> ownOwed = ConcurrentHashMap.newKeySet();
    private final java.util.concurrent.atomic.AtomicBoolean ownToldRecovered = new java.util.concurrent.atomic.AtomicBoolean();

    private void ownRecovered(final String incarnation) {
        if (incarnation != null) {
            ownOwed.remove(incarnation);
        }
        if (ownOwed.isEmpty() && peerLoopSetUp != null && ownToldRecovered.compareAndSet(false, true)) {
            tellPeerRecovered(incarnation == null ? "earlier incarnations" : incarnation, config.node(), 0);
        }
    }

    /** A memory node's release of a dead CN incarnation ({@value #RELEASED}), told to the module (not this CN's own). */
    private void tellPeerReleased(final JsonObject released) {
        final String incarnation = released.getString("incarnation");
        if (incarnation == null || incarnation.equals(fabricNode)) {
            return;
        }
        final io.vertx.core.json.JsonArray list = released.getJsonArray("prefixes", new io.vertx.core.json.JsonArray());
        final long[] prefixes = new long[list.size()];
        for (int i = 0; i < prefixes.length; i++) {
            prefixes[i] = list.getLong(i);
        }
        for (final io.scythe.txn.spi.ComputeNodeContext.PeerReleased l : peerReleased) {
            final String did = l.released(incarnation, prefixes, released.getString("memoryNode"));
            if (did != null) {
                log("peer incarnation " + incarnation + " released on " + released.getString("memoryNode") + ": "
                    + did);
            }
        }
    }

    private void tellPeerRecovered(final String incarnation, final String cn, final long prefix) {
        for (final io.scythe.txn.spi.ComputeNodeContext.PeerRecovered l : peerRecovered) {
            final String did = l.recovered(incarnation, cn, prefix, io.scythe.txn.recovery.RecoveryRpc.NODE_ID_MASK);
            if (did != null) {
                log("peer incarnation " + incarnation + " recovered: " + did);
            }
        }
    }

    /** Gives coordinator {@code c} (on its loop) this node's peers and the module's loop set-up. */
    private void equipForPeers(final Coordinator c) {
        final int l = peers.loopIndex();
        if (l < 0) {
            throw new IllegalStateException("coordinator made on a loop that serves no peers");
        }
        final List<String> names = config.computeNodes();
        final int loops = peers.loops();
        final int number = io.scythe.txn.ComputeNodePeers.loopNumber(names.indexOf(config.node()), l, loops);
        c.runtime().peerLoops(io.scythe.txn.ComputeNodePeers.loop(names::get, peers, number, l, loops));
        final Context here = vertx.getOrCreateContext();
        peerLoopSetUp.startLoop(l, c.runtime(), task -> here.runOnContext(v -> task.run()));
    }

    /** Where CN {@code name} is: its incarnation while its member is in the cluster. */
    private record Peer(String fabricNode, long epoch, UUID member) {
    }

    private String peerFabricNode(final String name) {
        final Peer peer = peerNodes.get(name);
        return peer == null ? null : peer.fabricNode();
    }

    private void notePeer(final String name, final JsonObject entry) {
        if (!NodeRole.CN.label().equals(entry.getString("role")) || entry.getString("member") == null) {
            return;
        }
        final UUID member = UUID.fromString(entry.getString("member"));
        final Peer next = new Peer(entry.getString("fabricNode"), entry.getLong("epoch", 0L), member);
        final boolean live = hazelcast.getCluster().getMembers().stream().anyMatch(m -> m.getUuid().equals(member));
        final Peer[] superseded = new Peer[1];
        peerNodes.compute(name, (k, known) -> {
            if (known != null && known.epoch() > next.epoch()) {
                return known; // a late event of an older incarnation
            }
            if (known != null && !known.fabricNode().equals(next.fabricNode())) {
                superseded[0] = known;
            }
            return live ? next : null;
        });
        if (superseded[0] != null) {
            peers.peerLeft(superseded[0].fabricNode(), "epoch " + next.epoch() + " superseded it");
        }
    }

    private final class PeerListener implements EntryAddedListener<String, String>,
        EntryUpdatedListener<String, String> {
        @Override
        public void entryAdded(final EntryEvent<String, String> event) {
            notePeer(event.getKey(), new JsonObject(event.getValue()));
        }

        @Override
        public void entryUpdated(final EntryEvent<String, String> event) {
            notePeer(event.getKey(), new JsonObject(event.getValue()));
        }
    }

    /**
     * Checks CN-to-CN messaging to {@code peer} from this CN's first loop: a WRITE into its probe region and an RPC
     * that reads it back ({@link CnPeers#probe}).
     */
    public Future<JsonObject> probePeer(final String peer) {
        if (peers == null) {
            return Future.failedFuture(new IllegalStateException("node " + config.node() + " is a "
                + role.label() + ": only compute nodes message their peers"));
        }
        return peers.onLoop(0, () -> peers.probe(peer));
    }

    /** Asks until answered or the ready timeout passes (the other node may still be starting). */
    private <T> T retry(final Supplier<Future<T>> ask, final String what) throws Exception {
        return retry(ask, what, () -> null);
    }

    /**
     * Asks until answered or the ready timeout, every {@link #LOOKUP_RETRY_MS}; before each try {@code instead} may
     * settle it otherwise (non-null: its answer is taken and nothing more is asked).
     */
    private <T> T retry(final Supplier<Future<T>> ask, final String what, final Callable<T> instead)
            throws Exception {
        final long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(config.readyTimeoutMs());
        Exception last = null;
        while (System.nanoTime() < deadline) {
            final T settled = instead.call();
            if (settled != null) {
                return settled;
            }
            try {
                return ask.get().await(5, TimeUnit.SECONDS);
            } catch (final Exception e) {
                last = e;
                Thread.sleep(LOOKUP_RETRY_MS);
            }
        }
        throw new IllegalStateException("timed out after " + config.readyTimeoutMs() + " ms waiting for " + what
            + (last == null ? "" : ": " + last.getMessage()), last);
    }

    /** Where failed-over memory node {@code mn} kept its tables: still the catalog's placement (what redo names). */
    private List<TableDescriptor> publishedTables(final String mn,
            final io.scythe.txn.MemoryNodeConfiguration removedBy) {
        final List<TableDescriptor> published = MemoryNodeFailover.publishedTables(hazelcast, mn);
        if (published == null) {
            throw new IllegalStateException("memory node " + mn + " was removed by configuration epoch "
                + removedBy.epoch() + " and never published its tables");
        }
        return published;
    }

    private static <T> T onLoop(final Context loop, final Supplier<Future<T>> body) throws Exception {
        final Promise<T> done = Promise.promise();
        loop.runOnContext(v -> body.get().onComplete(done));
        return done.future().await(30, TimeUnit.SECONDS);
    }

    // ------------------------------------------------------------------------------------ registry and leases

    private long nextEpoch() {
        final IMap<String, Long> epochs = hazelcast.getMap(EPOCHS);
        final long lockWaitMs = config.readyTimeoutMs();
        return MapLockStep.underLock(epochs, config.node(), "epoch of " + config.node(), lockWaitMs, () -> {
            final Long last = epochs.get(config.node());
            // Its incarnations still owed recovery (or not yet known dead: the registry's) keep their low epoch bits.
            final String registered = hazelcast.<String, String>getMap(NODES).get(config.node());
            final List<Long> owed = RecoveryDuty.unrecoveredEpochs(hazelcast, config.node(),
                registered == null ? null : new JsonObject(registered));
            final long next = RecoveryDuty.nextEpoch(last == null ? 0 : last, owed);
            if (next != (last == null ? 0 : last) + 1) {
                log("epoch " + next + ": skipped those whose low " + RecoveryDuty.EPOCH_TELL_APART_BITS + " bits are "
                    + "an incarnation's still owed recovery (epochs " + owed + ")");
            }
            if (!MapLockStep.raise(epochs, config.node(), next)) {
                throw MapLockStep.stale("read epoch " + last + " but the map holds " + epochs.get(config.node()));
            }
            if (!EpochClaims.claim(epochs, EpochClaims.epochKey(config.node(), next), claimToken)) {
                throw MapLockStep.stale("epoch " + next + " was claimed already by another incarnation");
            }
            return next;
        }, this::log);
    }

    /**
     * Another incarnation shares this one's epoch or slot ({@link EpochClaims}): before ready the start fails (its
     * last check throws), once started it loses its lease, loudly, and a new start takes a fresh epoch.
     */
    private void claimLost(final String why) {
        claimConflict = why;
        log("epoch " + epoch + " (slot " + slot + ") is not this incarnation's alone: " + why);
        final long lostSlot = slot;
        vertx.executeBlocking(() -> EpochClaims.dropLostSlot(hazelcast.getMap(EPOCHS), config.node(), lostSlot,
            claimToken)).onFailure(e -> log("could not drop slot " + lostSlot + " of " + config.node() + ": " + e));
        if (ready) {
            vertx.runOnContext(v -> loseLease(why));
        }
    }

    /** This CN's slot, unique in the cluster and kept across its epochs: part of its transaction ids. */
    private long slotOf() {
        final IMap<String, Long> epochs = hazelcast.getMap(EPOCHS);
        return MapLockStep.underLock(epochs, SLOTS, "slot of " + config.node(), config.readyTimeoutMs(),
            () -> EpochClaims.takeSlot(epochs, config.node(), claimToken, MAX_CN_SLOTS), this::log);
    }

    /**
     * The loop numbers of the CN whose transaction ids carry {@code idPrefix} ({@code MemoryNodeContext#loopNumbers}):
     * its slot names its registry entry (this memory node's view, {@link #cnBySlot}), whose name places it in the
     * configured compute nodes and whose {@code loops} says how many it numbered; empty when either is unknown.
     */
    private int[] loopNumbersOf(final long idPrefix) {
        final JsonObject cn = cnBySlot.get((idPrefix >>> 32) & 0xff);
        final int index = cn == null ? -1 : config.computeNodes().indexOf(cn.getString("name"));
        final int loops = cn == null ? 0 : cn.getInteger("loops", 0);
        if (index < 0 || loops <= 0) {
            return new int[0];
        }
        final int[] numbers = new int[loops];
        for (int l = 0; l < loops; l++) {
            numbers[l] = io.scythe.txn.ComputeNodePeers.loopNumber(index, l, loops);
        }
        return numbers;
    }

    private void register() throws InterruptedException {
        final JsonObject entry = new JsonObject().put("role", role.label()).put("fabricNode", fabricNode)
            .put("epoch", epoch).put("member", hazelcast.getCluster().getLocalMember().getUuid().toString())
            .put("pid", ProcessHandle.current().pid());
        final IMap<String, String> nodes = hazelcast.getMap(NODES);
        if (role == NodeRole.CN) {
            entry.put("slot", slot); // with the epoch, the prefix of its transaction ids (recovery frees its CAS words)
            // How many loops it numbers (ComputeNodePeers#loopNumber, as equipForPeers does): memory nodes find a dead
            // CN's loop numbers from it (MemoryNodeContext#loopNumbers: SELCC's latch-word participants).
            entry.put("loops", BridgeVerticle.eventLoopContexts(vertx).size());
            final String superseded = RecoveryDuty.register(hazelcast, config.node(), entry);
            if (superseded != null) {
                log("supersedes " + superseded + ", now owed recovery");
            }
            return;
        }
        if (role == NodeRole.TSO || role == NodeRole.PROXY) {
            // The service restarts above every timestamp handed out (startTso); a proxy keeps no state of its own.
            nodes.put(config.node(), entry.encode());
            return;
        }
        final String earlier = nodes.putIfAbsent(config.node(), entry.encode());
        if (earlier != null) {
            replaceMemoryNode(nodes, earlier, entry);
        }
    }

    /**
     * An MN ran under this name before: its data died with its process, and coming back under running transactions
     * as if it held them would corrupt them. This process starts as its replacement ({@link MemoryNodeRejoin}) once a
     * configuration removed the old one (its partitions failed over to backups), waiting up to the ready timeout for
     * that; it is refused when the old one is not removed by then (it may still serve), or when no configuration can
     * take it back (without replication there is nothing to re-replicate from).
     */
    private void replaceMemoryNode(final IMap<String, String> nodes, final String earlier, final JsonObject entry)
        throws InterruptedException {
        final Object pid = new JsonObject(earlier).getValue("pid");
        final String refused = role.label() + " node " + config.node() + " ran in this cluster before (pid " + pid
            + "): ";
        if (config.backups() == 0) {
            throw new IllegalStateException(refused + "without replication a memory node cannot be restarted into a "
                + "running cluster (its data is gone, and a replacement has no copy to be re-replicated from): restart "
                + "the whole cluster");
        }
        final MemoryNodeFailover configurations = new MemoryNodeFailover(hazelcast, config.memoryNodes(),
            config.backups());
        final int part = config.memoryNodes().indexOf(config.node());
        final long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(config.readyTimeoutMs());
        io.scythe.txn.MemoryNodeConfiguration c = configurations.current();
        boolean said = false;
        while (!c.removed().contains(part)) {
            if (System.nanoTime() > deadline) {
                throw new IllegalStateException(refused + "memory-node configuration epoch " + c.epoch() + " still "
                    + "has it after " + config.readyTimeoutMs() + " ms (not failed over: the old process may still "
                    + "serve): a replacement starts only once the cluster removed the node");
            }
            if (!said) {
                log("waits until the cluster removes the memory node process it replaces (pid " + pid + ", still in "
                    + "configuration epoch " + c.epoch() + ")");
                said = true;
            }
            Thread.sleep(200);
            c = configurations.current();
        }
        nodes.put(config.node(), entry.encode());
        replacement = true;
        log("replaces memory node process pid " + pid + ", removed by configuration epoch " + c.epoch() + ": loads "
            + "its tables on new regions and rejoins, re-replicated from the serving copies");
    }

    /** Points this node's registry entry at its member UUID again (after a merge); only while the entry is its own. */
    private void reRegister() {
        final IMap<String, String> nodes = hazelcast.getMap(NODES);
        final String member = hazelcast.getCluster().getLocalMember().getUuid().toString();
        for (int attempt = 0; attempt < 16; attempt++) {
            final String value = nodes.get(config.node());
            final JsonObject entry = value == null ? null : new JsonObject(value);
            if (entry != null && (entry.getLong("pid", -1L) != ProcessHandle.current().pid()
                || member.equals(entry.getString("member")))) {
                return; // another incarnation's, or already this member's
            }
            final JsonObject mine = (entry == null ? new JsonObject().put("role", role.label())
                .put("fabricNode", fabricNode).put("epoch", epoch).put("pid", ProcessHandle.current().pid()) : entry)
                .copy().put("member", member);
            if (entry == null ? nodes.putIfAbsent(config.node(), mine.encode()) == null
                : nodes.replace(config.node(), value, mine.encode())) {
                log("registered again as member " + member + " after merging back into the cluster");
                return;
            }
        }
    }

    /** Fences CNs that leave or are superseded, on nodes whose memory they reach. */
    private void watchMembers() {
        if (role == NodeRole.CN) {
            // Merging back after a split means this member was cut off (and fenced) meanwhile.
            hazelcast.getLifecycleService().addLifecycleListener(event -> {
                if (event.getState() == com.hazelcast.core.LifecycleEvent.LifecycleState.MERGING && ready) {
                    vertx.runOnContext(v -> {
                        if (!leaseLost) {
                            loseLease("it was split from the cluster and is merging back");
                        }
                    });
                }
            });
            return;
        }
        // A split (an overloaded host misses heartbeats) gives this member a new UUID when it merges back: its entry
        // must name the new one, or a restarting TSO service takes this live proxy for dead and skips asking it.
        hazelcast.getLifecycleService().addLifecycleListener(event -> {
            if (event.getState() == com.hazelcast.core.LifecycleEvent.LifecycleState.MERGED) {
                vertx.executeBlocking(() -> {
                    if (role == NodeRole.MN && failover != null) {
                        // Cut off, it may have been failed over meanwhile: the merged map says (the majority's).
                        final io.scythe.txn.MemoryNodeConfiguration c = failover.current();
                        if (removesThisProcess(failover.removed(c), config.node(), replacement, servesAgain)) {
                            vertx.runOnContext(v -> loseLease("it was split from the cluster, and memory-node "
                                + "configuration epoch " + c.epoch() + " removed it meanwhile"));
                            return null;
                        }
                    }
                    reRegister();
                    memberLeaves.retry(); // merged: departures seen while cut off are judged now
                    if (role == NodeRole.MN && askedToRejoin && !rejoinedFully) {
                        // Review of 740eb727: cut off, it may have been removed by a configuration it never saw,
                        // and transactions committed meanwhile whose REPLICATE to it was cut. Born again now: the
                        // modules raise its floor (Aurogon's: NIC clock + bound, a max), so a later recovery's HOLDS
                        // of one of those answers NOT_HERE, never ABORTED with a fence (a partial commit). On the RPC
                        // loop, done before it asks.
                        final java.util.concurrent.CompletableFuture<Void> reborn = new java.util.concurrent
                            .CompletableFuture<>();
                        BridgeVerticle.eventLoopContexts(vertx).get(0).runOnContext(v -> {
                            try {
                                memoryNodeServices.replacement(config.protocol());
                                reborn.complete(null);
                            } catch (final RuntimeException e) {
                                reborn.completeExceptionally(e);
                            }
                        });
                        try {
                            reborn.get(10, TimeUnit.SECONDS);
                        } catch (final Exception e) {
                            // Not born again: asking to rejoin with the old floor could fence what others committed
                            // meanwhile. Leave loudly; a fresh replacement is born at a fresh floor.
                            vertx.runOnContext(v -> loseLease("it merged back into the cluster but could not be "
                                + "born again before asking to rejoin: " + e));
                            return null;
                        }
                        askToRejoin(" again: it merged back into the cluster as a new member");
                    }
                    return null;
                }, false);
            }
        });
        memberLeaves = new MemberLeaves(registeredMembers::values, () -> liveMembers(null), this::log,
            this::memberLeft);
        final IMap<String, String> nodes = hazelcast.getMap(NODES);
        final Object listener = new CnListener();
        nodes.addEntryListener((com.hazelcast.map.listener.MapListener) listener, true);
        for (final Map.Entry<String, String> e : nodes.entrySet()) {
            noteCn(e.getKey(), new JsonObject(e.getValue()), null);
        }
        hazelcast.getCluster().addMembershipListener(memberLeaves);
    }

    /**
     * Acts on CN member {@code gone} having left, as judged by {@link #memberLeaves} (now, or once this node's view
     * holds a majority again): fences its CN here and owes its recovery. Does not block.
     */
    private void memberLeft(final UUID gone) {
        final String cn = cnByMember.remove(gone);
        if (cn != null) {
            fence(cn, "its member left the cluster");
        }
        oweLeftMember(gone, 1);
    }

    /** How many times a member-left owe is tried (1 s apart) before it is left to the shard rebalance's and successor's. */
    private static final int OWE_ATTEMPTS = 30;

    /**
     * Owes recovery of the CN whose member {@code gone} left (and fences it, if its registration has not reached this
     * node's listener yet): looked up in the map, blocking, so on a worker. A failed map call (Hazelcast's retries ran
     * out against a partition table still naming a departed member, or the instance is shutting down) is tried again a
     * second later, logged, rather than dropped: the owe is what gets the dead CN's locks released.
     */
    private void oweLeftMember(final UUID gone, final int attempt) {
        vertx.executeBlocking(() -> {
            for (final Map.Entry<String, String> e : hazelcast.<String, String>getMap(NODES).entrySet()) {
                final JsonObject entry = new JsonObject(e.getValue());
                if (NodeRole.CN.label().equals(entry.getString("role"))
                    && gone.toString().equals(entry.getString("member"))) {
                    fence(entry.getString("fabricNode"), "its member left the cluster");
                    RecoveryDuty.owe(hazelcast, e.getKey(), entry, "its member left the cluster");
                }
            }
            return null;
        }, false).onFailure(f -> {
            if (closing || attempt >= OWE_ATTEMPTS) {
                log("owing recovery of the CN of member " + gone + " failed " + attempt + " time(s), given up: " + f);
                return;
            }
            log("owing recovery of the CN of member " + gone + " failed (" + f + "); tried again in 1 s");
            vertx.setTimer(1000, t -> oweLeftMember(gone, attempt + 1));
        });
    }

    private final class CnListener implements EntryAddedListener<String, String>,
        EntryUpdatedListener<String, String> {
        @Override
        public void entryAdded(final EntryEvent<String, String> event) {
            noteCn(event.getKey(), new JsonObject(event.getValue()), null);
        }

        @Override
        public void entryUpdated(final EntryEvent<String, String> event) {
            noteCn(event.getKey(), new JsonObject(event.getValue()),
                event.getOldValue() == null ? null : new JsonObject(event.getOldValue()));
        }
    }

    private void noteCn(final String name, final JsonObject entry, final JsonObject previous) {
        if (entry.getString("member") != null
            && !UUID.fromString(entry.getString("member")).equals(registeredMembers.put(name,
                UUID.fromString(entry.getString("member"))))) {
            // A node registered (again, after a merge, under a new member): this view may hold a majority now.
            memberLeaves.retry();
        }
        if (!NodeRole.CN.label().equals(entry.getString("role"))) {
            return;
        }
        final UUID member = UUID.fromString(entry.getString("member"));
        if (entry.getLong("slot") != null) {
            final JsonObject named = entry.copy().put("name", name);
            cnBySlot.merge(entry.getLong("slot"), named,
                (known, next) -> next.getLong("epoch", 0L) >= known.getLong("epoch", 0L) ? next : known);
        }
        final boolean live = hazelcast.getCluster().getMembers().stream().anyMatch(m -> m.getUuid().equals(member));
        if (live) {
            cnByMember.put(member, entry.getString("fabricNode"));
        } else if (memberLeaves.judge(member)) {
            fence(entry.getString("fabricNode"), "its member is not in the cluster");
        }
        if (previous != null && !previous.getString("fabricNode").equals(entry.getString("fabricNode"))) {
            cnByMember.remove(UUID.fromString(previous.getString("member")));
            fence(previous.getString("fabricNode"), "epoch " + entry.getLong("epoch") + " superseded it");
        }
    }

    /** The members this node's view has (a local read, no remote call), without {@code gone}. */
    private Set<UUID> liveMembers(final UUID gone) {
        final Set<UUID> live = new java.util.HashSet<>();
        for (final Member m : hazelcast.getCluster().getMembers()) {
            live.add(m.getUuid());
        }
        live.remove(gone);
        return live;
    }

    /** A coordinator's loop and its runtime (which is confined to that loop). */
    private record RecoveryLoop(Context context, io.scythe.txn.TxnRuntime runtime) {
    }

    /** A line on the node's log (standard error), with the wall-clock time: faults are read off these. */
    private void log(final String line) {
        System.err.println(java.time.Instant.now() + " scythe node " + config.node() + ": " + line);
    }

    /** Recoveries this CN ran: {@code {"cn", "ms", "ok", ...}} each. */
    public List<JsonObject> recoveries() {
        return recoveryDuty == null ? List.of() : recoveryDuty.recoveries();
    }

    private void fence(final String cnFabricNode, final String why) {
        if (!fencing.add(cnFabricNode)) {
            return;
        }
        vertx.runOnContext(v -> {
            final int revoked = nic.fence(cnFabricNode);
            // Reported fenced only once nothing it started can land any more.
            nic.fenceBarrier(cnFabricNode).onComplete(barrier -> {
                fenced.add(cnFabricNode);
                metrics.fenced();
                log("fenced " + cnFabricNode + " (" + why + "), "
                    + revoked + " queue pairs revoked" + (barrier.failed() ? "; barrier: " + barrier.cause() : ""));
            });
        });
    }

    /**
     * Why a process whose {@link LivenessTimer} ticked {@code sinceMs} ms after the previous tick lost a lease of
     * {@code leaseMs} ms ({@code null} while it holds it): it did not run for longer than the lease (it was paused), so
     * others may have fenced it meanwhile.
     */
    static String outlived(final long sinceMs, final long leaseMs) {
        return sinceMs > leaseMs ? "this process did not run for " + sinceMs + " ms (longer than the " + leaseMs
            + " ms lease)" : null;
    }

    /**
     * A CN keeps its lease while it is a member under its epoch and no node fenced it; one that finds this member gone
     * or its queue pairs revoked was judged dead by others: stop and rejoin anew. (Whether it ran, the other half of
     * the lease, is timed on the {@link LivenessTimer} thread: how late this check runs on its busy loop does not
     * count, it is only logged.)
     */
    private void renewLease() {
        final long now = System.nanoTime();
        final long loopLateMs = TimeUnit.NANOSECONDS.toMillis(now - lastCheckNs);
        lastCheckNs = now;
        if (leaseLost) {
            return;
        }
        if (loopLateMs >= LATE_LOG_MS) {
            log("lease check ran " + loopLateMs + " ms after the previous on its event loop (timed on the lease "
                + "thread, longest gap there " + (liveness == null ? 0 : liveness.maxGapMs()) + " ms)");
        }
        String why = null;
        if (!hazelcast.getLifecycleService().isRunning()) {
            why = "its Hazelcast member stopped";
        } else {
            final UUID self = hazelcast.getCluster().getLocalMember().getUuid();
            final Set<Member> members = hazelcast.getCluster().getMembers();
            if (members.stream().noneMatch(m -> m.getUuid().equals(self)) || members.size() == 1
                && config.memoryNodes().size() > 0) {
                why = "the cluster no longer lists it with the memory nodes";
            } else {
                final String fencer = fencedBy(nic);
                if (fencer != null) {
                    why = "node " + fencer + " fenced it (revoked its queue pairs): its commits cannot finish there";
                }
            }
        }
        if (why != null) {
            loseLease(why);
        }
    }

    /**
     * A node that revoked one of {@code nic}'s queue pairs ({@code null} if none): it judged this incarnation dead.
     * Its locks there can no longer be released by it, only by recovery, which runs once this member leaves.
     */
    static String fencedBy(final Nic nic) {
        for (final io.scythe.fabric.QueuePair qp : nic.queuePairs()) {
            if (qp.state() == io.scythe.fabric.QpState.REVOKED) {
                return qp.remoteNode();
            }
        }
        return null;
    }

    private void loseLease(final String why) {
        synchronized (this) { // the lease check and any coordinator loop may lose it at once: once only
            if (leaseLost) {
                return;
            }
            leaseLost = true;
        }
        if (leaseRenewer != null) {
            leaseRenewer.stop(); // the memory nodes then fence it within a lease and a grace, and it is recovered
        }
        if (recoveryDuty != null) {
            recoveryDuty.stop(); // fenced itself: its recoveries could only fail, and its claims pass on when it exits
        }
        final MemoryNodeRejoin rejoin = rejoins;
        if (rejoin != null) {
            rejoin.stop(); // a rejoin it drives: its driver gives the claim up, for another CN to take
        }
        if (failover != null) {
            failover.stopRetrying(); // a failed configuration apply is not retried for a node that stopped serving
        }
        log("lease of epoch " + epoch + " lost: " + why
            + "; stops serving and must rejoin with a new epoch");
        if (peers != null) {
            peers.close();
        }
        for (final MessageConsumer<Object> c : consumers) {
            c.unregister();
        }
        final List<Future<Void>> undeployed = new ArrayList<>();
        for (final String id : deployments) {
            undeployed.add(vertx.undeploy(id));
        }
        // Bounded: an undeploy that never completes (a loop stuck on a verb) must not keep the process, and with it
        // this member, in the cluster (its recovery claims pass on, and the memory nodes fence it, when it leaves).
        final java.util.concurrent.atomic.AtomicBoolean told = new java.util.concurrent.atomic.AtomicBoolean();
        final Runnable tell = () -> {
            if (told.compareAndSet(false, true)) {
                onLeaseLost.run();
            }
        };
        final long bound = vertx.setTimer(LEASE_LOST_UNDEPLOY_MS, t -> {
            if (!told.get()) {
                log("its coordinators did not undeploy within " + LEASE_LOST_UNDEPLOY_MS + " ms of losing the lease: "
                    + "stops without waiting for them");
            }
            tell.run();
        });
        Future.join(undeployed).onComplete(done -> {
            vertx.cancelTimer(bound);
            tell.run();
        });
    }

    /** How long a CN that lost its lease waits for its coordinators to undeploy before it stops anyway. */
    static final long LEASE_LOST_UNDEPLOY_MS = 5_000;

    // ------------------------------------------------------------------------------------------------ queries

    public NodeConfig config() {
        return config;
    }

    public NodeRole role() {
        return role;
    }

    public long epoch() {
        return epoch;
    }

    public String fabricNode() {
        return fabricNode;
    }

    public Vertx vertx() {
        return vertx;
    }

    public HazelcastInstance hazelcast() {
        return hazelcast;
    }

    public boolean ready() {
        return ready && !leaseLost;
    }

    public boolean leaseLost() {
        return leaseLost;
    }

    /** CN fabric identities this node fenced. */
    public Set<String> fenced() {
        return new TreeSet<>(fenced);
    }

    public List<Coordinator> coordinators() {
        return List.copyOf(coordinators);
    }

    /** A CN's messaging with the other CNs (register handlers, call peers, publish regions); {@code null} elsewhere. */
    public CnPeers peers() {
        return peers;
    }

    /** What this memory node serves (its protocol modules' services by type), or {@code null} on another role. */
    public io.scythe.txn.mn.MemoryNodeServices memoryNodeServices() {
        return memoryNodeServices;
    }

    /** This memory node's Takeout Lock service (Scythe's module), for its metrics; {@code null} on another role. */
    public TakeoutLockService lockService() {
        return memoryNodeServices == null ? null : memoryNodeServices.service(TakeoutLockService.class);
    }

    public NodeMetrics metrics() {
        return metrics;
    }

    /** The port the metrics and health server bound, or -1. */
    public int httpPort() {
        return metrics == null ? -1 : metrics.httpPort();
    }

    /**
     * Objects of {@code db} some protocol module's lock holds or queues on (its end-of-run probe): a racy scan, exact
     * only when no transaction runs (the chaos check at the end).
     */
    static long locksHeld(final LogDb db) {
        return lockScan(db)[0];
    }

    /**
     * {@code [objects locked or queued on, Takeout tickets outstanding (lower - upper summed), objects holding a write
     * left unsettled (ObjectProbe#unsettled: Lotus's INVISIBLE cells)]} of {@code db}, racy like {@link #locksHeld}.
     */
    static long[] lockScan(final LogDb db) {
        long held = 0;
        long tickets = 0;
        long unsettled = 0;
        for (final io.scythe.storage.Table t : db.tables()) {
            final org.agrona.concurrent.AtomicBuffer m = t.objectMemory();
            // The table's own slot size: header, value and the protocol's room (LogDb#objectRoom: RCC MVCC's inline
            // versions, Lotus's CVT and versions). Strided by header and value alone, the scan read those words as
            // lock words (chaos: rcc-mvcc "2438 objects still locked", lotus 1069, with none held).
            final int slot = t.objectSlotBytes();
            for (int at = 0; at + slot <= m.capacity(); at += slot) {
                if (io.scythe.txn.spi.ProtocolRegistry.anyLockHeld(t, at)) {
                    held++;
                }
                tickets += io.scythe.txn.scythe.TakeoutLockKind.queued(m, at);
                if (io.scythe.txn.spi.ProtocolRegistry.anyUnsettled(t, at)) {
                    unsettled++;
                }
            }
        }
        return new long[] {held, tickets, unsettled};
    }

    /** How many of the objects left locked {@code /health} describes ({@code locked}). */
    static final int LOCKED_SHOWN = 32;

    /**
     * The first {@code limit} objects of {@code db} some module's lock holds or queues on, each as {@code {table, key,
     * object (its header's offset), lower, upper, cas (hex, when set), holder}}: {@code holder} is the compute node
     * whose ticket {@code upper} serves as {@code ledger} (Scythe's, may be {@code null}) recorded it, absent when it
     * recorded none (an insert's ticket, or another module's lock). Racy like {@link #locksHeld}; a ledger changed
     * while it is read (it lives on the RPC loop) leaves that holder out rather than fail the health.
     */
    static io.vertx.core.json.JsonArray lockedObjects(final LogDb db, final io.scythe.txn.scythe.TicketLedger ledger,
                                                      final int limit) {
        final io.vertx.core.json.JsonArray locked = new io.vertx.core.json.JsonArray();
        for (final io.scythe.storage.Table t : db.tables()) {
            final org.agrona.concurrent.AtomicBuffer m = t.objectMemory();
            final int slot = t.objectSlotBytes();
            final Map<Integer, JsonObject> here = new java.util.LinkedHashMap<>();
            for (int at = 0; at + slot <= m.capacity() && locked.size() + here.size() < limit; at += slot) {
                if (!io.scythe.txn.spi.ProtocolRegistry.anyLockHeld(t, at)) {
                    continue;
                }
                final JsonObject o = new JsonObject().put("table", t.schema().name()).put("object", at)
                    .put("lower", m.getLongVolatile(at + io.scythe.storage.ObjectLayout.LOWER_OFFSET))
                    .put("upper", m.getLongVolatile(at + io.scythe.storage.ObjectLayout.UPPER_OFFSET));
                final long cas = m.getLongVolatile(at + io.scythe.storage.ObjectLayout.CAS_LOCK_OFFSET);
                if (cas != 0) {
                    o.put("cas", Long.toHexString(cas));
                }
                try {
                    final String holder = ledger == null ? null : ledger.holderOf(t, at);
                    if (holder != null) {
                        o.put("holder", holder);
                    }
                } catch (final RuntimeException racedWithTheLoop) {
                    o.put("holder", "?");
                }
                here.put(at, o);
            }
            if (!here.isEmpty()) {
                t.forEachKey((key, pointer) -> {
                    final JsonObject o = here.get(t.offsetOf(pointer));
                    if (o != null) {
                        o.put("key", key);
                    }
                });
                here.values().forEach(locked::add);
            }
        }
        return locked;
    }

    /** Health: ready, its epoch and lease, the cluster's size, what it fenced; on an MN its locks and tickets. */
    /**
     * A memory node's copies ({@code GET /copies}): {@code {"backups": k, "tables": {NAME: {objects, digest}}}} for
     * every table it holds, primaries under their own names and backups as {@code NAME.backupB}, digested
     * ({@code BackupTables#digest}) so a check can compare a partition's primary with its backups on other nodes.
     * Racy while transactions run; null on any other role.
     */
    public JsonObject copies() {
        if (memoryDb == null) {
            return null;
        }
        final JsonObject tables = new JsonObject();
        for (final io.scythe.storage.Table t : memoryDb.tables()) {
            final long[] d = io.scythe.storage.BackupTables.digest(t);
            tables.put(t.schema().name(), new JsonObject().put("objects", d[0]).put("digest", Long.toHexString(d[1])));
        }
        return new JsonObject().put("node", config.node()).put("backups", config.backups()).put("tables", tables);
    }

    @SuppressWarnings("unchecked")
    public JsonObject health() {
        final JsonObject h = new JsonObject().put("status", ready() ? "UP" : "DOWN").put("node", config.node())
            .put("role", role.label()).put("fabricNode", fabricNode).put("epoch", epoch)
            .put("fenced", new io.vertx.core.json.JsonArray(new ArrayList<>(fenced())))
            .put("recoveries", new io.vertx.core.json.JsonArray(recoveries()));
        if (peers != null) {
            h.put("peers", new JsonObject().put("known", new io.vertx.core.json.JsonArray(new ArrayList<>(
                new TreeSet<>(peerNodes.keySet())))).put("served", peers.served()));
        }
        if (role == NodeRole.CN) {
            h.put("lease", leaseLost ? "lost" : "held").put("slot", slot)
                .put("leaseMaxGapMs", liveness == null ? 0 : liveness.maxGapMs())
                .put("tsoHighWater", tsoGroups.stream().mapToLong(io.scythe.tso.TsoGroup::highWater).max().orElse(0))
                .put("tsoFailovers", tsoGroups.stream().mapToLong(io.scythe.tso.TsoGroup::failovers).sum());
            final Map<String, Object> moduleShared = peerShared;
            if (moduleShared != null && moduleShared.get(MODULE_HEALTH)
                instanceof java.util.function.Supplier<?> moduleHealth) {
                // What the protocol module holds on this node (Lotus: the locks in its lock table).
                h.put("module", new JsonObject((Map<String, Object>) moduleHealth.get()));
            }
            final io.scythe.txn.MemoryNodeConfiguration applied = catalog == null ? null : catalog.configuration();
            if (applied != null && failover != null) {
                // The memory-node configuration this CN serves with (MN failover: what scythe chaos --mn-faults
                // watches): its epoch, the memory nodes it removed, whether promoted partitions still settle.
                h.put("memoryNodes", new JsonObject().put("epoch", applied.epoch())
                    .put("removed", new io.vertx.core.json.JsonArray(failover.removed(applied)))
                    .put("rejoining", new io.vertx.core.json.JsonArray(applied.rejoining().stream().sorted()
                        .map(config.memoryNodes()::get).toList()))
                    .put("settling", catalog.settling()));
            }
        }
        if (tso != null) {
            h.put("tsoStartedAt", tso.startedAt()).put("tsoCounter", tso.peek())
                .put("tsoCheckpointFailures", tso.checkpointFailures());
        }
        if (tsoProxy != null) {
            h.put("tsoHighWater", tsoProxy.highWater()).put("tsoServed", tsoProxy.served());
        }
        if (hazelcast != null && hazelcast.getLifecycleService().isRunning()) {
            h.put("members", hazelcast.getCluster().getMembers().size());
        }
        if (rpcServer != null) { // the services a memory node serves (what scythe fuzz calls)
            h.put("rpcIds", new io.vertx.core.json.JsonArray(java.util.Arrays.stream(rpcServer.rpcIds()).boxed()
                .toList()));
        }
        if (memoryDb != null) {
            final long[] locks = lockScan(memoryDb);
            h.put("locksHeld", locks[0]).put("ticketsOutstanding", locks[1]).put("unsettled", locks[2]);
            if (locks[0] > 0) { // which, and whose (the chaos check names them)
                h.put("locked", lockedObjects(memoryDb, memoryNodeServices == null ? null
                    : memoryNodeServices.service(io.scythe.txn.scythe.TicketLedger.class), LOCKED_SHOWN));
            }
            // Undecided writes in the module's own state, not in object words (Aurogon's pending versions and held
            // replications; -1: a racy count that did not get through).
            h.put("moduleUnsettled", io.scythe.txn.spi.ProtocolRegistry.moduleOf(config.protocol())
                .unsettledState(memoryDb));
        }
        return h;
    }

    /** Leaves the cluster and releases the fabric (its shm files) and ports. Blocks; idempotent. */
    @Override
    public void close() throws Exception {
        ready = false;
        closing = true;
        if (liveness != null) {
            liveness.close();
        }
        if (leaseRenewer != null) {
            leaseRenewer.stop();
        }
        if (fabricLeaseThread != null) {
            fabricLeaseThread.close();
        }
        if (vertx != null && leaseTimer >= 0) {
            vertx.cancelTimer(leaseTimer);
        }
        if (shards != null) {
            shards.stop();
        }
        if (recoveryDuty != null) {
            recoveryDuty.close();
        }
        if (stallWatch != null) {
            stallWatch.close();
        }
        if (failover != null) {
            failover.stopRetrying();
        }
        if (metrics != null) {
            metrics.close();
        }
        if (peers != null) {
            try {
                peers.close().await(10, TimeUnit.SECONDS);
            } catch (final Exception closing) {
                log("closing peer messaging: " + closing);
            }
        }
        if (vertx != null) {
            for (final String id : deployments) {
                try {
                    vertx.undeploy(id).await(10, TimeUnit.SECONDS);
                } catch (final Exception alreadyGone) {
                    // undeployed when the lease was lost
                }
            }
            deployments.clear();
            if (rpcServer != null) {
                final RpcServer server = rpcServer;
                onLoop(BridgeVerticle.eventLoopContexts(vertx).get(0), server::stop);
                rpcServer = null;
            }
            if (tso != null) {
                tso.stop().await(10, TimeUnit.SECONDS);
                tso = null;
            }
        }
        if (fabric != null) {
            fabric.close();
            fabric = null;
        }
        if (vertx != null) {
            vertx.close().await(30, TimeUnit.SECONDS);
            vertx = null;
        }
    }
}
