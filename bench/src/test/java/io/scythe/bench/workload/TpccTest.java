package io.scythe.bench.workload;

import io.scythe.bridge.BridgeVerticle;
import io.scythe.node.EmbeddedScythe;
import io.scythe.storage.LogDb;
import io.scythe.storage.Table;
import io.scythe.txn.AbortException;
import io.scythe.txn.AbortReason;
import io.scythe.txn.Txn;
import io.scythe.txn.api.Procedures;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;
import io.vertx.core.VertxOptions;
import io.vertx.core.json.JsonObject;
import org.agrona.concurrent.AtomicBuffer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;

import static org.assertj.core.api.Assertions.assertThat;

/** TPC-C on a tiny database (2 warehouses, 30 customers per district, 100 items): loader, each transaction, checks. */
class TpccTest {
    private static final Tpcc.Scale SCALE = new Tpcc.Scale(2, 30, 100, 2_000);
    private Vertx vertx;
    private EmbeddedScythe cluster;
    private List<LogDb> dbs;

    @BeforeEach
    void setUp() throws Exception {
        vertx = Vertx.vertx(new VertxOptions().setEventLoopPoolSize(1));
        BridgeVerticle.deployOnEveryEventLoop(vertx, new JsonObject()).await(30, TimeUnit.SECONDS);
        cluster = EmbeddedScythe.deploy(vertx, new JsonObject().put("memoryNodes", 2).put("protocol", "scythe"),
            (db, part, parts) -> Tpcc.load(db, SCALE, part, parts, 5), new Procedures());
        dbs = cluster.memoryNodes();
    }

    @AfterEach
    void tearDown() throws Exception {
        if (cluster != null) {
            cluster.close();
        }
        vertx.close().await(30, TimeUnit.SECONDS);
    }

    private <R> R run(final Function<Txn, Future<R>> body) throws Exception {
        final Promise<R> done = Promise.promise();
        cluster.loops().get(0).runOnContext(v -> cluster.coordinator().run(body).map(o -> o.result())
            .onComplete(done));
        return done.future().await(60, TimeUnit.SECONDS);
    }

    private long rows(final String table) {
        return dbs.stream().mapToLong(db -> db.table(table).size()).sum();
    }

    /** Value memory and offset of row {@code key} of {@code table} (fails when absent or deleted). */
    private record Row(AtomicBuffer m, int at) {
        long getLong(final int field) {
            return m.getLongVolatile(at + field);
        }

        int getInt(final int field) {
            return m.getIntVolatile(at + field);
        }
    }

    private Row row(final String table, final long key) {
        final Table t = Tpcc.partitionOf(dbs, table, key);
        final org.agrona.concurrent.AtomicBuffer at = Tpcc.rowAt(t, key);
        assertThat(at).as(table + " key " + key).isNotNull();
        return new Row(at, 0);
    }

    private boolean present(final String table, final long key) {
        return Tpcc.rowAt(Tpcc.partitionOf(dbs, table, key), key) != null;
    }

    private static void assertConsistent(final Map<String, List<String>> conditions) {
        assertThat(conditions).hasSize(5);
        conditions.forEach((name, violations) -> assertThat(violations).as(name).isEmpty());
    }

    @Test
    void shouldLoadEveryTableWithTheStandardsCountsAndConsistently() {
        assertThat(rows(Tpcc.WAREHOUSE)).isEqualTo(2);
        assertThat(rows(Tpcc.DISTRICT)).isEqualTo(20);
        assertThat(rows(Tpcc.CUSTOMER)).isEqualTo(600);
        assertThat(rows(Tpcc.HISTORY)).isEqualTo(600);
        assertThat(rows(Tpcc.ORDER)).isEqualTo(600);
        assertThat(rows(Tpcc.NEW_ORDER)).isEqualTo(20 * 9);
        assertThat(rows(Tpcc.ITEM)).isEqualTo(100);
        assertThat(rows(Tpcc.STOCK)).isEqualTo(200);
        assertThat(rows(Tpcc.LAST_ORDER)).isEqualTo(600);
        assertThat(rows(Tpcc.CUSTOMER_NAME)).isEqualTo(20 * 30);
        assertThat(rows(Tpcc.ORDER_LINE)).isBetween(600L * 5, 600L * 15);
        assertThat(row(Tpcc.DISTRICT, Tpcc.districtKey(2, 3)).getInt(Tpcc.D.NEXT_O_ID)).isEqualTo(31);
        assertThat(row(Tpcc.DELIVERY_CURSOR, Tpcc.districtKey(2, 3)).getInt(0)).isEqualTo(22);
        assertThat(Tpcc.warehouseYtd(dbs, SCALE)).isEqualTo(2 * 30_000_000L);
        assertConsistent(Tpcc.check(dbs, SCALE));
    }

    @Test
    void shouldPlaceANewOrderWithItsLinesStockAndLastOrder() throws Exception {
        final long dk = Tpcc.districtKey(1, 4);
        final int stockBefore = row(Tpcc.STOCK, Tpcc.stockKey(1, 7)).getInt(Tpcc.S.QUANTITY);
        final long price = row(Tpcc.ITEM, 7).getLong(Tpcc.I.PRICE);
        run(txn -> Tpcc.newOrder(txn, 1, 4, 12, List.of(new Tpcc.Line(7, 1, 3), new Tpcc.Line(8, 2, 2),
            new Tpcc.Line(9, 1, 1)), 42));
        assertThat(row(Tpcc.DISTRICT, dk).getInt(Tpcc.D.NEXT_O_ID)).isEqualTo(32);
        final Row order = row(Tpcc.ORDER, Tpcc.orderKey(1, 4, 31));
        assertThat(order.getInt(Tpcc.O.C_ID)).isEqualTo(12);
        assertThat(order.getInt(Tpcc.O.OL_CNT)).isEqualTo(3);
        assertThat(order.getInt(Tpcc.O.ALL_LOCAL)).isZero();
        assertThat(present(Tpcc.NEW_ORDER, Tpcc.orderKey(1, 4, 31))).isTrue();
        assertThat(row(Tpcc.ORDER_LINE, Tpcc.orderLineKey(1, 4, 31, 1)).getLong(Tpcc.OL.AMOUNT)).isEqualTo(3 * price);
        assertThat(row(Tpcc.ORDER_LINE, Tpcc.orderLineKey(1, 4, 31, 2)).getInt(Tpcc.OL.SUPPLY_W_ID)).isEqualTo(2);
        assertThat(present(Tpcc.ORDER_LINE, Tpcc.orderLineKey(1, 4, 31, 4))).isFalse();
        final int expected = stockBefore - 3 >= 10 ? stockBefore - 3 : stockBefore - 3 + 91;
        assertThat(row(Tpcc.STOCK, Tpcc.stockKey(1, 7)).getInt(Tpcc.S.QUANTITY)).isEqualTo(expected);
        assertThat(row(Tpcc.STOCK, Tpcc.stockKey(2, 8)).getInt(Tpcc.S.REMOTE_CNT)).isEqualTo(1);
        assertThat(row(Tpcc.LAST_ORDER, Tpcc.customerKey(1, 4, 12)).getInt(0)).isEqualTo(31);
        assertConsistent(Tpcc.check(dbs, SCALE));
    }

    @Test
    void shouldRollBackANewOrderWithAnUnusedItemLeavingNothing() throws Exception {
        final Throwable failure = runFailure(txn -> Tpcc.newOrder(txn, 1, 1, 1, List.of(new Tpcc.Line(3, 1, 1),
            new Tpcc.Line(SCALE.items() + 1, 1, 1)), 42));
        assertThat(failure).isInstanceOf(AbortException.class);
        assertThat(((AbortException) failure).reason()).isEqualTo(AbortReason.USER);
        assertThat(row(Tpcc.DISTRICT, Tpcc.districtKey(1, 1)).getInt(Tpcc.D.NEXT_O_ID)).isEqualTo(31);
        assertThat(present(Tpcc.ORDER, Tpcc.orderKey(1, 1, 31))).isFalse();
        assertThat(rows(Tpcc.ORDER)).isEqualTo(600);
        assertConsistent(Tpcc.check(dbs, SCALE));
    }

    private Throwable runFailure(final Function<Txn, Future<Long>> body) throws Exception {
        final Promise<Throwable> done = Promise.promise();
        cluster.loops().get(0).runOnContext(v -> cluster.coordinator().run(body).onComplete(ar ->
            done.complete(ar.failed() ? ar.cause() : null)));
        return done.future().await(60, TimeUnit.SECONDS);
    }

    @Test
    void shouldPayByLastNameIntoTheMedianCustomerAndRecordHistory() throws Exception {
        // Last name 3 of district (2, 5): customer 4 for sure (c <= 30 gets name c - 1); ask the name row who.
        final Row names = row(Tpcc.CUSTOMER_NAME, Tpcc.nameKey(2, 5, 3));
        final int n = names.getInt(Tpcc.CN.COUNT);
        final int median = names.m().getShort(names.at() + Tpcc.CN.IDS + 2 * ((n + 1) / 2 - 1)) & 0xffff;
        final long ck = Tpcc.customerKey(2, 5, median);
        final long balance = row(Tpcc.CUSTOMER, ck).getLong(Tpcc.C.BALANCE);
        final long historyKey = Tpcc.FIRST_NEW_HISTORY_KEY + 9;
        final long returned = run(txn -> Tpcc.payment(txn, 1, 2, Tpcc.CustomerRef.byName(2, 5, 3), 12_345,
            historyKey, 7));
        assertThat(returned).isEqualTo(12_345);
        assertThat(row(Tpcc.WAREHOUSE, 1).getLong(Tpcc.W.YTD)).isEqualTo(30_000_000L + 12_345);
        assertThat(row(Tpcc.DISTRICT, Tpcc.districtKey(1, 2)).getLong(Tpcc.D.YTD)).isEqualTo(3_000_000L + 12_345);
        assertThat(row(Tpcc.CUSTOMER, ck).getLong(Tpcc.C.BALANCE)).isEqualTo(balance - 12_345);
        assertThat(row(Tpcc.CUSTOMER, ck).getInt(Tpcc.C.PAYMENT_CNT)).isEqualTo(2);
        final Row history = row(Tpcc.HISTORY, historyKey);
        assertThat(history.getInt(Tpcc.H.C_ID)).isEqualTo(median);
        assertThat(history.getInt(Tpcc.H.C_W_ID)).isEqualTo(2);
        assertThat(history.getLong(Tpcc.H.AMOUNT)).isEqualTo(12_345);
        assertThat(Tpcc.warehouseYtd(dbs, SCALE)).isEqualTo(2 * 30_000_000L + 12_345);
        assertConsistent(Tpcc.check(dbs, SCALE));
    }

    @Test
    void shouldDeliverTheOldestNewOrderOfEveryDistrict() throws Exception {
        final int[] customers = new int[Tpcc.DISTRICTS + 1];
        final long[] balances = new long[Tpcc.DISTRICTS + 1];
        final long[] amounts = new long[Tpcc.DISTRICTS + 1];
        for (int d = 1; d <= Tpcc.DISTRICTS; d++) {
            final Row order = row(Tpcc.ORDER, Tpcc.orderKey(2, d, 22));
            customers[d] = order.getInt(Tpcc.O.C_ID);
            for (int ol = 1; ol <= order.getInt(Tpcc.O.OL_CNT); ol++) {
                amounts[d] += row(Tpcc.ORDER_LINE, Tpcc.orderLineKey(2, d, 22, ol)).getLong(Tpcc.OL.AMOUNT);
            }
            balances[d] = row(Tpcc.CUSTOMER, Tpcc.customerKey(2, d, customers[d])).getLong(Tpcc.C.BALANCE);
        }
        run(txn -> Tpcc.delivery(txn, 2, 6, 99));
        for (int d = 1; d <= Tpcc.DISTRICTS; d++) {
            assertThat(present(Tpcc.NEW_ORDER, Tpcc.orderKey(2, d, 22))).isFalse();
            assertThat(present(Tpcc.NEW_ORDER, Tpcc.orderKey(2, d, 23))).isTrue();
            assertThat(row(Tpcc.DELIVERY_CURSOR, Tpcc.districtKey(2, d)).getInt(0)).isEqualTo(23);
            assertThat(row(Tpcc.ORDER, Tpcc.orderKey(2, d, 22)).getInt(Tpcc.O.CARRIER_ID)).isEqualTo(6);
            assertThat(row(Tpcc.ORDER_LINE, Tpcc.orderLineKey(2, d, 22, 1)).getLong(Tpcc.OL.DELIVERY_D)).isEqualTo(99);
            final Row c = row(Tpcc.CUSTOMER, Tpcc.customerKey(2, d, customers[d]));
            assertThat(c.getLong(Tpcc.C.BALANCE)).isEqualTo(balances[d] + amounts[d]);
            assertThat(c.getInt(Tpcc.C.DELIVERY_CNT)).isEqualTo(1);
        }
        assertThat(rows(Tpcc.NEW_ORDER)).as("tombstones stay in the index").isEqualTo(20 * 9);
        assertConsistent(Tpcc.check(dbs, SCALE));
    }

    @Test
    void shouldCountLowStockAndReadOrderStatus() throws Exception {
        final long low = run(txn -> Tpcc.stockLevel(txn, 1, 1, 50));
        final java.util.Set<Integer> items = new java.util.HashSet<>();
        for (int o = 11; o <= 30; o++) {
            for (int ol = 1; ol <= row(Tpcc.ORDER, Tpcc.orderKey(1, 1, o)).getInt(Tpcc.O.OL_CNT); ol++) {
                items.add(row(Tpcc.ORDER_LINE, Tpcc.orderLineKey(1, 1, o, ol)).getInt(Tpcc.OL.I_ID));
            }
        }
        final long expected = items.stream().filter(i -> row(Tpcc.STOCK, Tpcc.stockKey(1, i))
            .getInt(Tpcc.S.QUANTITY) < 50).count();
        assertThat(low).isEqualTo(expected).isPositive();
        final long status = run(txn -> Tpcc.orderStatus(txn, Tpcc.CustomerRef.byName(1, 1, 7)));
        assertThat(status).isZero();
    }

    @Test
    void shouldCatchABrokenStateInEveryCondition() {
        final Row district = row(Tpcc.DISTRICT, Tpcc.districtKey(1, 3));
        district.m().putInt(district.at() + Tpcc.D.NEXT_O_ID, 32); // a skipped D_NEXT_O_ID update
        final Row warehouse = row(Tpcc.WAREHOUSE, 2);
        warehouse.m().putLong(warehouse.at() + Tpcc.W.YTD, 1); // W_YTD out of step with the districts
        final long lineKey = Tpcc.orderLineKey(2, 7, 5, 1);
        assertThat(Tpcc.partitionOf(dbs, Tpcc.ORDER_LINE, lineKey).delete(lineKey, 1)).isEqualTo(Table.OK);
        final long newOrderKey = Tpcc.orderKey(1, 9, 25);
        assertThat(Tpcc.partitionOf(dbs, Tpcc.NEW_ORDER, newOrderKey).delete(newOrderKey, 1)).isEqualTo(Table.OK);
        final Map<String, List<String>> conditions = Tpcc.check(dbs, SCALE);
        assertThat(conditions.get("1_w_ytd_is_sum_of_d_ytd")).singleElement().asString().startsWith("w 2:");
        assertThat(conditions.get("2_next_o_id_is_max_order")).singleElement().asString().startsWith("w 1 d 3:");
        assertThat(conditions.get("3_new_orders_contiguous")).singleElement().asString().startsWith("w 1 d 9:");
        assertThat(conditions.get("4_order_line_count")).singleElement().asString().startsWith("w 2 d 7:");
    }
}
