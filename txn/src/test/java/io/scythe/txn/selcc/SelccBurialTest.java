package io.scythe.txn.selcc;

import io.scythe.fabric.CostModel;
import io.scythe.fabric.FabricOptions;
import io.scythe.fabric.local.LocalFabric;
import io.scythe.storage.LogDb;
import io.scythe.storage.ObjectLayout;
import io.scythe.storage.Table;
import io.scythe.storage.TableSchema;
import io.scythe.txn.recovery.DeadNodeWords;
import org.agrona.concurrent.AtomicBuffer;
import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The memory node's burial of a dead SELCC compute node's locked inserts ({@link SelccRecovery#buryDead}): an
 * object whose CAS word is a transaction id of the dead node becomes a tombstone (flags DELETED, length 0, version + 1,
 * word 0), once; another node's insert, a committed object and the GCL region are left alone; and a word that changes
 * between the step's read and its CAS is judged again before anything of the slot is written.
 */
class SelccBurialTest {
    private static final long VERSION = 7;
    private static final long DEAD = 1L << 48 | 2L << 32;         // epoch 1, slot 2
    private static final long DEAD_ID = DEAD | 3L << 40 | 41;     // a transaction of its loop 3
    private static final long DEAD_ID2 = DEAD | 3L << 40 | 42;    // another one of the dead node
    private static final long LIVE_ID = 1L << 48 | 4L << 32 | 3L << 40 | 41;
    private LocalFabric fabric;
    private LogDb db;
    private Table rows;
    private Table gcl;

    @BeforeEach
    void setUp() {
        fabric = new LocalFabric(new FabricOptions().costModel(CostModel.zero()));
        db = new LogDb(fabric.attachNow("mn0"));
        final SelccModule module = new SelccModule();
        db.objectFormat(schema -> module.objectFormat(SelccModule.SEL_2PL, schema));
        rows = db.create(TableSchema.fixed(1, "rows", 8, 8));
        gcl = db.create(TableSchema.fixed(2, GclRegion.TABLE, 8, 8));
    }

    @AfterEach
    void tearDown() {
        fabric.close();
    }

    @Test
    void shouldBuryTheDeadNodesInsertsOnceAndLeaveTheOthers() {
        final int dead = object(rows, 1, DEAD_ID);
        final int live = object(rows, 2, LIVE_ID);
        final int committed = object(rows, 3, 0);
        final int line = object(gcl, 1, DEAD_ID);

        assertThat(SelccRecovery.bury(db, SelccRecovery.burial(new long[] {DEAD}))).isEqualTo(1);

        assertBuried(dead);
        assertUntouched(rows, live, LIVE_ID);
        assertUntouched(rows, committed, 0);
        assertUntouched(gcl, line, DEAD_ID);
        // The step run again (a retried dead-node step): nothing left of the dead node, the version bumped once.
        assertThat(SelccRecovery.bury(db, SelccRecovery.burial(new long[] {DEAD}))).isZero();
        assertBuried(dead);
    }

    @Test
    void shouldLeaveASlotWhoseWordChangedToAnotherNodeBeforeTheClaim() {
        final int at = object(rows, 1, DEAD_ID);

        final int buried = SelccRecovery.bury(db, changedOnce(at, LIVE_ID));

        assertThat(buried).isZero();
        assertUntouched(rows, at, LIVE_ID); // no tombstone over a slot the burial leaves alone
    }

    @Test
    void shouldBumpTheVersionOnceWhenTheClaimIsRetried() {
        final int at = object(rows, 1, DEAD_ID);

        final int buried = SelccRecovery.bury(db, changedOnce(at, DEAD_ID2));

        assertThat(buried).isEqualTo(1);
        assertBuried(at);
    }

    /**
     * The burial's step, the word of the slot at {@code at} changed to {@code to} right after the step read it the
     * first time (a concurrent change between the read and the CAS).
     */
    private DeadNodeWords.SlotRewrite changedOnce(final int at, final long to) {
        final DeadNodeWords.SlotRewrite step = SelccRecovery.burial(new long[] {DEAD});
        final boolean[] changed = {false};
        return new DeadNodeWords.SlotRewrite() {
            @Override
            public long claim(final long word) {
                final long claimed = step.claim(word);
                if (!changed[0] && word == DEAD_ID) {
                    changed[0] = true;
                    rows.objectMemory().putLongVolatile(at + ObjectLayout.CAS_LOCK_OFFSET, to);
                }
                return claimed;
            }

            @Override
            public long rewrite(final AtomicBuffer m, final int slot, final long word, final long claimed) {
                return step.rewrite(m, slot, word, claimed);
            }
        };
    }

    /** Inserts {@code key} (8 bytes of value, {@link #VERSION}) with CAS word {@code word}; returns its offset. */
    private static int object(final Table table, final long key, final long word) {
        final UnsafeBuffer v = new UnsafeBuffer(new byte[8]);
        v.putLong(0, key);
        final int at = table.offsetOf(table.insert(key, v, 0, 8, VERSION));
        table.objectMemory().putLongVolatile(at + ObjectLayout.CAS_LOCK_OFFSET, word);
        return at;
    }

    private void assertBuried(final int at) {
        final AtomicBuffer m = rows.objectMemory();
        assertThat(m.getLongVolatile(at + ObjectLayout.CAS_LOCK_OFFSET)).isZero();
        assertThat(m.getLongVolatile(at + ObjectLayout.VERSION_OFFSET)).isEqualTo(VERSION + 1);
        assertThat(m.getInt(at + ObjectLayout.VALUE_LENGTH_OFFSET)).isZero();
        assertThat(m.getShort(at + ObjectLayout.FLAGS_OFFSET)).isEqualTo((short) ObjectLayout.FLAG_DELETED);
    }

    private static void assertUntouched(final Table table, final int at, final long word) {
        final AtomicBuffer m = table.objectMemory();
        assertThat(m.getLongVolatile(at + ObjectLayout.CAS_LOCK_OFFSET)).isEqualTo(word);
        assertThat(m.getLongVolatile(at + ObjectLayout.VERSION_OFFSET)).isEqualTo(VERSION);
        assertThat(m.getInt(at + ObjectLayout.VALUE_LENGTH_OFFSET)).isEqualTo(8);
        assertThat(m.getShort(at + ObjectLayout.FLAGS_OFFSET)).isZero();
    }
}
