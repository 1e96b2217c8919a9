package io.scythe.bench.history;

import io.scythe.txn.Access;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** The history file: what two threads record is read back exactly; a damaged file is refused, saying why. */
class HistoryFileTest {
    @TempDir
    Path dir;

    /** An access that read {@code key} at {@code read}. */
    static Access read(final String table, final long key, final long read) {
        final Access a = new Access(table, key, null);
        a.fetched = true;
        a.readVersion = read;
        return a;
    }

    /** An access that read {@code key} at {@code read} and installed {@code made} on it. */
    static Access written(final String table, final long key, final long read, final long made) {
        final Access a = read(table, key, read);
        a.dirty = true;
        a.installedVersion = made;
        return a;
    }

    @Test
    void shouldReadBackWhatTwoThreadsRecorded() throws Exception {
        final Path file = dir.resolve("two.history");
        final int perThread = 20_000; // several 64 KiB chunks per thread
        try (HistoryWriter writer = new HistoryWriter(file, 0, "two threads")) {
            final List<Thread> threads = new ArrayList<>();
            for (int t = 0; t < 2; t++) {
                final long base = (t + 1L) << 40;
                final String table = t == 0 ? "checking" : "savings";
                threads.add(new Thread(() -> {
                    for (int i = 1; i <= perThread; i++) {
                        final Access unread = new Access("ignored", 1, null); // looked up, never read: not recorded
                        writer.committed(base + i, i * 10L, List.of(written(table, i % 7, i - 1, base + i),
                            read("account", -i, Long.MAX_VALUE), unread));
                    }
                }));
            }
            threads.forEach(Thread::start);
            for (final Thread thread : threads) {
                thread.join();
            }
            assertThat(writer.transactions()).isEqualTo(2L * perThread);
        }
        final History h = HistoryReader.read(file);
        assertThat(h.label()).isEqualTo("two threads");
        assertThat(h.transactions()).isEqualTo(2 * perThread);
        final Map<Long, Integer> byId = new HashMap<>();
        for (int t = 0; t < h.transactions(); t++) {
            byId.put(h.txnId(t), t);
        }
        assertThat(Arrays.stream(h.seqs).distinct().count()).as("seq numbers are unique").isEqualTo(2L * perThread);
        for (int thread = 0; thread < 2; thread++) {
            for (final int i : new int[] {1, 777, perThread}) {
                final int t = byId.get(((thread + 1L) << 40) + i);
                assertThat(h.commitTs[t]).isEqualTo(i * 10L);
                final int a = h.firstAccess[t];
                assertThat(h.firstAccess[t + 1] - a).isEqualTo(2);
                assertThat(h.tables.get(h.accessTable[a])).isEqualTo(thread == 0 ? "checking" : "savings");
                assertThat(h.accessKey[a]).isEqualTo(i % 7);
                assertThat(h.accessFlags[a]).isEqualTo((byte) (HistoryFormat.READ | HistoryFormat.WRITE));
                assertThat(h.versionRead[a]).isEqualTo(i - 1);
                assertThat(h.versionMade[a]).isEqualTo(((thread + 1L) << 40) + i);
                assertThat(h.tables.get(h.accessTable[a + 1])).isEqualTo("account");
                assertThat(h.accessKey[a + 1]).isEqualTo(-i);
                assertThat(h.accessFlags[a + 1]).isEqualTo((byte) HistoryFormat.READ);
                assertThat(h.versionRead[a + 1]).isEqualTo(Long.MAX_VALUE);
            }
        }
    }

    @Test
    void shouldRefuseAFileCutShortOrNotAHistory() throws Exception {
        final Path file = dir.resolve("whole.history");
        try (HistoryWriter writer = new HistoryWriter(file, 0, "whole")) {
            for (int i = 1; i <= 100; i++) {
                writer.committed(i, i, List.of(written("t", 1, i - 1, i)));
            }
        }
        final byte[] bytes = Files.readAllBytes(file);
        assertThat(HistoryReader.read(file).transactions()).isEqualTo(100);
        final Path cut = dir.resolve("cut.history");
        Files.write(cut, Arrays.copyOf(bytes, bytes.length - 3));
        assertThatThrownBy(() -> HistoryReader.read(cut)).isInstanceOf(IllegalArgumentException.class)
            .hasMessageContaining("cut short");
        final Path other = dir.resolve("other.history");
        Files.writeString(other, "{\"not\": \"a history\"}");
        assertThatThrownBy(() -> HistoryReader.read(other)).isInstanceOf(IllegalArgumentException.class)
            .hasMessageContaining("not a history file");
        final byte[] badType = bytes.clone();
        badType[badType.length - 2] = 9; // the END record's type byte
        final Path bad = dir.resolve("bad.history");
        Files.write(bad, badType);
        assertThatThrownBy(() -> HistoryReader.read(bad)).isInstanceOf(IllegalArgumentException.class)
            .hasMessageContaining("unknown record type 9");
    }
}
