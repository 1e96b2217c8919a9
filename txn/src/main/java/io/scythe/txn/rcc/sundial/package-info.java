/**
 * RCC's SUNDIAL (§4.5): {@link io.scythe.txn.rcc.sundial.SundialTxn} on {@link io.scythe.txn.rcc.sundial.SundialTuple}'s
 * tuples (lease {@code [wts, rts]}, rts in the room after the value), its RPC stages served by
 * {@link io.scythe.txn.rcc.sundial.SundialService}.
 */
package io.scythe.txn.rcc.sundial;
