/**
 * RCC's MVCC (§4.4): {@link io.scythe.txn.rcc.mvcc.MvccTxn} on {@link io.scythe.txn.rcc.mvcc.MvccTuple}'s tuples
 * (four versions inline: the newest in the object's value, three older ones and rts in the room after it), its RPC
 * stages served by {@link io.scythe.txn.rcc.mvcc.MvccService}.
 */
package io.scythe.txn.rcc.mvcc;
