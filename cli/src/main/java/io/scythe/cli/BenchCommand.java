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
        + "DIR/results.json with --out DIR.",
        "Workloads: smallbank (the default: SmallBank on an embedded cluster, --protocols one after another on "
            + "identical data, money conservation checked); ycsb (transactions of --ops keys, --write-ratio written, on the "
            + "1M-record usertable; every committed write counted); verbs (READ/WRITE/CAS/FAA through the bridge on each fabric provider, single and "
            + "doorbell-batched, beside the raw memory operation); rrpc (RRPC against a plain one-message-per-RPC "
            + "design, 16 B to 4 KiB); tso (TSO group and proxies against one FAA per request and physical "
            + "clocks, Fig. 28); logdb (bulk load of the 1M-record YCSB table, bytes per record, address lookups by RPC and by "
            + "one-sided index READs over the hash index and the skip list); lock (Takeout Lock against the CAS lock: "
            + "clients lock one of --locks objects by Zipf(theta) and hold it 25 us, Fig. 27); tpcc (TPC-C's five "
            + "transactions on --warehouses, items by Zipf(theta); consistency conditions 1-4 checked)."})
public final class BenchCommand implements Callable<Integer> {
    static final String DEFAULT_WORKLOAD = "smallbank";

    @Option(names = "--workload", defaultValue = DEFAULT_WORKLOAD, description = "Workload to run (default: "
        + "${DEFAULT-VALUE}).")
    String workload;

    @Option(names = "--out", paramLabel = "DIR", description = "Write DIR/results.json.")
    Path out;

    @Option(names = "--duration", defaultValue = "2s", description = "Measured time of each run (default: "
        + "${DEFAULT-VALUE}).")
    Duration duration;

    @Option(names = "--warmup", defaultValue = "1s", description = "Warm-up before each run (default: "
        + "${DEFAULT-VALUE}).")
    Duration warmup;

    @Option(names = "--seed", defaultValue = "1", description = "Random seed (default: ${DEFAULT-VALUE}).")
    long seed;

    @Option(names = "--providers", split = ",", defaultValue = "local,shm,tcp",
        description = "[verbs] Fabric providers to measure (default: ${DEFAULT-VALUE}).")
    List<String> providers;

    @Option(names = "--verbs", split = ",", defaultValue = "read,write,cas,faa",
        description = "[verbs] Verbs to measure: read, write, cas, faa (default: ${DEFAULT-VALUE}).")
    List<String> verbs;

    @Option(names = "--profile",
        description = "Cost-model profile: zero (pure software cost) or cx5 (ConnectX-5 timings); default zero for "
            + "verbs, cx5 for the others.")
    String profile;

    @Option(names = "--clients", split = ",",
        description = "Concurrent clients (event loops x flows); a list sweeps (default: 8,32,64 for smallbank, "
            + "64 otherwise).")
    List<Integer> clients;

    @Option(names = "--loops", defaultValue = "1",
        description = "Event loops the clients and servers of the rrpc, tso, logdb and lock workloads run on "
            + "(default: ${DEFAULT-VALUE}; on 2 cores a second busy loop leaves the JIT and GC no core).")
    int loops;

    @Option(names = "--protocols", split = ",", defaultValue = "scythe,ford-occ",
        description = "Protocols to run one after another on identical data (default: ${DEFAULT-VALUE}).")
    List<String> protocols;

    @Option(names = "--accounts", defaultValue = "100000",
        description = "SmallBank customers (default: ${DEFAULT-VALUE}).")
    long accounts;

    @Option(names = "--theta", defaultValue = "0.99",
        description = "Zipf factor over keys (default: ${DEFAULT-VALUE}).")
    double theta;

    @Option(names = "--mix", defaultValue = "standard",
        description = "SmallBank mix: standard (6 types), scythe (Balance, DepositChecking, TransactSaving, "
            + "Amalgamate) or deposits (DepositChecking only; default: ${DEFAULT-VALUE}).")
    String mix;

    @Option(names = "--warehouses", defaultValue = "10",
        description = "TPC-C warehouses (default: ${DEFAULT-VALUE}).")
    int warehouses;

    @Option(names = "--customers", defaultValue = "3000",
        description = "TPC-C customers per district (scale knob; default: the standard's ${DEFAULT-VALUE}).")
    int customers;

    @Option(names = "--items", defaultValue = "100000",
        description = "TPC-C items (scale knob; default: the standard's ${DEFAULT-VALUE}).")
    int items;

    @Option(names = "--memory-nodes", defaultValue = "2",
        description = "Memory nodes the tables are partitioned over (default: ${DEFAULT-VALUE}).")
    int memoryNodes;

    @Option(names = "--max-attempts", defaultValue = "1000",
        description = "Attempts per transaction before the coordinator gives up (default: ${DEFAULT-VALUE}).")
    int maxAttempts;

    @Option(names = "--locks", defaultValue = "1000",
        description = "Lock objects (lock workload; default: ${DEFAULT-VALUE}).")
    int locks;

    @Option(names = "--thetas", split = ",", defaultValue = "0.5,0.7,0.9,0.99,1.2",
        description = "Zipf factors to sweep (lock workload; default: ${DEFAULT-VALUE}).")
    List<Double> thetas;

    @Option(names = "--hold", defaultValue = "25us",
        description = "How long a lock is held (lock workload; default: ${DEFAULT-VALUE}).")
    Duration hold;

    @Option(names = "--records", defaultValue = "1000000",
        description = "Records of the YCSB table (logdb and ycsb workloads; default: ${DEFAULT-VALUE}).")
    long records;

    @Option(names = "--ops", defaultValue = "4",
        description = "Keys per YCSB transaction (default: ${DEFAULT-VALUE}).")
    int ops;

    @Option(names = "--write-ratio", defaultValue = "0.7",
        description = "Share of a YCSB transaction's keys that it writes: 0.7 is read:write 3:7, 1 write-only "
            + "(default: ${DEFAULT-VALUE}).")
    double writeRatio;

    @Option(names = "--sizes", split = ",", defaultValue = "16,64,256,512,1024,4096",
        description = "[rrpc] Reply sizes in bytes (default: ${DEFAULT-VALUE}).")
    List<Integer> sizes;

    @Option(names = "--fabric-config", paramLabel = "FILE",
        description = "[verbs] Cost model from a YAML/JSON file (see conf/fabric/); overrides --profile.")
    Path fabricConfig;

    @Option(names = "--window", defaultValue = "64",
        description = "[verbs] Verbs kept outstanding by the event loop (default: ${DEFAULT-VALUE}).")
    int window;

    @Option(names = "--batch", defaultValue = "16",
        description = "[verbs] Verbs per doorbell batch; 1 measures unbatched only (default: ${DEFAULT-VALUE}).")
    int batch;

    @Option(names = "--idle", defaultValue = "busy-spin",
        description = "[verbs] Bridge idle policy: busy-spin or backoff (default: ${DEFAULT-VALUE}).")
    String idle;

    @Override
    public Integer call() throws Exception {
        final BenchReport report;
        io.scythe.bench.micro.BenchNodes.loops(loops);
        if (clients == null) {
            clients = "smallbank".equalsIgnoreCase(workload) || "ycsb".equalsIgnoreCase(workload)
                || "tpcc".equalsIgnoreCase(workload) ? List.of(8, 32, 64) : List.of(64);
        }
        switch (workload.toLowerCase(Locale.ROOT)) {
            case "verbs":
                report = runVerbs();
                break;
            case "rrpc":
                report = new io.scythe.bench.micro.RrpcWorkload(new io.scythe.bench.micro.RrpcWorkload.Options(
                    sizes, clients, costModel("cx5"), duration.toMillis(), warmup.toMillis()), System.out).run();
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
            case "tpcc":
                report = new io.scythe.bench.micro.OltpWorkload(new io.scythe.bench.micro.OltpWorkload.Options(
                    protocols, clients, memoryNodes, maxAttempts, costModel("cx5"), duration.toMillis(),
                    warmup.toMillis(), seed), new io.scythe.bench.workload.TpccSpec(new io.scythe.bench.workload
                    .Tpcc.Scale(warehouses, customers, items, io.scythe.bench.workload.TpccSpec.headroomFor(
                    (duration.toMillis() + warmup.toMillis()) / 1000.0)), theta, seed), System.out).run();
                break;
            case "smallbank":
            case "ycsb":
                report = new io.scythe.bench.micro.OltpWorkload(new io.scythe.bench.micro.OltpWorkload.Options(
                    protocols, clients, memoryNodes, maxAttempts, costModel("cx5"), duration.toMillis(),
                    warmup.toMillis(), seed), "ycsb".equalsIgnoreCase(workload)
                    ? new io.scythe.bench.workload.YcsbSpec(records, theta, ops, writeRatio)
                    : new io.scythe.bench.workload.SmallBankSpec(accounts, theta, mix), System.out).run();
                break;
            case "tso":
                report = new io.scythe.bench.micro.TsoWorkload(new io.scythe.bench.micro.TsoWorkload.Options(
                    clients, costModel("cx5"), duration.toMillis(), warmup.toMillis()), System.out).run();
                break;
            default:
                System.err.println("scythe bench: unknown workload '" + workload + "'; available: verbs, rrpc, tso, logdb, lock, "
                    + "smallbank, ycsb, tpcc");
                return 2;
        }
        if (out != null) {
            System.out.println("wrote " + report.write(out));
        }
        final boolean ok = report.runs().stream().allMatch(r -> r.toJson().getBoolean("invariants_ok", true));
        if (!ok) {
            System.err.println("scythe bench: an invariant was violated (see invariants_ok in the results)");
        }
        return ok ? 0 : 1;
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
