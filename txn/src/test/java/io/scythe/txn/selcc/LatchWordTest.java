package io.scythe.txn.selcc;

import org.junit.jupiter.api.Test;

import java.util.SplittableRandom;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** The latch word's fields and the FAA deltas of SELCC's transitions: none may borrow from or carry into another field. */
class LatchWordTest {

    @Test
    void shouldPlaceHolderInTopSixBitsAndReadersBelow() {
        assertThat(LatchWord.exclusive(1)).isEqualTo(1L << 58);
        assertThat(LatchWord.exclusive(58)).isEqualTo(58L << 58);
        assertThat(LatchWord.holder(LatchWord.exclusive(58))).isEqualTo(58);
        assertThat(LatchWord.bit(1)).isEqualTo(1L);
        assertThat(LatchWord.bit(58)).isEqualTo(1L << 57);
        assertThat(LatchWord.readers(LatchWord.exclusive(58) | LatchWord.bit(58))).isEqualTo(1L << 57);
        assertThat(LatchWord.toString(LatchWord.exclusive(3) | LatchWord.bit(1) | LatchWord.bit(5)))
            .isEqualTo("(3, {1,5})");
    }

    @Test
    void shouldRefuseMoreThan58Participants() {
        assertThatThrownBy(() -> LatchWord.bit(59)).isInstanceOf(IllegalArgumentException.class)
            .hasMessageContaining("at most 58 participants");
        assertThatThrownBy(() -> LatchWord.exclusive(0)).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> LatchWord.handover(1, 59)).isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void shouldHandOverBothWaysWithoutTouchingTransientReaderBits() {
        // A transient reader bit of 7 (its FAA landed, its undo not yet) and the top participant's bit.
        final long transient7 = LatchWord.bit(7) | LatchWord.bit(58);
        for (int from = 1; from <= 58; from++) {
            for (int to = 1; to <= 58; to++) {
                if (from == to) {
                    continue;
                }
                final long word = LatchWord.exclusive(from) | transient7;
                final long after = LatchWord.add(word, LatchWord.handover(from, to));
                assertThat(LatchWord.holder(after)).as("%d -> %d", from, to).isEqualTo(to);
                assertThat(LatchWord.readers(after)).as("%d -> %d", from, to).isEqualTo(transient7);
            }
        }
    }

    @Test
    void shouldDowngradeToBothReaders() {
        final long word = LatchWord.exclusive(58) | LatchWord.bit(3); // 3's transient bit: its undo is in flight
        final long after = LatchWord.add(word, LatchWord.downgrade(58, 1));
        assertThat(LatchWord.holder(after)).isZero();
        assertThat(LatchWord.readers(after)).isEqualTo(LatchWord.bit(58) | LatchWord.bit(1) | LatchWord.bit(3));
        assertThat(LatchWord.add(after, LatchWord.unshare(3))).isEqualTo(LatchWord.bit(58) | LatchWord.bit(1));
        assertThatThrownBy(() -> LatchWord.downgrade(4, 4)).isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void shouldDowngradeToEveryRememberedReaderInOneFaa() {
        final long word = LatchWord.exclusive(58) | LatchWord.bit(3); // 3's transient bit: its undo is in flight
        final long readers = LatchWord.bit(1) | LatchWord.bit(7) | LatchWord.bit(57);
        final long after = LatchWord.add(word, LatchWord.downgradeAll(58, readers));
        assertThat(LatchWord.holder(after)).isZero();
        assertThat(LatchWord.readers(after)).isEqualTo(LatchWord.bit(58) | readers | LatchWord.bit(3));
        assertThat(LatchWord.downgradeAll(5, LatchWord.bit(2))).isEqualTo(LatchWord.downgrade(5, 2));
        assertThatThrownBy(() -> LatchWord.downgradeAll(4, 0)).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> LatchWord.downgradeAll(4, LatchWord.bit(4) | LatchWord.bit(1)))
            .isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> LatchWord.downgradeAll(4, LatchWord.exclusive(1)))
            .isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void shouldUndoSharedWhenAnExclusiveHolderShows() {
        final long word = LatchWord.exclusive(9);
        final long previous = word; // what the FAA returned
        final long after = LatchWord.add(word, LatchWord.share(2));
        assertThat(LatchWord.shareFailed(previous)).isTrue();
        assertThat(LatchWord.add(after, LatchWord.unshare(2))).isEqualTo(word);
        assertThat(LatchWord.targets(previous, 2)).isEqualTo(LatchWord.bit(9));
        assertThat(LatchWord.shareFailed(LatchWord.bit(4))).isFalse();
    }

    @Test
    void shouldTargetOtherReadersForAnExclusiveAcquire() {
        final long word = LatchWord.bit(1) | LatchWord.bit(2) | LatchWord.bit(40);
        assertThat(LatchWord.targets(word, 2)).isEqualTo(LatchWord.bit(1) | LatchWord.bit(40));
    }

    /** Random walks of legal transitions: the word always equals the model's (holder, readers), nothing borrowed. */
    @Test
    void shouldKeepFieldsExactUnderRandomLegalTransitions() {
        final SplittableRandom random = new SplittableRandom(21);
        for (int run = 0; run < 200; run++) {
            long word = LatchWord.FREE;
            int holder = 0;
            long readers = 0;
            for (int step = 0; step < 500; step++) {
                final int p = 1 + random.nextInt(58);
                final long bit = 1L << (p - 1);
                final int op = random.nextInt(5);
                if (op == 0 && (readers & bit) == 0) { // S acquire (or a transient bit while X is held)
                    word = LatchWord.add(word, LatchWord.share(p));
                    readers |= bit;
                } else if (op == 1 && (readers & bit) != 0) { // S release or undo
                    word = LatchWord.add(word, LatchWord.unshare(p));
                    readers &= ~bit;
                } else if (op == 2 && holder == 0 && readers == 0) { // X by CAS on the free word
                    assertThat(word).isEqualTo(LatchWord.FREE);
                    word = LatchWord.exclusive(p);
                    holder = p;
                } else if (op == 3 && holder != 0 && holder != p) { // case 1 handover
                    word = LatchWord.add(word, LatchWord.handover(holder, p));
                    holder = p;
                } else if (op == 4 && holder != 0) { // X release, or case 2 downgrade to a reader without a bit
                    if (holder != p && (readers & bit) == 0 && (readers & (1L << (holder - 1))) == 0) {
                        word = LatchWord.add(word, LatchWord.downgrade(holder, p));
                        readers |= bit | (1L << (holder - 1));
                    } else {
                        word = LatchWord.add(word, LatchWord.unexclusive(holder));
                    }
                    holder = 0;
                }
                assertThat(LatchWord.holder(word)).isEqualTo(holder);
                assertThat(LatchWord.readers(word)).isEqualTo(readers);
            }
        }
    }

    @Test
    void shouldPackGlobalPointersAndRefuseOutOfRange() {
        final long p = GlobalPointer.of(7, 123_456_789L);
        assertThat(GlobalPointer.node(p)).isEqualTo(7);
        assertThat(GlobalPointer.offset(p)).isEqualTo(123_456_789L);
        assertThatThrownBy(() -> GlobalPointer.of(7, 1L << 48)).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> GlobalPointer.of(-1, 0)).isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void shouldWidenDirtyBoundsToCoverEveryWrite() {
        long b = DirtyBounds.CLEAN;
        b = DirtyBounds.widen(b, 100, 8);
        assertThat(DirtyBounds.lower(b)).isEqualTo(100);
        assertThat(DirtyBounds.higher(b)).isEqualTo(108);
        b = DirtyBounds.widen(b, 40, 4);
        b = DirtyBounds.widen(b, 500, 16);
        b = DirtyBounds.widen(b, 60, 0);
        assertThat(DirtyBounds.lower(b)).isEqualTo(40);
        assertThat(DirtyBounds.higher(b)).isEqualTo(516);
        assertThat(DirtyBounds.length(b)).isEqualTo(476);
    }

    @Test
    void shouldRefuseBadLineSizes() {
        assertThat(GclDescriptor.dataBytes(GclDescriptor.DEFAULT_LINE_BYTES)).isEqualTo(2048 - 24);
        assertThatThrownBy(() -> GclDescriptor.checkLineBytes(2047)).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> GclDescriptor.checkLineBytes(16)).isInstanceOf(IllegalArgumentException.class);
    }
}
