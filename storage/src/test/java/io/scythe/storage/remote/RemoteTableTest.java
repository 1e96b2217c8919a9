package io.scythe.storage.remote;

import io.scythe.bridge.BridgeVerticle;
import io.scythe.fabric.CostModel;
import io.scythe.fabric.FabricOptions;
import io.scythe.fabric.Nic;
import io.scythe.fabric.local.LocalFabric;
import io.scythe.rrpc.RpcServer;
import io.scythe.rrpc.RrpcClient;
import io.scythe.rrpc.RrpcOptions;
import io.scythe.storage.IndexKind;
import io.scythe.storage.LogDb;
import io.scythe.storage.Table;
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
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** Lookups from a compute node: by RPC and one-sided, over both indexes, agree with the memory node's own. */
class RemoteTableTest {
    private static final int KEYS = 5_000;
    private Vertx vertx;
    private LocalFabric fabric;
    private LogDb db;
    private RrpcClient rrpc;

    @BeforeEach
    void setUp() throws Exception {
        vertx = Vertx.vertx(new VertxOptions().setEventLoopPoolSize(2));
        BridgeVerticle.deployOnEveryEventLoop(vertx, new JsonObject()).await(10, TimeUnit.SECONDS);
        fabric = new LocalFabric(new FabricOptions().costModel(CostModel.cx5()));
        final Nic mn = fabric.attachNow("mn");
        db = new LogDb(mn);
        final UnsafeBuffer value = new UnsafeBuffer(new byte[40]);
        for (final IndexKind kind : IndexKind.values()) {
            final Table t = db.create(TableSchema.fixed(kind.ordinal() + 1, "t-" + kind.name().toLowerCase(), 40, KEYS)
                .withIndex(kind));
            for (long k = 0; k < KEYS; k++) {
                value.putLong(0, k);
                t.insert(k * 31, value, 0, 40, 1);
            }
        }
        final RpcServer server = new RpcServer(vertx, mn, new RrpcOptions());
        new LogDbService(db).register(server);
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

    @Test
    void shouldFindTheSamePointersByRpcAndOneSidedOverBothIndexes() throws Exception {
        for (final IndexKind kind : IndexKind.values()) {
            final Table table = db.table(kind.ordinal() + 1);
            final long[] stats = onContext(vertx.getOrCreateContext(), () -> {
                final RemoteTable remote = new RemoteTable(table.describe(), () -> rrpc.oneSided("mn"),
                    () -> rrpc.rocket("mn"));
                final List<Future<Void>> checks = new ArrayList<>();
                final long[] wrong = new long[1];
                for (long k = 0; k < KEYS; k += 97) {
                    final long key = k * 31;
                    final long expected = table.lookup(key);
                    checks.add(remote.lookupRpc(key).compose(byRpc -> remote.lookupOneSided(key).map(oneSided -> {
                        if (byRpc != expected || oneSided != expected) {
                            wrong[0]++;
                        }
                        return null;
                    })));
                }
                checks.add(remote.lookupOneSided(12345).map(p -> {
                    wrong[0] += p == 0 ? 0 : 1;
                    return null;
                }));
                checks.add(remote.lookupRpc(12345).map(p -> {
                    wrong[0] += p == 0 ? 0 : 1;
                    return null;
                }));
                return Future.all(checks).map(v -> new long[] {wrong[0], remote.reads(), remote.rpcs(),
                    checks.size()});
            });
            assertThat(stats[0]).as(kind + ": wrong lookups").isZero();
            final long lookups = stats[3];
            if (kind == IndexKind.HASH) {
                assertThat((double) stats[1] / lookups).as("READs per one-sided hash lookup (80 % load)").isLessThan(1.5);
            } else {
                assertThat((double) stats[1] / lookups).as("READs per one-sided skip-list lookup").isGreaterThan(4);
            }
        }
    }

    /** KEYS pages through every key of both index kinds once; a bad page size is refused with a clear error. */
    @Test
    void shouldEnumerateEveryKeyOnceByPagesOfKeys() throws Exception {
        for (final IndexKind kind : IndexKind.values()) {
            final Table table = db.table(kind.ordinal() + 1);
            final java.util.Set<Long> seen = new java.util.HashSet<>();
            final long[] pages = {0};
            final RemoteTable remote = onContext(vertx.getOrCreateContext(), () -> Future.succeededFuture(
                new RemoteTable(table.describe(), () -> rrpc.oneSided("mn"), () -> rrpc.rocket("mn"))));
            long skip = 0;
            while (true) {
                final long from = skip;
                final RemoteTable.Keys page = onContext(vertx.getOrCreateContext(),
                    () -> remote.keys(from, LogDbRpc.KEYS_MAX));
                assertThat(page.total()).isEqualTo(KEYS);
                pages[0]++;
                for (final long k : page.keys()) {
                    assertThat(seen.add(k)).as(kind + ": key %d once", k).isTrue();
                }
                skip += page.keys().length;
                if (page.keys().length == 0 || skip >= page.total()) {
                    break;
                }
            }
            assertThat(seen).as(kind + ": every key").hasSize(KEYS).allMatch(k -> k % 31 == 0 && k / 31 < KEYS);
            assertThat(pages[0]).isEqualTo((KEYS + LogDbRpc.KEYS_MAX - 1) / LogDbRpc.KEYS_MAX);
            assertThatThrownBy(() -> onContext(vertx.getOrCreateContext(), () -> remote.keys(0, LogDbRpc.KEYS_MAX + 1)))
                .hasMessageContaining("KEYS limit=" + (LogDbRpc.KEYS_MAX + 1));
        }
    }

    @Test
    void shouldCacheAPointerAfterTheFirstLookup() throws Exception {
        final Table table = db.table(IndexKind.HASH.ordinal() + 1);
        final long[] counts = onContext(vertx.getOrCreateContext(), () -> {
            final RemoteTable remote = new RemoteTable(table.describe(), () -> rrpc.oneSided("mn"),
                () -> rrpc.rocket("mn"));
            return remote.lookup(31, RemoteTable.LookupMode.RPC)
                .compose(p -> remote.lookup(31, RemoteTable.LookupMode.RPC))
                .compose(p -> remote.lookup(62, RemoteTable.LookupMode.ONE_SIDED))
                .compose(p -> remote.lookup(62, RemoteTable.LookupMode.ONE_SIDED))
                .map(p -> new long[] {remote.rpcs(), remote.reads(), remote.cached(), p});
        });
        assertThat(counts[0]).isEqualTo(1);
        assertThat(counts[1]).isEqualTo(1);
        assertThat(counts[2]).isEqualTo(2);
        assertThat(counts[3]).isEqualTo(table.lookup(62));
    }

    @Test
    void shouldAgreeOnAbsentKeysTheirBoundAndNewInsertsByRpcAndOneSidedOverBothIndexes() throws Exception {
        for (final IndexKind kind : IndexKind.values()) {
            final Table table = db.table(kind.ordinal() + 1);
            // Ten keys deleted and reclaimed: missing from the index, last at versions up to 109 (the absent bound).
            for (long k = 0; k < 10; k++) {
                assertThat(table.delete(k * 31, 100 + k)).isEqualTo(Table.OK);
            }
            table.reclaim(1_000);
            assertThat(table.absentBound()).isEqualTo(109);
            final List<Long> keys = new ArrayList<>();
            for (long k = 0; k < KEYS; k += 41) {
                keys.add(k * 31); // present, or reclaimed for k < 10
                keys.add(k * 31 + 1); // never existed
            }
            for (long k = 0; k < 10; k++) {
                keys.add(k * 31);
            }
            final List<String> disagreements = onContext(vertx.getOrCreateContext(), () -> {
                final RemoteTable remote = new RemoteTable(table.describe(), () -> rrpc.oneSided("mn"),
                    () -> rrpc.rocket("mn"));
                final List<String> wrong = new ArrayList<>();
                Future<Void> chain = Future.succeededFuture();
                for (final long key : keys) {
                    chain = chain.compose(v -> remote.lookupWithBound(key, RemoteTable.LookupMode.RPC)
                        .compose(byRpc -> remote.lookupWithBound(key, RemoteTable.LookupMode.ONE_SIDED)
                            .map(oneSided -> {
                                final long expected = table.lookup(key);
                                final RemoteTable.Lookup want = new RemoteTable.Lookup(expected,
                                    expected == 0 ? 109 : 0);
                                if (!byRpc.equals(want) || !oneSided.equals(want)) {
                                    wrong.add("key " + key + ": rpc " + byRpc + ", one-sided " + oneSided
                                        + ", memory node " + want);
                                }
                                return null;
                            })));
                }
                return chain.map(wrong);
            });
            assertThat(disagreements).as(kind.name()).isEmpty();
            // A key inserted on the memory node after a one-sided miss: the next one-sided lookup finds it (a miss is
            // never cached), at the pointer the RPC finds.
            final long fresh = 31L * KEYS + 5;
            final long[] before = onContext(vertx.getOrCreateContext(), () -> {
                final RemoteTable remote = new RemoteTable(table.describe(), () -> rrpc.oneSided("mn"),
                    () -> rrpc.rocket("mn"));
                return remote.find(fresh, RemoteTable.LookupMode.ONE_SIDED).map(miss -> {
                    final UnsafeBuffer value = new UnsafeBuffer(new byte[40]);
                    final long inserted = table.insert(fresh, value, 0, 40, 200);
                    return new long[] {miss.pointer(), miss.absentBound(), inserted};
                }).compose(r -> remote.find(fresh, RemoteTable.LookupMode.ONE_SIDED)
                    .compose(hit -> remote.lookupWithBound(fresh, RemoteTable.LookupMode.RPC)
                        .map(byRpc -> new long[] {r[0], r[1], r[2], hit.pointer(), byRpc.pointer(),
                            remote.cached()})));
            });
            assertThat(before[0]).as(kind + ": missing before its insert").isZero();
            assertThat(before[1]).as(kind + ": with the table's bound").isEqualTo(109);
            assertThat(before[2]).as(kind + ": inserted").isPositive();
            assertThat(before[3]).as(kind + ": found one-sided after its insert").isEqualTo(before[2]);
            assertThat(before[4]).as(kind + ": the RPC agrees").isEqualTo(before[2]);
            assertThat(before[5]).as(kind + ": only the hit is cached").isEqualTo(1);
        }
    }
}
