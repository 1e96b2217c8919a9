package io.scythe.tso;

/**
 * Where the TSO service keeps its counter: one 8-byte word at offset 0 of a region of NIC device memory
 * ({@link io.scythe.fabric.MemoryKind#DEVICE}) on the TSO node, advanced by RDMA FAA (Scythe §4.5 (1): ~110 Mops,
 * no PCIe transaction). The counter holds the next timestamp to hand out; timestamps start at 1.
 */
public final class TsoLayout {
    public static final String REGION = "tso.counter";
    public static final int REGION_BYTES = 64;
    public static final int COUNTER_OFFSET = 0;
    /** RPC id of a TSO proxy's fetch: payload u32 count; reply u64 first timestamp of the range. */
    public static final int RPC_FETCH = 0x7501;
    /** Timestamps stay below 2^62: the top bits are left to protocols (busy flags, tombstones). */
    public static final long MAX_TIMESTAMP = 1L << 62;

    private TsoLayout() {
    }

    /** Event-bus address where the TSO service on {@code node} says where its counter is. */
    public static String whereAddress(final String node) {
        return "scythe.tso." + node + ".where";
    }

    /** Event-bus address where an issuer named {@code issuer} reports the largest timestamp it handed out. */
    public static String highWaterAddress(final String issuer) {
        return "scythe.tso.issuer." + issuer + ".high-water";
    }
}
