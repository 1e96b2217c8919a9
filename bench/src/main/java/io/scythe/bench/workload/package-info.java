/**
 * The OLTP workloads the driver runs, each an {@link io.scythe.bench.workload.OltpSpec}: how to load it onto the
 * memory nodes, how to draw a transaction, the quantity its transactions conserve and its consistency conditions.
 * <ul>
 *   <li>{@link io.scythe.bench.workload.SmallBank} / {@link io.scythe.bench.workload.SmallBankSpec}: six
 *       procedures, the standard and Scythe mixes; money is conserved.</li>
 *   <li>{@link io.scythe.bench.workload.YcsbSpec}: the usertable; Scythe's Zipf profiles and RCC's hot-area
 *       profile; committed writes are counted.</li>
 *   <li>{@link io.scythe.bench.workload.Tatp} (tables, binary row layouts, population, checks) /
 *       {@link io.scythe.bench.workload.TatpSpec} (the seven transactions, the mix, NURand); CALL_FORWARDING rows
 *       are counted.</li>
 *   <li>{@link io.scythe.bench.workload.GclSpec}: GAM's micro-benchmark over SELCC's global cache lines (an
 *       {@link io.scythe.bench.workload.OperationSpec}: line accesses, not transactions), the same code for the
 *       simulator's {@code sim --workload gcl} and the bench's {@code bench --workload gcl}; the lines' counters add
 *       up to the writes completed.</li>
 *   <li>{@link io.scythe.bench.workload.Zipf} and {@link io.scythe.bench.workload.WeightedPick}: the draws they
 *       share.</li>
 * </ul>
 */
package io.scythe.bench.workload;
