/**
 * RCC's WAITDIE (§4.3): {@link io.scythe.txn.rcc.waitdie.WaitDieTxn}, on the rule of
 * {@link io.scythe.txn.rcc.WaitDie}.
 */
package io.scythe.txn.rcc.waitdie;
