package io.scythe.bench.history;

import io.scythe.txn.Access;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.util.List;

import static io.scythe.bench.history.HistoryFileTest.read;
import static io.scythe.bench.history.HistoryFileTest.written;
import static org.assertj.core.api.Assertions.assertThat;

/** The in-memory recorder builds exactly the history the file recorder's file reads back as. */
class HistoryCollectorTest {
    @TempDir
    Path dir;

    @Test
    void shouldRecordWhatTheFileHoldsAndLetTheCheckerFindTheLostUpdate() throws Exception {
        final HistoryCollector collector = new HistoryCollector(0, "lost update");
        final Path file = dir.resolve("lost.history");
        try (HistoryWriter writer = new HistoryWriter(file, 0, "lost update")) {
            for (final io.scythe.txn.HistoryRecorder r : List.of(collector, writer)) {
                // T1 and T2 both read checking:1 at the initial version and both overwrote it; T3 read T1's.
                r.committed(1, 10, List.of(written("checking", 1, 0, 10),
                    new Access("savings", 9, null))); // looked up, never read: not recorded
                r.committed(2, 11, List.of(written("checking", 1, 0, 11)));
                r.committed(3, 0, List.of(read("savings", 2, 0), read("checking", 1, 10)));
                // T4 found savings:7 absent and inserted it; T5 deleted it; T6 found it absent again.
                final Access inserted = new Access("savings", 7, null);
                inserted.fetched = true;
                inserted.inserted = true;
                inserted.readAbsent = true;
                inserted.installedVersion = 12;
                final Access deleted = written("savings", 7, 12, 13);
                deleted.deleting = true;
                final Access absent = new Access("savings", 7, null);
                absent.readAbsent = true;
                absent.readVersion = 13;
                r.committed(4, 12, List.of(inserted));
                r.committed(5, 13, List.of(deleted));
                r.committed(6, 0, List.of(absent));
            }
        }
        final History inMemory = collector.history();
        final History fromFile = HistoryReader.read(file);
        assertThat(collector.transactions()).isEqualTo(6);
        assertThat(inMemory.transactions()).isEqualTo(fromFile.transactions());
        assertThat(inMemory.tables).isEqualTo(fromFile.tables);
        assertThat(inMemory.seqs).isEqualTo(fromFile.seqs);
        assertThat(inMemory.txnIds).isEqualTo(fromFile.txnIds);
        assertThat(inMemory.commitTs).isEqualTo(fromFile.commitTs);
        assertThat(inMemory.firstAccess).isEqualTo(fromFile.firstAccess);
        assertThat(inMemory.accessTable).isEqualTo(fromFile.accessTable);
        assertThat(inMemory.accessFlags).isEqualTo(fromFile.accessFlags);
        assertThat(inMemory.accessKey).isEqualTo(fromFile.accessKey);
        assertThat(inMemory.versionRead).isEqualTo(fromFile.versionRead);
        assertThat(inMemory.versionMade).isEqualTo(fromFile.versionMade);
        assertThat(inMemory.versionOverwritten).isEqualTo(fromFile.versionOverwritten);
        assertThat(inMemory.accesses).isEqualTo(7);
        assertThat(fromFile.ordered()).isTrue();
        assertThat(inMemory.accessFlags[4]).isEqualTo((byte) (HistoryFormat.READ | HistoryFormat.ABSENT
            | HistoryFormat.WRITE));
        assertThat(inMemory.accessFlags[5]).isEqualTo((byte) (HistoryFormat.READ | HistoryFormat.WRITE
            | HistoryFormat.TOMBSTONE));
        assertThat(inMemory.accessFlags[6]).isEqualTo((byte) (HistoryFormat.READ | HistoryFormat.ABSENT));

        final SerializabilityChecker.Result r = SerializabilityChecker.check(inMemory, 5);
        assertThat(r.serializable()).isFalse();
        assertThat(r.components()).isEqualTo(1);
        assertThat(r.cycles().get(0).anomaly()).isEqualTo("G2");
        assertThat(r.cycles().get(0).transactions()).containsExactlyInAnyOrder(1L, 2L);
        assertThat(r.lines()).isEqualTo(SerializabilityChecker.check(fromFile, 5).lines());
    }

    /**
     * A read committed transaction (issue 22, helper scythe24: TPC-C's StockLevel, clause 2.8.2.3) recorded by the
     * collector and by the file, and checked at that level only: T1 writes x and y; T2 reads x before T1 and y after
     * it (a fractured read, the G-single cycle T2 -rw-> T1 -wr-> T2). Serializable T2: not serializable; read committed
     * T2: serializable, T2 counted. A read committed transaction that read a version nobody committed (G1a) is still
     * impossible. Failed before: no {@code committedReadCommitted}, no RC_TXN record, the cycle counted.
     */
    @Test
    void shouldCheckAReadCommittedTransactionAtThatLevelOnly() throws Exception {
        final Path file = dir.resolve("rc.history");
        final HistoryCollector collector = new HistoryCollector(0, "read committed");
        final HistoryCollector serializable = new HistoryCollector(0, "serializable");
        try (HistoryWriter writer = new HistoryWriter(file, 0, "read committed")) {
            for (final io.scythe.txn.HistoryRecorder r : List.of(collector, writer)) {
                r.committed(1, 10, List.of(written("t", 1, 0, 10), written("t", 2, 0, 10)));
                r.committedReadCommitted(2, 11, List.of(read("t", 1, 0), read("t", 2, 10)));
            }
            serializable.committed(1, 10, List.of(written("t", 1, 0, 10), written("t", 2, 0, 10)));
            serializable.committed(2, 11, List.of(read("t", 1, 0), read("t", 2, 10)));
        }
        final SerializabilityChecker.Result strict = SerializabilityChecker.check(serializable.history(), 5);
        assertThat(strict.serializable()).isFalse();
        for (final History h : List.of(collector.history(), HistoryReader.read(file))) {
            assertThat(h.readCommitted).containsExactly(false, true);
            final SerializabilityChecker.Result r = SerializabilityChecker.check(h, 5);
            assertThat(r.serializable()).isTrue();
            assertThat(r.readCommitted()).isEqualTo(1);
            assertThat(r.edgesByKind()[SerializabilityChecker.EdgeKind.WR.ordinal()]).isEqualTo(1);
            assertThat(r.edgesByKind()[SerializabilityChecker.EdgeKind.RW.ordinal()]).isZero();
        }
        final HistoryCollector dirty = new HistoryCollector(0, "dirty");
        dirty.committed(1, 10, List.of(written("t", 1, 0, 10)));
        dirty.committedReadCommitted(2, 11, List.of(read("t", 1, 9))); // 9: nobody committed it
        final SerializabilityChecker.Result g1a = SerializabilityChecker.check(dirty.history(), 5);
        assertThat(g1a.serializable()).isFalse();
        assertThat(g1a.impossible()).singleElement().asString().contains("(G1a)");
    }
}
