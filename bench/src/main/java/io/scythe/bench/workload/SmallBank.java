package io.scythe.bench.workload;

import io.scythe.storage.LogDb;
import io.scythe.storage.ObjectLayout;
import io.scythe.storage.Table;
import io.scythe.txn.spi.ObjectProbe;
import io.scythe.storage.TableSchema;
import io.scythe.txn.AbortException;
import io.scythe.txn.AbortReason;
import io.scythe.txn.Txn;
import io.vertx.core.Future;
import org.agrona.concurrent.UnsafeBuffer;

import java.util.List;
import java.util.SplittableRandom;
import java.util.function.Function;

/**
 * SmallBank (Cahill et al.; the H-Store/FORD/Scythe version): a checking and a savings balance per customer, six
 * transactions. Every procedure returns the money it added to the bank (negative when it took some), so the
 * invariant is exact: after a run, the sum of all balances equals the initial sum plus the returns of the committed
 * transactions. Balances are 8-byte longs (cents).
 */
public final class SmallBank {
    public static final String SAVINGS = "savings";
    public static final String CHECKING = "checking";
    public static final int SAVINGS_ID = 11;
    public static final int CHECKING_ID = 12;
    public static final long INITIAL_BALANCE = 10_000;

    /** A transaction type, its share of the mix, and its body. */
    public record Type(String name, int weight, Procedure procedure) {
    }

    /** A procedure's body given its accounts and amount. */
    @FunctionalInterface
    public interface Procedure {
        Future<Long> run(Txn txn, long a, long b, long amount);
    }

    /** The standard mix (H-Store): percentages. */
    public static final List<Type> STANDARD_MIX = List.of(
        new Type("Amalgamate", 15, SmallBank::amalgamate),
        new Type("Balance", 15, SmallBank::balance),
        new Type("DepositChecking", 15, SmallBank::depositChecking),
        new Type("SendPayment", 25, SmallBank::sendPayment),
        new Type("TransactSavings", 15, SmallBank::transactSavings),
        new Type("WriteCheck", 15, SmallBank::writeCheck));

    /** Deposits only: the smallest mix that loses money if a protocol loses updates (tests). */
    public static final List<Type> DEPOSITS = List.of(new Type("DepositChecking", 1, SmallBank::depositChecking));

    /** The mix named {@code standard} (6 types), {@code scythe} (4 types) or {@code deposits}. */
    public static List<Type> mix(final String name) {
        switch (name) {
            case "standard":
                return STANDARD_MIX;
            case "scythe":
                return SCYTHE_MIX;
            case "deposits":
                return DEPOSITS;
            default:
                throw new IllegalArgumentException("unknown SmallBank mix '" + name + "'; available: standard, "
                    + "scythe, deposits");
        }
    }

    /** Scythe's 4-type profile (§5.1): Balance, DepositChecking, TransactSaving, Amalgamate, equally. */
    public static final List<Type> SCYTHE_MIX = List.of(
        new Type("Balance", 25, SmallBank::balance),
        new Type("DepositChecking", 25, SmallBank::depositChecking),
        new Type("TransactSavings", 25, SmallBank::transactSavings),
        new Type("Amalgamate", 25, SmallBank::amalgamate));

    private SmallBank() {
    }

    /** Creates and fills the two tables on {@code db} for the accounts {@code a} with {@code a mod parts == part}. */
    public static void load(final LogDb db, final long accounts, final int part, final int parts) {
        final long mine = accounts / parts + (part < accounts % parts ? 1 : 0);
        final Table savings = db.create(TableSchema.fixed(SAVINGS_ID, SAVINGS, 8, Math.max(1, mine)));
        final Table checking = db.create(TableSchema.fixed(CHECKING_ID, CHECKING, 8, Math.max(1, mine)));
        final UnsafeBuffer balance = new UnsafeBuffer(new byte[8]);
        balance.putLong(0, INITIAL_BALANCE);
        for (long a = part; a < accounts; a += parts) {
            if (savings.insert(a, balance, 0, 8, ObjectLayout.LOADED_VERSION) <= 0
                || checking.insert(a, balance, 0, 8, ObjectLayout.LOADED_VERSION) <= 0) {
                throw new IllegalStateException("loading account " + a + " failed");
            }
        }
    }

    /** The sum of every balance in {@code db}'s two tables (read directly on the memory node, after a run). */
    public static long totalOf(final LogDb db, final long accounts, final int part, final int parts) {
        long sum = 0;
        for (final String name : new String[] {SAVINGS, CHECKING}) {
            final Table t = db.table(name);
            for (long a = part; a < accounts; a += parts) {
                sum += ObjectProbe.committedLong(t, a);
            }
        }
        return sum;
    }

    /** Picks a type by weight. */
    public static Type pick(final List<Type> mix, final SplittableRandom random) {
        return WeightedPick.pick(mix, Type::weight, random);
    }

    /**
     * Per thread, the new balance {@link #put} hands to {@code write}, which copies it before it returns (every
     * {@link Txn} buffers a copy): one buffer a thread instead of two objects a write.
     */
    private static final ThreadLocal<UnsafeBuffer> NEW_BALANCE = ThreadLocal.withInitial(() -> new UnsafeBuffer(
        new byte[8]));

    private static void put(final Txn txn, final String table, final long key, final long cents) {
        final UnsafeBuffer b = NEW_BALANCE.get();
        b.putLong(0, cents);
        txn.write(table, key, b, 0, 8);
    }

    /** Moves everything of {@code a} (both balances) into {@code b}'s checking. */
    static Future<Long> amalgamate(final Txn txn, final long a, final long b, final long amount) {
        return Future.all(txn.readForUpdate(SAVINGS, a), txn.readForUpdate(CHECKING, a),
            txn.readForUpdate(CHECKING, b)).map(cf -> {
                final long total = cf.<UnsafeBuffer>resultAt(0).getLong(0) + cf.<UnsafeBuffer>resultAt(1).getLong(0);
                put(txn, SAVINGS, a, 0);
                put(txn, CHECKING, a, 0);
                put(txn, CHECKING, b, cf.<UnsafeBuffer>resultAt(2).getLong(0) + total);
                return 0L;
            });
    }

    static Future<Long> balance(final Txn txn, final long a, final long b, final long amount) {
        return Future.all(txn.read(SAVINGS, a), txn.read(CHECKING, a)).map(cf -> 0L);
    }

    static Future<Long> depositChecking(final Txn txn, final long a, final long b, final long amount) {
        return txn.readForUpdate(CHECKING, a).map(c -> {
            put(txn, CHECKING, a, c.getLong(0) + amount);
            return amount;
        });
    }

    /** Pays {@code amount} from {@code a}'s checking to {@code b}'s; aborts (by the user) if {@code a} lacks it. */
    static Future<Long> sendPayment(final Txn txn, final long a, final long b, final long amount) {
        return Future.all(txn.readForUpdate(CHECKING, a), txn.readForUpdate(CHECKING, b)).compose(cf -> {
            final long from = cf.<UnsafeBuffer>resultAt(0).getLong(0);
            if (from < amount) {
                return Future.failedFuture(new AbortException(AbortReason.USER, "insufficient funds"));
            }
            put(txn, CHECKING, a, from - amount);
            put(txn, CHECKING, b, cf.<UnsafeBuffer>resultAt(1).getLong(0) + amount);
            return Future.succeededFuture(0L);
        });
    }

    static Future<Long> transactSavings(final Txn txn, final long a, final long b, final long amount) {
        return txn.readForUpdate(SAVINGS, a).map(s -> {
            put(txn, SAVINGS, a, s.getLong(0) + amount);
            return amount;
        });
    }

    /** Writes a check of {@code amount} on {@code a}: with a 1-cent penalty when the balances do not cover it. */
    static Future<Long> writeCheck(final Txn txn, final long a, final long b, final long amount) {
        return Future.all(txn.read(SAVINGS, a), txn.readForUpdate(CHECKING, a)).map(cf -> {
            final long total = cf.<UnsafeBuffer>resultAt(0).getLong(0) + cf.<UnsafeBuffer>resultAt(1).getLong(0);
            final long debit = total < amount ? amount + 1 : amount;
            put(txn, CHECKING, a, cf.<UnsafeBuffer>resultAt(1).getLong(0) - debit);
            return -debit;
        });
    }

    /** A transaction of {@code type} on the accounts and amount {@link #drawArgs} drew. */
    public static Function<Txn, Future<Long>> body(final Type type, final long[] args) {
        return txn -> type.procedure().run(txn, args[0], args[1], args[2]);
    }

    /** Whether {@code type} only reads (Balance). */
    public static boolean readOnly(final Type type) {
        return "Balance".equals(type.name());
    }

    /** A transaction's arguments: accounts {@code a} and {@code b != a} drawn from {@code zipf}, and an amount. */
    public static long[] drawArgs(final Zipf zipf, final SplittableRandom random) {
        final long a = zipf.next(random);
        long b = zipf.next(random);
        while (b == a && zipf.n() > 1) {
            b = random.nextInt(zipf.n());
        }
        return new long[] {a, b, 1 + random.nextInt(100)};
    }
}
