package io.scythe.cluster;

import io.scythe.fabric.CostModel;
import io.scythe.fabric.FabricOptions;
import io.scythe.fabric.local.LocalFabric;
import io.scythe.storage.LogDb;
import io.scythe.storage.ObjectLayout;
import io.scythe.storage.Table;
import io.scythe.storage.TableSchema;
import io.scythe.txn.spi.ProtocolRegistry;
import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A memory node's end-of-run scan ({@link ScytheNode#lockScan}, its health's {@code locksHeld}) walks a table's
 * object slots by the table's own slot size: a protocol's room (Lotus's CVT and versions) is part of each slot, so a
 * word written in the room is no object's header (a Lotus chaos run reported 1069 objects locked, one per write
 * transaction, none locked).
 */
class LockScanTest {
    @Test
    void shouldProbeEveryObjectAtItsHeaderWhenTheProtocolAddsRoom() throws Exception {
        final LocalFabric fabric = new LocalFabric(new FabricOptions().costModel(CostModel.zero()));
        try {
            final io.scythe.txn.Protocol lotus = ProtocolRegistry.protocol("lotus");
            final LogDb db = new LogDb(fabric.attachNow("mn0"));
            db.objectRoom(lotus::objectRoom);
            db.objectFormat(schema -> ProtocolRegistry.objectFormat(lotus, schema));
            final Table t = db.create(TableSchema.fixed(1, "checking", 8, 16));
            final int slot = ObjectLayout.slotBytes(8);
            assertThat(t.objectSlotBytes()).as("Lotus's room").isGreaterThan(slot);
            final UnsafeBuffer v = new UnsafeBuffer(new byte[8]);
            final int[] at = new int[8];
            for (int i = 0; i < at.length; i++) {
                at[i] = t.offsetOf(t.insert(i + 1, v, 0, 8, ObjectLayout.LOADED_VERSION));
            }
            // Nonzero words in each object's room where a header-and-value stride puts the next "header"'s CAS word.
            for (final int a : at) {
                for (int x = a + slot; x + ObjectLayout.CAS_LOCK_OFFSET + 8 <= a + t.objectSlotBytes(); x += slot) {
                    t.objectMemory().putLongVolatile(x + ObjectLayout.CAS_LOCK_OFFSET, 0x5eedL);
                }
            }
            assertThat(ScytheNode.lockScan(db)[0]).as("no object's CAS word is taken").isZero();
            t.objectMemory().putLongVolatile(at[3] + ObjectLayout.CAS_LOCK_OFFSET, 42); // one really taken
            assertThat(ScytheNode.lockScan(db)[0]).as("the one taken").isEqualTo(1);
        } finally {
            fabric.close();
        }
    }
}
