package io.scythe.fabric.shm;

import io.scythe.fabric.CostModel;
import io.scythe.fabric.emulated.NicTimeline;

/**
 * The control file of a node on the shm fabric: {@code {shmDirectory}/scythe-{cluster}/{node}/nic}, mapped by its
 * owner and by every process that talks to the node. Regions are separate files beside it,
 * {@code region-{rkey as 8 hex digits}}.
 *
 * <pre>
 *  header (offset 0, 64 B)
 *   0  magic u64 "SCYTHSHM"        8  layout version u32     12  state u32 (1 live, 2 closed)
 *  16  owner pid u64              24  region slots u32      28  connection slots u32
 *  32  fenced slots u32           36  reserved
 *  40  NIC clock start u64: true time (the host's clock) its drift runs from
 *  48  NIC clock offset i64 (ns)   56  NIC clock drift f64 (ppm)   peers READ the NIC's clock word from these (all
 *      zero, as in a file of an older process: a perfect clock)
 *  timeline (offset 64): NicTimeline of this node's NIC: its TX port, responder unit, atomic units, address
 *      buckets and QP-context cache, reserved by every process that uses the NIC
 *  region table: REGION_SLOTS x 128 B
 *   0  state u32 (0 free, 1 registered, 2 deregistered)   4  kind u32 (0 host, 1 device)
 *   8  rkey u32   12 lkey u32   16 address u64   24 length u64   32 name (64 B, UTF-8, zero padded)
 *  fenced table: FENCED_SLOTS x 72 B: name of a node refused until readmitted (64 B, empty = free), then the pid u64
 *      of its process when the fence was made (0: unknown); a full table reuses entries whose process is gone
 *  connection table: CONNECTION_SLOTS x CONNECTION_BYTES, one per queue pair whose responder is this node
 *   0  state u32 (0 free, 1 ready, 2 revoked, 3 closed, 4 claimed: only its claimer writes the slot, until it
 *      publishes it ready by CAS)   4 generation u32
 *   8  initiator node (64 B)   72 initiator pid u64   80 initiator QP number u32   84 responder QP number u32
 *  88  executing u32: the initiator's verbs past their revocation check and not finished (the fence barrier); kept
 *      when the slot is claimed again, which it is only once none is inside or its initiator is gone
 *  96  receives of the responder end (the initiator SENDs into them): posted ring, then done ring
 *      receives of the initiator end (the responder SENDs into them): posted ring, then done ring
 *  posted ring: head u64, tail u64 (on their own cache lines), RING_ENTRIES x 32 B
 *                (rkey u32 of the receiver's region, pad, offset u64 in it, length u32, pad, wrId u64)
 *  done ring:   head u64, tail u64 (own cache lines), RING_ENTRIES x 16 B (wrId u64, length u32, status u32)
 * </pre>
 * Every process maps the same file: the NIC timeline, revocation and fencing are shared state, not messages.
 */
public final class ShmLayout {
    public static final long MAGIC = 0x4d48_5348_5459_4353L; // "SCYTHSHM" little-endian
    public static final int VERSION = 2;
    public static final int STATE_LIVE = 1;
    public static final int STATE_CLOSED = 2;

    public static final int MAGIC_OFFSET = 0;
    public static final int VERSION_OFFSET = 8;
    public static final int STATE_OFFSET = 12;
    public static final int PID_OFFSET = 16;
    public static final int REGION_SLOTS_OFFSET = 24;
    public static final int CONNECTION_SLOTS_OFFSET = 28;
    public static final int FENCED_SLOTS_OFFSET = 32;
    public static final int NIC_CLOCK_START_OFFSET = 40;
    public static final int NIC_CLOCK_OFFSET_NS_OFFSET = 48;
    public static final int NIC_CLOCK_DRIFT_PPM_OFFSET = 56;
    public static final int HEADER_BYTES = 64;
    public static final int TIMELINE_OFFSET = HEADER_BYTES;

    public static final int REGION_SLOTS = 256;
    public static final int REGION_ENTRY_BYTES = 128;
    public static final int REGION_STATE = 0;
    public static final int REGION_KIND = 4;
    public static final int REGION_RKEY = 8;
    public static final int REGION_LKEY = 12;
    public static final int REGION_ADDRESS = 16;
    public static final int REGION_LENGTH = 24;
    public static final int REGION_NAME = 32;
    public static final int NAME_BYTES = 64;
    public static final int REGION_FREE = 0;
    public static final int REGION_REGISTERED = 1;
    public static final int REGION_DEREGISTERED = 2;

    public static final int FENCED_SLOTS = 64;
    public static final int FENCED_PID = NAME_BYTES;
    public static final int FENCED_ENTRY_BYTES = NAME_BYTES + 8;

    public static final int CONNECTION_SLOTS = 256;
    public static final int CONN_STATE = 0;
    public static final int CONN_GENERATION = 4;
    public static final int CONN_INITIATOR = 8;
    public static final int CONN_INITIATOR_PID = 72;
    public static final int CONN_INITIATOR_QP = 80;
    public static final int CONN_RESPONDER_QP = 84;
    public static final int CONN_EXECUTING = 88;
    public static final int CONN_RINGS = 128;
    public static final int CONN_FREE = 0;
    public static final int CONN_READY = 1;
    public static final int CONN_REVOKED = 2;
    public static final int CONN_CLOSED = 3;
    public static final int CONN_CLAIMED = 4;

    public static final int RING_ENTRIES = 64;
    public static final int RING_HEAD = 0;
    public static final int RING_TAIL = 64;
    public static final int RING_ENTRIES_OFFSET = 128;
    public static final int POSTED_ENTRY_BYTES = 32;
    public static final int DONE_ENTRY_BYTES = 16;
    public static final int POSTED_RING_BYTES = RING_ENTRIES_OFFSET + RING_ENTRIES * POSTED_ENTRY_BYTES;
    public static final int DONE_RING_BYTES = RING_ENTRIES_OFFSET + RING_ENTRIES * DONE_ENTRY_BYTES;
    /** Receive rings of one end: posted, then done. */
    public static final int RECEIVE_BYTES = POSTED_RING_BYTES + DONE_RING_BYTES;
    public static final int CONNECTION_BYTES = align(CONN_RINGS + 2 * RECEIVE_BYTES, 64);

    private ShmLayout() {
    }

    static int align(final int value, final int alignment) {
        return (value + alignment - 1) / alignment * alignment;
    }

    public static int timelineBytes(final CostModel model) {
        return align(NicTimeline.length(model), 64);
    }

    public static int regionTableOffset(final CostModel model) {
        return TIMELINE_OFFSET + timelineBytes(model);
    }

    public static int fencedTableOffset(final CostModel model) {
        return regionTableOffset(model) + REGION_SLOTS * REGION_ENTRY_BYTES;
    }

    public static int connectionTableOffset(final CostModel model) {
        return fencedTableOffset(model) + FENCED_SLOTS * FENCED_ENTRY_BYTES;
    }

    public static int fileBytes(final CostModel model) {
        return connectionTableOffset(model) + CONNECTION_SLOTS * CONNECTION_BYTES;
    }

    /** Offset of the receive rings of the responder end ({@code initiatorEnd == false}) or initiator end. */
    public static int receiveRingsOffset(final int connection, final boolean initiatorEnd) {
        return connection + CONN_RINGS + (initiatorEnd ? RECEIVE_BYTES : 0);
    }
}
