package io.scythe.fabric.emulated;

import io.scythe.fabric.WcStatus;
import org.agrona.DirectBuffer;
import org.agrona.MutableDirectBuffer;

/** The receive side of an emulated queue-pair end: posted receive buffers and the SENDs that land in them. */
public interface ReceiveQueue {
    /**
     * Called by the owner: posts a receive buffer.
     *
     * @return {@code QueuePair.POST_OK}, {@code SEND_QUEUE_FULL} when the receive queue is full, or
     *     {@code INVALID_REQUEST} when the buffer is not one the provider can receive into
     */
    int post(MutableDirectBuffer buffer, int offset, int length, long wrId);

    /**
     * Called by the peer's NIC when its SEND executes: copies the message into the oldest posted buffer and reports
     * a RECV completion to this end's completion queue.
     *
     * @return {@link WcStatus#SUCCESS}, or {@link WcStatus#RNR_RETRY_EXCEEDED} when no buffer (large enough) is posted
     */
    WcStatus deliver(DirectBuffer src, int offset, int length);

    /**
     * Whether RECV completions must be polled for ({@link #drain}) because the sender cannot push them into this
     * process (the shm provider); the local provider pushes them and returns false.
     */
    default boolean polled() {
        return false;
    }

    /** Delivers RECV completions that arrived; only for {@link #polled()} queues. @return completions delivered */
    default int drain(final EmulatedQueuePair owner, final io.scythe.fabric.CompletionHandler handler,
                      final int max) {
        return 0;
    }

    /** Receive buffers posted and not yet filled (a polled queue is polled while there are any). */
    default int posted() {
        return 0;
    }
}
