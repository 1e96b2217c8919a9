package io.scythe.txn.rcc;

/**
 * WAIT-DIE's rule, as RCC's WAITDIE applies it on a conflict (§4.3; RCC does not state the direction, so this is the
 * classic one of Rosenkrantz et al.): a requester <b>older</b> than the holder (smaller timestamp) <b>waits</b>; a
 * requester <b>younger</b> than the holder (larger timestamp) <b>dies</b> (aborts). Waits then only go from older to
 * younger transactions, so they never form a cycle.
 */
public final class WaitDie {
    private WaitDie() {
    }

    /** Whether a requester with timestamp {@code requester} may wait for the holder with timestamp {@code holder}. */
    public static boolean mayWait(final long requester, final long holder) {
        if (requester == 0 || holder == 0) {
            throw new IllegalArgumentException("timestamp 0 means free: requester " + requester + ", holder "
                + holder);
        }
        return requester < holder;
    }
}
