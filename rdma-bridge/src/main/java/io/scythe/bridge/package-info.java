/**
 * Verbs as Vert.x Futures on event loops. One {@link io.scythe.bridge.Bridge} per event loop (run by
 * {@link io.scythe.bridge.BridgeVerticle}) owns the completion queues of the queue pairs used on that loop, polls them
 * as a duty cycle (re-queued on the loop while verbs are outstanding, quiet when none are, sleeping on a loop timer
 * when the next modelled completion is far) and completes each verb's Future on the thread that posted it.
 * {@link io.scythe.bridge.RdmaChannel} gives READ/WRITE/CAS/FAA/SEND to one remote node as Futures;
 * {@link io.scythe.bridge.Doorbell} posts several at once with one doorbell and one Future.
 */
package io.scythe.bridge;
