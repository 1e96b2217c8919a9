package io.scythe.bench.workload;

import io.scythe.storage.LogDb;
import io.scythe.storage.ObjectLayout;
import io.scythe.storage.Table;
import io.scythe.txn.spi.ObjectProbe;
import io.scythe.storage.TableSchema;
import io.scythe.txn.Txn;
import io.scythe.txn.UnknownKeyException;
import io.vertx.core.Future;
import io.vertx.core.json.JsonObject;
import org.agrona.concurrent.UnsafeBuffer;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.function.Function;

/**
 * Small workloads that make keys appear and disappear, for the seed explorer and the history checker: every commit
 * path of inserts, deletes and reads of absent keys meets contention on a handful of keys. Two shapes:
 *
 * <ul>
 *   <li><b>phantom</b>: per group {@code g}, a flag {@code X_g} (table {@code flag}, loaded 0), a mark {@code K_g}
 *       (table {@code mark}, absent at first) and a tally {@code Y_g} of claims (table {@code tally}, loaded 0).
 *       <i>Claim</i> reads {@code K_g} and {@code X_g} and, if {@code K_g} is absent and {@code X_g = 0}, inserts
 *       {@code K_g} and adds 1 to {@code Y_g}; <i>Raise</i> reads {@code K_g} and, if it is absent, writes
 *       {@code X_g + 1}; <i>Reset</i> reads both and, unless it finds both set (which it leaves as they are, so that
 *       the end of the run shows it), deletes {@code K_g} if present and writes {@code X_g = 0}; <i>Audit</i> only
 *       reads {@code K_g}, {@code Y_g} and {@code X_g}. In every serial order "{@code X_g >= 1} and {@code K_g}
 *       present" is impossible; a protocol that lets a Claim and a Raise both see {@code K_g} absent (a phantom: write
 *       skew through the absent key) reaches it. The conserved quantity is the number of groups in that state: 0
 *       before, 0 after. An Audit that saw {@code K_g} absent, a Claim's tally and a flag from before a Reset that
 *       deleted the Claim's mark read a state no serial order has (a fractured read): the history checker sees it.</li>
 *   <li><b>churn</b>: {@code keys} counters (table {@code counter}, loaded 0), each updated ({@code +1}), deleted
 *       (returns minus its value) and inserted blind (value 0, without reading it; a key present makes the commit
 *       fail as a duplicate, an expected outcome here). The conserved quantity is the sum of the counters present:
 *       a lost update or a delete applied twice shows in it.</li>
 * </ul>
 */
public final class KeyChurnSpec implements OltpSpec {
    public static final String FLAG = "flag";
    public static final String MARK = "mark";
    public static final String COUNTER = "counter";
    public static final String TALLY = "tally";
    /** Phantom's consistency condition: no group has its flag raised and its mark present (write skew). */
    public static final String WRITE_SKEW_CONDITION = "no group flagged and marked";
    private static final int TALLY_ID = 44;
    private static final int FLAG_ID = 41;
    private static final int MARK_ID = 42;
    private static final int COUNTER_ID = 43;

    /** The two shapes. */
    public enum Shape { PHANTOM, CHURN }

    private final Shape shape;
    private final int keys;

    /** @param keys groups (phantom) or counters (churn): few, so that transactions meet on them */
    public KeyChurnSpec(final Shape shape, final int keys) {
        if (keys < 1 || keys > 1_000_000) {
            throw new IllegalArgumentException("keys=" + keys + " must be within [1, 1000000]");
        }
        this.shape = shape;
        this.keys = keys;
    }

    /** The shape named {@code name} ({@code phantom} or {@code churn}), or null. */
    public static Shape shapeNamed(final String name) {
        for (final Shape s : Shape.values()) {
            if (s.name().equalsIgnoreCase(name)) {
                return s;
            }
        }
        return null;
    }

    @Override
    public String name() {
        return shape.name().toLowerCase(java.util.Locale.ROOT);
    }

    @Override
    public String quantity() {
        return shape == Shape.PHANTOM ? "flagged_and_marked_groups" : "counter_sum";
    }

    @Override
    public JsonObject params() {
        return new JsonObject().put("keys", keys);
    }

    @Override
    public void load(final LogDb db, final int part, final int parts) {
        final long mine = keys / parts + (part < keys % parts ? 1 : 0);
        final UnsafeBuffer zero = new UnsafeBuffer(new byte[8]);
        if (shape == Shape.PHANTOM) {
            final Table flag = db.create(TableSchema.fixed(FLAG_ID, FLAG, 8, Math.max(1, mine)));
            final Table tally = db.create(TableSchema.fixed(TALLY_ID, TALLY, 8, Math.max(1, mine)));
            db.create(TableSchema.fixed(MARK_ID, MARK, 8, Math.max(1, mine)));
            for (long g = part; g < keys; g += parts) {
                if (flag.insert(g, zero, 0, 8, ObjectLayout.LOADED_VERSION) <= 0
                    || tally.insert(g, zero, 0, 8, ObjectLayout.LOADED_VERSION) <= 0) {
                    throw new IllegalStateException("loading group " + g + " failed");
                }
            }
        } else {
            final Table counter = db.create(TableSchema.fixed(COUNTER_ID, COUNTER, 8, Math.max(1, mine)));
            for (long k = part; k < keys; k += parts) {
                if (counter.insert(k, zero, 0, 8, ObjectLayout.LOADED_VERSION) <= 0) {
                    throw new IllegalStateException("loading counter " + k + " failed");
                }
            }
        }
    }

    @Override
    public Drawn draw(final SplittableRandom random) {
        final long key = random.nextInt(keys);
        final int pick = random.nextInt(10);
        if (shape == Shape.PHANTOM) {
            return pick < 3 ? new Drawn("Claim", txn -> claim(txn, key), key, false)
                : pick < 6 ? new Drawn("Raise", txn -> raise(txn, key), key, false)
                : pick < 8 ? new Drawn("Reset", txn -> reset(txn, key), key, false)
                : new Drawn("Audit", txn -> audit(txn, key), key, true);
        }
        return pick < 5 ? new Drawn("Update", txn -> update(txn, key), key, false)
            : pick < 7 ? new Drawn("Delete", txn -> delete(txn, key), key, false)
            : new Drawn("Insert", txn -> insert(txn, key), key, false);
    }

    /** The value of {@code key}, or null when it is absent (or deleted): an absent key is an answer, not a failure. */
    static Future<UnsafeBuffer> readIfPresent(final Txn txn, final String table, final long key) {
        return txn.read(table, key).recover(e -> e instanceof UnknownKeyException ? Future.succeededFuture(null)
            : Future.failedFuture(e));
    }

    private static UnsafeBuffer longValue(final long v) {
        final UnsafeBuffer b = new UnsafeBuffer(new byte[8]);
        b.putLong(0, v);
        return b;
    }

    private static Future<Long> claim(final Txn txn, final long g) {
        return readIfPresent(txn, MARK, g).compose(mark -> txn.read(FLAG, g).compose(flag -> {
            if (mark != null || flag.getLong(0) != 0) {
                return Future.succeededFuture(0L);
            }
            txn.insert(MARK, g, longValue(1), 0, 8);
            return txn.read(TALLY, g).map(tally -> {
                txn.write(TALLY, g, longValue(tally.getLong(0) + 1), 0, 8);
                return 0L;
            });
        }));
    }

    private static Future<Long> audit(final Txn txn, final long g) {
        return readIfPresent(txn, MARK, g).compose(mark -> txn.read(TALLY, g))
            .compose(tally -> txn.read(FLAG, g)).map(flag -> 0L);
    }

    private static Future<Long> raise(final Txn txn, final long g) {
        return readIfPresent(txn, MARK, g).compose(mark -> mark != null ? Future.succeededFuture(0L)
            : txn.read(FLAG, g).map(flag -> {
                txn.write(FLAG, g, longValue(flag.getLong(0) + 1), 0, 8);
                return 0L;
            }));
    }

    private static Future<Long> reset(final Txn txn, final long g) {
        return txn.read(FLAG, g).compose(flag -> readIfPresent(txn, MARK, g).map(mark -> {
            if (mark != null && flag.getLong(0) != 0) {
                return 0L; // the impossible state is kept, so that the run's end shows it
            }
            if (mark != null) {
                txn.delete(MARK, g);
            }
            if (mark != null || flag.getLong(0) != 0) {
                txn.write(FLAG, g, longValue(0), 0, 8);
            }
            return 0L;
        }));
    }

    private static Future<Long> update(final Txn txn, final long k) {
        return readIfPresent(txn, COUNTER, k).map(v -> {
            if (v == null) {
                return 0L;
            }
            txn.write(COUNTER, k, longValue(v.getLong(0) + 1), 0, 8);
            return 1L;
        });
    }

    private static Future<Long> delete(final Txn txn, final long k) {
        return readIfPresent(txn, COUNTER, k).map(v -> {
            if (v == null) {
                return 0L;
            }
            txn.delete(COUNTER, k);
            return -v.getLong(0);
        });
    }

    private static Future<Long> insert(final Txn txn, final long k) {
        txn.insert(COUNTER, k, longValue(0), 0, 8);
        return Future.succeededFuture(0L);
    }

    /** The value of {@code key} on the memory nodes after a run, or null when it is absent or deleted. */
    private static Long valueOn(final List<LogDb> dbs, final String table, final long key) {
        return ObjectProbe.committedLong(dbs.get((int) Long.remainderUnsigned(key, dbs.size())).table(table), key);
    }

    private List<String> violations(final List<LogDb> dbs) {
        final List<String> found = new ArrayList<>();
        for (long g = 0; g < keys; g++) {
            final long flag = valueOn(dbs, FLAG, g);
            if (flag >= 1 && valueOn(dbs, MARK, g) != null) {
                found.add("group " + g + ": flag " + flag + " and mark present");
            }
        }
        return found;
    }

    @Override
    public long total(final List<LogDb> dbs) {
        if (shape == Shape.PHANTOM) {
            return violations(dbs).size();
        }
        long sum = 0;
        for (long k = 0; k < keys; k++) {
            final Long v = valueOn(dbs, COUNTER, k);
            sum += v == null ? 0 : v;
        }
        return sum;
    }

    @Override
    public Map<String, List<String>> consistency(final List<LogDb> dbs) {
        return shape == Shape.PHANTOM ? Map.of(WRITE_SKEW_CONDITION, violations(dbs)) : Map.of();
    }

    /** Phantom's one condition (and its conserved quantity, which counts its violations) is write skew. */
    @Override
    public java.util.Set<String> writeSkewConditions() {
        return shape == Shape.PHANTOM ? java.util.Set.of(WRITE_SKEW_CONDITION, quantity()) : java.util.Set.of();
    }

    @Override
    public boolean duplicateKeyIsAnOutcome() {
        return true; // churn's blind insert of a key that is present
    }

    /** The body of one transaction type, for tests that run a type on its own. */
    public Function<Txn, Future<Long>> body(final String type, final long key) {
        switch (type) {
            case "Claim": return txn -> claim(txn, key);
            case "Raise": return txn -> raise(txn, key);
            case "Reset": return txn -> reset(txn, key);
            case "Audit": return txn -> audit(txn, key);
            case "Update": return txn -> update(txn, key);
            case "Delete": return txn -> delete(txn, key);
            case "Insert": return txn -> insert(txn, key);
            default: throw new IllegalArgumentException("no transaction type " + type);
        }
    }
}
