package io.scythe.fabric.shm;

import io.scythe.fabric.CompletionHandler;
import io.scythe.fabric.Opcode;
import io.scythe.fabric.QueuePair;
import io.scythe.fabric.WcStatus;
import io.scythe.fabric.emulated.EmulatedQueuePair;
import io.scythe.fabric.emulated.ReceiveQueue;
import io.scythe.fabric.emulated.RegionView;
import org.agrona.DirectBuffer;
import org.agrona.MutableDirectBuffer;
import org.agrona.concurrent.AtomicBuffer;

import java.util.Collection;
import java.util.function.IntFunction;

import static io.scythe.fabric.shm.ShmLayout.*;

/**
 * The receive side of one queue-pair end on the shm fabric: two single-producer rings in the responder's connection
 * slot. The receiving end posts buffers (a region of its node and an offset, so the sender's process can find them)
 * into the posted ring; a SEND, executed by the sender's process, takes the oldest, copies into it, and reports into
 * the done ring, which the receiving end's completion queue polls.
 *
 * <p>One object serves either role: the receiving end's own queue ({@code ownRegions} set), or the sender's view of
 * its peer's queue ({@code receiverRegions} set).
 */
final class ShmReceiveQueue implements ReceiveQueue {
    private final AtomicBuffer memory;
    private final int posted;
    private final int done;
    private final Collection<ShmRegion> ownRegions;
    private final IntFunction<RegionView> receiverRegions;
    private long postedCount;
    private long drainedCount;

    ShmReceiveQueue(final AtomicBuffer memory, final int receiveRings, final Collection<ShmRegion> ownRegions,
                    final IntFunction<RegionView> receiverRegions) {
        this.memory = memory;
        this.posted = receiveRings;
        this.done = receiveRings + POSTED_RING_BYTES;
        this.ownRegions = ownRegions;
        this.receiverRegions = receiverRegions;
    }

    @Override
    public int post(final MutableDirectBuffer buffer, final int offset, final int length, final long wrId) {
        final long at = buffer.addressOffset() + offset;
        ShmRegion region = null;
        for (final ShmRegion r : ownRegions) {
            if (r.isRegistered() && r.holds(at, length)) {
                region = r;
                break;
            }
        }
        if (region == null) {
            return QueuePair.INVALID_REQUEST; // only registered memory can be written by another process
        }
        final long head = memory.getLongVolatile(posted + RING_HEAD);
        final long tail = memory.getLong(posted + RING_TAIL);
        if (tail - head >= RING_ENTRIES) {
            return QueuePair.SEND_QUEUE_FULL;
        }
        final int entry = posted + RING_ENTRIES_OFFSET + (int) (tail % RING_ENTRIES) * POSTED_ENTRY_BYTES;
        memory.putInt(entry, region.rkey());
        memory.putLong(entry + 8, at - region.buffer().addressOffset());
        memory.putInt(entry + 16, length);
        memory.putLong(entry + 24, wrId);
        memory.putLongRelease(posted + RING_TAIL, tail + 1);
        postedCount++;
        return QueuePair.POST_OK;
    }

    @Override
    public WcStatus deliver(final DirectBuffer src, final int offset, final int length) {
        final long head = memory.getLong(posted + RING_HEAD);
        if (head == memory.getLongVolatile(posted + RING_TAIL)) {
            return WcStatus.RNR_RETRY_EXCEEDED;
        }
        final int entry = posted + RING_ENTRIES_OFFSET + (int) (head % RING_ENTRIES) * POSTED_ENTRY_BYTES;
        final int rkey = memory.getInt(entry);
        final long at = memory.getLong(entry + 8);
        final int capacity = memory.getInt(entry + 16);
        final long wrId = memory.getLong(entry + 24);
        memory.putLongRelease(posted + RING_HEAD, head + 1);
        final RegionView region = receiverRegions.apply(rkey);
        final WcStatus status;
        if (capacity < length) {
            status = WcStatus.LOCAL_LENGTH_ERROR;
        } else if (region == null || !region.isRegistered() || at < 0 || at > region.length() - length) {
            status = WcStatus.LOCAL_QP_OPERATION_ERROR;
        } else {
            if (length > 0) {
                region.buffer().putBytes((int) at, src, offset, length);
            }
            status = WcStatus.SUCCESS;
        }
        if (!report(wrId, status == WcStatus.SUCCESS ? length : 0, status)) {
            return WcStatus.RNR_RETRY_EXCEEDED;
        }
        return status == WcStatus.LOCAL_LENGTH_ERROR ? WcStatus.REMOTE_INVALID_REQUEST
            : status == WcStatus.SUCCESS ? WcStatus.SUCCESS : WcStatus.REMOTE_OPERATION_ERROR;
    }

    /** Appends a RECV completion to the done ring (it has room for every posted buffer). */
    private boolean report(final long wrId, final int length, final WcStatus status) {
        final long tail = memory.getLong(done + RING_TAIL);
        if (tail - memory.getLongVolatile(done + RING_HEAD) >= RING_ENTRIES) {
            return false;
        }
        final int entry = done + RING_ENTRIES_OFFSET + (int) (tail % RING_ENTRIES) * DONE_ENTRY_BYTES;
        memory.putLong(entry, wrId);
        memory.putInt(entry + 8, length);
        memory.putInt(entry + 12, status.code());
        memory.putLongRelease(done + RING_TAIL, tail + 1);
        return true;
    }

    @Override
    public boolean polled() {
        return true;
    }

    @Override
    public int drain(final EmulatedQueuePair owner, final CompletionHandler handler, final int max) {
        int delivered = 0;
        long head = memory.getLong(done + RING_HEAD);
        final long tail = memory.getLongAcquire(done + RING_TAIL);
        while (head < tail && delivered < max) {
            final int entry = done + RING_ENTRIES_OFFSET + (int) (head % RING_ENTRIES) * DONE_ENTRY_BYTES;
            final long wrId = memory.getLong(entry);
            final int length = memory.getInt(entry + 8);
            final WcStatus status = WcStatus.fromCode(memory.getInt(entry + 12));
            head++;
            memory.putLongRelease(done + RING_HEAD, head);
            drainedCount++;
            delivered++;
            handler.onCompletion(owner, wrId, Opcode.RECV, status, length);
        }
        return delivered;
    }

    @Override
    public int posted() {
        return (int) (postedCount - drainedCount);
    }
}
