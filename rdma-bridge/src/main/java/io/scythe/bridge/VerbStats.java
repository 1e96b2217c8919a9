package io.scythe.bridge;

import io.scythe.fabric.Opcode;

/**
 * Verbs and bytes posted through one bridge (one event loop), by opcode, and the RRPC calls its loop made (with the
 * bucket WRITEs that carried them, which go straight to a straw's queue pair, not through an {@link RdmaChannel});
 * single-writer, so plain fields. Readers on other threads see a recent value; {@link #copy()} on the loop itself
 * gives an exact one.
 */
public final class VerbStats {
    private final long[] verbs = new long[Opcode.values().length];
    private final long[] bytes = new long[Opcode.values().length];
    private long doorbells;
    private long failures;
    private long rpcCalls;
    /** RRPC calls by service: the high byte of the 16-bit RPC id (0x4c LogDB, 0x54 Takeout Lock, ...). */
    private final long[] rpcCallsByService = new long[256];
    private long rpcBytes;
    private long rpcBuckets;
    private long rpcBucketBytes;

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

    /** An RRPC call of {@code rpcId} with {@code payloadBytes} was made from this loop. */
    public void rpcCall(final int rpcId, final int payloadBytes) {
        rpcCalls++;
        rpcCallsByService[(rpcId >>> 8) & 0xff]++;
        rpcBytes += payloadBytes;
    }

    /** {@code buckets} RRPC request buckets of {@code bytes} in all were WRITten from this loop. */
    public void rpcBuckets(final int buckets, final long bytes) {
        rpcBuckets += buckets;
        rpcBucketBytes += bytes;
    }

    public long rpcCalls() {
        return rpcCalls;
    }

    /** RRPC calls to {@code service}, the high byte of their RPC ids. */
    public long rpcCalls(final int service) {
        return rpcCallsByService[service & 0xff];
    }

    /** Request payload bytes of the RRPC calls. */
    public long rpcBytes() {
        return rpcBytes;
    }

    /** RRPC request buckets WRITten (several calls share one under batching). */
    public long rpcBuckets() {
        return rpcBuckets;
    }

    public long rpcBucketBytes() {
        return rpcBucketBytes;
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
        rpcCalls += other.rpcCalls;
        for (int i = 0; i < rpcCallsByService.length; i++) {
            rpcCallsByService[i] += other.rpcCallsByService[i];
        }
        rpcBytes += other.rpcBytes;
        rpcBuckets += other.rpcBuckets;
        rpcBucketBytes += other.rpcBucketBytes;
        return this;
    }

    /** Subtracts {@code other}'s counts from this one (what was posted between two copies). */
    public VerbStats subtract(final VerbStats other) {
        for (int i = 0; i < verbs.length; i++) {
            verbs[i] -= other.verbs[i];
            bytes[i] -= other.bytes[i];
        }
        doorbells -= other.doorbells;
        failures -= other.failures;
        rpcCalls -= other.rpcCalls;
        for (int i = 0; i < rpcCallsByService.length; i++) {
            rpcCallsByService[i] -= other.rpcCallsByService[i];
        }
        rpcBytes -= other.rpcBytes;
        rpcBuckets -= other.rpcBuckets;
        rpcBucketBytes -= other.rpcBucketBytes;
        return this;
    }

    /** A copy of the counts now (call on the owning loop for an exact one). */
    public VerbStats copy() {
        return new VerbStats().add(this);
    }
}
