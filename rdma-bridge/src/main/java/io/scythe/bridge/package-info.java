/**
 * Verbs as Vert.x Futures on event loops. One {@link io.scythe.bridge.Bridge} per event loop (run by
 * {@link io.scythe.bridge.BridgeVerticle}) owns the completion queues of the queue pairs used on that loop, polls them
 * as a duty cycle (re-queued on the loop while verbs are outstanding, quiet when none are, sleeping on a loop timer
 * when the next modelled completion is far) and completes each verb's Future on the thread that posted it.
 * {@link io.scythe.bridge.RdmaChannel} gives READ/WRITE/CAS/FAA/SEND to one remote node as Futures;
 * {@link io.scythe.bridge.Doorbell} posts several at once with one doorbell and one Future;
 * {@link io.scythe.bridge.RdmaChannel#readNicClock()} reads the peer's NIC clock one-sided
 * ({@link io.scythe.bridge.NicClockReading}: the peer's clock bracketed by this NIC's clock at post and the READ's
 * completion timestamp). {@link io.scythe.bridge.NodeClocks} is what a protocol runtime hands a protocol on one loop:
 * its node's host and NIC clocks and other nodes' NIC clocks.
 */
package io.scythe.bridge;
