package io.scythe.sim;

import io.scythe.fabric.ClockOptions;
import io.scythe.fabric.CostModel;
import io.vertx.core.json.JsonObject;

/**
 * What one simulated run is: the cluster's shape, the protocol, the clients, virtual durations, the seed, the CPU
 * model and the faults. Fluent setters; {@link #validate()} names the first bad value.
 */
public final class SimOptions {
    /** CPU time of one duty cycle of a CN loop (polling its queues and rings). */
    public static final long DEFAULT_CN_POLL_NS = 100;
    /** CPU time per unit of work a CN loop's duty cycle did (a completion, a reply, a timer: protocol code runs). */
    public static final long DEFAULT_CN_WORK_NS = 250;
    /** CPU time of one duty cycle of an MN's polling core. */
    public static final long DEFAULT_MN_POLL_NS = 100;
    /** CPU time an MN's core spends per RPC request (weak MN CPUs, Scythe §4.6 and Lotus §1). */
    public static final long DEFAULT_MN_REQUEST_NS = 300;

    private String protocol = "scythe";
    private int computeNodes = 1;
    private int loopsPerComputeNode = 4;
    private int clientsPerComputeNode = 8;
    private int memoryNodes = 2;
    private int maxAttempts = 1000;
    private io.scythe.txn.OnAbort onAbort = io.scythe.txn.OnAbort.RETRY;
    private long durationNs = 1_000_000;
    private long warmupNs = 0;
    private long drainNs = 50_000_000;
    private long drainMaxNs = -1;
    private long seed = 1;
    private CostModel costModel = CostModel.cx5();
    private long cnPollNs = DEFAULT_CN_POLL_NS;
    private long cnWorkNs = DEFAULT_CN_WORK_NS;
    private long mnPollNs = DEFAULT_MN_POLL_NS;
    private long mnRequestNs = DEFAULT_MN_REQUEST_NS;
    private Faults faults = new Faults();
    private int tsoProxies;
    private boolean tsoGroupPerComputeNode;
    private io.scythe.hotspot.Watermarks watermarks = io.scythe.hotspot.Watermarks.DEFAULT;
    private long queueSampleNs;
    private long reclaimEveryNs;
    private ClockOptions clocks = new ClockOptions();
    private int replicas;
    private boolean colocate;
    private io.scythe.storage.remote.RemoteTable.LookupMode lookup = io.scythe.storage.remote.RemoteTable.LookupMode.RPC;
    private boolean redoLog;
    private io.scythe.routing.RoutingMode routing = io.scythe.routing.RoutingMode.LOCAL;
    private int shards = io.scythe.routing.ShardMap.DEFAULT_SHARDS;
    private long moveShardEveryNs;
    private long timelineNs;
    /** Protocols whose runs with several crashed compute nodes were tested (lotus14's Fig. 15 runs). */
    static final java.util.List<String> SEVERAL_CRASHED = java.util.List.of("ford-occ", "lotus", "lotus-si", "motor");

    /**
     * Compute nodes crashing at different times ({@code --crash-at a,b}): each within the run, and no recoverer dying
     * after it was handed a recovery. The host's recovery of a dead CN is run by the first live CN by number when its
     * death is detected ({@link CrashRecovery}); a CN that crashes later than that may die in the middle of it, and
     * handing an unfinished recovery on (as the cluster's {@code RecoveryDuty} would, by a higher claim) is not
     * modelled, so such an order is refused naming the pair.
     */
    private void staggeredCrashes() {
        final int[] cns = faults.crashCns();
        for (int i = 0; i < cns.length; i++) {
            if (faults.crashAtNs(i) >= warmupNs + durationNs) {
                throw new IllegalArgumentException("crash-at " + faults.crashAtNs(i) + " ns for cn" + cns[i]
                    + " is past the run's end (warm-up + duration = " + (warmupNs + durationNs) + " ns)");
            }
        }
        if (!faults.recover()) {
            return;
        }
        for (int v = 0; v < cns.length; v++) {
            final long detectedNs = faults.crashAtNs(v) + faults.detectNs();
            int recoverer = -1;
            for (int c = 0; c < computeNodes && recoverer < 0; c++) {
                boolean deadBy = false;
                for (int i = 0; i < cns.length; i++) {
                    deadBy |= cns[i] == c && faults.crashAtNs(i) <= detectedNs;
                }
                recoverer = deadBy ? -1 : c;
            }
            for (int i = v + 1; i < cns.length; i++) {
                if (cns[i] == recoverer) {
                    throw new IllegalArgumentException("crash-at: cn" + recoverer + " recovers cn" + cns[v] + " (the "
                        + "first live CN by number when its death is detected, at " + detectedNs + " ns) and crashes "
                        + "itself at " + faults.crashAtNs(i) + " ns, maybe during that recovery: a recoverer's death "
                        + "is not modelled; crash it by then, or crash another CN");
                }
            }
        }
    }

    /** @throws IllegalArgumentException naming the first bad value */
    public SimOptions validate() {
        positive("cns", computeNodes);
        positive("loops", loopsPerComputeNode);
        positive("clients", clientsPerComputeNode);
        positive("mns", memoryNodes);
        positive("max-attempts", maxAttempts);
        positive("duration", durationNs);
        if (drainMaxNs >= 0 && drainMaxNs < drainNs) {
            throw new IllegalArgumentException("drain-max=" + drainMaxNs + " ns must not be below drain=" + drainNs
                + " ns");
        }
        if (warmupNs < 0 || drainNs < 0 || cnPollNs < 0 || cnWorkNs < 0 || mnPollNs < 0 || mnRequestNs < 0) {
            throw new IllegalArgumentException("warm-up, drain and CPU costs must not be negative");
        }
        if (computeNodes > 255 || (long) computeNodes * loopsPerComputeNode > 4096) {
            throw new IllegalArgumentException("cns=" + computeNodes + " x loops=" + loopsPerComputeNode
                + " exceeds the 4096 simulated CN loops (and 255 CNs) a run can have");
        }
        if (tsoProxies < 0 || tsoProxies > 16) {
            throw new IllegalArgumentException("tso-proxies=" + tsoProxies + " must be within [0, 16]");
        }
        if (reclaimEveryNs < 0) {
            throw new IllegalArgumentException("reclaimEveryNs=" + reclaimEveryNs + " must not be negative");
        }
        if (queueSampleNs < 0) {
            throw new IllegalArgumentException("queue sampling interval must not be negative");
        }
        positive("shards", shards);
        faults.validate(computeNodes, memoryNodes);
        if (faults.staggered()) {
            staggeredCrashes();
        }
        if (faults.crashCn() != Faults.NO_CRASH || faults.crashMn() != Faults.NO_CRASH) {
            // The module says what a dead node leaves that it does not recover (ProtocolModule#crashRefusal: a
            // sequencer's epochs, latch bits; #memoryNodeCrashRefusal): a crash would stall the run or lose writes
            // rather than test recovery. The module whose compute nodes message each other, else the protocol's own
            // (as NodeConfig finds it); refused here, before any fabric is made.
            final io.scythe.txn.Protocol run = io.scythe.txn.spi.ProtocolRegistry.protocol(protocol);
            final io.scythe.txn.spi.ProtocolModule peers = io.scythe.txn.spi.ProtocolRegistry.peerModuleOf(run);
            final io.scythe.txn.spi.ProtocolModule module = peers != null ? peers
                : io.scythe.txn.spi.ProtocolRegistry.moduleOf(protocol);
            String refusal = null;
            for (final int cn : faults.crashCns()) { // several crashing together: each as it would alone
                refusal = refusal != null || module == null ? refusal
                    : module.crashRefusal(run, cn, computeNodes, memoryNodes);
            }
            if (refusal != null) {
                throw new IllegalArgumentException("protocol " + protocol + ": crashing a compute node (--crash-cn, "
                    + "--crashes) is not modelled: " + refusal);
            }
            final io.scythe.txn.spi.ProtocolModule.OwnCrashRecovery own = module == null ? null
                : module.ownCrashRecovery(run);
            final boolean alone = own != null && !own.besideShared(); // it refuses the shared recovery
            if (alone && faults.crashCns().length > 1) {
                throw new IllegalArgumentException("protocol " + protocol + " resolves a dead compute node's "
                    + "transactions itself, through its backups, and that is built and explored for one crashed CN: "
                    + "give --crash-cn one node");
            }
            final String several = faults.crashCns().length < 2 || module == null ? null
                : module.severalCrashesRefusal(run, faults.crashCns(), computeNodes, memoryNodes);
            if (several != null && (!several.equals(io.scythe.txn.spi.ProtocolModule.SEVERAL_CRASHES_UNTESTED)
                || !SEVERAL_CRASHED.contains(protocol.toLowerCase(java.util.Locale.ROOT)))) {
                throw new IllegalArgumentException("protocol " + protocol + ": crashing compute nodes "
                    + java.util.Arrays.toString(faults.crashCns()) + " together is not modelled: "
                    + (several.equals(io.scythe.txn.spi.ProtocolModule.SEVERAL_CRASHES_UNTESTED)
                    ? "several crashed compute nodes are tested only with " + SEVERAL_CRASHED + " and rcc-calvin "
                    + "(issue 19), untested elsewhere" : several) + ": give --crash-cn one node");
            }
            if (alone && faults.recover()) {
                throw new IllegalArgumentException("protocol " + protocol + " resolves a dead compute node's "
                    + "transactions itself, through its backups: run its crash with --replicas "
                    + own.replicas() + " and without --crash-recover");
            }
            if (faults.restartAfterNs() >= 0) {
                final String restart = module == null ? "no protocol module restarts a compute node for it"
                    : module.restartRefusal(run);
                if (restart != null) {
                    throw new IllegalArgumentException("protocol " + protocol + ": " + restart);
                }
                if (faults.crashCns().length >= computeNodes) {
                    throw new IllegalArgumentException("crash-restart-after: every compute node crashes ("
                        + java.util.Arrays.toString(faults.crashCns()) + " of " + computeNodes + "), and a restarted "
                        + "CN waits for its old incarnation's recovery by a surviving one: leave one CN running");
                }
                if (!redoLog) {
                    throw new IllegalArgumentException("crash-restart-after: a restarted CN waits for its old "
                        + "incarnation's recovery from its redo records: give --redo-log");
                }
            }
            final String mnRefusal = faults.crashMn() == Faults.NO_CRASH ? null
                : module == null ? "no protocol module handles a memory-node crash for it"
                : module.memoryNodeCrashRefusal(run, faults.crashMn());
            if (mnRefusal != null) {
                throw new IllegalArgumentException("crash-mn with " + protocol + ": " + mnRefusal);
            }
            final String bothRefusal = faults.crashMn() == Faults.NO_CRASH || faults.crashCn() == Faults.NO_CRASH
                ? null : module.combinedCrashRefusal(run, replicas);
            if (bothRefusal != null) {
                throw new IllegalArgumentException("crash-mn with crash-cn under " + protocol + ": " + bothRefusal);
            }
        }
        if (faults.detectStaggerNs() > 0 && (faults.crashCns().length < 2 || !faults.recover())) {
            // It staggers the host recovery's detection of several crashed CNs; anywhere else it would do nothing.
            throw new IllegalArgumentException("crash-stagger staggers the detection of several crashed CNs by the "
                + "run's recovery: give several --crash-cn and --crash-recover (or --explore with --crashes)");
        }
        if (faults.recover() && !redoLog) {
            throw new IllegalArgumentException("crash-recover rolls the crashed CN's commits forward from its redo "
                + "log: give --redo-log");
        }
        if (timelineNs < 0) {
            throw new IllegalArgumentException("timeline=" + timelineNs + " ns must not be negative");
        }
        if (timelineNs > 0 && (warmupNs + durationNs) / timelineNs > 1_000_000) {
            throw new IllegalArgumentException("timeline=" + timelineNs + " ns makes more than 1,000,000 buckets of the "
                + "run's " + (warmupNs + durationNs) + " ns: give a longer bucket");
        }
        if (moveShardEveryNs < 0) {
            throw new IllegalArgumentException("move-shard-every must not be negative");
        }
        if (moveShardEveryNs > 0 && (routing == io.scythe.routing.RoutingMode.LOCAL || computeNodes < 2)) {
            throw new IllegalArgumentException("move-shard-every moves shards between compute nodes: it needs routing "
                + "shard, random or hybrid and at least 2 compute nodes");
        }
        if (routing != io.scythe.routing.RoutingMode.LOCAL) {
            if (computeNodes >= io.scythe.routing.ShardMap.MAX_COMPUTE_NODES) {
                throw new IllegalArgumentException("routing " + routing.label() + " maps shards to at most "
                    + (io.scythe.routing.ShardMap.MAX_COMPUTE_NODES - 1) + " compute nodes, not " + computeNodes);
            }
            // A routed client's transaction runs on another node's loop: who was in flight at a crash, and whose
            // node gave up, are not modelled for it yet.
            if (faults.crashCn() != Faults.NO_CRASH || faults.verbFailRate() > 0) {
                throw new IllegalArgumentException("routing " + routing.label() + " is not modelled with crash or verb "
                    + "faults yet: use routing local with --crash-cn or --verb-fail-rate");
            }
        }
        clocks.validate();
        io.scythe.storage.BackupTables.check(replicas, memoryNodes);
        if (colocate && computeNodes != memoryNodes) {
            throw new IllegalArgumentException("colocate puts compute node i and memory node i on server i: it needs "
                + "as many compute nodes as memory nodes, not cns=" + computeNodes + " and mns=" + memoryNodes);
        }
        if (colocate && (faults.crashCn() != Faults.NO_CRASH || faults.crashMn() != Faults.NO_CRASH)) {
            throw new IllegalArgumentException("colocate: a crashed server would take both its compute node and its "
                + "memory node, and the two crashes together are not modelled; crash a compute node or a memory node "
                + "without colocate");
        }
        if (faults.crashMn() != Faults.NO_CRASH) {
            if (faults.crashCns().length > 1) {
                throw new IllegalArgumentException("crash-mn with several crashed compute nodes is not modelled: "
                    + "crash one CN with it, or several without it");
            }
            if (replicas < 1) {
                throw new IllegalArgumentException("crash-mn: the crashed memory node's partition survives only in its "
                    + "backups: give --replicas 1 or more");
            }
            if (routing != io.scythe.routing.RoutingMode.LOCAL || faults.verbFailRate() > 0) {
                throw new IllegalArgumentException("crash-mn is modelled with routing local and no verb faults only");
            }
        }
        return this;
    }

    private static void positive(final String name, final long value) {
        if (value < 1) {
            throw new IllegalArgumentException(name + "=" + value + " must be at least 1");
        }
    }

    public JsonObject toJson() {
        final JsonObject json = toJsonSplit();
        if (timelineNs > 0) {
            json.put("timeline_ns", timelineNs); // absent when off: runs without it report as before
        }
        return colocate ? json.put("colocate", true) : json; // absent when off: split runs report as before
    }

    private JsonObject toJsonSplit() {
        return new JsonObject().put("protocol", protocol).put("cns", computeNodes)
            .put("loops_per_cn", loopsPerComputeNode).put("clients_per_cn", clientsPerComputeNode)
            .put("memory_nodes", memoryNodes).put("max_attempts", maxAttempts).put("on_abort", onAbort.label())
            .put("duration_virtual_ns", durationNs).put("warmup_virtual_ns", warmupNs).put("seed", seed)
            .put("cost_model", costModel.toJson())
            .put("cpu_ns", new JsonObject().put("cn_poll", cnPollNs).put("cn_work", cnWorkNs)
                .put("mn_poll", mnPollNs).put("mn_request", mnRequestNs))
            .put("faults", faults.toJson()).put("tso_proxies", tsoProxies)
            .put("tso_group", tsoGroupPerComputeNode ? "cn" : "loop")
            .put("watermarks", new JsonObject().put("cold", watermarks.cold()).put("hot", watermarks.hot()))
            .put("clocks", clocks.toJson()).put("routing", routing.label()).put("shards", shards)
            .put("move_shard_every_ns", moveShardEveryNs).put("replicas", replicas)
            .put("lookup", lookup.label()).put("redo_log", redoLog);
    }

    public String protocol() {
        return protocol;
    }

    public SimOptions protocol(final String protocol) {
        this.protocol = protocol;
        return this;
    }

    public int computeNodes() {
        return computeNodes;
    }

    public SimOptions computeNodes(final int computeNodes) {
        this.computeNodes = computeNodes;
        return this;
    }

    public int loopsPerComputeNode() {
        return loopsPerComputeNode;
    }

    public SimOptions loopsPerComputeNode(final int loops) {
        this.loopsPerComputeNode = loops;
        return this;
    }

    public int clientsPerComputeNode() {
        return clientsPerComputeNode;
    }

    public SimOptions clientsPerComputeNode(final int clients) {
        this.clientsPerComputeNode = clients;
        return this;
    }

    public int memoryNodes() {
        return memoryNodes;
    }

    public SimOptions memoryNodes(final int memoryNodes) {
        this.memoryNodes = memoryNodes;
        return this;
    }

    public int maxAttempts() {
        return maxAttempts;
    }

    public SimOptions maxAttempts(final int maxAttempts) {
        this.maxAttempts = maxAttempts;
        return this;
    }

    /**
     * What a client does when its transaction's attempt aborts, the same for every protocol: retry it until it commits
     * (default; latency from the first attempt to the commit) or draw a new one (one attempt; latency per attempt).
     */
    public io.scythe.txn.OnAbort onAbort() {
        return onAbort;
    }

    public SimOptions onAbort(final io.scythe.txn.OnAbort onAbort) {
        this.onAbort = java.util.Objects.requireNonNull(onAbort, "onAbort");
        return this;
    }

    public long durationNs() {
        return durationNs;
    }

    public SimOptions durationNs(final long durationNs) {
        this.durationNs = durationNs;
        return this;
    }

    public long warmupNs() {
        return warmupNs;
    }

    public SimOptions warmupNs(final long warmupNs) {
        this.warmupNs = warmupNs;
        return this;
    }

    /** Longest virtual time after the end for in-flight transactions to finish before the invariants are checked. */
    public long drainNs() {
        return drainNs;
    }

    public SimOptions drainNs(final long drainNs) {
        this.drainNs = drainNs;
        return this;
    }

    /** Default of {@link #drainMaxNs()} (or the drain, when longer): 20 drains of 50 ms. */
    public static final long DEFAULT_DRAIN_MAX_NS = 1_000_000_000L;

    /**
     * Longest virtual time after the end a run whose clients are still busy after {@link #drainNs()} keeps draining
     * (until every client of a serving node finished); a run still busy then is reported not quiescent, on its own,
     * not as the invariants its transactions in flight would seem to break. A run quiescent within the drain is
     * untouched by it.
     */
    public long drainMaxNs() {
        return drainMaxNs >= 0 ? drainMaxNs : Math.max(DEFAULT_DRAIN_MAX_NS, drainNs);
    }

    public SimOptions drainMaxNs(final long drainMaxNs) {
        this.drainMaxNs = drainMaxNs;
        return this;
    }

    public long seed() {
        return seed;
    }

    public SimOptions seed(final long seed) {
        this.seed = seed;
        return this;
    }

    public CostModel costModel() {
        return costModel;
    }

    public SimOptions costModel(final CostModel costModel) {
        this.costModel = costModel;
        return this;
    }

    public long cnPollNs() {
        return cnPollNs;
    }

    public long cnWorkNs() {
        return cnWorkNs;
    }

    public long mnPollNs() {
        return mnPollNs;
    }

    public long mnRequestNs() {
        return mnRequestNs;
    }

    public SimOptions cpu(final long cnPollNs, final long cnWorkNs, final long mnPollNs, final long mnRequestNs) {
        this.cnPollNs = cnPollNs;
        this.cnWorkNs = cnWorkNs;
        this.mnPollNs = mnPollNs;
        this.mnRequestNs = mnRequestNs;
        return this;
    }

    /** Scythe's heat watermarks: OCC to TOCC above cold; Lock requests refused above hot (§4.2). */
    public io.scythe.hotspot.Watermarks watermarks() {
        return watermarks;
    }

    public SimOptions watermarks(final io.scythe.hotspot.Watermarks watermarks) {
        this.watermarks = watermarks;
        return this;
    }

    /** TSO proxies between the CNs' TSO groups and the TSO service (0: groups FAA the counter directly). */
    public int tsoProxies() {
        return tsoProxies;
    }

    public SimOptions tsoProxies(final int tsoProxies) {
        this.tsoProxies = tsoProxies;
        return this;
    }

    /** One TSO group per compute node across its loops (§4.5 (2)) rather than one per loop. */
    public boolean tsoGroupPerComputeNode() {
        return tsoGroupPerComputeNode;
    }

    public SimOptions tsoGroupPerComputeNode(final boolean perComputeNode) {
        this.tsoGroupPerComputeNode = perComputeNode;
        return this;
    }

    /** Every this many virtual ns, the Takeout Lock queue of every object is sampled (0: never; Table 2). */
    public long queueSampleNs() {
        return queueSampleNs;
    }

    /**
     * How often each memory node reclaims what it may (0: never, the default): deleted objects nobody holds or waits
     * on (abandoned inserts), as the eviction verticle does, so that stale cached pointers and keys created again
     * after their object was freed are explored.
     */
    public long reclaimEveryNs() {
        return reclaimEveryNs;
    }

    public SimOptions reclaimEveryNs(final long reclaimEveryNs) {
        this.reclaimEveryNs = reclaimEveryNs;
        return this;
    }

    public SimOptions queueSampleNs(final long queueSampleNs) {
        this.queueSampleNs = queueSampleNs;
        return this;
    }

    /**
     * Every simulated node's host and NIC clock: offsets and drift from virtual time (default: none). Nodes are
     * {@code mn0..}, {@code tso}, {@code tsoproxy0..} and {@code cn0..}.
     */
    public ClockOptions clocks() {
        return clocks;
    }

    public SimOptions clocks(final ClockOptions clocks) {
        this.clocks = clocks;
        return this;
    }

    /**
     * Where clients send their transactions: {@code local} (the default, as every run before routing did: to their
     * own compute node's loop), or routed (by shard, at random, hybrid) to any node's loop of the same index.
     */
    public io.scythe.routing.RoutingMode routing() {
        return routing;
    }

    public SimOptions routing(final io.scythe.routing.RoutingMode routing) {
        this.routing = routing;
        return this;
    }

    /** Shards of the shard map routed runs use (routing key mod shards, round-robin over cn0..). */
    public int shards() {
        return shards;
    }

    public SimOptions shards(final int shards) {
        this.shards = shards;
        return this;
    }

    /**
     * In routed runs, moves one shard (drawn from the seed) to another compute node every this many virtual ns (0, the
     * default: never), so routers meet wrong-owner refusals and send again on the newer map.
     */
    public long moveShardEveryNs() {
        return moveShardEveryNs;
    }

    public SimOptions moveShardEveryNs(final long ns) {
        this.moveShardEveryNs = ns;
        return this;
    }

    /**
     * Bucket of the throughput timeline ({@link Timeline}: commits per bucket of virtual time, with a crash its dip
     * and time back); 0, the default: none.
     */
    public long timelineNs() {
        return timelineNs;
    }

    public SimOptions timelineNs(final long ns) {
        this.timelineNs = ns;
        return this;
    }

    public Faults faults() {
        return faults;
    }

    public SimOptions faults(final Faults faults) {
        this.faults = faults;
        return this;
    }

    /**
     * Backup copies of every partition (0: none, the default, as in the papers' configurations without
     * replication): each write-back, and each redo record with {@link #redoLog}, goes to the primary and k backups.
     * Must be below the number of memory nodes.
     */
    /**
     * Whether each server is both a compute node and a memory node, as Aurogon's symmetric servers (FAST'22 §3):
     * compute node i and memory node i share server i's clocks, and requests between them take a local path
     * ({@code FabricOptions#colocate}) instead of the network; memory node i's RPCs are served by one participant
     * queue per loop of the server, each with a modelled core of its own at {@code mnRequestNs} a request, a ring
     * opened by a coordinator's loop j belonging to queue j mod loops ({@code QueueCores}: the paper's threads each
     * poll their own queue, so uneven queues reorder requests); the coordinators' loops are not charged for that work
     * (an approximation: in the paper the threads share cores).
     */
    public boolean colocate() {
        return colocate;
    }

    public SimOptions colocate(final boolean colocate) {
        this.colocate = colocate;
        return this;
    }

    public int replicas() {
        return replicas;
    }

    public SimOptions replicas(final int replicas) {
        this.replicas = replicas;
        return this;
    }

    /** How a lookup that misses a loop's address cache reaches the index: LOOKUP RPC (default) or one-sided READs. */
    public io.scythe.storage.remote.RemoteTable.LookupMode lookup() {
        return lookup;
    }

    public SimOptions lookup(final io.scythe.storage.remote.RemoteTable.LookupMode lookup) {
        this.lookup = java.util.Objects.requireNonNull(lookup, "lookup");
        return this;
    }

    /**
     * Whether commits write redo records (off by default: the simulator recovers no compute node). On, memory nodes
     * serve log regions and every commit with writes appends its record before its write-back, as on a cluster.
     */
    public boolean redoLog() {
        return redoLog;
    }

    public SimOptions redoLog(final boolean redoLog) {
        this.redoLog = redoLog;
        return this;
    }
}
