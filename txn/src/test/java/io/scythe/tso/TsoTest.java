package io.scythe.tso;

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

    @Test
    void shouldHandOutUniqueIncreasingTimestampsToManyConcurrentFlowsWithFewFetches() throws Exception {
        final List<Context> loops = List.of(vertx.getOrCreateContext(), vertx.getOrCreateContext());
        final List<TsoGroup> groups = new ArrayList<>();
        final List<Future<List<long[]>>> runs = new ArrayList<>();
        for (final Context loop : loops) {
            final Promise<List<long[]>> done = Promise.promise();
            loop.runOnContext(v -> {
                final TsoGroup g = group();
                groups.add(g);
                run(g, 64, 100).onComplete(done);
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
}
