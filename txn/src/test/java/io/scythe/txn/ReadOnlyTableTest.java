package io.scythe.txn;

import io.scythe.storage.ObjectLayout;
import io.vertx.core.Future;
import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A read-only table (TableSchema#readOnly) is read without concurrency control in every protocol: a lock word that
 * says "held" (which no transaction could have set, since nobody writes it) neither aborts the read nor fails
 * validation; and writing it is a clear error that changes nothing.
 */
class ReadOnlyTableTest {
    private static final List<Protocol> PROTOCOLS = List.of(io.scythe.txn.spi.ProtocolRegistry.protocol("scythe"), io.scythe.txn.spi.ProtocolRegistry.protocol("ford-occ"), io.scythe.txn.spi.ProtocolRegistry.protocol("farm-occ"));

    /** For each protocol (Scythe in OCC and TOCC): reads key 3 with its CAS lock and Takeout Lock shown held. */
    private static List<String> readLockedKey(final boolean readOnly) throws Exception {
        try (OneMemoryNode node = new OneMemoryNode("items", 32, readOnly)) {
            node.setHeaderWord(3, ObjectLayout.CAS_LOCK_OFFSET, 77);
            node.setHeaderWord(3, ObjectLayout.LOWER_OFFSET, 1); // one ticket out, none returned: held
            final List<String> outcomes = new ArrayList<>();
            for (final Protocol protocol : PROTOCOLS) {
                for (final boolean hot : protocol == io.scythe.txn.spi.ProtocolRegistry.protocol("scythe") ? List.of(false, true) : List.of(false)) {
                    if (hot && !readOnly) {
                        continue; // TOCC would queue behind the fake holder forever
                    }
                    outcomes.add(node.on(rt -> {
                        final Txn txn = protocol.begin(rt, hot);
                        return txn.read("items", 3).compose(v -> txn.commit().map(ts -> "committed " + v.getLong(0)))
                            .recover(e -> txn.abort().map(x -> "aborted " + (e instanceof AbortException a
                                ? a.reason() : e.getClass().getSimpleName())));
                    }));
                }
            }
            return outcomes;
        }
    }

    @Test
    void shouldReadAReadOnlyTableWithoutLocksOrValidationInEveryProtocol() throws Exception {
        assertThat(readLockedKey(true)).containsExactly("committed 100", "committed 100", "committed 100",
            "committed 100");
    }

    @Test
    void shouldStillCheckTheLockOfAWritableTable() throws Exception {
        assertThat(readLockedKey(false)).doesNotContain("committed 100").hasSize(3);
    }

    @Test
    void shouldRefuseToWriteInsertOrDeleteAReadOnlyTable() throws Exception {
        try (OneMemoryNode node = new OneMemoryNode("items", 32, true)) {
            final List<String> errors = node.on(rt -> {
                final Txn txn = io.scythe.txn.spi.ProtocolRegistry.protocol("ford-occ").begin(rt, false);
                final UnsafeBuffer v = new UnsafeBuffer(new byte[8]);
                v.putLong(0, 5);
                return txn.read("items", 3).map(x -> {
                    final List<String> seen = new ArrayList<>();
                    for (final Runnable change : List.<Runnable>of(() -> txn.write("items", 3, v, 0, 8),
                        () -> txn.insert("items", 20, v, 0, 8), () -> txn.delete("items", 3))) {
                        try {
                            change.run();
                            seen.add("accepted");
                        } catch (final IllegalStateException e) {
                            seen.add(e.getMessage());
                        }
                    }
                    return seen;
                }).compose(seen -> txn.commit().map(seen));
            });
            assertThat(errors).containsExactly(
                "write of table items, which is read-only to transactions",
                "insert of table items, which is read-only to transactions",
                "delete of table items, which is read-only to transactions");
            assertThat(node.valueOf(3)).isEqualTo(100);
            assertThat(node.table.lookup(20)).isZero();
        }
    }
}
