package io.scythe.bench.micro;

import io.netty.util.concurrent.FastThreadLocal;
import io.scythe.bench.report.BenchReport;
import io.scythe.bench.report.RunResult;
import io.scythe.bench.workload.Zipf;
import io.scythe.bridge.RdmaChannel;
import io.scythe.fabric.CostModel;
import io.scythe.fabric.Nic;
import io.scythe.hotspot.Watermarks;
import io.scythe.rrpc.RpcServer;
import io.scythe.rrpc.RrpcClient;
import io.scythe.rrpc.RrpcOptions;
import io.scythe.storage.LogDb;
import io.scythe.storage.Table;
import io.scythe.storage.TableDescriptor;
import io.scythe.storage.TableSchema;
import io.scythe.txn.ford.CasLock;
import io.scythe.txn.runtime.LoopTimers;
import io.scythe.txn.scythe.LockRefusedException;
import io.scythe.txn.ford.CasWords;
import io.scythe.txn.mn.MemoryNodeServices;
import io.scythe.txn.scythe.TakeoutLock;
import io.scythe.txn.scythe.TakeoutLockClient;
import io.scythe.txn.scythe.TakeoutLockKind;
import io.scythe.txn.scythe.TakeoutLockService;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import org.HdrHistogram.ConcurrentHistogram;
import org.HdrHistogram.Histogram;
import org.agrona.concurrent.UnsafeBuffer;

import java.io.PrintStream;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.atomic.AtomicLong;

/**
 * {@code scythe bench --workload lock}: Scythe's Fig. 27 (and Fig. 7). Clients lock one of {@code locks} objects on a
 * memory node, chosen by Zipf(theta), hold it for 25 us, unlock, and lock again; the latency from requesting a lock
 * to holding it is recorded. Takeout Lock (Lock RPC, hangout, READ polls, FAA unlock) against the CAS lock (CAS
 * until it succeeds, WRITE 0 to unlock), on identical data, alternately at each theta.
 *
 * <p>Timestamps for the Takeout Lock come from one in-JVM counter: a perfect TSO, so that this compares locks only.
 */
public final class LockWorkload {
    static final List<String> LOCKS = List.of("takeout", "cas-lock");

    /** What to run. */
    public record Options(int clients, int locks, List<Double> thetas, long holdNs, CostModel model, long durationMs,
                          long warmupMs, long seed) {
        JsonObject toJson() {
            return new JsonObject().put("clients", clients).put("locks", locks).put("thetas", new JsonArray(thetas))
                .put("hold_ns", holdNs).put("cost_model", model.toJson()).put("duration_ms", durationMs)
                .put("warmup_ms", warmupMs).put("seed", seed).put("watermarks", new JsonObject()
                    .put("cold", Watermarks.DEFAULT_COLD).put("hot", Watermarks.DEFAULT_HOT));
        }
    }

    private final Options options;
    private final PrintStream out;

    public LockWorkload(final Options options, final PrintStream out) {
        this.options = options;
        this.out = out;
    }

    public BenchReport run() throws Exception {
        final BenchReport report = new BenchReport("lock", options.toJson());
        try (BenchNodes nodes = new BenchNodes(options.model(), BenchNodes.loops())) {
            final Nic mn = nodes.fabric.attachNow("mn");
            final LogDb db = new LogDb(mn);
            final Table table = db.create(TableSchema.fixed(1, "locks", 8, options.locks()));
            final UnsafeBuffer zero = new UnsafeBuffer(new byte[8]);
            final long[] pointers = new long[options.locks()];
            for (int k = 0; k < options.locks(); k++) {
                pointers[k] = table.insert(k, zero, 0, 8, 1);
            }
            final TableDescriptor d = table.describe();
            final RpcServer server = new RpcServer(nodes.vertx, mn, new RrpcOptions());
            // The memory node's services as every node runs them; this workload drives the Takeout Lock service.
            final TakeoutLockService service = MemoryNodeServices.start(db, server, Watermarks.DEFAULT, false)
                .service(TakeoutLockService.class);
            BenchNodes.on(nodes.loops.get(0), server::start);
            final RrpcClient rrpc = new RrpcClient(nodes.vertx, nodes.fabric.attachNow("cn"), new RrpcOptions());
            final FastThreadLocal<TakeoutLockClient> takeout = new FastThreadLocal<>() {
                @Override
                protected TakeoutLockClient initialValue() {
                    return new TakeoutLockClient(LoopTimers.current(), rrpc::rocket, rrpc::oneSided);
                }
            };
            final AtomicLong clock = new AtomicLong(1);
            final AtomicLong holderIds = new AtomicLong(1);
            for (final double theta : options.thetas()) {
                final Zipf zipf = new Zipf(options.locks(), theta);
                for (final String lock : LOCKS) {
                    final ConcurrentHistogram acquire = new ConcurrentHistogram(3_600_000_000_000L, 3);
                    final AtomicLong retries = new AtomicLong();
                    final FastThreadLocal<SplittableRandom> randoms = new FastThreadLocal<>() {
                        @Override
                        protected SplittableRandom initialValue() {
                            return new SplittableRandom(options.seed() ^ Thread.currentThread().getId());
                        }
                    };
                    final long grantedBefore = service.granted();
                    final long[] refusedBefore = {service.refused(TakeoutLock.REFUSED_ORDER),
                        service.refused(TakeoutLock.REFUSED_HOT)};
                    final ClosedLoop.Result r = ClosedLoop.run(nodes.loops, options.clients(), options.warmupMs(),
                        options.durationMs(), () -> {
                            final long pointer = pointers[zipf.next(randoms.get())];
                            final long start = System.nanoTime();
                            final Future<Runnable> held = lock.equals("takeout")
                                ? takeoutLock(takeout.get(), LoopTimers.current(), "mn", d, pointer,
                                    clock::getAndIncrement, retries)
                                : casLock(() -> rrpc.oneSided("mn"), d, pointer, holderIds.getAndIncrement(), retries);
                            return held.compose(unlock -> {
                                acquire.recordValue(System.nanoTime() - start);
                                return LoopTimers.current().after(options.holdNs()).map(v -> {
                                    unlock.run();
                                    return null;
                                });
                            });
                        });
                    final Histogram h = acquire; // warm-up included: both locks alike
                    // Every lock must be free once the clients have stopped: nothing granted was left unreleased.
                    Thread.sleep(50);
                    long leftQueued = 0;
                    for (final long p : pointers) {
                        final int at = table.offsetOf(p);
                        final boolean held = lock.equals("takeout")
                            ? TakeoutLockKind.queued(table.objectMemory(), at) != 0 : CasWords.locked(table, at);
                        leftQueued += held ? 1 : 0;
                    }
                    final double retriesPerLock = (double) retries.get() / Math.max(1, h.getTotalCount());
                    final RunResult run = new RunResult(lock, options.clients())
                        .measured(r.completed(), r.failed(), r.elapsedNs() / 1e9, h)
                        .invariantsOk(r.failed() == 0 && leftQueued == 0)
                        .put("theta", theta).put("locks", options.locks()).put("hold_ns", options.holdNs())
                        .put("retries_per_lock", RunResult.round(retriesPerLock, 3));
                    String extra = "";
                    if (lock.equals("takeout")) {
                        final long refusedOrder = service.refused(TakeoutLock.REFUSED_ORDER) - refusedBefore[0];
                        final long refusedHot = service.refused(TakeoutLock.REFUSED_HOT) - refusedBefore[1];
                        run.put("granted", service.granted() - grantedBefore).put("refused_timestamp_order",
                            refusedOrder).put("refused_hot_watermark", refusedHot);
                        extra = String.format("  (refused: %d timestamp order, %d hot watermark)", refusedOrder,
                            refusedHot);
                    }
                    report.add(run);
                    out.printf("theta %4.2f %-9s %8.0f locks/s  acquire p50 %8.2f us  p99 %8.2f us  p999 %8.2f us"
                            + "  %.2f retries per lock%s%n", theta, lock, r.perSecond(),
                        h.getValueAtPercentile(50) / 1000.0, h.getValueAtPercentile(99) / 1000.0,
                        h.getValueAtPercentile(99.9) / 1000.0, retriesPerLock, extra);
                }
            }
        }
        return report;
    }

    /**
     * Takeout Lock in HOT mode; a refusal (timestamp order, hot watermark) waits out the queue it saw ({@code queued
     * x SRTT}) and retries with a new timestamp, as an aborted transaction would.
     */
    public static Future<Runnable> takeoutLock(final TakeoutLockClient client, final io.scythe.txn.runtime.Timers timers,
                                               final String node, final TableDescriptor d, final long pointer,
                                               final java.util.function.LongSupplier timestamps,
                                               final AtomicLong retries) {
        return client.lock(node, d, pointer, timestamps.getAsLong(), true).<Runnable>map(g -> () -> client.unlock(g))
            .recover(e -> {
                if (e instanceof LockRefusedException refused) {
                    retries.incrementAndGet();
                    return timers.after(client.backoffNs(node, refused.queued()))
                        .compose(v -> takeoutLock(client, timers, node, d, pointer, timestamps, retries));
                }
                return Future.failedFuture(e);
            });
    }

    /** CAS until it succeeds (no back-off, as the CAS lock of Figs. 7 and 27). */
    public static Future<Runnable> casLock(final java.util.function.Supplier<Future<RdmaChannel>> channel,
                                           final TableDescriptor d, final long pointer, final long holder,
                                           final AtomicLong retries) {
        final long address = CasLock.lockAddress(pointer);
        final int rkey = d.objects().rkey();
        return channel.get().compose(ch -> {
            final Promise<Runnable> held = Promise.promise();
            tryCas(ch, address, rkey, holder, retries, held);
            return held.future();
        });
    }

    private static void tryCas(final RdmaChannel ch, final long address, final int rkey, final long holder,
                               final AtomicLong retries, final Promise<Runnable> held) {
        CasLock.tryLock(ch, address, rkey, holder).onComplete(ar -> {
            if (ar.failed()) {
                held.fail(ar.cause());
            } else if (ar.result()) {
                held.complete(() -> CasLock.unlock(ch, address, rkey));
            } else {
                retries.incrementAndGet();
                tryCas(ch, address, rkey, holder, retries, held);
            }
        });
    }
}
