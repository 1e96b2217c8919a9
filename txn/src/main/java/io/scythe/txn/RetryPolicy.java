package io.scythe.txn;

/**
 * A protocol's choice of how its next attempt begins after an abort (the hint {@link Protocol#begin} gets), and what
 * it learns from a commit. The back-off before a retry is the coordinator's, the same for every protocol.
 * One per coordinator; loop-confined.
 */
public interface RetryPolicy {
    /** The hint for the attempt after {@code abort}, which ended an attempt begun with {@code hint}. */
    boolean nextHint(boolean hint, AbortException abort);

    /** A transaction committed on its attempt {@code attempt} (1 for the first). */
    void committed(int attempt);

    /** The policy of a protocol that takes no hint: every attempt begins the same way. */
    RetryPolicy NO_HINT = new RetryPolicy() {
        @Override
        public boolean nextHint(final boolean hint, final AbortException abort) {
            return false;
        }

        @Override
        public void committed(final int attempt) {
        }
    };
}
