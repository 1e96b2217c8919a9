/**
 * RCC's MVCC (issue 18): not implemented yet. The protocol is registered ({@code rcc-mvcc},
 * {@link io.scythe.txn.rcc.RccModule#MVCC}) with its Fig. 3 metadata
 * ({@link io.scythe.txn.rcc.TupleFormat#MVCC}), and every attempt of it is refused with an error naming the issue;
 * this package is where it goes.
 */
package io.scythe.txn.rcc.mvcc;
