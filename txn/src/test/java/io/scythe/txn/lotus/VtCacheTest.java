package io.scythe.txn.lotus;

import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.api.Test;

import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class VtCacheTest {
    private final CriticalFields fields = CriticalFields.defaults();

    private static UnsafeBuffer cvt(final int fill) {
        final UnsafeBuffer b = new UnsafeBuffer(new byte[Cvt.cvtBytes(2)]);
        b.setMemory(0, b.capacity(), (byte) fill);
        return b;
    }

    @Test
    void shouldHitOnlyTheSameRecordAtTheSameObject() {
        final VtCache cache = new VtCache(64);
        final long k = fields.lotusKey("checking", 3);
        cache.put(k, "checking", 3, 0x100, cvt(7), 0, Cvt.cvtBytes(2));
        final UnsafeBuffer into = new UnsafeBuffer(new byte[Cvt.cvtBytes(2) + 8]);
        assertThat(cache.get(k, "checking", 3, 0x100, into, 8)).isTrue();
        assertThat(into.getByte(8)).isEqualTo((byte) 7);
        assertThat(into.getByte(7)).as("nothing before the offset written").isZero();
        assertThat(cache.get(k, "checking", 3, 0x200, into, 0)).as("the record moved (re-inserted)").isFalse();
        assertThat(cache.get(k, "savings", 3, 0x100, into, 0)).as("another record of the Lotus key").isFalse();
        cache.invalidate(k);
        assertThat(cache.get(k, "checking", 3, 0x100, into, 0)).isFalse();
        assertThat(cache.counts()).containsExactly(1, 3, 1, 1, 0);
    }

    @Test
    void shouldEvictTheLeastRecentlyUsedOnlyWhenTrimmed() {
        final VtCache cache = new VtCache(VtCache.PARTITIONS); // one entry per partition
        final long[] keys = new long[4 * VtCache.PARTITIONS];
        boolean over = false;
        for (int i = 0; i < keys.length; i++) {
            keys[i] = fields.lotusKey("checking", i);
            over |= cache.put(keys[i], "checking", i, i, cvt(i), 0, Cvt.cvtBytes(2));
        }
        assertThat(over).isTrue();
        assertThat(cache.size()).as("a put never evicts").isEqualTo(keys.length);
        final UnsafeBuffer into = new UnsafeBuffer(new byte[Cvt.cvtBytes(2)]);
        assertThat(cache.get(keys[0], "checking", 0, 0, into, 0)).isTrue(); // key 0 the most recently used now
        cache.trim();
        assertThat(cache.size()).isLessThanOrEqualTo(VtCache.PARTITIONS);
        assertThat(cache.get(keys[0], "checking", 0, 0, into, 0)).as("the most recently used stays").isTrue();
        assertThat(new VtCache(0).put(keys[0], "checking", 0, 0, cvt(1), 0, Cvt.cvtBytes(2))).isFalse();
        assertThat(new VtCache(0).get(keys[0], "checking", 0, 0, into, 0)).as("off: nothing kept").isFalse();
        assertThatThrownBy(() -> new VtCache(-1)).isInstanceOf(IllegalArgumentException.class);
    }

    /**
     * Algorithm 1 line 15: a write lock granted to another compute node's transaction drops the key's entry; a read
     * lock, a refused write lock and this node's own locks leave it; a handoff drops the shard's entries.
     */
    @Test
    void shouldDropAnEntryWhenARemoteWriteLockIsGranted() {
        final LotusNode node = new LotusNode(1, List.of("cn0", "cn1"), null, LotusCluster.standalone(2),
            new LockTable(64), fields);
        final long mine = fields.lotusKey("checking", 3); // shard 3: node 1's
        final long other = fields.lotusKey("checking", 5);
        final UnsafeBuffer into = new UnsafeBuffer(new byte[Cvt.cvtBytes(2)]);
        node.vtCache().put(mine, "checking", 3, 1, cvt(1), 0, Cvt.cvtBytes(2));
        node.vtCache().put(other, "checking", 5, 1, cvt(1), 0, Cvt.cvtBytes(2));
        final UnsafeBuffer read = LockRpc.request(42, 0, new long[] {mine}, new boolean[] {false}, 1);
        assertThat(LockRpc.result(node.acquire(read, 0, 1).getByte(0))).isEqualTo(LockTable.Result.GRANTED);
        assertThat(node.vtCache().get(mine, "checking", 3, 1, into, 0)).as("after a remote read lock").isTrue();
        final UnsafeBuffer write = LockRpc.request(43, 0, new long[] {mine}, new boolean[] {true}, 1);
        assertThat(LockRpc.result(node.acquire(write, 0, 1).getByte(0))).isEqualTo(LockTable.Result.CONFLICT);
        assertThat(node.vtCache().get(mine, "checking", 3, 1, into, 0)).as("after a refused write lock").isTrue();
        node.locks().release(mine, 42);
        assertThat(node.acquireLocal(mine, true, 44).granted()).isTrue();
        assertThat(node.vtCache().get(mine, "checking", 3, 1, into, 0)).as("after a local write lock").isTrue();
        node.locks().release(mine, 44);
        assertThat(LockRpc.result(node.acquire(write, 0, 1).getByte(0))).isEqualTo(LockTable.Result.GRANTED);
        assertThat(node.vtCache().get(mine, "checking", 3, 1, into, 0)).as("after a remote write lock").isFalse();
        assertThat(node.vtCache().get(other, "checking", 5, 1, into, 0)).as("another key").isTrue();
        node.vtCache().dropShard(LotusKey.shard(other));
        assertThat(node.vtCache().get(other, "checking", 5, 1, into, 0)).as("its shard handed off").isFalse();
    }
}
