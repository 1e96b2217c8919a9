package io.scythe.txn.aurogon;

/**
 * Aurogon's 64-bit timestamps (§4.1: "the local clock value packed with the coordinator's server ID and thread ID"):
 * unique in the cluster, ordered by clock first. The paper leaves the bit layout open; ours:
 * <pre>
 *   63    62 ........................ 16   15 ....... 8   7 ........ 0
 *   0     clock (47 bits, ns + BIAS_NS)    server id      loop id
 * </pre>
 * 47 bits of nanoseconds last 39 hours from the clock's zero; {@link #BIAS_NS} (about 4.3 s) keeps a clock that an
 * injected offset puts slightly below zero representable. Every timestamp is above {@code ObjectLayout.LOADED_VERSION}
 * (0), the write timestamp a loaded record's first version gets.
 */
public final class AurogonTimestamp {
    public static final int ID_BITS = 16;
    public static final int MAX_SERVER = 0xff;
    public static final int MAX_LOOP = 0xff;
    public static final long BIAS_NS = 1L << 32;
    public static final long MAX_CLOCK = (1L << (63 - ID_BITS)) - 1;

    private AurogonTimestamp() {
    }

    /**
     * The timestamp of clock reading {@code clockNs} on loop {@code loop} of server {@code server}.
     *
     * @throws IllegalArgumentException when an id is out of its 8 bits or the clock out of the 47-bit range
     */
    public static long pack(final long clockNs, final int server, final int loop) {
        if (server < 0 || server > MAX_SERVER || loop < 0 || loop > MAX_LOOP) {
            throw new IllegalArgumentException("server id " + server + " and loop id " + loop
                + " must each be within [0, 255]");
        }
        final long clock = clockNs + BIAS_NS;
        // Clock 0 is refused: server 0's loop 0 would pack it to 0, LOADED_VERSION, which no timestamp may equal.
        if (clock < 1 || clock > MAX_CLOCK) {
            throw new IllegalArgumentException("clock reading " + clockNs + " ns is outside Aurogon's 47-bit range ["
                + (1 - BIAS_NS) + ", " + (MAX_CLOCK - BIAS_NS) + "]");
        }
        return clock << ID_BITS | (long) server << 8 | loop;
    }

    /** The clock reading a timestamp was made from (ns, as given to {@link #pack}). */
    public static long clockNs(final long ts) {
        return (ts >>> ID_BITS) - BIAS_NS;
    }

    public static int server(final long ts) {
        return (int) (ts >>> 8) & 0xff;
    }

    public static int loop(final long ts) {
        return (int) ts & 0xff;
    }

    /** The smallest timestamp of this loop strictly above {@code last} and at or above {@code clockNs}. */
    static long next(final long last, final long clockNs, final int server, final int loop) {
        final long fresh = pack(clockNs, server, loop);
        return fresh > last ? fresh : pack(clockNs(last) + 1, server, loop);
    }

    public static String toString(final long ts) {
        return clockNs(ts) + "ns@" + server(ts) + "/" + loop(ts);
    }
}
