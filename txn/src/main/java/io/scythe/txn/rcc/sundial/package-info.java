/**
 * RCC's SUNDIAL (issue 18): not implemented yet. The protocol is registered ({@code rcc-sundial},
 * {@link io.scythe.txn.rcc.RccModule#SUNDIAL}) with its Fig. 3 metadata
 * ({@link io.scythe.txn.rcc.TupleFormat#SUNDIAL}), and every attempt of it is refused with an error naming the issue;
 * this package is where it goes.
 */
package io.scythe.txn.rcc.sundial;
