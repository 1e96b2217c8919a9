package io.scythe.bench.micro;

import io.scythe.bench.report.BenchReport;
import io.scythe.bench.report.RunResult;
import io.scythe.bridge.BridgeVerticle;
import io.scythe.bridge.Doorbell;
import io.scythe.bridge.RdmaChannel;
import io.scythe.fabric.CostModel;
import io.scythe.fabric.Fabric;
import io.scythe.fabric.FabricOptions;
import io.scythe.fabric.MemoryKind;
import io.scythe.fabric.MemoryRegion;
import io.scythe.fabric.Nic;
import io.scythe.fabric.Opcode;
import io.scythe.fabric.QpOptions;
import io.scythe.fabric.RemoteRegion;
import io.vertx.core.Context;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;
import io.vertx.core.VertxOptions;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import org.HdrHistogram.Histogram;
import org.agrona.concurrent.AtomicBuffer;
import org.agrona.concurrent.UnsafeBuffer;

import java.io.PrintStream;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.TimeUnit;

/**
 * {@code scythe bench --workload verbs}: verbs per second and latency of READ, WRITE, CAS and FAA through the bridge
 * on each emulated provider, single and doorbell-batched, beside the raw cost of the same memory operation on the
 * same memory without the fabric. Each case keeps {@code window} verbs outstanding from one event loop (a closed
 * loop), on 8-byte words at random aligned offsets of a 1 MiB region, and checks every value it reads.
 */
public final class VerbsWorkload {
    /** Region the verbs target: 1 MiB, as the "random in 1 MB" column of ../shared/DEPENDENCIES.md. */
    public static final int REGION_BYTES = 1 << 20;
    private static final int WORDS = REGION_BYTES / Long.BYTES;
    private static final long SALT = 0x5eed_0f_5c7_7e5L;
    /** Local words of the destination ring; bounds the verbs a case keeps in flight. */
    private static final int SCRATCH_WORDS = 4096;
    /**
     * One verb (or batch) in this many has its latency timed: reading the clock costs ~47 ns on this VM, and twice per
     * verb it would be the largest cost measured. Sampling every 8th keeps the percentiles unbiased.
     */
    private static final int LATENCY_SAMPLE_EVERY = 8;
    /** The verbs measured by default. */
    public static final List<Opcode> VERBS = List.of(Opcode.READ, Opcode.WRITE, Opcode.COMPARE_AND_SWAP,
        Opcode.FETCH_AND_ADD);

    /** What to run. */
    public record Options(List<String> providers, List<Opcode> verbs, CostModel costModel, int window, int batch,
                          long durationMs, long warmupMs, long seed, String idle) {
        public JsonObject toJson() {
            return new JsonObject().put("providers", new JsonArray(providers))
                .put("verbs", new JsonArray(verbs.stream().map(Opcode::name).toList()))
                .put("profile", costModel.label()).put("cost_model", costModel.toJson())
                .put("window", window).put("batch", batch).put("duration_ms", durationMs)
                .put("warmup_ms", warmupMs).put("seed", seed).put("idle", idle)
                .put("payload_bytes", Long.BYTES).put("region_bytes", REGION_BYTES);
        }
    }

    private final Options options;
    private final PrintStream out;

    public VerbsWorkload(final Options options, final PrintStream out) {
        for (final Opcode verb : options.verbs()) {
            if (!VERBS.contains(verb)) {
                throw new IllegalArgumentException("verb " + verb + " cannot be benchmarked; choose from " + VERBS);
            }
        }
        if (options.window() > SCRATCH_WORDS) {
            throw new IllegalArgumentException("window=" + options.window() + " must be at most " + SCRATCH_WORDS);
        }
        if (options.window() < 1 || options.batch() < 1 || options.window() < options.batch()) {
            throw new IllegalArgumentException("window=" + options.window() + " and batch=" + options.batch()
                + " must be positive, with window >= batch");
        }
        this.options = options;
        this.out = out;
    }

    /** Runs every case; blocks the calling thread (which must not be an event loop). */
    public BenchReport run() throws Exception {
        final BenchReport report = new BenchReport("verbs", options.toJson());
        for (final String provider : options.providers()) {
            runProvider(provider, report);
        }
        return report;
    }

    private void runProvider(final String provider, final BenchReport report) throws Exception {
        final Vertx vertx = Vertx.vertx(new VertxOptions().setEventLoopPoolSize(2));
        Fabric fabric = null;
        try {
            BridgeVerticle.deployOnEveryEventLoop(vertx, new JsonObject().put("idle", options.idle()))
                .await(30, TimeUnit.SECONDS);
            final FabricOptions fabricOptions = new FabricOptions().provider(provider)
                .cluster("verbs-" + ProcessHandle.current().pid())
                .costModel(options.costModel())
                .address("mn0", "127.0.0.1:0").address("cn0", "127.0.0.1:0");
            fabric = Fabric.open(vertx, fabricOptions);
            final Nic mn = fabric.attach("mn0").await(30, TimeUnit.SECONDS);
            final Nic cn = fabric.attach("cn0").await(30, TimeUnit.SECONDS);
            final MemoryRegion patterned = mn.register("patterned", REGION_BYTES, MemoryKind.HOST);
            final MemoryRegion counters = mn.register("counters", REGION_BYTES, MemoryKind.HOST);
            fillPattern(patterned.buffer());
            final Context context = vertx.getOrCreateContext();
            final RdmaChannel channel = onContext(context,
                () -> RdmaChannel.connect(cn, "mn0", new QpOptions().sendQueueDepth(Math.max(1024,
                    2 * options.window()))));
            for (final Opcode verb : options.verbs()) {
                final MemoryRegion target = verb == Opcode.FETCH_AND_ADD ? counters : patterned;
                final double rawNs = rawNsPerOp(verb, target.buffer());
                for (final int batch : options.batch() == 1 ? new int[] {1} : new int[] {1, options.batch()}) {
                    final Case c = new Case(channel, verb, target.describe(), batch, options.window(),
                        new SplittableRandom(options.seed()));
                    onContext(context, () -> c.run(options.warmupMs()));
                    c.reset();
                    final long faaBefore = sum(counters.buffer());
                    onContext(context, () -> c.run(options.durationMs()));
                    boolean ok = c.mismatches == 0;
                    if (verb == Opcode.FETCH_AND_ADD) {
                        ok &= sum(counters.buffer()) - faaBefore == c.completed;
                    } else {
                        ok &= checkPattern(patterned.buffer());
                    }
                    report.add(result(provider, verb, batch, c, rawNs, ok));
                }
            }
        } finally {
            if (fabric != null) {
                fabric.close();
            }
            vertx.close().await(30, TimeUnit.SECONDS);
        }
    }

    private RunResult result(final String provider, final Opcode verb, final int batch, final Case c,
                             final double rawNs, final boolean ok) {
        final double seconds = c.elapsedNs / 1e9;
        final double verbsPerSec = c.completed / seconds;
        final double nsPerVerb = 1e9 / verbsPerSec;
        final String mode = batch == 1 ? "single" : "doorbell" + batch;
        final RunResult run = new RunResult(provider + "/" + verb.name().toLowerCase() + "/" + mode, options.window())
            .measured(c.completed, c.failed, seconds, c.latency)
            .invariantsOk(ok)
            .put("provider", provider)
            .put("verb", verb.name())
            .put("batch", batch)
            .put("verbs_per_s", RunResult.round(verbsPerSec, 1))
            .put("ns_per_verb", RunResult.round(nsPerVerb, 1))
            .put("raw_ns_per_op", RunResult.round(rawNs, 2))
            .put("raw_ops_per_s", RunResult.round(1e9 / rawNs, 1))
            .put("ratio_fabric_to_raw", RunResult.round(nsPerVerb / rawNs, 1))
            .put("latency_unit", batch == 1 ? "verb" : "doorbell batch");
        out.printf("%-34s %12.0f verbs/s %8.1f ns/verb | raw %6.1f ns/op, ratio %6.1f | p50 %7.2f us p99 %7.2f us%s%n",
            provider + " " + verb + " " + mode, verbsPerSec, nsPerVerb, rawNs, nsPerVerb / rawNs,
            c.latency.getValueAtPercentile(50) / 1000.0, c.latency.getValueAtPercentile(99) / 1000.0,
            ok ? "" : "  INVARIANT VIOLATED");
        return run;
    }

    /** One case: a closed loop keeping {@code window} verbs outstanding, in batches of {@code batch}. */
    private static final class Case {
        private final RdmaChannel channel;
        private final Opcode verb;
        private final RemoteRegion region;
        private final int batch;
        private final int window;
        private final SplittableRandom random;
        /** Local buffers: a ring as large as the verbs in flight, so local memory stays in cache as a NIC's would. */
        private final UnsafeBuffer scratch = new UnsafeBuffer(new byte[SCRATCH_WORDS * Long.BYTES]);
        private int scratchNext;
        private final Histogram latency = new Histogram(3_600_000_000_000L, 3);
        private long deadlineNs;
        private long startNs;
        private long elapsedNs;
        private long completed;
        private long failed;
        private long mismatches;
        private int inFlight;
        private Promise<Void> done;

        Case(final RdmaChannel channel, final Opcode verb, final RemoteRegion region, final int batch,
             final int window, final SplittableRandom random) {
            this.channel = channel;
            this.verb = verb;
            this.region = region;
            this.batch = batch;
            this.window = window;
            this.random = random;
        }

        void reset() {
            latency.reset();
            completed = 0;
            failed = 0;
            mismatches = 0;
        }

        Future<Void> run(final long durationMs) {
            done = Promise.promise();
            stopping = false;
            startNs = System.nanoTime();
            deadlineNs = startNs + TimeUnit.MILLISECONDS.toNanos(durationMs);
            for (int i = 0; i < window / batch; i++) {
                issue();
            }
            return done.future();
        }

        private int issued;

        private void issue() {
            inFlight++;
            final long posted = (issued++ & (LATENCY_SAMPLE_EVERY - 1)) == 0 ? System.nanoTime() : 0;
            if (batch == 1) {
                single(random.nextInt(WORDS), posted);
            } else {
                batched(posted);
            }
        }

        private int nextScratch() {
            final int local = scratchNext * Long.BYTES;
            scratchNext = (scratchNext + 1) & (SCRATCH_WORDS - 1);
            return local;
        }

        /** Posts the verb on one random word and checks what it returns. */
        private void single(final int word, final long posted) {
            final int offset = word * Long.BYTES;
            final long address = region.address() + offset;
            final long expected = pattern(offset);
            final int local = nextScratch();
            switch (verb) {
                case READ:
                    channel.read(address, region.rkey(), scratch, local, Long.BYTES).onComplete(ar -> {
                        check(ar.failed() || scratch.getLong(local) == expected);
                        completed(posted, ar.succeeded() ? 1 : 0, ar.failed() ? 1 : 0);
                    });
                    return;
                case WRITE:
                    scratch.putLong(local, expected);
                    channel.write(address, region.rkey(), scratch, local, Long.BYTES)
                        .onComplete(ar -> completed(posted, ar.succeeded() ? 1 : 0, ar.failed() ? 1 : 0));
                    return;
                case COMPARE_AND_SWAP:
                    channel.compareAndSwap(address, region.rkey(), expected, expected).onComplete(ar -> {
                        check(ar.failed() || ar.result() == expected);
                        completed(posted, ar.succeeded() ? 1 : 0, ar.failed() ? 1 : 0);
                    });
                    return;
                default:
                    channel.fetchAndAdd(address, region.rkey(), 1)
                        .onComplete(ar -> completed(posted, ar.succeeded() ? 1 : 0, ar.failed() ? 1 : 0));
            }
        }

        /** Posts a doorbell batch of the verb on random words and checks what it returns. */
        private void batched(final long posted) {
            final Doorbell doorbell = channel.doorbell();
            final int[] offsets = new int[batch];
            final int firstLocal = scratchNext * Long.BYTES;
            for (int i = 0; i < batch; i++) {
                final int offset = random.nextInt(WORDS) * Long.BYTES;
                offsets[i] = offset;
                final long address = region.address() + offset;
                final long expected = pattern(offset);
                final int local = nextScratch();
                switch (verb) {
                    case READ:
                        doorbell.read(address, region.rkey(), scratch, local, Long.BYTES);
                        break;
                    case WRITE:
                        scratch.putLong(local, expected);
                        doorbell.write(address, region.rkey(), scratch, local, Long.BYTES);
                        break;
                    case COMPARE_AND_SWAP:
                        doorbell.compareAndSwap(address, region.rkey(), expected, expected);
                        break;
                    default:
                        doorbell.fetchAndAdd(address, region.rkey(), 1);
                }
            }
            doorbell.post().onComplete(ar -> {
                if (ar.succeeded()) {
                    for (int i = 0; i < batch; i++) {
                        final long expected = pattern(offsets[i]);
                        if (verb == Opcode.READ) {
                            check(scratch.getLong((firstLocal + i * Long.BYTES) & (SCRATCH_WORDS * Long.BYTES - 1))
                                == expected);
                        } else if (verb == Opcode.COMPARE_AND_SWAP) {
                            check(doorbell.result(i) == expected);
                        }
                    }
                }
                completed(posted, ar.succeeded() ? batch : 0, ar.failed() ? batch : 0);
            });
        }

        private void check(final boolean ok) {
            if (!ok) {
                mismatches++;
            }
        }

        private int steps;
        private boolean stopping;

        private void completed(final long postedNs, final int ok, final int bad) {
            completed += ok;
            failed += bad;
            inFlight--;
            // The clock is read only for a sampled verb and every 8th step (the deadline check).
            long now = 0;
            if (postedNs != 0) {
                now = System.nanoTime();
                latency.recordValue(now - postedNs);
            }
            if (!stopping && (steps++ & (LATENCY_SAMPLE_EVERY - 1)) == 0) {
                now = now == 0 ? System.nanoTime() : now;
                stopping = now - deadlineNs >= 0;
            }
            if (!stopping) {
                issue();
            } else if (inFlight == 0) {
                elapsedNs = System.nanoTime() - startNs;
                done.complete();
            }
        }
    }

    /** ns per operation of the same memory operation on the same region, on this thread, without the fabric. */
    static double rawNsPerOp(final Opcode verb, final AtomicBuffer memory) {
        final int ops = 4_000_000;
        final int[] offsets = new int[1 << 16];
        final SplittableRandom random = new SplittableRandom(1);
        for (int i = 0; i < offsets.length; i++) {
            offsets[i] = random.nextInt(WORDS) * Long.BYTES;
        }
        long sink = 0;
        double best = Double.MAX_VALUE;
        for (int round = 0; round < 3; round++) {
            final long start = System.nanoTime();
            for (int i = 0; i < ops; i++) {
                final int offset = offsets[i & (offsets.length - 1)];
                switch (verb) {
                    case READ:
                        sink += memory.getLongVolatile(offset);
                        break;
                    case WRITE:
                        memory.putLongRelease(offset, pattern(offset));
                        break;
                    case COMPARE_AND_SWAP:
                        sink += memory.compareAndExchangeLong(offset, pattern(offset), pattern(offset));
                        break;
                    default:
                        sink += memory.getAndAddLong(offset, 0);
                        break;
                }
            }
            best = Math.min(best, (System.nanoTime() - start) / (double) ops);
        }
        if (sink == 42) {
            System.out.print("");
        }
        return best;
    }

    static long pattern(final long offset) {
        return (offset * 0x9E3779B97F4A7C15L) ^ SALT;
    }

    private static void fillPattern(final AtomicBuffer buffer) {
        for (int offset = 0; offset < REGION_BYTES; offset += Long.BYTES) {
            buffer.putLong(offset, pattern(offset));
        }
    }

    private static boolean checkPattern(final AtomicBuffer buffer) {
        for (int offset = 0; offset < REGION_BYTES; offset += Long.BYTES) {
            if (buffer.getLongVolatile(offset) != pattern(offset)) {
                return false;
            }
        }
        return true;
    }

    private static long sum(final AtomicBuffer buffer) {
        long sum = 0;
        for (int offset = 0; offset < REGION_BYTES; offset += Long.BYTES) {
            sum += buffer.getLongVolatile(offset);
        }
        return sum;
    }

    private static <T> T onContext(final Context context, final java.util.function.Supplier<Future<T>> body)
        throws Exception {
        final Promise<T> promise = Promise.promise();
        context.runOnContext(v -> body.get().onComplete(promise));
        return promise.future().await(10, TimeUnit.MINUTES);
    }
}
