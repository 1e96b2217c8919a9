package io.scythe.bench.micro;

import io.netty.util.concurrent.FastThreadLocal;
import io.scythe.bench.report.BenchReport;
import io.scythe.bench.report.RunResult;
import io.scythe.fabric.CostModel;
import io.scythe.fabric.Nic;
import io.scythe.rrpc.RpcServer;
import io.scythe.rrpc.RrpcClient;
import io.scythe.rrpc.RrpcOptions;
import io.scythe.storage.IndexKind;
import io.scythe.storage.LogDb;
import io.scythe.storage.Table;
import io.scythe.storage.TableSchema;
import io.scythe.storage.remote.LogDbService;
import io.scythe.storage.remote.RemoteTable;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import org.agrona.concurrent.UnsafeBuffer;

import java.io.PrintStream;
import java.util.List;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicLong;

/**
 * {@code scythe bench --workload logdb}: LogDB on one memory node. Bulk-loads the YCSB table of Scythe §5.1 (8-byte
 * keys, 40-byte values) under each index (hash, and the skip list the paper uses for YCSB), reports load time and
 * registered bytes per record, then measures uncached address lookups from a compute node by RPC and by one-sided
 * index READs (the two ways FORD and RCC fill their address caches), with READs per lookup.
 */
public final class LogDbWorkload {
    /** What to run. */
    public record Options(long records, List<Integer> clients, CostModel model, long durationMs, long warmupMs) {
        JsonObject toJson() {
            return new JsonObject().put("records", records).put("value_bytes", 40).put("clients", new JsonArray(clients))
                .put("cost_model", model.toJson()).put("duration_ms", durationMs).put("warmup_ms", warmupMs);
        }
    }

    private final Options options;
    private final PrintStream out;

    public LogDbWorkload(final Options options, final PrintStream out) {
        this.options = options;
        this.out = out;
    }

    public BenchReport run() throws Exception {
        final BenchReport report = new BenchReport("logdb", options.toJson());
        try (BenchNodes nodes = new BenchNodes(options.model(), BenchNodes.loops())) {
            final Nic mn = nodes.fabric.attachNow("mn");
            final LogDb db = new LogDb(mn);
            final Table[] tables = new Table[IndexKind.values().length];
            final UnsafeBuffer value = new UnsafeBuffer(new byte[40]);
            for (final IndexKind kind : IndexKind.values()) {
                final long start = System.nanoTime();
                final Table t = db.create(TableSchema.fixed(kind.ordinal() + 1, "usertable-" + kind.name()
                    .toLowerCase(), 40, options.records()).withIndex(kind));
                for (long k = 0; k < options.records(); k++) {
                    value.putLong(0, k);
                    if (t.insert(k, value, 0, 40, 1) <= 0) {
                        throw new IllegalStateException("bulk load of " + t.schema().name() + " failed at key " + k);
                    }
                }
                final double seconds = (System.nanoTime() - start) / 1e9;
                final double perRecord = (double) t.recordBytes() / options.records();
                final double withVersions = (double) t.registeredBytes() / options.records();
                tables[kind.ordinal()] = t;
                report.add(new RunResult("load-" + kind.name().toLowerCase(), 1)
                    .put("records", options.records()).put("load_s", RunResult.round(seconds, 3))
                    .put("records_per_s", RunResult.round(options.records() / seconds, 0))
                    .put("bytes_per_record", RunResult.round(perRecord, 1))
                    .put("bytes_per_record_with_version_pool", RunResult.round(withVersions, 1))
                    .invariantsOk(t.size() == options.records()));
                out.printf("load %-9s %,d records in %.2f s (%,.0f records/s), %.1f registered bytes per record "
                        + "(%.1f with the pool of older versions, %d slots)%n", kind.name().toLowerCase(),
                    options.records(), seconds, options.records() / seconds, perRecord, withVersions,
                    t.schema().versionCapacity());
            }
            final RpcServer server = new RpcServer(nodes.vertx, mn, new RrpcOptions());
            new LogDbService(db).register(server);
            BenchNodes.on(nodes.loops.get(0), server::start);
            final RrpcClient rrpc = new RrpcClient(nodes.vertx, nodes.fabric.attachNow("cn"), new RrpcOptions());
            final AtomicLong lookups = new AtomicLong();
            for (final IndexKind kind : IndexKind.values()) {
                final Table table = tables[kind.ordinal()];
                final List<RemoteTable> remotes = new java.util.concurrent.CopyOnWriteArrayList<>();
                final FastThreadLocal<RemoteTable> remote = new FastThreadLocal<>() {
                    @Override
                    protected RemoteTable initialValue() {
                        final RemoteTable t = new RemoteTable(table.describe(), () -> rrpc.oneSided("mn"),
                            () -> rrpc.rocket("mn"));
                        remotes.add(t);
                        return t;
                    }
                };
                for (final int clients : options.clients()) {
                    for (final RemoteTable.LookupMode mode : RemoteTable.LookupMode.values()) {
                        final long readsBefore = remotes.stream().mapToLong(RemoteTable::reads).sum();
                        final long rpcsBefore = remotes.stream().mapToLong(RemoteTable::rpcs).sum();
                        lookups.set(0);
                        final ClosedLoop.Result r = ClosedLoop.run(nodes.loops, clients, options.warmupMs(),
                            options.durationMs(), () -> {
                                final RemoteTable t = remote.get();
                                final long key = ThreadLocalRandom.current().nextLong(options.records());
                                // Uncached on purpose: the cost of filling the address cache.
                                return (mode == RemoteTable.LookupMode.RPC ? t.lookupRpc(key) : t.lookupOneSided(key))
                                    .map(pointer -> {
                                        lookups.incrementAndGet();
                                        if (pointer == 0) {
                                            throw new IllegalStateException("key " + key + " not found");
                                        }
                                        return pointer;
                                    });
                            });
                        // Over warm-up and run alike; counters are read racily after the run has drained.
                        final double readsPer = (double) (remotes.stream().mapToLong(RemoteTable::reads).sum()
                            - readsBefore) / Math.max(1, lookups.get());
                        final double rpcsPer = (double) (remotes.stream().mapToLong(RemoteTable::rpcs).sum()
                            - rpcsBefore) / Math.max(1, lookups.get());
                        final String name = kind.name().toLowerCase() + "-" + mode.name().toLowerCase().replace('_', '-');
                        report.add(new RunResult(name, clients).measured(r.completed(), r.failed(),
                            r.elapsedNs() / 1e9, r.latencyNs()).invariantsOk(r.failed() == 0)
                            .put("lookups_per_s", RunResult.round(r.perSecond(), 1))
                            .put("reads_per_lookup", RunResult.round(readsPer, 2))
                            .put("rpcs_per_lookup", RunResult.round(rpcsPer, 2)));
                        out.printf("lookup %-20s clients %4d %10.0f lookups/s  p50 %7.2f us  p99 %7.2f us  "
                                + "%.2f READs + %.2f RPCs per lookup%n", name, clients, r.perSecond(),
                            r.latencyNs().getValueAtPercentile(50) / 1000.0,
                            r.latencyNs().getValueAtPercentile(99) / 1000.0, readsPer, rpcsPer);

                    }
                }
            }
        }
        return report;
    }
}
