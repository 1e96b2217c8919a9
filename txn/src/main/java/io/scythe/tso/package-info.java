/**
 * The RDMA-friendly timestamp oracle of Scythe §4.5: a counter in a TSO node's NIC device memory
 * ({@link io.scythe.tso.TsoService}), TSO groups on compute nodes that fetch one range per group of concurrent
 * requests ({@link io.scythe.tso.TsoGroup}), and proxies that merge many compute nodes' groups into one FAA and
 * remember the high water a restarted service resumes above ({@link io.scythe.tso.TsoProxy}). The baselines of Fig. 28
 * are {@link io.scythe.tso.TsoGroup#perRequest one FAA per request} and {@link io.scythe.tso.PhysicalClockOracle
 * physical clocks with an uncertainty wait}.
 *
 * <p>Failover: a group fetches its range again from another source when one fails or stays silent past its limit
 * ({@link io.scythe.tso.TsoGroup}; the limits are in the sources, connecting included); a relocating
 * {@link io.scythe.tso.DirectTsoSource} finds a restarted service's new counter; a restarted
 * {@link io.scythe.tso.TsoService} starts above every live issuer's high water and above its checkpoint plus a gap
 * for issuers that died (the gap argument is in {@code TsoService}). What a failed fetch would have handed out is
 * never handed out: timestamps stay unique, and one handed out after another finished is larger.
 */
package io.scythe.tso;
