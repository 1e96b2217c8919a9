package io.scythe.node;

import io.scythe.storage.ObjectLayout;
import io.scythe.storage.Table;
import io.scythe.storage.TableSchema;
import io.scythe.txn.api.Procedures;
import io.vertx.core.json.JsonObject;
import org.agrona.concurrent.UnsafeBuffer;

/**
 * A child JVM for {@link EmbeddedScytheStartTest}: an application's {@code main} that starts Scythe with
 * {@link EmbeddedScythe#start} and lets its exception end {@code main}. Argument {@code ok}: a good loader, one
 * transaction, then close; {@code bad-loader}: a loader that creates its table on one memory node of two.
 */
final class EmbeddedStartChild {
    private EmbeddedStartChild() {
    }

    public static void main(final String[] args) throws Exception {
        final boolean good = "ok".equals(args[0]);
        final EmbeddedScythe.Loader loader = (db, part, parts) -> {
            if (good || part == 0) {
                final Table t = db.create(TableSchema.fixed(1, "counters", 8, 8));
                for (long k = part; k < 4; k += parts) {
                    t.insert(k, new UnsafeBuffer(new byte[8]), 0, 8, ObjectLayout.LOADED_VERSION);
                }
            }
        };
        final Procedures procedures = new Procedures().register("get", 1, a -> txn ->
            txn.read("counters", a[0]).map(b -> b.getLong(0)));
        try (EmbeddedScythe scythe = EmbeddedScythe.start(1, new JsonObject().put("memoryNodes", 2), loader,
            procedures)) {
            final long v = io.vertx.core.Future.<Long>future(p -> scythe.loops().get(0).runOnContext(x ->
                scythe.coordinator().run(procedures.bind("get", new long[] {1})).map(o -> o.result()).onComplete(p)))
                .await(30, java.util.concurrent.TimeUnit.SECONDS);
            System.out.println("read " + v);
        }
        // main returns: the JVM must exit on its own (no event-loop thread left)
    }
}
