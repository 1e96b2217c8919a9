package io.scythe.storage;

import io.scythe.fabric.CostModel;
import io.scythe.fabric.FabricOptions;
import io.scythe.fabric.local.LocalFabric;
import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** Backup copies of partitions: placement, the initial copy, placeholders, and the comparison that checks them. */
class BackupTablesTest {
    private static final int NODES = 3;
    private LocalFabric fabric;
    private final List<LogDb> nodes = new ArrayList<>();

    @BeforeEach
    void setUp() {
        fabric = new LocalFabric(new FabricOptions().costModel(CostModel.zero()));
        for (int p = 0; p < NODES; p++) {
            final LogDb db = new LogDb(fabric.attachNow("mn" + p));
            final Table hash = db.create(TableSchema.fixed(1, "accounts", 16, 64));
            final Table list = db.create(TableSchema.fixed(2, "orders", 24, 64).withIndex(IndexKind.SKIPLIST));
            for (long k = p; k < 90; k += NODES) {
                hash.insert(k, valueOf(k * 100, 16), 0, 16, 10 + k);
                list.insert(k, valueOf(k * 7, 24), 0, 24, 20 + k);
            }
            nodes.add(db);
        }
    }

    @AfterEach
    void tearDown() {
        fabric.close();
    }

    private static UnsafeBuffer valueOf(final long v, final int bytes) {
        final UnsafeBuffer b = new UnsafeBuffer(new byte[bytes]);
        b.putLong(0, v);
        b.putLong(bytes - 8, ~v);
        return b;
    }

    @Test
    void shouldCopyEveryPartitionToTheNodesAfterItByteForByte() {
        BackupTables.replicate(nodes, 2);
        assertThat(BackupTables.compare(nodes, 2)).isEmpty();
        for (int p = 0; p < NODES; p++) {
            for (int b = 1; b <= 2; b++) {
                final LogDb holder = nodes.get(BackupTables.backupNode(p, b, NODES));
                final Table copy = holder.backupView(b).table("accounts");
                assertThat(copy.schema().name()).isEqualTo("accounts.backup" + b);
                assertThat(copy.schema().id()).isEqualTo(1 + b * BackupTables.ID_STRIDE);
                assertThat(holder.backupView(b).table(1)).isSameAs(copy);
                assertThat(BackupTables.backupOf(copy.schema())).isEqualTo(b);
                assertThat(BackupTables.primaryName(copy.schema())).isEqualTo("accounts");
                final Table primary = nodes.get(p).table("accounts");
                for (long k = p; k < 90; k += NODES) {
                    final long there = copy.lookup(k);
                    assertThat(there).as("key %d on backup %d of partition %d", k, b, p).isPositive();
                    final int at = copy.offsetOf(there);
                    final int source = primary.offsetOf(primary.lookup(k));
                    assertThat(copy.objectMemory().getLong(at + ObjectLayout.VERSION_OFFSET)).isEqualTo(10 + k);
                    for (int i = 0; i < 16; i++) {
                        assertThat(copy.objectMemory().getByte(at + ObjectLayout.VALUE_OFFSET + i))
                            .isEqualTo(primary.objectMemory().getByte(source + ObjectLayout.VALUE_OFFSET + i));
                    }
                }
            }
            // Each node: its own primaries and the backups of the two partitions before it, nothing else.
            assertThat(nodes.get(p).tables()).hasSize(6);
            assertThat(nodes.get(p).backupView(1).tables()).hasSize(2);
        }
    }

    @Test
    void shouldReportEveryKindOfDifference() {
        BackupTables.replicate(nodes, 2);
        final Table copy = nodes.get(1).backupView(1).table("accounts"); // backup 1 of partition 0
        final int at = copy.offsetOf(copy.lookup(3));
        copy.objectMemory().putByte(at + ObjectLayout.VALUE_OFFSET + 9, (byte) 1);
        final Table orders = nodes.get(0).backupView(2).table("orders"); // backup 2 of partition 1
        final int o = orders.offsetOf(orders.lookup(4));
        orders.objectMemory().putLong(o + ObjectLayout.VERSION_OFFSET, 99);
        final Table primary = nodes.get(2).table("accounts");
        primary.objectMemory().putShort(primary.offsetOf(primary.lookup(5)) + ObjectLayout.FLAGS_OFFSET,
            (short) ObjectLayout.FLAG_DELETED);
        assertThat(BackupTables.compare(nodes, 2)).containsExactlyInAnyOrder(
            "accounts key 3: value byte 9 on backup 1 on node 1",
            "orders key 4: version 24 vs 99 on backup 2 on node 0",
            "accounts key 5: flags 1 vs 0 on backup 1 on node 0",
            "accounts key 5: flags 1 vs 0 on backup 2 on node 1");
    }

    @Test
    void shouldLocateAMissingKeyOnABackupAsADeletedPlaceholderThatReadsAbsent() {
        BackupTables.replicate(nodes, 1);
        final Table copy = nodes.get(1).backupView(1).table("accounts");
        final long placeholder = copy.locateBackupObject(300);
        assertThat(placeholder).isPositive();
        assertThat(copy.locateBackupObject(300)).as("the same object for good").isEqualTo(placeholder);
        final int at = copy.offsetOf(placeholder);
        assertThat(copy.objectMemory().getShort(at + ObjectLayout.FLAGS_OFFSET)).isEqualTo(
            (short) ObjectLayout.FLAG_DELETED);
        assertThat(copy.objectMemory().getLong(at + ObjectLayout.VERSION_OFFSET)).isEqualTo(
            ObjectLayout.LOADED_VERSION);
        assertThat(copy.locateBackupObject(3)).as("an existing key's object").isEqualTo(copy.lookup(3));
        assertThat(copy.awaitsReclamation(placeholder)).as("never reclaimed").isFalse();
        // A placeholder whose insert never committed is no difference; a live one the primary lacks is.
        assertThat(BackupTables.compare(nodes, 1)).isEmpty();
        copy.objectMemory().putShort(at + ObjectLayout.FLAGS_OFFSET, (short) 0);
        assertThat(BackupTables.compare(nodes, 1)).containsExactly(
            "accounts key 300: live on backup 1 on node 1, absent on the primary");
    }

    @Test
    void shouldRefuseMoreBackupsThanOtherNodes() {
        assertThatThrownBy(() -> BackupTables.replicate(nodes, 3)).isInstanceOf(IllegalArgumentException.class)
            .hasMessageContaining("replicas=3").hasMessageContaining("[0, 2]");
        assertThatThrownBy(() -> BackupTables.check(1, 1)).hasMessageContaining("[0, 0]");
        assertThatThrownBy(() -> nodes.get(0).backupView(0)).isInstanceOf(IllegalArgumentException.class);
        BackupTables.check(0, 1);
    }
}
