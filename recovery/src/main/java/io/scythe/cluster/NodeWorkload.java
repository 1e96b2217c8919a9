package io.scythe.cluster;

import io.scythe.storage.LogDb;
import io.scythe.storage.ObjectLayout;
import io.scythe.storage.Table;
import io.scythe.storage.TableSchema;
import io.scythe.txn.api.Procedures;
import io.vertx.core.json.JsonObject;
import org.agrona.concurrent.UnsafeBuffer;

import java.util.Map;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Function;

/**
 * What a cluster holds and runs: memory nodes load its tables (each its partition), compute nodes register its stored
 * procedures. Chosen by name in the node config ({@code workload: {name: ..., ...params}}); the {@code scythe}
 * command adds the benchmark workloads (SmallBank) to the built-in {@code counters}.
 */
public interface NodeWorkload {
    /** Creates and fills this workload's tables on memory node {@code part} of {@code parts}. */
    void load(LogDb db, int part, int parts);

    /** The stored procedures clients may call. */
    Procedures procedures();

    /** Factories by name. */
    Map<String, Function<JsonObject, NodeWorkload>> FACTORIES = new ConcurrentHashMap<>(Map.of(
        "counters", Counters::new));

    static void register(final String name, final Function<JsonObject, NodeWorkload> factory) {
        FACTORIES.put(name, factory);
    }

    /** The workload {@code spec} names. */
    static NodeWorkload of(final JsonObject spec) {
        final String name = spec.getString("name");
        final Function<JsonObject, NodeWorkload> factory = name == null ? null : FACTORIES.get(name);
        if (factory == null) {
            throw new IllegalArgumentException("unknown workload '" + name + "'; known: "
                + new TreeSet<>(FACTORIES.keySet()));
        }
        return factory.apply(spec);
    }

    /**
     * {@code keys} 8-byte counters in table {@code counters}, all 0; procedures {@code add(key, delta)} (returns the
     * new value), {@code get(key)} and {@code move(from, to, amount)} (one transaction over two keys, on two memory
     * nodes when their partitions differ; their sum is conserved; returns {@code from}'s new value). Small and exact:
     * tests count every committed add.
     */
    final class Counters implements NodeWorkload {
        public static final String TABLE = "counters";
        private final long keys;

        public Counters(final JsonObject spec) {
            this.keys = spec.getLong("keys", 1024L);
            if (keys <= 0) {
                throw new IllegalArgumentException("counters: keys=" + keys + " must be positive");
            }
        }

        @Override
        public void load(final LogDb db, final int part, final int parts) {
            final Table t = db.create(TableSchema.fixed(1, TABLE, 8, Math.max(16, 2 * (keys / parts + 1))));
            final UnsafeBuffer zero = new UnsafeBuffer(new byte[8]);
            for (long k = part; k < keys; k += parts) {
                t.insert(k, zero, 0, 8, ObjectLayout.LOADED_VERSION);
            }
        }

        @Override
        public Procedures procedures() {
            return new Procedures()
                .register("add", 2, args -> txn -> txn.readForUpdate(TABLE, args[0]).map(b -> {
                    final long next = b.getLong(0) + args[1];
                    final UnsafeBuffer value = new UnsafeBuffer(new byte[8]);
                    value.putLong(0, next);
                    txn.write(TABLE, args[0], value, 0, 8);
                    return next;
                }))
                .register("get", 1, args -> txn -> txn.read(TABLE, args[0]).map(b -> b.getLong(0)))
                .register("move", 3, args -> {
                    if (args[0] == args[1]) {
                        throw new IllegalArgumentException("move needs two different keys, not " + args[0] + " twice");
                    }
                    return txn -> io.vertx.core.Future.all(txn.readForUpdate(TABLE, args[0]),
                        txn.readForUpdate(TABLE, args[1])).map(both -> {
                            final long from = both.<UnsafeBuffer>resultAt(0).getLong(0) - args[2];
                            final UnsafeBuffer fromValue = new UnsafeBuffer(new byte[8]);
                            fromValue.putLong(0, from);
                            txn.write(TABLE, args[0], fromValue, 0, 8);
                            final UnsafeBuffer toValue = new UnsafeBuffer(new byte[8]);
                            toValue.putLong(0, both.<UnsafeBuffer>resultAt(1).getLong(0) + args[2]);
                            txn.write(TABLE, args[1], toValue, 0, 8);
                            return from;
                        });
                });
        }
    }
}
