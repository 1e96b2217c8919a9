package io.scythe.sim;

import io.scythe.bench.workload.SmallBankSpec;
import io.scythe.storage.BackupTables;
import io.scythe.storage.LogDb;
import io.scythe.storage.ObjectLayout;
import io.scythe.storage.Table;
import io.scythe.txn.rcc.mvcc.MvccTuple;
import io.scythe.txn.rcc.sundial.SundialTuple;
import io.vertx.core.json.JsonObject;
import org.agrona.concurrent.AtomicBuffer;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.util.ArrayList;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * MVCC's and SUNDIAL's backups hold the tuple the primary's commit leaves (issue 18): MVCC's three older version
 * slots byte for byte and an rts no higher than the primary's (readers raise the primary's only), SUNDIAL's rts equal
 * to its wts once written (a commit sets both) and no higher than the primary's. One-sided and RPC commits (both write
 * the backups one-sided), SmallBank with 2 backups on 3 memory nodes. Before, backups held the newest version only:
 * every MVCC key written twice differed in its older slots, every SUNDIAL key written had rts 0 on its backups.
 */
class RccBackupTuplesSimTest extends SimVertxTest {
    @ParameterizedTest
    @ValueSource(strings = {"rcc-mvcc", "rcc-mvcc:primitive=rpc", "rcc-sundial", "rcc-sundial:primitive=rpc"})
    void shouldLeaveBackupsHoldingThePrimarysVersionsAndTimestamps(final String protocol) throws Exception {
        final Simulation sim = new Simulation(new SimOptions().protocol(protocol).computeNodes(2)
            .loopsPerComputeNode(2).clientsPerComputeNode(4).memoryNodes(3).replicas(2).durationNs(200_000).seed(1),
            new SmallBankSpec(100, 0.99, "scythe"));
        final JsonObject run = sim.run(vertx).run().toJson();
        assertThat(run.getJsonObject("sim").getJsonArray("violations")).as(protocol).isEmpty();
        assertThat(run.getInteger("replica_differences")).as(protocol).isZero();
        final List<String> differences = new ArrayList<>();
        final long[] checked = new long[2]; // keys written, keys with an older version (MVCC) or an rts (SUNDIAL)
        final boolean mvcc = protocol.startsWith("rcc-mvcc");
        final List<LogDb> nodes = sim.memoryNodes();
        for (int p = 0; p < nodes.size(); p++) {
            for (final Table primary : nodes.get(p).tables()) {
                if (BackupTables.backupOf(primary.schema()) != 0) {
                    continue;
                }
                for (int b = 1; b <= 2; b++) {
                    final Table copy = nodes.get((p + b) % nodes.size()).backupView(b)
                        .table(primary.schema().name());
                    final int backup = b;
                    primary.forEachKey((key, pointer) -> {
                        final int at = primary.offsetOf(pointer);
                        final int there = copy.offsetOf(copy.lookup(key));
                        final String where = primary.schema().name() + " key " + key + " backup " + backup;
                        final String d = mvcc ? mvccDiffers(primary, at, copy, there, checked)
                            : sundialDiffers(primary, at, copy, there, checked);
                        if (d != null) {
                            differences.add(where + ": " + d);
                        }
                    });
                }
            }
        }
        assertThat(differences).as(protocol).isEmpty();
        assertThat(checked[0]).as(protocol + ": copies of written keys").isGreaterThan(20);
        assertThat(checked[1]).as(protocol + (mvcc ? ": copies with an older version" : ": copies with an rts"))
            .isGreaterThan(20);
    }

    private static String mvccDiffers(final Table primary, final int at, final Table copy, final int there,
                                      final long[] checked) {
        final int max = primary.schema().maxValueBytes();
        final AtomicBuffer pm = primary.objectMemory();
        final AtomicBuffer cm = copy.objectMemory();
        if (pm.getLong(at + ObjectLayout.VERSION_OFFSET) == ObjectLayout.LOADED_VERSION) {
            return null;
        }
        checked[0]++;
        if (MvccTuple.present(cm, there, max, 0)) {
            checked[1]++;
        }
        final int from = MvccTuple.oldSlotOffset(max, 0);
        for (int i = 0; i < MvccTuple.OLD_SLOTS * MvccTuple.oldSlotBytes(max); i++) {
            if (pm.getByte(at + from + i) != cm.getByte(there + from + i)) {
                return "older slots differ at byte " + i;
            }
        }
        final long rts = MvccTuple.rts(cm, there, max);
        return rts > MvccTuple.rts(pm, at, max) ? "rts " + rts + " above the primary's" : null;
    }

    private static String sundialDiffers(final Table primary, final int at, final Table copy, final int there,
                                         final long[] checked) {
        final int max = primary.schema().maxValueBytes();
        final AtomicBuffer pm = primary.objectMemory();
        final AtomicBuffer cm = copy.objectMemory();
        final long wts = SundialTuple.wts(cm, there);
        if (wts == ObjectLayout.LOADED_VERSION) {
            return null;
        }
        checked[0]++;
        final long rts = SundialTuple.rts(cm, there, max);
        if (rts != 0) {
            checked[1]++;
        }
        if (rts != wts) {
            return "rts " + rts + " vs wts " + wts;
        }
        return rts > SundialTuple.rts(pm, at, max) ? "rts " + rts + " above the primary's" : null;
    }
}
