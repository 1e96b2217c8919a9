package io.scythe.txn.rcc;

import io.scythe.fabric.CostModel;
import io.scythe.fabric.FabricOptions;
import io.scythe.fabric.local.LocalFabric;
import io.scythe.storage.LogDb;
import io.scythe.storage.ObjectLayout;
import io.scythe.storage.Table;
import io.scythe.storage.TableSchema;
import io.scythe.txn.runtime.Timers;
import io.vertx.core.Future;
import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The memory node's dead-node step for RCC's protocol word ({@link DeadWords}): it frees the words of the dead
 * incarnation only (node slot and the low bits of its epoch in a WAIT-DIE/MVCC timestamp, the id prefix in a SUNDIAL
 * lock), not those of the same node restarted under its slot, not another node's, and nothing in a table of another
 * protocol.
 */
class DeadWordsTest {
    private static final int SLOT = 2;
    private LocalFabric fabric;

    @AfterEach
    void tearDown() {
        if (fabric != null) {
            fabric.close();
        }
    }

    /** A timestamp of node {@code slot}, loop 1, epoch {@code epoch} at {@code ticks}, as its loop's clock makes it. */
    private static long ts(final long epoch, final int slot, final long ticks) {
        final Timers timers = new Timers() {
            @Override
            public long nowNs() {
                return ticks << RccClock.TICK_SHIFT;
            }

            @Override
            public Future<Void> after(final long delayNs) {
                throw new UnsupportedOperationException();
            }
        };
        final long idBase = epoch << 48 | 1L << 40 | (long) slot << 32;
        return new RccClock(timers, slot, 1, RccClock.incarnationOf(idBase)).next();
    }

    private static long prefix(final long epoch, final int slot) {
        return epoch << 48 | (long) slot << 32;
    }

    @Test
    void shouldFreeTheDeadIncarnationsWordsAndNotTheRestartedOnesOrAnotherNodes() {
        fabric = new LocalFabric(new FabricOptions().costModel(CostModel.zero()));
        final LogDb db = new LogDb(fabric.attachNow("mn0"));
        final RccModule module = new RccModule();
        db.objectFormat(schema -> module.objectFormat(switch (schema.name()) {
            case "waitdie" -> RccModule.WAITDIE;
            case "mvcc" -> RccModule.MVCC;
            case "sundial" -> RccModule.SUNDIAL;
            default -> RccModule.NOWAIT; // not a tts protocol: left alone
        }, schema));
        final Table waitdie = db.create(TableSchema.fixed(1, "waitdie", 8, 8));
        final Table mvcc = db.create(TableSchema.fixed(2, "mvcc", 8, 8));
        final Table sundial = db.create(TableSchema.fixed(3, "sundial", 8, 8));
        final Table nowait = db.create(TableSchema.fixed(4, "nowait", 8, 8));

        final long dead = ts(1, SLOT, 1000);            // the dead incarnation (epoch 1)
        final long restarted = ts(2, SLOT, 900);        // the same node restarted (epoch 2), even at an earlier tick
        final long sameTick = ts(2, SLOT, 1000);        // ... and at the dead one's very tick
        final long other = ts(1, SLOT + 1, 1000);       // another node, same epoch number
        final long wrapped = ts(257, SLOT, 1000);       // 256 epochs later (8 bits kept): an epoch RecoveryDuty skips
        assertThat(sameTick).isNotEqualTo(dead);
        final int[] w = words(waitdie, dead, restarted, sameTick, other, wrapped);
        final int[] m = words(mvcc, dead, restarted, other);
        final long deadId = prefix(1, SLOT) | 5L << 40 | 77;
        final long liveId = prefix(2, SLOT) | 5L << 40 | 77;
        final int[] s = words(sundial, deadId, liveId, dead);
        final int[] n = words(nowait, dead);

        final int freed = DeadWords.free(db, new long[] {prefix(1, SLOT)});

        assertThat(held(waitdie, w)).containsExactly(0L, restarted, sameTick, other, 0L);
        assertThat(held(mvcc, m)).containsExactly(0L, restarted, other);
        // SUNDIAL's lock is a transaction id: the id prefix (epoch and slot) matches, not a timestamp's bits.
        assertThat(held(sundial, s)).containsExactly(0L, liveId, dead);
        assertThat(held(nowait, n)).containsExactly(dead);
        assertThat(freed).isEqualTo(4);
        assertThat(DeadWords.free(db, new long[] {prefix(1, SLOT)})).isZero();
    }

    @Test
    void shouldMatchATimestampBySlotAndIncarnation() {
        assertThat(DeadWords.deadTimestamp(new long[] {prefix(3, SLOT)}, ts(3, SLOT, 10))).isTrue();
        assertThat(DeadWords.deadTimestamp(new long[] {prefix(3, SLOT)}, ts(4, SLOT, 10))).isFalse();
        assertThat(DeadWords.deadTimestamp(new long[] {prefix(3, SLOT)}, ts(3, SLOT + 1, 10))).isFalse();
        assertThat(DeadWords.deadTimestamp(new long[] {prefix(4, 9), prefix(3, SLOT)}, ts(3, SLOT, 10))).isTrue();
        assertThat(DeadWords.deadTimestamp(new long[0], ts(3, SLOT, 10))).isFalse();
    }

    /** Writes {@code values} into the protocol word of the first objects of {@code table}; returns their offsets. */
    private static int[] words(final Table table, final long... values) {
        final int[] at = new int[values.length];
        final UnsafeBuffer v = new UnsafeBuffer(new byte[8]);
        for (int i = 0; i < values.length; i++) {
            at[i] = table.offsetOf(table.insert(i + 1, v, 0, 8, ObjectLayout.LOADED_VERSION));
            table.objectMemory().putLongVolatile(at[i] + TupleFormat.TTS_OFFSET, values[i]);
        }
        return at;
    }

    private static Long[] held(final Table table, final int[] at) {
        final Long[] words = new Long[at.length];
        for (int i = 0; i < at.length; i++) {
            words[i] = table.objectMemory().getLongVolatile(at[i] + TupleFormat.TTS_OFFSET);
        }
        return words;
    }
}
