package io.scythe.fabric.local;

import io.scythe.fabric.WcStatus;
import io.scythe.fabric.emulated.EmulatedQueuePair;
import io.scythe.fabric.emulated.ReceiveQueue;
import org.agrona.DirectBuffer;
import org.agrona.MutableDirectBuffer;
import org.agrona.concurrent.OneToOneConcurrentArrayQueue;

/** Receive queue of an in-JVM queue-pair end: its owner posts buffers, the peer's thread fills them. */
final class LocalReceiveQueue implements ReceiveQueue {
    private final OneToOneConcurrentArrayQueue<Posted> posted;
    private EmulatedQueuePair owner;

    LocalReceiveQueue(final int depth) {
        posted = new OneToOneConcurrentArrayQueue<>(depth);
    }

    void owner(final EmulatedQueuePair owner) {
        this.owner = owner;
    }

    @Override
    public int post(final MutableDirectBuffer buffer, final int offset, final int length, final long wrId) {
        return posted.offer(new Posted(buffer, offset, length, wrId))
            ? io.scythe.fabric.QueuePair.POST_OK : io.scythe.fabric.QueuePair.SEND_QUEUE_FULL;
    }

    @Override
    public WcStatus deliver(final DirectBuffer src, final int offset, final int length) {
        final Posted buffer = posted.poll();
        if (buffer == null) {
            return WcStatus.RNR_RETRY_EXCEEDED;
        }
        if (buffer.length < length) {
            // As on a real RC QP: the receiver's buffer is consumed with a length error, the sender is refused.
            owner.received(buffer.wrId, 0, WcStatus.LOCAL_LENGTH_ERROR);
            return WcStatus.REMOTE_INVALID_REQUEST;
        }
        if (length > 0) {
            buffer.buffer.putBytes(buffer.offset, src, offset, length);
        }
        owner.received(buffer.wrId, length, WcStatus.SUCCESS);
        return WcStatus.SUCCESS;
    }

    private record Posted(MutableDirectBuffer buffer, int offset, int length, long wrId) {
    }
}
