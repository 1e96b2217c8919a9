package io.scythe.txn.selcc;

import org.agrona.concurrent.UnsafeBuffer;

/**
 * An 8-byte buffer holding one word that a SELCC or SEL verb WRITEs (a timestamp, a version, a cleared CAS word):
 * one helper for the transactions on both substrates ({@link Sel2plTxn}, {@link LineCache}'s write-through) and
 * their recovery ({@link SelccRecovery}), which each made their own.
 */
final class WordBuffer {
    private WordBuffer() {
    }

    /** A new 8-byte buffer holding {@code v}. */
    static UnsafeBuffer of(final long v) {
        final UnsafeBuffer b = new UnsafeBuffer(new byte[8]);
        b.putLong(0, v);
        return b;
    }
}
