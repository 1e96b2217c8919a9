package io.scythe.txn.rcc;

import io.scythe.fabric.CostModel;
import io.scythe.fabric.FabricOptions;
import io.scythe.fabric.local.LocalFabric;
import io.scythe.storage.LogDb;
import io.scythe.storage.ObjectLayout;
import io.scythe.storage.Table;
import io.scythe.storage.TableSchema;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The rts floor of a promoted MVCC or SUNDIAL copy ({@link RccModule#floorRts}, issue 18): every object slot's rts
 * and the table's absent bound rise to the floor, a higher rts stays, and a table of a locking protocol is left alone.
 */
class RtsFloorTest {
    private LocalFabric fabric;

    @AfterEach
    void tearDown() {
        if (fabric != null) {
            fabric.close();
        }
    }

    @Test
    void shouldRaiseEveryRtsAndTheAbsentBoundToTheFloorAndKeepAHigherOne() {
        fabric = new LocalFabric(new FabricOptions().costModel(CostModel.zero()));
        final LogDb db = new LogDb(fabric.attachNow("mn0"));
        final RccModule module = new RccModule();
        final java.util.function.Function<String, RccProtocol> of = name -> switch (name) {
            case "mvcc" -> RccModule.MVCC;
            case "sundial" -> RccModule.SUNDIAL;
            default -> RccModule.NOWAIT;
        };
        db.objectFormat(schema -> module.objectFormat(of.apply(schema.name()), schema));
        db.objectRoom(schema -> of.apply(schema.name()).objectRoom(schema));
        final Table mvcc = db.create(TableSchema.fixed(1, "mvcc", 8, 4));
        final Table sundial = db.create(TableSchema.fixed(2, "sundial", 8, 4));
        final Table nowait = db.create(TableSchema.fixed(3, "nowait", 8, 4));
        final long floor = 1000L << RccClock.ID_BITS;
        final int rts = ObjectLayout.slotBytes(8);
        mvcc.objectMemory().putLong(rts, floor + 5); // slot 0: above the floor already
        sundial.objectMemory().putLong(rts, 17); // slot 0: below it
        final long nowaitBefore = nowait.objectMemory().getLong(0);

        assertThat(RccModule.floorRts(mvcc, floor)).isTrue();
        assertThat(RccModule.floorRts(sundial, floor)).isTrue();
        assertThat(RccModule.floorRts(nowait, floor)).isFalse();

        assertThat(mvcc.objectMemory().getLong(rts)).isEqualTo(floor + 5);
        for (final Table t : java.util.List.of(mvcc, sundial)) {
            final int slots = t.objectMemory().capacity() / t.objectSlotBytes();
            assertThat(slots).isGreaterThanOrEqualTo(4);
            for (int i = t == mvcc ? 1 : 0; i < slots; i++) {
                assertThat(t.objectMemory().getLong(i * t.objectSlotBytes() + rts)).as(t.schema().name() + " slot " + i)
                    .isEqualTo(floor);
            }
            assertThat(t.absentBound()).isEqualTo(floor);
        }
        assertThat(nowait.absentBound()).isZero();
        assertThat(nowait.objectMemory().getLong(0)).isEqualTo(nowaitBefore);
    }

    @Test
    void shouldFloorTwoTicksAboveTheLargestTimestampAnyCoordinatorGaveOrSaw() {
        // No coordinator ran: two ticks above 0.
        assertThat(RccModule.rtsFloor(java.util.List.of())).isEqualTo(2L << RccClock.ID_BITS);
    }
}
