package io.scythe.node;

import io.scythe.codec.KryoCodec;
import io.scythe.fabric.MemoryKind;
import io.scythe.fabric.RemoteRegion;
import io.scythe.storage.IndexKind;
import io.scythe.storage.LogDb;
import io.scythe.storage.Table;
import io.scythe.storage.TableDescriptor;
import io.scythe.storage.TableSchema;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.eventbus.DeliveryOptions;
import io.vertx.core.eventbus.EventBus;
import io.vertx.core.eventbus.MessageConsumer;

/**
 * Where a memory node's tables are: the descriptors (schemas, regions, rkeys) compute nodes need to address them with
 * one-sided verbs, served over the event bus at {@link #address(String)} (control traffic: once per CN start). This is
 * how a CN in another process learns the catalog; nothing is shared between JVMs but messages.
 */
public final class TableDirectory {
    /** A memory node's tables. */
    public record Tables(String node, TableDescriptor[] tables) {
    }

    private TableDirectory() {
    }

    public static String address(final String memoryNode) {
        return "scythe.mn." + memoryNode + ".tables";
    }

    public static void registerCodecs(final EventBus eventBus) {
        KryoCodec.registerNested(RemoteRegion.class, MemoryKind.class, IndexKind.class, TableSchema.class,
            TableDescriptor.class, TableDescriptor[].class);
        KryoCodec.register(eventBus, Tables.class);
    }

    /** Answers lookups of {@code db}'s tables (as they are when asked) until the consumer is unregistered. */
    public static Future<MessageConsumer<Object>> serve(final Vertx vertx, final String node, final LogDb db) {
        registerCodecs(vertx.eventBus());
        final MessageConsumer<Object> consumer = vertx.eventBus().consumer(address(node), message -> {
            final TableDescriptor[] tables = db.tables().stream().map(Table::describe)
                .toArray(TableDescriptor[]::new);
            message.reply(new Tables(node, tables));
        });
        return consumer.completion().map(consumer);
    }

    /** Asks memory node {@code node} for its tables; fails after {@code timeoutMs} naming the node. */
    public static Future<Tables> lookup(final Vertx vertx, final String node, final long timeoutMs) {
        registerCodecs(vertx.eventBus());
        return vertx.eventBus().<Tables>request(address(node), "", new DeliveryOptions().setSendTimeout(timeoutMs))
            .map(reply -> reply.body())
            .recover(e -> Future.failedFuture(new IllegalStateException("memory node " + node
                + " did not say where its tables are: " + e.getMessage(), e)));
    }
}
