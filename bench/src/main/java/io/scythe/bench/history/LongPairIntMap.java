package io.scythe.bench.history;

import java.util.Arrays;

/** An open-addressing map from a pair of longs to a non-negative int, without boxing (millions of entries). */
final class LongPairIntMap {
    private static final int ABSENT = -1;
    private long[] firsts;
    private long[] seconds;
    private int[] values;
    private int mask;
    private int size;

    LongPairIntMap(final int expected) {
        final int capacity = Integer.highestOneBit(Math.max(16, expected) * 2 - 1) * 2;
        allocate(capacity);
    }

    private void allocate(final int capacity) {
        firsts = new long[capacity];
        seconds = new long[capacity];
        values = new int[capacity];
        Arrays.fill(values, ABSENT);
        mask = capacity - 1;
    }

    int size() {
        return size;
    }

    /** The value of {@code (first, second)}, or -1. */
    int get(final long first, final long second) {
        for (int i = slot(first, second); ; i = (i + 1) & mask) {
            final int v = values[i];
            if (v == ABSENT || (firsts[i] == first && seconds[i] == second)) {
                return v;
            }
        }
    }

    /** Maps {@code (first, second)} to {@code value} unless it has a value; returns that value, or -1 if inserted. */
    int putIfAbsent(final long first, final long second, final int value) {
        if (value < 0) {
            throw new IllegalArgumentException("value " + value + " (must be non-negative)");
        }
        for (int i = slot(first, second); ; i = (i + 1) & mask) {
            final int v = values[i];
            if (v == ABSENT) {
                firsts[i] = first;
                seconds[i] = second;
                values[i] = value;
                if (++size * 3 > values.length * 2) {
                    grow();
                }
                return ABSENT;
            }
            if (firsts[i] == first && seconds[i] == second) {
                return v;
            }
        }
    }

    private void grow() {
        final long[] oldFirsts = firsts;
        final long[] oldSeconds = seconds;
        final int[] oldValues = values;
        allocate(values.length * 2);
        for (int i = 0; i < oldValues.length; i++) {
            if (oldValues[i] != ABSENT) {
                int j = slot(oldFirsts[i], oldSeconds[i]);
                while (values[j] != ABSENT) {
                    j = (j + 1) & mask;
                }
                firsts[j] = oldFirsts[i];
                seconds[j] = oldSeconds[i];
                values[j] = oldValues[i];
            }
        }
    }

    private int slot(final long first, final long second) {
        long h = first * 0x9E3779B97F4A7C15L + second;
        h ^= h >>> 33;
        h *= 0xff51afd7ed558ccdL;
        h ^= h >>> 33;
        h *= 0xc4ceb9fe1a85ec53L;
        h ^= h >>> 33;
        return (int) h & mask;
    }
}
