package io.scythe.txn.lotus;

import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.api.Test;

import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class LockRpcTest {
    private final CriticalFields fields = CriticalFields.defaults();

    /** Compute node 1 of 2 (odd shards), without messaging. */
    private LotusNode node() {
        return new LotusNode(1, List.of("cn0", "cn1"), null, LotusCluster.standalone(2), new LockTable(64),
            fields);
    }

    @Test
    void shouldCarryOneTransactionsKeysForOneNodeInOneMessage() {
        final long[] keys = {fields.lotusKey("savings", 1), fields.lotusKey("checking", 3), fields.lotusKey("checking", 5)};
        final UnsafeBuffer m = LockRpc.request(0xabcdefL, 7, keys, new boolean[] {true, false, true}, 3);
        assertThat(LockRpc.count(m, 0, m.capacity())).isEqualTo(3);
        assertThat(LockRpc.txn(m, 0)).isEqualTo(0xabcdefL);
        assertThat(LockRpc.cn(m, 0)).isEqualTo(7);
        assertThat(LockRpc.key(m, 0, 1)).isEqualTo(keys[1]);
        assertThat(LockRpc.write(m, 0, 0)).isTrue();
        assertThat(LockRpc.write(m, 0, 1)).isFalse();
        assertThat(LockRpc.count(m, 0, m.capacity() - 1)).as("a truncated message").isEqualTo(-1);
    }

    @Test
    void shouldAnswerAKeyOfAShardItDoesNotOwnWithAnError() {
        final LotusNode node = node();
        final long mine = fields.lotusKey("checking", 3); // shard 3: odd, node 1's
        final long notMine = fields.lotusKey("checking", 4); // shard 4: node 0's
        final UnsafeBuffer m = LockRpc.request(42, 0, new long[] {mine, notMine}, new boolean[] {true, true}, 2);
        final UnsafeBuffer reply = node.acquire(m, 0, 2);
        assertThat(LockRpc.result(reply.getByte(0))).isEqualTo(LockTable.Result.GRANTED);
        assertThat(reply.getByte(1)).isEqualTo(LockRpc.OUT_OF_RANGE);
        assertThat(LockRpc.result(reply.getByte(1))).isNull();
        assertThat(node.locks().holders(notMine)).isEmpty();
        assertThat(node.locks().holders(mine)).containsExactly(new LockTable.Hold(42, 0, true));
        // A retransmitted message changes nothing; another transaction conflicts.
        assertThat(LockRpc.result(node.acquire(m, 0, 2).getByte(0))).isEqualTo(LockTable.Result.HELD_ALREADY);
        final UnsafeBuffer other = LockRpc.request(43, 0, new long[] {mine}, new boolean[] {false}, 1);
        assertThat(LockRpc.result(node.acquire(other, 0, 1).getByte(0))).isEqualTo(LockTable.Result.CONFLICT);
        // Once the shard moved here, the key is served.
        node.startServing(4);
        assertThat(LockRpc.result(node.acquire(m, 0, 2).getByte(1))).isEqualTo(LockTable.Result.GRANTED);
    }

    @Test
    void shouldRefuseAResultByteThatIsNone() {
        assertThatThrownBy(() -> LockRpc.result((byte) 9)).isInstanceOf(IllegalStateException.class);
    }
}
