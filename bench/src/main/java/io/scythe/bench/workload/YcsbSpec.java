package io.scythe.bench.workload;

import io.scythe.storage.LogDb;
import io.scythe.storage.ObjectLayout;
import io.scythe.storage.Table;
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
 */
public final class YcsbSpec implements OltpSpec {
    public static final String TABLE = "usertable";
    public static final int TABLE_ID = 21;
    public static final int VALUE_BYTES = 40;

    private final long records;
    private final double theta;
    private final int ops;
    private final double writeRatio;
    private final Zipf zipf;

    public YcsbSpec(final long records, final double theta, final int ops, final double writeRatio) {
        if (records < ops || records > Integer.MAX_VALUE) {
            throw new IllegalArgumentException("records=" + records + " must be within [ops, 2^31)");
        }
        if (ops < 1 || ops > 64) {
            throw new IllegalArgumentException("ops=" + ops + " must be within [1, 64]");
        }
        if (!(writeRatio >= 0 && writeRatio <= 1)) {
            throw new IllegalArgumentException("writeRatio=" + writeRatio + " must be within [0, 1]");
        }
        this.records = records;
        this.theta = theta;
        this.ops = ops;
        this.writeRatio = writeRatio;
        this.zipf = new Zipf((int) records, theta);
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
        return new JsonObject().put("records", records).put("theta", theta).put("ops_per_txn", ops)
            .put("write_ratio", writeRatio).put("value_bytes", VALUE_BYTES);
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

    @Override
    public Drawn draw(final SplittableRandom random) {
        final long[] keys = new long[ops];
        final boolean[] writes = new boolean[ops];
        int writesCount = 0;
        for (int i = 0; i < ops; i++) {
            long k;
            do {
                k = zipf.scrambled(random);
            } while (contains(keys, i, k));
            keys[i] = k;
            writes[i] = random.nextDouble() < writeRatio;
            writesCount += writes[i] ? 1 : 0;
        }
        final long written = writesCount;
        return new Drawn(writesCount == 0 ? "read-only" : "read-write", txn -> body(txn, keys, writes, written));
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
                sum += t.objectMemory().getLongVolatile(t.offsetOf(t.lookup(k)) + ObjectLayout.VALUE_OFFSET);
            }
        }
        return sum;
    }
}
