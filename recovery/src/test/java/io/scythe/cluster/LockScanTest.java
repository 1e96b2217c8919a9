package io.scythe.cluster;

import io.scythe.fabric.CostModel;
import io.scythe.fabric.FabricOptions;
import io.scythe.fabric.local.LocalFabric;
import io.scythe.storage.LogDb;
import io.scythe.storage.ObjectLayout;
import io.scythe.storage.Table;
import io.scythe.storage.TableSchema;
import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/** A memory node's end-of-run lock scan (its health's {@code locksHeld}, what chaos checks). */
class LockScanTest {
    private final LocalFabric fabric = new LocalFabric(new FabricOptions().costModel(CostModel.zero()));

    @AfterEach
    void tearDown() {
        fabric.close();
    }

    /**
     * Objects with the room a protocol asks for (RCC MVCC's inline versions, Lotus's CVT and versions) are strided by
     * their whole slot: strided by header and value alone, the scan read a version slot's bytes as the next object's
     * tts (chaos on rcc-mvcc: "2438 objects still locked" when none was; on lotus 1069).
     */
    @Test
    void shouldStrideByTheWholeSlotIncludingTheProtocolsRoom() {
        final int room = 80;
        final LogDb db = new LogDb(fabric.attachNow("mn0")).objectRoom(schema -> room);
        final Table t = db.create(TableSchema.fixed(1, "accounts", 8, 4));
        final UnsafeBuffer v = new UnsafeBuffer(new byte[8]);
        final int first = t.offsetOf(t.insert(0, v, 0, 8, ObjectLayout.LOADED_VERSION));
        final int second = t.offsetOf(t.insert(1, v, 0, 8, ObjectLayout.LOADED_VERSION));
        assertThat(second - first).isEqualTo(t.objectSlotBytes()).isEqualTo(ObjectLayout.slotBytes(8) + room);
        // A version in the first object's room, where a header-and-value stride finds the "next" object's tts.
        t.objectMemory().putLongVolatile(first + ObjectLayout.slotBytes(8) + ObjectLayout.PROTOCOL_WORD_OFFSET, 77);
        assertThat(ScytheNode.locksHeld(db)).isZero();
        t.objectMemory().putLongVolatile(second + ObjectLayout.PROTOCOL_WORD_OFFSET, 77); // the second's tts: held
        assertThat(ScytheNode.locksHeld(db)).isEqualTo(1);
    }

    /**
     * Which objects are left locked and whose (health's {@code locked}, what chaos names): a soak ended with "11
     * objects still locked or queued on" and nothing to tell whose they were.
     */
    @Test
    void shouldNameTheLockedObjectsKeyTicketsAndTheLedgersHolder() {
        final LogDb db = new LogDb(fabric.attachNow("mn0"));
        final Table t = db.create(TableSchema.fixed(1, "accounts", 8, 4));
        final UnsafeBuffer v = new UnsafeBuffer(new byte[8]);
        t.insert(0, v, 0, 8, ObjectLayout.LOADED_VERSION);
        final int locked = t.offsetOf(t.insert(41, v, 0, 8, ObjectLayout.LOADED_VERSION));
        final io.scythe.txn.scythe.TicketLedger ledger = new io.scythe.txn.scythe.TicketLedger();
        t.objectMemory().putLongVolatile(locked + ObjectLayout.LOWER_OFFSET, 2); // tickets 0 (held) and 1 (queued)
        ledger.granted("cn1.e3", 7, t, locked, 0);
        ledger.granted("cn2.e1", 9, t, locked, 1);
        final io.vertx.core.json.JsonArray found = ScytheNode.lockedObjects(db, ledger, 32);
        assertThat(found.size()).isEqualTo(1);
        final io.vertx.core.json.JsonObject o = found.getJsonObject(0);
        assertThat(o.getString("table")).isEqualTo("accounts");
        assertThat(o.getLong("key")).isEqualTo(41L);
        assertThat(o.getInteger("object")).isEqualTo(locked);
        assertThat(o.getLong("lower")).isEqualTo(2L);
        assertThat(o.getLong("upper")).isZero();
        assertThat(o.getString("holder")).isEqualTo("cn1.e3");
        assertThat(o.containsKey("cas")).isFalse();
        assertThat(ScytheNode.lockedObjects(db, ledger, 0)).isEmpty(); // bounded
    }
}
