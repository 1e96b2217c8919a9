package io.scythe.txn.lotus;

import org.junit.jupiter.api.Test;

import java.util.HashSet;
import java.util.Set;

import static org.assertj.core.api.Assertions.assertThat;

class LotusKeyTest {
    @Test
    void shouldPutTheCriticalFieldsLow12BitsInTheShard() {
        final long k = LotusKey.of("checking", 77, 0x12345);
        assertThat(LotusKey.shard(k)).isEqualTo(0x345);
        assertThat(LotusKey.SHARDS).isEqualTo(4096);
    }

    @Test
    void shouldTellKeysOfOneTableAndOfTwoTablesApart() {
        final Set<Long> upper = new HashSet<>();
        for (long key = 0; key < 100_000; key++) {
            assertThat(upper.add(LotusKey.of("savings", key, key) >>> LotusKey.SHARD_BITS)).isTrue();
        }
        assertThat(LotusKey.of("savings", 5, 5)).isNotEqualTo(LotusKey.of("checking", 5, 5));
        assertThat(LotusKey.shard(LotusKey.of("savings", 5, 5))).isEqualTo(LotusKey.shard(LotusKey.of("checking", 5, 5)));
    }

    @Test
    void shouldShardEachWorkloadByItsCriticalField() {
        final CriticalFields f = CriticalFields.defaults();
        // SmallBank: an account's two rows share its shard.
        assertThat(LotusKey.shard(f.lotusKey("savings", 4097))).isEqualTo(1);
        assertThat(LotusKey.shard(f.lotusKey("checking", 4097))).isEqualTo(1);
        // TPC-C: every row of warehouse 7 is in shard 7 (keys as io.scythe.bench.workload.Tpcc builds them).
        final long district = (7L << 4) | 3;
        final long customer = district << 12 | 1500;
        final long order = district << 32 | 3001;
        assertThat(LotusKey.shard(f.lotusKey("warehouse", 7))).isEqualTo(7);
        assertThat(LotusKey.shard(f.lotusKey("district", district))).isEqualTo(7);
        assertThat(LotusKey.shard(f.lotusKey("customer", customer))).isEqualTo(7);
        assertThat(LotusKey.shard(f.lotusKey("orders", order))).isEqualTo(7);
        assertThat(LotusKey.shard(f.lotusKey("order_line", order << 4 | 9))).isEqualTo(7);
        assertThat(LotusKey.shard(f.lotusKey("stock", 7L << 17 | 99_999))).isEqualTo(7);
        assertThat(LotusKey.shard(f.lotusKey("customer_name", district << 10 | 999))).isEqualTo(7);
        // TATP: subscriber 1234's rows (Tatp's key encodings).
        final long sf = 1234L * 4 + 2 - 1;
        assertThat(LotusKey.shard(f.lotusKey("subscriber", 1234))).isEqualTo(1234);
        assertThat(LotusKey.shard(f.lotusKey("access_info", 1234L * 4 + 3))).isEqualTo(1234);
        assertThat(LotusKey.shard(f.lotusKey("special_facility", sf))).isEqualTo(1234);
        assertThat(LotusKey.shard(f.lotusKey("call_forwarding", sf * 3 + 2))).isEqualTo(1234);
    }

    @Test
    void shouldGiveInsertsIntoOneIndexBucketOneLockKey() {
        assertThat(LotusKey.indexBucket("mn0", 4096)).isEqualTo(LotusKey.indexBucket("mn0", 4096));
        assertThat(LotusKey.indexBucket("mn0", 4096)).isNotEqualTo(LotusKey.indexBucket("mn0", 4160))
            .isNotEqualTo(LotusKey.indexBucket("mn1", 4096));
        final LockTable t = new LockTable(64);
        assertThat(t.acquire(LotusKey.indexBucket("mn0", 4096), true, 0, 1).granted()).isTrue();
        assertThat(t.acquire(LotusKey.indexBucket("mn0", 4096), true, 1, 2)).isEqualTo(LockTable.Result.CONFLICT);
    }
}
