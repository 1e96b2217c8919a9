package com.example.shop;

import io.scythe.node.CoordinatorVerticle;
import io.scythe.node.EmbeddedScythe;
import io.scythe.storage.ObjectLayout;
import io.scythe.storage.Table;
import io.scythe.storage.TableSchema;
import io.scythe.txn.AbortException;
import io.scythe.txn.AbortReason;
import io.scythe.txn.api.Procedures;
import io.scythe.txn.api.TxnReply;
import io.scythe.txn.api.TxnRequest;
import io.vertx.core.Future;
import io.vertx.core.eventbus.EventBus;
import io.vertx.core.json.JsonObject;
import org.agrona.concurrent.UnsafeBuffer;

import java.io.PrintStream;
import java.util.concurrent.TimeUnit;

/**
 * A shop's stock kept in Scythe, embedded in this JVM: the application's own table ({@code stock}: item to quantity
 * on hand), loaded on every memory node, and its own stored procedures ({@code restock}, {@code order}, which rolls
 * back when the stock is short, and the read-only {@code quantity}), called over the event bus. Run it with the JVM
 * option {@code --add-exports java.base/jdk.internal.misc=ALL-UNNAMED} (its jar's manifest carries it).
 */
public final class ShopApp {
    /** The table: item id to the quantity on hand (8 bytes). Ids are spread over the memory nodes by id mod count. */
    static final String STOCK = "stock";
    static final int ITEMS = 10;
    static final long INITIAL_QUANTITY = 20;

    private ShopApp() {
    }

    /** The procedures, by name, arity and body; each body runs in one transaction, retried on conflicts. */
    static Procedures procedures() {
        return new Procedures()
            // restock(item, n): adds n; returns the new quantity.
            .register("restock", 2, args -> txn -> txn.readForUpdate(STOCK, args[0]).map(b -> {
                final long now = b.getLong(0) + args[1];
                txn.write(STOCK, args[0], quantity(now), 0, 8);
                return now;
            }))
            // order(item, n): takes n when there are that many, else rolls the transaction back (nothing changes).
            .register("order", 2, args -> txn -> txn.readForUpdate(STOCK, args[0]).compose(b -> {
                final long have = b.getLong(0);
                if (have < args[1]) {
                    return Future.failedFuture(new AbortException(AbortReason.USER,
                        "item " + args[0] + ": " + have + " in stock, " + args[1] + " ordered"));
                }
                txn.write(STOCK, args[0], quantity(have - args[1]), 0, 8);
                return Future.succeededFuture(have - args[1]);
            }))
            // quantity(item): read-only.
            .register("quantity", 1, args -> txn -> txn.read(STOCK, args[0]).map(b -> b.getLong(0)));
    }

    private static UnsafeBuffer quantity(final long n) {
        final UnsafeBuffer b = new UnsafeBuffer(new byte[8]);
        b.putLong(0, n);
        return b;
    }

    /**
     * Creates the table on memory node {@code part} of {@code parts} and loads the items it holds: every memory node
     * must create every table, and holds the keys {@code key mod parts == part}. Loaded rows carry
     * {@link ObjectLayout#LOADED_VERSION}, the version before any transaction.
     */
    static void load(final io.scythe.storage.LogDb db, final int part, final int parts) {
        final Table stock = db.create(TableSchema.fixed(1, STOCK, 8, ITEMS));
        for (long item = part; item < ITEMS; item += parts) {
            stock.insert(item, quantity(INITIAL_QUANTITY), 0, 8, ObjectLayout.LOADED_VERSION);
        }
    }

    public static void main(final String[] args) throws Exception {
        run(System.out);
    }

    static void run(final PrintStream out) throws Exception {
        final JsonObject config = new JsonObject().put("memoryNodes", 2).put("protocol", "scythe");
        // start: its own Vert.x (2 event loops), closed by close() and when the start fails.
        try (EmbeddedScythe scythe = EmbeddedScythe.start(2, config, ShopApp::load, procedures())) {
            final EventBus bus = scythe.vertx().eventBus();
            // The codecs of TxnRequest / TxnReply are registered by the coordinators on this Vert.x; a client on
            // another Vert.x instance of the cluster calls CoordinatorVerticle.registerCodecs(bus) first.
            CoordinatorVerticle.registerCodecs(bus);
            call(bus, out, "order", 3, 5);
            call(bus, out, "order", 3, 50);
            call(bus, out, "restock", 3, 40);
            call(bus, out, "order", 3, 50);
            call(bus, out, "quantity", 3);
            call(bus, out, "refund", 3, 1);
            call(bus, out, "order", 3);
        }
        out.println("closed");
    }

    /** Sends one request and says what its reply means, by its status. */
    private static void call(final EventBus bus, final PrintStream out, final String procedure, final long... args)
        throws Exception {
        final TxnReply reply = bus.<TxnReply>request(CoordinatorVerticle.ADDRESS, new TxnRequest(procedure, args))
            .await(10, TimeUnit.SECONDS).body(); // no reply in time would mean: outcome unknown
        final String what = procedure + java.util.Arrays.toString(args) + ": ";
        switch (reply.status()) {
            case COMMITTED -> out.println(what + "committed, result " + reply.result() + " (" + reply.mode() + ", "
                + reply.attempts() + " attempt(s), commit timestamp " + (reply.commitTs() > 0 ? "> 0" : "0") + ")");
            case ABORTED -> out.println(what + "aborted (" + reply.abortReason() + ") after " + reply.attempts()
                + " attempt(s): " + reply.reason());
            case REJECTED -> out.println(what + "rejected (" + reply.rejection() + "), nothing ran: "
                + reply.reason());
            case FAILED -> out.println(what + "failed, nothing committed: " + reply.reason());
            case UNKNOWN -> out.println(what + "outcome unknown (it may have committed): " + reply.reason());
        }
    }
}
