package io.scythe.bench.workload;

import io.scythe.storage.LogDb;
import io.scythe.storage.ObjectLayout;
import io.scythe.storage.Table;
import io.scythe.storage.TableSchema;
import io.scythe.txn.AbortException;
import io.scythe.txn.AbortReason;
import io.scythe.txn.Placement;
import io.scythe.txn.Txn;
import io.scythe.txn.UnknownKeyException;
import io.vertx.core.Future;
import org.agrona.concurrent.UnsafeBuffer;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;

/**
 * TPC-C (TPC Benchmark C, rev. 5.11) on the key-value transaction API: the nine tables, the five transactions, the
 * loader and consistency conditions 1-4, as an RDMA TPC-C (FORD, DrTM+H) builds it. Money is in cents, taxes and
 * discounts in 1/10000, dates in epoch milliseconds; every row is a fixed binary layout (offsets below, native byte
 * order, strings ASCII padded with 0).
 *
 * <p><b>Keys</b> ({@code long}, one key space per table; tables are partitioned over memory nodes by
 * {@code key mod nodes}, as every table of the catalog): w 16 bits, d 4 bits, c 12 bits, o 32 bits, ol 4 bits.
 * <pre>
 *  WAREHOUSE w | DISTRICT, DELIVERY_CURSOR (w&lt;&lt;4)|d | CUSTOMER, LAST_ORDER ((w&lt;&lt;4)|d)&lt;&lt;12|c
 *  ORDER, NEW_ORDER ((w&lt;&lt;4)|d)&lt;&lt;32|o | ORDER_LINE (order key)&lt;&lt;4|ol | ITEM i | STOCK (w&lt;&lt;17)|i
 *  CUSTOMER_NAME ((w&lt;&lt;4)|d)&lt;&lt;10|last-name number
 *  HISTORY: the customer key for loaded rows, 2^40 + n for those Payments insert
 * </pre>
 *
 * <p><b>What a key-value store lacks, and what stands in</b> (each a table of its own, so it conflicts only with
 * the transactions that need it):
 * <ul>
 *   <li>The oldest undelivered NEW-ORDER of a district (Delivery's {@code min(NO_O_ID)}): DELIVERY_CURSOR, one row
 *       per district holding it; Delivery reads NEW-ORDER at the cursor, deletes it and advances the cursor. A
 *       cursor at an order not yet inserted reads "not found" (validated at commit) and skips the district, as the
 *       standard allows.</li>
 *   <li>A customer's last order (OrderStatus): LAST_ORDER, one row per customer, written by NewOrder (not the
 *       CUSTOMER row, which Payment writes: FORD does the same to keep them apart).</li>
 *   <li>Customer by last name (60 % of Payment and OrderStatus): CUSTOMER_NAME, name -&gt; the c_ids of the district
 *       with it, sorted by C_FIRST, loaded once (last names never change); the transaction takes the one at
 *       position ceil(n/2).</li>
 *   <li>1 % of NewOrders name an unused item (id items + 1): the ITEM read finds nothing and the transaction rolls
 *       back as {@link AbortReason#USER}.</li>
 * </ul>
 * Order items are Zipf(theta) over the items (Scythe §5.1: skew 0.99), customers NURand(1023) as the standard.
 * Deleted NEW-ORDER rows stay as tombstones (see {@code io.scythe.txn}), so NEW-ORDER is sized like ORDER.
 */
public final class Tpcc {
    public static final String WAREHOUSE = "warehouse";
    public static final String DISTRICT = "district";
    public static final String CUSTOMER = "customer";
    public static final String HISTORY = "history";
    public static final String NEW_ORDER = "new_order";
    public static final String ORDER = "orders";
    public static final String ORDER_LINE = "order_line";
    public static final String ITEM = "item";
    public static final String STOCK = "stock";
    public static final String CUSTOMER_NAME = "customer_name";
    public static final String LAST_ORDER = "last_order";
    public static final String DELIVERY_CURSOR = "delivery_cursor";

    public static final int DISTRICTS = 10;
    /** Most customers one last name of a district may have (the loader fails clearly beyond). */
    public static final int MAX_NAME_IDS = 248;
    /** Key of the first HISTORY row a Payment inserts (loaded rows use customer keys, below 2^32). */
    public static final long FIRST_NEW_HISTORY_KEY = 1L << 40;

    /** WAREHOUSE row (104 B). */
    public static final class W {
        public static final int ID = 0, TAX = 4, YTD = 8, NAME = 16, STREET_1 = 26, STREET_2 = 46, CITY = 66,
            STATE = 86, ZIP = 88, BYTES = 104;
    }

    /** DISTRICT row (112 B). */
    public static final class D {
        public static final int ID = 0, W_ID = 4, TAX = 8, NEXT_O_ID = 12, YTD = 16, NAME = 24, STREET_1 = 34,
            STREET_2 = 54, CITY = 74, STATE = 94, ZIP = 96, BYTES = 112;
    }

    /** CUSTOMER row (680 B). */
    public static final class C {
        public static final int ID = 0, D_ID = 4, W_ID = 8, DISCOUNT = 12, BALANCE = 16, YTD_PAYMENT = 24,
            PAYMENT_CNT = 32, DELIVERY_CNT = 36, CREDIT_LIM = 40, SINCE = 48, CREDIT = 56, MIDDLE = 58, FIRST = 60,
            LAST = 76, STREET_1 = 92, STREET_2 = 112, CITY = 132, STATE = 152, ZIP = 154, PHONE = 163, DATA = 179,
            DATA_BYTES = 500, BYTES = 680;
    }

    /** HISTORY row (64 B). */
    public static final class H {
        public static final int C_ID = 0, C_D_ID = 4, C_W_ID = 8, D_ID = 12, W_ID = 16, DATE = 24, AMOUNT = 32,
            DATA = 40, BYTES = 64;
    }

    /** NEW-ORDER row (16 B). */
    public static final class NO {
        public static final int O_ID = 0, D_ID = 4, W_ID = 8, BYTES = 16;
    }

    /** ORDER row (40 B). */
    public static final class O {
        public static final int ID = 0, D_ID = 4, W_ID = 8, C_ID = 12, ENTRY_D = 16, CARRIER_ID = 24, OL_CNT = 28,
            ALL_LOCAL = 32, BYTES = 40;
    }

    /** ORDER-LINE row (72 B). */
    public static final class OL {
        public static final int O_ID = 0, D_ID = 4, W_ID = 8, NUMBER = 12, I_ID = 16, SUPPLY_W_ID = 20,
            QUANTITY = 24, DELIVERY_D = 32, AMOUNT = 40, DIST_INFO = 48, BYTES = 72;
    }

    /** ITEM row (96 B). */
    public static final class I {
        public static final int ID = 0, IM_ID = 4, PRICE = 8, NAME = 16, DATA = 40, BYTES = 96;
    }

    /** STOCK row (328 B): S_DIST_01..10 at {@code DIST + 24 * (d - 1)}. */
    public static final class S {
        public static final int I_ID = 0, W_ID = 4, QUANTITY = 8, ORDER_CNT = 12, REMOTE_CNT = 16, YTD = 24,
            DIST = 32, DATA = 272, BYTES = 328;
    }

    /**
     * CUSTOMER_NAME row (504 B): the count, then up to {@link #MAX_NAME_IDS} c_ids (u16) sorted by C_FIRST (NURand
     * skews last names: one of the standard's 1000 can have 70 of a district's 3000 customers).
     */
    public static final class CN {
        public static final int COUNT = 0, IDS = 8, BYTES = 8 + 2 * MAX_NAME_IDS;
    }

    /** LAST_ORDER and DELIVERY_CURSOR rows (8 B): one order id. */
    public static final int ID_ROW_BYTES = 8;

    /**
     * How big: {@code warehouses}, customers per district (3000 in the standard), items (100000), and the orders a
     * run may add on top of the loaded ones ({@code headroomOrders}, over all warehouses), which sizes ORDER,
     * NEW-ORDER, ORDER-LINE (11 per order) and HISTORY. A table that fills up fails the transaction with a clear
     * error naming it.
     */
    public record Scale(int warehouses, int customers, int items, long headroomOrders) {
        public Scale {
            if (warehouses < 1 || warehouses > 0xffff) {
                throw new IllegalArgumentException("warehouses=" + warehouses + " must be within [1, 65535]");
            }
            if (customers < 10 || customers > 4095) {
                throw new IllegalArgumentException("customers per district=" + customers + " must be within "
                    + "[10, 4095]");
            }
            if (items < 20 || items >= (1 << 17) - 1) {
                throw new IllegalArgumentException("items=" + items + " must be within [20, 131070]");
            }
            if (headroomOrders < 0) {
                throw new IllegalArgumentException("headroomOrders must not be negative");
            }
        }

        /** The standard's sizes. */
        public static Scale standard(final int warehouses, final long headroomOrders) {
            return new Scale(warehouses, 3000, 100_000, headroomOrders);
        }

        /** Orders loaded per district that are not delivered yet (900 of 3000). */
        public int undelivered() {
            return customers * 3 / 10;
        }

        int districts() {
            return warehouses * DISTRICTS;
        }

        int nameCount() {
            return Math.min(1000, customers);
        }
    }

    private Tpcc() {
    }

    // ------------------------------------------------------------------------------------------------------ keys

    public static long districtKey(final int w, final int d) {
        return ((long) w << 4) | d;
    }

    public static long customerKey(final int w, final int d, final int c) {
        return districtKey(w, d) << 12 | c;
    }

    public static long orderKey(final int w, final int d, final int o) {
        return districtKey(w, d) << 32 | (o & 0xffffffffL);
    }

    public static long orderLineKey(final int w, final int d, final int o, final int ol) {
        return orderKey(w, d, o) << 4 | ol;
    }

    public static long stockKey(final int w, final int i) {
        return (long) w << 17 | i;
    }

    public static long nameKey(final int w, final int d, final int lastName) {
        return districtKey(w, d) << 10 | lastName;
    }

    // ---------------------------------------------------------------------------------------------------- loading

    private static final String[] SYLLABLES = {"BAR", "OUGHT", "ABLE", "PRI", "PRES", "ESE", "ANTI", "CALLY",
        "ATION", "EING"};

    /** The standard's last name number {@code n} (0..999) as a string: three syllables. */
    public static String lastName(final int n) {
        return SYLLABLES[n / 100] + SYLLABLES[(n / 10) % 10] + SYLLABLES[n % 10];
    }

    /** NURand(A, x, y) of the standard, with run-time constant {@code c}. */
    public static int nurand(final SplittableRandom r, final int a, final int x, final int y, final int c) {
        return (((r.nextInt(a + 1) | (x + r.nextInt(y - x + 1))) + c) % (y - x + 1)) + x;
    }

    private static final int C_LAST_LOAD = 157;
    /** NURand run-time constants (C_LAST differs from the load's, as §2.1.6.1 asks). */
    public static final int C_LAST_RUN = 223;
    public static final int C_ID_RUN = 259;
    private static final long LOAD_DATE = 1_700_000_000_000L;

    /** What the loader decides per district, the same on every memory node: names, orders and their customers. */
    private static final class DistrictPlan {
        final int[] lastName;
        final int[] firstName;
        final int[] orderCustomer;
        final int[] lineCount;

        DistrictPlan(final Scale s, final int w, final int d, final long seed) {
            final SplittableRandom r = new SplittableRandom(seed * 1_000_003L + districtKey(w, d));
            final int n = s.customers;
            lastName = new int[n + 1];
            firstName = new int[n + 1];
            for (int c = 1; c <= n; c++) {
                lastName[c] = c <= s.nameCount() ? c - 1 : nurand(r, 255, 0, s.nameCount() - 1, C_LAST_LOAD);
                firstName[c] = r.nextInt(1 << 30);
            }
            orderCustomer = new int[n + 1];
            for (int o = 1; o <= n; o++) {
                orderCustomer[o] = o;
            }
            for (int o = n; o > 1; o--) { // a random permutation of the customers
                final int j = 1 + r.nextInt(o);
                final int t = orderCustomer[o];
                orderCustomer[o] = orderCustomer[j];
                orderCustomer[j] = t;
            }
            lineCount = new int[n + 1];
            for (int o = 1; o <= n; o++) {
                lineCount[o] = 5 + r.nextInt(11);
            }
        }
    }

    /** Rows a memory node of {@code parts} gets of a table of {@code total} rows, with slack for uneven keys. */
    static long share(final long total, final int parts) {
        return (long) Math.ceil(total / (double) parts * (parts == 1 ? 1.0 : 1.2)) + 64;
    }

    private static TableSchema schema(final int id, final String name, final int bytes, final long rows) {
        // No version log: transactions write one-sided in place (OneSidedTxn), the memory node keeps no history.
        return TableSchema.fixed(id, name, bytes, Math.max(1, rows)).withVersionCapacity(0);
    }

    /** Creates the 12 tables on {@code db} (memory node {@code part} of {@code parts}) and loads its rows. */
    public static void load(final LogDb db, final Scale s, final int part, final int parts, final long seed) {
        load(db, s, part, parts, seed, Placement.MOD);
    }

    /**
     * Rows placed by warehouse, in blocks: of {@code warehouses}, warehouse w with its districts, customers, orders,
     * order lines, stock and the rest on partition {@code (w - 1) * partitions / warehouses}, as Aurogon partitions
     * TPC-C by warehouse over its servers; so with {@code TpccSpec.Home} {@code server} (W = servers) or {@code loop}
     * (W = servers x loops) each loop's home warehouse is on its own server. ITEM (read-only) and the HISTORY rows
     * Payments insert stay {@code key mod partitions}.
     */
    public static Placement byWarehouse(final int warehouses) {
        if (warehouses < 1) {
            throw new IllegalArgumentException("placement by warehouse needs at least 1 warehouse, not " + warehouses);
        }
        return (table, key, partitions) -> {
            final long w = warehouseOf(table, key);
            return w < 0 ? (int) Long.remainderUnsigned(key, partitions)
                : (int) (Math.floorMod(w - 1, (long) warehouses) * partitions / warehouses);
        };
    }

    /** The warehouse whose row {@code key} of {@code table} is, or -1 for ITEM's rows and inserted HISTORY rows. */
    static long warehouseOf(final String table, final long key) {
        switch (table) {
            case WAREHOUSE:
                return key;
            case DISTRICT:
            case DELIVERY_CURSOR:
                return key >>> 4;
            case CUSTOMER:
            case LAST_ORDER:
                return key >>> 16;
            case HISTORY:
                return key < FIRST_NEW_HISTORY_KEY ? key >>> 16 : -1;
            case ORDER:
            case NEW_ORDER:
                return key >>> 36;
            case ORDER_LINE:
                return key >>> 40;
            case STOCK:
                return key >>> 17;
            case CUSTOMER_NAME:
                return key >>> 14;
            default:
                return -1;
        }
    }

    /** {@link #load(LogDb, Scale, int, int, long)} with rows placed by {@code placement}. */
    public static void load(final LogDb db, final Scale s, final int part, final int parts, final long seed,
                            final Placement placement) {
        // By warehouse, a partition holds the rows of up to ceil(W / parts) warehouses: size its tables for that.
        final int sizing = placement == Placement.MOD ? parts
            : Math.max(1, s.warehouses / ((s.warehouses + parts - 1) / parts));
        final long orders = (long) s.districts() * s.customers + s.headroomOrders;
        final long customers = (long) s.districts() * s.customers;
        final Table warehouse = db.create(schema(31, WAREHOUSE, W.BYTES, share(s.warehouses, sizing)));
        final Table district = db.create(schema(32, DISTRICT, D.BYTES, share(s.districts(), sizing)));
        final Table customer = db.create(schema(33, CUSTOMER, C.BYTES, share(customers, sizing)));
        final Table history = db.create(schema(34, HISTORY, H.BYTES, share(customers + s.headroomOrders, sizing)));
        final Table newOrder = db.create(schema(35, NEW_ORDER, NO.BYTES,
            share((long) s.districts() * s.undelivered() + s.headroomOrders, sizing)));
        final Table order = db.create(schema(36, ORDER, O.BYTES, share(orders, sizing)));
        final Table orderLine = db.create(schema(37, ORDER_LINE, OL.BYTES, share(orders * 11, sizing)));
        final Table item = db.create(schema(38, ITEM, I.BYTES, share(s.items, parts)).asReadOnly());
        final Table stock = db.create(schema(39, STOCK, S.BYTES, share((long) s.warehouses * s.items, sizing)));
        final Table names = db.create(schema(40, CUSTOMER_NAME, CN.BYTES,
            share((long) s.districts() * s.nameCount(), sizing)));
        final Table lastOrder = db.create(schema(41, LAST_ORDER, ID_ROW_BYTES, share(customers, sizing)));
        final Table cursor = db.create(schema(42, DELIVERY_CURSOR, ID_ROW_BYTES, share(s.districts(), sizing)));

        final UnsafeBuffer row = new UnsafeBuffer(new byte[C.BYTES]);
        for (int i = 1; i <= s.items; i++) {
            if (mine(placement, ITEM, i, part, parts)) {
                final SplittableRandom r = new SplittableRandom(seed ^ (i * 0x9E3779B97F4A7C15L));
                clear(row, I.BYTES);
                row.putInt(I.ID, i);
                row.putInt(I.IM_ID, 1 + r.nextInt(10_000));
                row.putLong(I.PRICE, 100 + r.nextInt(9_901));
                text(row, I.NAME, 14 + r.nextInt(11), r);
                text(row, I.DATA, 26 + r.nextInt(25), r);
                put(item, i, row, I.BYTES);
            }
        }
        for (int w = 1; w <= s.warehouses; w++) {
            final SplittableRandom wr = new SplittableRandom(seed * 31 + w);
            if (mine(placement, WAREHOUSE, w, part, parts)) {
                clear(row, W.BYTES);
                row.putInt(W.ID, w);
                row.putInt(W.TAX, wr.nextInt(2_001));
                row.putLong(W.YTD, 30_000_000L); // 300,000.00
                address(row, W.NAME, W.STREET_1, wr);
                put(warehouse, w, row, W.BYTES);
            }
            for (int i = 1; i <= s.items; i++) {
                final long key = stockKey(w, i);
                if (mine(placement, STOCK, key, part, parts)) {
                    final SplittableRandom r = new SplittableRandom(seed ^ (key * 0x9E3779B97F4A7C15L));
                    clear(row, S.BYTES);
                    row.putInt(S.I_ID, i);
                    row.putInt(S.W_ID, w);
                    row.putInt(S.QUANTITY, 10 + r.nextInt(91));
                    for (int d = 0; d < DISTRICTS; d++) {
                        text(row, S.DIST + 24 * d, 24, r);
                    }
                    text(row, S.DATA, 26 + r.nextInt(25), r);
                    put(stock, key, row, S.BYTES);
                }
            }
            for (int d = 1; d <= DISTRICTS; d++) {
                loadDistrict(s, w, d, part, parts, placement, seed, row, district, customer, history, newOrder, order,
                    orderLine, names, lastOrder, cursor);
            }
        }
    }

    private static void loadDistrict(final Scale s, final int w, final int d, final int part, final int parts,
                                     final Placement placement,
                                     final long seed, final UnsafeBuffer row, final Table district,
                                     final Table customer, final Table history, final Table newOrder,
                                     final Table order, final Table orderLine, final Table names,
                                     final Table lastOrder, final Table cursor) {
        final DistrictPlan plan = new DistrictPlan(s, w, d, seed);
        final long dk = districtKey(w, d);
        final int firstUndelivered = s.customers - s.undelivered() + 1;
        if (mine(placement, DISTRICT, dk, part, parts)) {
            final SplittableRandom r = new SplittableRandom(seed ^ dk);
            clear(row, D.BYTES);
            row.putInt(D.ID, d);
            row.putInt(D.W_ID, w);
            row.putInt(D.TAX, r.nextInt(2_001));
            row.putInt(D.NEXT_O_ID, s.customers + 1);
            row.putLong(D.YTD, 3_000_000L); // 30,000.00
            address(row, D.NAME, D.STREET_1, r);
            put(district, dk, row, D.BYTES);
            clear(row, ID_ROW_BYTES);
            row.putInt(0, firstUndelivered);
            put(cursor, dk, row, ID_ROW_BYTES);
        }
        for (int c = 1; c <= s.customers; c++) {
            final long ck = customerKey(w, d, c);
            if (mine(placement, CUSTOMER, ck, part, parts)) {
                final SplittableRandom r = new SplittableRandom(seed ^ (ck * 0x9E3779B97F4A7C15L));
                clear(row, C.BYTES);
                row.putInt(C.ID, c);
                row.putInt(C.D_ID, d);
                row.putInt(C.W_ID, w);
                row.putInt(C.DISCOUNT, r.nextInt(5_001));
                row.putLong(C.BALANCE, -1_000);
                row.putLong(C.YTD_PAYMENT, 1_000);
                row.putInt(C.PAYMENT_CNT, 1);
                row.putLong(C.CREDIT_LIM, 5_000_000);
                row.putLong(C.SINCE, LOAD_DATE);
                ascii(row, C.CREDIT, r.nextInt(10) == 0 ? "BC" : "GC");
                ascii(row, C.MIDDLE, "OE");
                ascii(row, C.FIRST, Integer.toString(plan.firstName[c], 36));
                ascii(row, C.LAST, lastName(plan.lastName[c]));
                address(row, -1, C.STREET_1, r);
                text(row, C.PHONE, 16, r);
                text(row, C.DATA, 300 + r.nextInt(201), r);
                put(customer, ck, row, C.BYTES);
                clear(row, H.BYTES);
                row.putInt(H.C_ID, c);
                row.putInt(H.C_D_ID, d);
                row.putInt(H.C_W_ID, w);
                row.putInt(H.D_ID, d);
                row.putInt(H.W_ID, w);
                row.putLong(H.DATE, LOAD_DATE);
                row.putLong(H.AMOUNT, 1_000);
                text(row, H.DATA, 12 + r.nextInt(13), r);
                put(history, ck, row, H.BYTES);
            }
        }
        final int[] lastOrderOf = new int[s.customers + 1];
        for (int o = 1; o <= s.customers; o++) {
            final int c = plan.orderCustomer[o];
            lastOrderOf[c] = o;
            final boolean delivered = o < firstUndelivered;
            final long ok = orderKey(w, d, o);
            if (mine(placement, ORDER, ok, part, parts)) {
                clear(row, O.BYTES);
                row.putInt(O.ID, o);
                row.putInt(O.D_ID, d);
                row.putInt(O.W_ID, w);
                row.putInt(O.C_ID, c);
                row.putLong(O.ENTRY_D, LOAD_DATE);
                row.putInt(O.CARRIER_ID, delivered ? 1 + (o % 10) : 0);
                row.putInt(O.OL_CNT, plan.lineCount[o]);
                row.putInt(O.ALL_LOCAL, 1);
                put(order, ok, row, O.BYTES);
            }
            if (!delivered && mine(placement, NEW_ORDER, ok, part, parts)) {
                clear(row, NO.BYTES);
                row.putInt(NO.O_ID, o);
                row.putInt(NO.D_ID, d);
                row.putInt(NO.W_ID, w);
                put(newOrder, ok, row, NO.BYTES);
            }
            for (int ol = 1; ol <= plan.lineCount[o]; ol++) {
                final long olk = orderLineKey(w, d, o, ol);
                if (mine(placement, ORDER_LINE, olk, part, parts)) {
                    final SplittableRandom r = new SplittableRandom(seed ^ (olk * 0x9E3779B97F4A7C15L));
                    clear(row, OL.BYTES);
                    row.putInt(OL.O_ID, o);
                    row.putInt(OL.D_ID, d);
                    row.putInt(OL.W_ID, w);
                    row.putInt(OL.NUMBER, ol);
                    row.putInt(OL.I_ID, 1 + r.nextInt(s.items));
                    row.putInt(OL.SUPPLY_W_ID, w);
                    row.putInt(OL.QUANTITY, 5);
                    row.putLong(OL.DELIVERY_D, delivered ? LOAD_DATE : 0);
                    row.putLong(OL.AMOUNT, delivered ? 0 : 1 + r.nextInt(999_999));
                    text(row, OL.DIST_INFO, 24, r);
                    put(orderLine, olk, row, OL.BYTES);
                }
            }
        }
        for (int c = 1; c <= s.customers; c++) {
            final long ck = customerKey(w, d, c);
            if (mine(placement, LAST_ORDER, ck, part, parts)) {
                clear(row, ID_ROW_BYTES);
                row.putInt(0, lastOrderOf[c]);
                put(lastOrder, ck, row, ID_ROW_BYTES);
            }
        }
        // Customer by last name: each name's c_ids sorted by C_FIRST.
        final List<List<Integer>> byName = new ArrayList<>(s.nameCount());
        for (int n = 0; n < s.nameCount(); n++) {
            byName.add(new ArrayList<>(4));
        }
        for (int c = 1; c <= s.customers; c++) {
            byName.get(plan.lastName[c]).add(c);
        }
        for (int n = 0; n < s.nameCount(); n++) {
            final long nk = nameKey(w, d, n);
            if (!mine(placement, CUSTOMER_NAME, nk, part, parts)) {
                continue;
            }
            final List<Integer> ids = byName.get(n);
            if (ids.size() > MAX_NAME_IDS) {
                throw new IllegalStateException("last name " + lastName(n) + " has " + ids.size()
                    + " customers in district " + d + " of warehouse " + w + "; CUSTOMER_NAME holds "
                    + MAX_NAME_IDS);
            }
            ids.sort((a, b) -> Integer.compare(plan.firstName[a], plan.firstName[b]));
            clear(row, CN.BYTES);
            row.putInt(CN.COUNT, ids.size());
            for (int k = 0; k < ids.size(); k++) {
                row.putShort(CN.IDS + 2 * k, (short) (int) ids.get(k));
            }
            put(names, nk, row, CN.BYTES);
        }
    }

    private static boolean mine(final Placement placement, final String table, final long key, final int part,
                                final int parts) {
        return placement.partitionOf(table, key, parts) == part;
    }

    private static void put(final Table t, final long key, final UnsafeBuffer row, final int bytes) {
        final long status = t.insert(key, row, 0, bytes, ObjectLayout.LOADED_VERSION);
        if (status <= 0) {
            throw new IllegalStateException("loading key " + key + " into " + t.schema().name() + " failed with "
                + "status " + status);
        }
    }

    private static void clear(final UnsafeBuffer row, final int bytes) {
        row.setMemory(0, bytes, (byte) 0);
    }

    private static void text(final UnsafeBuffer row, final int at, final int length, final SplittableRandom r) {
        for (int i = 0; i < length; i++) {
            row.putByte(at + i, (byte) ('a' + r.nextInt(26)));
        }
    }

    private static void ascii(final UnsafeBuffer row, final int at, final String s) {
        for (int i = 0; i < s.length(); i++) {
            row.putByte(at + i, (byte) s.charAt(i));
        }
    }

    /** Name (10, unless {@code name} is negative), street 1 and 2 (20 each), city (20), state (2), zip (9). */
    private static void address(final UnsafeBuffer row, final int name, final int street, final SplittableRandom r) {
        if (name >= 0) {
            text(row, name, 6 + r.nextInt(5), r);
        }
        text(row, street, 10 + r.nextInt(11), r);
        text(row, street + 20, 10 + r.nextInt(11), r);
        text(row, street + 40, 10 + r.nextInt(11), r);
        text(row, street + 60, 2, r);
        ascii(row, street + 62, r.nextInt(10_000) + "11111");
    }

    // ------------------------------------------------------------------------------------------- transactions

    /** The failure of a read that must find its row: a bad key is a bug in the workload, not a conflict. */
    private static <T> Future<T> rollbackIfMissing(final Future<T> read, final String what) {
        return read.recover(e -> e instanceof UnknownKeyException
            ? Future.failedFuture(new AbortException(AbortReason.USER, what + " not found: rolled back"))
            : Future.failedFuture(e));
    }

    /** One order line of a NewOrder: item, supplying warehouse, quantity. */
    public record Line(int item, int supplyWarehouse, int quantity) {
    }

    /**
     * NewOrder (§2.4): takes the district's next order id, updates the stock of every item, inserts ORDER, NEW-ORDER
     * and the ORDER-LINEs and records the customer's last order. An unused item rolls it back (USER).
     *
     * <p>The district's read names the order's keys: it is read key-dependent ({@link Txn#readKeyDependent}). When
     * the attempt sends writes as they are buffered ({@link Txn#sendsWritesEarly}: Aurogon's pre-attaching of
     * dependent writes to other records, §4.3), ORDER and NEW-ORDER are inserted as soon as the district's read
     * returns and each ORDER-LINE as soon as the district, its item and its stock are read, rather than after every
     * read; otherwise every write is buffered after all the reads, in the order it always was.
     */
    public static Future<Long> newOrder(final Txn txn, final int w, final int d, final int c, final List<Line> lines,
                                        final long now) {
        final long dk = districtKey(w, d);
        final long ck = customerKey(w, d, c);
        final Future<UnsafeBuffer> warehouse = txn.read(WAREHOUSE, w);
        final Future<UnsafeBuffer> district = txn.readForUpdateKeyDependent(DISTRICT, dk);
        final Future<UnsafeBuffer> customer = txn.read(CUSTOMER, ck);
        final Future<UnsafeBuffer> last = txn.readForUpdate(LAST_ORDER, ck);
        final List<Future<?>> reads = new ArrayList<>(4 + 2 * lines.size());
        reads.add(warehouse);
        reads.add(district);
        reads.add(customer);
        reads.add(last);
        final List<Future<UnsafeBuffer>> items = new ArrayList<>(lines.size());
        final List<Future<UnsafeBuffer>> stocks = new ArrayList<>(lines.size());
        for (final Line line : lines) {
            items.add(rollbackIfMissing(txn.read(ITEM, line.item), "item " + line.item));
            stocks.add(rollbackIfMissing(txn.readForUpdate(STOCK, stockKey(line.supplyWarehouse, line.item)),
                "stock of item " + line.item));
        }
        reads.addAll(items);
        reads.addAll(stocks);
        final boolean allLocal = lines.stream().allMatch(line -> line.supplyWarehouse == w);
        final int[] orderId = new int[1];
        final Runnable takeOrderId = () -> {
            final UnsafeBuffer dist = district.result();
            final int o = dist.getInt(D.NEXT_O_ID);
            dist.putInt(D.NEXT_O_ID, o + 1);
            txn.write(DISTRICT, dk, dist, 0, D.BYTES);
            orderId[0] = o;
        };
        final java.util.function.IntConsumer orderLine = k -> {
            final int o = orderId[0];
            final Line line = lines.get(k);
            final UnsafeBuffer s = stocks.get(k).result();
            final int quantity = s.getInt(S.QUANTITY);
            s.putInt(S.QUANTITY, quantity - line.quantity >= 10 ? quantity - line.quantity
                : quantity - line.quantity + 91);
            s.putLong(S.YTD, s.getLong(S.YTD) + line.quantity);
            s.putInt(S.ORDER_CNT, s.getInt(S.ORDER_CNT) + 1);
            if (line.supplyWarehouse != w) {
                s.putInt(S.REMOTE_CNT, s.getInt(S.REMOTE_CNT) + 1);
            }
            txn.write(STOCK, stockKey(line.supplyWarehouse, line.item), s, 0, S.BYTES);
            final UnsafeBuffer lineRow = new UnsafeBuffer(new byte[OL.BYTES]);
            lineRow.putInt(OL.O_ID, o);
            lineRow.putInt(OL.D_ID, d);
            lineRow.putInt(OL.W_ID, w);
            lineRow.putInt(OL.NUMBER, k + 1);
            lineRow.putInt(OL.I_ID, line.item);
            lineRow.putInt(OL.SUPPLY_W_ID, line.supplyWarehouse);
            lineRow.putInt(OL.QUANTITY, line.quantity);
            lineRow.putLong(OL.AMOUNT, line.quantity * items.get(k).result().getLong(I.PRICE));
            lineRow.putBytes(OL.DIST_INFO, s, S.DIST + 24 * (d - 1), 24);
            txn.insert(ORDER_LINE, orderLineKey(w, d, o, k + 1), lineRow, 0, OL.BYTES);
        };
        final Runnable insertOrder = () -> {
            final int o = orderId[0];
            final UnsafeBuffer orderRow = new UnsafeBuffer(new byte[O.BYTES]);
            orderRow.putInt(O.ID, o);
            orderRow.putInt(O.D_ID, d);
            orderRow.putInt(O.W_ID, w);
            orderRow.putInt(O.C_ID, c);
            orderRow.putLong(O.ENTRY_D, now);
            orderRow.putInt(O.OL_CNT, lines.size());
            orderRow.putInt(O.ALL_LOCAL, allLocal ? 1 : 0);
            txn.insert(ORDER, orderKey(w, d, o), orderRow, 0, O.BYTES);
            final UnsafeBuffer newOrderRow = new UnsafeBuffer(new byte[NO.BYTES]);
            newOrderRow.putInt(NO.O_ID, o);
            newOrderRow.putInt(NO.D_ID, d);
            newOrderRow.putInt(NO.W_ID, w);
            txn.insert(NEW_ORDER, orderKey(w, d, o), newOrderRow, 0, NO.BYTES);
        };
        final Runnable recordLastOrder = () -> {
            final UnsafeBuffer lastRow = last.result();
            lastRow.putInt(0, orderId[0]);
            txn.write(LAST_ORDER, ck, lastRow, 0, ID_ROW_BYTES);
        };
        if (!txn.sendsWritesEarly()) {
            return Future.all(reads).map(all -> {
                takeOrderId.run();
                for (int k = 0; k < lines.size(); k++) {
                    orderLine.accept(k);
                }
                insertOrder.run();
                recordLastOrder.run();
                return 0L;
            });
        }
        final List<Future<?>> done = new ArrayList<>(reads.size() + 1 + lines.size());
        done.addAll(reads);
        final Future<Void> ordered = district.map(dist -> {
            takeOrderId.run();
            insertOrder.run();
            return null;
        });
        done.add(ordered);
        for (int k = 0; k < lines.size(); k++) {
            final int line = k;
            done.add(Future.all(ordered, items.get(k), stocks.get(k)).map(all -> {
                orderLine.accept(line);
                return null;
            }));
        }
        return Future.all(done).map(all -> {
            recordLastOrder.run();
            return 0L;
        });
    }

    /** Who a Payment or OrderStatus is for: by id, or by last name (number) with the median rule. */
    public record CustomerRef(int w, int d, int id, int lastName) {
        public static CustomerRef byId(final int w, final int d, final int c) {
            return new CustomerRef(w, d, c, -1);
        }

        public static CustomerRef byName(final int w, final int d, final int lastName) {
            return new CustomerRef(w, d, 0, lastName);
        }
    }

    /** The customer's id: given, or position ceil(n/2) of CUSTOMER_NAME's list (sorted by C_FIRST). */
    static Future<Integer> resolve(final Txn txn, final CustomerRef ref) {
        if (ref.lastName < 0) {
            return Future.succeededFuture(ref.id);
        }
        // Its result names the customer's key: key-dependent (Txn#readKeyDependent).
        return txn.readKeyDependent(CUSTOMER_NAME, nameKey(ref.w, ref.d, ref.lastName)).map(row -> {
            final int n = row.getInt(CN.COUNT);
            return row.getShort(CN.IDS + 2 * ((n + 1) / 2 - 1)) & 0xffff;
        });
    }

    /**
     * Payment (§2.5): adds {@code amount} cents to W_YTD and D_YTD, takes it from the customer's balance (and for a
     * bad-credit customer prepends the payment to C_DATA), inserts a HISTORY row. Returns the amount: W_YTD grows by
     * the committed payments' sum.
     */
    public static Future<Long> payment(final Txn txn, final int w, final int d, final CustomerRef customer,
                                       final long amount, final long historyKey, final long now) {
        final long dk = districtKey(w, d);
        final Future<UnsafeBuffer> warehouse = txn.readForUpdate(WAREHOUSE, w);
        final Future<UnsafeBuffer> district = txn.readForUpdate(DISTRICT, dk);
        final Future<Integer> id = resolve(txn, customer);
        // By last name the customer's key came from a read: a key-dependent read (§4.3).
        final Future<UnsafeBuffer> cust = id.compose(c -> customer.lastName < 0
            ? txn.readForUpdate(CUSTOMER, customerKey(customer.w, customer.d, c))
            : txn.readForUpdateKeyDependent(CUSTOMER, customerKey(customer.w, customer.d, c)));
        return Future.all(warehouse, district, cust).map(all -> {
            final int c = id.result();
            final UnsafeBuffer wr = warehouse.result();
            wr.putLong(W.YTD, wr.getLong(W.YTD) + amount);
            txn.write(WAREHOUSE, w, wr, 0, W.BYTES);
            final UnsafeBuffer dr = district.result();
            dr.putLong(D.YTD, dr.getLong(D.YTD) + amount);
            txn.write(DISTRICT, dk, dr, 0, D.BYTES);
            final UnsafeBuffer cr = cust.result();
            cr.putLong(C.BALANCE, cr.getLong(C.BALANCE) - amount);
            cr.putLong(C.YTD_PAYMENT, cr.getLong(C.YTD_PAYMENT) + amount);
            cr.putInt(C.PAYMENT_CNT, cr.getInt(C.PAYMENT_CNT) + 1);
            if (cr.getByte(C.CREDIT) == 'B') {
                final byte[] entry = (c + " " + customer.d + " " + customer.w + " " + d + " " + w + " " + amount
                    + " ").getBytes(java.nio.charset.StandardCharsets.US_ASCII);
                final byte[] data = new byte[C.DATA_BYTES];
                cr.getBytes(C.DATA, data, 0, C.DATA_BYTES);
                cr.putBytes(C.DATA, entry);
                cr.putBytes(C.DATA + entry.length, data, 0, C.DATA_BYTES - entry.length);
            }
            txn.write(CUSTOMER, customerKey(customer.w, customer.d, c), cr, 0, C.BYTES);
            final UnsafeBuffer h = new UnsafeBuffer(new byte[H.BYTES]);
            h.putInt(H.C_ID, c);
            h.putInt(H.C_D_ID, customer.d);
            h.putInt(H.C_W_ID, customer.w);
            h.putInt(H.D_ID, d);
            h.putInt(H.W_ID, w);
            h.putLong(H.DATE, now);
            h.putLong(H.AMOUNT, amount);
            h.putBytes(H.DATA, wr, W.NAME, 10);
            h.putBytes(H.DATA + 14, dr, D.NAME, 10);
            txn.insert(HISTORY, historyKey, h, 0, H.BYTES);
            return amount;
        });
    }

    /** OrderStatus (§2.6), read-only: the customer, its last order and that order's lines. Returns the lines. */
    public static Future<Long> orderStatus(final Txn txn, final CustomerRef customer) {
        return resolve(txn, customer).compose(c -> {
            final long ck = customerKey(customer.w, customer.d, c);
            return Future.all(txn.read(CUSTOMER, ck), txn.readKeyDependent(LAST_ORDER, ck)).compose(all -> {
                final int o = all.<UnsafeBuffer>resultAt(1).getInt(0);
                return txn.read(ORDER, orderKey(customer.w, customer.d, o)).compose(order -> {
                    final List<Future<UnsafeBuffer>> lines = new ArrayList<>();
                    for (int ol = 1; ol <= order.getInt(O.OL_CNT); ol++) {
                        lines.add(txn.read(ORDER_LINE, orderLineKey(customer.w, customer.d, o, ol)));
                    }
                    return Future.all(lines).map(v -> 0L);
                });
            });
        });
    }

    /**
     * Delivery (§2.7), every district of {@code w}: the oldest undelivered order (DELIVERY_CURSOR) loses its
     * NEW-ORDER row, gets {@code carrier}, its lines the delivery date, and its customer the amount and one more
     * delivery. A district with no undelivered order is skipped.
     */
    public static Future<Long> delivery(final Txn txn, final int w, final int carrier, final long now) {
        return deliverFrom(txn, w, 1, carrier, now).map(v -> 0L);
    }

    /** Districts one after another (the standard's loop), which also bounds the verbs one Delivery has in flight. */
    private static Future<Void> deliverFrom(final Txn txn, final int w, final int d, final int carrier,
                                            final long now) {
        return d > DISTRICTS ? Future.succeededFuture()
            : deliverOne(txn, w, d, carrier, now).compose(v -> deliverFrom(txn, w, d + 1, carrier, now));
    }

    private static Future<Void> deliverOne(final Txn txn, final int w, final int d, final int carrier,
                                           final long now) {
        final long dk = districtKey(w, d);
        return txn.readForUpdateKeyDependent(DELIVERY_CURSOR, dk).compose(cursor -> { // it names the order
            final int o = cursor.getInt(0);
            final long ok = orderKey(w, d, o);
            return txn.readForUpdate(NEW_ORDER, ok).transform(found -> {
                if (found.failed()) {
                    return found.cause() instanceof UnknownKeyException ? Future.succeededFuture()
                        : Future.failedFuture(found.cause()); // no undelivered order: skipped
                }
                txn.delete(NEW_ORDER, ok);
                cursor.putInt(0, o + 1);
                txn.write(DELIVERY_CURSOR, dk, cursor, 0, ID_ROW_BYTES);
                return txn.readForUpdate(ORDER, ok).compose(order -> {
                    order.putInt(O.CARRIER_ID, carrier);
                    txn.write(ORDER, ok, order, 0, O.BYTES);
                    final int c = order.getInt(O.C_ID);
                    final List<Future<UnsafeBuffer>> lines = new ArrayList<>();
                    for (int ol = 1; ol <= order.getInt(O.OL_CNT); ol++) {
                        lines.add(txn.readForUpdate(ORDER_LINE, orderLineKey(w, d, o, ol)));
                    }
                    final Future<UnsafeBuffer> cust = txn.readForUpdate(CUSTOMER, customerKey(w, d, c));
                    return Future.all(lines).compose(v -> cust).map(cr -> {
                        long sum = 0;
                        for (int ol = 1; ol <= lines.size(); ol++) {
                            final UnsafeBuffer line = lines.get(ol - 1).result();
                            sum += line.getLong(OL.AMOUNT);
                            line.putLong(OL.DELIVERY_D, now);
                            txn.write(ORDER_LINE, orderLineKey(w, d, o, ol), line, 0, OL.BYTES);
                        }
                        cr.putLong(C.BALANCE, cr.getLong(C.BALANCE) + sum);
                        cr.putInt(C.DELIVERY_CNT, cr.getInt(C.DELIVERY_CNT) + 1);
                        txn.write(CUSTOMER, customerKey(w, d, c), cr, 0, C.BYTES);
                        return (Void) null;
                    });
                });
            });
        });
    }

    /** StockLevel (§2.8), read-only: distinct items of the district's last 20 orders with stock below threshold. */
    public static Future<Long> stockLevel(final Txn txn, final int w, final int d, final int threshold) {
        return txn.readKeyDependent(DISTRICT, districtKey(w, d)).compose(dist -> { // it names the orders
            final int next = dist.getInt(D.NEXT_O_ID);
            final int first = Math.max(1, next - 20);
            final List<Future<UnsafeBuffer>> orders = new ArrayList<>();
            for (int o = first; o < next; o++) {
                orders.add(txn.read(ORDER, orderKey(w, d, o)));
            }
            return Future.all(orders).compose(v -> {
                int count = 0;
                for (final Future<UnsafeBuffer> order : orders) {
                    count += order.result().getInt(O.OL_CNT);
                }
                final long[] lineKeys = new long[count];
                for (int k = 0, o = 0; o < orders.size(); o++) {
                    for (int ol = 1; ol <= orders.get(o).result().getInt(O.OL_CNT); ol++) {
                        lineKeys[k++] = orderLineKey(w, d, first + o, ol);
                    }
                }
                return readChunked(txn, ORDER_LINE, lineKeys, 0, new ArrayList<>(lineKeys.length)).compose(rows -> {
                    final long[] stockKeys = rows.stream().mapToInt(r -> r.getInt(OL.I_ID)).distinct()
                        .mapToLong(i -> stockKey(w, i)).toArray();
                    return readChunked(txn, STOCK, stockKeys, 0, new ArrayList<>(stockKeys.length)).map(stocks ->
                        stocks.stream().filter(r -> r.getInt(S.QUANTITY) < threshold).count());
                });
            });
        });
    }

    /** Reads per chunk of a long scan (StockLevel): bounds the verbs one transaction has in flight. */
    static final int READ_CHUNK = 32;

    /** Reads {@code keys} of {@code table} from {@code from} on, {@link #READ_CHUNK} at a time, into {@code into}. */
    private static Future<List<UnsafeBuffer>> readChunked(final Txn txn, final String table, final long[] keys,
                                                          final int from, final List<UnsafeBuffer> into) {
        if (from >= keys.length) {
            return Future.succeededFuture(into);
        }
        final List<Future<UnsafeBuffer>> chunk = new ArrayList<>(READ_CHUNK);
        for (int k = from; k < Math.min(keys.length, from + READ_CHUNK); k++) {
            chunk.add(txn.read(table, keys[k]));
        }
        return Future.all(chunk).compose(v -> {
            for (final Future<UnsafeBuffer> f : chunk) {
                into.add(f.result());
            }
            return readChunked(txn, table, keys, from + READ_CHUNK, into);
        });
    }

    // ------------------------------------------------------------------------------------------ consistency

    /** The table {@code name}'s partition holding {@code key}. */
    static Table partitionOf(final List<LogDb> dbs, final String name, final long key) {
        return partitionOf(dbs, name, key, Placement.MOD);
    }

    /** The table {@code name}'s partition holding {@code key}, placed by {@code placement}. */
    static Table partitionOf(final List<LogDb> dbs, final String name, final long key, final Placement placement) {
        return dbs.get(placement.partitionOf(name, key, dbs.size())).table(name);
    }

    /** Row {@code key}'s committed value ({@code ObjectProbe#committedValue}, read only), or null if absent/deleted. */
    static org.agrona.concurrent.AtomicBuffer rowAt(final Table t, final long key) {
        return io.scythe.txn.spi.ObjectProbe.committedValue(t, key);
    }

    /**
     * Visits every live row of {@code name} on every memory node: its committed value ({@link #rowAt}) at offset 0.
     * The key is read from the slot's home value (its columns never change after the insert).
     */
    private static void forEachRow(final List<LogDb> dbs, final String name, final RowKey key,
                                   final RowVisitor visitor) {
        for (final LogDb db : dbs) {
            final Table t = db.table(name);
            // Slots with the room a protocol asked for (LogDb#objectRoom) too.
            final int slot = t.objectSlotBytes();
            final org.agrona.concurrent.AtomicBuffer m = t.objectMemory();
            for (long at = 0; at + slot <= m.capacity(); at += slot) {
                final int value = (int) at + ObjectLayout.VALUE_OFFSET;
                final long k = key.of(m, value);
                if (k >= 0 && io.scythe.txn.spi.ObjectProbe.homeOffset(t, k) == at) {
                    final org.agrona.concurrent.AtomicBuffer row = rowAt(t, k);
                    if (row != null) {
                        visitor.visit(row, 0);
                    }
                }
            }
        }
    }

    @FunctionalInterface
    private interface RowKey {
        /** The key a row's columns name, or -1 for a slot that holds none. */
        long of(org.agrona.concurrent.AtomicBuffer m, int at);
    }

    @FunctionalInterface
    private interface RowVisitor {
        void visit(org.agrona.concurrent.AtomicBuffer m, int at);
    }

    /**
     * The consistency conditions of §3.3.2, 1-4, plus this implementation's cursor rule, checked on the memory
     * nodes' memory after a run: condition name -&gt; violations (empty when it holds).
     */
    public static Map<String, List<String>> check(final List<LogDb> dbs, final Scale s) {
        return check(dbs, s, Placement.MOD);
    }

    /** {@link #check(List, Scale)} of rows placed by {@code placement}. */
    public static Map<String, List<String>> check(final List<LogDb> dbs, final Scale s, final Placement placement) {
        final int n = s.districts();
        final int[] maxOrder = new int[n];
        final long[] lineCountSum = new long[n];
        final int[] maxNew = new int[n];
        final int[] minNew = new int[n];
        final long[] newCount = new long[n];
        final long[] lines = new long[n];
        Arrays.fill(minNew, Integer.MAX_VALUE);
        forEachRow(dbs, ORDER, (m, at) -> validDistrict(s, m.getInt(at + O.W_ID), m.getInt(at + O.D_ID))
            ? orderKey(m.getInt(at + O.W_ID), m.getInt(at + O.D_ID), m.getInt(at + O.ID)) : -1, (m, at) -> {
                final int i = index(m.getInt(at + O.W_ID), m.getInt(at + O.D_ID));
                maxOrder[i] = Math.max(maxOrder[i], m.getInt(at + O.ID));
                lineCountSum[i] += m.getInt(at + O.OL_CNT);
            });
        forEachRow(dbs, NEW_ORDER, (m, at) -> validDistrict(s, m.getInt(at + NO.W_ID), m.getInt(at + NO.D_ID))
            ? orderKey(m.getInt(at + NO.W_ID), m.getInt(at + NO.D_ID), m.getInt(at + NO.O_ID)) : -1, (m, at) -> {
                final int i = index(m.getInt(at + NO.W_ID), m.getInt(at + NO.D_ID));
                maxNew[i] = Math.max(maxNew[i], m.getInt(at + NO.O_ID));
                minNew[i] = Math.min(minNew[i], m.getInt(at + NO.O_ID));
                newCount[i]++;
            });
        forEachRow(dbs, ORDER_LINE, (m, at) -> validDistrict(s, m.getInt(at + OL.W_ID), m.getInt(at + OL.D_ID))
            && m.getInt(at + OL.NUMBER) >= 1 && m.getInt(at + OL.NUMBER) <= 15
            ? orderLineKey(m.getInt(at + OL.W_ID), m.getInt(at + OL.D_ID), m.getInt(at + OL.O_ID),
            m.getInt(at + OL.NUMBER)) : -1, (m, at) -> lines[index(m.getInt(at + OL.W_ID), m.getInt(at + OL.D_ID))]++);

        final Map<String, List<String>> result = new LinkedHashMap<>();
        final List<String> c1 = new ArrayList<>();
        final List<String> c2 = new ArrayList<>();
        final List<String> c3 = new ArrayList<>();
        final List<String> c4 = new ArrayList<>();
        final List<String> cursorRule = new ArrayList<>();
        for (int w = 1; w <= s.warehouses; w++) {
            final Table wt = partitionOf(dbs, WAREHOUSE, w, placement);
            final long wYtd = rowAt(wt, w).getLongVolatile(W.YTD);
            long dYtd = 0;
            for (int d = 1; d <= DISTRICTS; d++) {
                final long dk = districtKey(w, d);
                final Table dt = partitionOf(dbs, DISTRICT, dk, placement);
                final org.agrona.concurrent.AtomicBuffer district = rowAt(dt, dk);
                dYtd += district.getLongVolatile(D.YTD);
                final int next = district.getIntVolatile(D.NEXT_O_ID);
                final int i = index(w, d);
                final String where = "w " + w + " d " + d + ": ";
                if (next - 1 != maxOrder[i] || (newCount[i] > 0 && next - 1 != maxNew[i])) {
                    c2.add(where + "D_NEXT_O_ID - 1 = " + (next - 1) + ", max(O_ID) = " + maxOrder[i]
                        + ", max(NO_O_ID) = " + (newCount[i] > 0 ? maxNew[i] : "none"));
                }
                if (newCount[i] > 0 && maxNew[i] - minNew[i] + 1 != newCount[i]) {
                    c3.add(where + "max(NO_O_ID) - min(NO_O_ID) + 1 = " + (maxNew[i] - minNew[i] + 1) + " but "
                        + newCount[i] + " NEW-ORDER rows");
                }
                if (lineCountSum[i] != lines[i]) {
                    c4.add(where + "sum(O_OL_CNT) = " + lineCountSum[i] + " but " + lines[i] + " ORDER-LINE rows");
                }
                final Table ct = partitionOf(dbs, DELIVERY_CURSOR, dk, placement);
                final int cursor = rowAt(ct, dk).getIntVolatile(0);
                final int expected = newCount[i] > 0 ? minNew[i] : next;
                if (cursor != expected) {
                    cursorRule.add(where + "delivery cursor " + cursor + " but the oldest undelivered order is "
                        + expected);
                }
            }
            if (wYtd != dYtd) {
                c1.add("w " + w + ": W_YTD = " + wYtd + " but sum(D_YTD) = " + dYtd);
            }
        }
        result.put("1_w_ytd_is_sum_of_d_ytd", c1);
        result.put("2_next_o_id_is_max_order", c2);
        result.put("3_new_orders_contiguous", c3);
        result.put("4_order_line_count", c4);
        result.put("delivery_cursor_is_oldest_new_order", cursorRule);
        return result;
    }

    private static boolean validDistrict(final Scale s, final int w, final int d) {
        return w >= 1 && w <= s.warehouses && d >= 1 && d <= DISTRICTS;
    }

    private static int index(final int w, final int d) {
        return (w - 1) * DISTRICTS + d - 1;
    }

    /** The sum of W_YTD over the warehouses (cents): it grows by exactly the committed payments. */
    public static long warehouseYtd(final List<LogDb> dbs, final Scale s) {
        return warehouseYtd(dbs, s, Placement.MOD);
    }

    /** {@link #warehouseYtd(List, Scale)} of rows placed by {@code placement}. */
    public static long warehouseYtd(final List<LogDb> dbs, final Scale s, final Placement placement) {
        long sum = 0;
        for (int w = 1; w <= s.warehouses; w++) {
            final Table t = partitionOf(dbs, WAREHOUSE, w, placement);
            sum += rowAt(t, w).getLongVolatile(W.YTD);
        }
        return sum;
    }
}
