package io.scythe.txn.scythe;

import io.scythe.bridge.BridgeVerticle;
import io.scythe.bridge.RdmaChannel;
import io.scythe.fabric.CostModel;
import io.scythe.fabric.FabricOptions;
import io.scythe.fabric.Nic;
import io.scythe.fabric.local.LocalFabric;
import io.scythe.hotspot.Watermarks;
import io.scythe.rrpc.RpcServer;
import io.scythe.rrpc.RrpcClient;
import io.scythe.rrpc.RrpcOptions;
import io.scythe.storage.LogDb;
import io.scythe.storage.ObjectLayout;
import io.scythe.storage.Table;
import io.scythe.storage.TableDescriptor;
import io.scythe.storage.TableSchema;
import io.scythe.txn.ford.CasLock;
import io.scythe.txn.runtime.LoopTimers;
import io.scythe.txn.runtime.Timers;
import io.vertx.core.Context;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;
import io.vertx.core.VertxOptions;
import io.vertx.core.json.JsonObject;
import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;

import static org.assertj.core.api.Assertions.assertThat;

/** The Takeout Lock end to end: the Lock RPC on a memory node, hangout and polling on compute nodes. */
class TakeoutLockServiceTest {
    private static final int OBJECTS = 8;
    /** A perfect TSO for these tests: one increasing counter. */
    private static final java.util.concurrent.atomic.AtomicLong TIMESTAMPS = new java.util.concurrent.atomic.AtomicLong();
    private Vertx vertx;
    private LocalFabric fabric;
    private Table table;
    private TakeoutLockService service;
    private TicketLedger ledger;
    private RrpcClient rrpc;

    private void start(final boolean sortRounds) throws Exception {
        vertx = Vertx.vertx(new VertxOptions().setEventLoopPoolSize(2));
        BridgeVerticle.deployOnEveryEventLoop(vertx, new JsonObject()).await(10, TimeUnit.SECONDS);
        fabric = new LocalFabric(new FabricOptions().costModel(CostModel.cx5()));
        final Nic mn = fabric.attachNow("mn");
        final LogDb db = new LogDb(mn);
        table = db.create(TableSchema.fixed(1, "counters", 8, OBJECTS));
        final UnsafeBuffer zero = new UnsafeBuffer(new byte[8]);
        for (long k = 0; k < OBJECTS; k++) {
            table.insert(k, zero, 0, 8, 1);
        }
        final RpcServer server = new RpcServer(vertx, mn, new RrpcOptions());
        ledger = new TicketLedger();
        service = new TakeoutLockService(db, Watermarks.DEFAULT, sortRounds).register(server).ledger(ledger);
        onContext(vertx.getOrCreateContext(), server::start);
        rrpc = new RrpcClient(vertx, fabric.attachNow("cn"), new RrpcOptions());
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

    private TakeoutLockClient client(final Timers timers) {
        return new TakeoutLockClient(timers, rrpc::rocket, rrpc::oneSided);
    }

    @Test
    void shouldExcludeEachOtherAndServeEveryoneWithManyFlowsOnTwoLoops() throws Exception {
        start(true);
        final TableDescriptor d = table.describe();
        final int flows = 16;
        final int rounds = 40;
        final List<Future<Long>> loops = new ArrayList<>();
        for (int l = 0; l < 2; l++) {
            final Context ctx = vertx.getOrCreateContext();
            final Promise<Long> done = Promise.promise();
            ctx.runOnContext(v -> {
                final TakeoutLockClient locks = client(LoopTimers.current());
                final List<Future<Void>> all = new ArrayList<>();
                for (int f = 0; f < flows; f++) {
                    all.add(incrementLoop(locks, d, f % 2, rounds));
                }
                Future.all(all).map(cf -> locks.polls()).onComplete(done);
            });
            loops.add(done.future());
        }
        for (final Future<Long> f : loops) {
            f.await(60, TimeUnit.SECONDS);
        }
        // Increments by READ + WRITE under the lock: none lost, so the lock excluded every other holder.
        long total = 0;
        for (long k = 0; k < 2; k++) {
            final int at = table.offsetOf(table.lookup(k));
            total += table.objectMemory().getLong(at + ObjectLayout.VALUE_OFFSET);
            assertThat(table.objectMemory().getLong(at + ObjectLayout.LOWER_OFFSET))
                .isEqualTo(table.objectMemory().getLong(at + ObjectLayout.UPPER_OFFSET));
        }
        assertThat(total).isEqualTo(2L * flows * rounds);
        assertThat(service.granted()).isEqualTo(2L * flows * rounds);
    }

    /** {@code rounds} times: lock object {@code key} (HOT, retrying refusals), READ, +1, WRITE, unlock. */
    private Future<Void> incrementLoop(final TakeoutLockClient locks, final TableDescriptor d, final long key,
                                       final int rounds) {
        if (rounds == 0) {
            return Future.succeededFuture();
        }
        final long pointer = table.lookup(key);
        final long valueAddress = ObjectLayout.addressOf(pointer) + ObjectLayout.VALUE_OFFSET;
        final UnsafeBuffer value = new UnsafeBuffer(new byte[8]);
        return locks.lock("mn", d, pointer, TIMESTAMPS.incrementAndGet(), true)
            .recover(e -> e instanceof LockRefusedException ? LoopTimers.current().after(5_000)
                .compose(v -> locks.lock("mn", d, pointer, TIMESTAMPS.incrementAndGet(), true))
                : Future.failedFuture(e))
            .compose(grant -> rrpc.oneSided("mn").compose(ch -> ch.read(valueAddress, d.objects().rkey(), value, 0, 8)
                .compose(v -> {
                    value.putLong(0, value.getLong(0) + 1);
                    return ch.write(valueAddress, d.objects().rkey(), value, 0, 8);
                })).compose(v -> locks.unlock(grant)))
            .recover(e -> e instanceof LockRefusedException ? Future.succeededFuture() : Future.failedFuture(e))
            .compose(v -> incrementLoop(locks, d, key, rounds - (value.getLong(0) == 0 ? 0 : 1)));
    }

    @Test
    void shouldGrantARoundSortedByTimestampSoCrossedRequestsQueueInOrder() throws Exception {
        start(true);
        final TableDescriptor d = table.describe();
        final long pointer = table.lookup(3);
        final List<Long> tickets = onContext(vertx.getOrCreateContext(), () -> {
            final TakeoutLockClient locks = client(LoopTimers.current());
            // Issued in one loop turn: one bucket, one round at the memory node; newest timestamp first.
            final List<Future<Long>> order = new ArrayList<>();
            for (final long ts : new long[] {300, 200, 100}) {
                final Promise<Long> ticket = Promise.promise();
                locks.lock("mn", d, pointer, ts, true).onSuccess(g -> {
                    ticket.complete(g.ticket());
                    locks.unlock(g);
                }).onFailure(ticket::fail);
                order.add(ticket.future());
            }
            return Future.all(order).map(cf -> List.of(cf.<Long>resultAt(0), cf.<Long>resultAt(1),
                cf.<Long>resultAt(2)));
        });
        assertThat(tickets).as("tickets of ts 300, 200, 100").containsExactly(2L, 1L, 0L);
    }

    @Test
    void shouldRefuseCrossedRequestsOutOfOrderWithoutTheSort() throws Exception {
        start(false);
        final TableDescriptor d = table.describe();
        final long pointer = table.lookup(4);
        final List<String> outcomes = onContext(vertx.getOrCreateContext(), () -> {
            final TakeoutLockClient locks = client(LoopTimers.current());
            final List<Future<String>> order = new ArrayList<>();
            for (final long ts : new long[] {300, 200}) {
                order.add(locks.lock("mn", d, pointer, ts, true).map(g -> {
                    locks.unlock(g);
                    return "granted";
                }).recover(e -> Future.succeededFuture(e.getMessage())));
            }
            return Future.all(order).map(cf -> List.of(cf.<String>resultAt(0), cf.<String>resultAt(1)));
        });
        assertThat(outcomes).containsExactly("granted", "Takeout Lock refused-timestamp-order (1 queued)");
    }

    @Test
    void shouldWaitTheHangoutOfQueuedTimesSrttBeforeItsFirstPoll() throws Exception {
        start(true);
        final TableDescriptor d = table.describe();
        final long pointer = table.lookup(5);
        final List<Long> delays = new ArrayList<>();
        final long[] srtt = new long[1];
        onContext(vertx.getOrCreateContext(), () -> {
            final LoopTimers loop = LoopTimers.current();
            final Timers recording = new Timers() {
                @Override
                public long nowNs() {
                    return loop.nowNs();
                }

                @Override
                public Future<Void> after(final long delayNs) {
                    delays.add(delayNs);
                    return loop.after(delayNs);
                }
            };
            final TakeoutLockClient locks = client(recording);
            return locks.lock("mn", d, pointer, 1, true).compose(first -> {
                srtt[0] = locks.srttNs("mn");
                delays.clear();
                // Queued behind one and two holders, in one round.
                final Future<TakeoutLockClient.Grant> second = locks.lock("mn", d, pointer, 2, true);
                final Future<TakeoutLockClient.Grant> third = locks.lock("mn", d, pointer, 3, true);
                // The holder unlocks only well after both requests reached the memory node (an unlock that landed
                // first would make the second the head, granted without a wait: one delay, not two).
                return loop.after(20_000_000).compose(v -> locks.unlock(first))
                    .compose(v -> second).compose(locks::unlock)
                    .compose(v -> third).compose(locks::unlock);
            });
        });
        assertThat(delays).hasSizeGreaterThanOrEqualTo(2);
        // First waits: 1 x SRTT and 2 x SRTT (the SRTT moves a little with each sample in between).
        assertThat(delays.get(0)).isBetween(srtt[0] / 2, srtt[0] * 3);
        assertThat((double) delays.get(1) / delays.get(0)).isBetween(1.5, 2.5);
        assertThat(delays.stream().allMatch(ns -> ns > 0)).isTrue();
    }

    @Test
    void shouldRefuseAMalformedLockRequestAndChangeNothing() throws Exception {
        start(true);
        final TableDescriptor d = table.describe();
        final long pointer = table.lookup(6);
        final String failure = onContext(vertx.getOrCreateContext(), () -> client(LoopTimers.current())
            .lock("mn", d, pointer + 8, 1, false).map(g -> "granted")
            .recover(e -> Future.succeededFuture(e.getMessage())));
        assertThat(failure).contains("malformed");
        assertThat(table.objectMemory().getLong(table.offsetOf(pointer) + ObjectLayout.LOWER_OFFSET)).isZero();
        assertThat(service.badRequests()).isEqualTo(1);
    }

    @Test
    void shouldLetOneCasLockHolderInAtATime() throws Exception {
        start(true);
        final TableDescriptor d = table.describe();
        final long lockAddress = CasLock.lockAddress(table.lookup(7));
        final List<Boolean> got = onContext(vertx.getOrCreateContext(), () -> rrpc.oneSided("mn").compose(ch ->
            CasLock.tryLock(ch, lockAddress, d.objects().rkey(), 11).compose(a ->
                CasLock.tryLock(ch, lockAddress, d.objects().rkey(), 12).compose(b ->
                    CasLock.unlock(ch, lockAddress, d.objects().rkey()).compose(v ->
                        CasLock.tryLock(ch, lockAddress, d.objects().rkey(), 12).map(c -> List.of(a, b, c)))))));
        assertThat(got).containsExactly(true, false, true);
    }

    @Test
    void shouldHoldBackAHotRequestBetweenTheWatermarksSoAnOlderOneArrivingJustAfterGoesFirst() throws Exception {
        start(true);
        final TableDescriptor d = table.describe();
        final long pointer = table.lookup(2);
        final List<Long> tickets = onContext(vertx.getOrCreateContext(), () -> {
            final TakeoutLockClient locks = client(LoopTimers.current());
            // Four queued (one holds, three wait): between the cold (3) and hot (10) watermarks.
            final List<Future<TakeoutLockClient.Grant>> queue = new ArrayList<>();
            for (long ts = 1; ts <= 4; ts++) {
                queue.add(locks.lock("mn", d, pointer, ts, true));
            }
            return LoopTimers.current().after(30_000).compose(v -> {
                final Future<TakeoutLockClient.Grant> young = locks.lock("mn", d, pointer, 20, true);
                return LoopTimers.current().after(5_000).compose(w -> {
                    final Future<TakeoutLockClient.Grant> old = locks.lock("mn", d, pointer, 10, true);
                    // Release the queue one by one, then the two late ones, in ticket order.
                    Future<Void> chain = Future.succeededFuture();
                    for (final Future<TakeoutLockClient.Grant> g : queue) {
                        chain = chain.compose(x -> g).compose(locks::unlock);
                    }
                    // Whichever holds first (ticket 4) lets go, then the other.
                    return chain.compose(x -> Future.any(old, young)).compose(first -> {
                        final TakeoutLockClient.Grant held = old.succeeded() ? old.result() : young.result();
                        return locks.unlock(held);
                    }).compose(x -> Future.all(old, young)).compose(both -> {
                        final TakeoutLockClient.Grant o = both.resultAt(0);
                        final TakeoutLockClient.Grant y = both.resultAt(1);
                        return locks.unlock(o.ticket() > y.ticket() ? o : y).map(x -> List.of(o.ticket(), y.ticket()));
                    });
                });
            });
        });
        assertThat(tickets).as("tickets of ts 10 and ts 20").containsExactly(4L, 5L);
        assertThat(service.deferred()).isGreaterThanOrEqualTo(2);
    }

    @Test
    void shouldBringTheObjectWithALockGrantedAtOnceWhenAsked() throws Exception {
        start(true);
        final TableDescriptor d = table.describe();
        final long pointer = table.lookup(1);
        table.objectMemory().putLong(table.offsetOf(pointer) + ObjectLayout.VALUE_OFFSET, 4242);
        final List<Object> seen = onContext(vertx.getOrCreateContext(), () -> {
            final TakeoutLockClient locks = client(LoopTimers.current());
            return locks.lock("mn", d, pointer, 1, true, true, 1).compose(first -> {
                final Future<TakeoutLockClient.Grant> second = locks.lock("mn", d, pointer, 2, true, true, 2);
                return LoopTimers.current().after(20_000).compose(v -> locks.unlock(first)).compose(v -> second)
                    .compose(g -> locks.unlock(g).map(v -> {
                        final List<Object> out = new ArrayList<>();
                        out.add(first.object() == null ? -1L : first.object().getLong(ObjectLayout.VALUE_OFFSET));
                        out.add(g.object() == null ? "none" : "some");
                        return out;
                    }));
            });
        });
        // At once: the object came with the grant. After waiting its turn: no object (it must READ).
        assertThat(seen).containsExactly(4242L, "none");
    }

    @Test
    void shouldServeReadersTogetherReleasedThroughTheNodeAndAWriterAfterThemAll() throws Exception {
        start(true);
        final TableDescriptor d = table.describe();
        final long pointer = table.lookup(2);
        final int header = table.offsetOf(pointer);
        final List<Object> seen = onContext(vertx.getOrCreateContext(), () -> {
            final TakeoutLockClient locks = client(LoopTimers.current());
            final long ts = TIMESTAMPS.addAndGet(10);
            return locks.lock("mn", d, pointer, ts, true, true, 1, true).compose(r1 ->
                locks.lock("mn", d, pointer, ts + 1, true, true, 2, true).compose(r2 -> {
                    final List<Object> out = new ArrayList<>();
                    out.add(r1.shared() && r2.shared());
                    out.add(r2.object() != null); // served at once beside r1: the object came along
                    final Future<TakeoutLockClient.Grant> writer = locks.lock("mn", d, pointer, ts + 2, true, false, 3);
                    return LoopTimers.current().after(50_000).compose(v -> {
                        out.add(writer.isComplete()); // both readers still hold
                        return locks.unlockShared(r2);
                    }).compose(v -> LoopTimers.current().after(50_000)).compose(v -> {
                        out.add(writer.isComplete()); // r1 still holds
                        return locks.unlockShared(r2).transform(again -> {
                            out.add(again.failed()); // released once only
                            return locks.unlockShared(r1);
                        });
                    }).compose(v -> writer).compose(w -> {
                        out.add(w.ticket());
                        return locks.unlock(w);
                    }).map(v -> out);
                }));
        });
        assertThat(seen).containsExactly(true, true, false, false, true, 2L);
        assertThat(service.sharedGranted()).isEqualTo(2);
        assertThat(service.sharedReleased()).isEqualTo(2);
        assertThat(TakeoutLockKind.queued(table.objectMemory(), header)).isZero();
    }

    @Test
    void shouldSkipADeadNodesUnreleasedSharedTicketOnlyOnceAndNotOneItReleased() throws Exception {
        start(true);
        final int header = table.offsetOf(table.lookup(3));
        final org.agrona.concurrent.AtomicBuffer m = table.objectMemory();
        final TakeoutLock.Outcome out = new TakeoutLock.Outcome();
        final List<Long> uppers = onContext(vertx.getOrCreateContext(), () -> {
            final List<Long> seen = new ArrayList<>();
            // Dead node "a": readers 0 (not released) and 2 (released, so upper = 1 passes ticket 0 while it is
            // held: upper alone cannot tell); live node "b": reader 1, then its writer 3.
            for (final String who : List.of("a", "b", "a")) {
                TakeoutLock.lockShared(m, header, TicketLedger.objectKey(table, header), 1, Watermarks.DEFAULT,
                    ledger, out);
                ledger.granted(who, 1, table, header, out.ticket, out.turn, true);
            }
            TakeoutLock.lock(m, header, 2, true, Watermarks.DEFAULT, out);
            ledger.granted("b", 2, table, header, out.ticket);
            assertThat(ledger.releaseShared("a", table, header, 2)).isTrue();
            m.getAndAddLong(header + ObjectLayout.UPPER_OFFSET, 1);
            assertThat(ledger.releaseShared("a", table, header, 2)).as("twice").isFalse();
            assertThat(ledger.releaseShared("a", table, header, 1)).as("not a's").isFalse();
            assertThat(ledger.heldBy("a")).isEqualTo(1);
            assertThat(ledger.cancel("a")).isEqualTo(1);
            seen.add(m.getLongVolatile(header + ObjectLayout.UPPER_OFFSET)); // a's unreleased one skipped at once
            assertThat(ledger.releaseShared("a", table, header, 0)).as("cancelled: its late release changes nothing")
                .isFalse();
            assertThat(ledger.holderOf(table, header)).isEqualTo("b");
            assertThat(ledger.releaseShared("b", table, header, 1)).isTrue();
            m.getAndAddLong(header + ObjectLayout.UPPER_OFFSET, 1);
            seen.add(m.getLongVolatile(header + ObjectLayout.UPPER_OFFSET)); // the writer's turn
            return Future.succeededFuture(seen);
        });
        assertThat(uppers).containsExactly(2L, 3L);
        assertThat(ledger.holderOf(table, header)).isEqualTo("b");
    }

    /**
     * A shared ticket not yet served (a writer ahead still holds): its release is refused and changes nothing, so a
     * forged early UNLOCK_SHARED cannot add the +1 that lets the run in beside the writer (issue 22's second review,
     * finding 7; failed before: accepted while upper < turn).
     */
    @Test
    void shouldRefuseTheReleaseOfASharedTicketNotYetServed() throws Exception {
        start(true);
        final int header = table.offsetOf(table.lookup(3));
        final org.agrona.concurrent.AtomicBuffer m = table.objectMemory();
        final TakeoutLock.Outcome out = new TakeoutLock.Outcome();
        final List<Boolean> seen = onContext(vertx.getOrCreateContext(), () -> {
            final List<Boolean> s = new ArrayList<>();
            TakeoutLock.lock(m, header, 1, true, Watermarks.DEFAULT, out);
            ledger.granted("w", 1, table, header, out.ticket);
            TakeoutLock.lockShared(m, header, TicketLedger.objectKey(table, header), 2, Watermarks.DEFAULT, ledger,
                out);
            ledger.granted("r", 2, table, header, out.ticket, out.turn, true);
            assertThat(out.turn).isEqualTo(1);
            s.add(ledger.releaseShared("r", table, header, 1)); // the writer holds ticket 0: not served
            s.add(ledger.sharedHeldBy("r") == 1);
            m.getAndAddLong(header + ObjectLayout.UPPER_OFFSET, 1); // the writer unlocks
            s.add(ledger.releaseShared("r", table, header, 1));
            return Future.succeededFuture(s);
        });
        assertThat(seen).containsExactly(false, true, true);
    }

    /**
     * A slot reused by another object: the old object's tickets (exclusive, released one-sidedly, so not yet pruned)
     * are not the new object's. Before, the new reader's release stopped at the old ticket of the same number
     * (refused: its lock never released), the old holder still counted as held, and a recovery cancelling it added 1
     * to the new object's {@code upper}: [false, 2, 2, 1] then.
     */
    @Test
    void shouldForgetAReusedSlotsEarlierTickets() throws Exception {
        start(true);
        final int header = table.offsetOf(table.lookup(4));
        final org.agrona.concurrent.AtomicBuffer m = table.objectMemory();
        final TakeoutLock.Outcome out = new TakeoutLock.Outcome();
        final List<Object> seen = onContext(vertx.getOrCreateContext(), () -> {
            for (int i = 0; i < 2; i++) {
                TakeoutLock.lock(m, header, 1, true, Watermarks.DEFAULT, out);
                ledger.granted("a", 1, table, header, out.ticket);
            }
            m.getAndAddLong(header + ObjectLayout.UPPER_OFFSET, 2); // both released, one-sidedly
            m.putLong(header + ObjectLayout.LOWER_OFFSET, 0); // the slot reused by another object
            m.putLong(header + ObjectLayout.UPPER_OFFSET, 0);
            m.putLong(header + ObjectLayout.QUEUED_TS_OFFSET, 0);
            m.putShort(header + ObjectLayout.INCARNATION_OFFSET,
                (short) (m.getShort(header + ObjectLayout.INCARNATION_OFFSET) + 1));
            for (int i = 0; i < 2; i++) {
                TakeoutLock.lockShared(m, header, TicketLedger.objectKey(table, header), 5, Watermarks.DEFAULT,
                    ledger, out);
                ledger.granted("b", 2, table, header, out.ticket, out.turn, true);
            }
            final List<Object> s = new ArrayList<>();
            s.add(ledger.releaseShared("b", table, header, 0));
            s.add(ledger.heldBy("a"));
            s.add(ledger.cancel("a"));
            s.add(m.getLongVolatile(header + ObjectLayout.UPPER_OFFSET));
            return Future.succeededFuture(s);
        });
        assertThat(seen).containsExactly(true, 0, 0, 0L);
    }
}
