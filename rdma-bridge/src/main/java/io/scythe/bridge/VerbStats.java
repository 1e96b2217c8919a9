package io.scythe.bridge;

import io.scythe.fabric.Opcode;

/**
 * Verbs and bytes posted through one bridge (one event loop), by opcode; single-writer, so plain fields. Readers on
 * other threads see a recent value, which is all a benchmark needs.
 */
public final class VerbStats {
    private final long[] verbs = new long[Opcode.values().length];
    private final long[] bytes = new long[Opcode.values().length];
    private long doorbells;
    private long failures;

    void posted(final Opcode opcode, final int length) {
        verbs[opcode.ordinal()]++;
        bytes[opcode.ordinal()] += length;
    }

    void doorbell() {
        doorbells++;
    }

    void failed() {
        failures++;
    }

    public long verbs(final Opcode opcode) {
        return verbs[opcode.ordinal()];
    }

    public long bytes(final Opcode opcode) {
        return bytes[opcode.ordinal()];
    }

    public long totalVerbs() {
        long sum = 0;
        for (final long v : verbs) {
            sum += v;
        }
        return sum;
    }

    public long totalBytes() {
        long sum = 0;
        for (final long b : bytes) {
            sum += b;
        }
        return sum;
    }

    public long doorbells() {
        return doorbells;
    }

    public long failures() {
        return failures;
    }

    /** Adds {@code other}'s counts to this one (to sum the bridges of several event loops). */
    public VerbStats add(final VerbStats other) {
        for (int i = 0; i < verbs.length; i++) {
            verbs[i] += other.verbs[i];
            bytes[i] += other.bytes[i];
        }
        doorbells += other.doorbells;
        failures += other.failures;
        return this;
    }
}
