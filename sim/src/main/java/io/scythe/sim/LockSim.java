package io.scythe.sim;

import io.scythe.bench.micro.LockWorkload;
import io.scythe.bench.workload.OltpSpec;
import io.scythe.bench.workload.Zipf;
import io.scythe.storage.LogDb;
import io.scythe.storage.Table;
import io.scythe.storage.TableDescriptor;
import io.scythe.storage.TableSchema;
import io.scythe.txn.Catalog;
import io.vertx.core.Future;
import io.vertx.core.json.JsonObject;
import org.agrona.concurrent.UnsafeBuffer;

import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Scythe's Fig. 27 in virtual time: clients lock one of {@code locks} objects of one memory node, chosen by
 * Zipf(theta), hold it {@code holdNs}, unlock, and lock again; the latency from asking to holding is recorded. The same
 * lock code as {@code scythe bench --workload lock} ({@link LockWorkload#takeoutLock}, {@link LockWorkload#casLock}),
 * with timestamps from one counter (a perfect TSO, so that this compares locks only).
 */
public final class LockSim {
    public static final String TABLE = "locks";
    private static final int TABLE_ID = 1;

    private LockSim() {
    }

    /** The lock table, loaded on memory node 0 (the one the clients lock on). */
    public static final class Spec implements OltpSpec {
        private final int locks;
        private final double theta;
        private final long holdNs;
        private final String lock;
        private long[] pointers;

        public Spec(final String lock, final int locks, final double theta, final long holdNs) {
            if (!List.of("takeout", "cas-lock").contains(lock)) {
                throw new IllegalArgumentException("lock '" + lock + "' is neither takeout nor cas-lock");
            }
            if (locks < 1 || holdNs < 0) {
                throw new IllegalArgumentException("locks=" + locks + " must be positive, hold=" + holdNs
                    + " ns not negative");
            }
            this.lock = lock;
            this.locks = locks;
            this.theta = theta;
            this.holdNs = holdNs;
        }

        @Override
        public String name() {
            return "lock";
        }

        @Override
        public String quantity() {
            return "none";
        }

        @Override
        public JsonObject params() {
            return new JsonObject().put("lock", lock).put("locks", locks).put("theta", theta).put("hold_ns", holdNs);
        }

        @Override
        public void load(final LogDb db, final int part, final int parts) {
            final long[] loaded = loadZeroedWords(db, part, TABLE_ID, TABLE, locks);
            if (loaded != null) {
                pointers = loaded;
            }
        }

        @Override
        public Drawn draw(final SplittableRandom random) {
            throw new UnsupportedOperationException("the lock workload runs operations, not transactions");
        }

        @Override
        public long total(final List<LogDb> dbs) {
            return 0;
        }

        /** Lock, record the wait, hold, unlock. */
        Simulation.Operation operation() {
            final Zipf zipf = new Zipf(locks, theta);
            final AtomicLong timestamps = new AtomicLong(1);
            final AtomicLong holders = new AtomicLong(1);
            final AtomicLong retries = new AtomicLong();
            return (runtime, random) -> {
                final Catalog.Partition partition = runtime.catalog().table(TABLE).partitions().get(0);
                final TableDescriptor d = partition.descriptor();
                final long pointer = pointers[zipf.next(random)];
                final long start = runtime.timers().nowNs();
                final Future<Runnable> held = lock.equals("takeout")
                    ? LockWorkload.takeoutLock(io.scythe.txn.scythe.TakeoutLockClient.of(runtime), runtime.timers(), partition.node(), d, pointer,
                        timestamps::getAndIncrement, retries)
                    : LockWorkload.casLock(() -> runtime.channel(partition.node()), d, pointer,
                        holders.getAndIncrement(), retries);
                return held.compose(unlock -> {
                    final long waited = runtime.timers().nowNs() - start;
                    return runtime.timers().after(holdNs).map(v -> {
                        unlock.run();
                        return waited;
                    });
                });
            };
        }
    }

    /**
     * Creates table {@code name} of {@code count} 8-byte objects, all zero, on partition 0 (the memory node the clients
     * hit; other partitions get an empty table of capacity 1).
     *
     * @return the objects' pointers on partition 0, else null
     */
    static long[] loadZeroedWords(final LogDb db, final int part, final int tableId, final String name,
                                  final int count) {
        final Table table = db.create(TableSchema.fixed(tableId, name, 8, part == 0 ? count : 1));
        if (part != 0) {
            return null;
        }
        final UnsafeBuffer zero = new UnsafeBuffer(new byte[8]);
        final long[] pointers = new long[count];
        for (int k = 0; k < count; k++) {
            pointers[k] = table.insert(k, zero, 0, 8, 1);
        }
        return pointers;
    }

    /** Builds the run of one lock kind and theta; {@code options}' clients are the lock clients. */
    public static Simulation simulation(final SimOptions options, final Spec spec) {
        return new Simulation(options, spec).operation(spec.operation());
    }
}
