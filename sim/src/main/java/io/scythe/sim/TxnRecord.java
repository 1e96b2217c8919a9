package io.scythe.sim;

/**
 * How one client transaction of a simulated run ended, in virtual time: what the determinism check hashes and what
 * {@link HistoryListener}s receive.
 */
public record TxnRecord(int client, long sequence, String type, Kind kind, long result, long commitTs, int attempts,
                        long latencyNs, long beganNs, long finishedNs) {
    /**
     * GAVE_UP: aborted --max-attempts times (once with {@code --on-abort new}: {@link io.scythe.txn.OnAbort});
     * OUTCOME_UNKNOWN: committed or in doubt when its loop gave up; NOT_SERVED:
     * not committed by a loop that gave up; VERB_FAILED: aborted by an injected verb failure, nothing committed.
     */
    public enum Kind { COMMITTED, ROLLED_BACK, GAVE_UP, ERROR, OUTCOME_UNKNOWN, NOT_SERVED, VERB_FAILED }

    /** Folds this record into a running 64-bit hash (FNV-1a over its fields). */
    long mixInto(final long hash) {
        long h = hash;
        h = mix(h, client);
        h = mix(h, sequence);
        h = mix(h, type.hashCode());
        h = mix(h, kind.ordinal());
        h = mix(h, result);
        h = mix(h, commitTs);
        h = mix(h, attempts);
        h = mix(h, latencyNs);
        return mix(h, finishedNs);
    }

    private static long mix(final long hash, final long value) {
        long h = hash;
        for (int i = 0; i < 8; i++) {
            h ^= (value >>> (i * 8)) & 0xff;
            h *= 0x100000001b3L;
        }
        return h;
    }
}
