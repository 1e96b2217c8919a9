package io.scythe.txn.rcc;

import io.scythe.storage.ObjectLayout;
import io.scythe.storage.Table;
import io.scythe.txn.Catalog;
import io.scythe.txn.OneMemoryNode;
import io.scythe.txn.rcc.mvcc.MvccTuple;
import io.scythe.txn.recovery.RedoRecordDescriptor;
import io.vertx.core.Future;
import org.agrona.concurrent.AtomicBuffer;
import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Recovery's roll-forward of a value too large for one WRITE_BACK request ({@link RccLockKind#finishPrimary}, MVCC
 * and SUNDIAL) against an earlier, timed-out attempt whose WRITE_BACK was still queued on the memory node: that
 * WRITE_BACK installs the version and releases the dead node's word, a writer locks, commits a value of its own and
 * releases, all at the n-th verb landing after this attempt began (every n until the attempt is done, so between any
 * two of its steps). Whatever the interleaving, the writer's value and version stay, the version word is never left
 * BUSY, no word stays held and MVCC's older version is kept once. (Before the value went in parts, each applied only
 * while the word held the token, the attempt checked the token on its READ alone, and its one-sided doorbell, landing
 * after, overwrote the writer's value and left the version BUSY.)
 */
class RccInstallRaceTest {
    private static final int MAX = 600; // more than one RRPC request carries (512-byte buckets)
    private static final long DEAD = 0x0abc_0000_0000_0001L; // the dead node's token in the word
    private static final long INSTALLED = 10; // the version the dead commit installs
    private static final long WRITER = 0x0def_0000_0000_0002L;
    private static final long WRITER_VERSION = 20;

    private static UnsafeBuffer filled(final int b) {
        final UnsafeBuffer v = new UnsafeBuffer(new byte[MAX]);
        v.setMemory(0, MAX, (byte) b);
        return v;
    }

    private static boolean all(final AtomicBuffer m, final int at, final int b) {
        for (int i = 0; i < MAX; i++) {
            if (m.getByte(at + i) != (byte) b) {
                return false;
            }
        }
        return true;
    }

    @ParameterizedTest
    @ValueSource(strings = {"MVCC", "SUNDIAL"})
    void shouldNeverOverwriteALaterWritersValueNorLeaveTheVersionBusy(final String name) throws Exception {
        final RccLockKind kind = name.equals("MVCC") ? RccLockKind.MVCC : RccLockKind.SUNDIAL;
        try (OneMemoryNode node = new OneMemoryNode("items", 32, false, MAX, n -> n, MvccTuple.room(MAX))) {
            final Table table = node.table;
            final AtomicBuffer m = table.objectMemory();
            final long pointer = table.lookup(1);
            final int at = table.offsetOf(pointer);
            final Catalog.Partition partition = node.catalog.table("items").partitions().get(0);
            final UnsafeBuffer record = filled(0x22);
            final List<String> seen = new ArrayList<>();
            boolean doneBeforeInterference = false;
            for (int n = 1; n <= 40 && !doneBeforeInterference; n++) {
                // The object as the earlier attempt left it: its value written (MVCC: the loaded version moved to an
                // older slot first), the version word BUSY, the dead node's word held; its WRITE_BACK still queued.
                m.setMemory(at + ObjectLayout.VALUE_OFFSET, MAX, (byte) 0x11);
                m.setMemory(at + MvccTuple.rtsOffset(MAX), MvccTuple.room(MAX), (byte) 0);
                m.putInt(at + ObjectLayout.VALUE_LENGTH_OFFSET, MAX);
                m.putLong(at + ObjectLayout.VERSION_OFFSET, ObjectLayout.LOADED_VERSION);
                if (kind == RccLockKind.MVCC) {
                    MvccTuple.newestAsOld(m, at, MAX, m, at + MvccTuple.oldSlotOffset(MAX, 0));
                }
                m.putBytes(at + ObjectLayout.VALUE_OFFSET, record, 0, MAX);
                m.putLong(at + ObjectLayout.VERSION_OFFSET, ObjectLayout.LOADED_VERSION | ObjectLayout.VERSION_BUSY);
                m.putLong(at + TupleFormat.TTS_OFFSET, DEAD);
                final AtomicInteger landings = new AtomicInteger();
                final AtomicBoolean interfered = new AtomicBoolean();
                final AtomicBoolean writerCommitted = new AtomicBoolean();
                final int when = n;
                final String attempt = node.on(rt -> rt.rocket("mn").compose(r -> rt.channel("mn")).compose(ch -> {
                    node.verbFaults.set((qp, opcode) -> {
                        if (landings.incrementAndGet() == when && interfered.compareAndSet(false, true)) {
                            // The earlier attempt's WRITE_BACK, applied as the memory node applies it.
                            if (m.getLongVolatile(at + TupleFormat.TTS_OFFSET) == DEAD) {
                                m.putLongVolatile(at + ObjectLayout.VERSION_OFFSET, INSTALLED);
                                m.putLongVolatile(at + TupleFormat.TTS_OFFSET, 0);
                            }
                            // A writer: locks the free word, commits its value and releases.
                            if (m.compareAndSetLong(at + TupleFormat.TTS_OFFSET, 0, WRITER)) {
                                m.putBytes(at + ObjectLayout.VALUE_OFFSET, filled(0x33), 0, MAX);
                                m.putLongVolatile(at + ObjectLayout.VERSION_OFFSET, WRITER_VERSION);
                                m.putLongVolatile(at + TupleFormat.TTS_OFFSET, 0);
                                writerCommitted.set(true);
                            }
                        }
                        return null;
                    });
                    return kind.finishPrimary(rt, partition, pointer, RedoRecordDescriptor.OP_VALUE, DEAD, INSTALLED,
                        record, MAX).map(v -> "done").recover(e -> Future.succeededFuture("failed: " + e));
                }));
                node.verbFaults.set(null);
                doneBeforeInterference = !interfered.get();
                final long version = m.getLongVolatile(at + ObjectLayout.VERSION_OFFSET);
                final String where = kind.name() + ", interference at landing " + n + " (attempt " + attempt + ")";
                seen.add(where);
                assertThat(version & ObjectLayout.VERSION_BUSY).as(where + ": version word left BUSY").isZero();
                assertThat(m.getLongVolatile(at + TupleFormat.TTS_OFFSET)).as(where + ": word left held").isZero();
                if (writerCommitted.get()) {
                    assertThat(version).as(where + ": the writer's version").isEqualTo(WRITER_VERSION);
                    assertThat(all(m, at + ObjectLayout.VALUE_OFFSET, 0x33)).as(where + ": the writer's value")
                        .isTrue();
                } else {
                    assertThat(version).as(where + ": the dead commit's version").isEqualTo(INSTALLED);
                    assertThat(all(m, at + ObjectLayout.VALUE_OFFSET, 0x22)).as(where + ": the dead commit's value")
                        .isTrue();
                }
                assertThat(m.getInt(at + ObjectLayout.VALUE_LENGTH_OFFSET)).as(where).isEqualTo(MAX);
                if (kind == RccLockKind.MVCC) {
                    int loaded = 0;
                    for (int slot = 0; slot < MvccTuple.OLD_SLOTS; slot++) {
                        final int old = at + MvccTuple.oldSlotOffset(MAX, slot);
                        if ((m.getInt(old + 12) & MvccTuple.PRESENT) != 0) {
                            assertThat(m.getLong(old)).as(where + ": older slot " + slot)
                                .isEqualTo(ObjectLayout.LOADED_VERSION);
                            loaded++;
                        }
                    }
                    assertThat(loaded).as(where + ": the loaded version kept once").isEqualTo(1);
                }
            }
            assertThat(doneBeforeInterference).as("the attempt finished before the last interference " + seen)
                .isTrue();
        }
    }
}
