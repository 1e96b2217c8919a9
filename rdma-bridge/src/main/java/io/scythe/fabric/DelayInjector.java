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
}
