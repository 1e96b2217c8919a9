package io.scythe.cli;

import io.scythe.bench.micro.VerbsWorkload;
import io.scythe.bench.report.BenchReport;
import io.scythe.config.ConfigFiles;
import io.scythe.fabric.CostModel;
import io.vertx.core.Vertx;
import io.scythe.fabric.Opcode;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.Callable;
import java.util.concurrent.TimeUnit;

/** {@code scythe bench}: runs a workload on an embedded cluster in this JVM and reports it. */
@Command(name = "bench", mixinStandardHelpOptions = true,
    description = {"Runs a benchmark workload on an embedded cluster in this JVM, prints a table and writes "
        + "DIR/results.json and DIR/report.html (--out DIR; by default results/<workload>-<time>).",
        "Workloads: smallbank (the default: SmallBank on an embedded cluster, --protocols one after another on "
            + "identical data, money conservation checked); ycsb (transactions of --ops keys, --write-ratio written, on the "
            + "1M-record usertable; every committed write counted; --ycsb-profile hot-area is RCC's); tatp (the four "
            + "TATP tables and the standard mix; CALL_FORWARDING rows counted); verbs (READ/WRITE/CAS/FAA through the bridge on each fabric provider, single and "
            + "doorbell-batched, beside the raw memory operation); rrpc (RRPC against a plain one-message-per-RPC "
            + "design, 16 B to 4 KiB; --peer cn: CN-to-CN calls beside CN-to-MN); tso (TSO group and proxies against one FAA per request and physical "
            + "clocks, Fig. 28); logdb (bulk load of the 1M-record YCSB table, bytes per record, address lookups by RPC and by "
            + "one-sided index READs over the hash index and the skip list); lock (Takeout Lock against the CAS lock: "
            + "clients lock one of --locks objects by Zipf(theta) and hold it 25 us, Fig. 27); tpcc (TPC-C's five "
            + "transactions on --warehouses, items by Zipf(theta); consistency conditions 1-4 checked); gcl (SELCC's GAM "
            + "micro-benchmark, as `scythe sim --workload gcl`: reads and writes of --records global cache lines by "
            + "address on the compute nodes' caches, --protocols selcc-2pl,sel-2pl; the memory nodes' line counters "
            + "checked against the writes completed)."})
public final class BenchCommand implements Callable<Integer> {
    static final String DEFAULT_WORKLOAD = "smallbank";

    @Accepts(names = BenchCommand.Workloads.class)
    @Option(names = "--workload", defaultValue = DEFAULT_WORKLOAD, completionCandidates = Workloads.class,
        description = "Workload to run: ${COMPLETION-CANDIDATES} (verbs, rrpc, tso, logdb and lock measure the "
            + "substrate; the others are transactions) (default: ${DEFAULT-VALUE}).")
    String workload;

    @Accepts(value = "a directory to write")
    @Option(names = "--out", paramLabel = "DIR", description = "Write DIR/results.json and DIR/report.html "
        + "(default: results/<workload>-<yyyyMMdd-HHmmss>).")
    Path out;

    @Accepts(value = "a file or directory to write")
    @Option(names = "--history", paramLabel = "FILE|DIR",
        description = "[smallbank, ycsb, tatp, tpcc, phantom, churn] Record the history of every measured run (its warm-up included) for "
            + "`scythe check`: into FILE when there is one run, else DIR/<protocol>-<clients>.history.")
    Path history;

    /** The transactional workloads (driven by OltpWorkload; their histories can be recorded). */
    private static final List<String> OLTP = List.of("smallbank", "ycsb", "tatp", "tpcc", "phantom", "churn");
    /** Every workload it runs, as its help lists them. */
    static final List<String> WORKLOADS = java.util.stream.Stream.concat(
        java.util.stream.Stream.concat(java.util.stream.Stream.of("verbs", "rrpc", "tso", "logdb", "lock"),
            OLTP.stream()), java.util.stream.Stream.of("gcl")).toList();

    /** {@link #WORKLOADS}, for the help. */
    static final class Workloads implements Iterable<String> {
        @Override
        public java.util.Iterator<String> iterator() {
            return WORKLOADS.iterator();
        }
    }

    @Accepts(min = "1")
    @Option(names = "--keys", defaultValue = "4", description = "[phantom, churn] Groups (phantom) or counters (churn) "
        + "that transactions meet on (default: ${DEFAULT-VALUE}).")
    int keys;

    @Accepts(min = "1", max = "64")
    @Option(names = "--cns", split = ",", defaultValue = "1",
        description = "[smallbank, ycsb, tatp, tpcc, phantom, churn, gcl] Compute nodes of the embedded cluster; a "
            + "list runs each protocol at each count in a row, with the throughput ratio over the first (gcl: one "
            + "count) (default: ${DEFAULT-VALUE}). They share this JVM's event loops: each loop runs one coordinator of "
            + "every node.")
    List<Integer> cns;

    @Accepts(names = OptionChecks.Routings.class)
    @Option(names = "--routing", defaultValue = "shard",
        description = "With --cns above 1, where each transaction goes: shard (the owner of its routing key's shard: "
            + "SmallBank's account, TPC-C's home warehouse, TATP's subscriber, YCSB's first key), random, or hybrid "
            + "(Lotus: read-only ones at random, read-write ones by shard) (default: ${DEFAULT-VALUE}).")
    String routing;

    @Accepts(min = "1", max = "1048576")
    @Option(names = "--shards", defaultValue = "" + io.scythe.routing.ShardMap.DEFAULT_SHARDS,
        description = "Shards of the shard map: routing key mod shards, round-robin over the compute nodes (default: "
            + "${DEFAULT-VALUE}, Lotus's 12 bits).")
    int shards;

    @Accepts(min = "0s")
    @Option(names = "--move-shard-every", defaultValue = "0s",
        description = "With --cns above 1, moves a random shard to another compute node this often while measuring "
            + "(0: never), so routers meet wrong-owner refusals and send again on the newer map (default: "
            + "${DEFAULT-VALUE}).")
    Duration moveShardEvery;

    @Option(names = "--quiet", description = "No live progress line on stderr during runs of 3 s or more.")
    boolean quiet;

    @Accepts(min = "1ms")
    @Option(names = "--duration", defaultValue = "2s", description = "Measured time of each run (default: "
        + "${DEFAULT-VALUE}).")
    Duration duration;

    @Accepts(min = "0s")
    @Option(names = "--warmup", defaultValue = "1s", description = "Warm-up before each run (default: "
        + "${DEFAULT-VALUE}).")
    Duration warmup;

    @Accepts(value = "any integer")
    @Option(names = "--seed", defaultValue = "1", description = "Random seed (default: ${DEFAULT-VALUE}).")
    long seed;

    @Accepts(names = OptionChecks.Providers.class)
    @Option(names = "--providers", split = ",", defaultValue = "local,shm,tcp",
        description = "[verbs] Fabric providers to measure: local, shm, tcp, disni (needs an RDMA NIC and "
            + "libdisni) (default: ${DEFAULT-VALUE}).")
    List<String> providers;

    @Accepts(names = OptionChecks.Verbs.class)
    @Option(names = "--verbs", split = ",", defaultValue = "read,write,cas,faa",
        description = "[verbs] Verbs to measure: read, write, cas, faa (default: ${DEFAULT-VALUE}).")
    List<String> verbs;

    @Accepts(names = OptionChecks.Profiles.class)
    @Option(names = "--profile",
        description = "Cost-model profile: " + io.scythe.fabric.CostModel.PROFILE_NAMES + " (zero: pure software "
            + "cost; cx5: ConnectX-5 timings; conf/fabric/ documents each); default zero for "
            + "verbs, cx5 for the others.")
    String profile;

    @Accepts(min = "1", max = "100000")
    @Option(names = "--clients", split = ",",
        description = "Concurrent clients (event loops x flows); a list sweeps (default: 8,32,64 for smallbank, "
            + "64 otherwise).")
    List<Integer> clients;

    @Accepts(min = "1", max = "64")
    @Option(names = "--loops", defaultValue = "1",
        description = "Event loops the clients and servers of the rrpc, tso, logdb and lock workloads run on "
            + "(default: ${DEFAULT-VALUE}; on 2 cores a second busy loop leaves the JIT and GC no core).")
    int loops;

    @Accepts(value = "registered protocols, or the lock workload's takeout and cas-lock (checked by the workload)")
    @Option(names = "--protocols", split = ",", defaultValue = "scythe,ford-occ",
        completionCandidates = RegisteredProtocols.class,
        description = "Protocols to run one after another on identical data (default: ${DEFAULT-VALUE}; "
            + "registered: ${COMPLETION-CANDIDATES}). scythe is Scythe with shared reader tickets; "
            + "scythe:exclusive, the paper's exclusive tickets, compares against it.")
    List<String> protocols;

    @Accepts(min = "2")
    @Option(names = "--accounts", defaultValue = "100000",
        description = "SmallBank customers (default: ${DEFAULT-VALUE}).")
    long accounts;

    @Accepts(min = "0", max = "10")
    @Option(names = "--theta", defaultValue = "0.99",
        description = "Zipf factor over keys (default: ${DEFAULT-VALUE}).")
    double theta;

    @Accepts(value = "a mix of the workload (checked by the workload)")
    @Option(names = "--mix", defaultValue = "standard",
        description = "SmallBank mix: standard (6 types), scythe (Balance, DepositChecking, TransactSaving, "
            + "Amalgamate) or deposits (DepositChecking only); TATP mix: standard (7 types) or read-update (without "
            + "InsertCallForwarding, DeleteCallForwarding) (default: ${DEFAULT-VALUE}).")
    String mix;

    @Accepts(names = OptionChecks.Systems.class)
    @Option(names = "--system", split = ",", defaultValue = "scythe",
        description = "scythe (the default), hazelcast (SmallBank over Hazelcast's own TWO_PHASE transactions on "
            + "--memory-nodes embedded members, client threads = --clients), or scythe,hazelcast: both, one report, "
            + "with the throughput ratios.")
    List<String> system;

    @Accepts(min = "1")
    @Option(names = "--subscribers", defaultValue = "100000",
        description = "TATP subscribers (default: ${DEFAULT-VALUE}, FORD's).")
    long subscribers;

    @Accepts(names = OptionChecks.YcsbProfiles.class)
    @Option(names = "--ycsb-profile", defaultValue = "standard",
        description = "YCSB profile: standard (4 keys, read:write 3:7, Zipf), write-only (4 keys, all written) or "
            + "hot-area (RCC: 10 keys, 20 %% written, 0.1 %% of the keys hot); --ops and --write-ratio override it "
            + "(default: ${DEFAULT-VALUE}).")
    String ycsbProfile;

    @Accepts(min = "0", max = "1")
    @Option(names = "--hot-probability", defaultValue = "0.1",
        description = "[ycsb hot-area] Probability that an operation visits the hot area (RCC's Hot Access "
            + "Probability; default: ${DEFAULT-VALUE}).")
    double hotProbability;

    @Accepts(min = "1")
    @Option(names = "--warehouses", defaultValue = "10",
        description = "TPC-C warehouses (default: ${DEFAULT-VALUE}).")
    int warehouses;

    @Accepts(min = "1")
    @Option(names = "--customers", defaultValue = "3000",
        description = "TPC-C customers per district (scale knob; default: the standard's ${DEFAULT-VALUE}).")
    int customers;

    @Accepts(min = "1")
    @Option(names = "--items", defaultValue = "100000",
        description = "TPC-C items (scale knob; default: the standard's ${DEFAULT-VALUE}).")
    int items;

    @Accepts(min = "1", max = "64")
    @Option(names = "--memory-nodes", defaultValue = "2",
        description = "Memory nodes the tables are partitioned over (default: ${DEFAULT-VALUE}).")
    int memoryNodes;

    @Accepts(min = "1")
    @Option(names = "--max-attempts", defaultValue = "1000",
        description = "Attempts per transaction before the coordinator gives up, with --on-abort retry or scythe (default: "
            + "${DEFAULT-VALUE}).")
    int maxAttempts;

    @Accepts(names = OptionChecks.OnAborts.class)
    @Option(names = "--on-abort", defaultValue = "retry", paramLabel = "retry|new|scythe",
        description = "[smallbank, ycsb, tatp, tpcc, phantom, churn] " + OptionChecks.ON_ABORT_HELP)
    String onAbort;

    @Accepts(min = "1")
    @Option(names = "--locks", defaultValue = "1000",
        description = "Lock objects (lock workload; default: ${DEFAULT-VALUE}).")
    int locks;

    @Accepts(min = "0", max = "10")
    @Option(names = "--thetas", split = ",", defaultValue = "0.5,0.7,0.9,0.99,1.2",
        description = "Zipf factors to sweep (lock workload; default: ${DEFAULT-VALUE}).")
    List<Double> thetas;

    @Accepts(min = "0s")
    @Option(names = "--hold", defaultValue = "25us",
        description = "How long a lock is held (lock workload; default: ${DEFAULT-VALUE}).")
    Duration hold;

    @Accepts(min = "1")
    @Option(names = "--records",
        description = "Records of the YCSB table (logdb and ycsb workloads; default: " + YCSB_RECORDS + "); gcl: "
            + "global cache lines, split over the memory nodes (default: " + GCL_LINES + ").")
    Long records;

    /** {@code --records}' defaults. */
    static final long YCSB_RECORDS = 1_000_000;
    static final long GCL_LINES = 12_000;

    @Accepts(min = "64", max = "1048576")
    @Option(names = "--line-bytes", defaultValue = "2048", description = "[gcl] Bytes of a global cache line, header "
        + "included (default: ${DEFAULT-VALUE}).")
    int lineBytes;

    @Accepts(min = "0")
    @Option(names = "--frames", defaultValue = "0", description = "[gcl] Frames of each compute-node loop's SELCC "
        + "cache (the system property scythe.selcc.cacheFrames for the run; 0: the module's default, "
        + io.scythe.txn.selcc.SelccModule.DEFAULT_CACHE_FRAMES + ") (default: ${DEFAULT-VALUE}).")
    int frames;

    @picocli.CommandLine.Mixin
    GclOptions gcl = new GclOptions();

    @Accepts(min = "1", max = "10000")
    @Option(names = "--ops",
        description = "Keys per YCSB transaction (default: the --ycsb-profile's, 4 or 10).")
    Integer ops;

    @Accepts(min = "0", max = "1")
    @Option(names = "--write-ratio",
        description = "Share of a YCSB transaction's keys that it writes: 0.7 is read:write 3:7, 1 write-only "
            + "(default: the --ycsb-profile's); gcl: the share of accesses that write (default: 0.7, as the "
            + "simulator's).")
    Double writeRatio;

    @Accepts(min = "1", max = "1048576")
    @Option(names = "--sizes", split = ",", defaultValue = "16,64,256,512,1024,4096",
        description = "[rrpc] Reply sizes in bytes (default: ${DEFAULT-VALUE}).")
    List<Integer> sizes;

    @Accepts(names = OptionChecks.Peers.class)
    @Option(names = "--peer", defaultValue = "mn", paramLabel = "mn|cn",
        description = "[rrpc] Who serves the calls: mn (RRPC against plain RPC to a memory node) or cn (calls to "
            + "another compute node's paired loop beside the same calls to a memory node, with their ratio) "
            + "(default: ${DEFAULT-VALUE}).")
    String peer;

    @Accepts(exists = true)
    @Option(names = "--fabric-config", paramLabel = "FILE",
        description = "[verbs] Cost model from a YAML/JSON file (see conf/fabric/); overrides --profile.")
    Path fabricConfig;

    @Accepts(min = "1", max = "65536")
    @Option(names = "--window", defaultValue = "64",
        description = "[verbs] Verbs kept outstanding by the event loop (default: ${DEFAULT-VALUE}).")
    int window;

    @Accepts(min = "1", max = "65536")
    @Option(names = "--batch", defaultValue = "16",
        description = "[verbs] Verbs per doorbell batch; 1 measures unbatched only (default: ${DEFAULT-VALUE}).")
    int batch;

    @Accepts(names = OptionChecks.OnOff.class)
    @Option(names = "--redo-log", defaultValue = "on", paramLabel = "on|off",
        description = "[smallbank, ycsb, tatp, tpcc] Write a redo record before each commit's write-back (default: "
            + "${DEFAULT-VALUE}).")
    String redoLog;

    @Accepts(min = "0", max = "63")
    @Option(names = "--replicas", defaultValue = "0", paramLabel = "K",
        description = "[smallbank, ycsb, tatp, tpcc, phantom, churn] Backup copies of every partition: each "
            + "write-back and redo record goes to the primary and K backups, on the K memory nodes after it; K below "
            + "--memory-nodes (3-way: 2). Every backup is compared with its primary after each run (default: "
            + "${DEFAULT-VALUE}).")
    int replicas;

    @Accepts(names = OptionChecks.Lookups.class)
    @Option(names = "--lookup", defaultValue = "rpc", paramLabel = "rpc|onesided",
        description = "[smallbank, ycsb, tatp, tpcc, phantom, churn] How a lookup that misses a loop's address cache "
            + "reaches the index: rpc (the memory node's CPU walks it) or onesided (READs of the index) (default: "
            + "${DEFAULT-VALUE}).")
    String lookup;

    @Accepts(names = OptionChecks.IdlePolicies.class)
    @Option(names = "--idle", defaultValue = "busy-spin",
        description = "[verbs] Bridge idle policy: busy-spin or backoff (default: ${DEFAULT-VALUE}).")
    String idle;

    private io.scythe.bench.micro.RrpcWorkload.Peer rrpcPeer() {
        try {
            return io.scythe.bench.micro.RrpcWorkload.Peer.valueOf(peer.toUpperCase(Locale.ROOT));
        } catch (final IllegalArgumentException e) {
            throw new IllegalArgumentException("--peer " + peer + ": mn or cn");
        }
    }

    @Override
    public Integer call() throws Exception {
        final BenchReport report;
        io.scythe.bench.micro.BenchNodes.loops(loops);
        if (clients == null) {
            clients = List.of("smallbank", "ycsb", "tatp", "tpcc").contains(workload.toLowerCase(Locale.ROOT))
                ? List.of(8, 32, 64) : List.of(64);
        }
        final boolean gcl = "gcl".equalsIgnoreCase(workload);
        if (!cns.equals(List.of(1)) && !OLTP.contains(workload.toLowerCase(Locale.ROOT)) && !gcl) {
            throw new IllegalArgumentException("--cns runs transactions on several compute nodes: only the "
                + String.join(", ", OLTP) + " workloads run any (and gcl, line accesses)");
        }
        if (records == null) {
            records = gcl ? GCL_LINES : YCSB_RECORDS;
        }
        if (history != null && !OLTP.contains(workload.toLowerCase(Locale.ROOT))) {
            throw new IllegalArgumentException("--history records transactions: only the " + String.join(", ", OLTP)
                + " workloads run any");
        }
        final boolean hazelcast = system.stream().anyMatch("hazelcast"::equalsIgnoreCase);
        if (!system.stream().allMatch(s -> "scythe".equalsIgnoreCase(s) || "hazelcast".equalsIgnoreCase(s))
            || hazelcast && !"smallbank".equalsIgnoreCase(workload)) {
            System.err.println("scythe bench: --system " + String.join(",", system) + " is not available for "
                + "workload " + workload + "; available: scythe, and hazelcast for smallbank");
            return 2;
        }
        if (hazelcast) {
            final BenchReport baseline = new io.scythe.bench.hazelcast.HazelcastSmallBank(new io.scythe.bench
                .hazelcast.HazelcastSmallBank.Options(clients, memoryNodes, maxAttempts, duration.toMillis(),
                warmup.toMillis(), seed, 10_000), accounts, theta, mix, System.out).run();
            if (system.size() == 1) {
                return finish(baseline);
            }
            return finish(io.scythe.bench.hazelcast.HazelcastSmallBank.compared(
                new io.scythe.bench.micro.OltpWorkload(new io.scythe.bench.micro.OltpWorkload.Options(protocols,
                    clients, memoryNodes, maxAttempts, costModel("cx5"), duration.toMillis(), warmup.toMillis(), seed),
                    oltpSpec(), System.out).run(), baseline, System.out));
        }
        switch (workload.toLowerCase(Locale.ROOT)) {
            case "verbs":
                report = runVerbs();
                break;
            case "rrpc":
                report = new io.scythe.bench.micro.RrpcWorkload(new io.scythe.bench.micro.RrpcWorkload.Options(
                    sizes, clients, costModel("cx5"), duration.toMillis(), warmup.toMillis(), rrpcPeer()),
                    System.out).run();
                break;
            case "logdb":
                report = new io.scythe.bench.micro.LogDbWorkload(new io.scythe.bench.micro.LogDbWorkload.Options(
                    records, clients, costModel("cx5"), duration.toMillis(), warmup.toMillis()), System.out).run();
                break;
            case "lock":
                report = new io.scythe.bench.micro.LockWorkload(new io.scythe.bench.micro.LockWorkload.Options(
                    clients.get(0), locks, thetas, hold.toNanos(), costModel("cx5"), duration.toMillis(), warmup.toMillis(),
                    seed), System.out).run();
                break;
            case "smallbank":
            case "ycsb":
            case "tatp":
            case "tpcc":
            case "phantom":
            case "churn":
                report = new io.scythe.bench.micro.OltpWorkload(new io.scythe.bench.micro.OltpWorkload.Options(
                    protocols, clients, memoryNodes, maxAttempts, costModel("cx5"), duration.toMillis(),
                    warmup.toMillis(), seed, history), oltpSpec(), System.out)
                    .onAbort(io.scythe.txn.OnAbort.named(onAbort))
                    .redoLog(onOff("--redo-log", redoLog)).replicas(replicas(replicas, memoryNodes))
                    .lookup(SimCommand.lookupMode(lookup).label())
                    .computeNodes(cns).routing(io.scythe.routing.RoutingMode.named(routing)).shards(shards)
                    .moveShardEvery(moveShardEvery.toMillis())
                    .progress(quiet ? null : io.scythe.bench.report.ProgressLine.toStderr()).run();
                break;
            case "gcl":
                report = runGcl();
                break;
            case "tso":
                report = new io.scythe.bench.micro.TsoWorkload(new io.scythe.bench.micro.TsoWorkload.Options(
                    clients, costModel("cx5"), duration.toMillis(), warmup.toMillis()), System.out).run();
                break;
            default:
                System.err.println("scythe bench: unknown workload '" + workload + "'; available: "
                    + String.join(", ", WORKLOADS));
                return 2;
        }
        return finish(report);
    }

    /** GAM's micro-benchmark on the embedded cluster's compute nodes, as the simulator's {@code --workload gcl}. */
    private BenchReport runGcl() throws Exception {
        if (cns.size() != 1) {
            throw new IllegalArgumentException("--cns " + cns + ": the gcl workload runs one compute-node count");
        }
        if (protocols.equals(List.of("scythe", "ford-occ"))) {
            protocols = io.scythe.bench.workload.GclSpec.PROTOCOLS; // the lines on SELCC's cache and on SEL
        }
        return new io.scythe.bench.micro.GclWorkload(new io.scythe.bench.micro.GclWorkload.Options(protocols, clients,
            memoryNodes, cns.get(0), costModel("cx5"), duration.toMillis(), warmup.toMillis(), seed, records,
            lineBytes, frames, 1 - (writeRatio == null ? 0.7 : writeRatio), theta, gcl.sharingRatio, gcl.locality,
            gcl.accessHold.toNanos()), System.out).run();
    }

    /** {@code --replicas} checked against the memory nodes: one line naming the option when it is out of range. */
    static int replicas(final int k, final int memoryNodes) {
        try {
            io.scythe.storage.BackupTables.check(k, memoryNodes);
        } catch (final IllegalArgumentException e) {
            throw new IllegalArgumentException("--replicas " + k + ": must be within [0, "
                + Math.min(io.scythe.storage.BackupTables.MAX_BACKUPS, memoryNodes - 1) + "] with --memory-nodes "
                + memoryNodes + " (each copy of a partition needs a memory node of its own)", e);
        }
        return k;
    }

    private static boolean onOff(final String option, final String value) {
        if ("on".equalsIgnoreCase(value) || "off".equalsIgnoreCase(value)) {
            return "on".equalsIgnoreCase(value);
        }
        throw new picocli.CommandLine.ParameterException(new picocli.CommandLine(new BenchCommand()), option + "="
            + value + ": expected on or off");
    }

    private io.scythe.bench.workload.OltpSpec oltpSpec() {
        switch (workload.toLowerCase(Locale.ROOT)) {
            case "ycsb":
                return io.scythe.bench.workload.YcsbSpec.profile(ycsbProfile, records, theta, ops, writeRatio,
                    hotProbability);
            case "tatp":
                return new io.scythe.bench.workload.TatpSpec(subscribers, mix, seed);
            case "tpcc":
                return new io.scythe.bench.workload.TpccSpec(new io.scythe.bench.workload.Tpcc.Scale(warehouses,
                    customers, items, io.scythe.bench.workload.TpccSpec.headroomFor(
                    (duration.toMillis() + warmup.toMillis()) / 1000.0)), theta, seed);
            case "phantom":
            case "churn":
                return new io.scythe.bench.workload.KeyChurnSpec(io.scythe.bench.workload.KeyChurnSpec.shapeNamed(
                    workload), keys);
            default:
                return new io.scythe.bench.workload.SmallBankSpec(accounts, theta, mix);
        }
    }

    /** Writes the report if asked and returns the exit code: 1 when an invariant was violated. */
    private int finish(final BenchReport report) throws Exception {
        final Path dir = out != null ? out : defaultOut(workload, java.time.LocalDateTime.now());
        final Path written = report.write(dir);
        System.out.println("wrote " + written + " and " + dir.resolve(io.scythe.bench.report.HtmlReport.REPORT_FILE));
        final boolean ok = report.runs().stream().allMatch(r -> r.toJson().getBoolean("invariants_ok", true));
        if (!ok) {
            System.err.println("scythe bench: an invariant was violated (see invariants_ok in the results)");
        }
        return ok ? 0 : 1;
    }

    /** Where results go without --out: results/<workload>-<yyyyMMdd-HHmmss>, under the working directory. */
    static Path defaultOut(final String workload, final java.time.LocalDateTime now) {
        return Path.of("results", workload.toLowerCase(Locale.ROOT) + "-"
            + now.format(java.time.format.DateTimeFormatter.ofPattern("yyyyMMdd-HHmmss")));
    }

    private BenchReport runVerbs() throws Exception {
        final List<Opcode> opcodes = new ArrayList<>();
        for (final String verb : verbs) {
            opcodes.add(verbOf(verb));
        }
        final CostModel model = costModel("zero");
        final VerbsWorkload.Options options = new VerbsWorkload.Options(providers, opcodes, model, window, batch,
            duration.toMillis(), warmup.toMillis(), seed, idle);
        System.out.printf("verbs: providers %s, cost model %s, %d outstanding, batches of %d, %d ms per run%n",
            providers, model.label(), window, batch, duration.toMillis());
        return new VerbsWorkload(options, System.out).run();
    }

    /** The cost model asked for: --fabric-config, else --profile, else the workload's default profile. */
    private CostModel costModel(final String defaultProfile) throws Exception {
        if (fabricConfig != null) {
            return readCostModel(fabricConfig);
        }
        return CostModel.profile(profile == null ? defaultProfile : profile);
    }

    static CostModel readCostModel(final Path file) throws Exception {
        final Vertx vertx = Vertx.vertx();
        try {
            return CostModel.fromJson(ConfigFiles.read(vertx, file).await(30, TimeUnit.SECONDS));
        } finally {
            vertx.close().await(30, TimeUnit.SECONDS);
        }
    }

    private static Opcode verbOf(final String name) {
        switch (name.toLowerCase(Locale.ROOT)) {
            case "read":
                return Opcode.READ;
            case "write":
                return Opcode.WRITE;
            case "cas":
                return Opcode.COMPARE_AND_SWAP;
            case "faa":
                return Opcode.FETCH_AND_ADD;
            default:
                throw new IllegalArgumentException("unknown verb '" + name + "'; choose from read, write, cas, faa");
        }
    }
}
