package io.scythe.storage.mv;

import io.scythe.bridge.BridgeVerticle;
import io.scythe.fabric.CostModel;
import io.scythe.fabric.FabricOptions;
import io.scythe.fabric.Nic;
import io.scythe.fabric.local.LocalFabric;
import io.scythe.rrpc.RpcException;
import io.scythe.rrpc.RpcServer;
import io.scythe.rrpc.RrpcClient;
import io.scythe.rrpc.RrpcOptions;
import io.scythe.storage.HorizonBoard;
import io.scythe.storage.TableSchema;
import io.vertx.core.Context;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;
import io.vertx.core.VertxOptions;
import io.vertx.core.json.JsonObject;
import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Supplier;

import static io.scythe.storage.mv.VersionHistory.VALUE_BYTES;
import static io.scythe.storage.mv.VersionHistory.valueOf;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * Compute nodes on multi-version tables: each operation one-sided and by RPC, and several event loops installing,
 * committing, rolling back and reading one-sided (some by RPC) while the memory node's CPU reclaims below the horizon
 * they announce on its {@link HorizonBoard}.
 */
class MvRemoteTableTest {
    private static final long OWNER = 0x1_0000_0001L;
    private Vertx vertx;
    private LocalFabric fabric;
    private MvStore store;
    private HorizonBoard board;
    private RrpcClient rrpc;
    private List<Context> loops;

    @BeforeEach
    void setUp() throws Exception {
        vertx = Vertx.vertx(new VertxOptions().setEventLoopPoolSize(3));
        BridgeVerticle.deployOnEveryEventLoop(vertx, new JsonObject()).await(10, TimeUnit.SECONDS);
        loops = BridgeVerticle.eventLoopContexts(vertx);
        fabric = new LocalFabric(new FabricOptions().costModel(CostModel.zero()));
        final Nic mn = fabric.attachNow("mn");
        store = new MvStore(mn);
        board = new HorizonBoard(mn);
        final RpcServer server = new RpcServer(vertx, mn, new RrpcOptions());
        new MvService(store).register(server);
        on(loops.get(0), server::start);
        rrpc = new RrpcClient(vertx, fabric.attachNow("cn"), new RrpcOptions());
    }

    @AfterEach
    void tearDown() throws Exception {
        vertx.close().await(10, TimeUnit.SECONDS);
        fabric.close();
    }

    private static <T> T on(final Context context, final Supplier<Future<T>> body) throws Exception {
        final Promise<T> promise = Promise.promise();
        context.runOnContext(v -> body.get().onComplete(promise));
        return promise.future().await(60, TimeUnit.SECONDS);
    }

    private MvTable table(final int slots, final int objects) {
        final MvTable table = store.create(new MvSchema(TableSchema.fixed(1, "hot", VALUE_BYTES, 64)
            .withVersionCapacity(1 << 14), slots));
        for (int i = 0; i < objects; i++) {
            assertThat(table.load(i, valueOf(i, 0), 0, VALUE_BYTES, 0)).isPositive();
        }
        return table;
    }

    private MvRemoteTable remote(final MvTable table) {
        return new MvRemoteTable(table.describe(), () -> rrpc.oneSided("mn"), () -> rrpc.rocket("mn"));
    }

    private static long wtsOf(final MvRead read) {
        if (!read.found()) {
            return read.status();
        }
        assertThat(read.value().getLong(0)).isEqualTo(read.wts());
        assertThat(read.value().getLong(8)).isEqualTo(~read.wts());
        return read.wts();
    }

    @Test
    void shouldDoEachOperationOneSidedAndByRpcAlike() throws Exception {
        final MvTable table = table(2, 8);
        final Context loop = loops.get(1);
        final MvRemoteTable remote = on(loop, () -> Future.succeededFuture(remote(table)));
        final long p = table.lookup(3);
        assertThat(on(loop, () -> remote.lookup(3))).isEqualTo(p);
        assertThat(on(loop, () -> remote.lookupRpc(3))).isEqualTo(p);
        assertThat(on(loop, () -> remote.lookup(99))).isZero();

        final int first = on(loop, () -> remote.install(p, 10, OWNER, valueOf(3, 10), 0, VALUE_BYTES, false));
        assertThat(first).isGreaterThanOrEqualTo(0);
        assertThat(on(loop, () -> remote.read(p, 12)).status()).isEqualTo(MvStatus.PENDING);
        assertThat(on(loop, () -> remote.readRpc(p, 12, false)).wts()).isEqualTo(10);
        on(loop, () -> remote.commit(p, first, 10, null, 0, -1));
        assertThat(wtsOf(on(loop, () -> remote.read(p, 12)))).isEqualTo(10);
        assertThat(wtsOf(on(loop, () -> remote.readRpc(p, 15, true)))).isEqualTo(10);
        assertThat(on(loop, () -> remote.install(p, 14, OWNER, valueOf(3, 14), 0, VALUE_BYTES, false)))
            .as("read at 15 by RPC").isEqualTo(MvStatus.TOO_LATE);
        assertThat(on(loop, () -> remote.installRpc(p, 15, OWNER, valueOf(3, 15), 0, VALUE_BYTES, false)))
            .isEqualTo(MvStatus.TOO_LATE);

        final long rpcsBefore = remote.rpcs();
        final int preAttached = on(loop, () -> remote.install(p, 20, OWNER, null, 0, -1, false));
        assertThat(preAttached).as("2 slots full: installed by RPC, 0 moved out").isGreaterThanOrEqualTo(0);
        assertThat(remote.rpcs()).isEqualTo(rpcsBefore + 1);
        assertThat(table.evictions()).isEqualTo(1);
        assertThat(on(loop, () -> remote.commitRpc(p, preAttached, 20, valueOf(3, 20), 0, VALUE_BYTES)))
            .isEqualTo(MvStatus.OK);
        final long readsBefore = remote.reads();
        final MvRead old = on(loop, () -> remote.read(p, 5));
        assertThat(wtsOf(old)).as("from the overflow chain").isEqualTo(0);
        assertThat(old.slot()).isEqualTo(MvRead.OVERFLOW);
        assertThat(remote.reads()).as("the object, then one record").isEqualTo(readsBefore + 2);

        assertThat(on(loop, () -> remote.makeRoom(p))).isEqualTo(MvStatus.OK);
        final int rolledBack = on(loop, () -> remote.installRpc(p, 30, OWNER, valueOf(3, 30), 0, VALUE_BYTES, false));
        on(loop, () -> remote.rollback(p, rolledBack, 30));
        assertThat(on(loop, () -> remote.rollbackRpc(p, rolledBack, 30))).isEqualTo(MvStatus.NOT_PENDING);
        assertThat(wtsOf(on(loop, () -> remote.peek(p, 35)))).isEqualTo(20);
        final int exclusive = on(loop, () -> remote.install(p, 40, OWNER, valueOf(3, 40), 0, VALUE_BYTES, true));
        assertThat(on(loop, () -> remote.install(p, 41, OWNER, valueOf(3, 41), 0, VALUE_BYTES, true)))
            .isEqualTo(MvStatus.PENDING_EXISTS);
        assertThat(on(loop, () -> remote.commitRpc(p, exclusive, 40, null, 0, -1))).isEqualTo(MvStatus.OK);

        final long atomicsBefore = remote.atomics();
        assertThat(wtsOf(on(loop, () -> remote.read(p, 15)))).as("an atomic found rts at 15 already").isEqualTo(10);
        assertThat(remote.atomics()).as("a read below an rts seen needs no CAS").isEqualTo(atomicsBefore);
        assertThat(table.latchesHeld()).isZero();
        assertThat(table.pendingVersions()).isZero();
    }

    @Test
    void shouldAnswerMalformedOrMisdirectedCallsWithAClearError() throws Exception {
        final MvTable table = table(4, 1);
        final Context loop = loops.get(1);
        final MvRemoteTable stranger = on(loop, () -> Future.succeededFuture(new MvRemoteTable(
            new MvTableDescriptor(new MvSchema(TableSchema.fixed(9, "nowhere", VALUE_BYTES, 8), 4),
                table.describe().objects(), table.describe().index(), null, table.describe().hashBuckets()),
            () -> rrpc.oneSided("mn"), () -> rrpc.rocket("mn"))));
        assertThatThrownBy(() -> on(loop, () -> stranger.readRpc(table.lookup(0), 5, true)))
            .isInstanceOf(RpcException.class).hasMessageContaining("no multi-version table 9")
            .satisfies(e -> assertThat(((RpcException) e).code()).isEqualTo(MvRpc.UNKNOWN_TABLE));
        final UnsafeBuffer shortRead = new UnsafeBuffer(new byte[12]);
        shortRead.putInt(0, 1);
        assertThatThrownBy(() -> on(loop, () -> rrpc.rocket("mn").compose(r -> r.call(MvRpc.READ, shortRead))))
            .isInstanceOf(RpcException.class).hasMessageContaining("takes 24 bytes, got 12");
        final MvRemoteTable remote = on(loop, () -> Future.succeededFuture(remote(table)));
        assertThat(on(loop, () -> remote.installRpc(table.lookup(0), 10, OWNER, valueOf(0, 10), 0, 8, false)))
            .isEqualTo(MvStatus.BAD_LENGTH);
        assertThat(on(loop, () -> remote.install(table.lookup(0), 10, OWNER, valueOf(0, 10), 0, 8, false)))
            .isEqualTo(MvStatus.BAD_LENGTH);
        assertThatThrownBy(() -> remote.install(table.lookup(0), 10, 0, valueOf(0, 10), 0, VALUE_BYTES, false))
            .isInstanceOf(IllegalArgumentException.class);
        assertThat(on(loop, () -> remote.readRpc(table.lookup(0) + 8, 5, true)).status()).isEqualTo(MvStatus.STALE);
        assertThat(table.pendingVersions()).isZero();
    }

    // ------------------------------------------------------------------------------------------------ concurrent

    private static final int OBJECTS = 3;
    private static final int FLOWS_PER_LOOP = 8;
    private static final int OPS_PER_FLOW = 400;
    private static final long READ_WINDOW = 100;

    @Test
    void shouldKeepTheRulesForOneSidedCallsFromSeveralLoopsWhileTheMemoryNodeReclaims() throws Exception {
        final MvTable table = table(3, OBJECTS);
        final long[] pointers = new long[OBJECTS];
        for (int i = 0; i < OBJECTS; i++) {
            pointers[i] = table.lookup(i);
        }
        final VersionHistory history = new VersionHistory(OBJECTS);
        final AtomicLong clock = new AtomicLong(1);
        for (int slot = 0; slot < 2; slot++) {
            board.region().buffer().putLongVolatile(HorizonBoard.slotOffset(slot), 1);
        }
        final AtomicBoolean running = new AtomicBoolean(true);
        final AtomicLong freed = new AtomicLong();
        final AtomicReference<Throwable> failure = new AtomicReference<>();
        final Thread reclaimer = new Thread(() -> {
            while (running.get()) {
                freed.addAndGet(store.reclaim(board, clock.get()));
                Thread.yield();
            }
        }, "reclaimer");
        reclaimer.setUncaughtExceptionHandler((t, e) -> failure.set(e));
        reclaimer.start();
        final List<Future<Void>> done = new ArrayList<>();
        // Both loops add their driver at once: a plain ArrayList could throw there (CI 219: one add read the empty
        // array and the other's size, an ArrayIndexOutOfBoundsException on the loop, so that loop's promise never
        // completed and the test hung 120 s). And whatever a loop throws now fails its promise at once.
        final List<LoopDriver> drivers = new java.util.concurrent.CopyOnWriteArrayList<>();
        for (int loop = 1; loop <= 2; loop++) {
            final int boardSlot = loop - 1;
            final Context context = loops.get(loop);
            final Promise<Void> finished = Promise.promise();
            context.runOnContext(v -> {
                try {
                    final LoopDriver driver = new LoopDriver(boardSlot, remote(table), pointers, clock, history);
                    drivers.add(driver);
                    driver.run().onComplete(finished);
                } catch (final RuntimeException | Error e) {
                    finished.tryFail(e);
                }
            });
            done.add(finished.future());
        }
        Future.all(done).await(120, TimeUnit.SECONDS);
        running.set(false);
        reclaimer.join();

        assertThat(failure.get()).isNull();
        history.assertKeptBy(table, 2L * FLOWS_PER_LOOP * OPS_PER_FLOW / 10, 2L * FLOWS_PER_LOOP * OPS_PER_FLOW / 4);
        assertThat(freed.get()).as("versions reclaimed").isPositive();
        assertThat(drivers.stream().mapToLong(d -> d.remote.raiseRetries()).sum() + history.refusals.get())
            .as("readers and installers met").isPositive();

        final long horizon = board.horizon(clock.get());
        store.reclaim(horizon);
        history.assertEveryVersionFrom(table, pointers, horizon, clock.get() + 1);
    }

    /**
     * One event loop's transactions: flows that read at timestamps at or above the loop's announced floor, and install
     * at fresh timestamps, deciding later (commit or roll back), one-sided mostly and by RPC sometimes. The floor is
     * raised only to a bound of every read in flight and announced on the HorizonBoard with a WRITE.
     */
    private final class LoopDriver {
        private final int boardSlot;
        private final MvRemoteTable remote;
        private final long[] pointers;
        private final AtomicLong clock;
        private final VersionHistory history;
        private final TreeMap<Long, Integer> readsInFlight = new TreeMap<>();
        private final UnsafeBuffer announcement = new UnsafeBuffer(new byte[Long.BYTES]);
        private long floor = 1;
        private long ops;

        LoopDriver(final int boardSlot, final MvRemoteTable remote, final long[] pointers, final AtomicLong clock,
                   final VersionHistory history) {
            this.boardSlot = boardSlot;
            this.remote = remote;
            this.pointers = pointers;
            this.clock = clock;
            this.history = history;
        }

        Future<Void> run() {
            final List<Future<Void>> flows = new ArrayList<>();
            for (int flow = 0; flow < FLOWS_PER_LOOP; flow++) {
                final long owner = ((long) (boardSlot + 1) << 32) | (flow + 1);
                flows.add(flow(new SplittableRandom(owner), owner, OPS_PER_FLOW));
            }
            return Future.all(flows).compose(v -> announce(Long.MAX_VALUE)); // withdrawn: no reads any more
        }

        private Future<Void> flow(final SplittableRandom random, final long owner, final int left) {
            if (left == 0) {
                return Future.succeededFuture();
            }
            final Future<Void> op = random.nextInt(100) < 45 ? read(random) : write(random, owner);
            return op.compose(v -> flow(random, owner, left - 1));
        }

        private Future<Void> read(final SplittableRandom random) {
            if (++ops % 16 == 0) {
                raiseFloor();
            }
            final long now = clock.get();
            final long ts = random.nextBoolean() ? now : floor + random.nextLong(now - floor + 1);
            final int object = random.nextInt(OBJECTS);
            readsInFlight.merge(ts, 1, Integer::sum);
            final Future<MvRead> read = random.nextInt(5) == 0 ? remote.readRpc(pointers[object], ts, true)
                : remote.read(pointers[object], ts);
            return read.map(r -> {
                readsInFlight.computeIfPresent(ts, (k, n) -> n == 1 ? null : n - 1);
                history.read(object, ts, r, r.value() == null ? new UnsafeBuffer(new byte[0]) : r.value(), 0);
                return null;
            });
        }

        /** Raises the floor to a bound of every read in flight; picks use it at once, the board hears of it next. */
        private void raiseFloor() {
            final long bound = readsInFlight.isEmpty() ? Long.MAX_VALUE : readsInFlight.firstKey();
            final long next = Math.min(bound, clock.get() - READ_WINDOW);
            if (next > floor) {
                floor = next;
                announce(next);
            }
        }

        private Future<Void> announce(final long ts) {
            final UnsafeBuffer word = new UnsafeBuffer(new byte[Long.BYTES]);
            word.putLong(0, ts == Long.MAX_VALUE ? 0 : ts);
            return rrpc.oneSided("mn").compose(ch -> ch.write(board.region().describe(),
                HorizonBoard.slotOffset(boardSlot), word, 0, Long.BYTES));
        }

        private Future<Void> write(final SplittableRandom random, final long owner) {
            final int object = random.nextInt(OBJECTS);
            final long ts = clock.incrementAndGet();
            final boolean preAttached = random.nextInt(4) == 0;
            final boolean byRpc = random.nextInt(5) == 0;
            final UnsafeBuffer value = preAttached ? null : valueOf(object, ts);
            final int length = preAttached ? -1 : VALUE_BYTES;
            return install(object, ts, owner, value, length, byRpc, 0).compose(slot -> {
                if (slot < 0) {
                    history.refusals.incrementAndGet();
                    return Future.succeededFuture();
                }
                return holdThenDecide(random, object, ts, slot, preAttached);
            });
        }

        private Future<Integer> install(final int object, final long ts, final long owner, final UnsafeBuffer value,
                                        final int length, final boolean byRpc, final int attempt) {
            final Future<Integer> installed = byRpc
                ? remote.installRpc(pointers[object], ts, owner, value, 0, length, false)
                : remote.install(pointers[object], ts, owner, value, 0, length, false);
            return installed.compose(slot -> {
                if (slot != MvStatus.LATCHED || attempt == 100) {
                    return Future.succeededFuture(slot);
                }
                history.latched.incrementAndGet();
                final Promise<Integer> again = Promise.promise();
                vertx.setTimer(1, t -> install(object, ts, owner, value, length, byRpc, attempt + 1)
                    .onComplete(again));
                return again.future();
            });
        }

        /** Keeps the version pending a while (other flows run meanwhile), then commits or rolls it back. */
        private Future<Void> holdThenDecide(final SplittableRandom random, final int object, final long ts,
                                            final int slot, final boolean preAttached) {
            final boolean commit = random.nextInt(10) < 7;
            final boolean byRpc = random.nextInt(5) == 0;
            final Promise<Void> held = Promise.promise();
            vertx.runOnContext(v -> held.complete());
            return held.future().compose(v -> {
                final long p = pointers[object];
                final UnsafeBuffer value = preAttached ? valueOf(object, ts) : null;
                final int length = preAttached ? VALUE_BYTES : -1;
                if (commit) {
                    final Future<Void> committed = byRpc ? remote.commitRpc(p, slot, ts, value, 0, length)
                        .map(status -> expectOk(status)) : remote.commit(p, slot, ts, value, 0, length);
                    return committed.map(x -> {
                        history.committed(object, ts);
                        return null;
                    });
                }
                final Future<Void> rolledBack = byRpc ? remote.rollbackRpc(p, slot, ts).map(status -> expectOk(status))
                    : remote.rollback(p, slot, ts);
                return rolledBack.map(x -> {
                    history.rolledBack(object, ts);
                    return null;
                });
            });
        }

        private Void expectOk(final int status) {
            if (status != MvStatus.OK) {
                throw new IllegalStateException("decided a pending version: " + MvStatus.name(status));
            }
            return null;
        }
    }
}
