package io.scythe.fabric;

/**
 * Extra one-way delay of a doorbell batch, for fault injection in the deterministic simulator: added to the wire
 * latency of every request of the batch and of its responses. A queue pair still executes and completes its requests
 * in posting order (an RC QP never reorders), so delay only reorders verbs across queue pairs, as real fabrics can.
 * Not part of the JSON form; {@code null} (the default) adds nothing.
 */
@FunctionalInterface
public interface DelayInjector {
    /** @return nanoseconds (not negative) to add to the batch posted now from {@code localNode} to {@code remoteNode} */
    long extraNs(String localNode, String remoteNode, int qpNumber);

    /**
     * @return nanoseconds (not negative) the requests of the batch posted now from {@code localNode} to
     *     {@code remoteNode} are held on the way, beyond {@link #extraNs}: the link between them is down until then,
     *     and RC's transport retries deliver them once it is up (the simulator's partition). Their responses leave
     *     the responder once they executed, so they are not held again. 0 by default.
     */
    default long heldNs(final String localNode, final String remoteNode, final int qpNumber) {
        return 0;
    }
}
