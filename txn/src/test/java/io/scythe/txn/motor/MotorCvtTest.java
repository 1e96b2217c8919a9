package io.scythe.txn.motor;

import io.scythe.storage.ObjectLayout;
import io.scythe.txn.lotus.Cvt;
import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/** Motor's rules on an object image ({@link MotorCvt}): what a reader at T_start takes, what a writer overwrites. */
class MotorCvtTest {
    private static final int MAX = 16; // SmallBank's values: one cache line per record
    private static final long KEY = 7;

    /** An image of header, home and a CVT of {@code versions.length} cells (0: an invalid cell). */
    private static UnsafeBuffer image(final long... versions) {
        final int at = MotorCvt.at(MAX);
        final UnsafeBuffer b = new UnsafeBuffer(new byte[MotorCvt.readBytes(MAX, versions.length)]);
        Cvt.header(b, at, KEY, 1, versions.length);
        for (int i = 0; i < versions.length; i++) {
            if (versions[i] != 0) {
                Cvt.putCell(b, at + Cvt.cell(i), (byte) 3, true, false, 8, Cvt.recordOffset(MAX, versions.length, i),
                    versions[i]);
            }
        }
        return b;
    }

    private static MotorCvt.Read read(final UnsafeBuffer image, final int n, final long home, final long start) {
        return MotorCvt.read(image, MAX, n, KEY, home, start);
    }

    @Test
    void shouldTakeTheHomeWhenItIsOlderThanTheStartElseTheNewestCellBelowIt() {
        final UnsafeBuffer b = image(10, 20, 30);
        assertThat(read(b, 3, 30, 31).choice()).isEqualTo(MotorCvt.Choice.HOME);
        assertThat(read(b, 3, 30, 30)).isEqualTo(new MotorCvt.Read(MotorCvt.Choice.CELL, 1)); // below T_start strictly
        assertThat(read(b, 3, 30, 25)).isEqualTo(new MotorCvt.Read(MotorCvt.Choice.CELL, 1));
        assertThat(read(b, 3, 30, 15)).isEqualTo(new MotorCvt.Read(MotorCvt.Choice.CELL, 0));
        assertThat(read(b, 3, 30, 10).choice()).isEqualTo(MotorCvt.Choice.TOO_OLD);
    }

    @Test
    void shouldRefuseEveryReaderOfALockedObject() {
        final UnsafeBuffer b = image(10, 20);
        b.putLong(ObjectLayout.CAS_LOCK_OFFSET, 99);
        // Its holder may have T_commit below this T_start and not have written yet: neither home nor cell is safe.
        assertThat(read(b, 2, 20, 1_000).choice()).isEqualTo(MotorCvt.Choice.LOCKED);
        assertThat(read(b, 2, 20, 15).choice()).isEqualTo(MotorCvt.Choice.LOCKED);
    }

    @Test
    void shouldDetectATornCellAndATornRecord() {
        final UnsafeBuffer b = image(10, 20);
        final int cell1 = MotorCvt.at(MAX) + Cvt.cell(1);
        b.putByte(cell1, (byte) 4); // head check value rewritten, tail not yet
        assertThat(read(b, 2, 20, 15).choice()).isEqualTo(MotorCvt.Choice.TORN);
        // A record whose line carries another check value than its cell: being rewritten under the reader.
        final int bytes = Cvt.recordBytes(MAX);
        final UnsafeBuffer record = new UnsafeBuffer(new byte[bytes]);
        final UnsafeBuffer value = new UnsafeBuffer(new byte[MAX]);
        value.putLong(0, 1234);
        Cvt.putRecord(record, 0, bytes, (byte) 3, value, 0, MAX);
        final UnsafeBuffer out = new UnsafeBuffer(new byte[MAX]);
        assertThat(Cvt.getRecord(record, 0, bytes, (byte) 3, MAX, out, 0)).isTrue();
        assertThat(out.getLong(0)).isEqualTo(1234);
        assertThat(Cvt.getRecord(record, 0, bytes, (byte) 4, MAX, out, 0)).isFalse();
    }

    @Test
    void shouldTreatACvtOfAnotherKeyOrNeverWrittenAsHoldingNoOlderVersion() {
        final UnsafeBuffer never = new UnsafeBuffer(new byte[MotorCvt.readBytes(MAX, 2)]);
        assertThat(read(never, 2, 20, 15).choice()).isEqualTo(MotorCvt.Choice.TOO_OLD);
        assertThat(read(never, 2, 20, 21).choice()).isEqualTo(MotorCvt.Choice.HOME);
        assertThat(MotorCvt.victim(never, MAX, 2, KEY)).isEqualTo(Cvt.NONE); // written whole
        final UnsafeBuffer other = image(10, 20);
        assertThat(MotorCvt.read(other, MAX, 2, KEY + 1, 20, 15).choice()).isEqualTo(MotorCvt.Choice.TOO_OLD);
        assertThat(MotorCvt.victim(other, MAX, 2, KEY + 1)).isEqualTo(Cvt.NONE);
        assertThat(MotorCvt.victim(other, MAX, 3, KEY)).as("another number of cells").isEqualTo(Cvt.NONE);
    }

    @Test
    void shouldOverwriteAFreeCellElseTheOldestNeverTheNewest() {
        assertThat(MotorCvt.victim(image(30, 0, 20), MAX, 3, KEY)).isEqualTo(1);
        assertThat(MotorCvt.victim(image(30, 10, 20), MAX, 3, KEY)).isEqualTo(1);
        assertThat(MotorCvt.victim(image(30, 40), MAX, 2, KEY)).isEqualTo(0);
        final UnsafeBuffer b = image(30, 40);
        assertThat(MotorCvt.nextCv(b, MAX, 0)).isEqualTo((byte) 4);
    }

    @Test
    void shouldWriteAFreshCvtWithThePreviousVersionBesideTheNewOne() {
        final UnsafeBuffer b = new UnsafeBuffer(new byte[MotorCvt.readBytes(MAX, 2)]);
        final int at = MotorCvt.at(MAX);
        final int cell = MotorCvt.fresh(b, at, MAX, 2, KEY, 1, true, false, 16, 5, false, 16, 50);
        assertThat(cell).isEqualTo(1);
        assertThat(read(b, 2, 50, 40)).isEqualTo(new MotorCvt.Read(MotorCvt.Choice.CELL, 0));
        assertThat(Cvt.version(b, at, 0)).isEqualTo(5);
        assertThat(read(b, 2, 50, 5).choice()).isEqualTo(MotorCvt.Choice.TOO_OLD);
        assertThat(MotorCvt.victim(b, MAX, 2, KEY)).as("the next write replaces the previous").isEqualTo(0);
        final UnsafeBuffer inserted = new UnsafeBuffer(new byte[MotorCvt.readBytes(MAX, 2)]);
        assertThat(MotorCvt.fresh(inserted, at, MAX, 2, KEY, 1, false, false, 0, 0, false, 16, 60)).isZero();
        assertThat(Cvt.valid(inserted, at, 1)).isFalse();
        assertThat(read(inserted, 2, 60, 60).choice()).as("nothing before its insert").isEqualTo(MotorCvt.Choice.TOO_OLD);
    }

    @Test
    void shouldRecoverCrashesAndRunOnClusterNodes() {
        final MotorModule module = new MotorModule();
        assertThat(module.crashRefusal(MotorModule.MOTOR)).isNull();
        assertThat(module.clusterRefusal(MotorModule.MOTOR)).as("its CNs do not message each other").isNull();
        assertThat(module.lockKinds()).containsExactly(MotorLockKind.INSTANCE);
        assertThat(MotorModule.MOTOR.configured("versions=3").name()).isEqualTo("motor:versions=3");
        assertThat(MotorModule.MOTOR.configured("versions=3").objectRoom(
            io.scythe.storage.TableSchema.fixed(1, "t", MAX, 100))).isEqualTo(Cvt.room(MAX, 3));
    }
}
