package io.scythe.bench.micro;

import io.netty.util.concurrent.FastThreadLocal;
import io.scythe.bench.report.BenchReport;
import io.scythe.bench.report.RunResult;
import io.scythe.txn.runtime.LoopTimers;
import io.scythe.bridge.RdmaChannel;
import io.scythe.fabric.CostModel;
import io.scythe.fabric.MemoryKind;
import io.scythe.fabric.Nic;
import io.scythe.fabric.QpOptions;
import io.scythe.fabric.RemoteRegion;
import io.scythe.rrpc.RpcServer;
import io.scythe.rrpc.RrpcClient;
import io.scythe.rrpc.RrpcOptions;
import io.scythe.tso.DirectTsoSource;
import io.scythe.tso.PhysicalClockOracle;
import io.scythe.tso.ProxyTsoSource;
import io.scythe.txn.runtime.TimestampOracle;
import io.scythe.tso.TsoGroup;
import io.scythe.tso.TsoProxy;
import io.scythe.tso.TsoService;
import io.vertx.core.Future;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;

import java.io.PrintStream;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Supplier;

/**
 * {@code scythe bench --workload tso}: timestamps per second and latency from 1 to 128 clients (Scythe Fig. 28) for
 * the RDMA-friendly TSO — a TSO group per event loop fetching through two proxies, or straight from the counter in
 * NIC device memory — against one FAA per request (on device memory and on host memory) and FaRMv2-style physical
 * clocks with a 22 us uncertainty wait. All variants run on one cluster and are measured alternately.
 */
public final class TsoWorkload {
    static final List<String> VARIANTS = List.of("tso-group+proxy", "tso-group-direct", "faa-per-request-device",
        "faa-per-request-host", "physical-clock");

    /** What to run. */
    public record Options(List<Integer> clients, CostModel model, long durationMs, long warmupMs) {
        JsonObject toJson() {
            return new JsonObject().put("clients", new JsonArray(clients)).put("cost_model", model.toJson())
                .put("duration_ms", durationMs).put("warmup_ms", warmupMs).put("variants", new JsonArray(VARIANTS))
                .put("uncertainty_ns", PhysicalClockOracle.DEFAULT_UNCERTAINTY_NS);
        }
    }

    private final Options options;
    private final PrintStream out;

    public TsoWorkload(final Options options, final PrintStream out) {
        this.options = options;
        this.out = out;
    }

    public BenchReport run() throws Exception {
        final BenchReport report = new BenchReport("tso", options.toJson());
        try (BenchNodes nodes = new BenchNodes(options.model(), BenchNodes.loops())) {
            final Nic tsoNic = nodes.fabric.attachNow("tso");
            final TsoService service = new TsoService(nodes.vertx, tsoNic, List.of(), 1000);
            final RemoteRegion device = service.start().await(30, java.util.concurrent.TimeUnit.SECONDS);
            final RemoteRegion host = tsoNic.register("tso.host", 64, MemoryKind.HOST).describe();
            for (int p = 1; p <= 2; p++) {
                final Nic proxyNic = nodes.fabric.attachNow("proxy" + p);
                final RpcServer server = new RpcServer(nodes.vertx, proxyNic, new RrpcOptions());
                final TsoProxy proxy = new TsoProxy("proxy" + p, device, channelTo(proxyNic, "tso"));
                BenchNodes.on(nodes.loops.get((p - 1) % nodes.loops.size()), () -> proxy.register(nodes.vertx, server)
                    .compose(v -> server.start()));
            }
            final Nic cn = nodes.fabric.attachNow("cn");
            final RrpcClient rrpc = new RrpcClient(nodes.vertx, cn, new RrpcOptions());
            final Supplier<Future<RdmaChannel>> toTso = () -> rrpc.oneSided("tso");
            final Map<String, List<TsoGroup>> groups = new java.util.concurrent.ConcurrentHashMap<>();
            final FastThreadLocal<Map<String, TimestampOracle>> oracles = new FastThreadLocal<>() {
                @Override
                protected Map<String, TimestampOracle> initialValue() {
                    final Map<String, TimestampOracle> m = new HashMap<>();
                    m.put("tso-group+proxy", new TsoGroup(1024,
                        new ProxyTsoSource("proxy1", () -> rrpc.rocket("proxy1")),
                        new ProxyTsoSource("proxy2", () -> rrpc.rocket("proxy2"))));
                    m.put("tso-group-direct", new TsoGroup(1024, new DirectTsoSource(device, toTso)));
                    m.put("faa-per-request-device", TsoGroup.perRequest(new DirectTsoSource(device, toTso)));
                    m.put("faa-per-request-host", TsoGroup.perRequest(new DirectTsoSource(host, toTso)));
                    m.put("physical-clock", new PhysicalClockOracle(LoopTimers.current(),
                        PhysicalClockOracle.DEFAULT_UNCERTAINTY_NS, (int) (Thread.currentThread().getId() & 0xff)));
                    for (final String grouped : List.of("tso-group+proxy", "tso-group-direct")) {
                        groups.computeIfAbsent(grouped, g -> new java.util.concurrent.CopyOnWriteArrayList<>())
                            .add((TsoGroup) m.get(grouped));
                    }
                    return m;
                }
            };
            for (final int clients : options.clients()) {
                final Map<String, Double> rates = new LinkedHashMap<>();
                for (final String variant : VARIANTS) {
                    final long[] before = groupCounts(groups.get(variant));
                    final ClosedLoop.Result r = ClosedLoop.run(nodes.loops, clients, options.warmupMs(),
                        options.durationMs(), () -> oracles.get().get(variant).next());
                    rates.put(variant, r.perSecond());
                    final RunResult run = new RunResult(variant, clients).measured(r.completed(), r.failed(),
                        r.elapsedNs() / 1e9, r.latencyNs()).invariantsOk(r.failed() == 0)
                        .put("timestamps_per_s", RunResult.round(r.perSecond(), 1));
                    final long[] after = groupCounts(groups.get(variant));
                    // Timestamps per fetch from the counter: what the TSO service's NIC is spared. One FAA per
                    // request is 1 by definition; the physical clock fetches nothing.
                    final double perFetch = variant.startsWith("tso-group") && after[0] > before[0]
                        ? (double) (after[1] - before[1]) / (after[0] - before[0]) : variant.startsWith("faa") ? 1 : 0;
                    run.put("timestamps_per_fetch", RunResult.round(perFetch, 2));
                    if (perFetch > 0) {
                        run.put("counter_fetches_per_s", RunResult.round(r.perSecond() / perFetch, 1));
                    }
                    if (!variant.startsWith("tso-group")) {
                        run.put("tso_group_proxy_over_this", RunResult.round(rates.get("tso-group+proxy")
                            / r.perSecond(), 2));
                    }
                    report.add(run);
                    out.printf("%-24s clients %4d %12.0f timestamps/s  p50 %8.2f us  p99 %8.2f us  %6.1f per fetch%n",
                        variant, clients, r.perSecond(), r.latencyNs().getValueAtPercentile(50) / 1000.0,
                        r.latencyNs().getValueAtPercentile(99) / 1000.0, perFetch);
                }
                out.printf("  clients %d: group+proxy is %.1fx FAA-per-request on device memory, %.1fx on host "
                        + "memory, %.1fx physical clocks%n", clients,
                    rates.get("tso-group+proxy") / rates.get("faa-per-request-device"),
                    rates.get("tso-group+proxy") / rates.get("faa-per-request-host"),
                    rates.get("tso-group+proxy") / rates.get("physical-clock"));
            }
            service.stop();
        }
        return report;
    }

    /** Fetches and timestamps handed out by {@code groups} so far (their loops own them; read racily, for a report). */
    private static long[] groupCounts(final List<TsoGroup> groups) {
        long fetches = 0;
        long handedOut = 0;
        for (final TsoGroup g : groups == null ? List.<TsoGroup>of() : groups) {
            fetches += g.groups();
            handedOut += g.handedOut();
        }
        return new long[] {fetches, handedOut};
    }

    /** A one-sided channel from {@code nic} to {@code node}, one per event loop, connected on first use. */
    static Supplier<Future<RdmaChannel>> channelTo(final Nic nic, final String node) {
        final FastThreadLocal<Future<RdmaChannel>> channels = new FastThreadLocal<>();
        return () -> {
            Future<RdmaChannel> channel = channels.getIfExists();
            if (channel == null || channel.failed()) {
                channel = RdmaChannel.connect(nic, node, new QpOptions());
                channels.set(channel);
            }
            return channel;
        };
    }
}
