package io.scythe.txn.lotus;

import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.LongUnaryOperator;

/**
 * Each table's critical field (lotus.md §1.3): the field with the most locality, whose lowest 12 bits are the shard of
 * the table's Lotus keys. Given per table as a function of the primary key; a table with none is sharded at random
 * (the key's hash). The defaults are the paper's choices for the workloads here (SmallBank: the account; TATP: the
 * subscriber; TPC-C: the warehouse), decoding the keys as {@code io.scythe.bench.workload.SmallBank}, {@code Tatp} and
 * {@code Tpcc} encode them.
 */
public final class CriticalFields {
    private final Map<String, LongUnaryOperator> fields = new ConcurrentHashMap<>();
    private final Map<String, Long> tableHashes = new ConcurrentHashMap<>();

    /** The workloads' critical fields. */
    public static CriticalFields defaults() {
        final CriticalFields f = new CriticalFields();
        // SmallBank: both tables are keyed by account id.
        f.set("savings", k -> k).set("checking", k -> k);
        // TATP: subscriber s_id; access_info and special_facility keys are s_id * 4 + type - 1, call_forwarding's
        // special_facility's key * 3 + start / 8.
        f.set("subscriber", k -> k).set("access_info", k -> k >>> 2).set("special_facility", k -> k >>> 2)
            .set("call_forwarding", k -> (k / 3) >>> 2);
        // TPC-C: warehouse w; district (w << 4 | d), customer (district << 12 | c), orders and new_order
        // (district << 32 | o), order_line (order << 4 | ol), stock (w << 17 | i), customer_name (district << 10 | n).
        f.set("warehouse", k -> k).set("district", k -> k >>> 4).set("customer", k -> k >>> 16)
            .set("orders", k -> k >>> 36).set("new_order", k -> k >>> 36).set("order_line", k -> k >>> 40)
            .set("stock", k -> k >>> 17).set("customer_name", k -> k >>> 14).set("last_order", k -> k >>> 16)
            .set("delivery_cursor", k -> k >>> 4); // history: random (inserted rows carry no warehouse)
        return f;
    }

    /** Sets {@code table}'s critical field as a function of its primary key. */
    public CriticalFields set(final String table, final LongUnaryOperator field) {
        fields.put(table, field);
        return this;
    }

    /** The Lotus key of {@code key} in {@code table}. */
    public long lotusKey(final String table, final long key) {
        final LongUnaryOperator field = fields.get(table);
        final long critical = field == null ? LotusKey.mix(key) : field.applyAsLong(key);
        return LotusKey.ofHashed(tableHashes.computeIfAbsent(table, LotusKey::tableHash), key, critical);
    }
}
