package io.scythe.tso;

import io.scythe.txn.runtime.TimestampOracle;
import io.scythe.bridge.Bridge;
import io.scythe.txn.runtime.LoopTimers;
import io.scythe.bridge.BridgeVerticle;
import io.scythe.bridge.RdmaChannel;
import io.scythe.fabric.CostModel;
import io.scythe.fabric.FabricOptions;
import io.scythe.fabric.Nic;
import io.scythe.fabric.QpOptions;
import io.scythe.fabric.RemoteRegion;
import io.scythe.fabric.local.LocalFabric;
import io.scythe.rrpc.RpcServer;
import io.scythe.rrpc.RrpcClient;
import io.scythe.rrpc.RrpcOptions;
import io.vertx.core.Context;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;
import io.vertx.core.VertxOptions;
import io.vertx.core.json.JsonObject;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class TsoTest {
    private Vertx vertx;
    private LocalFabric fabric;
    private Nic tsoNic;
    private Nic cn;
    private TsoService service;
    private RemoteRegion counter;
    private final List<TsoProxy> proxies = new ArrayList<>();
    private RrpcClient rrpc;

    @BeforeEach
    void setUp() throws Exception {
        vertx = Vertx.vertx(new VertxOptions().setEventLoopPoolSize(2));
        BridgeVerticle.deployOnEveryEventLoop(vertx, new JsonObject()).await(10, TimeUnit.SECONDS);
        fabric = new LocalFabric(new FabricOptions().costModel(CostModel.cx5()));
        tsoNic = fabric.attachNow("tso");
        cn = fabric.attachNow("cn");
        service = new TsoService(vertx, tsoNic, List.of(), 1000);
        counter = service.start().await(10, TimeUnit.SECONDS);
        for (final String name : List.of("proxy1", "proxy2")) {
            final Nic nic = fabric.attachNow(name);
            final Context context = vertx.getOrCreateContext();
            final TsoProxy proxy = onContext(context, () -> {
                final RpcServer server = new RpcServer(vertx, nic, new RrpcOptions());
                final TsoProxy p = new TsoProxy(name, counter, channelTo(nic, "tso"));
                return p.register(vertx, server).compose(v -> server.start()).map(p);
            });
            proxies.add(proxy);
        }
        rrpc = new RrpcClient(vertx, cn, new RrpcOptions());
    }

    /** A lazily connected one-sided channel from {@code nic} to {@code node}, per calling loop. */
    private static Supplier<Future<RdmaChannel>> channelTo(final Nic nic, final String node) {
        final java.util.Map<Bridge, Future<RdmaChannel>> channels = new java.util.concurrent.ConcurrentHashMap<>();
        return () -> channels.computeIfAbsent(Bridge.current(), b -> RdmaChannel.connect(nic, node, new QpOptions()));
    }

    @AfterEach
    void tearDown() throws Exception {
        vertx.close().await(10, TimeUnit.SECONDS);
        fabric.close();
    }

    private static <T> T onContext(final Context context, final Supplier<Future<T>> body) throws Exception {
        final Promise<T> promise = Promise.promise();
        context.runOnContext(v -> body.get().onComplete(promise));
        return promise.future().await(60, TimeUnit.SECONDS);
    }

    private TsoGroup group() {
        return new TsoGroup(1024,
            new ProxyTsoSource("proxy1", () -> rrpc.rocket("proxy1")),
            new ProxyTsoSource("proxy2", () -> rrpc.rocket("proxy2")),
            new DirectTsoSource(counter, channelTo(cn, "tso")));
    }

    /** {@code flows} flows on one loop, each taking {@code each} timestamps one after another. */
    private Future<List<long[]>> run(final TimestampOracle oracle, final int flows, final int each) {
        final List<Future<long[]>> all = new ArrayList<>();
        for (int f = 0; f < flows; f++) {
            final long[] got = new long[each];
            Future<Void> chain = Future.succeededFuture();
            for (int i = 0; i < each; i++) {
                final int at = i;
                chain = chain.compose(v -> oracle.next().map(ts -> {
                    got[at] = ts;
                    return null;
                }));
            }
            all.add(chain.map(got));
        }
        return Future.all(all).map(cf -> {
            final List<long[]> out = new ArrayList<>();
            for (final Future<long[]> f : all) {
                out.add(f.result());
            }
            return out;
        });
    }

    /** Every timestamp of {@code flows} once, each flow's in increasing order; returns them all. */
    private static Set<Long> uniqueAndIncreasing(final List<long[]> flows) {
        final Set<Long> seen = new HashSet<>();
        for (final long[] flow : flows) {
            for (int i = 0; i < flow.length; i++) {
                assertThat(seen.add(flow[i])).as("timestamp %d handed out once", flow[i]).isTrue();
                if (i > 0) {
                    assertThat(flow[i]).isGreaterThan(flow[i - 1]);
                }
            }
        }
        return seen;
    }

    @Test
    void shouldHandOutUniqueIncreasingTimestampsToManyConcurrentFlowsWithFewFetches() throws Exception {
        final List<Context> loops = List.of(vertx.getOrCreateContext(), vertx.getOrCreateContext());
        // Added to from both loops at once: an ArrayList can throw there, leaving that loop's promise for ever
        // (as MvRemoteTableTest did in CI 219); a throw on a loop fails its promise.
        final List<TsoGroup> groups = new java.util.concurrent.CopyOnWriteArrayList<>();
        final List<Future<List<long[]>>> runs = new ArrayList<>();
        for (final Context loop : loops) {
            final Promise<List<long[]>> done = Promise.promise();
            loop.runOnContext(v -> {
                try {
                    final TsoGroup g = group();
                    groups.add(g);
                    run(g, 64, 100).onComplete(done);
                } catch (final RuntimeException | Error e) {
                    done.tryFail(e);
                }
            });
            runs.add(done.future());
        }
        final Set<Long> seen = new HashSet<>();
        long total = 0;
        for (final Future<List<long[]>> run : runs) {
            for (final long[] flow : run.await(60, TimeUnit.SECONDS)) {
                for (int i = 0; i < flow.length; i++) {
                    assertThat(seen.add(flow[i])).as("duplicate timestamp " + flow[i]).isTrue();
                    if (i > 0) {
                        assertThat(flow[i]).isGreaterThan(flow[i - 1]);
                    }
                    total++;
                }
            }
        }
        assertThat(total).isEqualTo(2 * 64 * 100);
        final long fetches = groups.stream().mapToLong(TsoGroup::groups).sum();
        assertThat(fetches).as("a group fetches for many flows at once").isLessThan(total / 8);
        assertThat(service.peek()).isGreaterThan(seen.stream().mapToLong(Long::longValue).max().orElseThrow());
        assertThat(proxies.get(0).served() + proxies.get(1).served()).isPositive();
    }

    /**
     * One group for the loops of a compute node (§4.5 (2)): flows on two event loops share its fetches, every
     * timestamp is handed out once and increasing per flow, and each flow gets its timestamps back on its own loop.
     */
    @Test
    void shouldServeTheFlowsOfSeveralEventLoopsFromOneComputeNodeGroup() throws Exception {
        final List<Context> loops = BridgeVerticle.eventLoopContexts(vertx);
        assertThat(loops).hasSize(2);
        final TsoGroup shared = TsoGroup.perComputeNode(1024, null,
            new ProxyTsoSource("proxy1", () -> rrpc.rocket("proxy1")),
            new ProxyTsoSource("proxy2", () -> rrpc.rocket("proxy2")),
            new DirectTsoSource(counter, channelTo(cn, "tso")));
        final java.util.concurrent.atomic.AtomicInteger elsewhere = new java.util.concurrent.atomic.AtomicInteger();
        final List<Future<List<long[]>>> runs = new ArrayList<>();
        for (final Context loop : loops) {
            final Promise<List<long[]>> done = Promise.promise();
            final TimestampOracle onThisLoop = new TimestampOracle() {
                @Override
                public Future<Long> next() {
                    return shared.next().andThen(ts -> {
                        if (Vertx.currentContext() != loop) {
                            elsewhere.incrementAndGet();
                        }
                    });
                }

                @Override
                public String name() {
                    return "checked";
                }
            };
            loop.runOnContext(v -> run(onThisLoop, 64, 100).onComplete(done));
            runs.add(done.future());
        }
        final List<long[]> flows = new ArrayList<>();
        for (final Future<List<long[]>> run : runs) {
            flows.addAll(run.await(60, TimeUnit.SECONDS));
        }
        assertThat(uniqueAndIncreasing(flows)).hasSize(2 * 64 * 100);
        assertThat(elsewhere.get()).as("timestamps handed back on another loop than the flow's").isZero();
        assertThat(shared.handedOut()).isEqualTo(2 * 64 * 100);
        assertThat(shared.groups()).as("one fetch serves many flows of both loops").isLessThan(2 * 64 * 100 / 8);
    }

    @Test
    void shouldRespectRealTimeOrderAcrossEventLoops() throws Exception {
        final Context a = vertx.getOrCreateContext();
        final Context b = vertx.getOrCreateContext();
        final TsoGroup[] groups = new TsoGroup[2];
        onContext(a, () -> Future.succeededFuture(groups[0] = group()));
        onContext(b, () -> Future.succeededFuture(groups[1] = group()));
        long previous = 0;
        for (int i = 0; i < 200; i++) {
            final TsoGroup g = groups[i % 2];
            final long ts = onContext(i % 2 == 0 ? a : b, g::next);
            assertThat(ts).as("a timestamp taken after another finished is larger").isGreaterThan(previous);
            previous = ts;
        }
    }

    @Test
    void shouldResumeAboveEveryIssuersHighWaterAfterARestart() throws Exception {
        final Context loop = vertx.getOrCreateContext();
        final TsoGroup g = onContext(loop, () -> Future.succeededFuture(group()));
        final long before = onContext(loop, () -> run(g, 16, 50)).stream()
            .flatMapToLong(java.util.Arrays::stream).max().orElseThrow();
        // The direct-fetching group reports its own high water, as a compute node's TSO leader does.
        vertx.eventBus().consumer(TsoLayout.highWaterAddress("cn"), m -> m.reply(g.highWater()));
        service.stop().await(10, TimeUnit.SECONDS);
        final TsoService restarted = new TsoService(vertx, tsoNic, List.of("proxy1", "proxy2", "cn"), 2000);
        final RemoteRegion newCounter = restarted.start().await(10, TimeUnit.SECONDS);
        assertThat(restarted.startedAt()).isGreaterThan(before);
        // Clients find the new counter; every new timestamp is above every old one.
        final long first = onContext(loop, () -> new TsoGroup(8, new DirectTsoSource(newCounter,
            channelTo(cn, "tso"))).next());
        assertThat(first).isGreaterThan(before);
        assertThat(TsoService.locate(vertx, "tso", 1000).await(10, TimeUnit.SECONDS).rkey())
            .isEqualTo(newCounter.rkey());
        restarted.stop().await(10, TimeUnit.SECONDS);
        // An issuer that does not answer keeps the service from starting.
        assertThatThrownBy(() -> new TsoService(vertx, tsoNic, List.of("proxy1", "ghost"), 300).start()
            .await(10, TimeUnit.SECONDS)).hasMessageContaining("issuer ghost did not report");
        assertThat(tsoNic.region(TsoLayout.REGION)).isNull();
    }

    @Test
    void shouldMakePhysicalClockTimestampsWaitOutTheUncertainty() throws Exception {
        final Context loop = vertx.getOrCreateContext();
        final long[] result = onContext(loop, () -> {
            final PhysicalClockOracle oracle = new PhysicalClockOracle(LoopTimers.current(), 50_000, 1);
            final long start = System.nanoTime();
            return Future.all(oracle.next(), oracle.next()).map(cf -> new long[] {System.nanoTime() - start,
                cf.<Long>resultAt(0), cf.<Long>resultAt(1)});
        });
        assertThat(result[0]).isGreaterThanOrEqualTo(50_000);
        assertThat(result[2]).isGreaterThan(result[1]);
        assertThat(result[1] & 0xff).isEqualTo(1);
    }

    @Test
    void shouldWakeAnIdleBridgeWhenAPhysicalClockTimestampIsRequested() throws Exception {
        final Context loop = vertx.getOrCreateContext();
        final PhysicalClockOracle oracle = onContext(loop, () -> Future.succeededFuture(
            new PhysicalClockOracle(LoopTimers.current(), 10_000, 2)));
        Thread.sleep(50); // the bridge goes quiet: nothing is outstanding
        final Long ts = onContext(loop, oracle::next);
        assertThat(ts & 0xff).isEqualTo(2);
    }

    /** A source that hands out ranges of its own counter until told to fail; counts its fetches. */
    private static final class FakeSource implements TsoSource {
        private final String name;
        private final long[] counter;
        boolean failing;
        int fetches;

        FakeSource(final String name, final long[] counter) {
            this.name = name;
            this.counter = counter;
        }

        @Override
        public Future<Long> fetch(final int count) {
            fetches++;
            if (failing) {
                return Future.failedFuture(new IllegalStateException(name + " is down"));
            }
            final long first = counter[0];
            counter[0] += count;
            return Future.succeededFuture(first);
        }

        @Override
        public String name() {
            return name;
        }
    }

    @Test
    void shouldFetchTheGroupFromAnotherSourceWhenOneFailsAndKeepTimestampsUnique() throws Exception {
        final Context loop = vertx.getOrCreateContext();
        final long[] shared = {1};
        final FakeSource proxy = new FakeSource("proxy", shared);
        final FakeSource direct = new FakeSource("direct", shared);
        proxy.failing = true;
        final TsoGroup g = new TsoGroup(16, new java.util.SplittableRandom(7), proxy, direct);
        final List<long[]> got = onContext(loop, () -> run(g, 8, 40));
        final Set<Long> seen = uniqueAndIncreasing(got);
        assertThat(seen).hasSize(8 * 40);
        assertThat(g.failovers()).as("each pick of the failing proxy went on to the direct source").isPositive();
        // A failed source sits out SKIP_AFTER_FAILURE groups: it was asked far less often than there were groups.
        assertThat(proxy.fetches).isLessThan((int) g.groups() / 4);
        // Back up: it is tried again after sitting out, and serves.
        proxy.failing = false;
        final int before = proxy.fetches;
        onContext(loop, () -> run(g, 8, 40 * TsoGroup.SKIP_AFTER_FAILURE / 8));
        assertThat(proxy.fetches).isGreaterThan(before + 1);
        // Every source down: the members fail with a tso-unavailable abort, nothing is handed out.
        proxy.failing = true;
        direct.failing = true;
        final long counterBefore = shared[0];
        assertThatThrownBy(() -> onContext(loop, g::next))
            .isInstanceOf(io.scythe.txn.AbortException.class).hasMessageContaining("no timestamp source answered");
        assertThat(shared[0]).isEqualTo(counterBefore);
    }

    @Test
    void shouldStartAboveTheCheckpointPlusTheGapWhenTheIssuersAreGone() throws Exception {
        final java.nio.file.Path file = java.nio.file.Files.createTempDirectory("tso").resolve("checkpoint");
        service.stop().await(10, TimeUnit.SECONDS);
        final TsoService first = new TsoService(vertx, tsoNic, List.of(), 1000).checkpoint(file);
        first.start().await(10, TimeUnit.SECONDS);
        assertThat(first.startedAt()).as("no checkpoint yet: the first start").isEqualTo(1);
        tsoNic.region(TsoLayout.REGION).buffer().getAndAddLong(TsoLayout.COUNTER_OFFSET, 5_000); // handed out
        final long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (System.nanoTime() < deadline && !(java.nio.file.Files.exists(file)
            && java.nio.file.Files.readString(file).trim().equals("5001"))) {
            Thread.sleep(5);
        }
        assertThat(java.nio.file.Files.readString(file).trim()).isEqualTo("5001");
        first.stop().await(10, TimeUnit.SECONDS);
        // Restarted with no issuer left to ask: above the checkpoint, by the gap.
        final TsoService second = new TsoService(vertx, tsoNic, List.of(), 1000).checkpoint(file);
        second.start().await(10, TimeUnit.SECONDS);
        assertThat(second.startedAt()).isEqualTo(5001 + TsoService.CHECKPOINT_GAP + 1);
        second.stop().await(10, TimeUnit.SECONDS);
        // A checkpoint that is not a number stops the start rather than risk handing a timestamp out twice.
        java.nio.file.Files.writeString(file, "garbage");
        assertThatThrownBy(() -> new TsoService(vertx, tsoNic, List.of(), 1000).checkpoint(file).start()
            .await(10, TimeUnit.SECONDS)).hasMessageContaining("not a timestamp");
        assertThat(tsoNic.region(TsoLayout.REGION)).isNull();
    }

    /**
     * A restart where the proxies' high water, not the checkpoint, is the bound (C8): a counter that ran more than the
     * gap past its last checkpoint (its checkpoint writes failing, say) must not be restarted below what a proxy
     * handed out, nor below what a compute node's group handed out.
     */
    @Test
    void shouldStartAboveAProxysHighWaterWhenItExceedsTheCheckpointPlusTheGap() throws Exception {
        final java.nio.file.Path file = java.nio.file.Files.createTempDirectory("tso").resolve("checkpoint");
        java.nio.file.Files.writeString(file, "7");
        final long proxyHigh = 7 + TsoService.CHECKPOINT_GAP + 12_345;
        final long cnHigh = proxyHigh - 1;
        final var proxy = vertx.eventBus().consumer(TsoLayout.highWaterAddress("proxy9"), m -> m.reply(proxyHigh));
        final var cn = vertx.eventBus().consumer(TsoLayout.highWaterAddress("cn9"), m -> m.reply(cnHigh));
        proxy.completion().await(10, TimeUnit.SECONDS);
        cn.completion().await(10, TimeUnit.SECONDS);
        service.stop().await(10, TimeUnit.SECONDS);
        final TsoService restarted = new TsoService(vertx, tsoNic, List.of("cn9", "proxy9"), 1000).checkpoint(file);
        restarted.start().await(10, TimeUnit.SECONDS);
        assertThat(restarted.startedAt()).as("above the proxy, not at the checkpoint plus the gap")
            .isEqualTo(proxyHigh + 1);
        assertThat(tsoNic.region(TsoLayout.REGION).buffer().getLongVolatile(TsoLayout.COUNTER_OFFSET))
            .as("the counter opens there").isEqualTo(proxyHigh + 1);
        assertThat(TsoService.readCheckpoint(file)).as("and that start is on disk before it opens")
            .isEqualTo(proxyHigh + 1 + TsoService.CHECKPOINT_GAP);
        restarted.stop().await(10, TimeUnit.SECONDS);
        proxy.unregister().await(10, TimeUnit.SECONDS);
        cn.unregister().await(10, TimeUnit.SECONDS);
    }

    @Test
    void shouldGiveUpOnASilentSourceWithinItsLimitAndFetchTheGroupElsewhere() throws Exception {
        final Context loop = vertx.getOrCreateContext();
        // A proxy whose connection never completes (a vanished host), a counter whose channel never does.
        final ProxyTsoSource silentProxy = new ProxyTsoSource("silent", () -> Promise.<io.scythe.rrpc.Rocket>promise()
            .future(), r -> { }, 200);
        final int[] locates = {0};
        final DirectTsoSource silentCounter = DirectTsoSource.relocating("tso", () -> {
            locates[0]++;
            return Future.succeededFuture(counter);
        }, () -> Promise.<RdmaChannel>promise().future(), ch -> { }, 200);
        for (final TsoSource silent : List.of(silentProxy, silentCounter)) {
            final long start = System.nanoTime();
            assertThatThrownBy(() -> onContext(loop, () -> silent.fetch(1)))
                .isInstanceOf(java.util.concurrent.TimeoutException.class).hasMessageContaining("within 200 ms");
            assertThat(System.nanoTime() - start).as(silent.name()).isGreaterThanOrEqualTo(200_000_000L);
        }
        assertThatThrownBy(() -> onContext(loop, () -> silentCounter.fetch(1)))
            .isInstanceOf(java.util.concurrent.TimeoutException.class);
        assertThat(locates[0]).as("a counter that went silent is located again").isEqualTo(2);
        // In a group: the silent ones are skipped after their limit; every member gets a timestamp, in order.
        final TsoGroup g = onContext(loop, () -> Future.succeededFuture(new TsoGroup(16,
            new java.util.SplittableRandom(3), silentProxy, silentCounter,
            new DirectTsoSource(counter, channelTo(cn, "tso")))));
        final List<long[]> got = onContext(loop, () -> run(g, 4, 30));
        final Set<Long> seen = uniqueAndIncreasing(got);
        assertThat(seen).hasSize(4 * 30);
        assertThat(g.failovers()).isPositive();
    }

    @Test
    void shouldNotWaitForAnIssuerThatLeftTheClusterWhenTheCheckpointCoversIt() throws Exception {
        final java.nio.file.Path file = java.nio.file.Files.createTempDirectory("tso").resolve("checkpoint");
        java.nio.file.Files.writeString(file, "1000");
        service.stop().await(10, TimeUnit.SECONDS);
        // Gone but no checkpoint: nothing covers what it handed out, so the service does not start.
        assertThatThrownBy(() -> new TsoService(vertx, tsoNic, List.of("ghost"), 200).issuerGone(i -> true).start()
            .await(10, TimeUnit.SECONDS)).hasMessageContaining("issuer ghost did not report");
        // A checkpoint but the issuer still a member: it must answer.
        assertThatThrownBy(() -> new TsoService(vertx, tsoNic, List.of("ghost"), 200).checkpoint(file)
            .issuerGone(i -> false).start().await(10, TimeUnit.SECONDS))
            .hasMessageContaining("issuer ghost did not report");
        assertThat(tsoNic.region(TsoLayout.REGION)).isNull();
        // Left the cluster, and a checkpoint: started above checkpoint + gap, and the start value is on disk at once
        // (a crash before the first periodic write must not restart at the same value).
        final TsoService restarted = new TsoService(vertx, tsoNic, List.of("ghost"), 200).checkpoint(file)
            .issuerGone("ghost"::equals);
        restarted.start().await(10, TimeUnit.SECONDS);
        assertThat(restarted.startedAt()).isEqualTo(1000 + TsoService.CHECKPOINT_GAP + 1);
        assertThat(java.nio.file.Files.readString(file).trim()).isEqualTo(Long.toString(restarted.startedAt()));
        restarted.stop().await(10, TimeUnit.SECONDS);
    }

    @Test
    void shouldLetAPausedIssuerGoOneShortAttemptAfterItsMemberLeft() throws Exception {
        final java.nio.file.Path file = java.nio.file.Files.createTempDirectory("tso").resolve("checkpoint");
        java.nio.file.Files.writeString(file, "1000");
        service.stop().await(10, TimeUnit.SECONDS);
        // A paused issuer: its handler is registered but never answers, and its member leaves 1.5 s later (the
        // membership's verdict on a SIGSTOPped process). Short attempts let it go then, not after one long wait.
        final io.vertx.core.eventbus.MessageConsumer<Object> paused = vertx.eventBus()
            .consumer(TsoLayout.highWaterAddress("paused"), m -> { });
        paused.completion().await(10, TimeUnit.SECONDS);
        final long leftAt = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(1500);
        final TsoService restarted = new TsoService(vertx, tsoNic, List.of("paused"), 200).checkpoint(file)
            .issuerGone(issuer -> System.nanoTime() - leftAt >= 0);
        restarted.start().await(10, TimeUnit.SECONDS);
        assertThat(restarted.startedAt()).isEqualTo(1000 + TsoService.CHECKPOINT_GAP + 1);
        restarted.stop().await(10, TimeUnit.SECONDS);
        paused.unregister().await(10, TimeUnit.SECONDS);
    }
}
