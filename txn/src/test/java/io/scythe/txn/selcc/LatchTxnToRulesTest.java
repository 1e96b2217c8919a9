package io.scythe.txn.selcc;

import io.scythe.txn.AbortException;
import io.scythe.txn.AbortReason;
import io.scythe.txn.Access;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Recoverable TO's order on SELCC's and SEL's latches, the rules themselves ({@link LatchTxn}: one piece of code for
 * both substrates), on values chosen at their edges: a read at {@code ts} is refused when the line was written after
 * it ({@code wts > ts}) and raises {@code rts} to {@code ts}, never lowering it; a write at {@code ts} is refused when
 * the line was read or written after it ({@code ts < rts} or {@code ts < wts}). Sel2plTest runs them through
 * transactions (and the marks of absent keys, {@code toShouldMarkEachKeyReadAbsentOnceButNotOneItInserts}).
 */
class LatchTxnToRulesTest {
    private static final Access A = new Access("rows", 7, null);

    @Test
    void aReadShouldBeRefusedOnlyWhenTheLineWasWrittenAfterItsTimestamp() {
        assertThat(LatchTxn.readLate(A, 10, 9)).as("written at 10, read at 9").isNotNull()
            .extracting(AbortException::reason).isEqualTo(AbortReason.VALIDATION);
        assertThat(LatchTxn.readLate(A, 10, 9)).hasMessage("aborted (validation): key 7 of rows was written at 10, "
            + "after this transaction's timestamp 9");
        assertThat(LatchTxn.readLate(A, 10, 10)).as("its own timestamp's write: none other has it").isNull();
        assertThat(LatchTxn.readLate(A, 10, 11)).isNull();
        assertThat(LatchTxn.readLate(A, 0, 1)).as("never written").isNull();
    }

    @Test
    void aReadShouldRaiseRtsToItsTimestampAndNeverLowerIt() {
        assertThat(LatchTxn.raisesRts(0, 5)).isTrue();
        assertThat(LatchTxn.raisesRts(4, 5)).isTrue();
        assertThat(LatchTxn.raisesRts(5, 5)).as("equal: nothing to raise").isFalse();
        assertThat(LatchTxn.raisesRts(6, 5)).as("a newer reader's stays").isFalse();
    }

    @Test
    void aWriteShouldBeRefusedWhenTheLineWasReadOrWrittenAfterItsTimestamp() {
        assertThat(LatchTxn.writeLate(A, 10, 0, 9)).as("read at 10, written at 9").isNotNull()
            .extracting(AbortException::reason).isEqualTo(AbortReason.VALIDATION);
        assertThat(LatchTxn.writeLate(A, 10, 0, 9)).hasMessageContaining("was read at 10 or written at 0, after "
            + "this transaction's timestamp 9");
        assertThat(LatchTxn.writeLate(A, 0, 10, 9)).as("written at 10 (a later write: no Thomas write rule)")
            .isNotNull();
        assertThat(LatchTxn.writeLate(A, 9, 9, 9)).as("its own read and write: allowed").isNull();
        assertThat(LatchTxn.writeLate(A, 8, 3, 9)).isNull();
        assertThat(LatchTxn.writeLate(A, 0, 0, 1)).isNull();
    }
}
