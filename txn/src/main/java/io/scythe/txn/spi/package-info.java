/**
 * The protocol seam: what a concurrency-control protocol brings as one package ({@link
 * io.scythe.txn.spi.ProtocolModule}) and the one registry that finds them ({@link io.scythe.txn.spi.ProtocolRegistry},
 * {@link java.util.ServiceLoader} over {@code META-INF/services/io.scythe.txn.spi.ProtocolModule}).
 *
 * <ul>
 *   <li>CN side: the {@link io.scythe.txn.Protocol}s it registers (a module may register several names), each with its
 *       {@link io.scythe.txn.RetryPolicy}; per-loop state goes in runtime extensions
 *       ({@link io.scythe.txn.TxnRuntime#extension}).</li>
 *   <li>MN side: {@link io.scythe.txn.spi.ProtocolModule#startMemoryNode} on a {@link
 *       io.scythe.txn.spi.MemoryNodeContext}: RPC handlers, pollers, published services, and steps for releasing a
 *       dead compute node (before or after its locked inserts are abandoned).</li>
 *   <li>Recovery: the {@link io.scythe.txn.spi.LockKind}s its redo records name (free, still held by a token,
 *       released by recovery).</li>
 *   <li>End of run: its {@link io.scythe.txn.spi.ObjectProbe} (locks left held; where a key's committed value is).</li>
 *   <li>Reports: its own {@link io.scythe.txn.Stage}s and {@link io.scythe.txn.AbortReason}s; its configuration keys.</li>
 * </ul>
 * This package depends only on the API package ({@code io.scythe.txn}) and lower modules; recovery, the shared
 * one-sided parts and the protocol packages depend on it, never the other way ({@code tools/package-cycles.py}).
 */
package io.scythe.txn.spi;
