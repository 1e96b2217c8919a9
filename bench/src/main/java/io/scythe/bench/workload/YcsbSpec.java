package io.scythe.bench.workload;

import io.scythe.storage.LogDb;
import io.scythe.storage.ObjectLayout;
import io.scythe.storage.Table;
import io.scythe.txn.spi.ObjectProbe;
import io.scythe.storage.TableSchema;
import io.scythe.txn.Txn;
import io.vertx.core.Future;
import io.vertx.core.json.JsonObject;
import org.agrona.concurrent.UnsafeBuffer;

import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;

/**
 * YCSB transactions as Scythe §5.1 runs them: a {@code usertable} of 8-byte keys and 40-byte values, transactions of
 * {@code ops} distinct keys drawn by Zipf(theta), each key read or (with probability {@code writeRatio}) read and
 * rewritten (3:7 read:write by default; 1.0 is the write-only profile). A write increments a counter in the first
 * 8 bytes of the value, so the conserved quantity is exact: the sum of all counters equals the committed writes.
 *
 * <p>The {@link #hotArea hot-area profile} is RCC's (SIGMOD'21, §6.1): 10 operations of which 20 % are writes
 * (exactly two: RCC's {@code write_num 2}), a hot area of 0.1 % of the records, and each operation visits the hot
 * area with the "Hot Access Probability" (10 % by default; Fig. 10 uses 90 %), uniformly within it, else a key
 * outside it, uniformly. RCC's 64-byte records and 5 us of execution time are not reproduced: values stay 40 bytes
 * (Scythe's YCSB) so that both profiles run on one table.
 */
public final class YcsbSpec implements OltpSpec {
    public static final String TABLE = "usertable";
    public static final int TABLE_ID = 21;
    public static final int VALUE_BYTES = 40;
    /** RCC §6.1: the hot area is 0.1 % of the records. */
    public static final double RCC_HOT_FRACTION = 0.001;
    /** RCC §6.1: the default Hot Access Probability. */
    public static final double RCC_HOT_PROBABILITY = 0.1;
    /** The profiles {@link #profile} knows. */
    public static final List<String> PROFILES = List.of("standard", "write-only", "hot-area");

    private final long records;
    private final double theta;
    private final int ops;
    private final double writeRatio;
    private final Zipf zipf;
    /** Hot-area profile: the keys {@code [0, hotKeys)} form the hot area; 0 for the Zipf profiles. */
    private final long hotKeys;
    private final double hotProbability;

    public YcsbSpec(final long records, final double theta, final int ops, final double writeRatio) {
        this(records, theta, ops, writeRatio, 0, 0);
    }

    private YcsbSpec(final long records, final double theta, final int ops, final double writeRatio,
                     final long hotKeys, final double hotProbability) {
        if (ops < 1 || ops > 64) {
            throw new IllegalArgumentException("--ops " + ops + " must be within [1, 64]");
        }
        if (records < ops) {
            throw new IllegalArgumentException("--ops " + ops + " is more than --records " + records + ": a "
                + "transaction's keys are distinct");
        }
        if (records > Integer.MAX_VALUE) {
            throw new IllegalArgumentException("--records " + records + " must be below 2^31");
        }
        if (!(writeRatio >= 0 && writeRatio <= 1)) {
            throw new IllegalArgumentException("writeRatio=" + writeRatio + " must be within [0, 1]");
        }
        this.records = records;
        this.theta = theta;
        this.ops = ops;
        this.writeRatio = writeRatio;
        this.hotKeys = hotKeys;
        this.hotProbability = hotProbability;
        this.zipf = hotKeys > 0 ? null : new Zipf((int) records, theta);
    }

    /**
     * RCC's hot-area profile (§6.1): {@code ops} keys per transaction, {@code round(ops * writeRatio)} of them
     * written, a hot area of {@code hotFraction} of the records that each operation visits with probability
     * {@code hotProbability}.
     */
    public static YcsbSpec hotArea(final long records, final int ops, final double writeRatio,
                                   final double hotFraction, final double hotProbability) {
        if (!(hotFraction > 0 && hotFraction < 1)) {
            throw new IllegalArgumentException("hotFraction=" + hotFraction + " must be within (0, 1)");
        }
        if (!(hotProbability >= 0 && hotProbability <= 1)) {
            throw new IllegalArgumentException("hot probability=" + hotProbability + " must be within [0, 1]");
        }
        final long hot = Math.max(1, Math.round(records * hotFraction));
        // A transaction's keys are distinct, so each area must hold a whole transaction's worth.
        if (hot < ops || records - hot < ops) {
            throw new IllegalArgumentException("records=" + records + ": a hot area of " + hot + " keys and "
                + (records - hot) + " others cannot each hold the " + ops + " distinct keys of a transaction");
        }
        return new YcsbSpec(records, 0, ops, writeRatio, hot, hotProbability);
    }

    /**
     * The named profile: {@code standard} (4 keys, read:write 3:7, Zipf theta; Scythe §5.1), {@code write-only}
     * (4 keys, all written) or {@code hot-area} (RCC §6.1: 10 keys, 20 % written, 0.1 % hot area visited with
     * {@code hotProbability}). {@code ops} and {@code writeRatio} override the profile's when not null.
     */
    public static YcsbSpec profile(final String name, final long records, final double theta, final Integer ops,
                                   final Double writeRatio, final double hotProbability) {
        switch (name) {
            case "standard":
                return new YcsbSpec(records, theta, ops == null ? 4 : ops, writeRatio == null ? 0.7 : writeRatio);
            case "write-only":
                return new YcsbSpec(records, theta, ops == null ? 4 : ops, writeRatio == null ? 1.0 : writeRatio);
            case "hot-area":
                return hotArea(records, ops == null ? 10 : ops, writeRatio == null ? 0.2 : writeRatio,
                    RCC_HOT_FRACTION, hotProbability);
            default:
                throw new IllegalArgumentException("unknown YCSB profile '" + name + "'; available: "
                    + String.join(", ", PROFILES));
        }
    }

    @Override
    public String name() {
        return "ycsb";
    }

    @Override
    public String quantity() {
        return "writes";
    }

    @Override
    public JsonObject params() {
        final JsonObject params = new JsonObject().put("records", records).put("ops_per_txn", ops)
            .put("write_ratio", writeRatio).put("value_bytes", VALUE_BYTES);
        if (hotKeys > 0) {
            return params.put("ycsb_profile", "hot-area").put("hot_keys", hotKeys)
                .put("hot_probability", hotProbability).put("writes_per_txn", writesPerTxn());
        }
        return params.put("theta", theta);
    }

    private int writesPerTxn() {
        return (int) Math.round(ops * writeRatio);
    }

    @Override
    public void load(final LogDb db, final int part, final int parts) {
        final long mine = records / parts + (part < records % parts ? 1 : 0);
        final Table t = db.create(TableSchema.fixed(TABLE_ID, TABLE, VALUE_BYTES, Math.max(1, mine)));
        final UnsafeBuffer value = new UnsafeBuffer(new byte[VALUE_BYTES]);
        for (long k = part; k < records; k += parts) {
            value.putLong(8, k);
            final long status = t.insert(k, value, 0, VALUE_BYTES, ObjectLayout.LOADED_VERSION);
            if (status <= 0) {
                throw new IllegalStateException("loading key " + k + " failed with status " + status);
            }
        }
    }

    /** The keys of one transaction, and which of them it writes. */
    record Plan(long[] keys, boolean[] writes, int writesCount) {
    }

    @Override
    public Drawn draw(final SplittableRandom random) {
        final Plan plan = plan(random);
        final long written = plan.writesCount();
        return new Drawn(written == 0 ? "read-only" : "read-write",
            txn -> body(txn, plan.keys(), plan.writes(), written), plan.keys()[0], written == 0);
    }

    Plan plan(final SplittableRandom random) {
        final long[] keys = new long[ops];
        final boolean[] writes = new boolean[ops];
        int writesCount = 0;
        for (int i = 0; i < ops; i++) {
            // The area is chosen once per operation; a key the transaction has already is redrawn in the same area.
            // A few redraws only: where the transaction's keys are most of what the draw can reach (few records, a
            // steep Zipf, whose scrambling also maps some ranks onto one key), redraws may never find a new key. Then
            // the next key after the last one drawn that the transaction lacks stands in: as hot as its neighbour.
            final boolean hot = hotKeys > 0 && random.nextDouble() < hotProbability;
            long k = nextKey(random, hot);
            for (int redraws = 0; contains(keys, i, k); redraws++) {
                k = redraws < MAX_REDRAWS ? nextKey(random, hot) : nextAfter(k, hot);
            }
            keys[i] = k;
            if (hotKeys == 0) {
                writes[i] = random.nextDouble() < writeRatio;
                writesCount += writes[i] ? 1 : 0;
            }
        }
        if (hotKeys > 0) {
            // Exactly round(ops * writeRatio) writes, at random positions (RCC's write_num).
            for (int left = writesPerTxn(); left > 0; ) {
                final int i = random.nextInt(ops);
                if (!writes[i]) {
                    writes[i] = true;
                    left--;
                }
            }
            writesCount = writesPerTxn();
        }
        return new Plan(keys, writes, writesCount);
    }

    /** Redraws of a key the transaction already has before {@link #nextAfter} stands in for the draw. */
    static final int MAX_REDRAWS = 16;

    /** The key after {@code k} in its area (the hot area, the others, or all), wrapping around. */
    private long nextAfter(final long k, final boolean hot) {
        final long from = hotKeys > 0 && !hot ? hotKeys : 0;
        final long to = hotKeys > 0 && hot ? hotKeys : records;
        return k + 1 < to ? k + 1 : from;
    }

    private long nextKey(final SplittableRandom random, final boolean hot) {
        if (hotKeys == 0) {
            return zipf.scrambled(random);
        }
        return hot ? random.nextLong(hotKeys) : hotKeys + random.nextLong(records - hotKeys);
    }

    /** Whether {@code key} is in the hot area (always false for the Zipf profiles). */
    boolean isHot(final long key) {
        return key < hotKeys;
    }

    private static boolean contains(final long[] keys, final int n, final long k) {
        for (int i = 0; i < n; i++) {
            if (keys[i] == k) {
                return true;
            }
        }
        return false;
    }

    private static Future<Long> body(final Txn txn, final long[] keys, final boolean[] writes, final long written) {
        final List<Future<UnsafeBuffer>> reads = new ArrayList<>(keys.length);
        for (int i = 0; i < keys.length; i++) {
            reads.add(writes[i] ? txn.readForUpdate(TABLE, keys[i]) : txn.read(TABLE, keys[i]));
        }
        return Future.all(reads).map(cf -> {
            for (int i = 0; i < keys.length; i++) {
                if (writes[i]) {
                    final UnsafeBuffer v = cf.resultAt(i);
                    v.putLong(0, v.getLong(0) + 1);
                    txn.write(TABLE, keys[i], v, 0, VALUE_BYTES);
                }
            }
            return written;
        });
    }

    @Override
    public long total(final List<LogDb> dbs) {
        long sum = 0;
        for (int p = 0; p < dbs.size(); p++) {
            final Table t = dbs.get(p).table(TABLE);
            for (long k = p; k < records; k += dbs.size()) {
                sum += ObjectProbe.committedLong(t, k);
            }
        }
        return sum;
    }
}
