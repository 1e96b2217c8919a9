package io.scythe.fabric.emulated;

import io.scythe.fabric.WcStatus;
import org.agrona.DirectBuffer;
import org.agrona.MutableDirectBuffer;

/** The receive side of an emulated queue-pair end: posted receive buffers and the SENDs that land in them. */
public interface ReceiveQueue {
    /** Called by the owner: posts a receive buffer. @return false when the receive queue is full */
    boolean post(MutableDirectBuffer buffer, int offset, int length, long wrId);

    /**
     * Called by the peer's NIC when its SEND executes: copies the message into the oldest posted buffer and reports
     * a RECV completion to this end's completion queue.
     *
     * @return {@link WcStatus#SUCCESS}, or {@link WcStatus#RNR_RETRY_EXCEEDED} when no buffer (large enough) is posted
     */
    WcStatus deliver(DirectBuffer src, int offset, int length);
}
