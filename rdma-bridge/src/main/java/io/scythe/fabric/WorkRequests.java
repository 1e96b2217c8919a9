package io.scythe.fabric;

import org.agrona.DirectBuffer;
import org.agrona.MutableDirectBuffer;

/** The checks every provider makes of a work request at post time (malformed requests are never posted). */
public final class WorkRequests {
    private WorkRequests() {
    }

    /** Whether {@code wr} is well formed for a queue pair with {@code options}. */
    public static boolean valid(final WorkRequest wr, final QpOptions options) {
        final int len = wr.length();
        if (len < 0 || len > options.maxMessageBytes()) {
            return false;
        }
        final DirectBuffer buffer = wr.localBuffer();
        switch (wr.opcode()) {
            case READ:
            case COMPARE_AND_SWAP:
            case FETCH_AND_ADD:
                if (!(buffer instanceof MutableDirectBuffer)) {
                    return false;
                }
                break;
            case WRITE:
            case SEND:
                if (len > 0 && buffer == null) {
                    return false;
                }
                if (wr.inline() && len > options.maxInlineBytes()) {
                    return false;
                }
                break;
            default:
                return false;
        }
        if (wr.opcode().isAtomic() && len != Opcode.ATOMIC_WIDTH) {
            return false;
        }
        return buffer == null || (wr.localOffset() >= 0 && wr.localOffset() <= buffer.capacity() - len);
    }
}
