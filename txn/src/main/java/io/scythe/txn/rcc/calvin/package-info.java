/**
 * RCC's CALVIN (issue 18): not implemented yet. The protocol is registered ({@code rcc-calvin},
 * {@link io.scythe.txn.rcc.RccModule#CALVIN}) with its Fig. 3 metadata
 * ({@link io.scythe.txn.rcc.TupleFormat#CALVIN}), and every attempt of it is refused with an error naming the issue;
 * this package is where it goes.
 */
package io.scythe.txn.rcc.calvin;
