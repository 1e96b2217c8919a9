/**
 * The emulated NIC shared by the local and shm providers: the virtual NIC's shared timing state
 * ({@link io.scythe.fabric.emulated.NicTimeline}, on any Agrona {@code AtomicBuffer}: direct or mapped), the
 * responder's checks and memory operations ({@link io.scythe.fabric.emulated.OneSidedOps}), and the queue-pair
 * engine ({@link io.scythe.fabric.emulated.EmulatedQueuePair}) that times each doorbell batch with the
 * {@link io.scythe.fabric.CostModel} at post time and executes and completes it, in order, as polls pass the
 * modelled times. Providers plug in where memory and peers are ({@link io.scythe.fabric.emulated.EmulatedPeer},
 * {@link io.scythe.fabric.emulated.RegionView}, {@link io.scythe.fabric.emulated.Connection},
 * {@link io.scythe.fabric.emulated.ReceiveQueue}). The engine reads only the clock it is given, so the simulator
 * can drive it in virtual time.
 */
package io.scythe.fabric.emulated;
