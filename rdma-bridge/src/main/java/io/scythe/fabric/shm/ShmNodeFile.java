package io.scythe.fabric.shm;

import io.scythe.fabric.ClockDeviation;
import io.scythe.fabric.CostModel;
import io.scythe.fabric.DriftingClock;
import io.scythe.fabric.FabricException;
import io.scythe.fabric.emulated.NicTimeline;
import org.agrona.concurrent.NanoClock;
import org.agrona.concurrent.UnsafeBuffer;

import java.io.IOException;
import java.lang.invoke.VarHandle;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;

import static io.scythe.fabric.shm.ShmLayout.*;

/** Typed access to a node's control file ({@link ShmLayout}), for its owner and for its peers alike. */
final class ShmNodeFile {
    static final String FILE = "nic";

    final Path dir;
    final UnsafeBuffer memory;
    final NicTimeline timeline;
    private final int regionTable;
    private final int fencedTable;
    private final int connectionTable;

    private ShmNodeFile(final Path dir, final UnsafeBuffer memory, final CostModel model) {
        this.dir = dir;
        this.memory = memory;
        this.timeline = new NicTimeline(new UnsafeBuffer(memory, TIMELINE_OFFSET, timelineBytes(model)), model);
        this.regionTable = regionTableOffset(model);
        this.fencedTable = fencedTableOffset(model);
        this.connectionTable = connectionTableOffset(model);
    }

    /** Creates the control file of a node owned by {@code pid}, whose NIC clock is {@code nicClock}. */
    static ShmNodeFile create(final Path dir, final CostModel model, final long pid, final DriftingClock nicClock) {
        final UnsafeBuffer memory = MappedFiles.create(dir.resolve(FILE), fileBytes(model));
        memory.putInt(VERSION_OFFSET, VERSION);
        memory.putLong(PID_OFFSET, pid);
        memory.putLong(NIC_CLOCK_START_OFFSET, nicClock.startNs());
        memory.putLong(NIC_CLOCK_OFFSET_NS_OFFSET, nicClock.deviation().offsetNs());
        memory.putDouble(NIC_CLOCK_DRIFT_PPM_OFFSET, nicClock.deviation().driftPpm());
        memory.putInt(REGION_SLOTS_OFFSET, REGION_SLOTS);
        memory.putInt(CONNECTION_SLOTS_OFFSET, CONNECTION_SLOTS);
        memory.putInt(FENCED_SLOTS_OFFSET, FENCED_SLOTS);
        memory.putIntVolatile(STATE_OFFSET, STATE_LIVE);
        memory.putLongVolatile(MAGIC_OFFSET, MAGIC);
        return new ShmNodeFile(dir, memory, model);
    }

    /** Maps an existing control file, checking it was laid out for the same cost model. */
    static ShmNodeFile open(final Path dir, final CostModel model) throws IOException {
        final UnsafeBuffer memory = MappedFiles.open(dir.resolve(FILE));
        if (memory.capacity() < HEADER_BYTES || memory.getLongVolatile(MAGIC_OFFSET) != MAGIC) {
            throw new FabricException("shared-memory node file " + dir.resolve(FILE) + " is not a Scythe NIC file");
        }
        if (memory.getInt(VERSION_OFFSET) != VERSION || memory.capacity() != fileBytes(model)) {
            throw new FabricException("shared-memory node file " + dir.resolve(FILE) + " has another layout "
                + "(version or cost model differs from this process)");
        }
        return new ShmNodeFile(dir, memory, model);
    }

    /** The owner's NIC clock as it published it (published with the magic, before any peer maps the file). */
    DriftingClock nicClock(final NanoClock trueClock) {
        return new DriftingClock(trueClock, new ClockDeviation(memory.getLong(NIC_CLOCK_OFFSET_NS_OFFSET),
            memory.getDouble(NIC_CLOCK_DRIFT_PPM_OFFSET)), memory.getLong(NIC_CLOCK_START_OFFSET));
    }

    long pid() {
        return memory.getLongVolatile(PID_OFFSET);
    }

    boolean live() {
        return memory.getIntVolatile(STATE_OFFSET) == STATE_LIVE;
    }

    void closed() {
        memory.putIntVolatile(STATE_OFFSET, STATE_CLOSED);
    }

    /** Whether the owner process exists and has not closed the node. */
    boolean ownerAlive() {
        return live() && ProcessHandle.of(pid()).map(ProcessHandle::isAlive).orElse(false);
    }

    // ------------------------------------------------------------------------------------------------- regions

    int regionEntry(final int slot) {
        return regionTable + slot * REGION_ENTRY_BYTES;
    }

    /** The slot of the registered region with {@code rkey}, or -1. */
    int findRegion(final int rkey) {
        for (int slot = 0; slot < REGION_SLOTS; slot++) {
            final int at = regionEntry(slot);
            if (memory.getIntVolatile(at + REGION_STATE) == REGION_REGISTERED && memory.getInt(at + REGION_RKEY) == rkey) {
                return slot;
            }
        }
        return -1;
    }

    int freeRegionSlot() {
        for (int slot = 0; slot < REGION_SLOTS; slot++) {
            if (memory.getIntVolatile(regionEntry(slot) + REGION_STATE) != REGION_REGISTERED) {
                return slot;
            }
        }
        return -1;
    }

    // --------------------------------------------------------------------------------------------------- names

    String name(final int at) {
        int length = 0;
        while (length < NAME_BYTES && memory.getByte(at + length) != 0) {
            length++;
        }
        final byte[] bytes = new byte[length];
        memory.getBytes(at, bytes);
        return new String(bytes, StandardCharsets.UTF_8);
    }

    void name(final int at, final String name) {
        final byte[] bytes = name.getBytes(StandardCharsets.UTF_8);
        memory.setMemory(at, NAME_BYTES, (byte) 0);
        memory.putBytes(at, bytes, 0, Math.min(bytes.length, NAME_BYTES));
    }

    // -------------------------------------------------------------------------------------------------- fencing

    synchronized boolean isFenced(final String node) {
        for (int slot = 0; slot < FENCED_SLOTS; slot++) {
            if (node.equals(name(fencedTable + slot * FENCED_ENTRY_BYTES))) {
                return true;
            }
        }
        return false;
    }

    /**
     * Refuses {@code node} from now on. {@code pid} is its process (0 if unknown): once that process is gone nothing can
     * connect under the name any more (a later incarnation has a name of its own), so a full table reuses its entry.
     */
    synchronized void fence(final String node, final long pid) {
        if (isFenced(node)) {
            return;
        }
        int reusable = -1;
        for (int slot = 0; slot < FENCED_SLOTS; slot++) {
            final int at = fencedTable + slot * FENCED_ENTRY_BYTES;
            if (memory.getByte(at) == 0) {
                reusable = slot;
                break;
            }
            final long fencedPid = memory.getLong(at + FENCED_PID);
            if (reusable < 0 && fencedPid != 0 && ShmNic.gone(fencedPid)) {
                reusable = slot;
            }
        }
        if (reusable < 0) {
            throw new FabricException("node fence table is full (" + FENCED_SLOTS + " nodes whose processes still "
                + "run or are unknown)");
        }
        final int at = fencedTable + reusable * FENCED_ENTRY_BYTES;
        name(at, node);
        memory.putLong(at + FENCED_PID, pid);
        // The fencer scans the connection table next: the record must be visible before that scan reads a slot
        // (a connector publishes its slot, then reads this table; one of the two sees the other).
        VarHandle.fullFence();
    }

    /** Whether any node is fenced; cheap, for the connection manager's cycle. */
    boolean anyFenced() {
        for (int slot = 0; slot < FENCED_SLOTS; slot++) {
            if (memory.getByteVolatile(fencedTable + slot * FENCED_ENTRY_BYTES) != 0) {
                return true;
            }
        }
        return false;
    }

    /** Whether the initiator named in connection slot {@code slot} is fenced, compared byte by byte (no garbage). */
    boolean initiatorFenced(final int slot) {
        final int name = connection(slot) + CONN_INITIATOR;
        for (int entry = 0; entry < FENCED_SLOTS; entry++) {
            final int at = fencedTable + entry * FENCED_ENTRY_BYTES;
            if (memory.getByteVolatile(at) != 0 && sameName(at, name)) {
                return true;
            }
        }
        return false;
    }

    private boolean sameName(final int at, final int other) {
        for (int i = 0; i < NAME_BYTES; i += Long.BYTES) {
            if (memory.getLong(at + i) != memory.getLong(other + i)) {
                return false;
            }
        }
        return true;
    }

    synchronized void readmit(final String node) {
        for (int slot = 0; slot < FENCED_SLOTS; slot++) {
            final int at = fencedTable + slot * FENCED_ENTRY_BYTES;
            if (node.equals(name(at))) {
                memory.setMemory(at, FENCED_ENTRY_BYTES, (byte) 0);
            }
        }
    }

    // ---------------------------------------------------------------------------------------------- connections

    int connection(final int slot) {
        return connectionTable + slot * CONNECTION_BYTES;
    }

    /**
     * Claims a free connection slot for {@code initiator} and publishes it ready; any process may call it. The steps
     * are {@link #claimSlot}, {@link #fillClaim}, {@link #publish}: a connector that must re-check fencing in between
     * calls them itself.
     *
     * @return the slot, or -1 when all are in use
     */
    int claimConnection(final String initiator, final long pid, final int initiatorQp) {
        final int slot = claimSlot();
        if (slot >= 0) {
            fillClaim(slot, initiator, pid, initiatorQp);
            publish(slot);
        }
        return slot;
    }

    /**
     * Takes a free slot (CAS free to claimed). A claimed slot belongs to its claimer alone until {@link #publish}: its
     * name and pid may still be unwritten or the last occupant's, so nobody else acts on them.
     *
     * @return the slot, or -1 when all are in use
     */
    int claimSlot() {
        for (int slot = 0; slot < CONNECTION_SLOTS; slot++) {
            final int at = connection(slot);
            if (memory.getIntVolatile(at + CONN_STATE) == CONN_FREE
                && memory.compareAndSetInt(at + CONN_STATE, CONN_FREE, CONN_CLAIMED)) {
                return slot;
            }
        }
        return -1;
    }

    /**
     * Writes the claimer's identity into its claimed slot and starts a new generation of it. The executing count is
     * kept: a slot is freed only with none inside, and a late verb's increment and decrement then stay balanced.
     */
    void fillClaim(final int slot, final String initiator, final long pid, final int initiatorQp) {
        final int at = connection(slot);
        memory.setMemory(at + CONN_INITIATOR, CONN_EXECUTING - CONN_INITIATOR, (byte) 0);
        memory.setMemory(at + CONN_EXECUTING + Integer.BYTES, CONNECTION_BYTES - CONN_EXECUTING - Integer.BYTES,
            (byte) 0);
        name(at + CONN_INITIATOR, initiator);
        memory.putLong(at + CONN_INITIATOR_PID, pid);
        memory.putInt(at + CONN_INITIATOR_QP, initiatorQp);
        memory.getAndAddInt(at + CONN_GENERATION, 1);
    }

    /**
     * Makes a filled claim ready (CAS claimed to ready, a full fence: what was filled is visible with it).
     *
     * @return false if the slot was not claimed any more (taken from the claimer): the connection must not be used
     */
    boolean publish(final int slot) {
        return memory.compareAndSetInt(connection(slot) + CONN_STATE, CONN_CLAIMED, CONN_READY);
    }

    int connectionState(final int slot) {
        return memory.getIntVolatile(connection(slot) + CONN_STATE);
    }

    int generation(final int slot) {
        return memory.getIntVolatile(connection(slot) + CONN_GENERATION);
    }

    boolean transition(final int slot, final int from, final int to) {
        return memory.compareAndSetInt(connection(slot) + CONN_STATE, from, to);
    }

    String initiator(final int slot) {
        return name(connection(slot) + CONN_INITIATOR);
    }

    /** Adds {@code delta} to the count of the initiator's verbs executing on this slot (a full fence). */
    void executing(final int slot, final int delta) {
        memory.getAndAddInt(connection(slot) + CONN_EXECUTING, delta);
    }

    int executing(final int slot) {
        return memory.getIntVolatile(connection(slot) + CONN_EXECUTING);
    }

    /** Drops the count of a gone initiator, whose verbs never end. */
    void clearExecuting(final int slot) {
        memory.putIntVolatile(connection(slot) + CONN_EXECUTING, 0);
    }

    long initiatorPid(final int slot) {
        return memory.getLong(connection(slot) + CONN_INITIATOR_PID);
    }

    int initiatorQp(final int slot) {
        return memory.getInt(connection(slot) + CONN_INITIATOR_QP);
    }

    int responderQp(final int slot) {
        return memory.getIntVolatile(connection(slot) + CONN_RESPONDER_QP);
    }

    void responderQp(final int slot, final int qp) {
        memory.putIntVolatile(connection(slot) + CONN_RESPONDER_QP, qp);
    }
}
