package io.scythe.txn.recovery;

import java.util.Arrays;

/**
 * The sequence numbers of a loop's unfinished redo records ({@link RedoLog}): added in increasing order, removed in
 * any order, the smallest asked for (the low water). A ring of the numbers added, in order, with the removed ones
 * marked and dropped once they reach its head, where a {@code TreeSet<Long>} boxed each number and built a tree entry
 * per commit. Tombstones behind a record left unfinished for long (in doubt) are compacted away once they outnumber
 * the live numbers, so memory stays proportional to what is unfinished. Not thread-safe: one loop's.
 */
final class LsnSet {
    /** The numbers in order, from {@code head}, {@code length} of them; a removed one is negated. */
    private long[] ring = new long[16];
    private int head;
    private int length;
    private int live;

    /** Adds {@code lsn} (positive, above every number added before). */
    void add(final long lsn) {
        if (lsn <= 0 || length > 0 && lsn <= Math.abs(at(length - 1))) {
            throw new IllegalArgumentException("sequence number " + lsn + " is not above the last one added");
        }
        if (length == ring.length) {
            if (length - live > live) {
                compact();
            } else {
                grow();
            }
        }
        ring[(head + length) & (ring.length - 1)] = lsn;
        length++;
        live++;
    }

    /** Removes {@code lsn}: nothing when it is not here (a record released twice). */
    void remove(final long lsn) {
        int lo = 0;
        int hi = length - 1;
        while (lo <= hi) { // the ring is sorted by absolute value
            final int mid = (lo + hi) >>> 1;
            final long v = Math.abs(at(mid));
            if (v < lsn) {
                lo = mid + 1;
            } else if (v > lsn) {
                hi = mid - 1;
            } else {
                final int i = (head + mid) & (ring.length - 1);
                if (ring[i] > 0) {
                    ring[i] = -ring[i];
                    live--;
                    dropRemovedHead();
                }
                return;
            }
        }
    }

    boolean isEmpty() {
        return live == 0;
    }

    int size() {
        return live;
    }

    /** The smallest number here; only when not empty. */
    long first() {
        if (live == 0) {
            throw new java.util.NoSuchElementException("no unfinished record");
        }
        return ring[head];
    }

    private long at(final int i) {
        return ring[(head + i) & (ring.length - 1)];
    }

    private void dropRemovedHead() {
        while (length > 0 && ring[head] < 0) {
            head = (head + 1) & (ring.length - 1);
            length--;
        }
        if (length == 0) {
            head = 0;
        }
    }

    private void grow() {
        final long[] bigger = new long[ring.length * 2];
        for (int i = 0; i < length; i++) {
            bigger[i] = at(i);
        }
        ring = bigger;
        head = 0;
    }

    private void compact() {
        final long[] kept = new long[ring.length];
        int n = 0;
        for (int i = 0; i < length; i++) {
            final long v = at(i);
            if (v > 0) {
                kept[n++] = v;
            }
        }
        Arrays.fill(ring, 0);
        ring = kept;
        head = 0;
        length = n;
    }
}
