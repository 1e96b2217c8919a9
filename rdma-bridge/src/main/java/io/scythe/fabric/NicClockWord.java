package io.scythe.fabric;

/**
 * The word through which every NIC shows peers its clock: a one-sided READ of these 8 bytes, at {@link #ADDRESS} with
 * {@link #RKEY}, on any node returns that node's NIC clock at the moment the READ executes there, in native byte order
 * (as the atomics' results). It travels the fabric and is timed as a READ of NIC device memory (no PCIe to host
 * memory: the clock is on the NIC). Aurogon's 2LClock synchronises NIC clocks by reading other NICs' clocks over RDMA
 * (§5.2.2); with {@code Nic#nicClock} and completion timestamps a reader also knows when its read left and came back.
 *
 * <pre>
 *   0                                                             63
 *  +----------------------------------------------------------------+
 *  |                    NIC clock, ns (signed 64)                   |   READ only: WRITE and atomics fail
 *  +----------------------------------------------------------------+   REMOTE_ACCESS_ERROR, as any other
 *                                                                         length or address with this rkey
 * </pre>
 *
 * No registered region ever has this rkey: the emulated providers never hand out rkey 0.
 */
public final class NicClockWord {
    /** The rkey peers present to read a NIC's clock. */
    public static final int RKEY = 0;
    /** The clock word's address: below every address a region is registered at, aligned for an 8-byte read. */
    public static final long ADDRESS = 0x0000_0FFF_FFE0_0000L;
    /** Bytes of the word. */
    public static final int LENGTH = Long.BYTES;
    /** Name of the word as a {@link RemoteRegion}. */
    public static final String REGION_NAME = "nic-clock";

    private NicClockWord() {
    }

    /** The clock word of {@code node}'s NIC, to READ with {@code RdmaChannel} or a {@link WorkRequest}. */
    public static RemoteRegion of(final String node) {
        return new RemoteRegion(node, REGION_NAME, ADDRESS, LENGTH, RKEY, MemoryKind.DEVICE);
    }

    /** Whether a one-sided verb with {@code rkey} is addressed to the clock word rather than to a region. */
    public static boolean addressedBy(final int rkey) {
        return rkey == RKEY;
    }

    /** Whether {@code remoteAddress} with {@code rkey} is the clock word itself. */
    public static boolean isClockWord(final long remoteAddress, final int rkey) {
        return rkey == RKEY && remoteAddress == ADDRESS;
    }

    /**
     * What a NIC answers a one-sided verb addressed to its clock word: {@link WcStatus#SUCCESS} for an 8-byte READ of
     * the word, else {@link WcStatus#REMOTE_ACCESS_ERROR} (the word is read-only and has no other bytes).
     */
    public static WcStatus check(final Opcode opcode, final long remoteAddress, final int length) {
        return opcode == Opcode.READ && remoteAddress == ADDRESS && length == LENGTH
            ? WcStatus.SUCCESS : WcStatus.REMOTE_ACCESS_ERROR;
    }
}
