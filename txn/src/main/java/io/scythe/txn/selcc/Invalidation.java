package io.scythe.txn.selcc;

import org.agrona.DirectBuffer;
import org.agrona.concurrent.UnsafeBuffer;

import java.nio.charset.StandardCharsets;

/**
 * The invalidation message between participants (SELCC §5.1, PeerRd / PeerWr) and its reply, sent over
 * {@code CnPeers} (RRPC between compute nodes) to the loop that holds the line.
 *
 * <pre>
 *  request:  0 kind (u8: 1 PeerRd, 2 PeerWr to the X holder, 3 PeerWr to a reader) | 1 requester (u8) | 2 node name length (u16) | 4 rkey (i32)
 *            8 line address (u64) | 16 line bytes (i32) | 20 priority (u8: the sender's round N_r + 1) |
 *            21 flags (u8: 1 the sender may wait, it holds no other line) | 22 pad | 24 slot rkey (i32) | 28 pad |
 *            32 slot address (u64: the sender's registered receive slot, 0 none) | 40 ticket (u64) |
 *            48 memory node name (UTF-8)
 *  reply:    0 status (u8) | 1 header dirty (u8) | 8 dirty bounds (u64, DirtyBounds) | 16 the line (line bytes);
 *            all but the status only when GRANTED (the forwarded copy, still dirty against the memory node after
 *            case 1: ownership moved as Modified, nothing was flushed, so the new owner inherits what to flush)
 *  slot:     0 ticket (u64, the request's) | 8 dirty bounds (u64) | 16 header dirty (u8) | 24 the line: what the
 *            holder WRITEs one-sided into the sender's slot before it answers {@link #FORWARDED} (status only)
 * </pre>
 *
 * Forwarding (§4.4.1): a sender that expects a copy (PeerRd, PeerWr to the X holder) names one of its registered
 * receive slots by address and rkey, the paper's "local buffer address" in the message, and a ticket; the holder
 * WRITEs the line with the ticket there (in parallel with its handover FAA, and with its case-2 flush), and once both
 * landed answers {@link #FORWARDED}; the sender checks the ticket and takes the copy from its slot, no memory-node
 * READ. A sender with no free slot names none, and a holder whose WRITE failed answers {@link #GRANTED} with the copy
 * in the reply.
 *
 * The kind names the ownership the requester saw in the latch word (X holder or reader); a receiver whose memo
 * differs (it lost that ownership and took another since) discards the message as outdated: a PeerWr meant for a
 * reader must never hand over an Exclusive the receiver took later, or the requester would get X it does not expect.
 * Statuses: {@link #NOT_HELD} the receiver holds no copy matching the message (it was invalidated, evicted, or the
 * message is outdated), so the requester retries the latch;
 * {@link #DROPPED} a local thread holds the line (the handler's try-lock failed); {@link #GRANTED} the receiver
 * handed the latch over (case 1: X to the requester; case 2: both Shared, the line flushed to the memory node first)
 * and forwards its copy; {@link #RELEASED} the receiver dropped its Shared bit (case 3); {@link #YIELDING} the
 * receiver, a reader upgrading too, lost the tie-break and is dropping its Shared bit.
 */
final class Invalidation {
    static final int RPC = 0x5C01;
    /** PeerRd to the X holder (case 2). */
    static final int PEER_RD = 1;
    /** PeerWr to the X holder (case 1). */
    static final int PEER_WR = 2;
    /** PeerWr to a reader (case 3). */
    static final int PEER_WR_SHARED = 3;

    static final int NOT_HELD = 0;
    static final int DROPPED = 1;
    static final int GRANTED = 2;
    static final int RELEASED = 3;
    /**
     * The receiver is upgrading the line itself and the requester's participant number is lower: it drops its Shared
     * before its next CAS (the upgrade race's tie-break), so the requester tries its CAS again after one interval.
     */
    static final int YIELDING = 4;
    /** Granted as {@link #GRANTED}, the copy WRITten into the sender's receive slot (status only). */
    static final int FORWARDED = 5;
    /**
     * The RPC failure code of a holder whose handover or release verbs failed after they were posted (its loop gave
     * up, {@code mustLand}): the FAA may have landed or may still land, so the requester lets the latch word decide
     * ({@code LineCache#mayHandOverLate}). Any other error reply means no handover was posted.
     */
    static final int HANDOVER_IN_DOUBT = io.scythe.rrpc.RpcException.FIRST_APPLICATION_CODE + 1;

    static final int KIND_OFFSET = 0;
    static final int REQUESTER_OFFSET = 1;
    static final int NODE_LENGTH_OFFSET = 2;
    static final int RKEY_OFFSET = 4;
    static final int ADDRESS_OFFSET = 8;
    static final int LINE_BYTES_OFFSET = 16;
    static final int PRIORITY_OFFSET = 20;
    static final int FLAGS_OFFSET = 21;
    static final int FLAG_MAY_WAIT = 1;
    static final int SLOT_RKEY_OFFSET = 24;
    static final int SLOT_ADDRESS_OFFSET = 32;
    static final int TICKET_OFFSET = 40;
    static final int NODE_OFFSET = 48;
    static final int SLOT_TICKET_OFFSET = 0;
    static final int SLOT_DIRTY_OFFSET = 8;
    static final int SLOT_HEADER_DIRTY_OFFSET = 16;
    static final int SLOT_LINE_OFFSET = 24;
    static final int REPLY_HEADER_DIRTY_OFFSET = 1;
    static final int REPLY_DIRTY_OFFSET = 8;
    static final int REPLY_LINE_OFFSET = 16;

    private Invalidation() {
    }

    static UnsafeBuffer request(final int kind, final int requester, final String node, final int rkey,
                                final long address, final int lineBytes, final int priority,
                                final boolean mayWait, final int slotRkey, final long slotAddress,
                                final long ticket) {
        if (priority < 0 || priority > 255) {
            throw new IllegalArgumentException("priority " + priority + " outside 0..255");
        }
        final byte[] name = node.getBytes(StandardCharsets.UTF_8);
        final UnsafeBuffer b = new UnsafeBuffer(new byte[NODE_OFFSET + name.length]);
        b.putByte(KIND_OFFSET, (byte) kind);
        b.putByte(REQUESTER_OFFSET, (byte) requester);
        b.putShort(NODE_LENGTH_OFFSET, (short) name.length);
        b.putInt(RKEY_OFFSET, rkey);
        b.putLong(ADDRESS_OFFSET, address);
        b.putInt(LINE_BYTES_OFFSET, lineBytes);
        b.putByte(PRIORITY_OFFSET, (byte) priority);
        b.putByte(FLAGS_OFFSET, (byte) (mayWait ? FLAG_MAY_WAIT : 0));
        b.putInt(SLOT_RKEY_OFFSET, slotRkey);
        b.putLong(SLOT_ADDRESS_OFFSET, slotAddress);
        b.putLong(TICKET_OFFSET, ticket);
        b.putBytes(NODE_OFFSET, name);
        return b;
    }

    static String node(final DirectBuffer b, final int offset) {
        final int length = b.getShort(offset + NODE_LENGTH_OFFSET) & 0xffff;
        final byte[] name = new byte[length];
        b.getBytes(offset + NODE_OFFSET, name);
        return new String(name, StandardCharsets.UTF_8);
    }

    static UnsafeBuffer status(final int status) {
        final UnsafeBuffer b = new UnsafeBuffer(new byte[1]);
        b.putByte(0, (byte) status);
        return b;
    }

    /** What a holder WRITEs into a sender's receive slot: the ticket, the dirtiness, the line. */
    static UnsafeBuffer slotImage(final long ticket, final DirectBuffer line, final int lineBytes,
                                  final boolean headerDirty, final long dirty) {
        final UnsafeBuffer b = new UnsafeBuffer(new byte[SLOT_LINE_OFFSET + lineBytes]);
        b.putLong(SLOT_TICKET_OFFSET, ticket);
        b.putLong(SLOT_DIRTY_OFFSET, dirty);
        b.putByte(SLOT_HEADER_DIRTY_OFFSET, (byte) (headerDirty ? 1 : 0));
        b.putBytes(SLOT_LINE_OFFSET, line, 0, lineBytes);
        return b;
    }

    static UnsafeBuffer granted(final DirectBuffer line, final int lineBytes, final boolean headerDirty,
                                final long dirty) {
        final UnsafeBuffer b = new UnsafeBuffer(new byte[REPLY_LINE_OFFSET + lineBytes]);
        b.putByte(0, (byte) GRANTED);
        b.putByte(REPLY_HEADER_DIRTY_OFFSET, (byte) (headerDirty ? 1 : 0));
        b.putLong(REPLY_DIRTY_OFFSET, dirty);
        b.putBytes(REPLY_LINE_OFFSET, line, 0, lineBytes);
        return b;
    }
}
