package io.scythe.cli;

import io.scythe.bench.history.HistoryCollector;
import io.scythe.bench.history.HistoryWriter;
import io.scythe.bench.history.SerializabilityChecker;
import io.scythe.bench.report.BenchReport;
import io.scythe.bench.workload.OltpSpec;
import io.scythe.bench.workload.SmallBankSpec;
import io.scythe.bench.workload.YcsbSpec;
import io.scythe.fabric.ClockOptions;
import io.scythe.fabric.CostModel;
import io.scythe.sim.Explorer;
import io.scythe.sim.Faults;
import io.scythe.sim.CasSim;
import io.scythe.sim.TsoSim;
import io.scythe.sim.LockSim;
import io.scythe.sim.SimOptions;
import io.scythe.sim.SimResult;
import io.scythe.sim.SimVertx;
import io.scythe.sim.Simulation;
import io.scythe.storage.ObjectLayout;
import io.scythe.storage.remote.RemoteTable;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.Callable;

/** {@code scythe sim}: the deterministic simulator: a cluster of any size in virtual time, or the seed explorer. */
@Command(name = "sim", mixinStandardHelpOptions = true,
    description = {"Runs a workload on a simulated cluster in virtual time: the same protocol, storage, RRPC and TSO "
        + "code as 'scythe bench', on the local fabric's cost model, scheduled by one seeded single-threaded "
        + "scheduler. Same options and seed, same run, bit for bit. Prints a table, writes DIR/results.json "
        + "(the bench schema plus a 'sim' object) with --out DIR.",
        "With --explore N: runs N seeds of a small contended --workload (smallbank, phantom, churn, tpcc, all "
            + "four, or blink) under each of --protocols with every invariant on and each run's history checked for "
            + "serializability (blink: transactions through the B-link tree, checked by a serial replay), and prints each failing seed with the command that replays it."})
public final class SimCommand implements Callable<Integer> {
    @Accepts(names = OptionChecks.SimWorkloads.class)
    @Option(names = "--workload", defaultValue = "smallbank", description = "smallbank, ycsb, tatp (TatpSpec, --subscribers, --mix), tpcc, phantom, churn (KeyChurnSpec: inserts, deletes, absent keys), lock (Fig. 27: "
        + "--protocols takeout,cas-lock; clients lock one of --locks objects by Zipf and hold it --hold) or cas "
        + "(Table 1: each client CASes one of --locks words of MN 0 after another; --thetas 0 is uniform), blink "
        + "(SELCC Fig. 17: YCSB lookups and updates, --write-ratio of them updates, through a B-link tree of --records "
        + "keys on GCLs of --line-bytes; --protocols selcc-2pl,sel-2pl pick SELCC or SEL), gcl (SELCC Figs. 12-15, "
        + "GAM's micro-benchmark: reads and writes of --records GCLs of --line-bytes by address, --write-ratio of "
        + "them writes, --sharing-ratio, --theta, --locality; selcc-2pl or sel-2pl) or tso "
        + "(Fig. 28: each client takes one timestamp after another; --protocols tso,physical-clock) (default: "
        + "${DEFAULT-VALUE}).")
    String workload;

    @Accepts(value = "registered protocols, or the lock workload's takeout and cas-lock (checked by the workload)")
    @Option(names = "--protocols", split = ",", defaultValue = "scythe,ford-occ,farm-occ",
        completionCandidates = RegisteredProtocols.class,
        description = "Protocols, one run each on identical data (default: ${DEFAULT-VALUE}; registered: "
            + "${COMPLETION-CANDIDATES}). scythe is Scythe with shared reader tickets; scythe:exclusive, the paper's "
            + "exclusive tickets, compares against it.")
    List<String> protocols;

    @Accepts(min = "1", max = "64")
    @Option(names = "--cns", defaultValue = "1", description = "Compute nodes (default: ${DEFAULT-VALUE}).")
    int cns;

    @Accepts(names = OptionChecks.Routings.class)
    @Option(names = "--routing", defaultValue = "local",
        description = "Where clients send their transactions: local (each client's own compute node, as before "
            + "routing existed), shard (the owner of the routing key's shard: SmallBank's account, TPC-C's home "
            + "warehouse, TATP's subscriber, YCSB's first key), random, or hybrid (Lotus: read-only ones at random, "
            + "read-write ones by shard); routed ones go to the same loop index of the chosen node (default: "
            + "${DEFAULT-VALUE}).")
    String routing;

    @Accepts(min = "1", max = "1048576")
    @Option(names = "--shards", defaultValue = "" + io.scythe.routing.ShardMap.DEFAULT_SHARDS,
        description = "Shards of the shard map routed runs use: routing key mod shards, round-robin over the "
            + "compute nodes (default: ${DEFAULT-VALUE}).")
    int shards;

    @Accepts(min = "0s")
    @Option(names = "--move-shard-every", defaultValue = "0s",
        description = "With --routing other than local, moves a random shard to another compute node this often "
            + "(virtual time; 0: never), so routers meet wrong-owner refusals and send again (default: "
            + "${DEFAULT-VALUE}).")
    Duration moveShardEvery;

    @Accepts(min = "1", max = "100000")
    @Option(names = "--clients", split = ",", defaultValue = "8",
        description = "Closed-loop clients per compute node; a list sweeps (default: ${DEFAULT-VALUE}).")
    List<Integer> clients;

    @Accepts(min = "1", max = "64")
    @Option(names = "--loops", defaultValue = "4",
        description = "Event loops (cores) per compute node; clients are spread over them (default: "
            + "${DEFAULT-VALUE}).")
    int loops;

    @Accepts(min = "1", max = "64")
    @Option(names = {"--mns", "--memory-nodes"}, defaultValue = "2",
        description = "Memory nodes (default: ${DEFAULT-VALUE}).")
    int memoryNodes;

    @Accepts(value = "any integer")
    @Option(names = "--seed", defaultValue = "1", description = "Seed of everything random (default: "
        + "${DEFAULT-VALUE}).")
    long seed;

    @Accepts(min = "1us")
    @Option(names = "--duration", defaultValue = "2ms",
        description = "Measured virtual time of each run (default: ${DEFAULT-VALUE}).")
    Duration duration;

    @Accepts(min = "0s")
    @Option(names = "--warmup", defaultValue = "0s",
        description = "Virtual time before measuring (default: ${DEFAULT-VALUE}).")
    Duration warmup;

    @Accepts(min = "0s")
    @Option(names = "--drain", defaultValue = "50ms", description = "Virtual time after the end for transactions in "
        + "flight to finish before the end checks (default: ${DEFAULT-VALUE}).")
    Duration drain;

    @Accepts(min = "0s")
    @Option(names = "--drain-max", defaultValue = "1s", description = "Longest virtual time after the end a run still "
        + "busy after --drain keeps draining until every client finished; still busy then, it is reported not "
        + "quiescent (at least --drain; default: ${DEFAULT-VALUE}).")
    Duration drainMax;

    @Accepts(names = OptionChecks.Profiles.class)
    @Option(names = "--profile", defaultValue = "cx5", description = "Cost-model profile: "
        + io.scythe.fabric.CostModel.PROFILE_NAMES + " (default: "
        + "${DEFAULT-VALUE}).")
    String profile;

    @Accepts(exists = true)
    @Option(names = "--fabric-config", paramLabel = "FILE",
        description = "Cost model from a YAML/JSON file (see conf/fabric/); overrides --profile.")
    Path fabricConfig;

    @Accepts(min = "1")
    @Option(names = "--max-attempts", defaultValue = "1000",
        description = "Attempts per transaction before the coordinator gives up, with --on-abort retry or scythe (default: "
            + "${DEFAULT-VALUE}).")
    int maxAttempts;

    @Accepts(names = OptionChecks.OnAborts.class)
    @Option(names = "--on-abort", defaultValue = "retry", paramLabel = "retry|new|scythe",
        description = OptionChecks.ON_ABORT_HELP)
    String onAbort;

    @Accepts(min = "2")
    @Option(names = "--accounts", defaultValue = "100000", description = "SmallBank customers (default: "
        + "${DEFAULT-VALUE}).")
    long accounts;

    @Accepts(min = "0", max = "10")
    @Option(names = "--theta", defaultValue = "0.99", description = "Zipf factor over keys (default: "
        + "${DEFAULT-VALUE}).")
    double theta;

    @Accepts(value = "a SmallBank mix (checked by the workload)")
    @Option(names = "--mix", defaultValue = "standard", description = "SmallBank mix: standard, scythe or deposits; "
        + "TATP mix: standard (7 types) or read-update (default: ${DEFAULT-VALUE}).")
    String mix;

    @Accepts(min = "0", max = "10")
    @Option(names = "--thetas", split = ",", description = "Zipf factors to sweep (default: --theta alone).")
    List<Double> thetas;

    @Accepts(min = "1")
    @Option(names = "--locks", defaultValue = "1000", description = "[lock, cas] Lock objects / CAS words "
        + "(default: ${DEFAULT-VALUE}).")
    int locks;

    @Accepts(names = OptionChecks.CasVerbs.class)
    @Option(names = "--verb", defaultValue = "cas", description = "[cas] The verb each client issues: cas (Scythe "
        + "Table 1) or write (8 B RDMA WRITE; with many clients, Lotus' perftest WRITE rate) (default: "
        + "${DEFAULT-VALUE}).")
    String verb;

    @Accepts(min = "0s")
    @Option(names = "--hold", defaultValue = "25us", description = "[lock] How long a lock is held (default: "
        + "${DEFAULT-VALUE}).")
    Duration hold;

    @Accepts(min = "1")
    @Option(names = "--records", defaultValue = "100000", description = "YCSB records (the gcl workload: its lines) "
        + "(default: ${DEFAULT-VALUE}).")
    long records;

    @picocli.CommandLine.Mixin
    GclOptions gcl = new GclOptions();

    @Accepts(min = "1")
    @Option(names = "--subscribers", defaultValue = "100000",
        description = "[tatp] TATP subscribers (default: ${DEFAULT-VALUE}, FORD's; Lotus's is 3M).")
    long subscribers;

    @Accepts(min = "64")
    @Option(names = "--line-bytes", defaultValue = "2048", description = "[blink] Bytes of a global cache line (a "
        + "B-link node), header included (default: the paper's ${DEFAULT-VALUE}).")
    int lineBytes;

    @Accepts(min = "0")
    @Option(names = "--blink-txn", defaultValue = "0", paramLabel = "N", description = "[blink] Transactions through "
        + "the tree (issue 21; selcc-2pl, sel-2pl: 2PL on the leaves; selcc-occ: OCC; selcc-to: TO, timestamps per "
        + "leaf): each takes N keys over [0, 2 records) in ascending order, a lookup each with probability "
        + "1 - --write-ratio, else an insert, delete or update; one writer in ten aborts itself; OCC and TO retry a "
        + "refused attempt; checked by a serial replay in commit order, TO's in timestamp order (with --crash-cn, the dead CN's "
        + "commits in doubt each all or nothing). With --explore: N keys a transaction (4 if not given). "
        + "0: index operations, as Fig. 17 (default: ${DEFAULT-VALUE}).")
    int blinkTxn;

    @Option(names = "--blink-single", description = "[blink] Single index operations (no transaction; a lookup with "
        + "probability 1 - --write-ratio, else an insert, delete or update) each noted as a one-operation commit at "
        + "its linearization point (its leaf latched) and checked by the same serial replay as --blink-txn (issue 21); "
        + "with --explore --crashes a dead CN's operation noted but not answered is in doubt.")
    boolean blinkSingle;

    @Accepts(min = "1")
    @Option(names = "--warehouses", defaultValue = "10", description = "[tpcc] Warehouses (default: "
        + "${DEFAULT-VALUE}).")
    int warehouses;

    @Accepts(min = "1")
    @Option(names = "--customers", defaultValue = "3000", description = "[tpcc] Customers per district (default: "
        + "the standard's ${DEFAULT-VALUE}).")
    int customers;

    @Accepts(min = "1")
    @Option(names = "--items", defaultValue = "100000", description = "[tpcc] Items (default: the standard's "
        + "${DEFAULT-VALUE}).")
    int items;

    @Accepts(names = OptionChecks.TpccMixes.class)
    @Option(names = "--tpcc-mix", defaultValue = "standard", description = "[tpcc] standard (45/43/4/4/4), n "
        + "(Aurogon's TPC-C/N: NewOrder alone), np (TPC-C/NP: NewOrder and Payment, 45:43), ro (SELCC Fig. 19a's "
        + "read-only: OrderStatus and StockLevel, 4:4) or rw (its updates: NewOrder, Payment, Delivery, 45:43:4) (default: "
        + "${DEFAULT-VALUE}).")
    String tpccMix;

    @Accepts(min = "0", max = "1")
    @Option(names = "--local-item-ratio", defaultValue = "0.99", description = "[tpcc] Share of order lines supplied "
        + "by the home warehouse (default: the standard's ${DEFAULT-VALUE}).")
    double localItemRatio;

    @Accepts(names = OptionChecks.TpccHomes.class)
    @Option(names = "--tpcc-home", defaultValue = "random", description = "[tpcc] A transaction's home warehouse: "
        + "random, server (1 + CN mod --warehouses: Aurogon's high contention with --warehouses = --cns) or loop "
        + "(1 + global loop mod --warehouses: its medium contention with --warehouses = --cns x --loops and one "
        + "client per loop, --clients = --loops: the paper's thread runs one transaction at a time, so no two "
        + "transactions share a home warehouse) (default: ${DEFAULT-VALUE}).")
    String tpccHome;

    @Accepts(min = "1")
    @Option(names = "--keys", defaultValue = "4", description = "[phantom, churn] Groups (phantom) or counters (churn) "
        + "that transactions meet on (default: ${DEFAULT-VALUE}).")
    int keys;

    @Accepts(min = "1", max = "10000")
    @Option(names = "--ops", defaultValue = "4", description = "Keys per YCSB transaction (default: "
        + "${DEFAULT-VALUE}).")
    int ops;

    @Accepts(min = "0", max = "1")
    @Option(names = {"--write-ratio", "--rmw-ratio"}, defaultValue = "0.7", description = "Share of YCSB keys "
        + "written, each a read-modify-write (Aurogon's RMW_ratio) (default: ${DEFAULT-VALUE}).")
    double writeRatio;

    @Accepts(min = "0")
    @Option(names = "--cn-work-ns", defaultValue = "" + SimOptions.DEFAULT_CN_WORK_NS,
        description = "Modelled CN CPU time per completion or reply handled (default: ${DEFAULT-VALUE}).")
    long cnWorkNs;

    @Accepts(min = "0")
    @Option(names = "--mn-rpc-ns", defaultValue = "" + SimOptions.DEFAULT_MN_REQUEST_NS,
        description = "Modelled MN CPU time per RPC request (default: ${DEFAULT-VALUE}).")
    long mnRpcNs;

    @Accepts(min = "0s")
    @Option(names = "--reclaim-every", defaultValue = "0us",
        description = "Each memory node reclaims deleted objects nobody holds (abandoned inserts) this often, as the "
            + "eviction verticle does; 0 never (default: ${DEFAULT-VALUE}; the explorer: 10us).")
    Duration reclaimEvery;

    @Accepts(min = "0s")
    @Option(names = "--jitter", defaultValue = "0us",
        description = "Fault: extra one-way delay per doorbell batch, uniform below this; reorders verbs across "
            + "queue pairs, never within one (default: ${DEFAULT-VALUE}).")
    Duration jitter;

    @Accepts(min = "-1", max = "63")
    @Option(names = "--crash-cn", split = ",", defaultValue = "-1", paramLabel = "CN[,CN...]",
        description = "Fault: this compute node (0-based) crashes at --crash-at; its state vanishes. A list crashes "
            + "them all at that same virtual time (Lotus Fig. 15: 0,1,2), each recovered as one is; at least one "
            + "CN survives. Without --crash-recover the run reports what it left (locks held, the conserved "
            + "quantity). With --explore --crashes: the node (or nodes, together) every seed crashes (at a time "
            + "drawn from the seed; default: one node, drawn too).")
    List<Integer> crashCns;

    /** The one CN --crash-cn names (-1: none); several are refused where only one is modelled. */
    private int crashCn() {
        if (crashCns.size() != 1) {
            throw new IllegalArgumentException("--explore --crashes crashes one CN a seed: give --crash-cn one node, "
                + "not " + crashCns);
        }
        return crashCns.get(0);
    }

    @Accepts(min = "0s")
    @Option(names = "--timeline", defaultValue = "0s",
        description = "Throughput timeline: commits per bucket of this much virtual time, from the start to the end "
            + "(results.json sim.timeline); with --crash-cn also the dip (lowest bucket from the crash on against "
            + "the mean before it) and the time from the crash back to 90 %% of that mean (0: none, the default).")
    Duration timeline;

    @Accepts(min = "0s")
    @Option(names = "--crash-at", split = ",", defaultValue = "0us", paramLabel = "T[,T...]",
        description = "Virtual time of the crash; or one time per --crash-cn, in its order, each later than the one "
            + "before: the later CNs die while the earlier ones' deaths are detected, recovered or taken over (a CN "
            + "that would be recovering an earlier one then is refused). With --explore --crashes the first is drawn "
            + "from the seed and the others keep their distance from it.")
    List<Duration> crashAt;

    /** The one --crash-at time (several are refused where they mean nothing). */
    private Duration crashAtOne(final String where) {
        if (crashAt.size() != 1) {
            throw new IllegalArgumentException("--crash-at takes one time " + where + ", not " + crashAt);
        }
        return crashAt.get(0);
    }

    /** Whether --explore --crashes crashes several CNs at one --crash-at time each (their distances kept). */
    private boolean staggeredCrashes() {
        return crashes && crashCns.size() > 1 && crashAt.size() > 1;
    }

    /** The --crash-at times in ns: one for all of --crash-cn, or one per CN (their counts checked by Faults). */
    private long[] crashAtsNs() {
        return crashAt.stream().mapToLong(Duration::toNanos).toArray();
    }

    @Accepts(min = "-1", max = "63")
    @Option(names = "--crash-mn", defaultValue = "-1",
        description = "Fault: this memory node (0-based) crashes at --crash-at with its memory and its services' "
            + "state; --crash-detect later the configuration removes it and promotes a backup of its partition "
            + "(needs --replicas 1+, not with --crash-cn or --colocate; protocols: aurogon's). With --explore: the "
            + "memory node each seed crashes, at a time drawn from the seed (with --crashes, the CN crash's time).")
    int crashMn;

    @Option(names = "--crash-recover", description = "With --crash-cn: the crash is detected 20us later and the "
        + "first live CN recovers the crashed one with the cluster's recovery code (fence, log scan, roll-forward, "
        + "release), then the run checks nothing was lost, applied twice or left held (needs --redo-log, --cns 2+).")
    boolean crashRecover;

    @Accepts(min = "0s")
    @Option(names = "--crash-restart-after", description = "With --crash-cn: each crashed CN is restarted this much "
        + "virtual time after its crash, a new incarnation (empty lock table, fresh caches) that serves only once its "
        + "old incarnation's recovery is over; its clients resume on it (lotus, lotus-si, rcc-calvin; "
        + "needs --redo-log; with --explore, --crashes: each seed's crashed CN; default: never).")
    Duration crashRestartAfter;

    @Accepts(min = "0s")
    @Option(names = "--crash-detect", defaultValue = "20us", description = "With --crash-recover (or --crashes): "
        + "virtual time from the crash to its detection, when recovery starts; 0us races the crashed CN's verbs "
        + "still in flight, which the memory nodes' fences must stop (default: ${DEFAULT-VALUE}).")
    Duration crashDetect;

    @Accepts(min = "0s")
    @Option(names = "--crash-stagger", defaultValue = "0us", description = "With several --crash-cn and "
        + "--crash-recover (or --crashes): each CN after the first named is detected this much later than the one "
        + "before it; the crashes stay simultaneous, only their news is staggered (each death is told when its "
        + "recovery ends, so in practice about the other's recovery length apart) (default: ${DEFAULT-VALUE}: "
        + "together).")
    Duration crashStagger;

    @Option(names = "--crashes", description = "With --explore: each seed runs 2 CNs (3 clients each) with redo logs, "
        + "crashes one at a seeded virtual time and recovers it (--crash-recover), every check on.")
    boolean crashes;

    @Accepts(min = "0.001", max = "1000000")
    @Option(names = "--mn-slow", defaultValue = "1",
        description = "Fault: memory nodes' CPU time per RPC is multiplied by this from --mn-slow-from to "
            + "--mn-slow-to (default: ${DEFAULT-VALUE}).")
    double mnSlow;

    @Accepts(min = "0s")
    @Option(names = "--mn-slow-from", defaultValue = "0us", description = "Start of the MN slowness.")
    Duration mnSlowFrom;

    @Accepts(min = "0s")
    @Option(names = "--mn-slow-to", description = "End of the MN slowness (default: the end of the run).")
    Duration mnSlowTo;

    @Accepts(value = "nodes cnI and mnI of the run (checked by the run's topology)")
    @Option(names = "--partition", split = ",", paramLabel = "NODES",
        description = "Fault: a network partition cuts these nodes (cnI, mnI, comma-separated) off from every other "
            + "from --partition-at for --partition-for, then heals: what either side posts to the other in the "
            + "window is held until the heal (RC's retries deliver it then; no queue pair breaks), RRPC calls get a "
            + "4 ms bound. With --explore: the window's start is drawn from each seed unless --partition-at gives it.")
    List<String> partition;

    @Accepts(min = "0s")
    @Option(names = "--partition-at", description = "Start of the partition (virtual, from the run's start).")
    Duration partitionAt;

    @Accepts(min = "1us")
    @Option(names = "--partition-for", defaultValue = "30us",
        description = "How long the partition holds before it heals (default: ${DEFAULT-VALUE}).")
    Duration partitionFor;

    @Accepts(min = "0", max = "1")
    @Option(names = "--verb-fail-rate", defaultValue = "0", paramLabel = "P",
        description = "Fault: each one-sided verb (of --verb-fail-kinds) a compute node's transaction channel posts "
            + "to a memory node lands, but with probability P reports failure (TRANSPORT_RETRY_EXCEEDED; what was "
            + "posted after it on that queue pair is flushed, not executed). RRPC messages and TSO FAAs are left "
            + "alone. A loop that cannot go on safely then gives up: its node stops serving, and what it holds stays "
            + "held (no recovery yet), reported under sim.gave_up. Also with --explore (default: ${DEFAULT-VALUE}).")
    double verbFailRate;

    @Accepts(names = OptionChecks.Verbs.class)
    @Option(names = "--verb-fail-kinds", split = ",", defaultValue = "read,write,cas,faa", paramLabel = "KIND",
        description = "The verbs --verb-fail-rate may fail: read, write, cas, faa (default: ${DEFAULT-VALUE}).")
    List<String> verbFailKinds;

    @Accepts(min = "0", max = "64")
    @Option(names = "--tso-proxies", defaultValue = "0",
        description = "TSO proxies between the CNs' TSO groups and the counter (the papers' topology: 2; default: "
            + "${DEFAULT-VALUE}, groups FAA the counter directly).")
    int tsoProxies;

    // cn by default: at the papers' topology (1 CN x 8 loops, 3 MNs, 2 TSO proxies, 128 clients, θ 0.99, seed 1,
    // 20 ms) scythe commits more with one group per CN than with one per loop (SmallBank 613 K/s vs 606 K/s, YCSB
    // 184 K/s vs 173 K/s, TPC-C 2 warehouses 18.5 K/s vs 16.1 K/s) with a lower P99 (3.35 vs 3.59 ms, 5.66 vs 6.52 ms,
    // 17.7 vs 17.8 ms) and 4-5x fewer counter FAAs: groups 8 loops large, at the price of one task per timestamp
    // posted back to its loop (the mean timestamp stage rises 2.65 -> 3.29 us on SmallBank).
    @Accepts(names = OptionChecks.TsoGroups.class)
    @Option(names = "--tso-group", defaultValue = "cn",
        description = "Who forms a TSO group (Scythe §4.5 (2)): cn (the loops of a compute node together, as the paper; "
            + "timestamps handed back to each loop by a task posted there) or loop (each event loop its own). "
            + "Default: ${DEFAULT-VALUE}.")
    String tsoGroup;

    @Accepts(min = "0s")
    @Option(names = "--queue-sample", defaultValue = "0us",
        description = "Sample every object's Takeout Lock queue this often (virtual) and report the longest queues "
            + "(Scythe Table 2; default: never).")
    Duration queueSample;

    @Accepts(min = "0")
    @Option(names = "--watermarks", split = ",", paramLabel = "COLD,HOT",
        description = "Scythe's heat watermarks: TOCC above COLD queued, Lock requests refused above HOT (default: "
            + "3,10).")
    List<Integer> watermarks;

    @Accepts(value = "[NODE.]nic|host=OFFSET_NS[,DRIFT_PPM] (checked as parsed)")
    @Option(names = "--clock", paramLabel = "[NODE.]nic|host=OFFSET_NS[,DRIFT_PPM]",
        description = "A clock of every node (nic, host) or of one (mn0.nic, cn1.host): OFFSET_NS ahead of virtual "
            + "time at the start, running DRIFT_PPM fast (negative: behind, slow). Repeatable. Nodes: mn0.., tso, "
            + "tsoproxy0.., cn0... Default: every clock reads virtual time. Only the Aurogon protocols (aurogon*, dst-to) read them (CN host clocks).")
    List<String> clock = List.of();

    @Accepts(value = "nic|host=OFFSET_NS[,DRIFT_PPM] (checked as parsed)")
    @Option(names = "--clock-spread", paramLabel = "nic|host=OFFSET_NS[,DRIFT_PPM]",
        description = "Each node's nic or host clock adds an offset drawn uniformly from [-OFFSET_NS, OFFSET_NS] "
            + "and a drift from [-DRIFT_PPM, DRIFT_PPM], drawn from --seed and the node's name. Repeatable.")
    List<String> clockSpread = List.of();

    @Accepts(exists = true)
    @Option(names = "--clock-config", paramLabel = "FILE",
        description = "Node clocks from a YAML/JSON file (conf/fabric/clocks.yaml documents every key with its "
            + "source); --clock and --clock-spread apply on top.")
    Path clockConfig;

    @Option(names = "--check-history", description = "Record every committed transaction's reads (with versions) "
        + "and writes and check the history for serializability, in memory (as `scythe check` does a file): a "
        + "dependency cycle (G0, G1c, G2) or an impossible history fails the run.")
    boolean checkHistory;

    @Accepts(value = "a file or directory to write")
    @Option(names = "--history", paramLabel = "FILE|DIR", description = "[smallbank, ycsb, tpcc, phantom, churn] Write each run's history "
        + "for `scythe check`: into FILE when there is one run, else DIR/<protocol>-<clients>[-theta<T>].history.")
    Path history;

    @picocli.CommandLine.Spec
    picocli.CommandLine.Model.CommandSpec commandSpec;

    @Accepts(min = "1")
    @Option(names = "--explore", paramLabel = "N", description = "Seed explorer: N seeds from --seed of the small "
        + "contended workload under each of --protocols. The topology, duration, faults and a few more options given "
        + "are carried into every seed and its replay line (README); the options its seeds would run without (the "
        + "workloads' sizes, the cost model, --warmup, --out, ...) are refused by name.")
    Integer explore;

    @Accepts(value = "a directory to write")
    @Option(names = "--out", paramLabel = "DIR", description = "Write DIR/results.json.")
    Path out;

    @Accepts(min = "0", max = "63")
    @Option(names = "--replicas", split = ",", defaultValue = "0", paramLabel = "K[,K...]",
        description = "Backup copies of every partition: each write-back (and redo record, with --redo-log) goes to "
            + "the primary and K backups, on the K memory nodes after it; K below --mns (FORD, Lotus and RCC "
            + "evaluate 3-way: 2). A list runs each, side by side. Default: ${DEFAULT-VALUE}, no replication.")
    List<Integer> replicas;

    @Accepts(names = OptionChecks.Lookups.class)
    @Option(names = "--lookup", defaultValue = "rpc", paramLabel = "rpc|onesided",
        description = "How a lookup that misses a loop's address cache reaches the index: rpc (the memory node's CPU "
            + "walks it) or onesided (READs of the hash bucket or skip-list nodes, as FORD and Lotus). Default: "
            + "${DEFAULT-VALUE}.")
    String lookup;

    @Option(names = "--colocate", description = "Each server is both a compute node and a memory node (Aurogon's "
        + "symmetric servers): CN i and MN i share server i's clocks and reach each other on a local path (~100 ns a "
        + "request and reply) instead of the network; needs --cns = --mns. TPC-C then homes its warehouses (each one's "
        + "districts, customers, orders and stock) in blocks: warehouse w on server (w - 1) x --mns / --warehouses. "
        + "Its memory node's RPCs are served by one queue per loop of the server, each on a modelled core of its own "
        + "(an RPC costs --mn-rpc-ns; coordinator loop j's requests go to queue j mod --loops); the coordinators' "
        + "loops are not charged for that work, so a server has more CPU than its --loops cores (an approximation). "
        + "Default: split CNs and MNs.")
    boolean colocate;

    @Option(names = "--redo-log", description = "Commits write redo records before their write-back, to log regions "
        + "the memory nodes serve (default: none; --crash-recover needs them).")
    boolean redoLog;

    /** The enumerators among --protocols (e.g. rcc-occ:hybrid=auto), with the variants each stands for. */
    private final java.util.Map<String, List<String>> enumerated = new java.util.LinkedHashMap<>();
    /** Committed txn/s of each run, by protocol and theta ({@code name@theta}), to rank an enumerator's variants. */
    private final java.util.Map<String, Double> committedPerS = new java.util.HashMap<>();

    @Override
    public Integer call() throws Exception {
        // An enumerator (rcc-occ:hybrid=auto) stands for its variants: each is run, and they are ranked at the end.
        if (!"lock".equalsIgnoreCase(workload) && !"cas".equalsIgnoreCase(workload)
            && !"tso".equalsIgnoreCase(workload)) {
            final List<String> expanded = new java.util.ArrayList<>();
            for (final String name : protocols) {
                try {
                    final List<String> variants = io.scythe.txn.spi.ProtocolRegistry.protocol(name).variants();
                    if (variants.size() != 1 || !variants.get(0).equals(name)) {
                        enumerated.put(name, variants);
                    }
                    expanded.addAll(variants);
                } catch (final io.scythe.txn.UnknownKeyException e) {
                    throw new IllegalArgumentException(e.getMessage(), e);
                }
            }
            protocols = expanded;
        }

        refuseWhatNothingReads(commandSpec.commandLine().getParseResult());
        if (crashAt.size() > 1 && crashAt.size() != crashCns.size()) {
            throw new IllegalArgumentException("--crash-at gives " + crashAt.size() + " times for " + crashCns.size()
                + " --crash-cn: give one time for all, or one per CN in the same order");
        }
        if (!crashStagger.isZero() && crashCns.size() < 2) {
            throw new IllegalArgumentException("--crash-stagger staggers the detection of several crashed CNs: give "
                + "several --crash-cn (it does nothing with one)");
        }
        if (crashes && explore == null) {
            throw new IllegalArgumentException("--crashes goes with --explore N; one run crashes and recovers a CN "
                + "with --crash-cn, --crash-at, --crash-recover and --redo-log");
        }
        final Vertx vertx = SimVertx.create();
        try {
            if (explore != null) {
                if (clockConfig != null || !clock.isEmpty() || !clockSpread.isEmpty()) {
                    throw new IllegalArgumentException("--explore runs perfect clocks: its replay commands do not "
                        + "carry --clock, --clock-spread or --clock-config");
                }
                if (crashRestartAfter != null && !crashes) {
                    // Only crash seeds restart their crashed CN (exploreOptions): refused by name, not dropped.
                    throw new IllegalArgumentException("--explore takes --crash-restart-after with --crashes only: "
                        + "its seeds' runs crash no CN otherwise");
                }
                final boolean several = crashCns.size() > 1 && !crashes; // --crashes crashes them all at one time
                if (!timeline.isZero() || several) {
                    throw new IllegalArgumentException("--explore runs its own seeds' options: it does not take "
                        + (timeline.isZero() ? "" : "--timeline") + (!timeline.isZero() && several ? " nor "
                        : "") + (several ? "several --crash-cn (" + crashCns + ") without --crashes" : ""));
                }
                final picocli.CommandLine.ParseResult given = commandSpec.commandLine().getParseResult();
                if (given.hasMatchedOption("--crash-at") && !staggeredCrashes()
                    || (given.hasMatchedOption("--crash-cn") && !crashes)) {
                    // Its seeds' runs would drop them silently: each seed draws its crash's time (one --crash-at
                    // per CN of several with --crashes keeps their distances, the first drawn), and crashes CNs only
                    // with --crashes.
                    throw new IllegalArgumentException("--explore draws each seed's crash time from the seed: it takes "
                        + "--crash-at only as one time per CN of several with --crashes (their distances kept), and "
                        + "--crash-cn only with --crashes");
                }
                if (explore < 1) {
                    throw new IllegalArgumentException("--explore " + explore + " must be at least 1");
                }
                refuseWhatTheSeedsWouldIgnore(given);
                if ("blink".equalsIgnoreCase(workload) && !"local".equalsIgnoreCase(routing)) {
                    // each seed would fail on it (the tree runs operations, not routed transactions): refused once
                    throw new IllegalArgumentException("--explore --workload blink runs local routing: the tree's "
                        + "operations are not routed transactions (--routing " + routing + ")");
                }
                final List<String> explored = "blink".equalsIgnoreCase(workload)
                    ? io.scythe.sim.TreeSim.explored(protocols) : protocols;
                final int blinkOps = blinkSingle ? io.scythe.sim.TreeSim.SINGLE
                    : blinkTxn > 0 ? blinkTxn : io.scythe.sim.TreeSim.EXPLORED_OPS;
                final List<Explorer.Workload> workloads = new java.util.ArrayList<>();
                if ("all".equalsIgnoreCase(workload)) {
                    workloads.addAll(Explorer.Workload.swept()); // blink is explored only by name
                } else {
                    final Explorer.Workload w = Explorer.Workload.named(workload);
                    if (w == null) {
                        throw new IllegalArgumentException("--workload " + workload + " cannot be explored; the "
                            + "explorer runs smallbank, phantom, churn, tpcc, blink or all");
                    }
                    workloads.add(w);
                }
                final List<Explorer.Failure> failures = new java.util.ArrayList<>();
                for (final Explorer.Workload w : workloads) {
                    failures.addAll(Explorer.explore(vertx, w, explored, seed, explore,
                        (p, s) -> exploreOptions(w, p, s), w == Explorer.Workload.BLINK
                            ? o -> io.scythe.sim.TreeSim.check(vertx, o, blinkOps)
                            : o -> Explorer.check(vertx, w, o), System.out));
                }
                System.out.println(failures.isEmpty() ? "no failing seed" : failures.size() + " failing seeds");
                return failures.isEmpty() ? 0 : 1;
            }
            return simulate(vertx);
        } finally {
            vertx.close().await();
        }
    }

    /**
     * Refuses the options that qualify another one left out, which no run (explored or not) reads then: before, each
     * was dropped silently. --verb-fail-kinds is checked (its kinds) where it is read, {@link #verbFaults}.
     */
    private void refuseWhatNothingReads(final picocli.CommandLine.ParseResult given) {
        if (partition == null && (given.hasMatchedOption("--partition-at")
            || given.hasMatchedOption("--partition-for"))) {
            throw new IllegalArgumentException("--partition-at and --partition-for place the partition --partition "
                + "names the nodes of: give --partition");
        }
        if (mnSlow == 1 && (given.hasMatchedOption("--mn-slow-from") || given.hasMatchedOption("--mn-slow-to"))) {
            throw new IllegalArgumentException("--mn-slow-from and --mn-slow-to bound when --mn-slow slows the memory "
                + "nodes: give --mn-slow (a factor other than 1)");
        }
        if (given.hasMatchedOption("--shards") && "local".equalsIgnoreCase(routing)) {
            throw new IllegalArgumentException("--shards maps the shards routed transactions go by: give --routing "
                + "shard, random or hybrid (local routing has no shard map)");
        }
        if (given.hasMatchedOption("--verb-fail-kinds") && verbFailRate == 0) {
            verbFaults(new Faults()); // an unknown kind is named first
            throw new IllegalArgumentException("--verb-fail-kinds picks the verbs --verb-fail-rate fails: give "
                + "--verb-fail-rate (above 0)");
        }
    }

    /**
     * The options of {@code sim} that an explored seed would not run with, and why: refused by name with
     * {@code --explore} (before, each was dropped silently, so a user believed they explored a configuration they had
     * not, e.g. {@code --accounts 50000}). Every other option is either carried into each seed and its replay line
     * ({@link #exploreOptions}: the topology, --duration, --jitter, --reclaim-every, --replicas, --lookup,
     * --redo-log, --colocate, --routing and its shards, --tso-group, --tso-proxies, --max-attempts, --on-abort, --drain,
     * --drain-max, --watermarks, the faults), picks what is explored (--workload, --protocols, --seed, --crashes) or
     * is always on there (--check-history; --blink-txn with the blink workload: its keys a transaction); the clocks,
     * --timeline, --crash-at and --crash-restart-after are refused
     * on their own in {@link #call}.
     */
    private static final List<java.util.Map.Entry<String, List<String>>> IGNORED_BY_EXPLORE = List.of(
        java.util.Map.entry("it fixes each explored workload's size, skew and mix", List.of("--accounts", "--theta",
            "--thetas", "--mix", "--keys", "--warehouses", "--customers", "--items", "--tpcc-mix",
            "--local-item-ratio", "--tpcc-home", "--records", "--ops", "--write-ratio", "--subscribers",
            "--line-bytes", "--blink-txn", "--locks", "--verb", "--hold")),
        java.util.Map.entry("it fixes the cost model: the cx5 profile, the default CPU times", List.of("--profile",
            "--fabric-config", "--cn-work-ns", "--mn-rpc-ns")),
        java.util.Map.entry("it checks each whole run and writes no results: give them to a seed's replay line",
            List.of("--warmup", "--queue-sample", "--out", "--history")),
        java.util.Map.entry("it recovers every --crashes seed's crash itself, the shared recovery or the protocol's "
            + "own", List.of("--crash-recover")));

    /**
     * Refuses, in one line naming them, the options given with {@code --explore} that its seeds would not run with
     * ({@link #IGNORED_BY_EXPLORE}), a list of --clients (a seed runs one), and --crash-detect without a crash to
     * detect (--crashes or --crash-mn).
     */
    private void refuseWhatTheSeedsWouldIgnore(final picocli.CommandLine.ParseResult given) {
        final List<String> parts = new java.util.ArrayList<>();
        for (final java.util.Map.Entry<String, List<String>> reason : IGNORED_BY_EXPLORE) {
            final List<String> named = reason.getValue().stream().filter(given::hasMatchedOption)
                // the blink explorer runs --blink-txn N keys a transaction (TreeSim#check)
                .filter(o -> !(o.equals("--blink-txn") && "blink".equalsIgnoreCase(workload))).toList();
            if (!named.isEmpty()) {
                parts.add(String.join(", ", named) + " (" + reason.getKey() + ")");
            }
        }
        if (given.hasMatchedOption("--crash-detect") && !crashes && crashMn < 0) {
            parts.add("--crash-detect without --crashes or --crash-mn (no seed then has a crash to detect)");
        }
        if (clients.size() != 1) {
            parts.add("a list of --clients " + clients + " (a seed runs one count: give one)");
        }
        if (!parts.isEmpty()) {
            throw new IllegalArgumentException("--explore runs each seed with options the explorer fixes or draws, "
                + "so it does not take " + String.join("; ", parts) + "; run one simulation without --explore for "
                + "those");
        }
    }

    /**
     * The explorer's options for a seed of {@code explored} ({@link Explorer#options}, {@link Explorer#lengthened}
     * for its protocol), with the topology, duration and jitter options given on the command line instead of its
     * defaults.
     */
    private io.scythe.sim.SimOptions exploreOptions(final Explorer.Workload explored, final String protocol,
                                                    final long seedOfRun) {
        final io.scythe.sim.SimOptions o = Explorer.lengthened(explored, crashes
            ? Explorer.crashOptions(protocol, seedOfRun) : Explorer.options(protocol, seedOfRun));
        final picocli.CommandLine.ParseResult given = commandSpec.commandLine().getParseResult();
        if (given.hasMatchedOption("--cns")) {
            o.computeNodes(cns);
        }
        if (given.hasMatchedOption("--loops")) {
            o.loopsPerComputeNode(loops);
        }
        if (given.hasMatchedOption("--routing")) {
            o.routing(io.scythe.routing.RoutingMode.named(routing));
        }
        if (given.hasMatchedOption("--shards")) {
            o.shards(shards);
        }
        if (given.hasMatchedOption("--move-shard-every")) {
            o.moveShardEveryNs(moveShardEvery.toNanos());
        }
        if (given.hasMatchedOption("--clients")) {
            o.clientsPerComputeNode(clients.get(0));
        }
        if (given.hasMatchedOption("--mns")) {
            o.memoryNodes(memoryNodes);
        }
        if (given.hasMatchedOption("--tso-group")) {
            o.tsoGroupPerComputeNode(tsoGroupPerCn());
        }
        if (given.hasMatchedOption("--tso-proxies")) {
            o.tsoProxies(tsoProxies);
        }
        if (given.hasMatchedOption("--duration")) {
            o.durationNs(duration.toNanos());
        }
        if (given.hasMatchedOption("--jitter")) {
            o.faults().jitterNs(jitter.toNanos());
        }
        if (given.hasMatchedOption("--reclaim-every")) {
            o.reclaimEveryNs(reclaimEvery.toNanos());
        }
        if (given.hasMatchedOption("--max-attempts")) {
            o.maxAttempts(maxAttempts);
        }
        o.onAbort(io.scythe.txn.OnAbort.named(onAbort));
        if (given.hasMatchedOption("--drain")) {
            o.drainNs(drain.toNanos());
        }
        if (given.hasMatchedOption("--drain-max")) {
            o.drainMaxNs(Math.max(o.drainNs(), drainMax.toNanos())); // as one run takes it
        }
        if (watermarks != null) {
            o.watermarks(watermarks());
        }
        if (given.hasMatchedOption("--replicas")) {
            if (replicas.size() != 1) {
                throw new IllegalArgumentException("--explore takes one --replicas K, not " + replicas);
            }
            o.replicas(replicas.get(0));
        }
        verbFaults(o).lookup(lookupMode(lookup)).redoLog(redoLog || crashes).colocate(colocate);
        if (staggeredCrashes()) { // the first drawn, the others as far after it
            Explorer.crash(o, crashCns.get(0), crashDetect.toNanos());
            final long[] at = crashAtsNs();
            // The first crash drawn from the seed as ever, folded so that the last one stays within the run.
            final long room = o.warmupNs() + o.durationNs() - (at[at.length - 1] - at[0]);
            if (room < 2) {
                throw new IllegalArgumentException("--crash-at " + crashAt + " spans more than a seed's run ("
                    + (o.warmupNs() + o.durationNs()) + " ns)");
            }
            final long drawn = 1 + (o.faults().crashAtNs() - 1) % (room - 1);
            final long[] shifted = new long[at.length];
            for (int i = 0; i < at.length; i++) {
                shifted[i] = drawn + at[i] - at[0];
            }
            o.faults().crash(crashCns.stream().mapToInt(Integer::intValue).toArray(), shifted)
                .detectStagger(crashStagger.toNanos());
        } else if (crashes && crashCns.size() > 1) { // several nodes at one time drawn from the seed
            Explorer.crash(o, crashCns.get(0), crashDetect.toNanos());
            o.faults().crash(crashCns.stream().mapToInt(Integer::intValue).toArray(), o.faults().crashAtNs())
                .detectStagger(crashStagger.toNanos());
        } else if (crashes) { // --crash-cn picks the node; the time is still drawn from the seed
            Explorer.crash(o, crashCn(), crashDetect.toNanos());
        }
        if (crashes && crashRestartAfter != null) { // each crash seed's crashed CNs restarted that long after
            o.faults().restartAfter(crashRestartAfter.toNanos());
        }
        if (crashMn >= 0) { // --crash-mn picks the memory node; the time is the CN crash's, or drawn from the seed
            Explorer.crashMemoryNode(o, crashMn, crashDetect.toNanos());
        }
        if (partition != null) { // the window's start given, or drawn from the seed
            Explorer.partition(o, partition, partitionAt == null ? -1 : partitionAt.toNanos(), partitionFor.toNanos());
        }
        if (mnSlow != 1) {
            o.faults().mnSlow(mnSlow, mnSlowFrom.toNanos(), mnSlowTo == null ? Long.MAX_VALUE : mnSlowTo.toNanos());
        }
        return o.validate();
    }

    private int simulate(final Vertx vertx) throws Exception {
        watermarks();
        final boolean lockWorkload = "lock".equalsIgnoreCase(workload);
        final boolean casWorkload = "cas".equalsIgnoreCase(workload);
        final boolean blinkWorkload = "blink".equalsIgnoreCase(workload);
        if (blinkWorkload && (checkHistory || history != null)) {
            throw new IllegalArgumentException("--check-history and --history record table transactions: the blink "
                + "workload runs index operations, or with --blink-txn transactions through the tree that a serial "
                + "replay in commit order checks instead");
        }
        if (blinkWorkload && protocols.equals(List.of("scythe", "ford-occ", "farm-occ"))) {
            protocols = List.of("selcc-2pl", "sel-2pl"); // the tree on SELCC and on SEL
        }
        if (blinkSingle && (!blinkWorkload || blinkTxn > 0)) {
            throw new IllegalArgumentException("--blink-single goes with --workload blink and without --blink-txn");
        }
        if (!blinkWorkload && blinkTxn > 0) {
            throw new IllegalArgumentException("--blink-txn goes with --workload blink");
        }
        if (blinkWorkload && blinkTxn > 0 && !protocols.equals(List.of("scythe", "ford-occ", "farm-occ"))) {
            io.scythe.sim.TreeSim.checkTransactional(protocols);
        }
        if (blinkWorkload) { // before any run: lines too small for a protocol's tree (selcc-to: TO's timestamps)
            for (final String protocol : protocols) {
                io.scythe.sim.TreeSim.Spec.checkLineBytes(lineBytes, blinkTxn > 0
                    && io.scythe.sim.TreeSim.ordered(protocol));
            }
        }
        if (blinkWorkload && crashCns.stream().anyMatch(c -> c >= 0) && !redoLog) {
            throw new IllegalArgumentException("--crash-cn with the blink workload needs --redo-log: without it SELCC "
                + "runs no crash recovery and does not write through (writesThrough() false), so a crash may lose "
                + "a split's new node while the node it split links it (issue 21)");
        }
        final boolean tsoWorkload = "tso".equalsIgnoreCase(workload);
        final boolean gclWorkload = "gcl".equalsIgnoreCase(workload);
        for (final String p : protocols) { // each loop is a latch-word participant (one reader bit each)
            if ((p.startsWith("selcc-") || p.startsWith("sel-"))
                && (long) cns * loops > io.scythe.txn.selcc.LatchWord.MAX_PARTICIPANTS) {
                throw new IllegalArgumentException("--cns " + cns + " x --loops " + loops + " = " + (long) cns * loops
                    + " compute-node loops: " + p + " takes at most " + io.scythe.txn.selcc.LatchWord.MAX_PARTICIPANTS
                    + " (each loop is a participant of the latch words: a 6-bit holder, 58 reader bits); run fewer "
                    + "loops, and more clients a loop");
            }
        }
        if (gclWorkload) {
            if (checkHistory || history != null || replicas.size() > 1 || replicas.get(0) != 0 || redoLog
                || crashCns.stream().anyMatch(c -> c >= 0)) {
                throw new IllegalArgumentException("the gcl workload runs line accesses, no transactions: it takes no "
                    + "--check-history, --history, --replicas, --redo-log or --crash-cn");
            }
            if (protocols.equals(List.of("scythe", "ford-occ", "farm-occ"))) {
                protocols = List.of("selcc-2pl", "sel-2pl"); // the lines on SELCC's cache and on SEL
            }
            io.scythe.bench.workload.GclSpec.check(protocols, (long) cns * loops);
        }
        if ((lockWorkload || casWorkload || tsoWorkload) && (checkHistory || history != null)) {
            throw new IllegalArgumentException("--check-history and --history record transactions: the lock, cas and "
                + "tso workloads have none");
        }
        if (tsoWorkload && protocols.equals(List.of("scythe", "ford-occ", "farm-occ"))) {
            protocols = TsoSim.VARIANTS; // the default protocols mean nothing to the tso workload
        }
        if (casWorkload) {
            protocols = List.of("cas"); // single verbs: no protocol
        }
        final RemoteTable.LookupMode lookupMode = lookupMode(lookup);
        for (final int k : replicas) {
            BenchCommand.replicas(k, memoryNodes);
        }
        if ((lockWorkload || casWorkload || tsoWorkload) && (replicas.size() > 1 || replicas.get(0) != 0 || redoLog
            || lookupMode != RemoteTable.LookupMode.RPC)) {
            throw new IllegalArgumentException("--replicas, --lookup and --redo-log apply to transactions: the lock, "
                + "cas and tso workloads have none");
        }
        if (lockWorkload && protocols.equals(List.of("scythe", "ford-occ", "farm-occ"))) {
            protocols = List.of("takeout", "cas-lock"); // the default protocols mean nothing to the lock workload
        }
        final List<Double> sweep = thetas == null ? List.of(theta) : thetas;
        final OltpSpec spec = lockWorkload ? new LockSim.Spec(protocols.get(0), locks, sweep.get(0), hold.toNanos())
            : casWorkload ? new CasSim.Spec(locks, sweep.get(0), CasSim.Verb.named(verb))
            : tsoWorkload ? new TsoSim.Spec(protocols.get(0)) : spec(sweep.get(0));
        final CostModel model = fabricConfig != null ? BenchCommand.readCostModel(fabricConfig)
            : CostModel.profile(profile);
        final ClockOptions clocks = ClockArguments.parse(clockConfig, clock, clockSpread, seed);
        final io.scythe.routing.RoutingMode routingMode = io.scythe.routing.RoutingMode.named(routing);
        final Faults faults = new Faults().jitterNs(jitter.toNanos());
        if (crashMn >= 0) {
            faults.crashMemoryNode(crashMn, crashAtOne("with --crash-mn").toNanos(), crashDetect.toNanos());
        }
        if (crashCns.size() > 1 || crashCns.get(0) >= 0) {
            if (crashCns.contains(-1)) {
                throw new IllegalArgumentException("--crash-cn names compute nodes 0-based, not " + crashCns);
            }
            final int[] cns = crashCns.stream().mapToInt(Integer::intValue).toArray();
            faults.crash(cns, crashAtsNs()) // one time for all of them, or one each
                .recover(crashRecover, crashDetect.toNanos()).detectStagger(crashStagger.toNanos());
            if (crashRestartAfter != null) {
                faults.restartAfter(crashRestartAfter.toNanos());
            }
        } else if (crashRestartAfter != null) {
            throw new IllegalArgumentException("--crash-restart-after restarts the CNs --crash-cn crashes: give "
                + "--crash-cn");
        } else if (crashRecover) {
            throw new IllegalArgumentException("--crash-recover recovers the CN --crash-cn crashes: give --crash-cn");
        }
        if (mnSlow != 1) {
            faults.mnSlow(mnSlow, mnSlowFrom.toNanos(), mnSlowTo == null ? Long.MAX_VALUE : mnSlowTo.toNanos());
        }
        if (partition != null) {
            if (partitionAt == null) {
                throw new IllegalArgumentException("--partition needs --partition-at, the window's start (only "
                    + "--explore draws it from each seed)");
            }
            faults.partition(partition, partitionAt.toNanos(), partitionFor.toNanos());
        }
        verbFaults(faults);
        final JsonObject params = new JsonObject().put("simulated", true).put("protocols", new JsonArray(protocols))
            .put("clients_per_cn", new JsonArray(clients)).put("cns", cns).put("loops_per_cn", loops)
            .put("memory_nodes", memoryNodes).put("tso_proxies", tsoProxies).put("tso_group", tsoGroup).put("seed", seed).put("duration_virtual_ms", duration.toNanos() / 1e6)
            .put("cost_model", model.toJson()).put("faults", faults.toJson()).mergeIn(spec.params());
        if (routingMode != io.scythe.routing.RoutingMode.LOCAL) {
            params.put("routing", routingMode.label()).put("shards", shards)
                .put("move_shard_every_ns", moveShardEvery.toNanos());
        }
        if (!clocks.isPerfect()) {
            params.put("clocks", clocks.toJson());
        }
        final BenchReport report = new BenchReport(spec.name(), params);
        boolean ok = true;
        boolean busyAfterDrain = false;
        for (final double zipfTheta : sweep) {
          for (final int perCn : clients) {
            for (final String protocol : protocols) {
              for (final int k : replicas) {
                final OltpSpec runSpec = lockWorkload ? new LockSim.Spec(protocol, locks, zipfTheta, hold.toNanos())
                    : casWorkload ? new CasSim.Spec(locks, zipfTheta, CasSim.Verb.named(verb))
                    : tsoWorkload ? new TsoSim.Spec(protocol) : spec(zipfTheta);
                if (runSpec instanceof io.scythe.sim.TreeSim.Spec tree) { // TO's leaves keep room for timestamps
                    tree.timestamped(blinkTxn > 0 && io.scythe.sim.TreeSim.ordered(protocol));
                }
                final SimOptions options = new SimOptions().protocol(protocol).computeNodes(cns)
                    .loopsPerComputeNode(loops).clientsPerComputeNode(perCn).memoryNodes(memoryNodes)
                    .maxAttempts(maxAttempts).onAbort(io.scythe.txn.OnAbort.named(onAbort))
                    .durationNs(duration.toNanos()).warmupNs(warmup.toNanos()).seed(seed)
                    .drainNs(drain.toNanos()).drainMaxNs(Math.max(drain.toNanos(), drainMax.toNanos()))
                    .costModel(model).faults(faults).tsoProxies(tsoProxies).tsoGroupPerComputeNode(tsoGroupPerCn())
                    .clocks(clocks)
                    .routing(routingMode).shards(shards).moveShardEveryNs(moveShardEvery.toNanos())
                    .queueSampleNs(queueSample.toNanos()).reclaimEveryNs(reclaimEvery.toNanos())
                    .watermarks(watermarks())
                    .cpu(SimOptions.DEFAULT_CN_POLL_NS, cnWorkNs, SimOptions.DEFAULT_MN_POLL_NS, mnRpcNs)
                    .replicas(k).lookup(lookupMode).redoLog(redoLog).colocate(colocate).timelineNs(timeline.toNanos());
                final io.scythe.sim.TreeSim.Ledger ledger = blinkTxn > 0 || blinkSingle
                    ? new io.scythe.sim.TreeSim.Ledger() : null;
                if (ledger != null) {
                    ledger.crashes = crashCns.stream().anyMatch(c -> c >= 0); // its commits in doubt: all or nothing
                }
                final Simulation simulation = gclWorkload ? new Simulation(options, runSpec).operation(
                    io.scythe.sim.GclSim.accesses((io.scythe.bench.workload.GclSpec) runSpec,
                        io.scythe.sim.TreeSim.kind(protocol), cns, loops, memoryNodes, 1 - writeRatio, zipfTheta,
                        gcl.sharingRatio, gcl.locality, gcl.accessHold.toNanos()))
                    : blinkWorkload ? new Simulation(options, runSpec).operation(
                    blinkSingle ? io.scythe.sim.TreeSim.singleOperations((io.scythe.sim.TreeSim.Spec) runSpec,
                        io.scythe.sim.TreeSim.kind(protocol), 1 - writeRatio, zipfTheta, ledger)
                    : ledger != null ? io.scythe.sim.TreeSim.transactions((io.scythe.sim.TreeSim.Spec) runSpec,
                        protocol, 1 - writeRatio, zipfTheta, blinkTxn, ledger)
                    : io.scythe.sim.TreeSim.ycsb((io.scythe.sim.TreeSim.Spec) runSpec, io.scythe.sim.TreeSim.kind(
                        protocol), 1 - writeRatio, zipfTheta))
                    : lockWorkload ? LockSim.simulation(options.protocol("scythe"), (LockSim.Spec) runSpec)
                    : casWorkload ? CasSim.simulation(options.protocol("scythe"), (CasSim.Spec) runSpec)
                    : tsoWorkload ? TsoSim.simulation(options.protocol("scythe"), (TsoSim.Spec) runSpec)
                    : new Simulation(options, runSpec);
                final String runName = protocol + "-" + perCn + (sweep.size() > 1 ? "-theta" + zipfTheta : "")
                    + (replicas.size() > 1 ? "-replicas" + k : "");
                final HistoryCollector recorded = checkHistory ? new HistoryCollector(ObjectLayout.LOADED_VERSION,
                    spec.name() + " " + runName + " seed " + seed) : null;
                if (recorded != null) {
                    simulation.recorder(recorded);
                }
                final HistoryWriter file = history == null ? null : new HistoryWriter(HistoryWriter.fileFor(history,
                    sweep.size() * clients.size() * protocols.size() * replicas.size() == 1, runName), ObjectLayout.LOADED_VERSION,
                    spec.name() + " " + runName + " seed " + seed + " (simulated)");
                if (file != null) {
                    simulation.recorder(file);
                }
                final SimResult r;
                try {
                    r = simulation.run(vertx);
                } finally {
                    if (file != null) {
                        file.close();
                    }
                }
                if (lockWorkload || casWorkload || tsoWorkload) {
                    r.run().put("protocol", protocol);
                }
                if (gclWorkload) {
                    final JsonObject lines = ((io.scythe.bench.workload.GclSpec) runSpec).checked();
                    r.run().put("gcl", lines);
                    System.out.println("  gcl: " + lines.encode());
                    if (lines.containsKey("violations")) {
                        r.run().invariantsOk(false);
                    }
                }
                if (blinkWorkload) {
                    r.run().put("tree", io.scythe.sim.TreeSim.describe((io.scythe.sim.TreeSim.Spec) runSpec));
                    if (ledger != null) {
                        final JsonObject txns = io.scythe.sim.TreeSim.checked(ledger,
                            (io.scythe.sim.TreeSim.Spec) runSpec);
                        r.run().put("transactions", txns);
                        System.out.println("  blink transactions: " + txns.encode());
                        if (!txns.getJsonArray("violations").isEmpty()) {
                            r.run().invariantsOk(false);
                        }
                    }
                }
                if (replicas.size() > 1 || k > 0 || lookupMode != RemoteTable.LookupMode.RPC || redoLog) {
                    r.run().put("replicas", k).put("lookup", lookupMode.label())
                        .put("redo_log", redoLog);
                }
                if (file != null) {
                    r.run().put("history", new JsonObject().put("file", file.file().toString())
                        .put("transactions", file.transactions()));
                }
                final SerializabilityChecker.Result verdict = recorded == null ? null
                    : SerializabilityChecker.check(recorded.history(), 10);
                if (verdict != null) {
                    r.run().put("serializability", toJson(verdict));
                    if (Explorer.historyFails(verdict, r.run().toJson())) {
                        r.run().invariantsOk(false);
                    }
                }
                final JsonObject run = r.run().toJson();
                committedPerS.put(protocol + "@" + zipfTheta, run.getDouble("committed_per_s"));
                ok &= run.getBoolean("invariants_ok");
                busyAfterDrain |= run.getJsonObject("sim").containsKey("not_quiescent");
                report.add(r.run());
                final JsonObject lat = run.getJsonObject("latency_us");
                final JsonObject sim = run.getJsonObject("sim");
                System.out.printf("%-10s theta %4.2f cns %3d clients %5d %11.0f txn/s (virtual)  p50 %8.2f us  p99 %8.2f us  "
                        + "p999 %8.2f us  abort rate %5.3f  %s  locks held %d  [%d events, %.0f ms wall]%n",
                    protocol, zipfTheta, cns, run.getInteger("clients"), run.getDouble("committed_per_s"), lat.getDouble("p50"),
                    lat.getDouble("p99"), lat.getDouble("p999"), run.getDouble("abort_rate"),
                    sim.containsKey("not_quiescent") ? "NOT QUIESCENT"
                        : run.getJsonObject("conserved").getBoolean("ok") ? spec.quantity() + " conserved"
                        : spec.quantity() + " NOT CONSERVED", run.getLong("locks_left_held"), sim.getLong("events"),
                    sim.getDouble("wall_ms"));
                if (k > 0 || replicas.size() > 1) {
                    System.out.printf("  replicas %d (lookup %s%s): %s%n", k, lookupMode.label(),
                        redoLog ? ", redo log" : "", k == 0 ? "no backups"
                            : run.getInteger("replica_differences", 0) == 0 ? "every backup identical to its primary"
                            : run.getInteger("replica_differences") + " objects differ from their primary");
                }
                if (casWorkload && "write".equalsIgnoreCase(verb)) {
                    System.out.printf("  WRITE %s: ours p50 %.2f us  %.2f Mops | Lotus perftest peak: %.0f Mops "
                            + "(CAS %.1f Mops)%n", zipfTheta == 0 ? "uniform" : "zipf " + zipfTheta, lat.getDouble("p50"),
                        run.getDouble("committed_per_s") / 1e6, CasSim.LOTUS_WRITE_MOPS, CasSim.LOTUS_CAS_MOPS);
                } else if (casWorkload) {
                    final double[] paper = CasSim.PAPER_TABLE_1[zipfTheta == 0 ? 0 : 1];
                    System.out.printf("  CAS %s: ours p50 %.2f us  p90 %.2f us  %.2f Mops | Scythe Table 1 (%s): "
                            + "p50 %.1f us  p90 %.1f us  %.2f Mops%n", zipfTheta == 0 ? "uniform" : "zipf " + zipfTheta,
                        lat.getDouble("p50"), lat.getDouble("p90"), run.getDouble("committed_per_s") / 1e6,
                        zipfTheta == 0 ? "uniform" : "Zipfian", paper[0], paper[1], paper[2]);
                }
                if (run.containsKey("queues")) {
                    System.out.println("  queues: " + run.getJsonObject("queues").encode());
                }
                if (sim.containsKey("routing")) {
                    System.out.println("  routing: " + sim.getJsonObject("routing").encode());
                }
                if (sim.containsKey("crash")) {
                    System.out.println("  crash: " + sim.getJsonObject("crash").encode());
                }
                if (sim.containsKey("timeline")) {
                    System.out.println("  " + io.scythe.sim.Timeline.summary(sim.getJsonObject("timeline")));
                }
                if (sim.containsKey("protocol_stats")) {
                    System.out.println("  " + protocol + ": " + sim.getJsonObject("protocol_stats").encode());
                }
                for (final String fault : List.of("not_quiescent", "verb_faults", "gave_up", "locks_unexplained")) {
                    if (sim.containsKey(fault)) {
                        System.out.println("  " + fault.replace('_', ' ') + ": " + sim.getJsonObject(fault).encode());
                    }
                }
                if (verdict != null) {
                    final List<String> lines = verdict.lines();
                    (verdict.serializable() ? lines.subList(0, 1) : lines)
                        .forEach(line -> System.out.println("  history " + line));
                }
              }
            }
          }
        }
        for (final java.util.Map.Entry<String, List<String>> e : enumerated.entrySet()) {
            for (final double zipfTheta : sweep) {
                final List<String> ranked = new java.util.ArrayList<>(e.getValue());
                ranked.sort(java.util.Comparator.comparingDouble(n -> -committedPerS.getOrDefault(n + "@" + zipfTheta,
                    0.0)));
                System.out.printf("ranking of %s (theta %.2f), by committed txn/s:%n", e.getKey(), zipfTheta);
                for (int i = 0; i < ranked.size(); i++) {
                    System.out.printf("  %2d. %-40s %11.0f%n", i + 1, ranked.get(i),
                        committedPerS.getOrDefault(ranked.get(i) + "@" + zipfTheta, 0.0));
                }
            }
        }
        if (out != null) {
            System.out.println("wrote " + report.write(out));
        }
        if (!ok) {
            System.err.println("scythe sim: " + (busyAfterDrain ? "a run was not quiescent after the drain (see "
                + "sim.not_quiescent; a longer --drain-max may let it finish) or " : "") + "an invariant was violated "
                + "(see invariants_ok in the results); replay: " + replayCommand());
        }
        return ok ? 0 : 1;
    }

    /**
     * {@code --watermarks} (the default when not given).
     *
     * @throws IllegalArgumentException unless it is two numbers, COLD,HOT
     */
    private io.scythe.hotspot.Watermarks watermarks() {
        if (watermarks == null) {
            return io.scythe.hotspot.Watermarks.DEFAULT;
        }
        if (watermarks.size() != 2) {
            throw new IllegalArgumentException("--watermarks takes COLD,HOT, not " + watermarks);
        }
        return new io.scythe.hotspot.Watermarks(watermarks.get(0), watermarks.get(1));
    }

    /**
     * The lookup mode named {@code name} on the command line ({@code --lookup}).
     *
     * @throws IllegalArgumentException naming the option and what it accepts
     */
    static RemoteTable.LookupMode lookupMode(final String name) {
        try {
            return RemoteTable.LookupMode.named(name);
        } catch (final IllegalArgumentException e) {
            throw new IllegalArgumentException("--lookup " + e.getMessage(), e);
        }
    }

    /** {@code options} with this command's verb faults ({@code --verb-fail-rate}, {@code --verb-fail-kinds}). */
    private SimOptions verbFaults(final SimOptions options) {
        verbFaults(options.faults());
        return options;
    }

    private void verbFaults(final Faults faults) {
        final java.util.Set<io.scythe.fabric.Opcode> kinds = java.util.EnumSet.noneOf(io.scythe.fabric.Opcode.class);
        for (final String kind : verbFailKinds) {
            try {
                kinds.add(Faults.kindNamed(kind));
            } catch (final IllegalArgumentException e) {
                throw new IllegalArgumentException("--verb-fail-kinds: " + e.getMessage(), e);
            }
        }
        if (!(verbFailRate >= 0 && verbFailRate <= 1)) {
            throw new IllegalArgumentException("--verb-fail-rate " + verbFailRate + " must be within [0, 1]");
        }
        faults.verbFail(verbFailRate, kinds);
    }

    /** This command line again (picocli keeps the parent's arguments: the words up to "sim" are dropped). */
    private String replayCommand() {
        final List<String> args = commandSpec.commandLine().getParseResult().originalArgs();
        final int sim = args.indexOf("sim");
        return "scythe sim " + String.join(" ", sim >= 0 ? args.subList(sim + 1, args.size()) : args);
    }

    /** The checker's verdict for results.json: counts, and the cycles and impossibilities it detailed. */
    static JsonObject toJson(final SerializabilityChecker.Result r) {
        final JsonArray cycles = new JsonArray();
        for (final SerializabilityChecker.Cycle c : r.cycles()) {
            cycles.add(new JsonObject().put("anomaly", c.anomaly()).put("component_size", c.componentSize())
                .put("transactions", new JsonArray(c.transactions()))
                .put("edges", new JsonArray(c.steps().stream().map(Object::toString).toList())));
        }
        return new JsonObject().put("serializable", r.serializable()).put("transactions", r.transactions())
            .put("edges", new JsonObject().put("ww", r.edgesByKind()[0]).put("wr", r.edgesByKind()[1])
                .put("rw", r.edgesByKind()[2]))
            .put("cycles_found", r.components()).put("cycles", cycles)
            .put("impossible_found", r.impossibleCount()).put("impossible", new JsonArray(r.impossible()));
    }

    /** {@code --tso-group}: whether a compute node's loops share one TSO group. */
    private boolean tsoGroupPerCn() {
        return switch (tsoGroup.toLowerCase(Locale.ROOT)) {
            case "loop" -> false;
            case "cn" -> true;
            default -> throw new picocli.CommandLine.ParameterException(commandSpec.commandLine(), "--tso-group="
                + tsoGroup + ": must be loop or cn");
        };
    }

    private OltpSpec spec(final double zipfTheta) {
        switch (workload.toLowerCase(Locale.ROOT)) {
            case "smallbank":
                return new SmallBankSpec(accounts, zipfTheta, mix);
            case "ycsb":
                return new YcsbSpec(records, zipfTheta, ops, writeRatio);
            case "tatp": // --mix standard (the spec's seven types) or read-update, as scythe bench's
                return new io.scythe.bench.workload.TatpSpec(subscribers, mix, seed);
            case "blink":
                return io.scythe.sim.TreeSim.Spec.sized(records, lineBytes, memoryNodes);
            case "gcl":
                return new io.scythe.bench.workload.GclSpec(records, lineBytes, memoryNodes);
            case "tpcc": // virtual runs are milliseconds long: the minimum headroom of new orders is plenty
                final io.scythe.bench.workload.TpccSpec tpcc = new io.scythe.bench.workload.TpccSpec(
                    new io.scythe.bench.workload.Tpcc.Scale(warehouses, customers, items,
                    io.scythe.bench.workload.TpccSpec.headroomFor(0)), zipfTheta, seed,
                    io.scythe.bench.workload.TpccSpec.Mix.of(tpccMix), localItemRatio,
                    io.scythe.bench.workload.TpccSpec.Home.of(tpccHome));
                return colocate ? tpcc.placedByWarehouse() : tpcc; // warehouses homed on the servers
            case "phantom":
            case "churn":
                return new io.scythe.bench.workload.KeyChurnSpec(io.scythe.bench.workload.KeyChurnSpec.shapeNamed(
                    workload), keys);
            default:
                throw new IllegalArgumentException("unknown workload '" + workload + "'; the simulator runs smallbank, "
                    + "ycsb, tatp, tpcc, phantom, churn, lock or cas");
        }
    }
}
