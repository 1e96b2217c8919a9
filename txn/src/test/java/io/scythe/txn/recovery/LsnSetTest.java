package io.scythe.txn.recovery;

import org.junit.jupiter.api.Test;

import java.util.Random;
import java.util.TreeSet;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

class LsnSetTest {
    /** Random adds and removes (and removes of absent numbers) agree with a TreeSet at every step. */
    @Test
    void agreesWithTreeSet() {
        final Random random = new Random(7);
        for (int round = 0; round < 50; round++) {
            final LsnSet set = new LsnSet();
            final TreeSet<Long> expected = new TreeSet<>();
            long next = 1;
            for (int step = 0; step < 2_000; step++) {
                final int op = random.nextInt(10);
                if (op < 5) {
                    set.add(next);
                    expected.add(next);
                    next++;
                } else if (op < 9 && !expected.isEmpty()) {
                    // mostly recent ones: the oldest linger, as a record in doubt does
                    final long victim = Math.max(1, next - 1 - random.nextInt(round % 2 == 0 ? 8 : 400));
                    set.remove(victim);
                    expected.remove(victim);
                } else {
                    final long absent = next + random.nextInt(5);
                    set.remove(absent);
                }
                assertEquals(expected.size(), set.size());
                assertEquals(expected.isEmpty(), set.isEmpty());
                if (!expected.isEmpty()) {
                    assertEquals(expected.first(), set.first());
                }
            }
        }
    }

    /** One number never removed keeps the low water down while the rest come and go; the ring stays small. */
    @Test
    void stuckHeadDoesNotGrowWithoutBound() throws Exception {
        final LsnSet set = new LsnSet();
        set.add(1);
        for (long lsn = 2; lsn < 100_000; lsn++) {
            set.add(lsn);
            set.remove(lsn);
        }
        assertEquals(1, set.size());
        assertEquals(1, set.first());
        final java.lang.reflect.Field ring = LsnSet.class.getDeclaredField("ring");
        ring.setAccessible(true);
        assertEquals(16, ((long[]) ring.get(set)).length);
        set.remove(1);
        assertEquals(0, set.size());
    }

    @Test
    void refusesANumberNotAboveTheLast() {
        final LsnSet set = new LsnSet();
        set.add(5);
        assertThrows(IllegalArgumentException.class, () -> set.add(5));
        assertThrows(IllegalArgumentException.class, () -> set.add(3));
        assertEquals(1, set.size());
    }
}
