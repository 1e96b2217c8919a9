/** RCC's NOWAIT (§4.2): {@link io.scythe.txn.rcc.nowait.NoWaitTxn}. */
package io.scythe.txn.rcc.nowait;
