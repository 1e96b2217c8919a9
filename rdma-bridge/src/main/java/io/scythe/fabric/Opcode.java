package io.scythe.fabric;

/**
 * The verbs a {@link WorkRequest} can carry, and the kinds of {@link CompletionHandler completion} a
 * {@link CompletionQueue} reports. One-sided verbs (READ, WRITE, CAS, FAA) are executed by the responder's NIC
 * without its CPU; SEND consumes a receive buffer the responder posted with {@link QueuePair#postRecv}, whose
 * arrival is reported to the responder as a {@link #RECV} completion.
 */
public enum Opcode {
    READ(0, true, false),
    WRITE(1, false, false),
    COMPARE_AND_SWAP(2, true, true),
    FETCH_AND_ADD(3, true, true),
    SEND(4, false, false),
    /** Completion only: a SEND from the peer landed in one of this end's posted receive buffers. */
    RECV(5, false, false);

    /** Width in bytes of the word the atomic verbs operate on; it must be aligned to this width. */
    public static final int ATOMIC_WIDTH = 8;

    private static final Opcode[] BY_CODE = values();

    private final int code;
    private final boolean returnsData;
    private final boolean atomic;

    Opcode(final int code, final boolean returnsData, final boolean atomic) {
        this.code = code;
        this.returnsData = returnsData;
        this.atomic = atomic;
    }

    /** Stable wire code (used by the tcp provider's frames). */
    public int code() {
        return code;
    }

    /** True when the responder sends data back into the local buffer (READ, and the old value of atomics). */
    public boolean returnsData() {
        return returnsData;
    }

    public boolean isAtomic() {
        return atomic;
    }

    public static Opcode fromCode(final int code) {
        if (code < 0 || code >= BY_CODE.length) {
            throw new IllegalArgumentException("unknown opcode code=" + code);
        }
        return BY_CODE[code];
    }
}
