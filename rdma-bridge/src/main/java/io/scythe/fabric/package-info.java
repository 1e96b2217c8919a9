/**
 * The fabric: the verbs SPI every part of Scythe reaches memory nodes through, whatever carries the verbs.
 *
 * <ul>
 *   <li>{@link io.scythe.fabric.Fabric}: one provider (local, shm, tcp, disni), found by name with
 *       {@link java.util.ServiceLoader}; a process {@linkplain io.scythe.fabric.Fabric#attach attaches} nodes.</li>
 *   <li>{@link io.scythe.fabric.Nic}: a node's NIC: its {@link io.scythe.fabric.MemoryRegion registered regions}
 *       (address, random rkey, bounds), its completion queues and queue pairs, fencing of dead peers.</li>
 *   <li>{@link io.scythe.fabric.QueuePair}: an RC queue pair end; {@link io.scythe.fabric.QueuePair#post} takes a
 *       doorbell batch (a linked list of {@link io.scythe.fabric.WorkRequest}s) executed and completed in order;
 *       selective signaling; READ, WRITE (inline or not), CAS, FAA, SEND/RECV.</li>
 *   <li>{@link io.scythe.fabric.CompletionQueue}: polled by its owner thread; for emulated providers polling is
 *       also what moves the virtual NIC forward in time.</li>
 *   <li>{@link io.scythe.fabric.CostModel}: what each verb costs on the emulated providers (profiles
 *       {@code cx5}, {@code zero}; every parameter documented with its source in {@code conf/fabric/}).</li>
 * </ul>
 *
 * Failures of verbs are completions with a {@link io.scythe.fabric.WcStatus}, with ibverbs' semantics: the queue
 * pair enters ERROR and flushes what follows until reset; a revoked queue pair fails forever. Misuse (bad
 * configuration, unknown node) is a {@link io.scythe.fabric.FabricException}; {@code post} returns negative codes
 * for back-pressure and malformed requests. Protocol code normally uses the Future-returning
 * {@link io.scythe.bridge.RdmaChannel} on top.
 */
package io.scythe.fabric;
