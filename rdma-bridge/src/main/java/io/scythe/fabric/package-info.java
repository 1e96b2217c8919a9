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
 *       {@code cx5}, {@code cx5-pcie}, {@code cx5-queue}, {@code cx5-table1}, {@code zero};
 *       every parameter documented with its source in {@code conf/fabric/}).</li>
 *   <li>Per-node clocks: every node has a host clock ({@link io.scythe.fabric.Nic#hostClock()}, what its CPUs
 *       read) and a NIC clock ({@link io.scythe.fabric.Nic#nicClock()}, its RDMA NIC's hardware clock), each a
 *       {@link io.scythe.fabric.DriftingClock}: true time ({@link io.scythe.fabric.Fabric#clock()}) plus an offset
 *       and a drift ({@link io.scythe.fabric.ClockDeviation}) configured per node by
 *       {@link io.scythe.fabric.ClockOptions} (defaults, a seeded spread, per-node clocks; documented with sources
 *       in {@code conf/fabric/clocks.yaml}). By default every clock reads true time. A peer's NIC clock is read
 *       one-sided, as a READ of its {@link io.scythe.fabric.NicClockWord} (timed and failing as a READ); a
 *       completion carries its NIC's clock when it completed
 *       ({@link io.scythe.fabric.CompletionQueue#completionTimestampNs()}, read inside the completion handler).
 *       local and shm stamp the modelled times (shm peers publish their clock in their control file, applied to
 *       the host's clock every process shares); tcp's verbs server reads its clock as it executes the READ and a
 *       completion is stamped as its response arrives; disni refuses NIC clocks with a sentence naming what it
 *       would need ({@code ibv_query_rt_values_ex}, completion queues with
 *       {@code IBV_WC_EX_WITH_COMPLETION_TIMESTAMP}). Protocols read clocks through
 *       {@link io.scythe.bridge.NodeClocks}, handed to them per loop.</li>
 * </ul>
 *
 * Failures of verbs are completions with a {@link io.scythe.fabric.WcStatus}, with ibverbs' semantics: the queue
 * pair enters ERROR and flushes what follows until reset; a revoked queue pair fails forever. Misuse (bad
 * configuration, unknown node) is a {@link io.scythe.fabric.FabricException}; {@code post} returns negative codes
 * for back-pressure and malformed requests. Protocol code normally uses the Future-returning
 * {@link io.scythe.bridge.RdmaChannel} on top.
 */
package io.scythe.fabric;
