package io.scythe.txn.lotus;

import io.scythe.txn.lotus.LockTable.Result;
import org.junit.jupiter.api.Test;

import java.util.SplittableRandom;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class LockTableTest {
    private static final long A = 0x1234_5678_9abc_d001L;
    private static final long B = 0x0fed_cba9_8765_4002L;

    private static int counter(final LockTable t, final long key) {
        return (int) (t.slotWord(key) & 0xff);
    }

    @Test
    void shouldEncodeSlotsAsFingerprintAndCounter() {
        final LockTable t = new LockTable(16);
        assertThat(t.slotWord(A)).isZero();
        assertThat(t.acquire(A, true, 0, 1)).isEqualTo(Result.GRANTED);
        assertThat(t.slotWord(A)).isEqualTo(LockTable.fingerprint(A) << 8 | LockTable.WRITE);
        assertThat(LockTable.fingerprint(A)).isLessThan(1L << 56).isNotZero();
        assertThat(t.release(A, 1)).isTrue();
        assertThat(t.slotWord(A)).isZero(); // free again: the all-zero word
        assertThat(t.acquire(A, false, 0, 2)).isEqualTo(Result.GRANTED);
        assertThat(t.acquire(A, false, 1, 3)).isEqualTo(Result.GRANTED);
        assertThat(counter(t, A)).isEqualTo(4); // +2 per reader
        assertThat(t.holders(A)).extracting(LockTable.Hold::txn).containsExactly(2L, 3L);
        assertThat(t.checkInvariant()).isNull();
    }

    @Test
    void shouldFailOnEveryConflictWithoutWaitingOrChangingTheWord() {
        final LockTable t = new LockTable(16);
        assertThat(t.acquire(A, true, 0, 1)).isEqualTo(Result.GRANTED);
        final long written = t.slotWord(A);
        assertThat(t.acquire(A, true, 0, 2)).isEqualTo(Result.CONFLICT); // write-write
        assertThat(t.acquire(A, false, 1, 3)).isEqualTo(Result.CONFLICT); // write-read
        assertThat(t.slotWord(A)).isEqualTo(written);
        t.release(A, 1);
        assertThat(t.acquire(A, false, 0, 4)).isEqualTo(Result.GRANTED);
        assertThat(t.acquire(A, true, 0, 5)).isEqualTo(Result.CONFLICT); // read-write
        assertThat(counter(t, A)).isEqualTo(2);
        assertThat(t.holders(A)).containsExactly(new LockTable.Hold(4, 0, false));
        assertThat(t.checkInvariant()).isNull();
    }

    @Test
    void shouldMakeAcquiresAndReleasesIdempotentThroughTheLockState() {
        final LockTable t = new LockTable(16);
        assertThat(t.acquire(A, false, 1, 7)).isEqualTo(Result.GRANTED);
        assertThat(t.acquire(A, false, 1, 7)).isEqualTo(Result.HELD_ALREADY); // a retransmitted request
        assertThat(counter(t, A)).isEqualTo(2);
        assertThat(t.acquire(A, true, 1, 8)).isEqualTo(Result.CONFLICT);
        assertThat(t.acquire(B, true, 1, 7)).isEqualTo(Result.GRANTED);
        assertThat(t.acquire(B, true, 1, 7)).isEqualTo(Result.HELD_ALREADY);
        assertThat(t.acquire(B, false, 1, 7)).isEqualTo(Result.HELD_ALREADY); // a write lock covers the read
        assertThat(counter(t, B)).isEqualTo(1);
        assertThat(t.release(A, 7)).isTrue();
        assertThat(t.release(A, 7)).isFalse(); // released already: nothing changes
        assertThat(t.release(B, 99)).isFalse(); // not its holder
        assertThat(counter(t, B)).isEqualTo(1);
        assertThat(t.checkInvariant()).isNull();
    }

    @Test
    void shouldUpgradeOnlyTheSoleReader() {
        final LockTable t = new LockTable(16);
        t.acquire(A, false, 0, 1);
        t.acquire(A, false, 0, 2);
        assertThat(t.acquire(A, true, 0, 1)).isEqualTo(Result.CONFLICT); // another reader
        t.release(A, 2);
        assertThat(t.acquire(A, true, 0, 1)).isEqualTo(Result.GRANTED);
        assertThat(counter(t, A)).isEqualTo(LockTable.WRITE);
        assertThat(t.holders(A)).containsExactly(new LockTable.Hold(1, 0, true));
        assertThat(t.release(A, 1)).isTrue();
        assertThat(t.slotWord(A)).isZero();
        assertThat(t.checkInvariant()).isNull();
    }

    @Test
    void shouldFailWhenTheBucketIsFull() {
        final LockTable t = new LockTable(1); // one bucket of 8 slots
        for (int i = 0; i < LockTable.SLOTS_PER_BUCKET; i++) {
            assertThat(t.acquire(1000 + i, i % 2 == 0, 0, i + 1)).isEqualTo(Result.GRANTED);
        }
        assertThat(t.acquire(2000, false, 0, 50)).isEqualTo(Result.BUCKET_FULL);
        assertThat(t.acquire(2000, true, 0, 50)).isEqualTo(Result.BUCKET_FULL);
        assertThat(t.acquire(1001, false, 0, 51)).isEqualTo(Result.GRANTED); // a matching slot still takes readers
        t.release(1003, 4);
        assertThat(t.acquire(2000, true, 0, 50)).isEqualTo(Result.GRANTED); // the freed slot
        assertThat(t.checkInvariant()).isNull();
    }

    @Test
    void shouldFailARead127ReadersCannotCount() {
        final LockTable t = new LockTable(4);
        for (int r = 1; r <= 127; r++) {
            assertThat(t.acquire(A, false, r % 3, r)).isEqualTo(Result.GRANTED);
        }
        assertThat(counter(t, A)).isEqualTo(LockTable.MAX_COUNTER);
        assertThat(t.acquire(A, false, 0, 128)).isEqualTo(Result.OVERFLOW);
        assertThat(counter(t, A)).isEqualTo(LockTable.MAX_COUNTER);
        t.release(A, 5);
        assertThat(t.acquire(A, false, 0, 128)).isEqualTo(Result.GRANTED);
        assertThat(t.checkInvariant()).isNull();
    }

    @Test
    void shouldReleaseEveryLockOfADeadComputeNodeFromTheLockState() {
        final LockTable t = new LockTable(64);
        t.acquire(A, false, 2, 1);
        t.acquire(A, false, 3, 2);
        t.acquire(B, true, 2, 1);
        t.acquire(B + 1, true, 3, 2);
        assertThat(t.releaseAllOf(2)).isEqualTo(2);
        assertThat(counter(t, A)).isEqualTo(2);
        assertThat(t.slotWord(B)).isZero();
        assertThat(t.holders(B + 1)).containsExactly(new LockTable.Hold(2, 3, true));
        assertThat(t.releaseAllOf(2)).isZero();
        assertThat(t.checkInvariant()).isNull();
    }

    @Test
    void shouldKeepTheLockWordInvariantUnderRandomOperations() {
        final LockTable t = new LockTable(2); // 16 slots for 40 keys: full buckets happen
        final SplittableRandom random = new SplittableRandom(19);
        final java.util.Map<Long, java.util.Set<Long>> held = new java.util.HashMap<>();
        for (int step = 0; step < 20_000; step++) {
            final long key = 500 + random.nextInt(40);
            final long txn = 1 + random.nextInt(30);
            if (random.nextInt(3) == 0) {
                final boolean had = held.getOrDefault(txn, java.util.Set.of()).contains(key);
                assertThat(t.release(key, txn)).isEqualTo(had);
                if (had) {
                    held.get(txn).remove(key);
                }
            } else if (t.acquire(key, random.nextBoolean(), (int) (txn % 4), txn).granted()) {
                held.computeIfAbsent(txn, x -> new java.util.HashSet<>()).add(key);
            }
            if (step % 500 == 0) {
                assertThat(t.checkInvariant()).isNull();
            }
        }
        assertThat(t.checkInvariant()).isNull();
    }

    @Test
    void shouldRefuseASizeThatIsNoPowerOfTwo() {
        assertThatThrownBy(() -> new LockTable(3)).isInstanceOf(IllegalArgumentException.class)
            .hasMessageContaining("power of two");
        assertThat(LockTable.ofBytes(LockTable.DEFAULT_BYTES).buckets()).isEqualTo(1 << 19);
    }
}
