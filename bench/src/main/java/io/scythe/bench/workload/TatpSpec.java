package io.scythe.bench.workload;

import io.scythe.bench.workload.Tatp.AccessInfoRow;
import io.scythe.bench.workload.Tatp.CallForwardingRow;
import io.scythe.bench.workload.Tatp.SpecialFacilityRow;
import io.scythe.bench.workload.Tatp.SubNbrRow;
import io.scythe.bench.workload.Tatp.SubscriberRow;
import io.scythe.storage.LogDb;
import io.scythe.txn.Txn;
import io.scythe.txn.UnknownKeyException;
import io.vertx.core.Future;
import io.vertx.core.json.JsonObject;
import org.agrona.concurrent.UnsafeBuffer;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.Function;

/**
 * TATP as the OLTP driver runs it ({@link Tatp} holds the tables): the spec's seven transactions and mix (80 %
 * read-only), subscribers chosen by the spec's non-uniform {@code NURand(A, 0, S - 1)}. A transaction whose row is
 * not there (GetAccessData of a missing ai_type, UpdateSubscriberData of a missing facility, an InsertCallForwarding
 * whose row exists, ...) is an expected outcome of the spec: it commits without writing, counted as completed, not
 * as an abort. The conserved quantity is the number of CALL_FORWARDING rows: after a run it equals the initial count
 * plus the committed inserts minus the committed deletes; {@link #consistency} also checks that every
 * CALL_FORWARDING row belongs to an existing SPECIAL_FACILITY.
 *
 * <p>Known limit: reads that find no row are not validated (no phantom protection), so a GetNewDestination that
 * overlaps an insert may miss it; the counted invariants do not depend on those reads.
 */
public final class TatpSpec implements OltpSpec {
    /** A transaction type and its share of the mix, in percent. */
    public record Type(String name, int weight) {
    }

    public static final String GET_SUBSCRIBER_DATA = "GetSubscriberData";
    public static final String GET_NEW_DESTINATION = "GetNewDestination";
    public static final String GET_ACCESS_DATA = "GetAccessData";
    /** The spec's read-only transactions (80 % of the standard mix). */
    static final java.util.Set<String> READ_ONLY = java.util.Set.of(GET_SUBSCRIBER_DATA, GET_NEW_DESTINATION,
        GET_ACCESS_DATA);
    public static final String UPDATE_SUBSCRIBER_DATA = "UpdateSubscriberData";
    public static final String UPDATE_LOCATION = "UpdateLocation";
    public static final String INSERT_CALL_FORWARDING = "InsertCallForwarding";
    public static final String DELETE_CALL_FORWARDING = "DeleteCallForwarding";

    /** The spec's mix (FORD's and Lotus's): 80 % read-only. */
    public static final List<Type> STANDARD_MIX = List.of(
        new Type(GET_SUBSCRIBER_DATA, 35), new Type(GET_NEW_DESTINATION, 10), new Type(GET_ACCESS_DATA, 35),
        new Type(UPDATE_SUBSCRIBER_DATA, 2), new Type(UPDATE_LOCATION, 14), new Type(INSERT_CALL_FORWARDING, 2),
        new Type(DELETE_CALL_FORWARDING, 2));
    /** The standard mix without the inserts and deletes (the other weights unchanged): reads and updates only. */
    public static final List<Type> READ_UPDATE_MIX = STANDARD_MIX.subList(0, 5);

    private final long subscribers;
    private final String mixName;
    private final List<Type> mix;
    private final long seed;
    /** The spec's A of NURand: 65535 up to 1M subscribers, 1048575 up to 10M, 2097151 beyond. */
    private final long nurandA;
    private final Map<String, LongAdder> notFound = new ConcurrentHashMap<>();
    private final AtomicReference<String> unavailable = new AtomicReference<>();

    public TatpSpec(final long subscribers, final String mix, final long seed) {
        if (subscribers < 1 || subscribers > 100_000_000) {
            throw new IllegalArgumentException("subscribers=" + subscribers + " must be within [1, 100,000,000]");
        }
        this.subscribers = subscribers;
        this.mixName = mix;
        this.mix = mix(mix);
        this.seed = seed;
        this.nurandA = subscribers <= 1_000_000 ? 65_535 : subscribers <= 10_000_000 ? 1_048_575 : 2_097_151;
    }

    /** The mix named {@code standard} (the spec's seven types) or {@code read-update} (without insert, delete). */
    public static List<Type> mix(final String name) {
        switch (name) {
            case "standard":
                return STANDARD_MIX;
            case "read-update":
                return READ_UPDATE_MIX;
            default:
                throw new IllegalArgumentException("unknown TATP mix '" + name + "'; available: standard, "
                    + "read-update");
        }
    }

    @Override
    public String name() {
        return "tatp";
    }

    @Override
    public String quantity() {
        return "call_forwarding_rows";
    }

    @Override
    public JsonObject params() {
        return new JsonObject().put("subscribers", subscribers).put("mix", mixName).put("nurand_a", nurandA);
    }

    @Override
    public void load(final LogDb db, final int part, final int parts) {
        Tatp.load(db, subscribers, seed, part, parts);
    }

    @Override
    public long total(final List<LogDb> dbs) {
        return Tatp.callForwardingRows(dbs, subscribers);
    }

    /**
     * {@link Tatp#consistency}, and {@code transaction_api}: whether the inserts and deletes of the standard mix could
     * run at all (they cannot until {@code Txn.insert}/{@code delete} exist).
     */
    @Override
    public Map<String, List<String>> consistency(final List<LogDb> dbs) {
        final Map<String, List<String>> conditions = Tatp.consistency(dbs, subscribers);
        final String missing = unavailable.get();
        conditions.put("transaction_api", missing == null ? List.of() : List.of(missing));
        return conditions;
    }

    /** Attempts of {@code type} that found no row to act on (the spec's expected failures), so far. */
    public long notFound(final String type) {
        final LongAdder n = notFound.get(type);
        return n == null ? 0 : n.sum();
    }

    /** A subscriber by the spec's {@code NURand(A, 0, S - 1) = (random(0, A) | random(0, S - 1)) % S}. */
    public long subscriber(final SplittableRandom random) {
        return (random.nextLong(nurandA + 1) | random.nextLong(subscribers)) % subscribers;
    }

    public Type pick(final SplittableRandom random) {
        return WeightedPick.pick(mix, Type::weight, random);
    }

    @Override
    public Drawn draw(final SplittableRandom random) {
        final String type = pick(random).name();
        final long s = subscriber(random);
        final int kind = 1 + random.nextInt(4); // ai_type or sf_type
        final int start = Tatp.START_TIMES[random.nextInt(3)];
        final int end = 1 + random.nextInt(24);
        final Function<Txn, Future<Long>> body;
        switch (type) {
            case GET_SUBSCRIBER_DATA:
                body = txn -> txn.read(Tatp.SUBSCRIBER, s).map(row -> 0L);
                break;
            case GET_NEW_DESTINATION:
                body = txn -> getNewDestination(txn, s, kind, start, end);
                break;
            case GET_ACCESS_DATA:
                body = txn -> optional(txn.read(Tatp.ACCESS_INFO, Tatp.accessInfoKey(s, kind)))
                    .map(row -> found(type, row != null && row.getByte(AccessInfoRow.AI_TYPE) == kind));
                break;
            case UPDATE_SUBSCRIBER_DATA: {
                final int bit1 = random.nextInt(2);
                final int dataA = random.nextInt(256);
                body = txn -> updateSubscriberData(txn, s, kind, bit1, dataA);
                break;
            }
            case UPDATE_LOCATION: {
                final int vlr = 1 + random.nextInt(Integer.MAX_VALUE);
                body = txn -> bySubNbr(txn, s).compose(id -> txn.readForUpdate(Tatp.SUBSCRIBER, id).map(row -> {
                    row.putInt(SubscriberRow.VLR_LOCATION, vlr);
                    txn.write(Tatp.SUBSCRIBER, id, row, 0, SubscriberRow.BYTES);
                    return 0L;
                }));
                break;
            }
            case INSERT_CALL_FORWARDING: {
                final UnsafeBuffer row = new UnsafeBuffer(new byte[CallForwardingRow.BYTES]);
                Tatp.callForwardingRow(row, s, kind, start, end, random);
                body = txn -> insertCallForwarding(txn, s, kind, start, row);
                break;
            }
            case DELETE_CALL_FORWARDING:
                body = txn -> deleteCallForwarding(txn, s, kind, start);
                break;
            default:
                throw new IllegalStateException("no body for TATP type " + type);
        }
        return new Drawn(type, body, s, READ_ONLY.contains(type));
    }

    /** Counts a not-found outcome of {@code type}; 0 (no rows changed) either way. */
    private long found(final String type, final boolean found) {
        if (!found) {
            notFound.computeIfAbsent(type, t -> new LongAdder()).increment();
        }
        return 0L;
    }

    /** The row, or {@code null} when there is none (an expected outcome, not an error). */
    private static Future<UnsafeBuffer> optional(final Future<UnsafeBuffer> read) {
        return read.recover(e -> e instanceof UnknownKeyException ? Future.succeededFuture(null)
            : Future.failedFuture(e));
    }

    /** The s_id of subscriber {@code s}'s sub_nbr, looked up in the sub_nbr index as the spec's queries do. */
    private static Future<Long> bySubNbr(final Txn txn, final long s) {
        return txn.read(Tatp.SUB_NBR_INDEX, Tatp.subNbrKey(s)).map(row -> (long) row.getInt(SubNbrRow.S_ID));
    }

    /**
     * SELECT cf.numberx FROM SPECIAL_FACILITY sf, CALL_FORWARDING cf WHERE sf.s_id = s AND sf.sf_type = t AND
     * sf.is_active = 1 AND cf.s_id = s AND cf.sf_type = t AND cf.start_time <= start AND end < cf.end_time.
     */
    private Future<Long> getNewDestination(final Txn txn, final long s, final int t, final int start,
                                           final int end) {
        return optional(txn.read(Tatp.SPECIAL_FACILITY, Tatp.specialFacilityKey(s, t))).compose(facility -> {
            if (facility == null || facility.getByte(SpecialFacilityRow.IS_ACTIVE) != 1) {
                return Future.succeededFuture(found(GET_NEW_DESTINATION, false));
            }
            final List<Future<UnsafeBuffer>> rows = new ArrayList<>(3);
            for (final int cfStart : Tatp.START_TIMES) {
                if (cfStart <= start) {
                    rows.add(optional(txn.read(Tatp.CALL_FORWARDING, Tatp.callForwardingKey(s, t, cfStart))));
                }
            }
            return Future.all(rows).map(cf -> {
                boolean any = false;
                for (int i = 0; i < rows.size(); i++) {
                    final UnsafeBuffer row = cf.resultAt(i);
                    any |= row != null && end < row.getByte(CallForwardingRow.END_TIME);
                }
                return found(GET_NEW_DESTINATION, any);
            });
        });
    }

    /** Sets bit_1 of the subscriber and data_a of its facility {@code t}; changes nothing when there is none. */
    private Future<Long> updateSubscriberData(final Txn txn, final long s, final int t, final int bit1,
                                              final int dataA) {
        final long facilityKey = Tatp.specialFacilityKey(s, t);
        return Future.all(txn.readForUpdate(Tatp.SUBSCRIBER, s),
            optional(txn.readForUpdate(Tatp.SPECIAL_FACILITY, facilityKey))).map(cf -> {
                final UnsafeBuffer subscriber = cf.resultAt(0);
                final UnsafeBuffer facility = cf.resultAt(1);
                if (facility == null) {
                    return found(UPDATE_SUBSCRIBER_DATA, false); // the spec rolls back: nothing written
                }
                final short bits = subscriber.getShort(SubscriberRow.BITS);
                subscriber.putShort(SubscriberRow.BITS, (short) ((bits & ~1) | bit1));
                txn.write(Tatp.SUBSCRIBER, s, subscriber, 0, SubscriberRow.BYTES);
                facility.putByte(SpecialFacilityRow.DATA_A, (byte) dataA);
                txn.write(Tatp.SPECIAL_FACILITY, facilityKey, facility, 0, SpecialFacilityRow.BYTES);
                return 0L;
            });
    }

    /**
     * Looks the subscriber up by sub_nbr, reads its facilities, and inserts the row unless its facility is missing
     * or the row exists (both expected outcomes). Returns the rows added.
     */
    private Future<Long> insertCallForwarding(final Txn txn, final long s, final int t, final int start,
                                              final UnsafeBuffer row) {
        return bySubNbr(txn, s).compose(id -> {
            final List<Future<UnsafeBuffer>> facilities = new ArrayList<>(4);
            for (int type = 1; type <= 4; type++) {
                facilities.add(optional(txn.read(Tatp.SPECIAL_FACILITY, Tatp.specialFacilityKey(id, type))));
            }
            final long key = Tatp.callForwardingKey(id, t, start);
            return Future.all(facilities).compose(cf -> {
                if (cf.resultAt(t - 1) == null) {
                    return Future.succeededFuture(found(INSERT_CALL_FORWARDING, false));
                }
                return optional(txn.read(Tatp.CALL_FORWARDING, key)).map(existing -> {
                    if (existing != null) {
                        return found(INSERT_CALL_FORWARDING, false); // a duplicate: the spec's expected failure
                    }
                    available(() -> txn.insert(Tatp.CALL_FORWARDING, key, row, 0, CallForwardingRow.BYTES));
                    return 1L;
                });
            });
        });
    }

    /** Deletes the subscriber's row (t, start) when it exists. Returns the rows added (-1 or 0). */
    private Future<Long> deleteCallForwarding(final Txn txn, final long s, final int t, final int start) {
        return bySubNbr(txn, s).compose(id -> {
            final long key = Tatp.callForwardingKey(id, t, start);
            return optional(txn.readForUpdate(Tatp.CALL_FORWARDING, key)).map(existing -> {
                if (existing == null) {
                    return found(DELETE_CALL_FORWARDING, false);
                }
                available(() -> txn.delete(Tatp.CALL_FORWARDING, key));
                return -1L;
            });
        });
    }

    /** Runs {@code change}; remembers (for {@link #consistency}) that the transaction API cannot do it yet. */
    private void available(final Runnable change) {
        try {
            change.run();
        } catch (final UnsupportedOperationException e) {
            unavailable.compareAndSet(null, "the standard TATP mix needs Txn.insert/delete: " + e.getMessage()
                + " (run --mix read-update)");
            throw e;
        }
    }

    /** Two InsertCallForwardings of one row race: the loser's failed insert is the spec's expected outcome. */
    @Override
    public boolean duplicateKeyIsAnOutcome() {
        return true;
    }
}
