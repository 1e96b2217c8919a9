package io.scythe.fabric;

/**
 * Fault injection for the deterministic simulator: a one-sided request that has just taken effect at its responder
 * may be reported as failed ("lands, but reports failure": on a real NIC, a request that executed while every
 * acknowledgement of it was lost until the requester's retries ran out). Its completion carries the status returned,
 * and its queue pair moves to {@link QpState#ERROR}, so what was posted after it on that queue pair is flushed
 * ({@link WcStatus#WR_FLUSH_ERROR}, not executed), as on an RC queue pair. The local provider asks it; not part of
 * the JSON form; {@code null} (the default) reports every request as it went.
 */
@FunctionalInterface
public interface VerbFaultInjector {
    /**
     * @param requester the queue pair end that posted the request
     * @return the failure status to report for the {@code opcode} request that just took effect, or {@code null} to
     *     report its success
     */
    WcStatus afterLanding(QueuePair requester, Opcode opcode);
}
