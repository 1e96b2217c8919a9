package io.scythe.fabric;

/**
 * Receives the completions a {@link CompletionQueue#poll} delivers. Called on the thread that polls, with no object
 * allocated per completion.
 */
@FunctionalInterface
public interface CompletionHandler {
    /**
     * @param qp         the queue pair the work request was posted on (for RECV: the one it arrived on)
     * @param wrId       the request's {@link WorkRequest#wrId()} (for RECV: the receive buffer's id)
     * @param opcode     what completed
     * @param status     {@link WcStatus#SUCCESS} or why it failed
     * @param byteLength bytes transferred (READ, RECV); 8 for atomics; 0 on failure
     */
    void onCompletion(QueuePair qp, long wrId, Opcode opcode, WcStatus status, int byteLength);
}
