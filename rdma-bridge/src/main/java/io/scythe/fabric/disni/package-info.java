/**
 * The {@code disni} provider: real RDMA through IBM DiSNI 2.0, behind the same SPI. It needs DiSNI's native library
 * (build {@code libdisni} from DiSNI's sources against rdma-core, then run with {@code -Djava.library.path=DIR}) and an
 * RDMA device; without either, opening the fabric fails with one sentence saying what is missing
 * ({@link io.scythe.fabric.disni.DisniSupport}). The mapping of every SPI call to ibverbs is
 * {@link io.scythe.fabric.disni.DisniMapping} (tested without a NIC). Connection setup uses RDMA CM on worker threads
 * and a daemon event thread; completion queues are polled by their owner thread, like every provider's.
 *
 * <p>Not available through DiSNI, and so refused or documented where used: NIC device memory (no
 * {@code ibv_alloc_dm}), resetting a queue pair out of its error state (no {@code ibv_modify_qp}: connect a new one),
 * telling a requester it was fenced (it sees TRANSPORT_RETRY_EXCEEDED or WR_FLUSH_ERROR, not REVOKED), and shared
 * queue pairs across threads.
 */
package io.scythe.fabric.disni;
