package io.scythe.bench.micro;

import io.scythe.bench.report.BenchReport;
import io.scythe.bench.report.RunResult;
import io.scythe.fabric.CostModel;
import io.scythe.fabric.MemoryKind;
import io.scythe.fabric.MemoryRegion;
import io.scythe.fabric.Nic;
import io.scythe.rrpc.CnPeers;
import io.scythe.rrpc.RpcServer;
import io.scythe.rrpc.RrpcClient;
import io.scythe.rrpc.RrpcOptions;
import io.vertx.core.Context;
import io.vertx.core.Future;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import org.agrona.concurrent.UnsafeBuffer;

import java.io.PrintStream;
import java.util.ArrayDeque;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * {@code scythe bench --workload rrpc}: RRPC (Scythe §4.6) against a plain one-message-per-RPC design on the same
 * fabric, one memory node serving a GET that returns {@code size} bytes. RRPC packs the calls of a round into
 * 512-byte buckets and posts the round's buckets with one doorbell, and returns replies above its cut-off straight
 * into the caller's buffer (zero-copy mode); the plain design sends every call and every reply as its own 8 KiB-bucket
 * WRITE with its own doorbell. Reference shapes: Scythe Figs. 9, 10 and 29.
 *
 * <p>With {@code --peer cn}, RRPC calls from a compute node to another compute node's paired loop ({@link CnPeers}:
 * Lotus's lock requests, SELCC's forwarding) run beside the same calls to the memory node, in one run, alternately:
 * the same GET, sizes and clients, and the ratio of their rates.
 */
public final class RrpcWorkload {
    static final int GET = 0x5201;
    /** The bound of the CN-to-CN calls measured: far above any latency worth measuring. */
    static final long PEER_CALL_BOUND_NS = java.util.concurrent.TimeUnit.SECONDS.toNanos(30);

    /** Who serves the calls: a memory node (RRPC against plain RPC), or also a compute node (CN-to-CN beside it). */
    public enum Peer { MN, CN }

    /** What to run. */
    public record Options(List<Integer> sizes, List<Integer> clients, CostModel model, long durationMs, long warmupMs,
                          Peer peer) {
        public Options(final List<Integer> sizes, final List<Integer> clients, final CostModel model,
                       final long durationMs, final long warmupMs) {
            this(sizes, clients, model, durationMs, warmupMs, Peer.MN);
        }

        JsonObject toJson() {
            return new JsonObject().put("sizes", new JsonArray(sizes)).put("clients", new JsonArray(clients))
                .put("cost_model", model.toJson()).put("duration_ms", durationMs).put("warmup_ms", warmupMs)
                .put("peer", peer.name().toLowerCase(java.util.Locale.ROOT));
        }
    }

    private final Options options;
    private final PrintStream out;

    public RrpcWorkload(final Options options, final PrintStream out) {
        for (final int size : options.sizes()) {
            if (size < 1 || size > 4096) {
                throw new IllegalArgumentException("rrpc size " + size + " must be within [1, 4096]");
            }
        }
        this.options = options;
        this.out = out;
    }

    /**
     * One design's cluster: a memory node serving GET, a compute node calling it; for {@link Peer#CN} also a second
     * compute node serving GET on each loop to the first's paired loops.
     */
    private final class Setup implements AutoCloseable {
        final String design;
        final boolean rrpc;
        final BenchNodes nodes;
        final RrpcClient client;
        final MemoryRegion targets;
        final int maxInline;
        CnPeers callers;
        CnPeers callee;

        Setup(final String design) throws Exception {
            this.design = design;
            this.rrpc = design.equals("rrpc");
            final RrpcOptions options = rrpc ? new RrpcOptions()
                : new RrpcOptions().batching(false).bucketBytes(8192).ringBuckets(256).hybridCutoffBytes(8192);
            this.maxInline = options.maxPayload();
            this.nodes = new BenchNodes(RrpcWorkload.this.options.model(), BenchNodes.loops());
            final Nic mn = nodes.fabric.attachNow("mn");
            final Nic cn = nodes.fabric.attachNow("cn");
            final Map<Integer, UnsafeBuffer> data = new HashMap<>();
            for (final int size : RrpcWorkload.this.options.sizes()) {
                final UnsafeBuffer bytes = new UnsafeBuffer(new byte[size]);
                for (int i = 0; i < size; i++) {
                    bytes.putByte(i, (byte) (i * 7 + size));
                }
                data.put(size, bytes);
            }
            // The data never changes: replies may be written straight from it (zero-copy without a copy).
            final RpcServer server = new RpcServer(nodes.vertx, mn, options).handle(GET, (request, responder) -> {
                final int size = request.payload().getInt(request.payloadOffset());
                responder.replyStable(data.get(size), 0, size);
            });
            BenchNodes.on(nodes.loops.get(0), server::start);
            this.client = new RrpcClient(nodes.vertx, cn, options);
            this.targets = cn.register("bench.targets", 4096L * 1024, MemoryKind.HOST);
            if (rrpc && RrpcWorkload.this.options.peer() == Peer.CN) {
                // The same GET, served by every loop of another compute node; no lookups on the way (IDENTITY).
                // Calls to the memory node have no bound: a stalled machine (a second's pause happens here under
                // load) must cost these calls latency too, not failures.
                final int loops = nodes.loops.size();
                final RrpcOptions peerOptions = CnPeers.defaultOptions().callTimeoutNs(PEER_CALL_BOUND_NS);
                callee = new CnPeers(nodes.vertx, nodes.fabric.attachNow("cn-b"), peerOptions, loops,
                    CnPeers.Directory.IDENTITY).handle(GET, (request, responder) -> {
                        final int size = request.payload().getInt(request.payloadOffset());
                        responder.replyStable(data.get(size), 0, size);
                    });
                callers = new CnPeers(nodes.vertx, cn, peerOptions, loops, CnPeers.Directory.IDENTITY);
                callee.start(nodes.loops).await(30, java.util.concurrent.TimeUnit.SECONDS);
                callers.start(nodes.loops).await(30, java.util.concurrent.TimeUnit.SECONDS);
                for (final Context loop : nodes.loops) {
                    BenchNodes.on(loop, () -> callers.connect("cn-b"));
                }
            }
        }

        @Override
        public void close() throws Exception {
            if (callers != null) {
                callers.close().await(30, java.util.concurrent.TimeUnit.SECONDS);
                callee.close().await(30, java.util.concurrent.TimeUnit.SECONDS);
            }
            nodes.close();
        }
    }

    public BenchReport run() throws Exception {
        if (options.peer() == Peer.CN) {
            return runBesidePeers();
        }
        final BenchReport report = new BenchReport("rrpc", options.toJson());
        // Both designs stand up at once and are measured alternately, size by size: side by side in one run.
        try (Setup rrpc = new Setup("rrpc"); Setup plain = new Setup("plain-rpc")) {
            for (final int clients : options.clients()) {
                for (final int size : options.sizes()) {
                    final RunResult batched = measure(rrpc, clients, size, null);
                    report.add(batched);
                    report.add(measure(plain, clients, size, batched.toJson().getDouble("calls_per_s")));
                }
            }
        }
        return report;
    }

    /** CN-to-MN and CN-to-CN RRPC calls, alternately, clients by clients and size by size: side by side. */
    private BenchReport runBesidePeers() throws Exception {
        final BenchReport report = new BenchReport("rrpc", options.toJson());
        try (Setup rrpc = new Setup("rrpc")) {
            for (final int clients : options.clients()) {
                for (final int size : options.sizes()) {
                    final RunResult toMemoryNode = measure(rrpc, clients, size, null);
                    report.add(toMemoryNode.put("peer", "mn"));
                    report.add(measurePeers(rrpc, clients, size, toMemoryNode.toJson().getDouble("calls_per_s")));
                }
            }
        }
        return report;
    }

    /** The same GET from the caller's loops to the paired loops of compute node {@code cn-b}. */
    private RunResult measurePeers(final Setup setup, final int clients, final int size, final double mnRate)
        throws Exception {
        final CnPeers peers = setup.callers;
        final MemoryRegion targets = setup.targets;
        final boolean zeroCopy = size > setup.maxInline;
        final long[] wrong = new long[1];
        final Map<Context, ArrayDeque<Integer>> freeSlots = slots(setup.nodes.loops);
        final UnsafeBuffer request = new UnsafeBuffer(new byte[4]);
        request.putInt(0, size);
        final ClosedLoop.Result r = ClosedLoop.run(setup.nodes.loops, clients, options.warmupMs(),
            options.durationMs(), () -> {
                if (!zeroCopy) {
                    return peers.call("cn-b", GET, request, 0, 4).map(reply -> check(reply.payload(), 0, size,
                        wrong));
                }
                final ArrayDeque<Integer> slots = freeSlots.get(io.vertx.core.Vertx.currentContext());
                final int s = slots.poll();
                return peers.rocket("cn-b", CnPeers.PAIRED)
                    .compose(rocket -> rocket.callZeroCopy(GET, request, 0, 4, targets, s * 4096, 4096))
                    .map(reply -> check(targets.buffer(), s * 4096, reply.length() == size ? size : -1, wrong))
                    .onComplete(ar -> slots.add(s));
            });
        final double rate = r.perSecond();
        final double ratio = mnRate > 0 ? rate / mnRate : Double.NaN; // none when the MN run completed nothing
        final RunResult run = new RunResult("rrpc-cn", clients).measured(r.completed(), r.failed(),
            r.elapsedNs() / 1e9, r.latencyNs()).invariantsOk(wrong[0] == 0 && r.failed() == 0)
            .put("size_bytes", size).put("mode", zeroCopy ? "rpc-zero-copy" : "pure-rpc").put("peer", "cn")
            .put("calls_per_s", RunResult.round(rate, 1))
            .put("cn_over_mn", Double.isNaN(ratio) ? null : RunResult.round(ratio, 2));
        out.printf("%-10s clients %4d size %5d B %-14s %10.0f calls/s  p50 %8.2f us  p99 %8.2f us   cn/mn %.2fx%n",
            "rrpc-cn", clients, size, zeroCopy ? "(zero-copy)" : "", rate,
            r.latencyNs().getValueAtPercentile(50) / 1000.0, r.latencyNs().getValueAtPercentile(99) / 1000.0, ratio);
        return run;
    }

    /** 512 target slots of 4 KiB per loop for zero-copy replies, numbered across loops. */
    private static Map<Context, ArrayDeque<Integer>> slots(final List<Context> loops) {
        final Map<Context, ArrayDeque<Integer>> freeSlots = new HashMap<>();
        int slot = 0;
        for (final Context loop : loops) {
            final ArrayDeque<Integer> slots = new ArrayDeque<>();
            for (int i = 0; i < 512; i++) {
                slots.add(slot++);
            }
            freeSlots.put(loop, slots);
        }
        return freeSlots;
    }

    private RunResult measure(final Setup setup, final int clients, final int size, final Double rrpcRate)
        throws Exception {
        final String design = setup.design;
        final List<Context> loops = setup.nodes.loops;
        final RrpcClient client = setup.client;
        final MemoryRegion targets = setup.targets;
        final boolean rrpc = setup.rrpc;
        final boolean zeroCopy = rrpc && size > setup.maxInline;
        final long[] wrong = new long[1];
        final Map<Context, ArrayDeque<Integer>> freeSlots = slots(loops);
        final UnsafeBuffer request = new UnsafeBuffer(new byte[4]);
        request.putInt(0, size);
        final ClosedLoop.Result r = ClosedLoop.run(loops, clients, options.warmupMs(), options.durationMs(), () -> {
            final Context here = io.vertx.core.Vertx.currentContext();
            return client.rocket("mn").compose(rocket -> {
                if (!zeroCopy) {
                    return rocket.call(GET, request, 0, 4).map(reply -> check(reply.payload(), 0, size, wrong));
                }
                final ArrayDeque<Integer> slots = freeSlots.get(here);
                final int s = slots.poll();
                return rocket.callZeroCopy(GET, request, 0, 4, targets, s * 4096, 4096)
                    .map(reply -> check(targets.buffer(), s * 4096, reply.length() == size ? size : -1, wrong))
                    .onComplete(ar -> slots.add(s));
            });
        });
        final double rate = r.perSecond();
        final RunResult run = new RunResult(design, clients).measured(r.completed(), r.failed(),
            r.elapsedNs() / 1e9, r.latencyNs()).invariantsOk(wrong[0] == 0 && r.failed() == 0)
            .put("size_bytes", size).put("mode", zeroCopy ? "rpc-zero-copy" : "pure-rpc")
            .put("calls_per_s", RunResult.round(rate, 1));
        final Double base = rrpcRate;
        if (!rrpc && base != null) {
            run.put("rrpc_over_plain", RunResult.round(base / rate, 2));
        }
        out.printf("%-10s clients %4d size %5d B %-14s %10.0f calls/s  p50 %8.2f us  p99 %8.2f us%s%n", design,
            clients, size, zeroCopy ? "(zero-copy)" : "", rate, r.latencyNs().getValueAtPercentile(50) / 1000.0,
            r.latencyNs().getValueAtPercentile(99) / 1000.0,
            !rrpc && base != null ? String.format("   rrpc/plain %.2fx", base / rate) : "");
        return run;
    }

    /** Checks the reply is the bytes the server sends for {@code size}; counts a mismatch. */
    private static Void check(final org.agrona.DirectBuffer bytes, final int offset, final int size,
                              final long[] wrong) {
        if (size < 0) {
            wrong[0]++;
            return null;
        }
        for (int i = 0; i < size; i += 61) {
            if (bytes.getByte(offset + i) != (byte) (i * 7 + size)) {
                wrong[0]++;
                return null;
            }
        }
        return null;
    }
}
