package io.scythe.bench.workload;

import io.scythe.storage.LogDb;
import io.scythe.storage.ObjectLayout;
import io.scythe.storage.Table;
import io.scythe.storage.TableSchema;
import org.agrona.MutableDirectBuffer;
import org.agrona.concurrent.UnsafeBuffer;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.function.LongPredicate;

/**
 * TATP (Telecom Application Transaction Processing benchmark, spec v1.0, as FORD and Lotus run it): its four tables
 * in fixed binary rows, keys packed into a long, the initial population of the spec, and the checks run on the
 * memory nodes after a run. The transactions are in {@link TatpSpec}.
 *
 * <p>Keys ({@code s_id} in {@code [0, subscribers)}; types 1-4; start times 0, 8, 16):
 * <pre>
 *   SUBSCRIBER        s_id
 *   ACCESS_INFO       s_id * 4 + (ai_type - 1)
 *   SPECIAL_FACILITY  s_id * 4 + (sf_type - 1)
 *   CALL_FORWARDING   (s_id * 4 + (sf_type - 1)) * 3 + start_time / 8
 *   SUB_NBR index     sub_nbr's 15 digits as 4-bit BCD (read-only: sub_nbr never changes)
 * </pre>
 * Rows are partitioned over memory nodes by key like every table ({@code key mod nodes}).
 */
public final class Tatp {
    public static final String SUBSCRIBER = "subscriber";
    public static final String ACCESS_INFO = "access_info";
    public static final String SPECIAL_FACILITY = "special_facility";
    public static final String CALL_FORWARDING = "call_forwarding";
    /** The secondary index sub_nbr -> s_id. */
    public static final String SUB_NBR_INDEX = "subscriber_nbr";
    public static final int SUBSCRIBER_ID = 41;
    public static final int ACCESS_INFO_ID = 42;
    public static final int SPECIAL_FACILITY_ID = 43;
    public static final int CALL_FORWARDING_ID = 44;
    public static final int SUB_NBR_INDEX_ID = 45;
    /** Subscribers by default: FORD's TATP configuration (100,000; Lotus §8 uses 3M on its cluster). */
    public static final long DEFAULT_SUBSCRIBERS = 100_000;
    /** The spec's start times of CALL_FORWARDING rows. */
    public static final int[] START_TIMES = {0, 8, 16};
    /** Digits of sub_nbr. */
    public static final int SUB_NBR_DIGITS = 15;

    /**
     * SUBSCRIBER, 48 bytes (the spec's 44, padded):
     * <pre>
     *   0 s_id int32 | 4 sub_nbr char[15] | 19 bit_1..bit_10 (bit i-1 of a short) | 21 hex_1..hex_10 (nibbles)
     *   26 byte2_1..byte2_10 | 36 msc_location int32 | 40 vlr_location int32 | 44 padding[4]
     * </pre>
     */
    public static final class SubscriberRow {
        public static final int S_ID = 0;
        public static final int SUB_NBR = 4;
        public static final int BITS = 19;
        public static final int HEX = 21;
        public static final int BYTE2 = 26;
        public static final int MSC_LOCATION = 36;
        public static final int VLR_LOCATION = 40;
        public static final int BYTES = 48;

        private SubscriberRow() {
        }
    }

    /** ACCESS_INFO, 16 bytes: {@code 0 s_id | 4 ai_type | 5 data1 | 6 data2 | 7 data3 char[3] | 10 data4 char[5]}. */
    public static final class AccessInfoRow {
        public static final int S_ID = 0;
        public static final int AI_TYPE = 4;
        public static final int DATA1 = 5;
        public static final int DATA2 = 6;
        public static final int DATA3 = 7;
        public static final int DATA4 = 10;
        public static final int BYTES = 16;

        private AccessInfoRow() {
        }
    }

    /**
     * SPECIAL_FACILITY, 16 bytes:
     * {@code 0 s_id | 4 sf_type | 5 is_active | 6 error_cntrl | 7 data_a | 8 data_b char[5]}.
     */
    public static final class SpecialFacilityRow {
        public static final int S_ID = 0;
        public static final int SF_TYPE = 4;
        public static final int IS_ACTIVE = 5;
        public static final int ERROR_CNTRL = 6;
        public static final int DATA_A = 7;
        public static final int DATA_B = 8;
        public static final int BYTES = 16;

        private SpecialFacilityRow() {
        }
    }

    /**
     * CALL_FORWARDING, 24 bytes: {@code 0 s_id | 4 sf_type | 5 start_time | 6 end_time | 7 numberx char[15]}.
     */
    public static final class CallForwardingRow {
        public static final int S_ID = 0;
        public static final int SF_TYPE = 4;
        public static final int START_TIME = 5;
        public static final int END_TIME = 6;
        public static final int NUMBERX = 7;
        public static final int BYTES = 24;

        private CallForwardingRow() {
        }
    }

    /** SUB_NBR index, 8 bytes: {@code 0 s_id int32}. */
    public static final class SubNbrRow {
        public static final int S_ID = 0;
        public static final int BYTES = 8;

        private SubNbrRow() {
        }
    }

    private Tatp() {
    }

    public static long accessInfoKey(final long sId, final int aiType) {
        return sId * 4 + aiType - 1;
    }

    public static long specialFacilityKey(final long sId, final int sfType) {
        return sId * 4 + sfType - 1;
    }

    public static long callForwardingKey(final long sId, final int sfType, final int startTime) {
        return specialFacilityKey(sId, sfType) * 3 + startTime / 8;
    }

    /** sub_nbr (s_id zero-padded to 15 digits) packed as BCD: the key of the SUB_NBR index. */
    public static long subNbrKey(final long sId) {
        long key = 0;
        long rest = sId;
        for (int digit = 0; digit < SUB_NBR_DIGITS && rest > 0; digit++) {
            key |= (rest % 10) << (4 * digit);
            rest /= 10;
        }
        return key;
    }

    /** One subscriber's rows, as the spec populates them; deterministic in ({@code seed}, {@code sId}). */
    static final class Population {
        final boolean[] accessInfo = new boolean[5];
        final boolean[] specialFacility = new boolean[5];
        /** [sf_type][start_time / 8]: a CALL_FORWARDING row. */
        final boolean[][] callForwarding = new boolean[5][3];
        final SplittableRandom random;

        Population(final long seed, final long sId) {
            random = new SplittableRandom(seed * 0x9E3779B97F4A7C15L + sId);
            pickTypes(accessInfo);
            pickTypes(specialFacility);
            for (int t = 1; t <= 4; t++) {
                if (specialFacility[t]) {
                    // 0-3 rows per facility, start times distinct.
                    final int rows = random.nextInt(4);
                    for (int picked = 0; picked < rows; ) {
                        final int s = random.nextInt(3);
                        if (!callForwarding[t][s]) {
                            callForwarding[t][s] = true;
                            picked++;
                        }
                    }
                }
            }
        }

        /** 1-4 distinct types of {1, 2, 3, 4}, chosen uniformly. */
        private void pickTypes(final boolean[] types) {
            final int count = 1 + random.nextInt(4);
            for (int picked = 0; picked < count; ) {
                final int t = 1 + random.nextInt(4);
                if (!types[t]) {
                    types[t] = true;
                    picked++;
                }
            }
        }
    }

    /** Creates and fills the five tables on {@code db}: the rows whose key is {@code part} mod {@code parts}. */
    public static void load(final LogDb db, final long subscribers, final long seed, final int part, final int parts) {
        final LongPredicate mine = key -> Long.remainderUnsigned(key, parts) == part;
        long accessRows = 0;
        long facilityRows = 0;
        long forwardingSlots = 0;
        for (long s = 0; s < subscribers; s++) {
            final Population p = new Population(seed, s);
            for (int t = 1; t <= 4; t++) {
                accessRows += p.accessInfo[t] && mine.test(accessInfoKey(s, t)) ? 1 : 0;
                facilityRows += p.specialFacility[t] && mine.test(specialFacilityKey(s, t)) ? 1 : 0;
                for (final int start : START_TIMES) {
                    // Every slot an insert could fill: SPECIAL_FACILITY rows never change, so this is the maximum.
                    forwardingSlots += p.specialFacility[t] && mine.test(callForwardingKey(s, t, start)) ? 1 : 0;
                }
            }
        }
        final long mySubscribers = subscribers / parts + (part < subscribers % parts ? 1 : 0);
        long myIndexRows = 0;
        for (long s = 0; s < subscribers; s++) {
            myIndexRows += mine.test(subNbrKey(s)) ? 1 : 0;
        }
        final Table subscriber = db.create(TableSchema.fixed(SUBSCRIBER_ID, SUBSCRIBER, SubscriberRow.BYTES,
            Math.max(1, mySubscribers)));
        final Table accessInfo = db.create(TableSchema.fixed(ACCESS_INFO_ID, ACCESS_INFO, AccessInfoRow.BYTES,
            Math.max(1, accessRows)));
        final Table facility = db.create(TableSchema.fixed(SPECIAL_FACILITY_ID, SPECIAL_FACILITY,
            SpecialFacilityRow.BYTES, Math.max(1, facilityRows)));
        final Table forwarding = db.create(TableSchema.fixed(CALL_FORWARDING_ID, CALL_FORWARDING,
            CallForwardingRow.BYTES, Math.max(1, forwardingSlots)));
        final Table index = db.create(TableSchema.fixed(SUB_NBR_INDEX_ID, SUB_NBR_INDEX, SubNbrRow.BYTES,
            Math.max(1, myIndexRows)));
        final UnsafeBuffer row = new UnsafeBuffer(new byte[SubscriberRow.BYTES]);
        for (long s = 0; s < subscribers; s++) {
            final Population p = new Population(seed, s);
            final SplittableRandom r = p.random;
            if (mine.test(s)) {
                subscriberRow(row, s, r);
                insert(subscriber, s, row, SubscriberRow.BYTES);
            }
            if (mine.test(subNbrKey(s))) {
                row.setMemory(0, SubNbrRow.BYTES, (byte) 0);
                row.putInt(SubNbrRow.S_ID, (int) s);
                insert(index, subNbrKey(s), row, SubNbrRow.BYTES);
            }
            for (int t = 1; t <= 4; t++) {
                if (p.accessInfo[t] && mine.test(accessInfoKey(s, t))) {
                    row.setMemory(0, AccessInfoRow.BYTES, (byte) 0);
                    row.putInt(AccessInfoRow.S_ID, (int) s);
                    row.putByte(AccessInfoRow.AI_TYPE, (byte) t);
                    row.putByte(AccessInfoRow.DATA1, (byte) r.nextInt(256));
                    row.putByte(AccessInfoRow.DATA2, (byte) r.nextInt(256));
                    letters(row, AccessInfoRow.DATA3, 3, r);
                    letters(row, AccessInfoRow.DATA4, 5, r);
                    insert(accessInfo, accessInfoKey(s, t), row, AccessInfoRow.BYTES);
                }
                if (!p.specialFacility[t]) {
                    continue;
                }
                if (mine.test(specialFacilityKey(s, t))) {
                    row.setMemory(0, SpecialFacilityRow.BYTES, (byte) 0);
                    row.putInt(SpecialFacilityRow.S_ID, (int) s);
                    row.putByte(SpecialFacilityRow.SF_TYPE, (byte) t);
                    row.putByte(SpecialFacilityRow.IS_ACTIVE, (byte) (r.nextInt(100) < 85 ? 1 : 0));
                    row.putByte(SpecialFacilityRow.ERROR_CNTRL, (byte) r.nextInt(256));
                    row.putByte(SpecialFacilityRow.DATA_A, (byte) r.nextInt(256));
                    letters(row, SpecialFacilityRow.DATA_B, 5, r);
                    insert(facility, specialFacilityKey(s, t), row, SpecialFacilityRow.BYTES);
                }
                for (final int start : START_TIMES) {
                    if (p.callForwarding[t][start / 8] && mine.test(callForwardingKey(s, t, start))) {
                        callForwardingRow(row, s, t, start, start + 1 + r.nextInt(8), r);
                        insert(forwarding, callForwardingKey(s, t, start), row, CallForwardingRow.BYTES);
                    }
                }
            }
        }
    }

    private static void insert(final Table table, final long key, final UnsafeBuffer row, final int bytes) {
        final long status = table.insert(key, row, 0, bytes, ObjectLayout.LOADED_VERSION);
        if (status <= 0) {
            throw new IllegalStateException("loading key " + key + " of " + table.schema().name()
                + " failed with status " + status);
        }
    }

    static void subscriberRow(final MutableDirectBuffer row, final long sId, final SplittableRandom r) {
        row.setMemory(0, SubscriberRow.BYTES, (byte) 0);
        row.putInt(SubscriberRow.S_ID, (int) sId);
        long rest = sId;
        for (int d = SUB_NBR_DIGITS - 1; d >= 0; d--) {
            row.putByte(SubscriberRow.SUB_NBR + d, (byte) ('0' + rest % 10));
            rest /= 10;
        }
        row.putShort(SubscriberRow.BITS, (short) r.nextInt(1 << 10));
        for (int i = 0; i < 5; i++) {
            row.putByte(SubscriberRow.HEX + i, (byte) r.nextInt(256)); // two 4-bit hex_x per byte
        }
        for (int i = 0; i < 10; i++) {
            row.putByte(SubscriberRow.BYTE2 + i, (byte) r.nextInt(256));
        }
        row.putInt(SubscriberRow.MSC_LOCATION, 1 + r.nextInt(Integer.MAX_VALUE));
        row.putInt(SubscriberRow.VLR_LOCATION, 1 + r.nextInt(Integer.MAX_VALUE));
    }

    static void callForwardingRow(final MutableDirectBuffer row, final long sId, final int sfType,
                                  final int startTime, final int endTime, final SplittableRandom r) {
        row.setMemory(0, CallForwardingRow.BYTES, (byte) 0);
        row.putInt(CallForwardingRow.S_ID, (int) sId);
        row.putByte(CallForwardingRow.SF_TYPE, (byte) sfType);
        row.putByte(CallForwardingRow.START_TIME, (byte) startTime);
        row.putByte(CallForwardingRow.END_TIME, (byte) endTime);
        for (int i = 0; i < 15; i++) {
            row.putByte(CallForwardingRow.NUMBERX + i, (byte) ('0' + r.nextInt(10)));
        }
    }

    private static void letters(final MutableDirectBuffer row, final int at, final int n, final SplittableRandom r) {
        for (int i = 0; i < n; i++) {
            row.putByte(at + i, (byte) ('A' + r.nextInt(26)));
        }
    }

    /** {@code key}'s live row in {@code table} ({@code ObjectProbe#committedValue}, read only), or null. */
    static org.agrona.concurrent.AtomicBuffer liveRow(final Table table, final long key) {
        return io.scythe.txn.spi.ObjectProbe.committedValue(table, key);
    }

    private static Table tableOf(final List<LogDb> dbs, final String name, final long key) {
        return dbs.get((int) Long.remainderUnsigned(key, dbs.size())).table(name);
    }

    /** The live CALL_FORWARDING rows on the memory nodes (after a run). */
    public static long callForwardingRows(final List<LogDb> dbs, final long subscribers) {
        long rows = 0;
        for (long s = 0; s < subscribers; s++) {
            for (int t = 1; t <= 4; t++) {
                for (final int start : START_TIMES) {
                    final long key = callForwardingKey(s, t, start);
                    rows += liveRow(tableOf(dbs, CALL_FORWARDING, key), key) != null ? 1 : 0;
                }
            }
        }
        return rows;
    }

    /** The consistency conditions {@link #consistency} checks, by name. */
    public static final String SUBSCRIBER_ROWS = "subscriber_rows";
    public static final String SUB_NBR_INDEX_ENTRIES = "sub_nbr_index";
    public static final String FORWARDING_HAS_FACILITY = "call_forwarding_has_facility";
    public static final String FORWARDING_FIELDS = "call_forwarding_fields";

    /**
     * TATP's consistency conditions on the memory nodes (after a run), each with the violations found: every
     * subscriber has its row and sub_nbr index entry, naming it; every CALL_FORWARDING row belongs to an existing
     * SPECIAL_FACILITY and carries its own key's fields with {@code 1 <= end_time <= 24}.
     */
    public static Map<String, List<String>> consistency(final List<LogDb> dbs, final long subscribers) {
        final List<String> subscriberRows = new ArrayList<>();
        final List<String> indexEntries = new ArrayList<>();
        final List<String> orphans = new ArrayList<>();
        final List<String> fields = new ArrayList<>();
        for (long s = 0; s < subscribers; s++) {
            final Table subscriber = tableOf(dbs, SUBSCRIBER, s);
            final org.agrona.concurrent.AtomicBuffer row = liveRow(subscriber, s);
            if (row == null || row.getInt(SubscriberRow.S_ID) != s) {
                subscriberRows.add("SUBSCRIBER " + s + " is missing or names another s_id");
            }
            final Table index = tableOf(dbs, SUB_NBR_INDEX, subNbrKey(s));
            final org.agrona.concurrent.AtomicBuffer entry = liveRow(index, subNbrKey(s));
            if (entry == null || entry.getInt(SubNbrRow.S_ID) != s) {
                indexEntries.add("sub_nbr index entry of subscriber " + s + " is missing or wrong");
            }
            for (int t = 1; t <= 4; t++) {
                final boolean facility = liveRow(tableOf(dbs, SPECIAL_FACILITY, specialFacilityKey(s, t)),
                    specialFacilityKey(s, t)) != null;
                for (final int start : START_TIMES) {
                    final long key = callForwardingKey(s, t, start);
                    final Table forwarding = tableOf(dbs, CALL_FORWARDING, key);
                    final org.agrona.concurrent.AtomicBuffer at = liveRow(forwarding, key);
                    if (at == null) {
                        continue;
                    }
                    if (!facility) {
                        orphans.add("CALL_FORWARDING (" + s + ", " + t + ", " + start + ") has no SPECIAL_FACILITY");
                    }
                    final int end = at.getByte(CallForwardingRow.END_TIME);
                    if (at.getInt(CallForwardingRow.S_ID) != s
                        || at.getByte(CallForwardingRow.SF_TYPE) != t
                        || at.getByte(CallForwardingRow.START_TIME) != start
                        || end < 1 || end > 24) {
                        fields.add("CALL_FORWARDING (" + s + ", " + t + ", " + start + ") holds another row's fields "
                            + "or end_time " + end);
                    }
                }
            }
        }
        final Map<String, List<String>> conditions = new LinkedHashMap<>();
        conditions.put(SUBSCRIBER_ROWS, subscriberRows);
        conditions.put(SUB_NBR_INDEX_ENTRIES, indexEntries);
        conditions.put(FORWARDING_HAS_FACILITY, orphans);
        conditions.put(FORWARDING_FIELDS, fields);
        return conditions;
    }
}
